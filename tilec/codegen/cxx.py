"""C++ emission of typed, normalized IR, shared by the CPU and CUDA backends.

Expects normalized IR (see normalize.py). Produces function bodies as text;
backends wrap them with templates. Every statement is preceded by a
`// file.py:LINE` comment. Op semantics live in runtime_headers: this module
only spells calls to `tl::<op>`.
"""
from __future__ import annotations

import math
import re
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from .. import ir, naming
from ..passes.normalize import is_fusible
from .analysis import ops_called
from .element_loops import IN_RANGE, ROW, broadcast_kind, reruns_in_range, rows_read_by, split_extent
from .extreme_adds import extreme_adds
from .fused_loops import FusedLoop, fused_loops
from .loop_adds import loop_adds
from .matmul_adds import matmul_adds
from .operand_views import MatmulSumLoop, array_operands, matmul_sums, transposed_operands, window_operands
from .row_views import RowTake, rows_added_in_place, rows_read_in_place, rows_taken, rows_written_in_place, taken_by_loops
from .tile_print import warp_storage
from .zero_stores import zero_stores
from ..ops import MUTATES, OPS, decompositions
from ..ops.creation import arange_bound
from ..diagnostics import Span
from ..ir.types import BOOL, FLOAT32, ArrayT, Dim, Element, MatT, NoneT, Scalar, StackT, StructT, TileT, TupleT, Type, VecT

# A CPU tile above this size lives on the heap: worker threads and lane fibers have small stacks.
HEAP_TILE_BYTES = 64 * 1024

INFIX = {
    "add": "+", "sub": "-", "mul": "*", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
    "eq": "==", "ne": "!=", "and_": "&&", "or_": "||", "bit_and": "&", "bit_or": "|",
    "bit_xor": "^", "lshift": "<<", "rshift": ">>",
}  # fmt: skip
PREFIX = {"neg": "-", "not_": "!", "invert": "~"}
# Attributes passed to the runtime call (others are encoded in the result type).
CALL_ATTRS = {
    "tile_load": ("bounds_check",), "tile_store": ("bounds_check",),
    "tile_atomic_add": ("bounds_check",), "tile_load_indexed": ("axis",),
    "tile_store_indexed": ("axis",), "tile_atomic_add_indexed": ("axis",),
    "tile_sum": ("axis",), "tile_max": ("axis",), "tile_min": ("axis",),
    "tile_argmax": ("axis",), "tile_argmin": ("axis",), "tile_reduce": ("axis",),
    "tile_matmul": ("alpha", "beta"), "tile_extreme_grad": ("axis", "is_max"),
    "tile_reduce_grad": ("axis", "op"), "tile_scan_grad": ("exclusive",),
    "tile_tri_outer_grad": ("lower",), "tile_scan_extreme_grad": ("is_max",),
    "tile_cholesky": ("fill_mode",), "tile_cholesky_solve": ("fill_mode",),
    "tile_cholesky_inplace": ("fill_mode",), "tile_cholesky_solve_inplace": ("fill_mode",),
    "assert_": ("message",), "tile_gather": ("axis",), "tile_gather_add": ("axis",),
}  # fmt: skip
# The builtin tile_reduce operators with an identity (Warp declares these four; reduce.h fold_identity):
# what a partial block's group without an active element folds to.
FOLD_IDENTITIES = {"add": "tl::FOLD_ZERO", "mul": "tl::FOLD_ONE", "max": "tl::FOLD_LOWEST", "min": "tl::FOLD_HIGHEST"}
LEADING_ATTRS = {"print_format": ("format",)}  # attributes the runtime call takes before the values
# Side effects of a whole tile: once per block (the leader, between barriers, in the GPU model).
TILE_EFFECTS = {"tile_store", "tile_atomic_add", "tile_store_indexed", "tile_atomic_add_indexed"}


def ctype(t: Type) -> str:
    if isinstance(t, (Scalar, VecT, MatT)):
        return t.ctype
    if isinstance(t, TileT):
        return f"tl::Tile<{_element_ctype(t.dtype)}, {', '.join(str(d) for d in t.shape)}>"
    if isinstance(t, ArrayT):
        return f"tl::Array<{_element_ctype(t.dtype)}, {t.ndim}>"
    if isinstance(t, StackT):
        return f"tl::Stack<{t.dtype.ctype}, {t.capacity}>"
    if isinstance(t, NoneT):
        return "void"
    raise TypeError(t)


def _element_ctype(t: Element) -> str:
    """A tile's or array's element type in C++ (the IR past the checker holds no structs)."""
    assert not isinstance(t, StructT), t
    return t.ctype


def _value_ctype(t: Type) -> str:
    """The C++ type of a scalar, vector or matrix."""
    assert isinstance(t, (Scalar, VecT, MatT)), t
    return t.ctype


def _unlooped(body: list[str], idx: str) -> list[str] | None:
    """A one-iteration element loop's body lines as plain statements: one level less indented, the
    element index `idx` read as 0. None (keep the loop) where `idx` is read other than as `[idx]` or
    the body declares a loop local (codegen/fused_loops.py), whose name the loop's scope keeps apart."""
    out = [line[4:] if line.startswith("    ") else line for line in body]
    out = [line.replace(f"[{idx}]", "[0]") for line in out]
    if any(re.search(rf"\b{idx}\b", line) or naming.ELEMENT_LOCAL in line for line in out):
        return None
    return out


def _tile_type(t: Type) -> TileT:
    """t, a tile's type (what the op, or the statement's target, holds)."""
    assert isinstance(t, TileT), t
    return t


def _array_type(t: Type) -> ArrayT:
    """t, an array's type."""
    assert isinstance(t, ArrayT), t
    return t


