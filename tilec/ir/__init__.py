"""The typed IR: small frozen dataclasses, a source span on every node.

Structure (assignment, loops, branches) has its own node classes; every
operation, from scalar `add` to `tile_matmul`, is one `OpCall` keyed by the op
table. Identifiers are `Sym`s (name + id), never bare strings. The untyped form
is the libcst tree itself; `frontend.check` lowers it into this IR.

Expression and statement nodes are slotted: a long kernel's adjoints hold hundreds of thousands
of them, and a `__dict__` per node took more memory than its fields.
"""
from __future__ import annotations

import threading
import weakref
from operator import is_
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, TypeVar, Union, overload

from ..diagnostics import Span
from .types import ArrayT, MatT, Scalar, TileT, Type, VecT


@dataclass(frozen=True, eq=False)
class Sym:
    name: str  # the user's name, or a generated one (see naming.py)
    id: int  # unique within a function; 0 for parameters and first bindings
    type: Type  # the one type this symbol holds for its whole life

    # Symbols key the sets and dicts of every pass (a long kernel's compile hashes one over a
    # million times). They are interned: equal (name, id, type) give the same object, so equality
    # and hashing are object identity, C-level, instead of a Python __eq__/__hash__ per lookup.
    def __new__(cls, name: str, id: int, type: Type) -> Sym:
        key = (name, id, type)
        ref = _SYMS.get(key)
        sym = ref() if ref is not None else None
        if sym is None:
            with _SYMS_LOCK:  # two threads making the same symbol get one object
                ref = _SYMS.get(key)
                sym = ref() if ref is not None else None
                if sym is None:
                    sym = super().__new__(cls)
                    _SYMS[key] = weakref.KeyedRef(sym, _forget_sym, key)
        return sym

    def __getnewargs__(self) -> tuple[str, int, Type]:
        return (self.name, self.id, self.type)  # copies and pickles come back interned

    def __str__(self) -> str:
        return self.name if self.id == 0 else f"{self.name}%{self.id}"


# The interned symbols, held weakly: a plain dict of weak references rather than a
# WeakValueDictionary, whose Python-level get was a third of making a symbol.
_SYMS: dict[tuple[str, int, Type], weakref.KeyedRef[tuple[str, int, Type], Sym]] = {}
_SYMS_LOCK = threading.RLock()  # reentrant: a symbol can die (and _forget_sym run) while it is held


def _forget_sym(ref: weakref.KeyedRef[tuple[str, int, Type], Sym], syms: dict[Any, Any] = _SYMS,
                lock: threading.RLock = _SYMS_LOCK) -> None:
    """A symbol died: its entry goes, unless a new symbol of the same key took its place (the
    table and lock are bound here: symbols still die while the interpreter tears modules down)."""
    with lock:
        if syms.get(ref.key) is ref:
            del syms[ref.key]


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class Const:
    value: object  # a Python int/float/bool
    type: Type
    span: Span
    weak: bool = False  # an untyped literal/constant: adapts to the other operand's dtype


@dataclass(frozen=True, slots=True)
class Var:
    sym: Sym  # the symbol read
    span: Span

    @property
    def type(self) -> Type:
        return self.sym.type


@dataclass(frozen=True, slots=True)
class OpCall:
    op: str  # key into tilec.ops.OPS
    args: tuple[Expr, ...]  # operands, in the op's parameter order
    attrs: tuple[tuple[str, Any], ...]  # ((name, compile-time value), ...) in parameter order
    type: Type  # result type
    span: Span

    def attr(self, name: str, default: Any = None) -> Any:
        for key, value in self.attrs:
            if key == name:
                return value
        return default


@dataclass(frozen=True, slots=True)
class Call:
    func: str  # name of a specialised function in Module.funcs
    args: tuple[Expr, ...]  # operands
    type: Type  # result type
    span: Span


Expr = Union[Const, Var, OpCall, Call]

# ---------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Assign:
    target: Sym  # written symbol
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Unpack:
    targets: tuple[Sym, ...]  # one per tuple item
    value: Expr  # of TupleT type
    span: Span


@dataclass(frozen=True, slots=True)
class ExprStmt:
    expr: Expr  # evaluated for its effect (stores, atomics)
    span: Span


@dataclass(frozen=True, slots=True)
class If:
    cond: Expr  # scalar condition
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class For:
    var: Sym  # int32 induction variable
    start: Expr
    stop: Expr
    step: Expr
    body: tuple[Stmt, ...]
    span: Span
    static: bool = False  # all bounds are compile-time constants


