"""Structuring passes for the adjoint: inline funcs, then remove jumps.

`inline_calls`: IR -> IR where a kernel calls no funcs. A func with a @wp.func_grad becomes a
`custom_call` op for the adjoint (lift_maps), whose rule calls the user's adjoint funcs (a `tile_map`
over it keeps the map, with the adjoint funcs in its `grads`); one with a @wp.func_replay becomes its
body and its replay joined by `replay_value` (`_expand_replay`). A callee body is
copied with fresh symbols inside a one-trip loop; its `return v` becomes an
assignment of the result and a `break`. A `tile_map` over a func whose body is
straight-line assignments and a `return expr` becomes the elementwise tree of that expression.

`eliminate_jumps`: IR -> IR without `break`, `continue` or `return` except a
final `if brk: break` closing each loop: jumps set flags and the statements
they would skip are guarded by those flags. Each loop body then runs straight
through, which is what the tape-based reverse sweep needs.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace

from .. import ir
from ..diagnostics import NotDifferentiable, Span
from ..ops import OPS
from ..ir.types import BOOL, INT32, ArrayT, Dim, MatT, Scalar, StructT, TileT, Type, VecT

Funcs = Mapping[str, ir.Function]  # the module's funcs by name
LoopFlags = tuple[ir.Sym, ir.Sym]  # a loop's (break, continue) flags


class _Fresh:
    """Fresh symbol ids, above every id in the function."""

    def __init__(self, fn: ir.Function) -> None:
        self.next = 1 + max([0] + [s.id for s in ir.defined_syms(fn)])

    def sym(self, name: str, t: Type) -> ir.Sym:
        self.next += 1
        return ir.Sym(name, self.next, t)


# ---------------------------------------------------------------- inlining


def inline_calls(fn: ir.Function, funcs: Funcs, lift_maps: bool = True) -> ir.Function:
    """lift_maps: also turn tile_map over funcs into elementwise trees (what the adjoint needs)."""
    fresh = _Fresh(fn)
    return replace(fn, body=_inline_block(fn.body, funcs, fresh, lift_maps))


def inline_tile_customs(fn: ir.Function, funcs: Funcs) -> ir.Function:
    """An adjoint kernel whose @wp.func_grad funcs over tiles are inlined: the forward value
    (`custom_call`) by the func's body, each contribution by its adjoint func's body (tile funcs
    are not separate functions on the GPU)."""
    def tiled(f: ir.Function) -> bool:
        return isinstance(f.ret, TileT) or any(isinstance(p.type, TileT) for p in f.params)

    def plain(s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "custom_call" and \
                tiled(funcs[s.value.attr("func")]):
            return replace(s, value=ir.Call(s.value.attr("func"), s.value.args, s.value.type, s.value.span))
        if isinstance(s, ir.If):
            return replace(s, body=tuple(map(plain, s.body)), orelse=tuple(map(plain, s.orelse)))
        if isinstance(s, (ir.For, ir.While)):
            return replace(s, body=tuple(map(plain, s.body)))
        return s

    return inline_calls(replace(fn, body=tuple(map(plain, fn.body))), funcs, lift_maps=False)


def _inline_block(body: Iterable[ir.Stmt], funcs: Funcs, fresh: _Fresh, lift_maps: bool = True) -> tuple[ir.Stmt, ...]:
    out: list[ir.Stmt] = []
    for s in body:
        out.extend(_inline_stmt(s, funcs, fresh, lift_maps))
    return tuple(out)


def _inline_stmt(s: ir.Stmt, funcs: Funcs, fresh: _Fresh, lift_maps: bool) -> list[ir.Stmt]:
    if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call):
        return _expand(s.value, s.target, funcs, fresh, lift_maps)
    if isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.Call):
        return _expand(s.expr, None, funcs, fresh, lift_maps)
    if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and lift_maps:
        return [replace(s, value=_lift_maps(s.value, funcs))]
    if isinstance(s, ir.If):
        return [replace(s, body=_inline_block(s.body, funcs, fresh, lift_maps),
                        orelse=_inline_block(s.orelse, funcs, fresh, lift_maps))]
    if isinstance(s, (ir.For, ir.While)):
        return [replace(s, body=_inline_block(s.body, funcs, fresh, lift_maps))]
    return [s]


def refuse_custom_adjoints(fn: ir.Function, funcs: Funcs) -> None:
    """A kernel reaching a func with a @wp.func_grad / @wp.func_replay gets no adjoint (never one that
    silently ignores the user's rule)."""
    for e in (x for s in ir.walk_stmts(fn.body) for top in ir.stmt_exprs(s) for x in ir.walk_expr(top)):
        names = [e.func] if isinstance(e, ir.Call) else (
            [e.attr("op")] if isinstance(e, ir.OpCall) and e.op in ("tile_map", "tile_reduce") else [])
        for name in names:
            callee = funcs.get(name)
            if callee is None:
                continue
            if callee.custom_adjoint is not None:
                raise NotDifferentiable(f"`{callee.source_name}` has a custom adjoint (@wp.{callee.custom_adjoint}) "
                                        "that tilec does not apply yet; no adjoint is built", e.span)
            if callee.grad_funcs is not None and isinstance(e, ir.OpCall) and e.op != "tile_map":
                raise NotDifferentiable(f"{e.op} over `{callee.source_name}`, which has a @wp.func_grad: the custom "
                                        "adjoint is not applied to reductions yet; no adjoint is built", e.span)
            refuse_custom_adjoints(callee, funcs)


def _expand(call: ir.Call, target: ir.Sym | None, funcs: Funcs, fresh: _Fresh, lift_maps: bool = True) -> list[ir.Stmt]:
    fn = funcs[call.func]
    if lift_maps and fn.replay_func is not None:
        return _expand_replay(call, target, funcs, fresh)
    if lift_maps and fn.grad_funcs is not None:  # for the adjoint: the user's rule, not the body
        value = ir.OpCall("custom_call", call.args, (("func", fn.name), ("grads", fn.grad_funcs)), fn.ret,
                          call.span)
        return [ir.Assign(target, value, call.span) if target is not None else ir.ExprStmt(value, call.span)]
    renames: dict[ir.Sym, ir.Sym] = {}
    out: list[ir.Stmt] = []
    rebound = set(ir.defined_syms(replace(fn, params=())))
    copy_back: list[ir.Stmt] = []
    for i, (p, a) in enumerate(zip(fn.params, call.args)):
        if isinstance(p.type, ArrayT) and isinstance(a, ir.Var) and p not in rebound:
            renames[p] = a.sym  # the caller's array itself: its adjoint array is the caller's too
            continue
        local = fresh.sym(f"{fn.source_name}_{p.name}", p.type)
        renames[p] = local
        out.append(ir.Assign(local, a, call.span))
        if i in fn.byref and isinstance(a, ir.Var):  # a tile passed by reference: copy the update back
            copy_back.append(ir.Assign(a.sym, ir.Var(local, call.span), call.span))
    body = _rename_block(fn.body, renames, fresh, fn.source_name)
    body = _inline_block(body, funcs, fresh, lift_maps)
    flags: list[ir.Sym] = []
    body = _returns_to_breaks(body, target, fresh, flags)
    if flags:  # a `return` inside a loop: set the flag, leave each loop, then the `_once` loop
        body = (ir.Assign(flags[0], _false(call.span), call.span),) + body
    once = fresh.sym("_once", INT32)
    one = ir.Const(1, INT32, call.span)
    zero = ir.Const(0, INT32, call.span)
    out.append(ir.For(once, zero, one, one, body, call.span, static=True))
    return out + copy_back


# ops a replay func may not hold: the adjoint's forward replay makes no array writes and no output
_REPLAY_EFFECTS = ("tile_store", "tile_atomic", "array_store", "array_atomic", "atomic_", "print")


def _expand_replay(call: ir.Call, target: ir.Sym | None, funcs: Funcs, fresh: _Fresh) -> list[ir.Stmt]:
    """@wp.func_replay, for the adjoint (Warp's semantics, measured on 1.19): the forward replay takes
    the replay func's values (its result and the tiles it updates by reference), the derivative is
    the func's own (its body's, or its @wp.func_grad rule's). The body and the replay func run on
    copies of the by-reference tiles; `replay_value` joins each pair of results."""
    fn = funcs[call.func]
    assert fn.replay_func is not None, fn.name  # (_expand's test)
    plain = {**funcs, fn.name: replace(fn, replay_func=None)}
    span = call.span
    out: list[ir.Stmt] = []
    pairs: list[tuple[ir.Sym, ir.Sym, ir.Sym]] = []  # (caller's symbol, body's copy, replay's copy) per by-reference tile
    body_args, replay_args = list(call.args), list(call.args)
    for i in fn.byref:
        a = call.args[i]
        if not isinstance(a, ir.Var):
            continue
        copies = (fresh.sym(f"{a.sym.name}_body", a.sym.type), fresh.sym(f"{a.sym.name}_replay", a.sym.type))
        out += [ir.Assign(c, a, span) for c in copies]
        body_args[i], replay_args[i] = ir.Var(copies[0], span), ir.Var(copies[1], span)
        pairs.append((a.sym, *copies))
    body = fresh.sym(f"{fn.source_name}_body", fn.ret) if target is not None else None
    replayed = fresh.sym(f"{fn.source_name}_replay", fn.ret) if target is not None else None
    out += _expand(replace(call, args=tuple(body_args)), body, plain, fresh)
    replay = _expand(ir.Call(fn.replay_func, tuple(replay_args), fn.ret, span), replayed, funcs, fresh)
    for e in (x for s in ir.walk_stmts(tuple(replay)) for top in ir.stmt_exprs(s) for x in ir.walk_expr(top)):
        if isinstance(e, ir.OpCall) and e.op.startswith(_REPLAY_EFFECTS):
            raise NotDifferentiable(f"the @wp.func_replay of `{fn.source_name}` makes `{e.op}`; tilec's adjoint "
                                    "replays no array writes or prints, so no adjoint is built", e.span)
    out += replay
    if target is not None and body is not None and replayed is not None:  # (the three are set together)
        pairs.append((target, body, replayed))
    for dest, b, r in pairs:
        value = ir.OpCall("replay_value", (ir.Var(b, span), ir.Var(r, span)), (), dest.type, span)
        out.append(ir.Assign(dest, value, span))
    return out


def resolve_replay_values(fn: ir.Function) -> ir.Function:
    """After autodiff: each `x = replay_value(body, replayed)` is `x = replayed` (a plain copy, which
    every backend emits for scalars, values and tiles alike)."""
    def block(body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for s in body:
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "replay_value":
                s = replace(s, value=s.value.args[1])
            elif isinstance(s, ir.If):
                s = replace(s, body=block(s.body), orelse=block(s.orelse))
            elif isinstance(s, (ir.For, ir.While)):
                s = replace(s, body=block(s.body))
            out.append(s)
        return tuple(out)

    return replace(fn, body=block(fn.body))


def _returns_to_breaks(body: Iterable[ir.Stmt], target: ir.Sym | None, fresh: _Fresh, flags: list[ir.Sym],
                       in_loop: bool = False) -> tuple[ir.Stmt, ...]:
    """An inlined body's returns become: assign the result, leave the `_once` loop. A return inside a
    loop also sets a flag (flags[0], made on first need), and each loop holding one is followed by
    `if flag: break`."""
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.Return):
            if target is not None and s.value is not None:
                out.append(ir.Assign(target, s.value, s.span))
            if in_loop:
                out.append(ir.Assign(flags[0], _true(s.span), s.span))
            out.append(ir.Break(s.span))
        elif isinstance(s, ir.If):
            out.append(replace(s, body=_returns_to_breaks(s.body, target, fresh, flags, in_loop),
                               orelse=_returns_to_breaks(s.orelse, target, fresh, flags, in_loop)))
        elif isinstance(s, (ir.For, ir.While)) and _find_return(s.body):
            if not flags:
                flags.append(fresh.sym("_ret", BOOL))
            out.append(replace(s, body=_returns_to_breaks(s.body, target, fresh, flags, True)))
            out.append(ir.If(_var(flags[0], s.span), (ir.Break(s.span),), (), s.span))
        else:
            out.append(s)
    return tuple(out)


def _rename_block(body: Iterable[ir.Stmt], renames: dict[ir.Sym, ir.Sym], fresh: _Fresh,
                  prefix: str) -> tuple[ir.Stmt, ...]:
    """body with the callee's symbols replaced by fresh ones (parameters already in renames)."""

    def new(x: ir.Sym) -> ir.Sym:
        if x not in renames:
            renames[x] = fresh.sym(f"{prefix}_{x.name}", x.type)
        return renames[x]

    return ir.rename(body, new)


def _lift_maps(e: ir.Expr, funcs: Funcs) -> ir.Expr:
    """tile_map(f, tiles...) with `def f(...): return expr` -> expr over the tiles."""
    if not isinstance(e, ir.OpCall):
        return e
    e = ir.with_args(e, tuple(_lift_maps(a, funcs) for a in e.args))
    if e.op == "tile_map" and e.attr("op") in OPS and OPS[e.attr("op")].elementwise:
        return replace(e, op=e.attr("op"), attrs=())  # tile_map(wp.exp, t) is exp(t)
    if e.op != "tile_map" or e.attr("op") not in funcs:
        return e
    fn = funcs[e.attr("op")]
    if fn.grad_funcs is not None:  # the user's rule mapped over the tiles, as Warp does (ops/adjoints.py)
        return replace(e, attrs=e.attrs + (("grads", fn.grad_funcs),))
    assert isinstance(e.type, TileT), e  # tile_map's result
    lifted = _lift_body(fn, e.args, e.type.shape, e.span, funcs)
    if not isinstance(lifted.type, TileT):
        raise NotDifferentiable(f"tile_map over `{fn.source_name}`: the result does not depend on the tiles", e.span)
    return lifted


class _Unliftable:
    """A local of a mapped func that is not elementwise: refused only if the result reads it."""

    def __init__(self, error: NotDifferentiable) -> None:
        self.error = error


def _lift_body(fn: ir.Function, args: tuple[ir.Expr, ...], shape: tuple[Dim, ...], span: Span,
               funcs: Funcs) -> ir.Expr:
    """fn's body over these operands: straight-line assignments (a struct func's fields:
    `out.x = ...`) substituted in order into its `return expression`."""
    stmts: list[ir.Stmt | None] = [*fn.body] or [None]
    *rest, last = stmts
    assigns = [s for s in rest if isinstance(s, ir.Assign)]
    if not isinstance(last, ir.Return) or last.value is None or len(assigns) != len(rest):
        raise NotDifferentiable(f"tile_map over `{fn.source_name}`: only funcs whose body is straight-line "
                                "assignments and a `return expression` are differentiated", span)
    env: dict[ir.Sym, ir.Expr | _Unliftable] = dict(zip(fn.params, args))
    for s in assigns:
        try:
            env[s.target] = _lift(s.value, env, shape, span, funcs)
        except NotDifferentiable as error:  # e.g. a struct constructor's zero vector, then overwritten
            env[s.target] = _Unliftable(error)
    return _lift(last.value, env, shape, span, funcs)


def _lift(e: ir.Expr, env: dict[ir.Sym, ir.Expr | _Unliftable], shape: tuple[Dim, ...], span: Span,
          funcs: Funcs) -> ir.Expr:
    if isinstance(e, ir.Var):
        if e.sym not in env:
            raise NotDifferentiable("tile_map func reads a variable it does not receive", span)
        value = env[e.sym]
        if isinstance(value, _Unliftable):
            raise value.error
        return value
    if isinstance(e, ir.Const):
        return e
    if isinstance(e, ir.OpCall) and OPS[e.op].elementwise:
        args = tuple(_lift(a, env, shape, span, funcs) for a in e.args)
        tiled = any(isinstance(a.type, TileT) for a in args)
        t: Type = e.type
        if tiled:
            assert isinstance(e.type, (Scalar, VecT, MatT, StructT)), e  # an element of the mapped func
            t = TileT(e.type, shape)
        if e.op == "cast" and tiled:  # float(x) of a tile element: the tile's conversion
            return ir.OpCall("tile_astype", args, (("dtype", e.type),), t, e.span)
        return replace(e, args=args, type=t)
    if isinstance(e, ir.Call) and e.func in funcs and funcs[e.func].grad_funcs is None:  # a func it calls
        return _lift_body(funcs[e.func], tuple(_lift(a, env, shape, span, funcs) for a in e.args), shape, span, funcs)
    raise NotDifferentiable("tile_map func uses an operation that is not elementwise", span)


# ---------------------------------------------------------------- straight-line SSA


def rename_straight_line(fn: ir.Function) -> ir.Function:
    """Each reassignment of a symbol assigned only at the top level of the body gets a fresh
    symbol, so no assignment overwrites a value the adjoint still needs (no tape for them)."""
    nested: set[ir.Sym] = set()
    for s in fn.body:
        for block in ir.child_blocks(s):
            nested |= set(_targets(block))
    fresh = _Fresh(fn)
    current: dict[ir.Sym, ir.Sym] = {}  # symbol -> its latest version
    original_of: dict[ir.Sym, ir.Sym] = {}  # version -> its symbol (a lookup, not a scan of `current` per assignment)
    seen: set[ir.Sym] = set(fn.params)
    out: list[ir.Stmt] = []
    for s in fn.body:
        s = ir.rename((s,), lambda x: current.get(x, x))[0] if current else s
        if isinstance(s, ir.Assign) and s.target not in nested:
            original = original_of.get(s.target, s.target)
            if original in seen:
                version = fresh.sym(original.name, original.type)
                current[original] = version
                original_of[version] = original
                s = ir.Assign(version, s.value, s.span)
            seen.add(original)
        out.append(s)
    return replace(fn, body=tuple(out))


def _targets(body: Iterable[ir.Stmt]) -> Iterator[ir.Sym]:
    for s in ir.walk_stmts(body):
        if isinstance(s, ir.Assign):
            yield s.target
        elif isinstance(s, ir.Unpack):
            yield from s.targets
        elif isinstance(s, ir.For):
            yield s.var


# ---------------------------------------------------------------- jumps


def eliminate_jumps(fn: ir.Function) -> ir.Function:
    fresh = _Fresh(fn)
    body, _ = _block(fn.body, None, fresh)
    if fn.kind == "kernel":
        ret = _find_return(fn.body)
        if ret:
            flag = fresh.sym("_ret", BOOL)
            body, _ = _block(_returns_to_flag(fn.body, flag), None, fresh)
            body = (ir.Assign(flag, _false(fn.span), fn.span),) + body
    return replace(fn, body=body)


def _find_return(body: Iterable[ir.Stmt]) -> bool:
    return any(isinstance(s, ir.Return) for s in ir.walk_stmts(body))


def _returns_to_flag(body: Iterable[ir.Stmt], flag: ir.Sym) -> tuple[ir.Stmt, ...]:
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.Return):
            out.append(ir.Assign(flag, _true(s.span), s.span))
        elif isinstance(s, ir.If):
            out.append(replace(s, body=_returns_to_flag(s.body, flag), orelse=_returns_to_flag(s.orelse, flag)))
        elif isinstance(s, (ir.For, ir.While)):
            inner = _returns_to_flag(s.body, flag)
            if inner != s.body:
                # leave the loop too: `if ret: break` after each statement that may set it
                inner = inner + (ir.If(_var(flag, s.span), (ir.Break(s.span),), (), s.span),)
            out.append(replace(s, body=inner))
        else:
            out.append(s)
    return _guard_after_flag(tuple(out), flag)


