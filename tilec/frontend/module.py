"""The module checker: checks every kernel and specialises the funcs they call.

A func is specialised once per (argument types, block_dim). Params annotated
`Any` take the call site's type; shape-annotated params (`tl.Tile[T, "M"]`)
first get one generic check of the body with symbolic extents, whose errors
name the variables, then unify with each call site.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, NoReturn, cast

import libcst as cst

from .. import ir, naming
from ..diagnostics import Diagnostics, Label, Span
from ..ir.types import (NONE, ArrayT, Dim, GridQueryT, MatT, Scalar, StructT, TileT, Type, VecT, describe, texture_ndim,
                        tuple_items)
from . import annotations as ann
from . import generics, native_funcs, warp_library
from .check import ARRAY_ADJOINTS, FunctionChecker, Options
from .lower_call import Abort
from .lowering_host import LoweringHost
from .parse import Parsed
from .resolve import FuncDef, Scope
from .structs import array_of_array_structs
from .values_only import values_only_body

Declared = generics.Param  # a parameter's annotation: a type, Any, array(Any), tuple[T, ...]
# (func name or nested func key, argument types, block_dim[, struct field path]) of a func instance
InstanceKey = tuple[object, ...]


def block_dims_of(fd: FuncDef, default: int) -> list[int]:
    """A kernel's block_dims: its decorator's, else the `block_dim=` constants of its launches in
    the file (one instance each), else the command line's (`--block-dim`, 256 by default)."""
    if fd.block_dim:
        return [fd.block_dim]
    return list(fd.launch_block_dims) or [default]