@dataclass(frozen=True, slots=True)
class While:
    cond: Expr
    body: tuple[Stmt, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Break:
    span: Span


@dataclass(frozen=True, slots=True)
class Continue:
    span: Span


@dataclass(frozen=True, slots=True)
class Return:
    value: Expr | None
    span: Span


Stmt = Union[Assign, Unpack, ExprStmt, If, For, While, Break, Continue, Return]


@dataclass(frozen=True)
class Function:
    name: str  # C-level name; a func specialisation gets a suffix
    source_name: str  # the name in the user's file
    kind: str  # "kernel" or "func"
    params: tuple[Sym, ...]
    body: tuple[Stmt, ...]
    ret: Type  # NONE for kernels
    span: Span
    block_dim: int | None = None  # fixed by @tl.kernel(block_dim=...)
    storage: tuple[tuple[Sym, str], ...] = ()  # ((Sym, "register"|"shared"), ...) for tile symbols
    tiled: bool = True  # uses tile ops (launch_tiled) or is plain SIMT
    differentiate: bool = True  # emit an adjoint (False: @wp.kernel(enable_backward=False))
    byref: tuple[int, ...] = ()  # positions of tile params a func updates in place: the caller's tile changes
    custom_adjoint: str | None = None  # a registered custom adjoint tilec cannot apply (the kernel gets none)
    grad_funcs: tuple[str | None, ...] | None = None  # @wp.func_grad: per param, the func computing its adjoint (or None)
    launch_name: str = ""  # the loader's name, shared by instances per block_dim/dtypes; "": name
    struct_params: tuple[tuple[str, Type], ...] = ()  # ((source param name, Type), ...) when a param is a struct: params are its leaves
    replay_func: str | None = None  # @wp.func_replay: the func whose value the adjoint's forward replay uses
    # ((param, "hash_grid" | "mesh", "float32" | "float64" | "any"), ...): the ids of the loader's objects it reads
    spatial_ids: tuple[tuple[str, str, str], ...] = ()

    def storage_of(self, sym: Sym) -> str:
        return dict(self.storage).get(sym, "register")


_Key = TypeVar("_Key")
_Answer = TypeVar("_Answer")


def keep_while_alive(table: dict[_Key, _Answer], fn: Function, key: _Key, answer: _Answer) -> _Answer:
    """table[key] = answer until fn is garbage: the memo of analyses that walk a whole Function and
    are asked again of the same one (keyed by identity: a Function is immutable, and its hash would
    walk the body too). Returns answer."""
    if key not in table:
        weakref.finalize(fn, table.pop, key, None)
    table[key] = answer
    return answer


NativeParam = Scalar | VecT | MatT | ArrayT  # what a @wp.func_native takes (arrays of the first three)


def float_elements(t: ArrayT) -> bool:
    """Whether an array holds floats: float scalars, or vectors or matrices of them (which have adjoints)."""
    component = t.dtype if isinstance(t.dtype, Scalar) else t.dtype.dtype if isinstance(t.dtype, (VecT, MatT)) else None
    return component is not None and component.is_float


@dataclass(frozen=True)
class NativeFunc:
    """A `@wp.func_native`: the user's C++/CUDA snippet, emitted as written as the body of a function
    of its Python parameters (scalars, vectors, matrices and arrays of them, named as in Python), called by
    `native_call` ops; its adj_snippet (if any) is the body of its adjoint (`native_adjoint` ops)."""

    name: str  # the C-level name, unique in the module
    source_name: str  # the name in the user's file
    params: tuple[tuple[str, NativeParam], ...]  # (Python name, type)
    ret: Type  # NONE: the snippet returns nothing
    snippet: str
    span: Span
    adj_snippet: str | None = None  # the body of its adjoint, reading adj_<param> and adj_ret
    replay_snippet: str | None = None  # what the adjoint launch runs instead of the snippet (a void one's)
    written: frozenset[str] = frozenset()  # the array parameters a snippet may write (the others go const)


def native_adjoint_type(float_params: list[Scalar]) -> Scalar | VecT | None:
    """What a snippet's adjoint function returns for its float scalar parameters of these types
    (codegen/natives.py): nothing (None), the one adjoint, or a vector of them (one precision: the
    front end refuses an adj_snippet over mixed ones)."""
    if not float_params:
        return None
    if len(float_params) == 1:
        return float_params[0]
    first = float_params[0]
    assert all(t == first for t in float_params)
    return VecT(first, len(float_params))


@dataclass(frozen=True)
class Module:
    name: str  # module name (file stem)
    filename: str  # as given by the user, for `// file.py:LINE` comments
    funcs: tuple[Function, ...]  # specialised, callees before callers
    kernels: tuple[Function, ...]
    constants: tuple[tuple[str, Any], ...] = field(default=())  # ((name, value), ...) sorted
    # ((kernel, line, why), ...) sorted: kernels of the file left uncompiled (generic ones without overloads);
    # the loader names them, and why, when a launch asks for one
    not_compiled: tuple[tuple[str, int, str], ...] = field(default=())
    natives: tuple[NativeFunc, ...] = field(default=())  # the @wp.func_native snippets the code calls


# ---------------------------------------------------------------- traversal


def child_blocks(stmt: Stmt) -> tuple[tuple[Stmt, ...], ...]:
    """The statement lists nested directly in `stmt`."""
    if isinstance(stmt, If):
        return (stmt.body, stmt.orelse)
    if isinstance(stmt, (For, While)):
        return (stmt.body,)
    return ()


def walk_stmts(body: Iterable[Stmt]) -> Iterator[Stmt]:
    """All statements of a body, depth first, in source order (a stack of iterators: nested
    generators cost each statement its depth)."""
    stack = [iter(body)]
    while stack:
        for stmt in stack[-1]:
            yield stmt
            blocks = _BLOCK_FIELDS.get(type(stmt))
            if blocks:
                stack.extend(iter(getattr(stmt, name)) for name in reversed(blocks))
                break
        else:
            stack.pop()


_BLOCK_FIELDS = {If: ("body", "orelse"), For: ("body",), While: ("body",)}  # as child_blocks


def assigned_tiles(body: Iterable[Stmt]) -> set[Sym]:
    """The tiles an assignment in body (nested blocks included) defines."""
    return {s.target for s in walk_stmts(body) if isinstance(s, Assign) and isinstance(s.target.type, TileT)}


def has_exits(body: Iterable[Stmt]) -> bool:
    """Whether body (nested blocks included) holds a break, continue or return."""
    return any(isinstance(s, (Break, Continue, Return)) for s in walk_stmts(body))


def stmt_exprs(stmt: Stmt) -> tuple[Expr, ...]:
    """The expressions a statement evaluates itself (not in nested blocks)."""
    if isinstance(stmt, (Assign, Unpack)):
        return (stmt.value,)
    if isinstance(stmt, ExprStmt):
        return (stmt.expr,)
    if isinstance(stmt, (If, While)):
        return (stmt.cond,)
    if isinstance(stmt, For):
        return (stmt.start, stmt.stop, stmt.step)
    if isinstance(stmt, Return) and stmt.value is not None:
        return (stmt.value,)
    return ()


def stmt_targets(stmt: Stmt) -> tuple[Sym, ...]:
    """The symbols a statement itself defines: an assignment's target, an unpacking's targets, a
    loop's variable (not those of nested blocks)."""
    if isinstance(stmt, Assign):
        return (stmt.target,)
    if isinstance(stmt, Unpack):
        return stmt.targets
    if isinstance(stmt, For):
        return (stmt.var,)
    return ()


def defined_syms(fn: Function) -> Iterator[Sym]:
    """Parameters, then every symbol an assignment, unpacking or loop header defines."""
    yield from fn.params
    for s in walk_stmts(fn.body):
        yield from stmt_targets(s)


def read_syms(expr: Expr) -> set[Sym]:
    """The symbols an expression reads."""
    out: set[Sym] = set()
    stack: list[Expr] = [expr]  # walk_expr's walk without a generator: every pass asks this
    pop, extend, add = stack.pop, stack.extend, out.add
    while stack:
        e = pop()
        kind = type(e)
        if kind is Var:
            add(e.sym)  # type: ignore[union-attr]  # the kind was just tested
        elif kind is OpCall or kind is Call:
            extend(e.args)  # type: ignore[union-attr]
    return out


def read_counts(expr: Expr, counts: dict[Sym, int] | None = None) -> dict[Sym, int]:
    """How often each symbol is read in expr, added into counts (a new dict when None)."""
    counts = {} if counts is None else counts
    get = counts.get
    stack: list[Expr] = [expr]  # walk_expr's walk without a generator: every pass asks this
    pop, extend = stack.pop, stack.extend
    while stack:
        e = pop()
        kind = type(e)
        if kind is Var:
            sym = e.sym  # type: ignore[union-attr]  # the kind was just tested
            counts[sym] = get(sym, 0) + 1
        elif kind is OpCall or kind is Call:
            extend(e.args)  # type: ignore[union-attr]
    return counts


def use_counts(body: Iterable[Stmt]) -> dict[Sym, int]:
    """How often each symbol is read in body, nested blocks included (one walk)."""
    counts: dict[Sym, int] = {}
    for s in _flat_stmts(body):
        kind: type = type(s)  # an assignment or expression statement (most of them): its one expression
        if kind is Assign or kind is Unpack:
            read_counts(s.value, counts)  # type: ignore[union-attr,arg-type]
        elif kind is ExprStmt:
            read_counts(s.expr, counts)  # type: ignore[union-attr]
        else:
            for e in stmt_exprs(s):
                read_counts(e, counts)
    return counts


def _flat_stmts(body: Iterable[Stmt]) -> Iterable[Stmt]:
    """walk_stmts(body); a lone statement without nested blocks as itself (analyses ask of one
    statement at a time, and a generator per question was most of the cost)."""
    if type(body) is tuple and len(body) == 1 and type(body[0]) not in _BLOCK_FIELDS:
        return body
    return walk_stmts(body)


def assign_counts(body: Iterable[Stmt]) -> dict[Sym, int]:
    """How often each symbol is the target of an assignment or an unpacking in body (one walk)."""
    counts: dict[Sym, int] = {}
    for s in walk_stmts(body):
        if isinstance(s, (Assign, Unpack)):
            for t in stmt_targets(s):
                counts[t] = counts.get(t, 0) + 1
    return counts


def rename(body: Iterable[Stmt], new: Callable[[Sym], Sym]) -> tuple[Stmt, ...]:
    """body with every symbol x replaced by new(x) (new returns x to keep it)."""
    from dataclasses import replace

    def expr(e: Expr) -> Expr:
        kind = type(e)
        if kind is Var:
            sym = new(e.sym)  # type: ignore[union-attr]  # the kind was just tested
            return e if sym is e.sym else Var(sym, e.span)  # type: ignore[union-attr]
        if kind is OpCall or kind is Call:
            return with_args(e, tuple([expr(a) for a in e.args]))  # type: ignore[union-attr,arg-type]
        return e

    out: list[Stmt] = []
    for s in body:
        if type(s) is Assign:  # most statements: built directly, or kept where nothing was renamed
            target, value = new(s.target), expr(s.value)
            if target is not s.target or value is not s.value:
                s = Assign(target, value, s.span)
        elif type(s) is ExprStmt:
            value = expr(s.expr)
            if value is not s.expr:
                s = ExprStmt(value, s.span)
        elif isinstance(s, Unpack):
            s = replace(s, targets=tuple(new(t) for t in s.targets), value=expr(s.value))
        elif isinstance(s, Return):
            s = replace(s, value=None if s.value is None else expr(s.value))
        elif isinstance(s, If):
            s = replace(s, cond=expr(s.cond), body=rename(s.body, new), orelse=rename(s.orelse, new))
        elif isinstance(s, For):
            s = replace(s, var=new(s.var), start=expr(s.start), stop=expr(s.stop), step=expr(s.step),
                        body=rename(s.body, new))
        elif isinstance(s, While):
            s = replace(s, cond=expr(s.cond), body=rename(s.body, new))
        out.append(s)
    return tuple(out)


def map_exprs(body: Iterable[Stmt], f: Callable[[Expr], Expr],
              drop: Callable[[Stmt], bool] | None = None) -> tuple[Stmt, ...]:
    """body with each statement's own expressions (a value, a condition, a loop's bounds) replaced
    by f of them, nested blocks included, and the statements `drop` selects left out. f is given
    whole expressions: it rewrites their operands itself."""
    from dataclasses import replace

    def block(stmts: Iterable[Stmt]) -> tuple[Stmt, ...]:
        return map_exprs(stmts, f, drop)

    out: list[Stmt] = []
    for s in body:
        if drop is not None and drop(s):
            continue
        if isinstance(s, (Assign, Unpack)):
            s = replace(s, value=f(s.value))
        elif isinstance(s, ExprStmt):
            s = replace(s, expr=f(s.expr))
        elif isinstance(s, Return):
            s = replace(s, value=None if s.value is None else f(s.value))
        elif isinstance(s, If):
            s = replace(s, cond=f(s.cond), body=block(s.body), orelse=block(s.orelse))
        elif isinstance(s, For):
            s = replace(s, start=f(s.start), stop=f(s.stop), step=f(s.step), body=block(s.body))
        elif isinstance(s, While):
            s = replace(s, cond=f(s.cond), body=block(s.body))
        out.append(s)
    return tuple(out)


@overload
def with_args(e: OpCall, args: tuple[Expr, ...]) -> OpCall: ...
@overload
def with_args(e: Call, args: tuple[Expr, ...]) -> Call: ...
@overload
def with_args(e: OpCall | Call, args: tuple[Expr, ...]) -> OpCall | Call: ...
def with_args(e: OpCall | Call, args: tuple[Expr, ...]) -> OpCall | Call:
    """e with operands `args`: e itself when they are its own operands, so a pass that rewrites
    nothing in a tree copies nothing (dataclasses.replace per node was a fifth of an emit)."""
    old = e.args
    if len(args) == len(old) and all(map(is_, args, old)):  # (map: no generator frame per node)
        return e
    if isinstance(e, OpCall):
        return OpCall(e.op, args, e.attrs, e.type, e.span)
    return Call(e.func, args, e.type, e.span)


def walk_expr(expr: Expr) -> Iterator[Expr]:
    """expr and every operand below it, depth first, in source order. An explicit stack: nested
    generators cost each node the depth of the tree, and a deep tree the recursion limit."""
    stack = [expr]
    pop, extend = stack.pop, stack.extend
    while stack:
        e = pop()
        yield e
        args = getattr(e, "args", None)
        if args:
            extend(reversed(args))


# ---------------------------------------------------------------- printing


def dump_module(module: Module) -> str:
    parts = [f"module {module.name}"]
    for name, value in module.constants:
        parts.append(f"const {name} = {value!r}")
    for fn in module.funcs + module.kernels:
        parts.append(dump_function(fn))
    return "\n".join(parts) + "\n"


def dump_function(fn: Function) -> str:
    params = ", ".join(f"{p}: {p.type}" for p in fn.params)
    lines = [f"{fn.kind} {fn.name}({params}) -> {fn.ret}:"]
    _dump_body(fn.body, 1, lines)
    return "\n".join(lines)


def _dump_body(body: tuple[Stmt, ...], depth: int, lines: list[str]) -> None:
    pad = "    " * depth
    if not body:
        lines.append(pad + "pass")
    for s in body:
        loc = f"  # line {s.span.line}"
        if isinstance(s, Assign):
            lines.append(f"{pad}{s.target}: {s.target.type} = {dump_expr(s.value)}{loc}")
        elif isinstance(s, Unpack):
            lines.append(f"{pad}{', '.join(map(str, s.targets))} = {dump_expr(s.value)}{loc}")
        elif isinstance(s, ExprStmt):
            lines.append(f"{pad}{dump_expr(s.expr)}{loc}")
        elif isinstance(s, If):
            lines.append(f"{pad}if {dump_expr(s.cond)}:{loc}")
            _dump_body(s.body, depth + 1, lines)
            lines.append(f"{pad}else:")
            _dump_body(s.orelse, depth + 1, lines)
        elif isinstance(s, For):
            kind = "static " if s.static else ""
            rng = ", ".join(dump_expr(e) for e in (s.start, s.stop, s.step))
            lines.append(f"{pad}{kind}for {s.var} in range({rng}):{loc}")
            _dump_body(s.body, depth + 1, lines)
        elif isinstance(s, While):
            lines.append(f"{pad}while {dump_expr(s.cond)}:{loc}")
            _dump_body(s.body, depth + 1, lines)
        elif isinstance(s, Return):
            val = "" if s.value is None else " " + dump_expr(s.value)
            lines.append(f"{pad}return{val}{loc}")
        else:
            lines.append(f"{pad}{type(s).__name__.lower()}{loc}")


def dump_expr(e: Expr) -> str:
    if isinstance(e, Const):
        return repr(e.value)
    if isinstance(e, Var):
        return str(e.sym)
    if isinstance(e, OpCall):
        items = [dump_expr(a) for a in e.args] + [f"{k}={v}" for k, v in e.attrs]
        return f"{e.op}({', '.join(items)})"
    if isinstance(e, Call):
        return f"{e.func}({', '.join(dump_expr(a) for a in e.args)})"
    raise TypeError(type(e))