def _guard_after_flag(body: tuple[ir.Stmt, ...], flag: ir.Sym) -> tuple[ir.Stmt, ...]:
    out: list[ir.Stmt] = []
    for i, s in enumerate(body):
        out.append(s)
        if _sets(s, flag) and i + 1 < len(body):
            rest = _guard_after_flag(body[i + 1:], flag)
            out.append(ir.If(_not(_var(flag, s.span)), rest, (), s.span))
            return tuple(out)
    return tuple(out)


def _sets(s: ir.Stmt, flag: ir.Sym) -> bool:
    return any(isinstance(x, ir.Assign) and x.target == flag for x in ir.walk_stmts((s,)))


def _block(body: Iterable[ir.Stmt], loop: LoopFlags | None, fresh: _Fresh) -> tuple[tuple[ir.Stmt, ...], bool]:
    """(new body, may_jump): jumps of the enclosing loop `loop` = (brk, cont) become flag writes."""
    out: list[ir.Stmt] = []
    body = tuple(body)
    for i, s in enumerate(body):
        new, jumps = _stmt(s, loop, fresh)
        out.extend(new)
        if jumps and i + 1 < len(body):
            rest, _ = _block(body[i + 1:], loop, fresh)
            assert loop is not None, s  # jumps leave a loop (the checker refuses them outside one)
            brk, cont = loop
            live = _not(ir.OpCall("or_", (_var(brk, s.span), _var(cont, s.span)), (), BOOL, s.span))
            out.append(ir.If(live, rest, (), s.span))
            return tuple(out), True
        if jumps:
            return tuple(out), True
    return tuple(out), False