class ModuleChecker:
    def __init__(self, parsed: Parsed, scope: Scope, diags: Diagnostics, options: Options) -> None:
        self.parsed = parsed
        self.scope = scope
        self.diags = diags
        self.options = options
        self.instances: dict[InstanceKey, ir.Function | None] = {}  # (name, types, block_dim) -> ir.Function
        self.order: list[ir.Function] = []  # finished instances, callees first
        self.counts: dict[str, int] = {}  # source name -> instances made
        self.failed: set[object] = set()  # funcs whose generic check or signature failed
        self.generic_ok: dict[object, bool] = {}  # name -> bool
        self.stack: list[str] = []  # funcs being checked (recursion detection)
        self.lane_funcs: dict[str, bool] = {}  # instance name -> uses lanes
        self.values_only_instances: dict[str, ir.Function] = {}  # instance name -> its twin without effects
        self.natives: dict[int, ir.NativeFunc] = {}  # id of a @wp.func_native def -> its snippet's function
        self.kernel_errors: list[tuple[str, Span]] = []  # (instance name, span) of kernels whose check reported errors
        self.grad_calls = False  # some function takes wp.grad(f)(x): passes/grad_calls.py has work
        self.not_compiled: list[tuple[str, Span, str]] = []  # (kernel, span, why): generic kernels without overloads

    def run(self) -> ir.Module:
        kernels: list[ir.Function] = []
        for name, fd in self.scope.kernels.items():
            param_types = self.signature(fd)
            if param_types is None:
                continue
            block_dims = block_dims_of(fd, self.options.block_dim)
            for base, types in self.kernel_overloads(name, fd, param_types):
                for block_dim in block_dims:
                    instance = base if len(block_dims) == 1 else naming.block_dim_instance(base, block_dim)
                    checker = FunctionChecker(self, fd, types, block_dim, instance)
                    before, errors_before = len(self.diags.items), self.diags.errors_reported
                    fn = checker.check()
                    if instance != name:
                        fn = dataclasses.replace(fn, launch_name=name)
                    self.note_instance(before, instance, fd, block_dim if len(block_dims) > 1 else None,
                                       types if base != name else ())
                    if self.diags.errors_reported > errors_before:
                        self.kernel_errors.append((instance, fn.span))
                    self.check_kernel_params(fd, fn)
                    kernels.append(fn)
        self.check_uncalled_funcs()
        constants = tuple(sorted((k, v) for k, v in self.scope.constants.items()))
        not_compiled = tuple(sorted((name, span.line, why) for name, span, why in self.not_compiled))
        natives = tuple(sorted(self.natives.values(), key=lambda n: n.name))
        return ir.Module(self.parsed.name, self.parsed.filename, tuple(self.order), tuple(kernels), constants,
                         not_compiled, natives)

    # ------------------------------------------------------------ signatures

    def signature(self, fd: FuncDef) -> list[Declared] | None:
        """Annotated parameter types (ann.ANY for Any), or None after a diagnostic."""
        types: list[Declared] = []
        ok = True
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
                t = generics.param_annotation(p.annotation.annotation, fd.scope or self.scope)
            except ann.AnnotationError as e:
                unknown = (fd.scope or self.scope).unbrought.get(e.node.value) if isinstance(e.node, cst.Name) else None
                self.diags.error("TC0409", f"parameter `{p.name.value}`: {e.message}", self.parsed.span(e.node),
                                 help=unknown)
                ok = False
                continue
            if fd.kind != "kernel" and isinstance(t, ann.IndexedT):
                self.diags.error("TC0409", f"parameter `{p.name.value}`: an indexed array is a kernel parameter "
                                 "only; tilec does not pass one to a func", self.parsed.span(p.annotation.annotation),
                                 help="read its elements in the kernel and pass the values")
                ok = False
                continue
            unsupported = array_of_array_structs(t)
            if unsupported:  # Warp takes it; tilec's field views cannot hold an array per element
                self.diags.error("TC0409", f"parameter `{p.name.value}`: {unsupported} by tilec",
                                 self.parsed.span(p.annotation.annotation),
                                 help="pass the held arrays as parameters of their own")
                ok = False
                continue
            if fd.kind == "kernel" and (tuple_items(t) is not None or isinstance(t, generics.VariadicTuple)):
                self.diags.error("TC0409", f"kernel parameter `{p.name.value}` cannot be a tuple (Warp launches "
                                 "kernels with arrays, scalars, value types and structs)",
                                 self.parsed.span(p.annotation.annotation), help="pass its items as parameters")
                ok = False
                continue
            if fd.kind == "kernel" and not isinstance(t, (ArrayT, Scalar, VecT, MatT, StructT, ann.IndexedT)) and \
                    (not generics.is_generic(t) or t == generics.ANY_FUNCTION or isinstance(t, GridQueryT)):
                self.diags.error("TC0409", f"kernel parameter `{p.name.value}` must be an array, a scalar, a "
                                 "value type or a struct" + (" (a `wp.Function` parameter is a func's, as in Warp)"
                                                             if t == generics.ANY_FUNCTION else ""),
                                 self.parsed.span(p.annotation.annotation))
                ok = False
                continue
            types.append(t)
        return types if ok else None

    def note_instance(self, before: int, name: str, fd: FuncDef, block_dim: int | None = None,
                      types: Sequence[Declared] = ()) -> None:
        """Names the instantiation in the diagnostics its check added (a nested kernel is checked
        once per binding, overload and block_dim, and an error may hold for one of them only)."""
        bindings = fd.bindings + ((("block_dim", block_dim),) if block_dim is not None else ())
        params = [p.name.value for p in fd.node.params.params]
        values = ", ".join([f"{k} = {v!r}" for k, v in bindings] + [f"{p}: {t}" for p, t in zip(params, types)])
        if not values:
            return
        for i in range(before, len(self.diags.items)):
            d = self.diags.items[i]
            self.diags.items[i] = dataclasses.replace(d, notes=d.notes + (f"in kernel `{name}` ({values})",))

    def kernel_overloads(self, name: str, fd: FuncDef, declared: list[Declared]) -> list[tuple[str, list[Declared]]]:
        """[(instance name, concrete parameter types)]: the kernel itself, or one per overload
        of a generic kernel (generics.py); a generic kernel without one gets a diagnostic."""
        if not any(generics.is_generic(t) for t in declared):
            return [(name, declared)]
        params = [p.name.value for p in fd.node.params.params]
        out: list[tuple[str, list[Declared]]] = []
        seen: set[tuple[Declared, ...]] = set()
        for span, given in fd.overloads:
            types = self.overload_types(fd, declared, params, span, given)
            if types is not None and tuple(types) not in seen:
                seen.add(tuple(types))
                out.append((f"{name}__{generics.instance_suffix(declared, types)}", types))
        if not fd.overloads:  # as a C++ template never instantiated: no code, and said so
            first = next(p for p, t in zip(params, declared) if generics.is_generic(t))
            message = (f"generic kernel `{fd.name}` has no overload in this file: parameter `{first}` is `Any`; "
                       "it is not compiled")
            span = self.parsed.span(fd.node.name)
            self.diags.error("TC0436", message, span, severity="warning",
                             help=f"declare its types with wp.overload({fd.name}, [...]) or an @wp.overload stub; "
                             "tilec compiles one instance per overload")
            self.not_compiled.append((name, span, message))
        return out

    def overload_types(self, fd: FuncDef, declared: list[Declared], params: list[str], span: Span,
                       given: dict[str, cst.BaseExpression]) -> list[Declared] | None:
        scope = fd.scope or self.scope
        types: list[Declared] = []
        unknown = [k for k in given if not k.startswith("#") and k not in params]
        if unknown or len([k for k in given if k.startswith("#")]) > len(params):
            what = f"has no parameter `{unknown[0]}`" if unknown else f"takes {len(params)} parameter(s)"
            self.diags.error("TC0436", f"overload of `{fd.name}`: the kernel {what}", span)
            return None
        for i, (pname, want) in enumerate(zip(params, declared)):
            node = given.get(pname, given.get(f"#{i}"))
            if node is None:
                t = want
            else:
                try:
                    t = generics.param_annotation(node, scope)
                except ann.AnnotationError as e:
                    self.diags.error("TC0409", f"overload of `{fd.name}`, parameter `{pname}`: {e.message}",
                                     self.parsed.span(e.node))
                    return None
            where = self.parsed.span(node) if node is not None else span
            if generics.is_generic(t):
                self.diags.error("TC0436", f"overload of `{fd.name}` leaves parameter `{pname}` generic", where)
                return None
            unsupported = array_of_array_structs(t)
            if unsupported:
                self.diags.error("TC0409", f"overload of `{fd.name}`, parameter `{pname}`: {unsupported} by tilec",
                                 where)
                return None
            if not generics.accepts(want, t):
                self.diags.error("TC0201", f"overload of `{fd.name}`: parameter `{pname}` is declared "
                                 f"{describe(want) if not generics.is_generic(want) else want}, the overload "
                                 f"gives {describe(t)}", where)
                return None
            types.append(t)
        return types

    def check_kernel_params(self, fd: FuncDef, fn: ir.Function) -> None:
        pass

    def check_uncalled_funcs(self) -> None:
        """Funcs no kernel calls are still checked: their signature, and their body when its
        types are known without a call site. They are not emitted."""
        called = {key[0] for key in self.instances}
        for name, fd in list(self.scope.funcs.items()):
            if name in called or name in self.generic_ok or fd.origin is not None:
                continue  # (a func imported from another file is checked where a kernel calls it)
            declared = self.signature(fd)
            if declared is None or any(generics.is_generic(t) for t in declared):
                continue
            self.stack.append(name)
            try:
                generic = any(isinstance(t, TileT) and not t.is_concrete for t in declared)
                FunctionChecker(self, fd, declared, self.options.block_dim, name, generic=generic).check()
            except Abort:
                pass
            finally:
                self.stack.pop()

    # ------------------------------------------------------------ specialisation

    def instantiate(self, name: str, args: list[tuple[Type, object]], block_dim: int, call_node: cst.CSTNode,
                    caller: LoweringHost, arg_nodes: Sequence[cst.CSTNode] | None = None,
                    project: str | None = None) -> ir.Function:
        """The instance of func `name` for these argument types; raises Abort after a diagnostic.
        project: for a func returning a struct, the field path this instance returns."""
        found = self.overload_for(caller.scope, name, warp_library.func_def(caller.scope, name), args)  # a nested kernel sees the funcs defined beside it
        span = caller.span(call_node)
        if found is None:
            self.no_overload(caller.scope, name, args, span)
            raise Abort()
        fd = found
        fkey = fd.key or fd.name  # the def's own name: a factory's `func` parameter names a different def per binding
        if name in self.stack:
            self.diags.error("TC0402", f"recursive call of `{name}`: tilec needs a static call graph", span)
            raise Abort()
        declared = self.signature(fd)
        if declared is None or fkey in self.failed:
            raise Abort()
        if len(declared) != len(args):
            self.diags.error("TC0408", f"{name}: expects {len(declared)} argument(s), got {len(args)}", span)
            raise Abort()
        if any(isinstance(t, TileT) and not t.is_concrete for t in declared):
            self.generic_check(name, fd, declared, block_dim)
        concrete = self.bind_params(name, fd, declared, args, call_node, caller, arg_nodes)
        key = (fkey, tuple(concrete), block_dim) + ((project,) if project is not None else ())
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
            if fd.library:  # its nodes are placed at the user's call (warp_library.py)
                checker.parsed = warp_library.seen_from(self.parsed, span)
            elif fd.origin is not None:  # imported from another file (imports.py): placed at the call too
                checker.parsed = warp_library.CallSiteParsed(fd.origin, self.parsed, span)
            checker.project = project
            before, errors_before = len(self.diags.items), self.diags.errors_reported
            try:
                fn = checker.check()
            finally:
                if any(generics.is_generic(t) for t in declared):
                    self.label_call_site(before, name, fd, declared, concrete, span)
        finally:
            self.stack.pop()
        if self.diags.errors_reported > errors_before:  # (an instance failing as another did adds no new item)
            self.instances[key] = None
            raise Abort()
        if fd.name in (fd.scope or self.scope).custom_adjoints:  # by the def's own name (not an alias)
            from dataclasses import replace

            fn = replace(fn, **self.custom_rules(name, fd, fn, block_dim))
        self.instances[key] = fn
        self.lane_funcs[fn.name] = checker.lane_ops
        self.order.append(fn)
        return fn

    def native(self, node: cst.FunctionDef, scope: Scope, call_span: Span) -> ir.NativeFunc:
        """The function of the @wp.func_native def `node` (native_funcs.py), made once; raises
        native_funcs.NativeError."""
        made = self.natives.get(id(node))
        if made is None:
            taken = {n.name for n in self.natives.values()}
            name = node.name.value
            index = 1
            while name in taken:
                name, index = f"{node.name.value}_{index}", index + 1
            at = self.parsed.span(node.name) if id(node.name) in self.parsed.positions() else call_span
            made = self.natives[id(node)] = native_funcs.native_func(node, scope, name, at)
        return made

    def values_only(self, fn: ir.Function, replaces: bool) -> ir.Function | ir.Stmt:
        """The twin of instance `fn` without its effects (values_only.py), made once, or the statement
        that keeps fn from having one. `replaces`: fn's caller calls the twin only (an item of several
        values that is not the last), so fn itself is not emitted."""
        twin = self.values_only_instances.get(fn.name)
        if twin is not None:
            return twin
        funcs = {f.name: f for f in self.order}
        body = values_only_body(fn, funcs, lambda callee: _made(self.values_only(callee, False)))
        if not isinstance(body, tuple):
            return body
        index = self.counts.get(fn.source_name, 0)
        self.counts[fn.source_name] = index + 1
        twin = dataclasses.replace(fn, name=naming.func_instance(fn.source_name, index), body=body)
        self.values_only_instances[fn.name] = twin
        self.lane_funcs[twin.name] = self.lane_funcs.get(fn.name, False)
        at = self.order.index(fn)  # beside fn: after every func either calls
        if replaces:
            self.order[at] = twin
        else:
            self.order.insert(at + 1, twin)
        return twin

    def overload_for(self, scope: Scope, name: str, fd: FuncDef, args: list[tuple[Type, object]]) -> FuncDef | None:
        """The def of a func defined more than once (Warp's overloading by redefinition) whose
        parameters take these argument types, the latest first; None when none does; `fd` for a
        func defined once (its check reports a mismatch)."""
        defs = scope.func_overloads.get(name, [])
        if fd not in defs or len(defs) < 2:  # a nested func of the same name hides the module's overloads
            return fd
        for candidate in reversed(defs):
            declared = self.signature(candidate)
            if declared is not None and len(declared) == len(args) and all(
                    generics.accepts(want, got) or (isinstance(want, TileT) and isinstance(got, TileT)
                                                     and want.dtype == got.dtype)
                    for want, (got, _) in zip(declared, args)):
                return candidate
        return None

    def no_overload(self, scope: Scope, name: str, args: list[tuple[Type, object]], span: Span) -> None:
        """`no overload of f takes (types)`, each definition listed as a note, as a C++ compiler does."""
        code = self.parsed.tree.code_for_node
        got = ", ".join(_spelled(t, weak is not None) for t, weak in args)
        notes = []
        for candidate in scope.func_overloads[name]:
            params = ", ".join(" ".join(code(p).split()).rstrip(",") for p in candidate.node.params.params)
            line = self.parsed.positions()[id(candidate.node.name)][0]
            notes.append(f"candidate (line {line}): {name}({params})")
        self.diags.error("TC0408", f"no overload of `{name}` takes ({got})", span, notes=tuple(notes))

    def label_call_site(self, before: int, name: str, fd: FuncDef, declared: list[Declared], concrete: list[Type],
                        span: Span) -> None:
        """Errors in a generic func's body hold for one instantiation: point at the call that made it."""
        params = [p.name.value for p in fd.node.params.params]
        typed = ", ".join(f"{p}: {t}" for p, want, t in zip(params, declared, concrete) if generics.is_generic(want))
        for i in range(before, len(self.diags.items)):
            d = self.diags.items[i]
            self.diags.items[i] = dataclasses.replace(
                d, labels=d.labels + (Label(span, f"`{name}` instantiated here with {typed}"),))

    def custom_rules(self, name: str, fd: FuncDef, fn: ir.Function, block_dim: int) -> dict[str, Any]:
        """@wp.func_grad of a func on scalars: one func per float parameter computing its adjoint
        contribution (the autodiff calls them instead of differentiating the body). Anything tilec
        cannot apply is recorded, and kernels reaching it get no adjoint (never a wrong one)."""
        from ..naming import func_instance
        from .resolve import FuncDef

        rules = (fd.scope or self.scope).custom_adjoints[fd.name]
        replay: dict[str, Any] = {}
        if "func_replay" in rules:  # with a func_grad too: the replay's value, the rule's adjoint
            replay = self.replay_rule(name, fn, rules["func_replay"], block_dim, fd.scope)
            if "custom_adjoint" in replay or "func_grad" not in rules:
                return replay
        if "func_grad" not in rules:
            return {}
        if fn.byref:
            return {"custom_adjoint": "func_grad on a func that updates a tile argument in place"}
        if any(not isinstance(p.type, (Scalar, TileT, ArrayT)) for p in fn.params):
            return {"custom_adjoint": "func_grad on these parameter types"}
        if any(isinstance(p.type, (TileT, ArrayT)) and not isinstance(p.type.dtype, Scalar) for p in fn.params):
            return {"custom_adjoint": "func_grad on tiles or arrays of vectors, matrices or structs"}
        arrays = [p for p in fn.params if isinstance(p.type, ArrayT) and _float_elements(p.type)]
        if arrays and not isinstance(fn.ret, (Scalar, TileT, VecT, MatT)):
            return {"custom_adjoint": "func_grad on arrays of a func without a result"}
        node = rules["func_grad"]
        gfd = FuncDef(node.name.value, node, "func", scope=fd.scope)  # a nested rule sees the func's bindings
        types = [p.type for p in fn.params] + ([fn.ret] if isinstance(fn.ret, (Scalar, TileT, VecT, MatT)) else [])
        if len(node.params.params) != len(types):
            self.diags.error("TC0408", f"@wp.func_grad `{gfd.name}` must take the {len(fn.params)} parameter(s) of "
                             f"`{name}` and then the adjoint of its result ({len(types)} in all)",
                             self.parsed.span(node.name))
            return {"custom_adjoint": "func_grad with a wrong signature"}
        if not self.custom_params_match("func_grad", name, gfd, types):
            return {"custom_adjoint": "func_grad with a wrong signature"}
        names: list[str | None] = []
        array_grad = None
        if arrays:  # one instance adds into every array parameter's adjoint
            index = self.counts.get(gfd.name, 0)
            self.counts[gfd.name] = index + 1
            try:
                g = FunctionChecker(self, gfd, types, block_dim, func_instance(gfd.name, index),
                                    adjoint_output=ARRAY_ADJOINTS).check()
            except Abort:
                return {"custom_adjoint": "func_grad that does not check"}
            self.order.append(g)
            array_grad = g.name
        for k, p in enumerate(fn.params):
            if isinstance(p.type, ArrayT):
                names.append(array_grad if p in arrays else None)
                continue
            if not _float_elements(p.type):
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
        return {"grad_funcs": tuple(names), **replay}

    def custom_params_match(self, attr: str, name: str, cfd: FuncDef, types: list[Type]) -> bool:
        """A custom adjoint's annotations agree with the types it is checked with (Warp looks the
        func up by them and refuses a mismatch); `Any` takes any type."""
        declared = self.signature(cfd)
        if declared is None:
            return False
        ok = True
        for p, want, got in zip(cfd.node.params.params, declared, types):
            if generics.is_generic(want) or _same_kind(want, got):
                continue
            assert p.annotation is not None, p  # (signature() refuses a parameter without one)
            self.diags.error("TC0408", f"@wp.{attr} `{cfd.name}`: parameter `{p.name.value}` is {describe(want)}, "
                             f"but `{name}` gives {describe(got)} there", self.parsed.span(p.annotation.annotation))
            ok = False
        return ok

    def replay_rule(self, name: str, fn: ir.Function, node: cst.FunctionDef, block_dim: int,
                    scope: Scope | None = None) -> dict[str, Any]:
        """@wp.func_replay: the replay func, checked with the func's parameter types, gives the values
        the adjoint's forward replay uses: its result (a scalar, value or tile) and the tiles it updates
        by reference (structure._expand_replay)."""
        from ..naming import func_instance
        from .resolve import FuncDef

        if not isinstance(fn.ret, (Scalar, TileT, VecT, MatT)) and fn.ret != NONE:
            return {"custom_adjoint": f"func_replay of a func returning {describe(fn.ret)}"}
        rfd = FuncDef(node.name.value, node, "func", scope=scope)
        if len(node.params.params) != len(fn.params):
            self.diags.error("TC0408", f"@wp.func_replay `{rfd.name}` must take the {len(fn.params)} parameter(s) of "
                             f"`{name}`", self.parsed.span(node.name))
            return {"custom_adjoint": "func_replay with a wrong signature"}
        if not self.custom_params_match("func_replay", name, rfd, [p.type for p in fn.params]):
            return {"custom_adjoint": "func_replay with a wrong signature"}
        index = self.counts.get(rfd.name, 0)
        self.counts[rfd.name] = index + 1
        try:
            r = FunctionChecker(self, rfd, [p.type for p in fn.params], block_dim, func_instance(rfd.name, index)).check()
        except Abort:
            return {"custom_adjoint": "func_replay that does not check"}
        if r.ret != fn.ret:
            self.diags.error("TC0408", f"@wp.func_replay `{rfd.name}` must return what `{name}` returns "
                             f"({describe(fn.ret)}), not {describe(r.ret)}", self.parsed.span(node.name))
            return {"custom_adjoint": "func_replay with a wrong signature"}
        self.order.append(r)
        return {"replay_func": r.name}

    def generic_check(self, name: str, fd: FuncDef, declared: list[Declared], block_dim: int) -> None:
        gkey = fd.key or name
        if gkey in self.generic_ok:
            if not self.generic_ok[gkey]:
                raise Abort()
            return
        if any(generics.is_generic(t) for t in declared):
            self.generic_ok[gkey] = True
            return
        self.stack.append(name)
        before = len(self.diags.items)
        try:
            FunctionChecker(self, fd, declared, block_dim, name, generic=True).check()
        except Abort:
            pass
        finally:
            self.stack.pop()
        self.generic_ok[gkey] = len(self.diags.items) == before
        if not self.generic_ok[gkey]:
            raise Abort()

    def bind_params(self, name: str, fd: FuncDef, declared: list[Declared], args: list[tuple[Type, object]],
                    call_node: cst.CSTNode, caller: LoweringHost,
                    arg_nodes: Sequence[cst.CSTNode] | None) -> list[Type]:
        """Concrete parameter types: Any takes the argument's type; shape variables unify."""
        bindings: dict[str, Dim] = {}
        first_seen: dict[str, tuple[str, Span]] = {}
        concrete: list[Type] = []
        params = fd.node.params.params
        for i, (want, (got, weak)) in enumerate(zip(declared, args)):
            pname = params[i].name.value
            where = caller.span(arg_nodes[i]) if arg_nodes else caller.span(call_node)
            if generics.is_generic(want):
                if not generics.accepts(want, got):
                    self._arg_error(name, pname, want, got, where)
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
                if isinstance(want, Scalar) and isinstance(got, Scalar) and weak is not None and \
                        (want.is_float or not got.is_float) and not texture_ndim(want):  # (no number is a texture)
                    concrete.append(want)
                    continue
                self._arg_error(name, pname, want, got, where)
            concrete.append(cast(Type, want))  # equal to got: a type (a spatial_vector given a vector of 6 too)
        return concrete

    def _arg_error(self, name: str, pname: str, want: Declared, got: Type, where: Span) -> NoReturn:
        self.diags.error("TC0201" if not isinstance(want, TileT) or not isinstance(got, TileT) or got.ndim == want.ndim else "TC0107",
                         f"{name}: parameter `{pname}` expects {describe(want)}, got {describe(got)}", where)
        raise Abort()


def _float_elements(t: Type) -> bool:
    """A float scalar, or a tile or array of them."""
    held = t.dtype if isinstance(t, (TileT, ArrayT)) else t
    return isinstance(held, Scalar) and held.is_float


def _same_kind(declared: Declared, concrete: Type) -> bool:
    """A custom adjoint's declared parameter type against the func's (arrays by dtype and ndim)."""
    if isinstance(declared, ArrayT) and isinstance(concrete, ArrayT):
        return declared.dtype == concrete.dtype and declared.ndim == concrete.ndim
    return declared == concrete


def _made(twin: ir.Function | ir.Stmt) -> ir.Function | None:
    return twin if isinstance(twin, ir.Function) else None


def _spelled(t: Type, literal: bool) -> str:
    """An argument's type as an overload error lists it; an untyped literal adapts, so it is
    named by its kind."""
    if literal and isinstance(t, Scalar):
        return "bool literal" if t.kind == "bool" else "float literal" if t.is_float else "int literal"
    return str(t)
