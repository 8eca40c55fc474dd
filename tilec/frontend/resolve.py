"""Resolve: module-level names of a parsed file.

Finds the tile API imports (`import warp as wp`, `import tilec as tl`,
`from warp import tile_load`), module constants, `@wp.struct` classes (frontend/structs.py),
`@wp.func` functions and `@wp.kernel` kernels. Everything else at module level is host code and is
ignored. Guarantees: every kernel/func is recorded with its decorator options;
constants hold evaluated Python values.
"""
from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, cast

import libcst as cst

from ..diagnostics import MODULE_DOT, Diagnostics, Span
from ..ir.types import BUILTIN_DTYPE_NAMES, BUILTIN_STRUCTS, DTYPE_NAMES, VALUE_TYPE_NAMES, MatT, Scalar, StructT, Type, VecT
from ..ops.warp_names import WARP_NOT_EXPORTED, WARP_OTHER_BUILTINS, WARP_RANDOM_BUILTINS, WARP_TILE_BUILTINS
from . import consts, func_factories, host_eval, imports, module_aliases, nested_classes, static_items, structs
from .enum_properties import EnumClass, VectorConstant, constructor_name
from .parse import Parsed, dotted
from .suggest import HOST_MODULES
from .statement_walk import single_name_assign
from .tuple_returns import return_sources, returned_count

if TYPE_CHECKING:
    from .annotations import IndexedT
    from .func_factories import HostDef
    from .module_aliases import Use

API_MODULES = ("warp", "tilec")
MATH_CONSTANTS = {"pi": 3.141592653589793, "e": 2.718281828459045, "inf": float("inf"), "nan": float("nan"),
                  "tau": 6.283185307179586, "half_pi": 1.5707963267948966, "ln2": 0.6931471805599453,
                  "ln10": 2.302585092994046, "log2e": 1.4426950408889634, "log10e": 0.4342944819032518,
                  "phi": 1.618033988749895}
# Warp's constants spelled in capitals too (wp.PI, wp.HALF_PI, wp.INF, wp.NAN, ...).
MATH_CONSTANTS.update({name.upper(): value for name, value in list(MATH_CONSTANTS.items())})
# Python's builtins a module constant may call (of constants; results of other types are no constant).
PYTHON_BUILTINS: dict[str, Callable[..., object]] = {"min": min, "max": max, "abs": abs, "int": int, "float": float,
                                                     "bool": bool, "round": round}
# np.finfo(<float dtype>).<limit>, by the format's bits (numpy's values)
FLOAT_LIMITS = {
    "eps": {16: 0.0009765625, 32: 1.1920928955078125e-07, 64: 2.220446049250313e-16},
    "max": {16: 65504.0, 32: 3.4028234663852886e38, 64: 1.7976931348623157e308},
    "min": {16: -65504.0, 32: -3.4028234663852886e38, 64: -1.7976931348623157e308},
    "tiny": {16: 6.103515625e-05, 32: 1.1754943508222875e-38, 64: 2.2250738585072014e-308},
}
# math's and numpy's functions of numbers a module constant may call (`DT = 0.95 * DX / math.sqrt(3.0)`),
# as math computes them; numpy's give floats (np.floor(2.5) is 2.0).
HOST_MATH: dict[str, Callable[..., object]] = {
    name: getattr(math, name) for name in ("sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
                                           "atan", "atan2", "sinh", "cosh", "tanh", "floor", "ceil", "fabs", "pow",
                                           "hypot", "radians", "degrees", "trunc")}

# Warp reads a called name the function's closure and module do not bind as an attribute of warp (then
# as Python's builtin): `vec3(...)`, `sqrt(x)` and `expect_eq(a, b)` need no `wp.`, and a builtin warp
# does not export (`tid`, `tile_load`) is an undefined name there, as is a bare `pi` used as a value. tilec's own paths for Python's
# builtins (min, print, int, ...) stay theirs; `round` and `pow` are warp's.
BARE_API_NAMES = frozenset(
    {*WARP_TILE_BUILTINS, *WARP_RANDOM_BUILTINS, *WARP_OTHER_BUILTINS, *VALUE_TYPE_NAMES, *DTYPE_NAMES,
     *BUILTIN_STRUCTS, "kernel", "func", "struct", "constant", "Function", "ref", "handle",
     "static", "overload", "func_grad", "func_replay", "func_native", "array", "array1d", "array2d", "array3d",
     "array4d", "indexedarray", "Mesh", "HashGrid", "Texture1D", "Texture2D", "Texture3D"}
    - WARP_NOT_EXPORTED - {"half"} - set(dir(builtins))) | {"round", "pow"}


_COUNTING: set[int] = set()  # ids of the FuncDefs whose returns_several is being computed (recursion)


@dataclass
class FuncDef:
    name: str
    node: cst.FunctionDef
    kind: str  # "kernel" or "func"
    block_dim: int | None = None
    enable_backward: bool | None = None  # None: the module's option (wp.set_module_options), else True
    scope: Scope | None = None  # the names it sees (a nested def: with its bindings); None: the module's
    bindings: tuple[tuple[str, object], ...] = ()  # ((free variable, value), ...) of a nested instantiation (frontend/nested.py)
    key: object = None  # what tells apart two nested funcs of one name; None: the name
    launch_block_dims: tuple[int, ...] = ()  # constant `block_dim=` of this kernel's launches in the file
    overloads: tuple[tuple[Span, dict[str, cst.BaseExpression]], ...] = ()  # ((span, {param name or "#i": annotation node}), ...) of a generic kernel
    library: bool = False  # one of tilec's own funcs for Warp's Python-written builtins (warp_library.py)
    origin: Parsed | None = None  # the parse of the module it was imported from (imports.py); None: this file's
    defined_in: Scope | None = None  # the names where it is defined (for `return g(x)`: returns_several)

    @cached_property
    def returns_several(self) -> int | None:
        """tuple_returns.returned_count of this def, kept: every call site of the func asks, and the
        answer walks its body (and, for `return g(x)`, g's)."""
        names = self.scope or self.defined_in
        _COUNTING.add(id(self))
        try:
            return returned_count(self, lambda callee: names.funcs[callee].returns_several
                                  if names is not None and callee in names.funcs
                                  and id(names.funcs[callee]) not in _COUNTING else None)
        finally:
            _COUNTING.discard(id(self))

    @cached_property
    def return_sources(self) -> frozenset[str]:
        """tuple_returns.return_sources of this def, kept (asked at every call of a func that has no
        return annotation)."""
        return return_sources(self)


