"""Check: libcst kernel/func bodies -> typed IR, with every static diagnostic.

Expects a resolved `Scope`. Guarantees: every IR node is typed and every tile
has a concrete dtype and shape; each name holds one type for its whole
function; funcs are specialised per call-site argument types (callees before
callers); a kernel's shared tiles fit the budget. Independent errors are all
reported: a failing statement is skipped and the names it binds are poisoned
so they do not cascade.
"""
from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import libcst as cst

from .. import ir
from ..diagnostics import Diagnostics, Label, Span
from ..ops import MUTATES, OPS, decompositions
from ..ir.types import (BOOL, INT32, NONE, ArrayT, FunctionT, GridQueryT, MatT, Scalar, StructT, TileT, TupleT, Type, VecT,
                        component_dtype, describe, texture_ndim)
from . import annotations as ann
from . import generics, structs, warp_library
from .lower_call import Abort, CallLowering
from .lower_expr import BINOPS, ExprLowering
from .lower_math_rewrites import MathRewrites
from .lower_structs import STRUCTISH, StructLowering, StructReturns, TupleReturns
from .lower_struct_tiles import StructTileLowering, StructTileStmts
from .lower_values import ValueLowering
from .lower_random import RandomLowering
from .lower_matmul_scalars import ScaledMatmulLowering
from .lower_tile_expand import TileExpandLowering
from .lowering_host import LoweringHost
from .statement_walk import statements, subnodes
from .tuple_returns import tuple_annotation
from .tuple_values import TupleValues
from .hash_grids import HashGridQueries, Query
from .mesh_queries import MeshQueries
from .textures import TextureLowering
from .volumes import VolumeLowering
from .ref_arguments import RefArguments
from .starred_args import StarredArguments
from .tiled_queries import TiledQueries
from .grad_calls import GradCalls
from .rewrites import RewriteRecords
from .indexed import IndexedLowering
from .printing import PrintLowering
from .lower_views import ViewLowering
from ..ops.values import is_value
from .parse import Parsed
from .resolve import Scope

if TYPE_CHECKING:  # the module checker creates function checkers; only its type is needed here
    from .module import ModuleChecker
    from .resolve import FuncDef

# A lowered value: an IR expression, or a struct-ish value the struct lowerings hold (lower_structs.py)
Lowered = Any
BranchPath = tuple[tuple[int, int], ...]  # ((if id, arm), ...) of the branches enclosing a statement

AUG_OPS = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide,
    cst.ModuloAssign: cst.Modulo, cst.PowerAssign: cst.Power, cst.BitAndAssign: cst.BitAnd,
    cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor,
    cst.LeftShiftAssign: cst.LeftShift, cst.RightShiftAssign: cst.RightShift,
}  # fmt: skip
# Warp's builtins behind `t[i] &= v` and friends on tile elements.
TILE_BIT_INPLACE = {cst.BitAnd: "tile_bit_and_inplace", cst.BitOr: "tile_bit_or_inplace",
                    cst.BitXor: "tile_bit_xor_inplace"}
# Bitwise updates of 32/64-bit integer array elements are atomics, as in Warp.
BIT_ATOMICS = {cst.BitAnd: "array_atomic_and", cst.BitOr: "array_atomic_or", cst.BitXor: "array_atomic_xor"}
UNSUPPORTED_STMTS = {
    cst.Try: "try", cst.TryStar: "try", cst.With: "with", cst.ClassDef: "class definitions",
    cst.FunctionDef: "nested functions", cst.Match: "match",
    cst.Del: "del", cst.Global: "global", cst.Nonlocal: "nonlocal", cst.Import: "import",
    cst.ImportFrom: "import", cst.Raise: "raise",
}  # fmt: skip


ARRAY_ADJOINTS = "arrays"  # adjoint_output of a func_grad instance adding into its array parameters' adjoints


@dataclass
class Options:
    block_dim: int = 256  # Warp's default, when the kernel does not fix one
    max_shared: int | None = None  # the GPU shared-memory budget: applied to CUDA builds (backend_cuda/shared_memory.py)


@dataclass
class Binding:
    sym: ir.Sym
    span: Span  # first binding
    path: BranchPath  # branch path of the first binding: ((if_id, arm), ...)
    poisoned: bool = False  # its binding statement failed; uses are silent
    block: int = 0  # the statement block of the binding (0: the body's top level, and parameters)


