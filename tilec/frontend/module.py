"""The module checker: checks every kernel and specialises the funcs they call.

A func is specialised once per (argument types, block_dim). Params annotated
`Any` take the call site's type; shape-annotated params (`tl.Tile[T, "M"]`)
first get one generic check of the body with symbolic extents, whose errors
name the variables, then unify with each call site.
"""
from __future__ import annotations

import libcst as cst

from .. import ir
from ..diagnostics import Diagnostics, Label
from ..ir.types import ArrayT, Scalar, TileT, describe, fmt_shape
from . import annotations as ann
from .check import FunctionChecker, Options
from .lower_call import Abort
from .parse import Parsed
from .resolve import Scope


class ModuleChecker:
    def __init__(self, parsed: Parsed, scope: Scope, diags: Diagnostics, options: Options):
        self.parsed = parsed
        self.scope = scope
        self.diags = diags
        self.options = options
        self.instances: dict = {}  # (name, types, block_dim) -> ir.Function
        self.order: list = []  # finished instances, callees first
        self.counts: dict = {}  # source name -> instances made
        self.failed: set = set()  # funcs whose generic check or signature failed
        self.generic_ok: dict = {}  # name -> bool
        self.stack: list = []  # funcs being checked (recursion detection)
        self.lane_funcs: dict = {}  # instance name -> uses lanes

    def run(self) -> ir.Module:
        kernels = []
        for name, fd in self.scope.kernels.items():
            param_types = self.signature(fd)
            if param_types is None:
                continue
            block_dim = fd.block_dim or self.options.block_dim
            checker = FunctionChecker(self, fd, param_types, block_dim, name)
            fn = checker.check()
            self.check_kernel_params(fd, fn)
            self.check_shared_budget(fn)
            kernels.append(fn)
        self.check_uncalled_funcs()
        constants = tuple(sorted((k, v) for k, v in self.scope.constants.items()))
        return ir.Module(self.parsed.name, self.parsed.filename, tuple(self.order), tuple(kernels), constants)

    # ------------------------------------------------------------ signatures

    def signature(self, fd) -> list | None:
        """Annotated parameter types (ann.ANY for Any), or None after a diagnostic."""
        types, ok = [], True
        node = fd.node
        extra = [node.params.star_arg, node.params.star_kwarg, *node.params.kwonly_params,
                 *node.params.posonly_params]
        for p in extra:
            if isinstance(p, cst.Param):
                self.diags.error("TC0401", "unsupported syntax: *args, **kwargs, keyword-only or "
                                 "positional-only parameters", self.parsed.span(p))
                ok = False
        for p in node.params.params:
            if p.annotation is None:
                self.diags.error("TC0404", f"parameter `{p.name.value}` of `{fd.name}` needs a type annotation",
                                 self.parsed.span(p.name))
                ok = False
                continue
            try:
                t = ann.annotation(p.annotation.annotation, self.scope)
            except ann.AnnotationError as e:
                self.diags.error("TC0409", f"parameter `{p.name.value}`: {e.message}", self.parsed.span(e.node))
                ok = False
                continue
            if fd.kind == "kernel" and not isinstance(t, (ArrayT, Scalar)):
                self.diags.error("TC0409", f"kernel parameter `{p.name.value}` must be an array or a scalar",
                                 self.parsed.span(p.annotation.annotation))
                ok = False
                continue
            types.append(t)
        return types if ok else None

    def check_kernel_params(self, fd, fn: ir.Function) -> None:
        pass

    def check_uncalled_funcs(self) -> None:
        """Funcs no kernel calls are still checked: their signature, and their body when its
        types are known without a call site. They are not emitted."""
        called = {key[0] for key in self.instances}
        for name, fd in self.scope.funcs.items():
            if name in called or name in self.generic_ok:
                continue
            declared = self.signature(fd)
            if declared is None or any(t == ann.ANY for t in declared):
                continue
            self.stack.append(name)
            try:
                generic = any(isinstance(t, TileT) and not t.is_concrete for t in declared)
                FunctionChecker(self, fd, declared, self.options.block_dim, name, generic=generic).check()
            except Abort:
                pass
            finally:
                self.stack.pop()

    def check_shared_budget(self, fn: ir.Function) -> None:
        shared = [(s, s.type) for s, where in fn.storage if where == "shared"]
        total = sum(t.nbytes for _, t in shared)
        if total > self.options.max_shared:
            parts = ", ".join(f"`{s}` {fmt_shape(t.shape)} {t.dtype} ({t.nbytes / 1024:g} KiB)" for s, t in shared)
            self.diags.error(
                "TC0109",
                f"kernel `{fn.source_name}` needs {total / 1024:g} KiB of shared memory, more than the "
                f"{self.options.max_shared / 1024:g} KiB budget: {parts}",
                fn.span, help="use register storage for some tiles, smaller tiles, or --max-shared")

    # ------------------------------------------------------------ specialisation

    def instantiate(self, name: str, args: list, block_dim: int, call_node, caller, arg_nodes=None):
        """The instance of func `name` for these argument types; raises Abort after a diagnostic."""
        fd = self.scope.funcs[name]
        span = caller.span(call_node)
        if name in self.stack:
            self.diags.error("TC0402", f"recursive call of `{name}`: tilec needs a static call graph", span)
            raise Abort()
        declared = self.signature(fd)
        if declared is None or name in self.failed:
            raise Abort()
        if len(declared) != len(args):
            self.diags.error("TC0408", f"{name}: expects {len(declared)} argument(s), got {len(args)}", span)
            raise Abort()
        if any(isinstance(t, TileT) and not t.is_concrete for t in declared):
            self.generic_check(name, fd, declared, block_dim)
        concrete = self.bind_params(name, fd, declared, args, call_node, caller, arg_nodes)
        key = (name, tuple(concrete), block_dim)
        if key in self.instances:
            fn = self.instances[key]
            if fn is None:
                raise Abort()
            return fn
        index = self.counts.get(name, 0)
        self.counts[name] = index + 1
        from ..naming import func_instance

        self.stack.append(name)
        self.instances[key] = None
        try:
            checker = FunctionChecker(self, fd, concrete, block_dim, func_instance(name, index))
            before = len(self.diags.items)
            fn = checker.check()
        finally:
            self.stack.pop()
        if len(self.diags.items) > before and self.diags.has_errors:
            self.instances[key] = None
            raise Abort()
        if name in self.scope.custom_adjoints:
            from dataclasses import replace

            fn = replace(fn, **self.custom_rules(name, fn, block_dim))
        self.instances[key] = fn
        self.lane_funcs[fn.name] = checker.lane_ops
        self.order.append(fn)
        return fn

    def custom_rules(self, name: str, fn: ir.Function, block_dim: int) -> dict:
        """@wp.func_grad of a func on scalars: one func per float parameter computing its adjoint
        contribution (the autodiff calls them instead of differentiating the body). Anything tilec
        cannot apply is recorded, and kernels reaching it get no adjoint (never a wrong one)."""
        from ..naming import func_instance
        from .resolve import FuncDef

        rules = self.scope.custom_adjoints[name]
        if "func_replay" in rules:
            return {"custom_adjoint": "func_replay"}
        if "func_grad" not in rules:
            return {}
        if any(not isinstance(p.type, Scalar) for p in fn.params) or isinstance(fn.ret, TileT):
            return {"custom_adjoint": "func_grad on tiles or arrays"}
        node = rules["func_grad"]
        gfd = FuncDef(node.name.value, node, "func")
        types = [p.type for p in fn.params] + ([fn.ret] if isinstance(fn.ret, Scalar) else [])
        if len(node.params.params) != len(types):
            self.diags.error("TC0408", f"@wp.func_grad `{gfd.name}` must take the {len(fn.params)} parameter(s) of "
                             f"`{name}` and then the adjoint of its result ({len(types)} in all)",
                             self.parsed.span(node.name))
            return {"custom_adjoint": "func_grad with a wrong signature"}
        names = []
        for k, p in enumerate(fn.params):
            if not p.type.is_float:
                names.append(None)
                continue
            index = self.counts.get(gfd.name, 0)
            self.counts[gfd.name] = index + 1
            try:
                g = FunctionChecker(self, gfd, types, block_dim, func_instance(gfd.name, index),
                                    adjoint_output=k).check()
            except Abort:
                return {"custom_adjoint": "func_grad that does not check"}
            self.order.append(g)
            names.append(g.name)
        return {"grad_funcs": tuple(names)}

    def generic_check(self, name: str, fd, declared: list, block_dim: int) -> None:
        if name in self.generic_ok:
            if not self.generic_ok[name]:
                raise Abort()
            return
        if any(t == ann.ANY for t in declared):
            self.generic_ok[name] = True
            return
        self.stack.append(name)
        before = len(self.diags.items)
        try:
            FunctionChecker(self, fd, declared, block_dim, name, generic=True).check()
        except Abort:
            pass
        finally:
            self.stack.pop()
        self.generic_ok[name] = len(self.diags.items) == before
        if not self.generic_ok[name]:
            raise Abort()

    def bind_params(self, name, fd, declared, args, call_node, caller, arg_nodes) -> list:
        """Concrete parameter types: Any takes the argument's type; shape variables unify."""
        bindings: dict = {}
        first_seen: dict = {}
        concrete = []
        params = fd.node.params.params
        for i, (want, (got, weak)) in enumerate(zip(declared, args)):
            pname = params[i].name.value
            where = caller.span(arg_nodes[i]) if arg_nodes else caller.span(call_node)
            if want == ann.ANY:
                concrete.append(got)
                continue
            if isinstance(want, TileT):
                if not isinstance(got, TileT) or got.ndim != want.ndim or got.dtype != want.dtype:
                    self._arg_error(name, pname, want, got, where)
                for var, extent in zip(want.shape, got.shape):
                    if isinstance(var, str):
                        if var in bindings and bindings[var] != extent:
                            prev_param, prev_span = first_seen[var]
                            self.diags.error(
                                "TC0101",
                                f"{name}: shape variable {var} is {bindings[var]} for `{prev_param}` but "
                                f"{extent} for `{pname}`", where, labels=(Label(prev_span, f"{var} = {bindings[var]} here"),))
                            raise Abort()
                        bindings[var] = extent
                        first_seen.setdefault(var, (pname, where))
                    elif var != extent:
                        self._arg_error(name, pname, want, got, where)
                concrete.append(got)
                continue
            if got != want:
                if isinstance(want, Scalar) and isinstance(got, Scalar) and weak is not None and (want.is_float or not got.is_float):
                    concrete.append(want)
                    continue
                self._arg_error(name, pname, want, got, where)
            concrete.append(want)
        return concrete

    def _arg_error(self, name, pname, want, got, where):
        self.diags.error("TC0201" if not isinstance(want, TileT) or not isinstance(got, TileT) or got.ndim == want.ndim else "TC0107",
                         f"{name}: parameter `{pname}` expects {describe(want)}, got {describe(got)}", where)
        raise Abort()