@dataclass
class Scope:
    """What the module's names mean to the checker."""

    api_aliases: set[str] = field(default_factory=set)  # local names bound to warp/tilec
    api_names: dict[str, str] = field(default_factory=dict)  # local name -> API attribute (from-imports)
    api_star: bool = False  # `from warp import *`
    typing_aliases: set[str] = field(default_factory=set)  # local names bound to the typing module
    any_names: set[str] = field(default_factory=set)  # local names bound to typing.Any
    literal_names: set[str] = field(default_factory=set)  # local names bound to typing.Literal
    tuple_names: set[str] = field(default_factory=set)  # local names bound to typing.Tuple
    constants: dict[str, object] = field(default_factory=dict)  # name -> int/float/bool/tuple
    typed_constants: dict[str, Scalar] = field(default_factory=dict)  # name -> Scalar of `N = wp.constant(wp.int32(0))`
    value_constants: dict[str, cst.Call] = field(default_factory=dict)  # name -> `wp.vec3(1.0, 2.0, 3.0)` call (of literals)
    type_aliases: dict[str, Type | IndexedT] = field(default_factory=dict)  # name -> Type: `dt = wp.float64`, `A = wp.array[dt]`
    funcs: dict[str, FuncDef] = field(default_factory=dict)  # name -> FuncDef
    kernels: dict[str, FuncDef] = field(default_factory=dict)  # name -> FuncDef
    host_modules: dict[str, str] = field(default_factory=dict)  # local name -> numpy/math/... (for hints)
    host_names: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (module, name) from-imported
    module_options: dict[str | bytes, object] = field(default_factory=dict)  # wp.set_module_options({...}) at module level
    custom_adjoints: dict[str, dict[str, cst.FunctionDef]] = field(default_factory=dict)  # func name -> {"func_grad"|"func_replay": def node}
    custom_targets: list[tuple[str, str, cst.Name]] = field(default_factory=list)  # (func name, decorator, its argument): checked at the end
    native_funcs: dict[str, cst.FunctionDef] = field(default_factory=dict)  # @wp.func_native name -> its def node
    native_homes: dict[str, Scope] = field(default_factory=dict)  # an imported one's name -> its module's names
    func_overloads: dict[str, list[FuncDef]] = field(default_factory=dict)  # a @wp.func name defined more than once -> its defs, in order
    structs: dict[str, StructT] = field(default_factory=dict)  # @wp.struct class name -> StructT (frontend/structs.py)
    bound: set[str] = field(default_factory=set)  # every name the module binds (a builtin's name bound here is not the builtin)
    enums: dict[str, dict[str, int]] = field(default_factory=dict)  # IntEnum / IntFlag class -> {member: value}
    enum_classes: dict[str, EnumClass] = field(default_factory=dict)  # the same classes, for their members' attributes
    host_defs: dict[str, tuple[cst.FunctionDef, Scope]] = field(default_factory=dict)  # plain defs (host_eval.py), with their module's names
    # a plain class -> {attribute: constant, or (value, Scalar) of a typed one}
    class_constants: dict[str, dict[str, object]] = field(default_factory=dict)
    # name -> the value an assignment last bound it to that is no compile-time constant (`S = len(x)`,
    # `S = 3 % 0.0`): a kernel reading it gets a diagnostic naming that assignment (lower_name)
    host_values: dict[str, cst.BaseExpression] = field(default_factory=dict)
    # a class -> {attribute: the value node} of its `NAME = value` lines that are no compile-time constant
    # (`FREE = mujoco.mjtJoint.mjJNT_FREE`): a kernel reading one gets a diagnostic naming it (lower_attribute)
    host_members: dict[str, dict[str, cst.BaseExpression]] = field(default_factory=dict)
    literal_dicts: dict[str, cst.Dict | cst.Set] = field(default_factory=dict)  # host values `wp.static(D[key])` reads (static_items.py)
    import_errors: list[tuple[cst.CSTNode, str]] = field(default_factory=list)  # (import statement, why its module does not resolve)
    unbrought: dict[str, str] = field(default_factory=dict)  # a name imported from a project file that defines nothing usable by it -> why
    import_problem: str | None = None  # (a module imported from another file) the first error tilec found in it
    module_uses: dict[str, list[Use]] = field(default_factory=dict)  # a project module's alias -> the names reached through it
    factories: dict[str, HostDef] = field(default_factory=dict)  # a host def making or picking funcs (func_factories.py)

    def api_attr(self, node: cst.BaseExpression) -> str | None:
        """`wp.tile_load` / `tile_load` (from-imported) -> "tile_load"."""
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            if node.value.value in self.api_aliases:
                return node.attr.value
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Attribute):
            inner = node.value  # warp.types.float32 and the like
            if isinstance(inner.value, cst.Name) and inner.value.value in self.api_aliases:
                return node.attr.value
        if isinstance(node, cst.Name):
            name = node.value
            if name in self.api_names:
                return self.api_names[name]
            if name in BARE_API_NAMES and not self.binds(name) and (self.api_aliases or self.api_names or self.api_star):
                return name
        return None

    def binds(self, name: str) -> bool:
        """Whether the module (or a closure) binds `name`: then it is not Warp's."""
        return name in self.bound or name in self.funcs or name in self.kernels or name in self.structs \
            or name in self.constants or name in self.host_values or name in self.type_aliases

    def api_prefix(self) -> str:
        """How the file spells the API module in a suggestion: `wp.` (or its own alias)."""
        return f"{min(self.api_aliases)}." if self.api_aliases else ("" if self.api_names else "wp.")

    def host_origin(self, node: cst.BaseExpression) -> tuple[str, str] | None:
        """`np.exp` / `math.pi` / from-imported `exp` -> ("numpy", "exp"); else None."""
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            module = self.host_modules.get(node.value.value)
            return (module, node.attr.value) if module else None
        if isinstance(node, cst.Name):
            return self.host_names.get(node.value)
        return None

    def is_any(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Name):
            return node.value in self.any_names
        return (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                and node.value.value in self.typing_aliases and node.attr.value == "Any")

    def literal_value(self, node: cst.BaseExpression) -> object:
        """`Literal[2]` / `typing.Literal[2]` -> 2; else NOT_CONST."""
        if not isinstance(node, cst.Subscript) or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return consts.NOT_CONST
        target = node.value
        if not ((isinstance(target, cst.Name) and target.value in self.literal_names)
                or (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                    and target.value.value in self.typing_aliases and target.attr.value == "Literal")):
            return consts.NOT_CONST
        return self.constant(node.slice[0].slice.value)

    def constant(self, node: cst.BaseExpression) -> object:
        return consts.evaluate(node, self._lookup)

    def enum_member(self, node: cst.BaseExpression) -> int | None:
        """`Color.RED` or `Color.RED.value` of a module-level IntEnum / IntFlag: the member's int."""
        if isinstance(node, cst.Attribute) and node.attr.value == "value" and isinstance(node.value, cst.Attribute):
            node = node.value
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            owner = self.enum_classes.get(node.value.value)
            return owner.member(node.attr.value) if owner is not None else \
                self.enums.get(node.value.value, {}).get(node.attr.value)
        return None

    def class_method(self, node: cst.BaseExpression) -> str | None:
        """`C.m` of a module-level class's @wp.func (resolve._class_funcs): its name in `funcs`, else None."""
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            key = f"{node.value.value}{MODULE_DOT}{node.attr.value}"
            return key if key in self.funcs else None
        return None

    def class_member(self, node: cst.BaseExpression) -> object:
        """`Flags.N` of a plain module-level class's constant attribute: its value (a typed one's too); else
        NOT_CONST."""
        value = self.class_constants.get(node.value.value, {}).get(node.attr.value, consts.NOT_CONST) \
            if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) else consts.NOT_CONST
        return value[0] if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], Scalar) else value

    def class_member_dtype(self, node: cst.Attribute) -> Scalar | None:
        """The dtype of a typed class constant (`EPS = wp.constant(wp.float32(1e-6))`), else None."""
        value = self.class_constants.get(node.value.value, {}).get(node.attr.value) \
            if isinstance(node.value, cst.Name) else None
        return value[1] if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], Scalar) else None

    def _lookup(self, node: cst.BaseExpression) -> object:
        if isinstance(node, cst.Name):
            return self.constants.get(node.value, consts.NOT_CONST)
        if isinstance(node, cst.Subscript):
            return self._dict_item(node)
        if consts.membership(node) is not None:
            return self._dict_membership(cast(cst.Comparison, node))
        member = self.enum_member(node)
        if member is not None:
            return member
        if self.class_member(node) is not consts.NOT_CONST:
            return self.class_member(node)
        attr = self.api_attr(node)
        if attr in MATH_CONSTANTS and isinstance(node, cst.Attribute):
            return MATH_CONSTANTS[attr]
        host = self.host_origin(node)
        if host is not None and host[0] in ("math", "numpy") and host[1] in MATH_CONSTANTS:
            return MATH_CONSTANTS[host[1]]  # `DOMAIN = 2 * np.pi`
        limit = self._float_limit(node)
        if limit is not None:
            return limit
        if not isinstance(node, cst.Call):
            return consts.NOT_CONST
        if self.api_attr(node.func) in ("constant", "static") and len(node.args) == 1:
            return self.constant(node.args[0].value)
        called = self.host_origin(node.func)
        if called is not None and called[0] in ("math", "numpy") and called[1] in HOST_MATH:
            value = self._applied(HOST_MATH[called[1]], node)
            return float(value) if called[0] == "numpy" and isinstance(value, (int, float)) else value
        if isinstance(node.func, cst.Name) and node.func.value in PYTHON_BUILTINS and node.func.value not in self.bound:
            return self._applied(PYTHON_BUILTINS[node.func.value], node)  # `BATCH = min(1024, int(W * H / 8))`
        if isinstance(node.func, cst.Name) and node.func.value in self.host_defs:
            return self._host_call(node)
        return consts.NOT_CONST

    def _float_limit(self, node: cst.BaseExpression) -> float | None:
        """`np.finfo(np.float32).eps` (also of wp.float32, `.max`, `.min`, `.tiny`): the float format's
        limit, as numpy gives it."""
        if not (isinstance(node, cst.Attribute) and node.attr.value in FLOAT_LIMITS and isinstance(node.value, cst.Call)
                and self.host_origin(node.value.func) == ("numpy", "finfo") and len(node.value.args) == 1):
            return None
        arg = node.value.args[0].value
        host = self.host_origin(arg)
        name = host[1] if host is not None and host[0] == "numpy" else self.api_attr(arg)
        bits = {"float16": 16, "half": 16, "float32": 32, "single": 32, "float64": 64, "double": 64}.get(name or "")
        return None if bits is None else FLOAT_LIMITS[node.attr.value][bits]

    def _host_call(self, node: cst.Call) -> object:
        """A module-level plain function's value for constant arguments (`make_bitmask(31)`: host_eval.py),
        numbers, strings and booleans only; else NOT_CONST."""
        fn, home = self.host_defs[cast(cst.Name, node.func).value]
        if any(a.star for a in node.args):
            return consts.NOT_CONST
        args = [self.constant(a.value) for a in node.args if a.keyword is None]
        kwargs = {a.keyword.value: self.constant(a.value) for a in node.args if a.keyword is not None}
        if consts.NOT_CONST in args or consts.NOT_CONST in kwargs.values():
            return consts.NOT_CONST
        value = host_eval.call(fn, args, kwargs, home._lookup)
        return value if isinstance(value, (bool, int, float, str)) else consts.NOT_CONST

    def _dict_item(self, node: cst.Subscript) -> object:
        """`BINS[KIND]` of a dict literal the file never changes (static_items.py) and a constant key: the
        item's value, else NOT_CONST."""
        table = self.literal_dicts.get(node.value.value) if isinstance(node.value, cst.Name) else None
        if table is None or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return consts.NOT_CONST
        key = static_items.key_value(node.slice[0].slice.value, self.constant)
        found = None if key is consts.NOT_CONST else static_items.item(table, key, self.constant)
        return consts.NOT_CONST if found is None else self.constant(found)

    def _dict_membership(self, node: cst.Comparison) -> object:
        """`"x" in OPTIONS` (`not in` too) of a dict or set literal the file never changes (static_items.py)
        and a constant key, else NOT_CONST."""
        table = self.literal_dicts.get(cast(str, consts.membership(node)))
        key = self.constant(node.left)
        found = None if table is None or key is consts.NOT_CONST else static_items.keys(table, self.constant)
        if found is None:
            return consts.NOT_CONST
        return (key in found) != isinstance(node.comparisons[0].operator, cst.NotIn)

    def _applied(self, fn: Callable[..., object], call: cst.Call) -> object:
        """fn of the call's constant arguments, as Python computes it when Warp imports the module; a
        number, else NOT_CONST."""
        if any(a.keyword is not None or a.star for a in call.args):
            return consts.NOT_CONST
        args = [self.constant(a.value) for a in call.args]
        if any(a is consts.NOT_CONST or isinstance(a, tuple) for a in args):
            return consts.NOT_CONST
        try:
            value = fn(*args)
        except (TypeError, ValueError, ArithmeticError):
            return consts.NOT_CONST
        return value if isinstance(value, (bool, int, float)) else consts.NOT_CONST