def c_string(text: str) -> str:
    """A C string literal of any text: printable ASCII as is (but `\\`, `"`, `?`), every other byte
    as a three-digit octal escape, so no user text can end the literal or form a trigraph."""
    out = []
    for byte in text.encode("utf-8"):
        c = chr(byte)
        if c in '\\"?' or not 32 <= byte < 127:
            out.append(f"\\{byte:03o}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def literal(value: float, t: Scalar | VecT | MatT) -> str:
    if isinstance(t, (VecT, MatT)):  # a value type's constant: its zero (adjoint accumulators)
        assert value == 0, value
        return f"{t.ctype}{{}}"
    if t == BOOL:
        return "true" if value else "false"
    if t.is_float:
        v = float(value)
        if math.isinf(v):
            inner = f"std::numeric_limits<{'float' if t.bits == 32 else 'double'}>::infinity()"
            text = inner if v > 0 else f"-{inner}"
        elif math.isnan(v):
            text = "std::numeric_limits<double>::quiet_NaN()"
        else:
            text = repr(v)
            if "e" not in text and "." not in text:
                text += ".0"
            if t.bits == 32:
                text += "f"
        if t.storage_only:
            return f"{t.ctype}({text})" if text.endswith("f") or "numeric_limits" in text else f"{t.ctype}({text}f)"
        return text
    if t.bits == 64:
        return f"uint64_t({int(value)}ULL)" if t.kind == "uint" else f"int64_t({int(value)}LL)"
    if t.kind == "uint":
        return f"{t.ctype}({int(value)}u)"
    return f"{t.ctype}({int(value)})" if t.bits != 32 else str(int(value))


@dataclass
class Target:
    """What differs between backends: qualifiers and names."""

    name: str  # "cpu" or "cuda"
    func_qualifier: str  # before device functions
    filename: str  # the user's file name as written in comments
    line_directives: bool = False  # also emit `#line N "file.py"` so compiler errors point at the source

    @property
    def gpu(self) -> bool:
        """The .cu model: tiles belong to the block (registers spread over its threads, or shared
        memory; gpu_tiles.py), not to a lane."""
        return self.name == "cuda"


class CxxEmitter:
    def __init__(self, target: Target) -> None:
        self.target = target
        self.lines: list[str] = []
        self.depth = 0
        self.temp_counter = 0
        self.registers: frozenset[ir.Sym] = frozenset()  # GPU model (gpu_tiles.py): tiles in the threads' registers
        self.slot: str | None = None  # inside a register-layout loop: the slot variable
        self.windows: dict[ir.Sym, ir.OpCall] = {}  # CPU: tile views a matmul reads in place (operand_views.py)
        self.rows_of: TileT | None = None  # inside an element loop split into rows: its tile (element_loops.py)
        self.views: dict[ir.Sym, ir.Var] = {}  # CPU: transpose temporaries a matmul reads in place (operand_views.py)
        self.arrays: dict[ir.Sym, ir.OpCall] = {}  # CPU: loaded tiles a matmul reads from the array (operand_views.py)
        self.rows_in: dict[ir.Sym, ir.OpCall] = {}  # CPU: one-row loads the next element loop reads in place (row_views.py)
        self.rows_out: dict[ir.Sym, ir.OpCall] = {}  # CPU: element loops writing their tile_store's row in place
        self.rows_add: dict[ir.Sym, ir.OpCall] = {}  # CPU: element loops adding into their tile_atomic_add's row in place
        self.takes: dict[ir.Sym, RowTake] = {}  # CPU: one-row loads whose zeroed row the next loop reads (row_views.py)
        self.take_stores: set[int] = set()  # ids of those zeroing stores (the loop zeroes the row)
        self.take_loops: dict[int, list[ir.Sym]] = {}  # id of the loop's statement -> the tiles it takes
        self.pending_takes: list[ir.Sym] = []  # the next element loop reads these rows and zeroes them
        self.loop_adds: dict[int, list[ir.ExprStmt]] = {}  # CPU: id of a run's first member -> the adds its loop makes
        self.loop_added: dict[int, tuple[str, ir.Sym]] = {}  # id of such an add -> (where the loop added, the tile)
        self.pending_adds: list[ir.ExprStmt] = []  # the next element loop makes these adds
        self.sums: dict[int, MatmulSumLoop] = {}  # CPU: loops whose matmuls are summed after them (operand_views.py)
        self.absorbed: set[int] = set()  # ids of a summed loop's zeros and store, emitted with the loop
        self.sum_of: dict[int, str] = {}  # inside such a loop: id of its matmul -> the MatmulSum gathering it
        self.matmul_adds: dict[int, ir.Assign] = {}  # CPU: id of an add into sums -> the product it multiplies in (matmul_adds.py)
        self.extreme_adds: dict[int, tuple[ir.Assign, ir.Expr]] = {}  # CPU: id of an add of a max/min gradient ->
        # (the gradient's assignment, the add's other operand) (extreme_adds.py)
        self.zero_stores: dict[int, ir.Assign] = {}  # CPU: id of a tile_store of zeros -> the zeros' assignment (zero_stores.py)
        # the assignments those three peepholes absorb (a product, a gradient, zeros): id -> the comment
        # left in their place; their targets are not declared
        self.absorbed_values: dict[int, tuple[ir.Assign, str]] = {}
        self.fused: dict[int, FusedLoop] = {}  # CPU: id of a run's first statement -> the run, in one loop
        self.fused_rest: set[int] = set()  # ids of the runs' other statements (emitted with the first)
        self.loop_elements: dict[ir.Sym, str] = {}  # inside a fused loop: tiles kept as the body's locals
        self.in_range_seen: str | None = None  # inside element_loop_in_range's first loop: its tl::InRange
        self.in_range_funcs: frozenset[str] = frozenset()  # CPU: funcs with an in-range variant (emit.py)
        self.fn: ir.Function | None = None  # the function being emitted (print_tile's storage label)
        self.where_span: Span | None = None  # the span of the last source-line comment, and the comment:
        self.where_text = ""  # an adjoint's statements share their source statement's span

    # ------------------------------------------------------------ helpers

    def emit(self, text: str) -> None:
        if text == "ctx.sync();" and self.last_code_line() == "ctx.sync();":
            return  # back-to-back barriers (only source-line comments between): one is enough
        self.lines.append("    " * self.depth + text)

    def last_code_line(self) -> str:
        for line in reversed(self.lines):
            code = line.strip()
            if not (code.startswith("//") or code.startswith("#line")):
                return code
        return ""

    def where(self, span: Span) -> None:
        if span is not self.where_span:
            self.where_span, self.where_text = span, f"// {self.target.filename}:{span.line}"
        self.lines.append("    " * self.depth + self.where_text)  # (emit's test: a comment is no barrier)
        if self.target.line_directives:
            self.lines.append(f'#line {span.line} "{self.target.filename}"')

    def temp(self) -> str:
        self.temp_counter += 1
        return naming.cxx_temp(self.temp_counter)

    # ------------------------------------------------------------ functions

    def function(self, fn: ir.Function, name: str, extra_params: str = "",
                 param_types: Mapping[ir.Sym, str] | None = None) -> str:
        """A C++ function `name(tl::Ctx& ctx, params...)` holding fn's body; param_types: the C++
        type of parameters passed as something else than their IR type says (tile_sums.py)."""
        self.lines, self.depth = [], 0
        given = param_types or {}
        params = ", ".join(["tl::Ctx& ctx"] + [
            f"{given[p] if p in given else ctype(p.type) + ('&' if i in fn.byref else '')} {naming.cxx_var(p)}"
            for i, p in enumerate(fn.params)])
        ret = ctype(fn.ret)
        self.emit(f"{self.target.func_qualifier}{ret} {name}({params}{extra_params}) {{")
        self.depth += 1
        self.uses_tape = uses_tape(fn)
        self.views = {} if self.target.gpu else transposed_operands(fn)
        self.arrays = {} if self.target.gpu else array_operands(fn, self.views)
        self.windows = {} if self.target.gpu else window_operands(fn, self.views)
        self.rows_in = {} if self.target.gpu else rows_read_in_place(fn)
        self.rows_out = {} if self.target.gpu else rows_written_in_place(fn, self.rows_in)
        self.sums = matmul_sums(fn, self.arrays, self.windows)
        self.absorbed = {id(x) for loop in self.sums.values() for x in (loop.zeros, loop.store) if x is not None}
        self.matmul_adds = {} if self.target.gpu else matmul_adds(fn, given.keys())
        self.extreme_adds = {} if self.target.gpu else extreme_adds(fn, written_elsewhere=self.rows_out.keys())
        self.rows_add = {} if self.target.gpu else rows_added_in_place(fn, self.rows_in, given.keys(), self.extreme_adds)
        self.zero_stores = {} if self.target.gpu else zero_stores(fn)
        self.absorbed_values = {
            **{id(m): (m, "multiplied by the add below straight into its sums") for m in self.matmul_adds.values()},
            **{id(g): (g, "added in place by the add below") for g, _ in self.extreme_adds.values()},
            **{id(z): (z, "zeros, written by the store below") for z in self.zero_stores.values()}}
        built_from_others = {*self.absorbed, *self.matmul_adds, *self.extreme_adds}  # emitted from earlier statements
        taken = {*built_from_others, *self.absorbed_values, *self.zero_stores}
        in_place = {*self.rows_in, *self.rows_out, *self.rows_add, *self.views, *self.arrays, *self.windows}
        self.fused = {} if self.target.gpu else fused_loops(fn, taken=taken, fixed=built_from_others, in_place=in_place,
                                                            movable=self.rows_in.keys())
        candidates = {} if self.target.gpu else rows_taken(fn, self.zero_stores, taken)
        loop_of = taken_by_loops(candidates, self.fused)
        self.takes = {sym: candidates[sym] for sym in loop_of}
        self.take_stores = {id(t.store) for t in self.takes.values()}
        self.take_loops = {}
        for sym, loop in loop_of.items():
            self.take_loops.setdefault(loop, []).append(sym)
        taken_rows = {sym: (loop, self.takes[sym].load) for sym, loop in loop_of.items()}
        self.loop_adds = {} if self.target.gpu else loop_adds(fn, self.fused, taken_rows, self.rows_in, in_place)
        self.loop_added = {}
        for adds in self.loop_adds.values():
            for k, add in enumerate(adds):
                assert isinstance(add.expr, ir.OpCall) and isinstance(add.expr.args[1], ir.Var)  # loop_adds
                tile = add.expr.args[1].sym
                self.loop_added[id(add)] = (naming.cxx_loop_add(tile, k), tile)
        self.fused_rest = {id(m) for loop in self.fused.values() for m in (*loop.members[1:], *loop.hoisted)}
        self.tile_storage = dict(fn.storage)
        self.fn = fn
        self.declare_locals(fn)
        self.block(fn.body)
        self.depth -= 1
        self.emit("}")
        return "\n".join(self.lines)

    def declare_locals(self, fn: ir.Function) -> None:
        """Every local at the top of the body; tiles a top-level statement writes first start unset."""
        assigned_first = definitely_assigned_first(fn)
        undeclared = {a.target for a, _ in self.absorbed_values.values()}
        undeclared.update(sym for loop in self.fused.values() for sym in loop.elements)
        for sym in local_syms(fn):
            if sym in self.views or sym in self.arrays or sym in self.windows or sym in undeclared:
                continue
            if isinstance(sym.type, TileT) and sym.type.nbytes > HEAP_TILE_BYTES:  # too big for a stack
                zero = "false" if sym in assigned_first else "true"
                self.emit(f"tl::HeapTile<{ctype(sym.type)}> {naming.cxx_heap(sym)}({zero});")
                self.emit(f"auto& {naming.cxx_var(sym)} = *{naming.cxx_heap(sym)};")
            elif isinstance(sym.type, TileT) and sym in assigned_first:
                self.emit(f"{ctype(sym.type)} {naming.cxx_var(sym)};")  # written before any read
            else:
                self.emit(f"{ctype(sym.type)} {naming.cxx_var(sym)}{{}};")
        self.declare_local_arrays(fn)

    def declare_local_arrays(self, fn: ir.Function) -> None:
        """The elements of each local array (wp.zeros in the body); its call zero-fills them where the
        source makes it."""
        for sym, count in local_arrays(fn).items():
            assert isinstance(sym.type, ArrayT), sym
            self.emit(f"{ctype(sym.type.dtype)} {naming.cxx_local_storage(sym)}[{count}];")

    def block(self, body: Iterable[ir.Stmt]) -> None:
        for s in body:
            self.stmt(s)

    # ------------------------------------------------------------ statements

    def stmt(self, s: ir.Stmt) -> None:
        if id(s) in self.fused_rest:
            return  # emitted with its run: in the loop, or before it
        self.pending_takes = self.take_loops.get(id(s), [])  # (element_loop emits them)
        self.pending_adds = self.loop_adds.get(id(s), [])
        if id(s) in self.fused:
            loop = self.fused[id(s)]
            for h in loop.hoisted:
                self.plain_stmt(h)
            self.fused_loop(loop)
        else:
            self.plain_stmt(s)
        assert not self.pending_takes and not self.pending_adds, "a loop's row take or add without its loop"

    def plain_stmt(self, s: ir.Stmt) -> None:
        """A statement where it stands (any fused loop it belongs to aside)."""
        if _is_tape_ready(s) and not (self.target.gpu and self.uses_tape):
            return  # only a GPU tape of fixed size needs the check (and its source-line comment)
        if isinstance(s, ir.Assign) and s.target in self.views:
            return  # the matmul that follows reads the operand transposed in place
        if isinstance(s, ir.Assign) and s.target in self.arrays:
            assert isinstance(s.value, ir.OpCall), s  # its tile_load (operand_views.py)
            self.where(s.span)  # the load stays visible: the matmul below reads the tile from the array
            self.emit(f"// {naming.cxx_var(s.target)}: read by its tile_matmul from {self.expr(s.value.args[0])}")
            return
        if isinstance(s, ir.Assign) and s.target in self.windows:
            self.where(s.span)  # the view stays visible: the matmul below reads the window in place
            view = self.windows[s.target]
            self.emit(f"// {naming.cxx_var(s.target)}: read by its tile_matmul in place from {self.expr(view.args[0])}")
            return
        if id(s) in self.absorbed:  # a summed loop's zeros or store (for_loop)
            if isinstance(s, ir.Assign):
                self.where(s.span)
                self.emit(f"// {naming.cxx_var(s.target)}: zeros, made by the sum of the loop below")
            return
        self.where(s.span)
        if id(s) in self.absorbed_values:  # the statement that reads it below computes it there
            assigned, comment = self.absorbed_values[id(s)]
            self.emit(f"// {naming.cxx_var(assigned.target)}: {comment}")
            return
        self.aligned_check(s)
        if isinstance(s, ir.ExprStmt) and id(s) in self.matmul_adds:
            self.matmul_add(s, self.matmul_adds[id(s)])
        elif isinstance(s, ir.Assign) and id(s) in self.extreme_adds:
            self.extreme_add(s, *self.extreme_adds[id(s)])
        elif isinstance(s, ir.ExprStmt) and id(s) in self.loop_added:  # the loop above added the tile, or not
            name = self.loop_added[id(s)][0]
            self.emit(f"if ({name} == {name}_tile.data) {self.loop_add_call('tile_atomic_add', s, name)};")
        elif isinstance(s, ir.ExprStmt) and id(s) in self.take_stores:
            assert isinstance(s.expr, ir.OpCall)  # zero_stores: a tile_store
            self.emit(f"// {self.expr(s.expr.args[0])}: the row zeroed by the loop below as it reads it")
        elif isinstance(s, ir.ExprStmt) and id(s) in self.zero_stores:
            self.zero_store(s, self.zero_stores[id(s)])
        elif isinstance(s, ir.Assign) and id(s) in self.sum_of:
            assert isinstance(s.value, ir.OpCall)  # matmul_sums: the loop's tile_matmul
            a, b = (self.expr(x) for x in s.value.args[:2])
            self.emit(f"{self.sum_of[id(s)]}.add({a}, {b});")
        elif isinstance(s, ir.Assign):
            self.assign(s.target, s.value)
        elif isinstance(s, ir.Unpack):
            self.unpack(s)
        elif isinstance(s, ir.ExprStmt):
            self.effect(s.expr)
        elif isinstance(s, ir.If):
            self.emit(f"if ({self.expr(s.cond)}) {{")
            self.nested(s.body)
            if s.orelse:
                self.emit("} else {")
                self.nested(s.orelse)
            self.emit("}")
        elif isinstance(s, ir.For):
            self.for_loop(s)
        elif isinstance(s, ir.While):
            self.emit(f"while ({self.expr(s.cond)}) {{")
            self.nested(s.body)
            self.emit("}")
        elif isinstance(s, ir.Break):
            self.emit("break;")
        elif isinstance(s, ir.Continue):
            self.emit("continue;")
        elif isinstance(s, ir.Return):
            self.emit("return;" if s.value is None else f"return {self.expr(s.value)};")
        else:
            raise TypeError(type(s))

    def extreme_add(self, add: ir.Assign, gradient: ir.Assign, other: ir.Expr) -> None:
        """`s = u + t` of `t = tile_extreme_grad(a, g)`: s = u, then g added in place (extreme_adds.py)."""
        dst = naming.cxx_var(add.target)
        self.assign_tile(dst, add.target, other)
        call = gradient.value
        assert isinstance(call, ir.OpCall)  # extreme_adds: a tile_extreme_grad
        self.emit(self.runtime_call("tile_extreme_grad_add", dst, call, list(call.args)) + ";")

    def zero_store(self, store: ir.ExprStmt, zeros: ir.Assign) -> None:
        """`tile_store(a, z)` of `z = tile_zeros(...)`: zeros written into the array (zero_stores.py)."""
        call = store.expr
        assert isinstance(call, ir.OpCall)  # zero_stores: a tile_store
        args = [call.args[0], *(a for a in call.args if _is_offset(call, a))]
        cpp = f"tile_store_zeros<{ctype(zeros.target.type)}>"
        self.emit(self.leader_block(self.runtime_call(cpp, None, call, args) + ";"))

    def matmul_add(self, add: ir.ExprStmt, product: ir.Assign) -> None:
        """`tile_atomic_add(sums, z)` of `z = tile_matmul(a, b)`: C += a b in the sums (matmul_adds.h)."""
        assert isinstance(add.expr, ir.OpCall) and isinstance(product.value, ir.OpCall)  # matmul_adds.py
        call = add.expr
        offsets = [self.expr(a) for a in call.args if _is_offset(call, a)]
        operands = [self.expr(x) for x in (call.args[0], *product.value.args[:2])]
        self.emit(f"tl::tile_matmul_add({', '.join(['ctx', *operands, *offsets])});")

    def aligned_check(self, s: ir.Stmt) -> None:
        """A tile_load/tile_store with aligned=True of a 2-d or larger shared tile (where Warp takes its
        16-byte vector path): --debug builds check what Warp assumes of the array (runtime debug.h)."""
        e = s.value if isinstance(s, ir.Assign) else (s.expr if isinstance(s, ir.ExprStmt) else None)
        if not (isinstance(e, ir.OpCall) and e.op in ("tile_load", "tile_store") and e.attr("aligned")):
            return
        load = e.op == "tile_load"
        tile = e.type if load else e.args[1].type
        shared = e.attr("storage") == "shared" if load else (
            isinstance(e.args[1], ir.Var) and self.tile_storage.get(e.args[1].sym) == "shared")
        if not (isinstance(tile, TileT) and tile.ndim >= 2 and shared):
            return
        count = e.attr("offset_count") or 0
        offsets = [self.expr(a) for a in e.args[len(e.args) - count:]] if count else []
        where = c_string(f"{self.target.filename}:{s.span.line}: {e.op}(..., aligned=True)")
        self.emit(f"tl::check_aligned<{ctype(tile)}>({', '.join(['ctx', self.expr(e.args[0]), where] + offsets)});")

    def nested(self, body: Iterable[ir.Stmt]) -> None:
        self.depth += 1
        self.block(body)
        self.depth -= 1

    def for_loop(self, s: ir.For) -> None:
        var = naming.cxx_var(s.var)
        stop, step = self.temp(), self.temp()
        self.emit("{")
        self.depth += 1
        self.emit(f"const int32_t {stop} = {self.expr(s.stop)};")
        self.emit(f"const int32_t {step} = {self.expr(s.step)};")
        if isinstance(s.step, ir.Const):
            assert isinstance(s.step.value, int), s.step  # a loop's constant step: an int32
            cond = f"{var} < {stop}" if s.step.value > 0 else f"{var} > {stop}"
        else:
            cond = f"({step} > 0 ? {var} < {stop} : {var} > {stop})"
        summed = self.sums.get(id(s))
        total = ""
        if summed is not None:  # the products, gathered in the loop and summed once after it (linalg.h)
            matmul = summed.matmul
            assert isinstance(matmul.value, ir.OpCall)  # matmul_sums: a tile_matmul
            acc, total = naming.cxx_var(matmul.target), self.temp()
            depth = _tile_type(matmul.value.args[0].type).shape[1]
            zero = ", true" if summed.zeros is not None else ""  # acc starts at zero (its tile_zeros)
            self.emit(f"// {acc} += the loop's products, summed once after it")
            self.emit(f"tl::MatmulSum<{ctype(matmul.target.type)}, {depth}> {total}(ctx, {acc}{zero});")
            self.sum_of[id(matmul)] = total
        self.emit(f"for ({var} = {self.expr(s.start)}; {cond}; {var} += {step}) {{")
        self.nested(s.body)
        self.emit("}")
        if summed is not None:
            del self.sum_of[id(summed.matmul)]
            store = summed.store
            if store is None:
                self.emit(f"{total}.finish();")
            else:  # straight into the array where the tile lies inside it, else acc and the store
                assert isinstance(store.expr, ir.OpCall)  # matmul_sums: a tile_store
                self.where(store.span)
                array, _, row, col = (self.expr(x) for x in store.expr.args)
                self.emit(f"if (!{total}.finish_into({array}, {row}, {col})) {{")
                self.depth += 1
                self.effect(store.expr)
                self.depth -= 1
                self.emit("}")
        self.depth -= 1
        self.emit("}")

    def assign(self, target: ir.Sym, value: ir.Expr) -> None:
        dst = naming.cxx_var(target)
        if isinstance(value, ir.OpCall) and value.op == "zeros":  # a local array: its elements declared at the top
            dims = ", ".join(str(d) for d in _local_shape(value))
            assert isinstance(target.type, ArrayT), target
            self.emit(f"{dst} = tl::local_array<{ctype(target.type.dtype)}, {target.type.ndim}>("
                      f"{naming.cxx_local_storage(target)}, {dims});")
            return
        if isinstance(target.type, StackT) and isinstance(value, ir.OpCall) and value.op == "tile_stack":
            self.emit(f"{dst} = tl::tile_stack<{target.type.dtype.ctype}, {target.type.capacity}>(ctx, "
                      f"{self.stack_memory(target)});")
            return
        if not isinstance(target.type, TileT):
            self.emit(f"{dst} = {self.expr(value)};")
            return
        if target in self.rows_in:  # the next element loop reads the row in place when it can (row_views.py)
            assert isinstance(value, ir.OpCall)  # its tile_load
            element = ctype(_tile_type(target.type).dtype)
            call = self.runtime_call("tile_load_row", dst, value, list(value.args))
            self.emit(f"const {element}* {naming.cxx_row(target)} = {call};")
            return
        if target in self.takes:  # the next element loop reads the row and zeroes it when it can (row_views.py)
            assert isinstance(value, ir.OpCall)  # its tile_load
            element = ctype(_tile_type(target.type).dtype)
            call = self.runtime_call("tile_take_row", dst, value, list(value.args))
            self.emit(f"{element}* {naming.cxx_row(target)} = {call};")
            return
        self.assign_tile(dst, target, value)

    def stack_memory(self, target: ir.Sym) -> str:
        """CPU: a stack's storage is per declaration (a block's lanes are fibers of one OS thread)."""
        site = zlib.crc32(f"{target.name}\0{target.id}\0{self.lines[0] if self.lines else ''}".encode()) & 0x7FFFFFFF
        assert isinstance(target.type, StackT), target
        return f"tl::cpu_stack_memory<{target.type.nbytes}, {site}>()"

    def assign_tile(self, dst: str, target: ir.Sym, value: ir.Expr) -> None:
        """A tile assignment: the CPU's tiles are each lane's own values."""
        if isinstance(value, ir.Var):
            self.emit(f"{dst} = {naming.cxx_var(value.sym)};")
        elif isinstance(value, ir.Call):
            self.emit(f"{dst} = {self.call(value)};")
        elif is_fusible(value):
            tile = _tile_type(target.type)
            extent = split_extent(value, tile)
            idx = naming.ELEMENT_INDEX
            out = f"{dst}.data"
            op = "="
            if extent is None and target in self.rows_out:  # written into the store's array row when it can
                store = self.rows_out[target]  # (row_views.py)
                out = naming.cxx_row(target)
                call = self.runtime_call("tile_store_row", None, store, list(store.args))
                self.emit(f"{ctype(tile.dtype)}* {out} = {call};")
            elif extent is None and target in self.rows_add:  # added into the add's array row when it can
                add = self.rows_add[target]  # (row_views.py)
                out, op = naming.cxx_row(target), "+="
                call = self.runtime_call("row_add", None, add, list(add.args))
                self.emit(f"auto {naming.cxx_row_add(target)} = {call};")
                self.emit(f"{ctype(tile.dtype)}* const {out} = {naming.cxx_row_add(target)}.row;")

            def body() -> None:
                self.emit(f"{out}[{idx}] {op} {self.elem(value, idx, tile.dtype)};")

            # an add into the row (+=) never runs twice
            self.element_loop_in_range(tile, extent, body, [(target, value)] if op == "=" else [],
                                       out if extent is None and target in self.rows_out else None)
        else:
            assert isinstance(value, ir.OpCall), value  # a tile's value: a variable, a call or an op
            self.tile_op(dst, target, value)

    def element_loop(self, tile: TileT, extent: int | None, body: Callable[[], None]) -> None:
        """A loop over tile's elements `_e` around body's lines. With an extent (split_extent), over
        rows of `extent` columns: broadcast rows and columns then read their element by the column or
        row index, and the inner loop vectorises."""
        r, c, idx = naming.ROW_INDEX, naming.COLUMN_INDEX, naming.ELEMENT_INDEX
        takes, self.pending_takes = self.pending_takes, []
        adds, self.pending_adds = self.pending_adds, []
        for add in adds:  # where the loop adds each tile (loop_adds.py): the sums, the row, or a tile of its own
            name, added = self.loop_added[id(add)]
            tile_type = _tile_type(added.type)
            self.emit(f"{ctype(tile_type)} {name}_tile;  // (added after the loop where the add cannot go in place)")
            self.emit(f"{ctype(tile_type.dtype)}* const {name} = {self.loop_add_call('loop_add_row', add, name)};")
        if adds:
            summing = body

            def body() -> None:
                summing()
                for add in adds:
                    name, added = self.loop_added[id(add)]
                    self.where(add.span)
                    self.emit(f"{name}[{idx}] += {naming.cxx_var(added)}.data[{idx}];")
        if takes:
            inner = body

            def body() -> None:  # each row taken (row_views.py): its element into the tile, then zeroed
                for sym in takes:
                    element, row, tile_var = ctype(_tile_type(sym.type).dtype), naming.cxx_row(sym), naming.cxx_var(sym)
                    self.emit(f"{{ const {element} _v = {row}[{idx}]; {row}[{idx}] = {element}(0); {tile_var}.data[{idx}] = _v; }}")
                inner()
        if extent is None:
            header = len(self.lines)
            self.emit(f"for (int {idx} = 0; {idx} < {tile.size}; ++{idx}) {{")
            self.depth += 1
            body()
            self.depth -= 1
            self.emit("}")
            if tile.size == 1:  # a one-element tile's "loop": its statements, at element 0
                self.lines[header:] = _unlooped(self.lines[header + 1:-1], idx) or self.lines[header:]
            return
        self.emit(f"for (int {r} = 0; {r} < {tile.size // extent}; ++{r}) {{")
        self.emit(f"    for (int {c} = 0; {c} < {extent}; ++{c}) {{")
        self.depth += 2
        self.emit(f"const int {idx} = {r} * {extent} + {c};")
        self.rows_of = tile
        try:
            body()
        finally:
            self.rows_of = None
        self.depth -= 2
        self.emit("    }")
        self.emit("}")

    def element_loop_in_range(self, tile: TileT, extent: int | None, body: Callable[[], None],
                              assignments: list[tuple[ir.Sym, ir.Expr]], row_written: str | None) -> None:
        """The element loop of `assignments` (element_loop), on the CPU where
        element_loops.reruns_in_range allows it with its float32 exp, log and tanh taking their in-range
        paths and keeping their arguments' largest keys (scalar.h tl::InRange), then, only if a key
        shows an argument outside or NaN, the loop again with the full functions. A loop that takes
        rows or makes adds runs once. `row_written`: the C++ pointer to the array row the loop writes,
        if it does; where the loop also reads rows in place (the arrays may be one through the C++ API),
        the rerun form runs only when a run-time test finds them apart, the plain loop otherwise."""
        if (self.target.gpu or self.pending_takes or self.pending_adds
                or not reruns_in_range(assignments, self.in_range_funcs)):
            self.element_loop(tile, extent, body)
            return
        read = rows_read_by(assignments, self.rows_in.keys()) if row_written is not None else []
        tests = [f"tl::rows_apart({row_written}, {naming.cxx_row(sym)}, {tile.size})" for sym in read]
        if tests:
            self.emit(f"if ({' && '.join(tests)}) {{  // the rows read are not the row written: a rerun reads them unchanged")
        else:
            self.emit("{")
        self.depth += 1
        seen = naming.IN_RANGE_SEEN
        self.emit(f"tl::InRange {seen};  // the largest exp, log and tanh arguments' keys (scalar.h *_in_range)")
        self.in_range_seen = seen
        try:
            self.element_loop(tile, extent, body)
        finally:
            self.in_range_seen = None
        self.emit(f"if ({seen}.any()) {{  // rare: an argument outside, the loop again with the full functions")
        self.depth += 1
        self.element_loop(tile, extent, body)
        self.depth -= 1
        self.emit("}")
        self.depth -= 1
        if tests:
            self.emit("} else {")
            self.depth += 1
            self.element_loop(tile, extent, body)
            self.depth -= 1
        self.emit("}")

    def loop_add_call(self, cpp: str, add: ir.ExprStmt, name: str) -> str:
        """`tl::cpp(ctx, [old,] array, <the add's own tile>, check, offsets)` for an add a loop makes (loop_adds.py)."""
        call = add.expr
        assert isinstance(call, ir.OpCall)  # loop_adds: a tile_atomic_add
        old = ["tl::DiscardOld{}"] if cpp == "tile_atomic_add" else []
        offsets = [self.expr(a) for a in call.args if _is_offset(call, a)]
        parts = ["ctx", *old, self.expr(call.args[0]), f"{name}_tile", self.attr_text(call, "bounds_check"), *offsets]
        return f"tl::{cpp}({', '.join(parts)})"

    def fused_loop(self, loop: FusedLoop) -> None:
        """Consecutive element-wise assignments of one shape in one loop, each under its source line;
        the tiles only the loop reads kept as its locals (fused_loops.py)."""
        idx = naming.ELEMENT_INDEX

        def members() -> None:
            for m in loop.members:
                self.where(m.span)
                dtype = _tile_type(m.target.type).dtype
                value = self.elem(m.value, idx, dtype)
                if m.target in loop.elements:
                    name = naming.cxx_element(m.target)
                    self.emit(f"const {ctype(dtype)} {name} = {value};")
                    self.loop_elements[m.target] = name
                else:
                    self.emit(f"{naming.cxx_var(m.target)}.data[{idx}] = {value};")
            self.loop_elements = {}

        self.element_loop_in_range(loop.tile, loop.extent, members, [(m.target, m.value) for m in loop.members], None)

    def tile_op(self, dst: str, target: ir.Sym, call: ir.OpCall) -> None:
        spec = OPS[call.op]
        mutated = mutated_positions(call)
        for i in mutated:  # an in-place op writing a new variable starts from a copy of its operand
            source = call.args[i]
            if not (isinstance(source, ir.Var) and source.sym == target):
                self.emit(f"{dst} = {self.expr(source)};")
        args = [a for i, a in enumerate(call.args) if i not in mutated]
        reads_dst = any(isinstance(a, ir.Var) and a.sym == target for a in args)
        out = dst
        if reads_dst and not mutated:
            out = self.temp()
            self.emit(f"{ctype(target.type)} {out};")
        text = self.runtime_call(spec.cpp, out, call, args)
        self.emit(text + ";")
        if out != dst:
            self.emit(f"{dst} = {out};")

    def runtime_call(self, cpp: str, out: str | None, call: ir.OpCall, args: list[ir.Expr]) -> str:
        parts = ["ctx"] + ([out] if out is not None else [])
        parts += [self.attr_text(call, name) for name in LEADING_ATTRS.get(call.op, ())]
        offsets = [a for a in args if _is_offset(call, a)]
        values = [a for a in args if not _is_offset(call, a)]
        parts += [self.expr(a) for a in values]
        if call.op == "tile_reduce":
            parts.append(self.reducer(call))
        parts += [self.attr_text(call, name) for name in CALL_ATTRS.get(call.op, ())]
        if call.op == "tile_reduce" and call.attr("op") in FOLD_IDENTITIES:
            parts.append(FOLD_IDENTITIES[call.attr("op")])
        if call.op == "tile_arange":
            start, stop, step = _arange_args(call.attr("args"))
            held = _tile_type(call.type).dtype  # an integer bound rounds once, straight to a float dtype (arange_bound)
            assert isinstance(held, Scalar), call  # tile_arange makes scalar tiles
            parts += [repr(float(arange_bound(start, held))), repr(float(arange_bound(step, held)))]
        if call.op == "tile_matmul" and len(call.args) < 3:
            parts[-1] = "0.0"  # a fresh product: no accumulation into the destination
        parts += [self.expr(a) for a in offsets]
        return f"tl::{cpp}({', '.join(parts)})"

    def attr_text(self, call: ir.OpCall, name: str) -> str:
        value = call.attr(name)
        if name == "axis":
            return "-1" if value is None else str(value % len(_shape_of_first(call)) if value < 0 else value)
        if value is None:  # a call built by a pass without the option: the parameter's default
            value = next(p.default for p in OPS[call.op].params if p.name == name)
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return c_string(value)
        return repr(float(value)) if isinstance(value, float) else str(value)

    def reducer(self, call: ir.OpCall) -> str:
        name = call.attr("op")
        x = "x"
        body = self.apply_func(name, [x, "y"], True)
        return f"[&](auto x, auto y) {{ return {body}; }}"

    def unpack(self, s: ir.Unpack) -> None:
        v = s.value
        if isinstance(v, ir.OpCall) and v.op == "tid":
            for k, sym in enumerate(s.targets):
                self.emit(f"{naming.cxx_var(sym)} = int32_t(ctx.tid[{k}]);")
        elif isinstance(v, ir.OpCall) and v.op == "tile_stack_pop":
            outs = ", ".join(naming.cxx_var(t) for t in s.targets)
            self.emit(f"tl::tile_stack_pop(ctx, {self.expr(v.args[0])}, {outs});")
        elif isinstance(v, ir.OpCall) and v.op in decompositions.FACTORS:  # the runtime writes each factor
            outs = ", ".join(naming.cxx_var(t) for t in s.targets)
            self.emit(f"tl::{OPS[v.op].cpp}({self.expr(v.args[0])}, {outs});")
        elif isinstance(v, ir.OpCall) and v.op in MUTATES:
            names = ", ".join(naming.cxx_var(t) for t in s.targets)
            if self.target.gpu:
                self.emit(f"ctx.sync(); if (ctx.leader()) {{ tl::{OPS[v.op].cpp}(ctx, {names}); }} ctx.sync();")
            else:
                self.emit(f"tl::{OPS[v.op].cpp}(ctx, {names});")
        else:
            raise NotImplementedError(f"unpack of {v}")

    def effect(self, e: ir.Expr) -> None:
        if isinstance(e, ir.OpCall) and e.op == "tape_ready":  # a block whose tape overflowed stops here, unwritten
            self.emit("if (!tl::tape_ready(ctx)) return;")
        elif isinstance(e, ir.OpCall) and e.op == "tape_push":
            value = e.args[0]
            if self.target.gpu:
                kind = "tile" if isinstance(value.type, TileT) else "scalar"
                self.emit(f"tl::tape_push_{kind}(ctx, {self.expr(value)});")
            else:
                self.emit(f"tl::tape_push(ctx, {self.expr(value)});")
        elif isinstance(e, ir.OpCall) and e.op == "tile_atomic_add" and isinstance(e.args[1], ir.Var) and e.args[1].sym in self.rows_add:
            adds = naming.cxx_row_add(e.args[1].sym)  # the loop above added into the array's row, or into the tile
            self.emit(self.runtime_call("row_add_finish", adds, e, list(e.args)) + ";")
        elif isinstance(e, ir.OpCall) and e.op == "tile_atomic_add":  # nobody reads the old values
            self.emit(self.leader_block(self.runtime_call(OPS[e.op].cpp, "tl::DiscardOld{}", e, list(e.args)) + ";"))
        elif isinstance(e, ir.OpCall) and e.op == "tile_atomic_add_indexed":
            old = self.temp()
            text = f"{{ {ctype(e.type)} {old}; {self.runtime_call(OPS[e.op].cpp, old, e, list(e.args))}; }}"
            self.emit(self.leader_block(text))
        elif isinstance(e, ir.OpCall) and e.op == "print_tile":  # once per block, with Warp's storage label
            assert self.fn is not None  # set by function()
            label = warp_storage(self.fn, e.args[0])
            self.emit(self.leader_block(f'tl::print_tile(ctx, {self.expr(e.args[0])}, "{label}");'))
        elif isinstance(e, ir.OpCall) and e.op == "tile_store" and isinstance(e.args[1], ir.Var) and e.args[1].sym in self.rows_out:
            tile = e.args[1].sym  # the loop above wrote the array's row itself, or this tile
            text = self.runtime_call(OPS[e.op].cpp, None, e, list(e.args))
            self.emit(f"if ({naming.cxx_row(tile)} == {naming.cxx_var(tile)}.data) {text};")
        elif isinstance(e, ir.OpCall) and (e.op in ("native_call", "native_adjoint") or OPS[e.op].runtime_call):
            self.emit(f"{self.expr(e)};")  # per thread, as Warp calls it (a snippet, a volume's store)
        elif isinstance(e, ir.OpCall) and e.op in TILE_EFFECTS:
            self.emit(self.leader_block(self.runtime_call(OPS[e.op].cpp, None, e, list(e.args)) + ";"))
        elif isinstance(e, ir.OpCall) and OPS[e.op].effect and not isinstance(e.type, Scalar):
            self.emit(self.runtime_call(OPS[e.op].cpp, None, e, list(e.args)) + ";")  # per thread
        else:
            self.emit(f"(void)({self.expr(e)});")

    def leader_block(self, text: str) -> str:
        """GPU model: a tile side effect runs once, on the leader, after the tile is complete."""
        if not self.target.gpu:
            return text
        return f"ctx.sync(); if (ctx.leader()) {{ {text} }} ctx.sync();"

    # ------------------------------------------------------------ expressions

    def call(self, c: ir.Call) -> str:
        return f"{naming.func_symbol(c.func)}({', '.join(['ctx'] + [self.expr(a) for a in c.args])})"

    def expr(self, e: ir.Expr) -> str:
        if isinstance(e, ir.Const):
            assert isinstance(e.value, (int, float)) and isinstance(e.type, (Scalar, VecT, MatT)), e
            return literal(e.value, e.type)
        if isinstance(e, ir.Var):
            if e.sym in self.views:
                return f"tl::transposed({self.expr(self.views[e.sym])})"
            if e.sym in self.arrays:
                return self.array_tile(e.sym)
            if e.sym in self.windows:
                view = self.windows[e.sym]
                rows, cols = _tile_type(e.sym.type).shape
                parts = [self.expr(a) for a in view.args]
                return f"tl::tile_window<{rows}, {cols}>({', '.join(parts)})"
            if e.sym in self.rows_in:  # a reduction of a row read in place (row_views.py)
                return f"tl::RowRef<{ctype(e.sym.type)}>{{{naming.cxx_row(e.sym)}}}"
            return naming.cxx_var(e.sym)
        if isinstance(e, ir.Call):
            return self.call(e)
        return self.scalar_op(e, [self.expr(a) for a in e.args])

    def array_tile(self, sym: ir.Sym) -> str:
        """tl::array_tile<M, K>(A, row, col): the tile sym's load, unread until the matmul packs it."""
        load = self.arrays[sym]
        count = load.attr("offset_count") or 0
        offsets = [self.expr(a) for a in load.args[len(load.args) - count:]] if count else ["0", "0"]
        rows, cols = _tile_type(sym.type).shape
        return f"tl::array_tile<{rows}, {cols}>({', '.join([self.expr(load.args[0])] + offsets)})"

    def elem(self, e: ir.Expr, idx: str, dtype: Element) -> str:
        """Element `idx` of a tile expression (scalars broadcast)."""
        cls = type(e)  # exact classes: asked of every node of every fused loop
        if cls is ir.Var:
            sym = cast(ir.Var, e).sym
            if isinstance(sym.type, TileT):
                if sym in self.loop_elements:
                    assert idx == naming.ELEMENT_INDEX, "a loop's local is read at its own element"
                    return self.loop_elements[sym]
                if sym in self.registers:
                    assert self.slot is not None and idx == naming.ELEMENT_INDEX, "register tiles are read at their slot"
                    return f"{naming.cxx_var(sym)}.v[{self.slot}]"
                if sym in self.rows_in:
                    return f"{naming.cxx_row(sym)}[{idx}]"
                return f"{naming.cxx_var(sym)}.data[{idx}]"
        elif cls is ir.OpCall:
            call = cast(ir.OpCall, e)
            if call.op == "tile_broadcast":
                src, dst = _tile_type(call.args[0].type), _tile_type(call.type)
                kind = None
                if self.rows_of is not None and idx == naming.ELEMENT_INDEX and dst.shape == self.rows_of.shape:
                    kind = broadcast_kind(src, dst)  # a row reads its column, a column its row (element_loop)
                if src.size == 1:
                    mapped = "0"
                elif kind is not None:
                    mapped = naming.COLUMN_INDEX if kind == ROW else naming.ROW_INDEX
                else:
                    mapped = f"tl::broadcast_index<{ctype(src)}, {ctype(dst)}>({idx})"
                return self.elem(call.args[0], mapped, dtype)
            if is_fusible(call):
                args = [self.elem(a, idx, dtype) for a in call.args]
                if call.op == "tile_map":
                    return self.apply_func(call.attr("op"), args, False, _tile_type(call.type).dtype)
                return self.scalar_op(call, args, _tile_type(call.type).dtype)
        return self.expr(e)

    def apply_func(self, name: str, args: list[str], in_lambda: bool, dtype: Element | None = None) -> str:
        if name in OPS and OPS[name].elementwise:
            fake = ir.OpCall(name, (), (), dtype or BOOL, None)  # type: ignore[arg-type]  # spanless: never reported
            return self.scalar_op(fake, args, dtype)
        if self.in_range_seen is not None and name in self.in_range_funcs:
            return f"{naming.func_in_range_symbol(name)}({', '.join(['ctx'] + args + [self.in_range_seen])})"
        return f"{naming.func_symbol(name)}({', '.join(['ctx'] + args)})"

    def scalar_op(self, e: ir.OpCall, args: list[str], dtype: Element | None = None) -> str:
        op = e.op
        t = dtype if isinstance(dtype, Scalar) else (e.type if isinstance(e.type, Scalar) else None)  # not vec3
        if op in INFIX:
            text = f"({args[0]} {INFIX[op]} {args[1]})"
            if t is not None and (t.storage_only or (t.is_integral and t.bits < 32)):
                return f"{t.ctype}({text})"  # C++ computes in float/int: round or wrap to the dtype
            return text
        if op in PREFIX:
            return f"({PREFIX[op]}{args[0]})"
        if op == "cast":
            return f"tl::cast<{_value_ctype(e.type)}>({args[0]})"
        if op == "bitcast":
            return f"tl::bitcast<{_value_ctype(e.type)}>({args[0]})"
        if op == "value_new":  # wp.vec3(x, y, z): the value type's constructor (per element over tiles)
            return f"{_value_ctype(e.type.dtype if isinstance(e.type, TileT) else e.type)}({', '.join(args)})"
        if op == "array_load":
            return f"tl::array_load({', '.join(args)})"
        if op == "custom_call":
            return f"{naming.func_symbol(e.attr('func'))}({', '.join(['ctx'] + args)})"
        if op in ("native_call", "native_adjoint"):  # the snippet's functions (codegen/natives.py)
            role = "adjoint" if op == "native_adjoint" else "replay" if e.attr("replayed") else "forward"
            given = [f"{naming.NATIVE_NAMESPACE}::as_array({a})" if isinstance(x.type, ArrayT) else a
                     for a, x in zip(args, e.args)]
            return f"{naming.native_symbol(e.attr('func'), role)}({', '.join(given)})"
        if op == "replay_value":
            return args[1]
        if op == "array_view":
            return array_view_text(e, args)
        if op == "array_shape":
            return f"int32_t({args[0]}.shape[{e.attr('axis') % _array_type(e.args[0].type).ndim}])"
        if op == "array_valid":
            return f"({args[0]}.data != nullptr)"
        if op == "tile_extract":
            return f"tl::tile_extract({', '.join(args)})"
        if op == "untile":
            return f"tl::untile(ctx, {args[0]})"
        if op == "block_dim":
            return "int32_t(ctx.block_dim)"
        if op == "lane":
            return "int32_t(ctx.lane)"
        if op == "leader_only":
            return f"tl::leader_only(ctx, {args[0]})"  # a scalar: per thread, on the GPU too
        if op == "tape_pop":
            return f"tl::tape_pop_{'scalar' if self.target.gpu else 'value'}<{_value_ctype(e.type)}>(ctx)"
        if op == "tid":
            return "int32_t(ctx.tid[0])"
        if op in ("tile_stack_push", "tile_stack_count", "tile_stack_push_fields", "tile_stack_get"):
            return f"tl::{OPS[op].cpp}(ctx, {', '.join(args)})"
        if op == "lower_bound":
            return f"tl::lower_bound({', '.join(args)})"
        if op in ("atomic_cas", "atomic_exch"):  # the runtime takes the values before the indices
            values = 2 if op == "atomic_cas" else 1
            ordered = [args[0], *args[len(args) - values:], *args[1:len(args) - values]]
            return f"tl::{OPS[op].cpp}(ctx, {', '.join(ordered)})"
        if op in ("array_store", "array_atomic_add", "array_atomic_sub", "atomic_add", "atomic_min",
                  "atomic_max", "array_atomic_and", "array_atomic_or", "array_atomic_xor", "extreme_take", "array_take"):
            return f"tl::{OPS[op].cpp}(ctx, {', '.join(args)})"
        spec = OPS[op]
        if op in IN_RANGE and self.in_range_seen is not None and t == FLOAT32:
            return f"tl::{IN_RANGE[op]}({args[0]}, {self.in_range_seen})"
        if spec.elementwise or spec.runtime_call:  # (a runtime call not elementwise: its literals keep their dtype)
            return f"tl::{spec.cpp}({', '.join(args)})"
        raise NotImplementedError(f"{op} in a scalar expression")


def array_view_text(e: ir.OpCall, args: list[str]) -> str:
    """tl::array_view_done<M>(tl::array_view(A).at(i).slice(...)): see array_views.h."""
    rest = list(args[1:])
    parts = [f"tl::array_view({args[0]})"]
    for ax in e.attr("axes"):
        if ax[0] == "i":
            parts.append(f"at({rest.pop(0)})")
        else:
            start = rest.pop(0) if ax[1] else "0"
            stop = rest.pop(0) if ax[2] else "0"
            step = rest.pop(0) if ax[3] is None else str(ax[3])  # None: a run-time step
            parts.append(f"slice({'true' if ax[1] else 'false'}, {start}, {'true' if ax[2] else 'false'}, "
                         f"{stop}, {step})")
    return f"tl::array_view_done<{_array_type(e.type).ndim}>({'.'.join(parts)})"


def _is_tape_ready(s: ir.Stmt) -> bool:
    return isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.OpCall) and s.expr.op == "tape_ready"