class FunctionChecker(TextureLowering, VolumeLowering, StarredArguments, TiledQueries, StructTileLowering, StructLowering, StructReturns, ValueLowering, ExprLowering, CallLowering, ViewLowering,
                      RandomLowering, IndexedLowering, PrintLowering, ScaledMatmulLowering,
                      TileExpandLowering, RewriteRecords, TupleReturns, TupleValues, MathRewrites, HashGridQueries, MeshQueries,
                      RefArguments, GradCalls, LoweringHost):
    new_binding = Binding  # how the mixins make bindings without importing this module
    # param_types: a Type, or an indexed array's IndexedT, per parameter (generic ones are bound before a check)
    def __init__(self, module: ModuleChecker, fd: FuncDef, param_types: Sequence[Any], block_dim: int,
                 name: str, generic: bool = False, adjoint_output: int | str | None = None) -> None:
        self.module = module
        self.scope: Scope = getattr(fd, "scope", None) or module.scope  # a nested def's own bindings
        self.parsed: Parsed = module.parsed
        self.diags: Diagnostics = module.diags
        self.fd = fd
        self.param_types = param_types
        self.block_dim = block_dim
        self.name = name
        self.generic = generic
        self.env: dict[str, Binding] = {}
        self.storage: dict[ir.Sym, str] = {}
        self.returns: list[tuple[Type, cst.CSTNode]] = []
        self.uses_tiles = False
        self.lane_ops = False  # uses the lane index: tid() with a lane, tile(x), untile
        self.loop_depth = 0
        self.path: BranchPath = ()
        self.if_counter = 0
        self.temp_counter = 0
        self.block_id = 0  # the statement block being checked (Binding.block)
        self.block_counter = 0
        self.declared_ret: ann.Declared | None = None  # the `-> T` annotation's type, once check() read it
        self.inplace: set[ir.Sym] = set()  # tile params updated in place (Warp passes tiles by reference)
        self.branch_rebinds: dict[str, cst.Name] = {}  # tile param name -> a plain rebinding inside a branch or loop
        self.tile_views: dict[str, str] = {}  # name bound to a view of a tile -> the parent's name
        self.adjoint_output = adjoint_output  # a @wp.func_grad body checked for this param's adjoint
        self.adjoint_accs: dict[str, ir.Sym] = {}  # param name -> the accumulator `wp.adjoint[name]` updates
        self.adjoint_arrays: dict[str, ir.Sym] = {}  # array param name -> its adjoint array (ARRAY_ADJOINTS instance)
        self.stale_views: dict[str, tuple[str, int]] = {}  # view name -> (parent, line) once the parent changed in place
        self.view_exprs: dict[str, tuple[ir.OpCall, dict[str, int]]] = {}  # view name -> (its defining op, assignment counts of the names it reads)
        self.transposed_tiles: set[str] = set()  # names bound to a wp.tile_transpose: strided in Warp (warn_strided_reshape)
        self.assign_counts: dict[str, int] = {}  # name -> assignments so far (a view's indices must not change)
        self.pending_aliases: list[ir.Stmt] = []  # write-backs / re-derivations to append after the statement
        self.struct_vars: dict[str, StructT | ArrayT | TileT] = {}  # struct-typed name -> StructT, or ArrayT or TileT of one (lower_structs.py)
        self.project: str | None = None  # a func returning a struct: the field path this instance returns
        self.pending_draws, self.draw_current, self.draw_origin = [], {}, {}  # random states (lower_random)
        self.indexed: dict[str, tuple[ir.Sym, list[ir.Sym]]] = {}  # indexed array parameter -> (base Sym, index Syms) (indexed.py)
        self.nullable: dict[str, ir.Sym] = {}  # kernel array parameter the body tests (`if a:`) -> its symbol
        self.non_null: set[str] = set()  # nullable parameters a test has shown passed, where the lowering is
        self.returns_several: int | None = None  # a func returning several values: how many (tuple_returns.py)
        self.func_values: dict[str, FunctionT] = {}  # name -> the function it is bound to (`f = my_func`, wp.Function)
        self.grad_wrappers: dict[str, cst.Call] = {}  # name -> the `wp.grad(f)` it is bound to (grad_calls.py)
        self.tuple_vars: dict[str, list[ir.Sym]] = {}  # name -> its items' variables (tuple_values.py)
        self.loop_values: dict[str, tuple[int, range]] = {}  # loop variable -> (its assign count, the constant range it runs over)
        self.local_arrays: set[ir.Sym] = set()  # symbols bound to a local array (wp.zeros) or a view of one
        self.local_array_call: cst.Call | None = None  # the wp.zeros call an assignment binds to a name
        self.hoisted: dict[cst.Call, ir.Expr] = {}  # older-form mesh queries lowered before their statement
        self.starred_locals: dict[int, cst.Name] = {}  # id(`*` argument) -> the local it was bound to (starred_args.py)
        self.in_simple_statement = False  # lowering a statement without a body (guarded): pending_aliases follow it
        self.mesh_bvhs: dict[str, cst.BaseExpression] = {}  # `bvh = wp.mesh_get_bvh(mesh)` (hash_grids.py)
        self.grid_queries: dict[str, Query] = {}  # name -> the grid or mesh query bound to it (hash_grids.py)
        self.lowered_ids: dict[cst.CSTNode, ir.Expr] = {}  # hash_grids.py note_id_argument
        self.grid_ids: dict[str, tuple[str, str, cst.CSTNode]] = {}  # parameter read as an id -> (kind, dtype, a use)
        self.grid_candidates: dict[str, ir.Sym] = {}  # parameters by name: what a grid id may name
        self.query_depths: list[int] = []
        self.query_breaks: list[ir.Sym | None] = []

    def span(self, node: cst.CSTNode) -> Span:
        return self.parsed.span(node)

    # ------------------------------------------------------------ entry

    def check(self) -> ir.Function:
        params: list[ir.Sym] = []
        for p, t in zip(self.fd.node.params.params, self.param_types):
            if isinstance(t, FunctionT):  # a wp.Function parameter: this instance is the function's own
                self.func_values[p.name.value] = t
                continue
            if isinstance(t, GridQueryT):  # a hash-grid query: its variables (hash_grids.py)
                self.bind_query_param(p, t, params)
                continue
            if self.bind_tuple_param(p, t, params) or self.bind_struct_param(p, t, params):
                continue
            made = self.indexed_params(p.name.value, t) if isinstance(t, ann.IndexedT) else [ir.Sym(p.name.value, 0, t)]
            self.env[p.name.value] = Binding(made[0], self.span(p.name), ())
            if self.by_reference(p, t):
                self.inplace.add(made[0])
            params += made
        self.grid_candidates = {p.name: p for p in params}
        # array parameters the body tests (`if a:`): a kernel's launch, or a func's caller, may pass None
        self.nullable = {name: self.env[name].sym for name in _tested_names(self.fd.node.body, self.may_hold_if_exp())
                         if name in self.env and isinstance(self.env[name].sym.type, ArrayT)}
        if self.fd.kind != "kernel":
            self.returns_several = self.fd.returns_several
        self.declared_ret = self.return_annotation()
        if self.project is not None and self.project.startswith("#"):  # one of several returned values
            item, _, path = self.project[1:].partition(":")
            items = tuple_annotation(self.fd.node.returns.annotation if self.fd.node.returns else None)
            self.declared_ret = self.item_annotation(items[int(item)]) if items else None
            if path:  # a field of a struct item (lower_structs.TupleReturns.unpacked_call)
                t = self.struct_returned(self.fd, self.fd.node, arg_types=self.param_types, item=int(item))
                assert t is not None, self.project  # (the caller found it)
                self.declared_ret = dict(structs.struct_leaves(t))[path]
        elif self.project is not None:
            assert isinstance(self.declared_ret, StructT), self.declared_ret  # (module.instantiate's project)
            self.declared_ret = dict(structs.struct_leaves(self.declared_ret))[self.project]
        if self.adjoint_output is not None:
            return self.check_grad_function(params)
        body = self.block(self.fd.node.body)
        declared = self.declared_ret
        if self.fd.kind == "func" and declared is not None and declared != NONE and self.fd.node.returns is not None \
                and not _has_return(self.fd.node.body):  # (Python would return None: found by bench/fuzz_hostile.py)
            annotation = self.fd.node.returns.annotation
            written = " ".join(self.parsed.tree.code_for_node(annotation).split())
            self.fail("TC0410", f"`{self.fd.name}` is annotated `-> {written}` but has no return statement",
                      annotation, help="return a value, or annotate it `-> None`")
        ret = self.return_type()
        self.check_branch_rebinds()
        self.check_grid_ids()
        return ir.Function(
            name=self.name, source_name=self.fd.name, kind=self.fd.kind, params=tuple(params),
            body=body, ret=ret, span=self.span(self.fd.node.name), block_dim=self.block_dim,
            storage=tuple(sorted(((s, v) for s, v in self.storage.items()), key=lambda kv: str(kv[0]))),
            tiled=self.uses_tiles, differentiate=getattr(self.fd, "enable_backward", True),
            byref=tuple(i for i, p in enumerate(params) if p in self.inplace),
            struct_params=tuple((p.name.value, t) for p, t in zip(self.fd.node.params.params, self.param_types))
            if any(structs.leaves(t) is not None for t in self.param_types) else (),
            spatial_ids=self.spatial_ids(),
        )

    def lower_subscript(self, node: cst.Subscript) -> Lowered:
        item = self.tuple_item(node)  # `t[0]` of a tuple (tuple_values.py)
        return item if item is not None else super().lower_subscript(node)

    def lower_name(self, node: cst.Name) -> Lowered:
        """A kernel array parameter the body tests with `if a:` may be None (a null array, as Warp passes
        one): it is read only where a test has shown it passed."""
        name = node.value
        self.refuse_query_value(node)
        if name in self.tuple_vars and name not in self.env:
            self.fail("TC0401", f"unsupported syntax: the tuple `{name}` used as a value (tilec indexes and unpacks "
                      "tuples, and passes them to funcs)", node,
                      help=f"use its items: `{name}[0]`, `{name}[1]`, ...")
        sym = self.nullable.get(name)
        if sym is not None and name not in self.non_null and self.env.get(name) is not None \
                and self.env[name].sym is sym:
            who = "a launch" if self.fd.kind == "kernel" else "a caller"
            self.fail("TC0411", f"`{name}` may be None here: the {self.fd.kind} tests it (`if {name}:`), so {who} "
                      "may pass None for it", node,
                      help=f"use it under `if {name}:` (or after `if not {name}: return`)")
        return super().lower_name(node)

    def may_hold_if_exp(self) -> bool:
        """Whether the func's module may hold a conditional expression (an `else` that is no `else:` clause
        in its text): a look at the text once per module, where a walk of every node of every body cost a
        quarter more work per statement (tests/test_emit_linear.py)."""
        if self.fd.library:
            return True
        home = self.fd.origin if self.fd.origin is not None else self.module.parsed
        return _has_if_exp_else(home.source)

    def return_annotation(self) -> ann.Declared | None:
        """The type `-> T` declares (NONE for `-> None`), None when absent or unusable."""
        returns = self.fd.node.returns
        if returns is None:  # a func's struct, as Warp infers it from the body (lower_structs.struct_returned)
            return self.struct_returned(self.fd, self.fd.node, arg_types=self.param_types) if self.fd.kind == "func" \
                else None
        node = returns.annotation
        if isinstance(node, cst.Name) and node.value == "None" or (  # (Python's `types.NoneType` spells it too)
                isinstance(node, cst.Attribute) and node.attr.value == "NoneType" and isinstance(node.value, cst.Name)
                and node.value.value == "types" and "types" not in self.scope.api_aliases):
            return NONE
        if tuple_annotation(node) is not None:
            return None  # several values: each instance's is its item's (check)
        if generics.scalar_kind(node, self.scope) is not None or generics.generic_value(node, self.scope) is not None \
                or generics.generic_tile(node, self.scope) is not None:
            return None  # `-> wp.Float`, `-> wp.tile[float]`: the type the body returns (Warp's generic annotations)
        try:
            t = ann.annotation(node, self.scope)
        except ann.AnnotationError as e:
            self.diags.error("TC0409", f"return annotation: {e.message}", self.span(e.node))
            return None
        if t == ann.ANY:
            return None
        if self.fd.kind == "kernel":
            self.diags.error("TC0403", "a kernel cannot return a value; annotate it `-> None` or not at all",
                             self.span(node))
            return None
        if isinstance(t, ArrayT):
            self.diags.error("TC0409", "return annotation: a func cannot return an array", self.span(node))
            return None
        if isinstance(t, TileT) and not t.is_concrete:
            return None  # shape variables: the body's return is checked against the call site
        return t

    def item_annotation(self, node: cst.BaseExpression) -> ann.Declared | None:
        """The type an item of a `-> tuple[...]` annotation names (None where it is unusable: reported)."""
        try:
            t = ann.annotation(node, self.scope)
        except ann.AnnotationError as e:
            self.diags.error("TC0409", f"return annotation: {e.message}", self.span(e.node))
            return None
        return None if t == ann.ANY else t

    # ------------------------------------------------------------ @wp.func_grad bodies

    def check_grad_function(self, params: list[ir.Sym]) -> ir.Function:
        """A func_grad body as a func returning the adjoint contribution of one parameter: every
        `wp.adjoint[p] += e` updates an accumulator of p, and the body returns the chosen one."""
        from ..ir.types import Scalar as _Scalar
        from ..ops.build import zeros

        span = self.span(self.fd.node.name)
        inits: list[ir.Stmt] = []
        for k, p in enumerate(params):
            if (isinstance(p.type, TileT) and _scalar_held(p.type).is_float) or (isinstance(p.type, _Scalar) and p.type.is_float):
                acc = ir.Sym(f"adjoint_{p.name}", 90000 + k, p.type)
                self.adjoint_accs[p.name] = acc
                inits.append(ir.Assign(acc, zeros(p.type, span), span))
        if self.adjoint_output == ARRAY_ADJOINTS:  # the adjoint arrays follow the parameters and adj_ret
            for k, p in enumerate(params):
                if isinstance(p.type, ArrayT) and _scalar_held(p.type).is_float:
                    self.adjoint_arrays[p.name] = ir.Sym(f"adjoint_{p.name}", 90100 + k, p.type)
            params = params + list(self.adjoint_arrays.values())
        body = self.block(self.fd.node.body)
        if self.returns:
            self.diags.error("TC0410", "a @wp.func_grad function must not return a value", self.span(self.returns[0][1]))
        if self.adjoint_output == ARRAY_ADJOINTS:
            return ir.Function(name=self.name, source_name=self.fd.name, kind="func", params=tuple(params),
                               body=tuple(inits) + body, ret=NONE, span=span, block_dim=self.block_dim, tiled=False)
        assert isinstance(self.adjoint_output, int), self.adjoint_output  # the parameter this instance adjoins
        acc = self.adjoint_accs[params[self.adjoint_output].name]
        body = tuple(inits) + body + (ir.Return(ir.Var(acc, span), span),)
        return ir.Function(name=self.name, source_name=self.fd.name, kind="func", params=tuple(params), body=body,
                           ret=acc.type, span=span, block_dim=self.block_dim, tiled=False)

    def adjoint_array_update(self, target: cst.Subscript, value: ir.Expr, node: Any,
                             aug: type[cst.BaseBinaryOp] | None) -> list[ir.Stmt]:
        """`wp.adjoint[a][i] += v` in a @wp.func_grad: an atomic add into the adjoint array of `a` in
        the instance computing array adjoints, nothing in the others (each adds it once)."""
        assert isinstance(target.value, cst.Subscript), target  # (store_subscript's test)
        inner = self.subscript_items(target.value)
        name = inner[0].value if len(inner) == 1 and isinstance(inner[0], cst.Name) else None
        if self.adjoint_output is None:
            self.fail("TC0401", "unsupported syntax: `wp.adjoint[...]` outside a @wp.func_grad function", target)
        if aug not in (cst.Add, cst.Subtract):
            self.fail("TC0401", "unsupported syntax: the adjoint of an array element is updated with += or -=",
                      target)
        param = next((p for p in self.fd.node.params.params if p.name.value == name), None)
        ptype = self.env[name].sym.type if param is not None and name in self.env else None
        if not (isinstance(ptype, ArrayT) and _scalar_held(ptype).is_float):
            self.fail("TC0408", "`wp.adjoint[a][i]` takes a floating-point array parameter of the function", target)
        assert name is not None  # (a parameter's)
        if self.adjoint_output != ARRAY_ADJOINTS:
            return []
        indices = [self.index(i) for i in self.index_nodes(target)]
        op = "array_atomic_add" if aug is cst.Add else "array_atomic_sub"
        call = self.make_op(op, [ir.Var(self.adjoint_arrays[name], self.span(target)), value] + indices, {}, node,
                            where=[target.value, node.value] + self.index_nodes(target))
        return [ir.ExprStmt(call, self.span(node))]

    def adjoint_update(self, target: cst.Subscript, value: ir.Expr, node: Any,
                       aug: type[cst.BaseBinaryOp] | None) -> list[ir.Stmt]:
        items = self.subscript_items(target)
        name = items[0].value if len(items) == 1 and isinstance(items[0], cst.Name) else None
        if self.adjoint_output is None:
            self.fail("TC0401", "unsupported syntax: `wp.adjoint[...]` outside a @wp.func_grad function", target)
        if name not in self.adjoint_accs:
            self.fail("TC0408", "`wp.adjoint[...]` takes a floating-point parameter of the function", target)
        acc = self.adjoint_accs[name]
        if aug is not None:
            value = self.make_op("add" if aug is cst.Add else "sub", [ir.Var(acc, self.span(target)), value], {},
                                 node, where=[target, node.value])
        value = self.retype_literal(value, acc.type)
        if value.type != acc.type:
            self.fail("TC0201", f"the adjoint of `{name}` is {describe(acc.type)}, the value is {describe(value.type)}",
                      node.value)
        return [ir.Assign(acc, value, self.span(node))]

    # ------------------------------------------------------------ tiles by reference

    def by_reference(self, p: cst.Param, t: Any) -> bool:
        """A `wp.ref[T]` parameter (Warp 1.19): the caller's variable takes the func's updates. A
        scalar, vector, matrix or tile of a func; a kernel's or a struct's is refused (TC0409)."""
        if not ann.by_reference(p, self.scope):
            return False
        node = cast(cst.Annotation, p.annotation).annotation
        if self.fd.kind == "kernel":  # (reported, not raised: the parameters are being bound)
            self.diags.error("TC0409", f"kernel parameter `{p.name.value}`: `wp.ref[...]` is for a func's "
                             "parameters (Warp refuses it in a kernel's signature)", self.span(node))
            return False
        if not isinstance(t, (Scalar, VecT, MatT, TileT)):
            self.diags.error("TC0409", f"parameter `{p.name.value}`: tilec passes a scalar, vector, matrix or tile "
                             f"by reference, not {describe(t)}", self.span(node))
            return False
        return True

    def note_inplace(self, sym: ir.Sym) -> None:
        """An in-place update of `sym`: when it is a func's tile parameter, the caller sees it."""
        if self.fd.kind == "func" and sym.id == 0 and isinstance(sym.type, TileT) and \
                self.env.get(sym.name) is not None and self.env[sym.name].sym == sym and \
                sym.name in {p.name.value for p in self.fd.node.params.params}:
            self.inplace.add(sym)

    def rebind_tile_param(self, target: cst.Name) -> None:
        """`t = ...` on a func's tile parameter names a new tile, as in Warp: the caller's tile keeps
        its value. At the top level the name moves to a fresh symbol; in a branch or loop that is
        refused when the func also updates the parameter in place (check_branch_rebinds)."""
        b = self.env.get(target.value)
        if self.fd.kind != "func" or b is None or b.sym.id != 0 or not isinstance(b.sym.type, TileT) or \
                target.value not in {p.name.value for p in self.fd.node.params.params}:
            return
        if self.path == () and self.loop_depth == 0:
            self.temp_counter += 1
            self.env[target.value] = Binding(ir.Sym(b.sym.name, self.temp_counter, b.sym.type),
                                             self.span(target), ())
        else:
            self.branch_rebinds.setdefault(target.value, target)

    def check_branch_rebinds(self) -> None:
        for sym in self.inplace:
            node = self.branch_rebinds.get(sym.name)
            if node is not None:
                self.diags.error(
                    "TC0401", f"unsupported syntax: `{sym.name}` is a tile parameter this func updates in "
                    "place (tiles are passed by reference); rebinding it inside a branch or loop is not "
                    "supported", self.span(node), help=f"copy it first: `u = {sym.name}`, then rebind `u`")

    def return_type(self) -> Type:
        types = {t for t, _ in self.returns}
        if len(types) > 1:
            (t0, n0), *rest = self.returns
            for t, n in rest:
                if t != t0:
                    self.diags.error("TC0410", f"returns {describe(t)} here but {describe(t0)} before",
                                     self.span(n), labels=(Label(self.span(n0), "first return"),))
                    break
        return self.returns[0][0] if self.returns else NONE

    # ------------------------------------------------------------ statements

    def block(self, node: cst.BaseSuite | Sequence[cst.CSTNode]) -> tuple[ir.Stmt, ...]:
        stmts: Sequence[cst.CSTNode] = node.body if isinstance(node, cst.BaseSuite) else node  # (a suite: indented or not)
        out: list[ir.Stmt] = []
        shown = set(self.non_null)  # what a test shows holds in this block and the blocks it holds
        outer_block = self.block_id
        if node is not self.fd.node.body:
            self.block_counter += 1
            self.block_id = self.block_counter
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self.guarded(self.small_stmt, small, out)
            elif isinstance(stmt, cst.BaseSmallStatement):
                self.guarded(self.small_stmt, stmt, out)
            else:
                self.guarded(self.compound_stmt, stmt, out)
                if isinstance(stmt, cst.If) and stmt.orelse is None and _leaves(stmt.body):
                    self.non_null |= _shown(stmt.test, False) & set(self.nullable)  # `if not a: return`: a was passed, below
        self.non_null = shown
        self.block_id = outer_block
        return tuple(out)

    def guarded(self, fn: Callable[[Any], list[ir.Stmt]], node: cst.CSTNode, out: list[ir.Stmt]) -> None:
        outer_draws = self.begin_statement_draws()  # a nested block's statements keep their own
        outer_simple, self.in_simple_statement = self.in_simple_statement, fn == self.small_stmt
        try:
            out.extend(self.hoist_mesh_queries(node))  # mesh_queries.py: Warp's older query forms
            out.extend(self.hoist_volume_gradients(node))  # volumes.py: volume_sample_grad_f writes its `grad`
            unpacked = self.hoist_starred(node) if self.parsed.may_unpack else []  # starred_args.py: `f(*g(x))`
            out.extend(self.sequence_draws(node, fn(node), unpacked))
            out.extend(self.pending_aliases)  # views and parents kept in step (lower_views.note_mutation)
        except Abort:
            for name in _bound_names(node):
                b = self.env.get(name)
                if b is None:
                    self.env[name] = Binding(ir.Sym(name, 0, NONE), self.span(node), self.path, True)
        finally:
            self.pending_aliases = []
            self.in_simple_statement = outer_simple
            self.end_statement_draws(outer_draws)

    def small_stmt(self, node: cst.CSTNode) -> list[ir.Stmt]:
        if isinstance(node, cst.Pass):
            return []
        if isinstance(node, cst.Expr):
            return self.expr_stmt(node)
        if isinstance(node, cst.Assign):
            if len(node.targets) != 1:
                self.fail("TC0401", "unsupported syntax: chained assignment", node)
            copied = self.ref_argument_copies(node.value, node, node.targets[0].target) \
                if isinstance(node.value, cst.Call) else None
            if copied is not None:
                return copied
            return self.assign(node.targets[0].target, node.value, node)
        if isinstance(node, cst.AnnAssign):
            return self.ann_assign(node)
        if isinstance(node, cst.AugAssign):
            return self.aug_assign(node)
        if isinstance(node, cst.Return):
            return self.return_stmt(node)
        if isinstance(node, cst.Assert):
            return self.assert_stmt(node)
        if isinstance(node, (cst.Break, cst.Continue)):
            if self.loop_depth == 0:
                self.fail("TC0401", "`break`/`continue` outside a loop", node)
            leaves_query = self.query_break(self.span(node)) if isinstance(node, cst.Break) else None
            if leaves_query is not None:
                return leaves_query
            return [(ir.Break if isinstance(node, cst.Break) else ir.Continue)(self.span(node))]
        what = UNSUPPORTED_STMTS.get(type(node), type(node).__name__)
        self.fail("TC0401", f"unsupported syntax: {what}", node)

    def compound_stmt(self, node: cst.CSTNode) -> list[ir.Stmt]:
        if isinstance(node, cst.If):
            taken = self.static_if(node)
            return [self.if_stmt(node)] if taken is None else taken
        if isinstance(node, cst.For):
            return self.grid_query_for(node) or [self.for_stmt(node)]
        if isinstance(node, cst.While):
            return self.grid_query_while(node) or [self.while_stmt(node)]
        what = UNSUPPORTED_STMTS.get(type(node), type(node).__name__)
        self.fail("TC0401", f"unsupported syntax: {what}", node)

    def expr_stmt(self, node: cst.Expr) -> list[ir.Stmt]:
        value = node.value
        if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
            return []  # docstring
        if isinstance(value, cst.Call) and self.scope.api_attr(value.func) in warp_library.IN_PLACE:
            return self.library_in_place(value, node)
        if isinstance(value, cst.Call) and self.scope.api_attr(value.func) in decompositions.FACTORS \
                and len(value.args) > 1:
            return self.library_out_arguments(value, node)
        if isinstance(value, cst.Call):
            copied = self.ref_argument_copies(value, node, None)  # ref_arguments.py: `f(arr[i])` of a wp.ref
            if copied is not None:
                return copied
            call = self.lower_call(value)
            if isinstance(call, (*STRUCTISH, StructTileStmts)):
                return self.struct_call_stmts(call, node)  # struct tiles: each leaf's op (lower_struct_tiles)
            mutated = self.mutated_args(call)
            if mutated:
                return self.rebind_mutated(call, mutated, node)
            return [ir.ExprStmt(call, self.span(node))]
        self.expr(value)
        return []

    def library_in_place(self, value: cst.Call, node: cst.Expr) -> list[ir.Stmt]:
        """`wp.transform_set_translation(t, p)`: `t` assigned the library's copying variant's result."""
        api = cast(str, self.scope.api_attr(value.func))
        target = value.args[0].value if value.args and value.args[0].keyword is None else None
        if not (isinstance(target, cst.Name) and target.value in self.env):
            self.fail("TC0401", f"unsupported syntax: `{api}` updates its first argument in place, and tilec takes "
                      "a local variable there", target or value,
                      help=f"assign the copy: `t = wp.{warp_library.IN_PLACE[api]}(...)`")
        assert isinstance(target, cst.Name)  # (checked above)
        call = self.lower_func_call(warp_library.PREFIX + warp_library.IN_PLACE[api], value)
        return [self.bind_name(target, call, node)]

    def library_out_arguments(self, value: cst.Call, node: cst.Expr) -> list[ir.Stmt]:
        """`wp.svd3(A, U, sigma, V)`, Warp's form storing the factors into the caller's variables: lowered as
        `U, sigma, V = wp.svd3(A)`."""
        api = cast(str, self.scope.api_attr(value.func))
        names = ("A", *decompositions.FACTORS[api].names)
        given: dict[str, cst.BaseExpression] = {}
        for i, arg in enumerate(value.args):
            name = arg.keyword.value if arg.keyword is not None else names[i] if i < len(names) and not arg.star \
                else None
            if name is None or name not in names or name in given:
                self.fail("TC0303", f"{api}: takes ({', '.join(names)})", arg)
            given[name] = arg.value
        missing = [n for n in names if n not in given]
        if missing:
            self.fail("TC0303", f"{api}: missing argument `{missing[0]}`", value)
        outs = [given[n] for n in names[1:]]
        for out in outs:
            if not (isinstance(out, cst.Name) and out.value in self.env):
                self.fail("TC0401", f"unsupported syntax: `{api}` stores into this argument, and tilec takes a local "
                          "variable there", out, help=f"unpack its results: `{', '.join(names[1:])} = wp.{api}(A)`")
        call = value.with_changes(args=(cst.Arg(given["A"]),))
        self.parsed.place_like(call, value)
        return self.unpack(cst.Tuple([cst.Element(out) for out in outs]), call, node)

    def mutating_ops(self, call: Lowered) -> tuple[str, ...]:
        return (call.op,) if self.mutated_args(call) else ()

    def mutated_args(self, call: Lowered) -> list[tuple[str, ir.Expr]]:
        """(param, IR arg) pairs that an in-place op updates in this call."""
        rewritten = self.rewrite_of(call)  # a call lowered to other ops (rewrites.py)
        if rewritten is not None:
            return rewritten[1]
        if not isinstance(call, ir.OpCall) or call.op not in MUTATES:
            return []
        names = [p.name for p in OPS[call.op].params if p.kind == "value"]
        pos = dict(zip(names, call.args))
        if call.op == "tile_matmul" and len(call.args) < 3:
            return []
        return [(n, pos[n]) for n in MUTATES[call.op] if n in pos]

    def rebind_mutated(self, call: Lowered, mutated: list[tuple[str, ir.Expr]], node: cst.CSTNode) -> list[ir.Stmt]:
        for name, arg in mutated:
            if not isinstance(arg, ir.Var):
                self.fail("TC0408", f"{call.op}: `{name}` must be a variable (it is updated in place)",
                          node)
        syms = [arg.sym for _, arg in mutated if isinstance(arg, ir.Var)]  # (all, after the test above)
        for sym in syms:
            self.note_mutation(sym, node, accumulates=call.op == "tile_axpy")
            self.note_inplace(sym)
        if len(syms) == 1:
            return [ir.Assign(syms[0], call, self.span(node))]
        return [ir.Unpack(tuple(syms), call, self.span(node))]

    def assert_stmt(self, node: cst.Assert) -> list[ir.Stmt]:
        """`assert cond[, msg]`: checked in --debug builds only (Warp's rule); the message names the
        file, the line and the statement as written (escaped when emitted)."""
        tested = _array_test(node.test)
        binding = self.env.get(tested[0]) if tested is not None else None
        if tested is not None and binding is not None and isinstance(binding.sym.type, ArrayT) \
                and tested[0] not in self.nullable:  # `assert a` of an array no `if a:` tests: the loader passes one
            cond: ir.Expr = ir.Const(not tested[1], BOOL, self.span(node.test))
        else:
            cond = self.condition(node.test)
        text = " ".join(self.parsed.tree.code_for_node(node).split())
        message = f"{self.parsed.filename}:{self.span(node).line}: assertion failed: {text}"
        call = ir.OpCall("assert_", (cond,), (("message", message),), NONE, self.span(node))
        return [ir.ExprStmt(call, self.span(node))]

    # ------------------------------------------------------------ assignment

    def assign(self, target: cst.BaseExpression, value_node: cst.BaseExpression, node: cst.CSTNode) -> list[ir.Stmt]:
        if isinstance(target, cst.Name):
            as_query = self.bind_grid_query(target, value_node, node)  # hash_grids.py
            if as_query is not None:
                return as_query
            as_mesh_query = self.bind_mesh_query(target, value_node, node)  # mesh_queries.py
            if as_mesh_query is not None:
                return as_mesh_query
            as_tuple = self.bind_tuple(target, value_node, node)
            if as_tuple is not None:
                return as_tuple
            if self.bind_grad_wrapper(target, value_node):  # `g = wp.grad(f)` (grad_calls.py)
                return []
            as_view = self.bind_indexed_view(target, value_node, node)  # `row = a[i]` of an indexed array
            if as_view is not None:
                return as_view
            function = self.function_value(value_node) if isinstance(value_node, (cst.Name, cst.Attribute, cst.Call)) else None
            if function is not None:
                return self.bind_function_value(target, function, node)
            self.local_array_call = value_node if isinstance(value_node, cst.Call) else None
            value = self.lower_value(value_node, 1)
            self.local_array_call = None
            if isinstance(value, STRUCTISH):
                return self.bind_struct(target, value, node)
            if isinstance(value.type, TupleT):
                self.fail("TC0303", f"this call returns {len(value.type.items)} values; unpack them", node)
            return [self.bind_name(target, value, node)]
        if isinstance(target, (cst.Tuple, cst.List)):  # (a pop from a stack of structs: lower_struct_tiles)
            return self.unpack_struct_pop(target, value_node, node) or self.unpack(target, value_node, node)
        if isinstance(target, cst.Subscript):
            return self.store_subscript(target, self.expr(value_node), node, None)
        if isinstance(target, cst.Attribute):
            if self.is_struct_target(target):  # s.x = e, a[i].x = e
                return self.store_field(target, value_node, node)
            return self.store_value_component(target, self.expr(value_node), node, None)  # v.x = e
        self.fail("TC0401", "unsupported syntax: this assignment target", target)

    def lower_value(self, value_node: cst.BaseExpression, tid_count: int) -> Lowered:
        if isinstance(value_node, cst.Call):
            call = self.lower_call(value_node, tid_count)
            if self.mutated_args(call):
                self.fail("TC0408", f"{self.op_name(call)}: updates its argument in place; call it as a statement",
                          value_node)
            return call
        return self.expr(value_node)

    def unpack(self, target: cst.Tuple | cst.List, value_node: cst.BaseExpression, node: cst.CSTNode) -> list[ir.Stmt]:
        nodes = [el.value for el in target.elements]
        names = [n for n in nodes if isinstance(n, cst.Name)]
        if len(names) != len(nodes):
            self.fail("TC0401", "unsupported syntax: nested or indexed unpacking targets", target)
        if isinstance(value_node, cst.Call) and self.scope.api_attr(value_node.func) in decompositions.FACTORS:
            return self.unpack_decomposition(names, value_node, node)
        from_tuple = self.unpack_tuple(names, value_node, node)
        if from_tuple is not None:
            return from_tuple
        if isinstance(value_node, (cst.Tuple, cst.List)):
            if len(value_node.elements) != len(names):
                self.fail("TC0303", f"cannot unpack {len(value_node.elements)} values into {len(names)} names",
                          node)
            temps: list[ir.Sym] = []
            out: list[ir.Stmt] = []
            for el in value_node.elements:  # evaluate all right-hand sides first, as Python does
                v = self.expr(el.value)
                sym = self.new_temp(v.type)
                temps.append(sym)
                out.append(ir.Assign(sym, v, self.span(el.value)))
            for n, sym in zip(names, temps):
                out.append(self.bind_name(n, ir.Var(sym, self.span(n)), node))
            return out
        grads = self.grad_items(value_node)  # `db, da = wp.grad(wp.atan2)(b, a)` (grad_calls.py)
        if grads is not None:
            if len(grads) != len(names):
                self.fail("TC0303", f"cannot unpack the {len(grads)} gradients wp.grad gives into {len(names)} names",
                          node)
            temps = [self.new_temp(g.type) for g in grads]
            assigned: list[ir.Stmt] = [ir.Assign(t, g, self.span(value_node)) for t, g in zip(temps, grads)]
            return assigned + [self.bind_name(n, ir.Var(t, self.span(n)), node) for n, t in zip(names, temps)]
        func = self.called_func(value_node) if isinstance(value_node, cst.Call) else None
        if func is not None and isinstance(value_node, cst.Call):
            count = warp_library.func_def(self.scope, func).returns_several
            if count is not None:  # a func returning several values (tuple_returns.py)
                if count != len(names):
                    self.fail("TC0303", f"cannot unpack the {count} values `{func}` returns into {len(names)} names",
                              node)
                stmts: list[ir.Stmt] = []
                items: list[ir.Sym | Lowered] = []
                for item in self.unpacked_call(func, count, value_node):
                    if isinstance(item, STRUCTISH):  # a struct item: bound field by field below
                        items.append(item)
                        continue
                    items.append(self.new_temp(item.type))
                    stmts.append(ir.Assign(items[-1], item, self.span(value_node)))
                for n, t in zip(names, items):
                    stmts += [self.bind_name(n, ir.Var(t, self.span(n)), node)] if isinstance(t, ir.Sym) \
                        else self.bind_struct(n, t, node)
                return stmts
        value = self.lower_value(value_node, len(names))
        if not isinstance(value.type, TupleT) or len(value.type.items) != len(names):
            self.fail("TC0303", f"cannot unpack {describe(value.type)} into {len(names)} names", node)
        syms = [self.declare(n, t, node) for n, t in zip(names, value.type.items)]
        return [ir.Unpack(tuple(syms), value, self.span(node))]

    def unpack_decomposition(self, names: list[cst.Name], value_node: cst.Call, node: cst.CSTNode) -> list[ir.Stmt]:
        """`U, sigma, V = wp.svd3(A)` (ops/decompositions.py): the factors into the names."""
        api = cast(str, self.scope.api_attr(value_node.func))
        count = len(decompositions.FACTORS[api].names)
        if count != len(names):
            self.fail("TC0303", f"cannot unpack the {count} factors `{api}` returns into {len(names)} names", node)
        value = self.lower_op(api, value_node)
        assert isinstance(value.type, TupleT)
        syms = [self.declare(n, t, node) for n, t in zip(names, value.type.items)]
        return [ir.Unpack(tuple(syms), value, self.span(node))]

    def called_func(self, node: cst.Call) -> str | None:
        """The func a call calls: a user's by name, or `wp.<api>` of the library, or the one a factory or
        selector gives in `wp.static(make(...))(...)`; else None."""
        if isinstance(node.func, cst.Name) and node.func.value in self.scope.funcs and node.func.value not in self.env:
            return node.func.value
        if isinstance(node.func, cst.Call) and self.scope.api_attr(node.func.func) == "static":
            return self.static_factory_func(node.func)
        api = self.scope.api_attr(node.func)
        return warp_library.PREFIX + api if api is not None and warp_library.provides(api, self.scope) else None

    def new_temp(self, t: Type) -> ir.Sym:
        self.temp_counter += 1
        return ir.Sym("_tmp", self.temp_counter, t)

    def ann_assign(self, node: cst.AnnAssign) -> list[ir.Stmt]:
        if not isinstance(node.target, cst.Name) or node.value is None:
            self.fail("TC0401", "unsupported syntax: annotation without a value", node)
        try:
            want = ann.annotation(node.annotation.annotation, self.scope)
        except ann.AnnotationError as e:
            self.fail("TC0409", e.message, e.node)
        value = self.lower_value(node.value, 1)
        if want != ann.ANY and value.type != want and not (self.is_weak(value) and isinstance(want, Scalar)):
            self.fail("TC0201", f"`{node.target.value}` is annotated {describe(want)} but the value is "
                      f"{describe(value.type)}", node.value)
        if (isinstance(want, Scalar) and not want.is_float and self.is_weak(value)
                and isinstance(value.type, Scalar) and value.type.is_float):
            self.fail("TC0201", f"`{node.target.value}` is annotated {describe(want)} but the value is a float; "
                      f"convert it explicitly, e.g. wp.{want.name}(...)",
                      node.value)
        if isinstance(want, Scalar) and self.is_weak(value):
            number = value.value
            assert isinstance(number, (int, float)), value  # a literal's value
            value = ir.Const(number if not want.is_float else float(number), want, value.span)
        if isinstance(value, STRUCTISH):
            return self.bind_struct(node.target, value, node)
        return [self.bind_name(node.target, value, node)]

    def bind_name(self, target: cst.Name, value: ir.Expr, node: cst.CSTNode) -> ir.Assign:
        self.rebind_tile_param(target)
        sym = self.declare(target, value.type, node)
        local = isinstance(value, ir.OpCall) and (value.op == "zeros" or (
            value.op == "array_view" and isinstance(value.args[0], ir.Var) and value.args[0].sym in self.local_arrays))
        if local or (isinstance(value, ir.Var) and value.sym in self.local_arrays):
            self.local_arrays.add(sym)
        self.track_view(target.value, value)
        if isinstance(value, ir.OpCall) and value.attr("storage") == "shared":
            self.storage[sym] = "shared"
        value = self.retype_literal(value, sym.type)
        return ir.Assign(sym, value, self.span(node))

    def retype_literal(self, value: ir.Expr, t: Type) -> ir.Expr:
        if self.is_weak(value) and texture_ndim(t):  # a number is no texture's id
            self.diags.error("TC0201", f"a number is not {describe(t)}; a texture is one a launch passed (or a "
                             "struct's unset field: the empty texture)", value.span)
            raise Abort()
        if self.is_weak(value) and isinstance(t, Scalar):
            number = value.value
            assert isinstance(number, (int, float)), value  # a literal's value
            v = float(number) if t.is_float else (bool(number) if t.kind == "bool" else int(number))
            return ir.Const(v, t, value.span)
        return value

    def declare(self, target: cst.Name, t: Type, node: cst.CSTNode) -> ir.Sym:
        name = target.value
        self.assign_counts[name] = self.assign_counts.get(name, 0) + 1
        if name in self.scope.api_aliases:
            self.fail("TC0401", f"unsupported syntax: rebinding the global name `{name}`", target)
        # a local named as a func (Newton's `tri_is_neighbor = ...` in `def tri_is_neighbor`) hides it from
        # there on, as in Warp: reads and calls of the name look at locals first (lower_expr, lower_call)
        if name in self.tuple_vars:
            self.fail("TC0405", f"`{name}` is a tuple of {len(self.tuple_vars[name])} values and cannot become "
                      f"{describe(t)}", target, help="use a new name")
        if name in self.grid_queries:
            query = self.grid_queries[name]
            self.fail("TC0405", f"`{name}` is a {query.what} and cannot become {describe(t)}", target,
                      help="use a new name")
        if name in self.func_values:
            self.fail("TC0405", f"`{name}` is bound to the function `{self.func_values[name]}` and cannot become "
                      f"{describe(t)} (Warp has no function pointers)", target, help="use a new name")
        b = self.env.get(name)
        if b is None:
            if isinstance(t, type(NONE)):
                self.fail("TC0303", "this call returns no value", node)
            b = Binding(ir.Sym(name, 0, t), self.span(target), self.path, block=self.block_id)
            self.env[name] = b
            return b.sym
        if b.poisoned:
            raise Abort()
        old = b.sym.type
        same_block = b.block == self.block_id and type(old) is type(t)
        if same_block and isinstance(t, ArrayT):  # a view is a reference: a new one is a new symbol
            return self.rebind_new_shape(target, t)
        if old == t or (isinstance(old, Scalar) and isinstance(t, Scalar) and self._literal_fits(node, old)):
            return b.sym
        if same_block and isinstance(t, TileT):
            return self.rebind_new_shape(target, t)
        diverge = _diverging(b.path, self.path)
        label = (Label(b.span, f"first bound here as {describe(old)}"),)
        if diverge:
            self.fail("TC0110", f"`{name}` is {describe(old)} in one branch but {describe(t)} in another",
                      target, labels=label)
        self.fail("TC0405", f"`{name}` was {describe(old)} and cannot become {describe(t)}", target,
                  labels=label, help=f"use a new name for {describe(t)}")

    def rebind_new_shape(self, target: cst.Name, t: Type) -> ir.Sym:
        """`a = a[0]`, `t = wp.tile_transpose(t)`: a name rebound, in the block that bound it, to an
        array, or to a tile of another shape or element type, becomes a new symbol, as Warp allows
        (its types_equal compares an array's or a tile's kind and dtype, not the shape). Uses above
        keep the old symbol; no branch or loop merges the two, as both bindings are in one block.
        An array view rebound so stays assigned once, which its adjoint needs (passes/views.py)."""
        name = target.value
        self.temp_counter += 1
        sym = ir.Sym(name, self.temp_counter, t)
        self.env[name] = Binding(sym, self.span(target), self.path, block=self.block_id)
        for view in [v for v, parent in self.tile_views.items() if parent == name]:
            self.tile_views.pop(view)  # a view of the old value does not follow the name
            self.view_exprs.pop(view, None)
        return sym

    def _literal_fits(self, node: cst.CSTNode, old: Scalar) -> bool:
        value = getattr(node, "value", None)
        if value is None:
            return False
        from . import consts

        lit = self.scope.constant(value) if not isinstance(value, cst.Name) or value.value not in self.env else consts.NOT_CONST
        return lit is not consts.NOT_CONST and not isinstance(lit, tuple) and (old.is_float or not isinstance(lit, float))

    def aug_assign(self, node: cst.AugAssign) -> list[ir.Stmt]:
        op_cls = AUG_OPS.get(type(node.operator))
        if op_cls is None:
            self.fail("TC0401", "unsupported syntax: this augmented assignment", node.operator)
        target = node.target
        if isinstance(target, cst.Name):
            struct_tile = self.struct_tile_aug_assign(target, BINOPS[op_cls], node)
            if struct_tile is not None:
                return struct_tile
            if target.value in self.struct_vars and BINOPS[op_cls] in self.scope.funcs:
                # `c += a` of a struct: `c = c + a`, as Warp lowers it, with the module's operator func
                binop = cst.BinaryOperation(left=target, operator=cast(Any, op_cls)(), right=node.value)
                self.parsed.place_like(binop, node)
                self.parsed.place_like(binop.operator, node.operator)
                return self.assign(target, binop, node)
            current = self.lower_name(target)
            if not (isinstance(current.type, TileT) and op_cls in (cst.Add, cst.Subtract)):  # in place: views follow
                self.assign_counts[target.value] = self.assign_counts.get(target.value, 0) + 1
            op = BINOPS[op_cls]
            value = self.make_op(op, [current, self.expr(node.value)], {}, node, where=[target, node.value])
            if value.type != current.type:
                self.fail("TC0405", f"`{target.value}` was {describe(current.type)} and cannot become "
                          f"{describe(value.type)}", target)
            if isinstance(current.type, TileT) and op_cls in (cst.Add, cst.Subtract):
                self.note_mutation(current.sym, node)
                self.note_inplace(current.sym)  # Warp's tile += / -= update the tile in place
            else:
                self.rebind_tile_param(target)  # t *= s makes a new tile, as in Warp
                return [ir.Assign(self.env[target.value].sym, value, self.span(node))]
            return [ir.Assign(current.sym, value, self.span(node))]
        if isinstance(target, cst.Subscript):
            if op_cls in (cst.Add, cst.Subtract):
                return self.store_subscript(target, self.expr(node.value), node, op_cls)
            bit_op = TILE_BIT_INPLACE.get(op_cls)
            if bit_op and isinstance(self.expr(target.value).type, TileT):
                return self.store_subscript(target, self.expr(node.value), node, bit_op)
            return self.update_subscript(target, op_cls, node)
        if isinstance(target, cst.Attribute):
            if self.is_struct_target(target):  # s.x += e, a[i].x += e
                return self.store_field(target, node.value, node, BINOPS[op_cls])
            return self.store_value_component(target, self.expr(node.value), node, op_cls)  # v.x += e
        self.fail("TC0401", "unsupported syntax: this augmented assignment target", target)

    def update_subscript(self, target: cst.Subscript, op_cls: Any, node: cst.AugAssign) -> list[ir.Stmt]:
        # op_cls: the operator's libcst class (cst.Multiply, ...), a key of BINOPS
        """`a[i] &= v` and the other operators but += and -=, as Warp lowers them: an atomic
        and/or/xor on an array of 32- or 64-bit integers (or of vectors or matrices of them, component
        by component), else read, apply, write back."""
        base = self.expr(target.value)
        if is_value(base.type):  # v[i] *= e
            return self.store_value_component(target, self.expr(node.value), node, op_cls)
        atomic = BIT_ATOMICS.get(op_cls)
        component = component_dtype(base.type.dtype) if isinstance(base.type, ArrayT) else None
        if atomic and component is not None and component.is_integral and component.bits >= 32:
            idx_nodes = self.index_nodes(target)
            indices = [self.index(i) for i in idx_nodes]
            call = self.make_op(atomic, [base, self.expr(node.value)] + indices, {}, node,
                                where=[target.value, node.value] + idx_nodes)
            return [ir.ExprStmt(call, self.span(node))]
        if isinstance(base.type, TileT):  # Warp: an atomic across the block's lanes; a plain write would race
            self.fail("TC0401", f"unsupported syntax: `{self.parsed.tree.code_for_node(node.operator).strip()}` "
                      "on a tile element (Warp applies it atomically across the block's lanes; tilec does not "
                      "yet)", node.operator, help="assign the combined value instead: t[i] = t[i] & v")
        current = self.lower_subscript(target)
        value = self.make_op(BINOPS[op_cls], [current, self.expr(node.value)], {}, node,
                             where=[target, node.value])
        if value.type != current.type:
            self.fail("TC0405", f"this update makes {describe(value.type)} from an element of "
                      f"{describe(base.type)}", node)
        return self.store_subscript(target, value, node, None)

    def store_subscript(self, target: cst.Subscript, value: ir.Expr, node: Any, aug: Any) -> list[ir.Stmt]:
        if isinstance(target.value, cst.Name) and target.value.value in self.tuple_vars \
                and target.value.value not in self.env:
            self.fail("TC0401", f"unsupported syntax: assigning an item of the tuple `{target.value.value}` (a "
                      "tuple is immutable, in Python as in Warp)", target, help="make a new tuple")
        if self.scope.api_attr(target.value) == "adjoint":
            return self.adjoint_update(target, value, node, aug)
        if isinstance(target.value, cst.Subscript) and self.scope.api_attr(target.value.value) == "adjoint":
            return self.adjoint_array_update(target, value, node, aug)
        place = self.indexed_place(target.value, self.subscript_items(target), target) \
            if aug in (None, cst.Add, cst.Subtract) else None
        if place is not None:  # indexed.py: at the gathered element (of a parameter or a struct's field)
            op = {None: "array_store", cst.Add: "array_atomic_add", cst.Subtract: "array_atomic_sub"}[aug]
            base, gathered = place
            call = self.make_op(op, [base, value, *gathered], {}, node, where=[
                target.value, node.value if hasattr(node, "value") else node, *self.subscript_items(target)])
            return [ir.ExprStmt(call, self.span(node))]
        base = self.expr(target.value)
        if isinstance(base, STRUCTISH):
            return self.store_struct_element(base, target, value, node, aug)
        if is_value(base.type):  # v[i] = e, m[i, j] = e, a[i][k] += e
            return self.store_value_component(target, value, node, aug)
        if isinstance(base.type, TileT) and isinstance(base, ir.Var):
            items = self.subscript_items(target)
            if len(items) != base.type.ndim or any(isinstance(i, cst.Slice) for i in items):
                return self.store_tile_subscript(base, target, value, node, aug)
        idx_nodes = self.index_nodes(target)
        if isinstance(base.type, TileT):
            indices = [self.tile_index(self.expr(i), i, k, base.type.shape) if k < base.type.ndim else self.index(i)
                       for k, i in enumerate(idx_nodes)]
        else:
            indices = [self.index(i) for i in idx_nodes]
        where = [target.value, node.value if hasattr(node, "value") else node] + idx_nodes
        if isinstance(base.type, ArrayT):
            op = {None: "array_store", cst.Add: "array_atomic_add", cst.Subtract: "array_atomic_sub"}[aug]
            call = self.make_op(op, [base, value] + indices, {}, node, where=where)
            return [ir.ExprStmt(call, self.span(node))]
        if isinstance(base.type, TileT):
            if not isinstance(base, ir.Var):
                self.fail("TC0401", "unsupported syntax: element write into a temporary tile", target)
            op = {None: "tile_setitem", cst.Add: "tile_additem", cst.Subtract: "tile_subitem"}.get(aug, aug)
            call = self.make_op(op, [base, value] + indices, {}, node, where=where)
            self.note_mutation(base.sym, node)
            self.note_inplace(base.sym)
            if op != "tile_setitem":
                self.lane_ops = True
            return [ir.Assign(base.sym, call, self.span(node))]
        self.fail("TC0401", f"unsupported syntax: element write into {describe(base.type)}", target)

    def return_stmt(self, node: cst.Return) -> list[ir.Stmt]:
        if self.fd.kind == "kernel":
            if node.value is not None:
                self.fail("TC0403", "a kernel cannot return a value; write results into an array", node.value)
            return [ir.Return(None, self.span(node))]
        several = self.returns_several
        if several is not None and self.project is None:  # the func checked on its own: every value, none emitted
            self.returned_values(node, several)
            return []
        if several is not None:  # an instance returning one of the values (tuple_returns.py)
            item, _, path = cast(str, self.project)[1:].partition(":")
            value = self.returned_values(node, several)[int(item)]
            if path:  # one field of a struct item
                value = self.struct_item_field(value, path, node)
        else:
            value = None if node.value is None else self.expr(node.value)
        if isinstance(value, STRUCTISH) or isinstance(self.declared_ret, StructT):
            value = self.struct_return(value, node)  # one field of it per instance (lower_structs.py)
            if value is None:
                return []
        declared = self.declared_ret
        if declared is not None and value is not None and self.is_weak(value) and isinstance(declared, Scalar):
            value = self.retype_literal(value, declared)
        if value is not None and self.is_weak(value):
            value = ir.Const(value.value, value.type, value.span)
        if isinstance(value, ir.Var) and value.sym in self.local_arrays:
            self.fail("TC0401", f"unsupported syntax: returning `{value.sym.name}`, this func's local array (or a view "
                      "of one): its elements live in the func's frame", node.value or node,
                      help="make the array in the caller and pass it to the func to fill")
        got = NONE if value is None else value.type
        if declared is not None and got != declared:
            self.fail("TC0410", f"returns {describe(got)} but the function is annotated to return "
                      f"{describe(declared)}", node.value if node.value is not None else node)
        self.returns.append((NONE if value is None else value.type, node))
        return [ir.Return(value, self.span(node))]

    # ------------------------------------------------------------ control flow

    def expr(self, node: cst.BaseExpression) -> Lowered:
        checked_id = self.lowered_ids.pop(node, None)
        if checked_id is not None:  # an op's id argument read from a value, checked (hash_grids.py)
            return checked_id
        if isinstance(node, cst.IfExp) and _array_tests(node.test) & set(self.nullable):
            # `a[i] if a else 0.0` (Newton's kamino): the arm that reads `a` where the test shows it passed;
            # both arms are evaluated and one picked (a read of an absent array's elements gives 0)
            test = self.condition(node.test)
            with self.shown_passed(node.test, True):
                body = self.expr(node.body)
            with self.shown_passed(node.test, False):
                orelse = self.expr(node.orelse)
            return self.make_op("where", [test, body, orelse], {}, node, where=[node.test, node.body, node.orelse])
        return super().expr(node)

    @contextlib.contextmanager
    def shown_passed(self, test: cst.BaseExpression, truth: bool) -> Iterator[None]:
        """Inside: the nullable arrays `test` shows passed where it is `truth` count as passed (TC0411)."""
        shown = set(self.non_null)
        self.non_null |= _shown(test, truth) & set(self.nullable)
        try:
            yield
        finally:
            self.non_null = shown

    def condition(self, node: cst.BaseExpression) -> ir.Expr:
        if isinstance(node, cst.BooleanOperation) and _array_tests(node) & set(self.nullable):
            # `a and a[i] > 0`, `not a or a[i] == 0`: the right side runs where the left shows a passed
            left = self.condition(node.left)
            with self.shown_passed(node.left, isinstance(node.operator, cst.And)):
                right = self.condition(node.right)
            op = "and_" if isinstance(node.operator, cst.And) else "or_"
            return cast(ir.Expr, self.make_op(op, [left, right], {}, node))
        tested = _array_test(node)
        if tested is not None and tested[0] in self.nullable and self.env[tested[0]].sym is self.nullable[tested[0]]:
            name, negated = tested
            valid: ir.Expr = self.make_op("array_valid", [ir.Var(self.nullable[name], self.span(node))], {}, node)
            if negated:
                valid = self.make_op("not_", [valid], {}, node)
            return valid
        cond: ir.Expr = self.expr(node)
        if isinstance(cond.type, ArrayT):
            self.fail("TC0406", f"a condition must be a scalar, got {describe(cond.type)}", node,
                      help="an array is a condition only as `if a:` / `if not a:` on a kernel's array parameter "
                           "(Warp's test of whether the launch passed one)")
        if isinstance(cond.type, TileT):
            self.fail("TC0406", f"a tile cannot be a condition (got {describe(cond.type)}); reduce it first",
                      node, help="compare an element or a reduction, e.g. wp.tile_sum(t)[0] > 0")
        if not isinstance(cond.type, Scalar):
            self.fail("TC0406", f"a condition must be a scalar, got {describe(cond.type)}", node)
        return cond

    def static_if(self, node: cst.If) -> list[ir.Stmt] | None:
        """`if wp.static(cond):` (and its `elif wp.static(...)`): only the arm Warp compiles, the one
        the condition picks when the module is built, is checked and emitted (the other may hold code
        that is only valid for the other choice, e.g. a dtype's). None for any other `if`."""
        test = node.test
        if not (isinstance(test, cst.Call) and self.scope.api_attr(test.func) == "static"):
            return None
        if self.static_cases(test) is not None:
            return None  # `if wp.static(i % 2 == 0):` in a constant loop: an `if` on what each copy has
        if bool(self.static_value(test)):
            return list(self.block(node.body))
        if isinstance(node.orelse, cst.If):
            return self.compound_stmt(node.orelse)
        return list(self.block(node.orelse.body)) if isinstance(node.orelse, cst.Else) else []

    def if_stmt(self, node: cst.If) -> ir.If:
        try:
            cond = self.condition(node.test)
        except Abort:
            cond = ir.Const(True, Scalar("bool", "bool", 8, "bool"), self.span(node.test))
        self.if_counter += 1
        me = self.if_counter
        outer = self.path
        self.path = outer + ((me, 0),)
        with self.shown_passed(node.test, True):  # `if a:` shows a passed in its body
            body = self.block(node.body)
        self.path = outer + ((me, 1),)
        orelse: tuple[ir.Stmt, ...] = ()
        with self.shown_passed(node.test, False):  # `if not a: ... else:`: in the else
            if isinstance(node.orelse, cst.If):
                elif_: list[ir.Stmt] = []
                self.guarded(self.compound_stmt, node.orelse, elif_)  # its condition's draws stay in its arm
                orelse = tuple(elif_)
            elif isinstance(node.orelse, cst.Else):
                orelse = self.block(node.orelse.body)
        self.path = outer
        return ir.If(cond, body, orelse, self.span(node))

    def for_stmt(self, node: cst.For) -> ir.For:
        if node.orelse is not None or node.asynchronous is not None:
            self.fail("TC0401", "unsupported syntax: for-else / async for", node)
        if not isinstance(node.target, cst.Name):
            self.fail("TC0401", "unsupported syntax: a loop target other than a name", node.target)
        it = node.iter
        backwards = (isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "reversed"
                     and "reversed" not in self.env and len(it.args) == 1 and it.args[0].keyword is None)
        if backwards:
            assert isinstance(it, cst.Call)  # (backwards says so)
            it = it.args[0].value
        if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"):
            self.fail("TC0401", "unsupported syntax: only `for i in range(...)` and `for i in reversed(range(...))` "
                      "loops", node.iter)
        if any(a.star for a in it.args):
            it = self.spelled_out(it)  # `range(*bounds)`
        if not 1 <= len(it.args) <= 3 or any(a.keyword for a in it.args):
            self.fail("TC0303", "range() takes 1 to 3 positional arguments", it)
        bounds = [self.index(a.value) for a in it.args]
        if len(bounds) == 1:
            bounds = [ir.Const(0, INT32, bounds[0].span, weak=True)] + bounds
        if len(bounds) == 2:
            bounds.append(ir.Const(1, INT32, bounds[0].span, weak=True))
        if isinstance(bounds[2], ir.Const) and bounds[2].value == 0:
            self.fail("TC0303", "range() step must not be zero", it.args[2])
        bounds = [self.retype_literal(b, INT32) if b.type == INT32 else b for b in bounds]
        if backwards:
            bounds = self.reversed_range(bounds, it)
        var = self.declare(node.target, INT32, node)
        static = all(isinstance(b, ir.Const) for b in bounds)
        name = node.target.value
        outer = self.loop_values.pop(name, None)
        if static:  # `t[i]` of a tuple may select by it (tuple_values.tuple_item)
            a, b, step = (cast(int, cast(ir.Const, x).value) for x in bounds)
            self.loop_values[name] = (self.assign_counts[name], range(a, b, step))
        self.loop_depth += 1
        try:
            body = self.block(node.body)
        finally:
            self.loop_depth -= 1
            self.loop_values.pop(name, None)
            if outer is not None:
                self.loop_values[name] = outer
        return ir.For(var, bounds[0], bounds[1], bounds[2], body, self.span(node), static)

    def reversed_range(self, bounds: list[ir.Expr], node: cst.Call) -> list[ir.Expr]:
        """(start, stop, step) of `reversed(range(a, b, s))`: the same values last to first, as
        `range(a + ((b - a - 1) // s) * s, a - s, -s)` for s > 0 (with s < 0, `(a - b - 1) // -s`),
        which is empty exactly when the range is (a run-time step: run_time_reversed)."""
        a, b, step = bounds
        if not isinstance(step, ir.Const):
            return self.run_time_reversed(a, b, step, node)
        s = cast(int, step.value)  # an index's constant: an int
        span = self.span(node)
        if isinstance(a, ir.Const) and isinstance(b, ir.Const):
            backwards = range(cast(int, a.value), cast(int, b.value), s)[::-1]
            return [self.const_expr(v, node) for v in (backwards.start, backwards.stop, backwards.step)]
        def k(v: int) -> ir.Const:
            return ir.Const(v, INT32, span, weak=True)
        if s == 1:  # the common case: range(b - 1, a - 1, -1)
            return [self.make_op("sub", [b, k(1)], {}, node), self.make_op("sub", [a, k(1)], {}, node), k(-1)]
        gap = self.make_op("sub", [b, a], {}, node) if s > 0 else self.make_op("sub", [a, b], {}, node)
        count = self.make_op("floordiv", [self.make_op("sub", [gap, k(1)], {}, node), k(abs(s))], {}, node)
        last = self.make_op("add", [a, self.make_op("mul", [count, k(s)], {}, node)], {}, node)
        return [last, self.make_op("sub", [a, k(s)], {}, node), k(-s)]

    def run_time_reversed(self, a: ir.Expr, b: ir.Expr, s: ir.Expr, node: cst.Call) -> list[ir.Expr]:
        """reversed(range(a, b, s)) of a step known at run time: `range(last, a - s, -s)`, last =
        `a + ((b - a - sign(s)) // s) * s` where the range has elements (the quotient is then not
        negative, so truncation and floor agree), else `a - s` (empty). A zero step divides by one
        and gives no element (Python raises)."""
        span = self.span(node)

        def op(name: str, *args: ir.Expr) -> ir.Expr:
            return cast(ir.Expr, self.make_op(name, list(args), {}, node))

        def k(v: int) -> ir.Const:
            return ir.Const(v, INT32, span, weak=True)
        up = op("gt", s, k(0))
        nonempty = op("where", up, op("gt", b, a), op("and_", op("lt", s, k(0)), op("gt", a, b)))
        divisor = op("where", op("eq", s, k(0)), k(1), s)
        steps = op("floordiv", op("sub", op("sub", b, a), op("where", up, k(1), k(-1))), divisor)
        stop = op("sub", a, s)
        return [op("where", nonempty, op("add", a, op("mul", steps, s)), stop), stop, op("neg", s)]

    def while_stmt(self, node: cst.While) -> ir.While:
        if node.orelse is not None:
            self.fail("TC0401", "unsupported syntax: while-else", node)
        cond = self.condition(node.test)
        self.loop_depth += 1
        try:
            body = self.block(node.body)
        finally:
            self.loop_depth -= 1
        return ir.While(cond, body, self.span(node))