def resolve(parsed: Parsed, diags: Diagnostics) -> Scope:
    with imports.session():  # the modules it imports from the project's files, once per check
        return _resolve(parsed, diags)


def _resolve(parsed: Parsed, diags: Diagnostics) -> Scope:
    scope = Scope()
    scope.module_uses = module_aliases.rewrite(parsed, (*API_MODULES, "typing", *HOST_MODULES))
    nested_classes.rewrite(parsed)
    # the file's dict literals it never changes, readable by module constants (`N = BINS[KIND]`); those
    # imported from other files join them at the module's end
    written = (single_name_assign(stmt) for stmt in parsed.tree.body)
    own = dict(w for w in written if w is not None)
    scope.literal_dicts = static_items.literal_dicts(parsed.tree, own)
    for stmt in parsed.tree.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            scope.bound.add(stmt.name.value)
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                _simple(scope, small, parsed)
                _factory_call(scope, small, parsed, diags)
        elif isinstance(stmt, cst.FunctionDef):
            _function(scope, stmt, parsed, diags)
            if func_factories.makes_funcs(stmt, lambda fn: _decorated_func(scope, fn)):
                scope.factories[stmt.name.value] = func_factories.HostDef(stmt)
            elif not stmt.decorators:  # a host function a constant expression may call (host_eval.py)
                scope.host_defs[stmt.name.value] = (stmt, scope)
        elif isinstance(stmt, cst.ClassDef):
            for inner, name in nested_classes.nested_in(stmt):  # `Outer·Inner` (nested_classes.py)
                made = inner.with_changes(name=cst.Name(name))
                parsed.place_like(made, inner)
                parsed.place_like(made.name, inner.name)
                _class(scope, made, parsed, diags)
            _class(scope, stmt, parsed, diags)
        else:
            _nested_imports(scope, stmt, parsed)
    for at, message in scope.import_errors:
        diags.error("TC0433", message, parsed.span(at))
    _check_custom_targets(scope, parsed, diags)
    imported = {name: value for name, value in scope.host_values.items() if name not in own}
    scope.literal_dicts.update(static_items.literal_dicts(parsed.tree, imported))
    # Warp reads module options when the module is built: they hold for kernels defined before them.
    default = scope.module_options.get("enable_backward", True) is not False
    for fd in list(scope.kernels.values()) + list(scope.funcs.values()):
        if fd.enable_backward is None:
            fd.enable_backward = default
    return scope


