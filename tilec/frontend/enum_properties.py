"""An enum's members as values with attributes, read when tilec compiles: `.value`, `.name`, another
member (`self.FREE`), and the class's @property methods (Newton's kamino: `JointDoFType.REVOLUTE.num_dofs`,
`dof_type.coords_storage_type` of a factory's argument, `JointDoFType.CARTESIAN.cts_axes`).

tilec never runs the class. A property's body is followed statement by statement (host_eval.run_body)
with `self` bound to the member; the `return` reached gives a constant, a type or a vector constant (what
the enum's module makes of it: resolve.py). A `raise`, a loop or any other statement leaves the attribute
unknown (NOT_CONST), and the use reports it as any value tilec cannot compute.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

import libcst as cst

from ..diagnostics import MODULE_DOT
from . import consts
from .host_eval import bind, run_body

Lookup = Callable[[cst.BaseExpression], object]

MAX_DEPTH = 16  # properties reading properties (a cycle is unknown, never endless)


@dataclasses.dataclass(frozen=True)
class VectorConstant:
    """A vector or matrix constant a property returns: its constructor of literals (resolve.value_constant),
    whose func is the name `constant·<type>` that a scope binding the constant binds to `type`."""

    call: cst.Call
    type: object  # a VecT or MatT

    def __repr__(self) -> str:  # short: a factory's instances are keyed by the repr of its bindings
        return f"VectorConstant({cst.Module([]).code_for_node(self.call)!r}, {self.type})"


def constructor_name(t: object) -> str:
    """The name a VectorConstant's constructor calls: `constant·<type>`, which a scope binding the
    constant binds to the type (func_factories._child)."""
    return f"constant{MODULE_DOT}" + "".join(c if c.isalnum() else "_" for c in str(t))


class EnumMember(int, consts.Attributed):
    """A member of an IntEnum / IntFlag: its int, which every operator sees, and its attributes."""

    member: str
    owner: EnumClass

    def __new__(cls, value: int, member: str, owner: EnumClass) -> EnumMember:
        made = int.__new__(cls, value)
        made.member, made.owner = member, owner
        return made

    def attribute(self, name: str) -> object:
        if name == "value":
            return int(self)
        if name == "name":
            return self.member
        found = self.owner.member(name)
        return found if found is not None else self.owner.property(self, name)

    def method(self, name: str, args: list[object], kwargs: dict[str, object]) -> object:
        return self.owner.method(self, name, args, kwargs)


@dataclasses.dataclass(eq=False)
class EnumClass:
    """A module's enum class: its members' ints and how its module reads a returned value."""

    node: cst.ClassDef
    members: dict[str, int]
    home: Lookup  # the names of the enum's module (resolve.Scope._lookup)
    other: Lookup  # what else a returned value may be there: a type, a vector constant (resolve.py)
    depth: int = 0

    def member(self, name: str) -> EnumMember | None:
        return EnumMember(self.members[name], name, self) if name in self.members else None

    def property(self, member: EnumMember, name: str) -> object:
        fn = self._def(name, "property")
        return consts.NOT_CONST if fn is None else self._follow(fn, member, [], {})

    def method(self, member: EnumMember, name: str, args: list[object], kwargs: dict[str, object]) -> object:
        """`dof_type.coords_bound(correction)`: a plain method called with constants."""
        fn = self._def(name, None)
        return consts.NOT_CONST if fn is None else self._follow(fn, member, args, kwargs)

    def _def(self, name: str, decorator: str | None) -> cst.FunctionDef | None:
        """The class's def `name` with exactly that decorator (None: undecorated), taking `self`."""
        for s in self.node.body.body:
            if isinstance(s, cst.FunctionDef) and s.name.value == name and s.params.params:
                named = [d.decorator.value for d in s.decorators if isinstance(d.decorator, cst.Name)]
                if len(named) == len(s.decorators) and named == ([decorator] if decorator else []):
                    return s
        return None

    def _follow(self, fn: cst.FunctionDef, member: EnumMember, args: list[object], kwargs: dict[str, object]) -> object:
        """What the def's body returns with `self` bound to `member` and the arguments to its other parameters."""
        if self.depth >= MAX_DEPTH:
            return consts.NOT_CONST
        local = bind(fn, [member, *args], kwargs, self.home)
        if local is None:
            return consts.NOT_CONST

        def lookup(node: cst.BaseExpression) -> object:
            if isinstance(node, cst.Name) and node.value in local:
                return local[node.value]
            return self.home(node)

        def returned(node: cst.BaseExpression) -> object:
            value = consts.evaluate(node, lookup)
            return self.other(node) if value is consts.NOT_CONST else value

        self.depth += 1
        try:
            found = run_body(fn.body, lookup, local, returned)
        finally:
            self.depth -= 1
        return consts.NOT_CONST if found is None else found  # (past the body's end: Python's None)
