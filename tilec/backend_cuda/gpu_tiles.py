"""CUDA emission: the GPU model's tiles, on top of the shared C++ emitter (cxx.py).

A CUDA block runs one tile block. Each tile lives either in registers spread over the block's
threads (tl::Reg, runtime registers.h; chosen by storage.py) or once per block in dynamic shared
memory, where tile operations are shared by the threads (or run on the leader) between barriers.
Past the shared-memory budget (`shared_budget`, bytes), the largest tiles live in the block's slice
of a global scratch buffer instead (`ctx.gmem`, storage.shared_layout), used the same way.
Expects normalized IR whose funcs touching tiles are inlined (emit.plan_cuda).
"""
from __future__ import annotations

from .. import ir, naming
from ..passes.normalize import is_fusible
from ..ops import PER_LANE_WRITES
from ..ir.types import Element, StackT, StructT, TileT, Type
from ..codegen.cxx import CxxEmitter, Target, ctype, definitely_assigned_first, local_syms, mutated_positions
from .storage import is_register_fold, register_tiles, shared_layout, without_identities

# GPU model: tile writes every thread performs (the runtime synchronises), by runtime name.
PER_LANE_GPU = {"tile": "shared_tile_from_lanes", "tile_setitem": "shared_setitem",
                "tile_additem": "shared_additem", "tile_subitem": "shared_subitem", "tile_add_at": "shared_add_at",
                "tile_scatter_add": "shared_scatter_add", "tile_scatter_masked": "shared_scatter_masked",
                "tile_from_thread": "shared_tile_from_thread", "tile_bit_and_inplace": "shared_bit_and_item",
                "tile_bit_or_inplace": "shared_bit_or_item", "tile_bit_xor_inplace": "shared_bit_xor_item",
                "tile_randf": "shared_tile_randf", "tile_randi": "shared_tile_randi"}
# Of those, the ones making a new tile from the lanes' values (the others update their first operand).
PER_LANE_NEW = {"tile", "tile_from_thread", "tile_randf", "tile_randi"}  # random tiles: each lane's own rng
assert set(PER_LANE_GPU) == PER_LANE_WRITES
# GPU model: tile ops the block's threads share (runtime shared_tiles.h), by op name.
COOP_GPU = {"tile_load": "coop_tile_load", "tile_store": "coop_tile_store", "tile_matmul": "coop_tile_matmul",
            "tile_transpose": "coop_tile_transpose", "tile_zeros": "coop_tile_fill_zero",
            "tile_empty": "coop_tile_fill_zero", "tile_ones": "coop_tile_fill_one", "tile_full": "coop_tile_full",
            "tile_reshape": "coop_tile_reshape", "tile_squeeze": "coop_tile_reshape",
            "tile_astype": "coop_tile_astype", "tile_sum": "coop_tile_sum", "tile_max": "coop_tile_max",
            "tile_min": "coop_tile_min"}
# Register-tile results that are elementwise copies of their operand (same element order).
REGISTER_COPIES = {"tile_astype", "tile_reshape", "tile_squeeze"}
REGISTER_FILLS = {"tile_zeros": "0", "tile_empty": "0", "tile_ones": "1"}