def _class(scope: Scope, stmt: cst.ClassDef, parsed: Parsed, diags: Diagnostics) -> None:
    """A class at module level: a @wp.struct, an enum, another name for a vector or matrix type, or a
    namespace of constants; the @wp.func methods of each but a struct."""
    if structs.is_struct_decl(scope, stmt):
        structs.declare(scope, stmt, parsed, diags)
        return
    if _enum_kind(stmt) is not None:
        _declare_enum(scope, stmt, parsed)
    elif (subclassed := _value_subclass(scope, stmt)) is not None:
        scope.type_aliases[stmt.name.value] = subclassed
    else:
        _declare_namespace(scope, stmt)
    _class_funcs(scope, stmt, parsed, diags)


def _enum_kind(node: cst.ClassDef) -> str | None:
    """"IntEnum" or "IntFlag" for `class C(enum.IntEnum)` / `class C(IntFlag)`, else None."""
    kinds = {dotted(base.value).rsplit(".", 1)[-1] for base in node.bases} & {"IntEnum", "IntFlag"}
    return next(iter(kinds)) if len(node.bases) == 1 and kinds else None


def _declare_enum(scope: Scope, node: cst.ClassDef, parsed: Parsed) -> None:
    """The members Python gives an IntEnum / IntFlag: `NAME = <int constant>` (earlier members may be
    named), `enum.auto()` (the next integer, or the next power of two for a flag). Others are left
    out: using one is an unknown name. The class is kept for its properties (enum_properties.py)."""
    members = _class_constants(scope, node, _enum_kind(node))
    ints = {k: int(v) for k, v in members.items() if isinstance(v, int) and not isinstance(v, bool)}
    scope.enums[node.name.value] = ints
    scope.enum_classes[node.name.value] = EnumClass(node, ints, scope._lookup, lambda n: _returned_value(scope, n, parsed))