def _scalar_held(t: TileT | ArrayT) -> Scalar:
    """The scalar a tile or array holds (a @wp.func_grad's float parameters: module.custom_rules
    refuses tiles and arrays of vectors)."""
    assert isinstance(t.dtype, Scalar), t
    return t.dtype


def _diverging(first: BranchPath, current: BranchPath) -> bool:
    """True when two branch paths sit in different arms of the same `if`."""
    for (a_if, a_arm), (b_if, b_arm) in zip(first, current):
        if a_if != b_if:
            return False
        if a_arm != b_arm:
            return True
    return False


def _bound_names(node: cst.CSTNode) -> list[str]:
    targets: list[cst.BaseExpression] = []
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
        targets = [node.target]
    elif isinstance(node, cst.For):
        targets = [node.target]
    names: list[str] = []
    for t in targets:
        if isinstance(t, cst.Name):
            names.append(t.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            names += [e.value.value for e in t.elements if isinstance(e.value, cst.Name)]
    return names


__all__ = ["FunctionChecker", "Options", "Binding"]


def _array_test(node: cst.BaseExpression) -> tuple[str, bool] | None:
    """(name, negated) of a test `a` or `not a` on a bare name (parentheses aside); else None."""
    negated = False
    while isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        negated = not negated
        node = node.expression
    return (node.value, negated) if isinstance(node, cst.Name) else None


def _has_return(body: cst.BaseSuite) -> bool:
    """Whether a `return` statement is written anywhere in body (a failed one was reported already)."""
    return any(isinstance(s, cst.Return) for s in statements(body))


def _tested_names(body: cst.BaseSuite, if_exps: bool) -> set[str]:
    """The names an `if`/`elif` test of body, or an `x if test else y`'s (where `if_exps` says the body may
    hold one), tests alone (`if a:`, `if not a:`), or as an operand of its `and` / `or` (`if a and a[i] > 0:`),
    nested blocks included."""
    tested = {name for s in statements(body) if isinstance(s, cst.If) for name in _array_tests(s.test)}
    if not if_exps:
        return tested
    return tested | {name for n in subnodes(body) if isinstance(n, cst.IfExp) for name in _array_tests(n.test)}


_IF_EXP_ELSE = re.compile(r"\belse\b(?!\s*:)")  # an `else` that is no `else:` clause


@functools.lru_cache(maxsize=16)
def _has_if_exp_else(source: str) -> bool:
    return _IF_EXP_ELSE.search(source) is not None


def _array_tests(node: cst.BaseExpression) -> set[str]:
    """The bare names a test tests (`a`, `not a`), alone or as operands of its `and` / `or`."""
    if isinstance(node, cst.BooleanOperation):
        return _array_tests(node.left) | _array_tests(node.right)
    tested = _array_test(node)
    return {tested[0]} if tested is not None else set()


def _shown(node: cst.BaseExpression, truth: bool) -> set[str]:
    """The bare names a test shows true (truthy: a passed array) where the test is `truth`:
    `a` true shows a; `not a` false shows a; `x and y` true shows both's, `x or y` false both's."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return _shown(node.expression, not truth)
    if isinstance(node, cst.Name):
        return {node.value} if truth else set()
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And) == truth:
        return _shown(node.left, truth) | _shown(node.right, truth)
    return set()


def _leaves(body: cst.BaseSuite) -> bool:
    """The block always leaves the kernel: its last statement is a `return`."""
    last = body.body[-1] if isinstance(body, cst.IndentedBlock) and body.body else body
    smalls = last.body if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ()
    return bool(smalls) and isinstance(smalls[-1], cst.Return)
