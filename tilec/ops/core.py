"""The op-table machinery: parameter kinds, the spec of one op, bound arguments.

An op's shape/dtype rule is a pure function `rule(b: Bound) -> Type` that
raises `RuleError` to reject the call; the checker turns that into a
diagnostic at the offending argument.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, NoReturn, TypeVar

from ..ir.types import Type


REQUIRED = object()

# How the checker lowers an argument of each parameter kind.
PARAM_KINDS = {
    "value": "an expression operand (tile, scalar or array); becomes an IR argument",
    "shape": "a compile-time int or tuple of ints; becomes an attribute",
    "dtype": "a dtype; becomes an attribute",
    "storage": "'register' or 'shared'; becomes an attribute",
    "const": "a compile-time int/float/bool/None; becomes an attribute",
    "func": "a builtin or @wp.func name; becomes an attribute",
    "offset": "an int expression or tuple of them; becomes one IR argument per item",
}


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # key of PARAM_KINDS
    default: object = REQUIRED

    def __post_init__(self) -> None:
        assert self.kind in PARAM_KINDS, self.kind


@dataclass(frozen=True)
class OpSpec:
    name: str  # the API name (wp.<name>) or internal name
    params: tuple[Param, ...]  # Params, in positional order
    rule: Callable[[Bound], Type | None]  # Bound -> Type (None: an effect's statement), raises RuleError
    cpp: str  # C++ runtime function (namespace tl)
    doc: str  # one line
    adj_cpp: str | None = None  # C++ adjoint twin, None when not differentiable
    variadic: str | None = None  # name of a trailing *args parameter of kind "value"
    nondiff: frozenset[str] = frozenset()  # value params that get no gradient
    effect: bool = False  # a statement for its side effect (stores, atomics)
    api: bool = True  # callable from source as wp.<name>
    elementwise: bool = False  # applies per element; fusible
    runtime_call: bool = False  # a scalar call of the runtime, `tl::<cpp>(args...)`, though not elementwise


class RuleError(Exception):
    """A rule's rejection: a diagnostic code, a message and the blamed argument."""

    def __init__(self, code: str, message: str, arg: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.arg = arg


@dataclass
class Bound:
    """The arguments of one call as a rule sees them."""

    op: str
    types: dict[str, Type] = field(default_factory=dict)  # value param -> Type
    consts: dict[str, Any] = field(default_factory=dict)  # value param -> compile-time value, if known
    weak: set[str] = field(default_factory=set)  # value params that are untyped literals/constants
    attrs: dict[str, Any] = field(default_factory=dict)  # attribute param -> value
    offsets: dict[str, list[Type]] = field(default_factory=dict)  # offset param -> list of Types
    variadic: list[Type] = field(default_factory=list)  # types of the *args
    variadic_consts: list[Any] = field(default_factory=list)  # their compile-time values or None
    variadic_weak: set[int] = field(default_factory=set)  # indices of untyped literal *args
    funcs: dict[str, FuncRef] = field(default_factory=dict)  # func param -> FuncRef

    def fail(self, code: str, message: str, arg: str | None = None) -> NoReturn:
        raise RuleError(code, f"{self.op}: {message}", arg)

    def key(self) -> tuple[Any, ...] | None:
        """Everything a rule reads, hashable (a constant with its Python type: 1, 1.0 and True are
        equal keys otherwise); None when a func operand or an unhashable value is bound."""
        if self.funcs:
            return None
        key = (self.op, tuple(self.types.items()), _typed(self.consts), frozenset(self.weak), _typed(self.attrs),
               tuple((name, tuple(types)) for name, types in self.offsets.items()), tuple(self.variadic),
               _typed(dict(enumerate(self.variadic_consts))), frozenset(self.variadic_weak))
        try:
            hash(key)
        except TypeError:
            return None
        return key


class KeptTypes:
    """Rules' answers (a Type, or None for an effect) kept by a key holding everything the rule
    reads: a rule is a pure function of it, and a compile meets the same few calls over and over.
    At most `limit` are kept (all dropped when full: a compile meets a few hundred distinct ones)."""

    MISSING: Any = object()  # what `get` answers for a key not kept

    def __init__(self, limit: int = 4096):
        self._kept: dict[Any, Any] = {}
        self._limit = limit

    def get(self, key: Any) -> Any:
        return self._kept.get(key, KeptTypes.MISSING)

    def keep(self, key: Any, answer: Type | None) -> None:
        if len(self._kept) >= self._limit:
            self._kept.clear()
        self._kept[key] = answer

    def clear(self) -> None:
        self._kept.clear()


def _typed(values: dict[Any, Any]) -> tuple[Any, ...]:
    return tuple((name, _typed_value(v)) for name, v in values.items())


def _typed_value(v: Any) -> Any:
    if isinstance(v, (tuple, list)):
        return (type(v), tuple(_typed_value(x) for x in v))
    return (type(v), v)


@dataclass(frozen=True)
class FuncRef:
    """A function passed to tile_map/tile_reduce, with a way to type its result."""

    name: str  # builtin op name or user func name
    builtin: bool
    result: Callable[[tuple[Type, ...]], Type]  # tuple[Scalar-or-Tile types] -> Type, raises RuleError


_Registered = TypeVar("_Registered", bound=Callable[..., Any])


def registrar(table: dict[str, _Registered]) -> Callable[..., Callable[[_Registered], _Registered]]:
    """The decorator `register(*names)` that enters a function in `table` under each of those op names: how
    the op table's companions are filled (adjoint rules, the reference interpreter's implementations)."""
    def register(*names: str) -> Callable[[_Registered], _Registered]:
        def add(fn: _Registered) -> _Registered:
            for n in names:
                table[n] = fn
            return fn

        return add

    return register