def _returned_value(scope: Scope, node: cst.BaseExpression, parsed: Parsed) -> object:
    """What an enum's property returns besides a constant (enum_properties.py): a type (`return wp.vec2f`), a
    vector or matrix constant (`return wp.constant(wp.vec3i(0, 1, 2))`); else NOT_CONST."""
    if isinstance(node, cst.Name) and node.value == "None":
        return consts.NOT_CONST
    t = _type_alias(scope, node)
    if t is not None:
        return t
    made = value_constant(scope, node, parsed)
    if made is None:
        return consts.NOT_CONST
    from . import annotations  # annotations reads the Scope this module defines

    built = annotations.element_type(made.func, scope)  # (value_constant checked it is a vector or matrix type)
    # its constructor named as the scopes that read it bind the type (func_factories._child): the enum's
    # module may name it where they cannot (`vec5i` of a third file)
    func = cst.Name(constructor_name(built))
    parsed.place_like(func, made.func)
    return VectorConstant(made.with_changes(func=func), cast("VecT | MatT", built))


def _decorated_func(scope: Scope, fn: cst.FunctionDef) -> bool:
    """Whether a def is decorated @wp.func."""
    return any(scope.api_attr(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) == "func"
               for d in fn.decorators)


def _factory_call(scope: Scope, node: cst.BaseSmallStatement, parsed: Parsed, diags: Diagnostics) -> None:
    """`f = make_f(True)` of a module-level factory or selector of funcs (func_factories.py): f is the func it
    makes or picks."""
    if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
            and isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Name)
            and node.value.func.value in scope.factories):
        return
    name = node.targets[0].target.value
    why = factory_func(scope, name, node.value, parsed, diags)
    if why is None:
        scope.host_values.pop(name, None)
    else:
        scope.unbrought[name] = f"`{name}` is the func `{node.value.func.value}(...)` gives, which tilec cannot tell: {why}"


def factory_func(scope: Scope, name: str, call: cst.Call, parsed: Parsed, diags: Diagnostics) -> str | None:
    """Binds `name` in scope to the func the factory or selector `call` calls gives (func_factories.py); None,
    or why not."""
    assert isinstance(call.func, cst.Name) and call.func.value in scope.factories

    def define(child: Scope, fn: cst.FunctionDef) -> FuncDef | None:
        holder = replace(child, funcs={}, kernels={}, constants=dict(child.constants))
        _function(holder, fn, parsed, diags)
        made = list(holder.funcs.values())
        if made and made[0].enable_backward is None:
            made[0].enable_backward = scope.module_options.get("enable_backward", True) is not False
        return made[0] if made else None

    def place(made: cst.CSTNode, original: cst.CSTNode) -> None:  # at the node it stands for, else at the call
        parsed.place_like(made, original)
        parsed.place_like(made, call)

    return func_factories.instantiate(scope, name, call, scope.factories[call.func.value],
                                      lambda fn: _decorated_func(scope, fn), define, _type_alias, place)


def _class_funcs(scope: Scope, node: cst.ClassDef, parsed: Parsed, diags: Diagnostics) -> None:
    """`@staticmethod @wp.func def from_values(...)` in a module-level class: a func named `C·from_values`
    (MODULE_DOT), which `C.from_values(...)` calls (Scope.class_method), as Warp calls it."""
    for stmt in node.body.body:
        if not isinstance(stmt, cst.FunctionDef):
            continue
        decorators = [d for d in stmt.decorators if dotted(d.decorator) != "staticmethod"]
        if not any(scope.api_attr(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) == "func"
                   for d in decorators):
            continue
        name = cst.Name(f"{node.name.value}{MODULE_DOT}{stmt.name.value}")
        made = stmt.with_changes(name=name, decorators=decorators)
        parsed.place_like(made, stmt)
        parsed.place_like(name, stmt.name)
        _function(scope, made, parsed, diags)