def _stmt(s: ir.Stmt, loop: LoopFlags | None, fresh: _Fresh) -> tuple[list[ir.Stmt], bool]:
    if isinstance(s, ir.Break):
        assert loop is not None, s  # the checker refuses break/continue outside a loop
        return [ir.Assign(loop[0], _true(s.span), s.span)], True
    if isinstance(s, ir.Continue):
        assert loop is not None, s
        return [ir.Assign(loop[1], _true(s.span), s.span)], True
    if isinstance(s, ir.If):
        body, j1 = _block(s.body, loop, fresh)
        orelse, j2 = _block(s.orelse, loop, fresh)
        return [replace(s, body=body, orelse=orelse)], j1 or j2
    if isinstance(s, (ir.For, ir.While)):
        brk, cont = fresh.sym("_brk", BOOL), fresh.sym("_cont", BOOL)
        body, _ = _block(s.body, (brk, cont), fresh)
        uses = any(isinstance(x, (ir.Break, ir.Continue)) for x in _same_loop(s.body))
        if not uses:
            return [replace(s, body=body)], False
        reset = ir.Assign(cont, _false(s.span), s.span)
        close = ir.If(_var(brk, s.span), (ir.Break(s.span),), (), s.span)
        loop_stmt = replace(s, body=(reset,) + body + (close,))
        return [ir.Assign(brk, _false(s.span), s.span), loop_stmt], False
    return [s], False


def _same_loop(body: Iterable[ir.Stmt]) -> Iterator[ir.Stmt]:
    """Statements of a loop body, not descending into nested loops."""
    for s in body:
        yield s
        if isinstance(s, ir.If):
            yield from _same_loop(s.body)
            yield from _same_loop(s.orelse)


def _var(sym: ir.Sym, span: Span) -> ir.Expr:
    return ir.Var(sym, span)


def _true(span: Span) -> ir.Expr:
    return ir.Const(True, BOOL, span)


def _false(span: Span) -> ir.Expr:
    return ir.Const(False, BOOL, span)


def _not(e: ir.Expr) -> ir.Expr:
    return ir.OpCall("not_", (e,), (), BOOL, e.span)