def uses_tape(fn: ir.Function) -> bool:
    ops = ops_called(fn)  # one walk per Function, shared with the kernel facts (analysis.py)
    return "tape_push" in ops or "tape_pop" in ops


def definitely_assigned_first(fn: ir.Function) -> set[ir.Sym]:
    """Symbols a top-level statement assigns before any statement can read them: their
    declarations need no zero-initialisation (everything else starts at zero, as the adjoint's
    accumulators and values first set inside a branch rely on). Kept while fn lives (the CPU's
    and the GPU's declarations of one forward kernel ask of the same body)."""
    hit = _ASSIGNED_FIRST.get(id(fn))
    if hit is None:
        hit = ir.keep_while_alive(_ASSIGNED_FIRST, fn, id(fn), frozenset(_assigned_first(fn)))
    return set(hit)


_ASSIGNED_FIRST: dict[int, frozenset[ir.Sym]] = {}  # id(Function) -> its answer; dropped with the Function


def _assigned_first(fn: ir.Function) -> set[ir.Sym]:
    assigned: set[ir.Sym] = set()
    read: set[ir.Sym] = set()
    for s in fn.body:
        own: set[ir.Sym] = set()  # what s reads itself (for an assignment: its value)
        for e in ir.stmt_exprs(s):
            own |= ir.read_syms(e)
        read |= own - assigned
        blocks = ir.child_blocks(s)
        if blocks:
            for inner in ir.walk_stmts(tuple(b for block in blocks for b in block)):
                for e in ir.stmt_exprs(inner):
                    read |= ir.read_syms(e) - assigned
        if isinstance(s, ir.Assign) and s.target not in read and s.target not in own:
            assigned.add(s.target)
    return assigned