def _value_subclass(scope: Scope, node: cst.ClassDef) -> Type | None:
    """`class vec6f(wp.types.vector(length=6, dtype=wp.float32)): ...`: the vector or matrix type it
    subclasses (Warp matches such a class by its length and dtype: another name for the type)."""
    if len(node.bases) != 1 or node.keywords:
        return None
    t = _type_alias(scope, node.bases[0].value)
    return t if isinstance(t, (VecT, MatT)) else None


def _declare_namespace(scope: Scope, node: cst.ClassDef) -> None:
    """A plain class's constant attributes (`class Flags: ENABLED = False; N = wp.constant(4)`, also typed:
    `EPS = wp.constant(wp.float32(1e-6))`): Warp reads `Flags.N` in a kernel as the value Python gives it."""
    members = _class_constants(scope, node, None)
    if members:
        scope.class_constants[node.name.value] = members


def _class_constants(scope: Scope, node: cst.ClassDef, enum_kind: str | None) -> dict[str, object]:
    """`NAME = <constant>` of the class body (earlier names may be read); `enum.auto()` of an enum; of a
    plain class, `(value, Scalar)` for a typed one (`wp.constant(wp.float32(1e-6))`)."""
    members: dict[str, object] = {}
    typed: dict[str, object] = {}
    flag = enum_kind == "IntFlag"
    for stmt in node.body.body:
        assigned = single_name_assign(stmt)
        if assigned is None:
            continue
        name, assigned_value = assigned
        scalar = _typed_scalar(scope, assigned_value) if enum_kind is None else None
        if scalar is not None:
            typed[name] = scalar
            continue
        value: object
        if enum_kind is not None and isinstance(assigned_value, cst.Call) and \
                dotted(assigned_value.func).rsplit(".", 1)[-1] == "auto":
            last = max((v for v in members.values() if isinstance(v, int)), default=0)
            value = (1 << last.bit_length() if last > 0 else 1) if flag else last + 1
        else:
            value = consts.evaluate(assigned_value, lambda n: members.get(n.value, consts.NOT_CONST)
                                    if isinstance(n, cst.Name) else scope._lookup(n))
        if isinstance(value, (bool, int, float)):
            members[name] = value
        elif value is consts.NOT_CONST:
            scope.host_members.setdefault(node.name.value, {})[name] = assigned_value
    return {**members, **typed}


def _nested_imports(scope: Scope, stmt: cst.BaseStatement, parsed: Parsed) -> None:
    """Imports inside module-level try/except or if (e.g. `except ImportError: import tilec as wp`)."""
    blocks = []
    if isinstance(stmt, cst.Try):
        blocks = [stmt.body] + [h.body for h in stmt.handlers]
    elif isinstance(stmt, cst.If):
        blocks = [stmt.body]
        if isinstance(stmt.orelse, cst.Else):
            blocks.append(stmt.orelse.body)
    for block in blocks:
        for inner in getattr(block, "body", ()):
            if isinstance(inner, cst.SimpleStatementLine):
                for small in inner.body:
                    if isinstance(small, (cst.Import, cst.ImportFrom)):
                        _simple(scope, small, parsed)


def _simple(scope: Scope, node: cst.BaseSmallStatement, parsed: Parsed) -> None:
    if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call) and \
            scope.api_attr(node.value.func) == "set_module_options" and node.value.args:
        options = node.value.args[0].value
        if isinstance(options, cst.Dict):
            for el in options.elements:
                if isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString):
                    scope.module_options[el.key.evaluated_value] = scope.constant(el.value)
        return
    if isinstance(node, cst.Import):
        for alias in node.names:
            full = dotted(alias.name)
            local = cst.ensure_type(alias.asname.name, cst.Name).value if alias.asname else full.split(".")[0]
            scope.bound.add(local)
            if local in scope.module_uses:  # `import newton`: the names `newton.X` reaches (module_aliases.py)
                imports.bring_uses(scope, node, parsed, scope.module_uses[local], scope.import_errors, resolve)
            elif full in API_MODULES:
                scope.api_aliases.add(local)
            elif full == "typing":
                scope.typing_aliases.add(local)
            elif full.split(".")[0] in HOST_MODULES:
                scope.host_modules[local] = full.split(".")[0]
    elif isinstance(node, cst.ImportFrom) and (node.relative or (node.module is not None and dotted(node.module).split(
            ".")[0] not in (*API_MODULES, "typing", *HOST_MODULES))) and imports.bring(scope, node, parsed, scope.import_errors, resolve):
        return  # from one of the project's files (imports.py)
    elif isinstance(node, cst.ImportFrom) and node.module is not None:
        module = dotted(node.module)
        if isinstance(node.names, cst.ImportStar):
            scope.api_star = scope.api_star or module in API_MODULES
            return
        for alias in node.names:
            name = dotted(alias.name)
            local = cst.ensure_type(alias.asname.name, cst.Name).value if alias.asname else name
            scope.bound.add(local)
            if module in API_MODULES:
                scope.api_names[local] = name
            elif name == "Any" and (module == "typing" or module.split(".")[0] in API_MODULES):
                scope.any_names.add(local)  # also Warp's re-export (`from warp._src.types import Any`: Newton's kamino)
            elif module == "typing" and name == "Literal":
                scope.literal_names.add(local)
            elif module == "typing" and name == "Tuple":
                scope.tuple_names.add(local)
            elif module.split(".")[0] in HOST_MODULES:
                scope.host_names[local] = (module.split(".")[0], name)
    elif isinstance(node, (cst.Assign, cst.AnnAssign)):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        if node.value is not None:
            for target in targets:
                _bind(scope, target, node.value, parsed)