class CudaEmitter(CxxEmitter):
    def __init__(self, target: Target, shared_budget: int | None = None) -> None:
        super().__init__(target)
        self.loop_heads: dict[tuple[str, int], tuple[str, ...]] = {}  # (layout, depth) -> register_loop's first lines
        self.shared_budget = shared_budget  # None: every tile not in registers in shared memory
        self.smem_bytes = 0  # shared memory the body's tiles take
        self.scratch_bytes = 0  # the block's global scratch: tiles past the budget
        self.block_dim = 1
        self.scratch_offset = 0  # where register-tile reductions combine partials
        self.stack_offsets: dict[ir.Sym, str] = {}  # stack symbol -> its memory (shared, or global scratch)

    def declare_locals(self, fn: ir.Function) -> None:
        """Register tiles as per-thread values; shared tiles at fixed offsets of the block's memory."""
        assert fn.block_dim is not None, fn.name  # the checker sets every function's block_dim
        self.registers, self.block_dim = register_tiles(fn), fn.block_dim
        layout = shared_layout(fn, self.registers, self.shared_budget)
        offsets = {sym: f"ctx.smem + {offset}" for sym, offset in layout.tiles}
        offsets.update({sym: f"ctx.gmem + {offset}" for sym, offset in layout.global_tiles})
        assigned_first = definitely_assigned_first(fn)
        for sym in local_syms(fn):
            if sym in self.registers:
                init = "" if sym in assigned_first else "{}"
                self.emit(f"{self.register_type(_tile(sym.type))} {naming.cxx_var(sym)}{init};")
            elif isinstance(sym.type, TileT):
                self.emit(f"auto& {naming.cxx_var(sym)} = *reinterpret_cast<{ctype(sym.type)}*>({offsets[sym]});")
            elif isinstance(sym.type, StackT):  # a block stack: its elements and count in shared memory
                self.stack_offsets[sym] = offsets[sym]
                self.emit(f"{ctype(sym.type)} {naming.cxx_var(sym)}{{}};")
            else:
                self.emit(f"{ctype(sym.type)} {naming.cxx_var(sym)}{{}};")
        self.declare_local_arrays(fn)  # (a thread's own: local memory)
        if layout.scratch_offset is not None:
            self.scratch_offset = layout.scratch_offset
        self.smem_bytes, self.scratch_bytes = layout.total, layout.global_total

    def stack_memory(self, target: ir.Sym) -> str:
        return self.stack_offsets[target]

    def register_type(self, t: TileT) -> str:
        return f"tl::Reg<{ctype(t)}, {self.block_dim}>"

    def register_layout(self, t: TileT) -> str:
        return f"tl::RegLayout<{t.size}, {self.block_dim}>"

    def reads_registers(self, e: ir.Expr) -> bool:
        return not self.registers.isdisjoint(ir.read_syms(e))

    def assign_tile(self, dst: str, target: ir.Sym, value: ir.Expr) -> None:
        inner = without_identities(value)
        if target in self.registers or self.reads_registers(inner):
            self.assign_registers(dst, target, inner)
        else:
            self.assign_shared(dst, target, value)

    def assign_shared(self, dst: str, target: ir.Sym, value: ir.Expr) -> None:
        """GPU model: a tile assignment shared by the block's threads, between barriers."""
        idx = naming.ELEMENT_INDEX
        if isinstance(value, ir.OpCall) and value.op == "tape_pop":
            self.emit(f"tl::tape_pop_tile(ctx, {dst});")  # every thread restores its share
            return
        if isinstance(value, ir.OpCall) and value.op in PER_LANE_GPU:
            if value.op in PER_LANE_NEW:
                operands = ", ".join(self.expr(a) for a in value.args)
                self.emit(f"tl::{PER_LANE_GPU[value.op]}(ctx, {dst}, {operands});")
                return
            source = value.args[0]
            if not (isinstance(source, ir.Var) and source.sym == target):
                self.assign_shared(dst, target, source)  # an in-place write into a new variable: copy first
            operands = ", ".join(self.expr(a) for a in value.args[1:])
            self.emit(f"tl::{PER_LANE_GPU[value.op]}(ctx, {dst}, {operands});")
            return
        value = without_identities(value)
        if isinstance(value, ir.Call):
            raise NotImplementedError("funcs taking or returning tiles are inlined for the GPU")
        assert not isinstance(value, ir.Const), value  # a tile's value: a variable or an op, never a constant
        self.emit("ctx.sync();")
        if isinstance(value, ir.Var) or is_fusible(value):
            read = (f"{naming.cxx_var(value.sym)}.data[{idx}]" if isinstance(value, ir.Var)
                    else self.element(value, idx, _tile(target.type).dtype))
            self.emit(f"for (int {idx} = ctx.lane; {idx} < {_tile(target.type).size}; {idx} += ctx.nlanes) {{")
            self.depth += 1
            self.emit(f"{dst}.data[{idx}] = {read};")
            self.depth -= 1
            self.emit("}")
        elif value.op in COOP_GPU and not reads_besides_update(value, target):
            mutated = mutated_positions(value)
            args: list[ir.Expr] | None = [a for i, a in enumerate(value.args) if i not in mutated]
            for i in mutated:  # the accumulating matmul updates its own destination in place
                source = value.args[i]
                if not (isinstance(source, ir.Var) and source.sym == target):
                    args = None
            if args is None:
                self.leader_tile_op(dst, target, value)
            else:
                self.emit(self.runtime_call(self.coop_name(value.op), dst, value, args) + ";")
        else:
            self.leader_tile_op(dst, target, value)
        self.emit("ctx.sync();")

    def assign_registers(self, dst: str, target: ir.Sym, value: ir.Expr) -> None:
        """GPU model: an assignment to or from register tiles (see storage.py): each thread
        handles its own slots, so no barrier is needed around register-only work."""
        assert isinstance(value, (ir.Var, ir.OpCall)), value  # funcs with tiles are inlined; no tile constants
        if isinstance(value, ir.Var) or is_fusible(value) or value.op in REGISTER_COPIES:
            self.register_loop(dst, target, value)
        elif value.op in REGISTER_FILLS:
            self.emit(f"tl::reg_fill(ctx, {dst}, {REGISTER_FILLS[value.op]});")
        elif value.op in ("tile_full", "tile_load"):
            cpp = "reg_fill" if value.op == "tile_full" else "reg_tile_load"
            self.emit(self.runtime_call(cpp, dst, value, list(value.args)) + ";")
        elif value.op == "tile_matmul":
            self.emit("ctx.sync();")  # the shared operands are complete
            self.emit(self.runtime_call("reg_tile_matmul", dst, value, list(value.args[:2])) + ";")
        elif is_register_fold(value):
            self.emit(f"tl::reg_{value.op}(ctx, {dst}, {self.expr(value.args[0])}, ctx.smem + {self.scratch_offset});")
        else:
            raise NotImplementedError(f"{value.op} with register tiles")

    def register_loop(self, dst: str, target: ir.Sym, value: ir.Expr) -> None:
        """An elementwise assignment over the register layout: slot `_s` of this thread is element `_e`."""
        layout, slot, idx = self.register_layout(_tile(target.type)), naming.REGISTER_SLOT, naming.ELEMENT_INDEX
        into_registers = target in self.registers
        reads_shared = any(isinstance(sym.type, TileT) and sym not in self.registers for sym in ir.read_syms(value))
        if reads_shared or not into_registers:
            self.emit("ctx.sync();")
        head = self.loop_heads.get((layout, self.depth))
        if head is None:  # the same four lines for every loop over a layout at a depth: made once
            pad, inner = "    " * self.depth, "    " * (self.depth + 1)
            head = (f"{pad}TL_UNROLL", f"{pad}for (int {slot} = 0; {slot} < {layout}::slots; ++{slot}) {{",
                    f"{inner}const int {idx} = {layout}::element({slot}, ctx.lane);",
                    f"{inner}if (!{layout}::valid({idx})) continue;")
            self.loop_heads[(layout, self.depth)] = head
        self.lines.extend(head)  # (emit's barrier test: none of them is a barrier)
        self.depth += 1
        self.slot = slot
        if isinstance(value, ir.OpCall) and value.op in REGISTER_COPIES:
            read = self.element(value.args[0], idx, _tile(value.args[0].type).dtype)
            if value.op == "tile_astype":
                out = _tile(target.type).dtype
                assert not isinstance(out, StructT), target  # the IR past the checker carries no struct
                read = f"tl::cast<{out.ctype}>({read})"
        else:
            read = self.element(value, idx, _tile(target.type).dtype)
        self.slot = None
        self.emit(f"{dst}.v[{slot}] = {read};" if into_registers else f"{dst}.data[{idx}] = {read};")
        self.depth -= 1
        self.emit("}")
        if not into_registers:
            self.emit("ctx.sync();")

    def element(self, e: ir.Expr, idx: str, dtype: Element) -> str:
        """CxxEmitter.elem for a tile of any element type (vectors and matrices too)."""
        return self.elem(e, idx, dtype)

    def coop_name(self, op: str) -> str:
        """Memory transfers are laid out in runs per thread, like register tiles: they need block_dim."""
        if op in ("tile_load", "tile_store", "tile_atomic_add"):
            return f"coop_{op}<{self.block_dim}>"
        return COOP_GPU[op]

    def leader_tile_op(self, dst: str, target: ir.Sym, value: ir.OpCall) -> None:
        self.emit("if (ctx.leader()) {")
        self.depth += 1
        self.tile_op(dst, target, value)
        self.depth -= 1
        self.emit("}")

    def effect(self, e: ir.Expr) -> None:
        """Stores and atomic adds of register tiles, and the cooperative effects, every thread takes part in."""
        if isinstance(e, ir.OpCall) and e.op in ("tile_store", "tile_atomic_add") and isinstance(e.args[1], ir.Var) \
                and (e.args[1].sym in self.registers or e.op == "tile_atomic_add"):
            cpp = "reg_" + e.op if e.args[1].sym in self.registers else self.coop_name(e.op)
            # Before the write too: each thread writes its own runs, which another thread may still
            # have to read (a tile loaded from the array at another offset: write after read).
            self.emit("ctx.sync();")
            self.emit(self.runtime_call(cpp, None, e, list(e.args)) + ";")
            self.emit("ctx.sync();")  # later reads of the array in this block see the writes
        elif isinstance(e, ir.OpCall) and e.op in COOP_GPU:
            self.emit("ctx.sync();")
            self.emit(self.runtime_call(self.coop_name(e.op), None, e, list(e.args)) + ";")
            self.emit("ctx.sync();")
        else:
            super().effect(e)


def _tile(t: Type) -> TileT:
    """The type of a tile assignment's target or a register copy's operand: a tile."""
    assert isinstance(t, TileT), t
    return t


def reads_besides_update(call: ir.OpCall, sym: ir.Sym) -> bool:
    """Does the call read `sym` other than as the operand it updates in place?"""
    mutated = mutated_positions(call)
    return any(isinstance(a, ir.Var) and a.sym == sym for i, a in enumerate(call.args) if i not in mutated)