def _local_shape(call: ir.OpCall) -> tuple[int, ...]:
    shape = call.attr("shape")
    return (shape,) if isinstance(shape, int) else tuple(shape)


def local_arrays(fn: ir.Function) -> dict[ir.Sym, int]:
    """The symbols bound to local arrays (wp.zeros in the body) and the most elements each holds."""
    out: dict[ir.Sym, int] = {}
    for s in ir.walk_stmts(fn.body):
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "zeros":
            out[s.target] = max(out.get(s.target, 0), math.prod(_local_shape(s.value)))
    return dict(sorted(out.items(), key=lambda kv: str(kv[0])))


def local_syms(fn: ir.Function) -> list[ir.Sym]:
    """Every symbol the body binds, declared once at the top (sorted for determinism). Kept while
    fn lives: each backend's declarations and the GPU's memory layout ask of the same body."""
    hit = _LOCALS.get(id(fn))
    if hit is None:
        hit = ir.keep_while_alive(_LOCALS, fn, id(fn), tuple(_local_syms(fn)))
    return list(hit)


_LOCALS: dict[int, tuple[ir.Sym, ...]] = {}  # id(Function) -> its local symbols; dropped with the Function


def _local_syms(fn: ir.Function) -> list[ir.Sym]:
    params = set(fn.params)
    seen: dict[ir.Sym, None] = {}
    for s in ir.walk_stmts(fn.body):
        syms: tuple[ir.Sym, ...] = ()
        if isinstance(s, ir.Assign):
            syms = (s.target,)
        elif isinstance(s, ir.Unpack):
            syms = s.targets
        elif isinstance(s, ir.For):
            syms = (s.var,)
        for sym in syms:
            if sym not in params:
                seen.setdefault(sym, None)
    return list(seen)


def mutated_positions(call: ir.OpCall) -> set[int]:
    if call.op not in MUTATES:
        return set()
    names = [p.name for p in OPS[call.op].params if p.kind == "value"]
    if call.op == "tile_matmul" and len(call.args) < 3:
        return set()
    return {names.index(n) for n in MUTATES[call.op] if n in names}


def _is_offset(call: ir.OpCall, arg: ir.Expr) -> bool:
    """Offset operands come after the value operands, `offset_count` of them."""
    n = call.attr("offset_count") or 0
    return n > 0 and any(arg is a for a in call.args[len(call.args) - n:])


def _arange_args(vals: tuple[Any, ...]) -> tuple[Any, ...]:
    if len(vals) == 1:
        return 0, vals[0], 1
    if len(vals) == 2:
        return vals[0], vals[1], 1
    return vals


def _shape_of_first(call: ir.OpCall) -> tuple[Dim, ...]:
    t = call.args[0].type if call.args else None
    return t.shape if isinstance(t, TileT) else (1,)


_ = (TupleT,)