def _bind(scope: Scope, target: cst.BaseExpression, value: cst.BaseExpression, parsed: Parsed) -> None:
    """What module-level `target = value` makes of target's names: a constant, a typed or vector
    constant, a type alias, or a host value (none of these). `a, b = x, y` binds pair by pair."""
    if isinstance(target, (cst.Tuple, cst.List)):
        items = [e.value for e in target.elements]
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(items) and not any(
                isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
            for item, part in zip(items, (e.value for e in value.elements)):
                _bind(scope, item, part, parsed)
            return
        for item in items:  # unpacked at run time: host values
            _bind_host(scope, item)
        return
    if not isinstance(target, cst.Name):
        return  # an attribute or item of a host object
    name = target.value
    if isinstance(value, cst.Name) and value.value in scope.structs:  # `Pair = Particle`: the struct's second name
        _bind_host(scope, target)
        scope.structs[name] = scope.structs[value.value]
        return
    typed = _typed_scalar(scope, value)
    constant = typed[0] if typed is not None else scope.constant(value)
    if consts.holds_list(constant):  # a module's list may change before a kernel reads it (`X.append(4)`)
        constant = consts.NOT_CONST
    type_alias = _type_alias(scope, value) if constant is consts.NOT_CONST else None
    vector = value_constant(scope, value, parsed) if constant is consts.NOT_CONST and type_alias is None else None
    _bind_host(scope, target)  # what the name was before goes
    if vector is not None:
        scope.value_constants[name] = vector
    if typed is not None:
        scope.typed_constants[name] = typed[1]
    if type_alias is not None:
        scope.type_aliases[name] = type_alias
    if constant is not consts.NOT_CONST:
        scope.constants[name] = constant
    elif typed is None and type_alias is None and vector is None and not _bind_function(scope, name, value):
        scope.host_values[name] = value


def _bind_function(scope: Scope, name: str, value: cst.BaseExpression) -> bool:
    """`tid = wp.tid`, `step = integrate` (a @wp.func): the name calls what the value names, as in Warp."""
    api = scope.api_attr(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
    if api is not None:
        scope.api_names[name] = api
        return True
    if isinstance(value, cst.Name) and value.value in scope.funcs:
        scope.funcs[name] = scope.funcs[value.value]
        if value.value in scope.func_overloads:
            scope.func_overloads[name] = scope.func_overloads[value.value]
        return True
    return False


def _bind_host(scope: Scope, target: cst.BaseExpression) -> None:
    """target's names (an unpacking's too) bound to host values: whatever constant, typed or vector
    constant or type alias they were before is gone."""
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _bind_host(scope, element.value)
    elif isinstance(target, cst.Name):
        scope.bound.add(target.value)
        for table in (scope.constants, scope.typed_constants, scope.value_constants, scope.type_aliases, scope.host_values):
            table.pop(target.value, None)


def _typed_scalar(scope: Scope, value: cst.BaseExpression) -> tuple[bool | int | float, Scalar] | None:
    """`N = wp.constant(wp.int32(0))` (or `wp.float64(1.5)` without wp.constant): (value, Scalar), the
    value converted as the dtype's constructor converts it (Warp's constant has that dtype); else None."""
    from . import annotations  # annotations reads the Scope this module defines

    if isinstance(value, cst.Call) and scope.api_attr(value.func) == "constant" and len(value.args) == 1:
        value = value.args[0].value
    if not isinstance(value, cst.Call) or len(value.args) != 1 or value.args[0].keyword is not None:
        return None
    if isinstance(value.func, cst.Name) and value.func.value in BUILTIN_DTYPE_NAMES \
            and value.func.value not in scope.api_names:
        return None  # float(1.5): a Python value, untyped as in Warp
    t = annotations.dtype(value.func, scope)
    arg = scope.constant(value.args[0].value)
    if t is None or not isinstance(arg, (bool, int, float)):  # a tuple, or NOT_CONST (consts: no other values)
        return None
    try:
        if t.is_float:
            return float(arg), t
        return (bool(arg), t) if t.kind == "bool" else (int(arg), t)
    except (OverflowError, ValueError):  # int(inf), float(10**400): not a value of the dtype
        return None


def value_constant(scope: Scope, value: cst.BaseExpression, parsed: Parsed) -> cst.Call | None:
    """`G = wp.constant(wp.vec3(0.0, -9.8, 0.0))` (or without wp.constant): the constructor call, when
    it builds a vector/matrix from constants; else None. Its arguments are the values Python computes
    when Warp imports the module (`wp.vec2d(wp.float64(1 / N), 0.0)`: true division, each typed scalar
    rounded to its dtype), as literals placed where the arguments are: the kernel then reads those
    values, never re-evaluates the arguments with a kernel's operators."""
    from . import annotations  # annotations reads the Scope this module defines

    if isinstance(value, cst.Call) and scope.api_attr(value.func) == "constant" and len(value.args) == 1:
        value = value.args[0].value
    if not isinstance(value, cst.Call) or any(a.keyword is not None or a.star == "**" for a in value.args):
        return None
    try:
        t = annotations.element_type(value.func, scope)
    except annotations.AnnotationError:
        return None
    if t is None or not hasattr(t, "length"):  # a vector or matrix type (not a scalar dtype)
        return None
    given: list[tuple[cst.BaseExpression, object]] = []  # (argument, its value where a `*` spread it)
    for a in value.args:
        spread = scope.constant(a.value) if a.star else None
        if a.star and not isinstance(spread, tuple):
            return None
        given += [(a.value, item) for item in spread] if isinstance(spread, tuple) else [(a.value, None)]
    if len(given) == 1 and isinstance(given[0][0], (cst.List, cst.Tuple)) and not any(
            isinstance(e, cst.StarredElement) for e in given[0][0].elements):  # (a list: never spread)
        given = [(e.value, None) for e in given[0][0].elements]  # `vec3bool([True, False, True])`: Python's sequence form
    args = []
    for part, number in given:  # `mat(*NORMALS)` of a constant tuple: its items (Newton's contact_reduction.py)
        if number is None:
            typed = _typed_scalar(scope, part)
            number = _rounded(*typed) if typed is not None else scope.constant(part)
        elif consts.number_literal(number) is None:
            return None  # a spread item that is no number
        made: cst.BaseExpression | None = consts.number_literal(number)
        if made is None:  # a vector or quaternion of a transform, a matrix's row: a constant of its own
            made = scope.value_constants.get(part.value) if isinstance(part, cst.Name) else value_constant(
                scope, part, parsed)
            if made is None:
                return None
        parsed.place_like(made, part)
        args.append(cst.Arg(value=made))
    return value.with_changes(args=args)


def _rounded(value: bool | int | float, dtype: Scalar) -> object:
    """value as a scalar of dtype holds it (the 16- and 32-bit floats rounded to nearest even;
    NOT_CONST where it overflows)."""
    import struct

    if dtype.name not in ("float16", "bfloat16", "float32"):
        return value
    try:
        if dtype.name == "float16":
            return struct.unpack("<e", struct.pack("<e", value))[0]
        single = struct.unpack("<f", struct.pack("<f", value))[0]
        if dtype.name == "float32":
            return single
        bits = struct.unpack("<I", struct.pack("<f", single))[0]
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16  # bfloat16: the top half, rounded to nearest even
        rounded = struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]
        return rounded if math.isfinite(rounded) else consts.NOT_CONST
    except (OverflowError, struct.error):
        return consts.NOT_CONST


def _type_alias(scope: Scope, value: cst.BaseExpression) -> Type | IndexedT | None:
    """The type a module-level `name = <type expression>` binds, or None (a host value)."""
    from . import annotations  # annotations reads the Scope this module defines

    if not isinstance(value, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
        return None
    try:
        t = annotations.read_annotation(value, scope)
    except annotations.AnnotationError:
        return None
    return None if isinstance(t, str) else t  # the one str a Declared holds is annotations.ANY


def _custom_adjoint(scope: Scope, attr: str, node: cst.FunctionDef, deco: cst.Decorator, call: cst.Call | None,
                    parsed: Parsed, diags: Diagnostics) -> None:
    """`@wp.func_grad(f)` / `@wp.func_replay(f)`: registered for f, or a diagnostic (never ignored)."""
    if call is None or len(call.args) != 1 or not isinstance(call.args[0].value, cst.Name):
        diags.error("TC0408", f"@wp.{attr} takes the name of one @wp.func defined in this file, e.g. "
                    f"`@wp.{attr}(f)`", parsed.span(deco.decorator))
        return
    name = call.args[0].value.value
    rules = scope.custom_adjoints.setdefault(name, {})
    if rules.get(attr, node) is not node:  # (a factory's nested def is seen once per binding)
        diags.error("TC0408", f"a second @wp.{attr} for `{name}` (the first is `{rules[attr].name.value}`); "
                    "tilec takes one per func", parsed.span(node.name))
        return
    rules[attr] = node
    scope.custom_targets.append((name, attr, call.args[0].value))


def _check_custom_targets(scope: Scope, parsed: Parsed, diags: Diagnostics) -> None:
    for name, attr, arg in scope.custom_targets:
        if name not in scope.funcs:
            what = "a kernel" if name in scope.kernels else "not a @wp.func defined at module level in this file"
            diags.error("TC0408", f"@wp.{attr} names `{name}`, which is {what}", parsed.span(arg))


def _function(scope: Scope, node: cst.FunctionDef, parsed: Parsed, diags: Diagnostics) -> None:
    for deco in node.decorators:
        expr = deco.decorator
        call = expr if isinstance(expr, cst.Call) else None
        attr = scope.api_attr(call.func if call else expr)
        if attr in ("func_grad", "func_replay"):
            _custom_adjoint(scope, attr, node, deco, call, parsed, diags)
            return
        if attr == "func_native":
            scope.native_funcs[node.name.value] = node
            return
        if attr not in ("kernel", "func"):
            continue
        block_dim = None
        enable_backward = None
        if call is not None:
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "enable_backward":
                    enable_backward = scope.constant(arg.value) is not False
                if arg.keyword is not None and arg.keyword.value == "block_dim":
                    value = scope.constant(arg.value)
                    if isinstance(value, int) and value > 0:
                        block_dim = value
                    else:
                        diags.error("TC0305", "block_dim must be a positive compile-time integer",
                                    parsed.span(arg.value))
        if attr == "kernel" and node.name.value.startswith("__"):  # the loader's module attributes
            diags.error("TC0002", f"kernel name `{node.name.value}` starts with `__`, reserved for Python",
                        parsed.span(node.name))
        fd = FuncDef(node.name.value, node, attr, block_dim, enable_backward, defined_in=scope)
        earlier = scope.funcs.get(fd.name)
        if attr == "func" and earlier is not None and (  # Warp overloads a func by redefinition (any number)
                earlier.key is None or earlier in scope.func_overloads.get(fd.name, [])):
            defs = scope.func_overloads.setdefault(fd.name, [earlier])
            earlier.key = earlier.key or (fd.name, 0)
            fd.key = (fd.name, len(defs))
            defs.append(fd)
        (scope.kernels if attr == "kernel" else scope.funcs)[fd.name] = fd
        scope.constants.pop(fd.name, None)
        return
