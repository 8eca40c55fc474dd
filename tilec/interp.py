"""A numpy interpreter of the typed IR: the oracle that needs no C++ compiler.

Runs a kernel block by block (or thread by thread for plain launches), taking
each op's behaviour from `ops/reference.py`, keyed like the op table. The
adjoint is interpreted from the IR the autodiff pass produces, so gradients
of compiled code and of this interpreter come from one derivation but two
independent executions. Kernels that need cooperating lanes are refused.

    python -m tilec.interp  FILE --kernel K --dim 4 ...   (see `tilec run --interpret`)
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Dict, Sequence, cast

import numpy as np

from . import ir
from .passes.autodiff import adjoint_kernel
from .codegen import analysis
from .ops import OPS
from .ops.reference import BINARY, IMPL, UNARY, npdtype
from .ops.reference_values import make_value
from .ir.structs import leaves
from .ir.types import ArrayT, Scalar, TileT, Type


Env = Dict[ir.Sym, Any]  # a frame: each symbol's current value (numpy scalars and arrays)


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    def __init__(self, value: Any):
        self.value = value


class Interpreter:
    def __init__(self, module: ir.Module):
        self.module = module
        self.funcs = {f.name: f for f in module.funcs}
        self.kernels = {k.name: k for k in module.kernels}
        # per-block state read by the op implementations
        self.tid: tuple[int, ...] = ()
        self.lane = 0
        self.nlanes = 1
        self.leader = True
        self.block_dim: int | None = 1  # None: a tiled kernel without a fixed block_dim
        self.tape: list[Any] = []

    # ------------------------------------------------------------ launches

    def launch(self, name: str, dim: int | Sequence[int], inputs: Sequence[Any], tiled: bool = True,
               adjoint: bool = False, adj_inputs: Sequence[Any] | None = None) -> None:
        kernel = self.kernels[name]
        if analysis.needs_lanes(kernel, self.funcs, tiled):
            raise NotImplementedError(f"{name}: kernels with cooperating lanes are not interpreted")
        grid = (dim,) if isinstance(dim, int) else tuple(dim)
        if analysis.tid_count(kernel) > len(grid):
            raise NotImplementedError(f"{name}: the lane from wp.tid() is not interpreted")
        fn, args = kernel, _struct_leaves(kernel, list(inputs))
        if adjoint:
            fn = adjoint_kernel(kernel, self.module)
            args += _struct_leaves(kernel, list(adj_inputs or ()))
        if len(args) != len(fn.params):
            raise TypeError(f"{name}: expects {len(fn.params)} arguments, got {len(args)}")
        self.block_dim = kernel.block_dim if tiled else 1
        for coords in itertools.product(*[range(n) for n in grid]):
            self.tid, self.tape = coords, []
            env = {p: self._bind(p.type, a) for p, a in zip(fn.params, args)}
            try:
                self.block(fn.body, env)
            except _Return:
                pass

    def _bind(self, t: Type, value: Any) -> Any:
        if isinstance(t, ArrayT):
            return value
        return make_value(t, value)

    # ------------------------------------------------------------ statements

    def block(self, body: tuple[ir.Stmt, ...], env: Env) -> None:
        for s in body:
            self.stmt(s, env)

    def stmt(self, s: ir.Stmt, env: Env) -> None:
        if isinstance(s, ir.Assign):
            env[s.target] = self.expr(s.value, env)
        elif isinstance(s, ir.Unpack):
            for t, v in zip(s.targets, self.expr(s.value, env)):
                env[t] = v
        elif isinstance(s, ir.ExprStmt):
            self.expr(s.expr, env)
        elif isinstance(s, ir.If):
            self.block(s.body if self.expr(s.cond, env) else s.orelse, env)
        elif isinstance(s, ir.For):
            start, stop, step = (int(self.expr(e, env)) for e in (s.start, s.stop, s.step))
            for i in range(start, stop, step):
                env[s.var] = np.int32(i)
                if not self.iteration(s.body, env):
                    break
        elif isinstance(s, ir.While):
            while self.expr(s.cond, env):
                if not self.iteration(s.body, env):
                    break
        elif isinstance(s, ir.Break):
            raise _Break()
        elif isinstance(s, ir.Continue):
            raise _Continue()
        elif isinstance(s, ir.Return):
            raise _Return(None if s.value is None else self.expr(s.value, env))

    def iteration(self, body: tuple[ir.Stmt, ...], env: Env) -> bool:
        """Runs one loop iteration; False when it ended with `break`."""
        try:
            self.block(body, env)
        except _Continue:
            pass
        except _Break:
            return False
        return True

    # ------------------------------------------------------------ expressions

    def expr(self, e: ir.Expr, env: Env) -> Any:
        if isinstance(e, ir.Const):
            return make_value(e.type, e.value)
        if isinstance(e, ir.Var):
            if e.sym not in env:  # locals start at zero, as the generated C++ declares them
                t = e.sym.type
                env[e.sym] = (np.zeros(cast(tuple[int, ...], t.shape), npdtype(t.dtype)) if isinstance(t, TileT)
                              else make_value(t, 0))  # a checked tile's shape is concrete
            return env[e.sym]
        args = [self.expr(a, env) for a in e.args]
        if isinstance(e, ir.Call):
            fn = self.funcs[e.func]
            operands = [(i, e.args[i]) for i in fn.byref]
            return self.call(fn, args, byref=[(fn.params[i], a.sym, env) for i, a in operands if isinstance(a, ir.Var)])
        return IMPL[e.op](self, e, args)

    def call(self, fn: ir.Function, args: Sequence[Any],
             byref: Sequence[tuple[ir.Sym, ir.Sym, Env]] = ()) -> Any:
        """byref: (param, caller's symbol, caller's env) of tiles passed by reference."""
        env = {p: (a if isinstance(p.type, (ArrayT, TileT)) else make_value(p.type, a)) for p, a in zip(fn.params, args)}
        result = None
        try:
            self.block(fn.body, env)
        except _Return as r:
            result = r.value
        for param, sym, caller_env in byref:
            caller_env[sym] = env[param]
        return result

    # ------------------------------------------------------------ helpers for op implementations

    def gather(self, value: Any, dtype: Any) -> Any:
        return np.full(self.block_dim, value, dtype)

    def scalar_function(self, name: str) -> Callable[..., Any]:
        """A Python callable for a builtin op name or a specialised func."""
        if name in BINARY:
            f = BINARY[name]  # numpy ufuncs and lambdas
            return lambda a, b: f(a, b)
        if name in UNARY:
            return UNARY[name]
        fn = self.funcs[name]

        def run(*xs: Any) -> Any:
            return self.call(fn, [npdtype(p.type)(x) if isinstance(p.type, Scalar) else x for p, x in zip(fn.params, xs)])

        return run


__all__ = ["Interpreter", "OPS"]


def _struct_leaves(kernel: ir.Function, values: list[Any]) -> list[Any]:
    """A kernel's source arguments as the leaf arguments its params are (ir/structs.py): a struct
    as any object with its fields as attributes (None: no adjoint), an array of structs as a numpy
    structured array (its fields' views)."""
    if not kernel.struct_params:
        return values
    if len(values) != len(kernel.struct_params):
        raise TypeError(f"{kernel.name}: expects {len(kernel.struct_params)} arguments, got {len(values)}")
    out: list[Any] = []
    for (name, t), value in zip(kernel.struct_params, values):
        flat = leaves(t)
        if flat is None:
            out.append(value)
            continue
        for path, lt in flat:
            leaf = value
            for part in path.split("."):
                if leaf is None:
                    break
                leaf = leaf[part] if isinstance(leaf, np.ndarray) else getattr(leaf, part)
            out.append(0 if leaf is None and not isinstance(lt, ArrayT) else leaf)
    return out
