"""Lowering of subscripts that make views: of arrays (`A[i]`, `A[a:b]`, `A[i, ::2]`) and of tiles
(`t[i]`, `t[a:b, ::k]`, `t[::-1]`, `t[-1, :]`, `t[idx_tile]`, `wp.tile_view(t, offset=(1, slice(...)))`).

Mixed into `FunctionChecker`. `A[i, j]` with every index given stays an element read; fewer
indices, or any slice, make an `array_view` op: an array of lower (or equal) rank sharing the
parent's memory, with Python's slice rules (negative bounds count from the end, bounds clamp).
A slice step may be known only when the kernel runs (`A[a:b:step]` with an int parameter, as Warp
allows); a run-time step of zero makes an empty view (Warp stops on an assertion there; tilec's
integer division by zero is 0 too, never a trap).

Tiles have static shapes, so tile slice bounds are compile-time integers; an index may be a run-time
integer (a row `t[i]`); constant indices count from the end when negative and must be in range.
A tile subscript is a `tile_slice` (start and step per parent axis; the kept axes form the result)
or, indexed by an int tile, a `tile_gather`. `t[i] = row` and `t[a:b] = sub` (unit steps) are
`tile_assign`s. Warp's tile views alias their parent, and so do tilec's unit-step views: a view
updated in place is written back into its parent after the statement, and a parent updated in place
has its views taken again. Where that would not be exact (a strided view written, or a view whose
indices were reassigned since), it is a diagnostic, never a silent difference.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

import libcst as cst

from .. import ir
from ..ir.types import INT32, ArrayT, MatT, Scalar, TileT, VecT, describe, fmt_shape
from .lowering_host import LoweringHost

if TYPE_CHECKING:
    from .check import Lowered


@dataclass(frozen=True)
class SliceArgs:
    """`slice(a, b, c)` written as a call (in tile_view offsets): the bounds as cst nodes."""

    lower: cst.BaseExpression | None
    upper: cst.BaseExpression | None
    step: cst.BaseExpression | None
    node: cst.Call


VIEW_OPS = ("tile_slice", "tile_view")
# Results that alias their operand in Warp: the views, and wp.tile_broadcast (every position along a
# broadcast axis is the source's one element). A broadcast follows its source's changes like a view,
# but is never written through: Warp's collective write into one races along the broadcast axes.
ALIAS_OPS = VIEW_OPS + ("tile_broadcast",)


class ViewLowering(LoweringHost):
    def subscript_items(self, node: cst.Subscript) -> list[Any]:
        """The subscript's items: cst expressions for indices, cst.Slice for slices."""
        items: list[Any] = []
        for el in node.slice:
            if isinstance(el.slice, cst.Index):
                value = el.slice.value
                if isinstance(value, cst.Tuple) and len(node.slice) == 1:
                    items += [e.value for e in value.elements]
                else:
                    items.append(value)
            else:
                items.append(el.slice)
        return items

    def lower_array_subscript(self, base: ir.Expr, node: cst.Subscript) -> Lowered:
        items = self.subscript_items(node)
        ndim = cast(ArrayT, base.type).ndim
        if len(items) > ndim:
            self.fail("TC0304", f"{len(items)} indices for a {ndim}-d array", node)
        if len(items) == ndim and not any(isinstance(i, cst.Slice) for i in items):
            indices = [self.index(i) for i in items]
            return self.make_op("array_load", [base] + indices, {}, node, where=items)
        axes: list[tuple[Any, ...]] = []
        args: list[ir.Expr] = []
        for item in items:
            if isinstance(item, cst.Slice):
                step = 1 if item.step is None else self.constant_of(item.step)
                if step == 0:
                    self.fail("TC0303", "slice step must not be zero", cast(cst.BaseExpression, item.step))
                runtime_step = item.step is not None and (not isinstance(step, int) or isinstance(step, bool))
                bounds = [b for b in (item.lower, item.upper) if b is not None]
                args += [self.index(b) for b in bounds]
                if runtime_step:  # known when it runs: the step after the bounds (array_views.h)
                    args.append(self.index(cast(cst.BaseExpression, item.step)))
                axes.append(("s", item.lower is not None, item.upper is not None, None if runtime_step else step))
            else:
                axes.append(("i",))
                args.append(self.index(item))
        args = [self.retype_literal(a, INT32) for a in args]
        return self.make_op("array_view", [base] + args, {"axes": tuple(axes)}, node, where=[node.value] + items)


    # ------------------------------------------------------------ tiles

    def lower_tile_subscript(self, base: ir.Expr, node: cst.Subscript) -> Lowered:
        items = self.subscript_items(node)
        bt = cast(TileT, base.type)
        n = bt.ndim
        if (len(items) > n and isinstance(bt.dtype, (VecT, MatT))
                and not any(isinstance(i, cst.Slice) for i in items)):  # t[i, c]: element i's component c
            element = self.tile_view_of(base, [self.expr(i) for i in items[:n]], items[:n], node)
            indices = self.component_indices(bt.dtype, items[n:])
            return self.make_op("value_extract", [element] + indices, {}, node, where=[node.value] + items[n:])
        lowered: list[ir.Expr | None] = [None if isinstance(i, cst.Slice) else self.expr(i) for i in items]
        tiles = [k for k, e in enumerate(lowered) if e is not None and isinstance(e.type, TileT)]
        if tiles:
            return self.tile_gather_of(base, lowered, items, tiles, node)
        return self.tile_view_of(base, lowered, items, node)

    def tile_gather_of(self, base: ir.Expr, lowered: list[ir.Expr | None], items: list[Any], tiles: list[int],
                       node: cst.Subscript) -> Lowered:
        """t[idx], t[idx, :], t[:, idx] (Warp's tile_slice_indexed): one int tile, every other entry `:`."""
        axis = tiles[0]
        bt = cast(TileT, base.type)
        if len(items) > bt.ndim:
            self.fail("TC0304", f"{len(items)} indices for a tile of shape {fmt_shape(bt.shape)}", node)
        for k, item in enumerate(items):
            full = isinstance(item, cst.Slice) and item.lower is None and item.upper is None and item.step is None
            if k != axis and not full:
                self.fail("TC0303", "a tile indexed by an int tile takes `:` in every other position "
                          "(Warp's tile_slice_indexed)", item)
        return self.make_op("tile_gather", [base, cast(ir.Expr, lowered[axis])], {"axis": axis}, node,
                            where=[node.value, items[axis]])

    def tile_view_of(self, base: ir.Expr, lowered: list[ir.Expr | None], items: list[Any],
                     node: cst.CSTNode) -> Lowered:
        """t[items]: an element (every axis indexed) or a tile_slice."""
        shape = cast(TileT, base.type).shape
        if len(items) > len(shape):
            self.fail("TC0304", f"{len(items)} indices for a tile of shape {fmt_shape(shape)}", node)
        if len(items) == len(shape) and all(e is not None for e in lowered):
            indices = [self.tile_index(cast(ir.Expr, e), item, k, shape)  # every index lowered (checked above)
                       for k, (e, item) in enumerate(zip(lowered, items))]
            return self.make_op("tile_extract", [base] + indices, {}, node, where=items)
        keep, spec, out = 0, [], []  # the kept axes' bits, (start, step) per axis, the kept extents
        for k, extent in enumerate(shape):
            item = items[k] if k < len(items) else None
            e = lowered[k] if k < len(lowered) else None
            if item is not None and e is not None:
                spec += [self.tile_index(e, item, k, shape), _int(0, node, self)]
                continue
            start, step, length = self.tile_slice_bounds(item, extent, k, base, node)
            keep |= 1 << k
            spec += [_int(start, node, self), _int(step, node, self)]
            out.append(length)
        self.uses_tiles = True
        call = self.make_op("tile_slice", [base, _int(keep, node, self)] + spec, {"shape": tuple(out)}, node)
        return call

    def tile_index(self, e: ir.Expr, item: Any, axis: int, shape: tuple[int | str, ...]) -> ir.Expr:
        if not (isinstance(e.type, Scalar) and e.type.is_integral):
            self.fail("TC0203", f"tile indices must be integers, got {describe(e.type)}", item)
        if isinstance(e, ir.Const):
            if not isinstance(shape[axis], int):  # a shape variable: the bounds are unknown here
                self.fail("TC0111", f"index {e.value}: cannot be checked with symbolic shapes; annotate concrete "
                          "extents", item)
            extent, index = cast(int, shape[axis]), cast(int, e.value)  # an int extent (checked above), an int index
            value = index + extent if index < 0 else index
            if not 0 <= value < extent:
                self.fail("TC0104", f"index {e.value} is out of range for axis {axis} of the tile "
                          f"{fmt_shape(shape)}", item)
            return ir.Const(value, INT32, e.span)
        return self.retype_literal(e, INT32)

    def tile_slice_bounds(self, item: Any, extent: int | str, axis: int, base: ir.Expr,
                          node: cst.CSTNode) -> tuple[int, int, int | str]:
        """(start, step, length) of a slice of a tile axis; bounds must be constants."""
        if item is None:
            return 0, 1, extent
        if not isinstance(extent, int):  # a shape variable: the slice's length is unknown here
            self.fail("TC0111", "tile slice: cannot be checked with symbolic shapes; annotate concrete extents",
                      item.node if isinstance(item, SliceArgs) else item)
        values = self.slice_constants(item, "tile slice bounds must be compile-time integers (tile shapes are "
                                            "static)")
        start, stop, step = slice(*values).indices(extent)
        length = len(range(start, stop, step))
        if length == 0:
            self.fail("TC0104", f"the slice is empty on axis {axis} of the tile {fmt_shape(cast(TileT, base.type).shape)}",
                      item.node if isinstance(item, SliceArgs) else item)
        return start, step, length

    def lower_tile_view_slices(self, node: cst.Call) -> Lowered:
        """wp.tile_view(t, offset=(i, slice(a, b, c)), ...) as Warp reads it: t[i, a:b:c]."""
        t_arg = node.args[0].value if node.args and node.args[0].keyword is None else None
        offset = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "offset"), None)
        if offset is None and len(node.args) > 1 and node.args[1].keyword is None:
            offset = node.args[1].value
        if t_arg is None or offset is None or any(a.keyword is not None and a.keyword.value == "shape"
                                                  for a in node.args) or len(node.args) > 2:
            self.fail("TC0401", "unsupported syntax: tile_view with slice() offsets takes the tile and the "
                      "offset only", node)
        base = self.expr(t_arg)
        if not isinstance(base.type, TileT):
            self.fail("TC0303", f"tile_view: `a` must be a tile, got {describe(base.type)}", t_arg)
        items: list[Any] = [self.slice_call(i) or i for i in self.offset_items(offset)]
        lowered: list[ir.Expr | None] = [None if isinstance(i, SliceArgs) else self.expr(i) for i in items]
        return self.tile_view_of(base, lowered, items, node)

    def slice_call(self, node: cst.BaseExpression) -> SliceArgs | None:
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "slice"
                and node.func.value not in self.env):
            return None
        args = [a.value for a in node.args]
        if not 1 <= len(args) <= 3 or any(a.keyword is not None for a in node.args):
            self.fail("TC0303", "slice() takes 1 to 3 positional arguments", node)
        none = [None if isinstance(a, cst.Name) and a.value == "None" else a for a in args]
        lower, upper, step = (None, none[0], None) if len(none) == 1 else (none + [None])[:3]
        return SliceArgs(lower, upper, step, node)

    def store_tile_subscript(self, base: ir.Var, target: cst.Subscript, value: ir.Expr, node: Any,
                             aug: Any) -> list[ir.Stmt]:
        """t[i] = row, t[a:b, c] = sub: a tile_assign of the value at the slice's place."""
        items = self.subscript_items(target)
        bt = cast(TileT, base.type)
        shape = bt.shape
        if len(items) > len(shape):
            self.fail("TC0304", f"{len(items)} indices for a tile of shape {fmt_shape(shape)}", target)
        if aug is not None:
            self.fail("TC0401", "unsupported syntax: `+=`/`-=` on a tile slice; write t[...] = t[...] + x",
                      node)
        offsets: list[ir.Expr] = []
        full: list[int | str] = []
        for k, extent in enumerate(shape):
            item = items[k] if k < len(items) else None
            if item is not None and not isinstance(item, cst.Slice):
                offsets.append(self.tile_index(self.expr(item), item, k, shape))
                full.append(1)
                continue
            start, step, length = self.tile_slice_bounds(item, extent, k, base, target)
            if step != 1:
                self.fail("TC0401", "unsupported syntax: assignment to a strided tile slice", cast(cst.Slice, item))
            offsets.append(_int(start, target, self))
            full.append(length)
        want = tuple(n for n, item in zip(full, list(items) + [None] * len(shape))
                     if item is None or isinstance(item, cst.Slice))
        if not isinstance(value.type, TileT) or value.type.shape != want or value.type.dtype != bt.dtype:
            self.fail("TC0101", f"cannot assign {describe(value.type)} to a slice of shape {fmt_shape(want)} of "
                      f"the {bt.dtype} tile {fmt_shape(shape)}", node.value)
        src = self.make_op("tile_reshape", [value], {"shape": tuple(full)}, node) if tuple(full) != want else value
        self.note_mutation(base.sym, node)
        self.note_inplace(base.sym)
        call = ir.OpCall("tile_assign", (base, src, *offsets), (("offset_count", len(offsets)),), base.type,
                         self.span(node))
        return [ir.Assign(base.sym, call, self.span(node))]

    # ------------------------------------------------------------ views are copies: no silent aliasing

    def track_view(self, name: str, value: ir.Expr | None) -> None:
        """`name = <view of a tile variable>`: remembered so later writes through either side are
        reported (Warp's views alias their parent)."""
        self.stale_views.pop(name, None)
        if _is_transpose(value):
            self.transposed_tiles.add(name)
        else:
            self.transposed_tiles.discard(name)
        if isinstance(value, ir.OpCall) and value.op in ALIAS_OPS and isinstance(value.args[0], ir.Var):
            self.tile_views[name] = value.args[0].sym.name
            reads = {x.sym.name for x in ir.walk_expr(value) if isinstance(x, ir.Var)}
            self.view_exprs[name] = (value, {n: self.assign_counts.get(n, 0) for n in reads})
        else:
            self.tile_views.pop(name, None)
            self.view_exprs.pop(name, None)

    def warn_strided_reshape(self, source: ir.Expr, node: cst.CSTNode) -> None:
        """`wp.tile_reshape` of a transposed tile (a wp.tile_transpose, or a name bound to one): Warp 1.19
        requires a contiguous tile there (its docs) and reads a transposed view in memory order, the
        transpose of numpy's reshape (measured); tilec reshapes as numpy does. A warning, as the result
        differs from Warp's; none where a unit extent makes both orders one."""
        named = isinstance(source, ir.Var) and source.sym.name in self.transposed_tiles
        if not (named or _is_transpose(source)) or not isinstance(source.type, TileT) or 1 in source.type.shape:
            return
        self.diags.error("TC0437", "wp.tile_reshape of a transposed tile: Warp requires a contiguous tile here and "
                         "reads a transposed view in memory order, so under Warp the result differs; tilec reshapes "
                         "its elements in row-major order, as numpy.reshape", self.span(node), severity="warning",
                         help="copy the tile before reshaping it (`wp.tile_transpose(a) * 1.0`): the same result "
                         "in Warp and tilec")

    def note_mutation(self, sym: ir.Sym, node: cst.CSTNode, accumulates: bool = False) -> None:
        """An in-place update of `sym`, which views alias as in Warp: a view written in place is written
        back into its parent, and the parent's other views are taken again, after the statement. Where
        that is not exact (a strided view, indices reassigned since), a diagnostic or a stale mark.
        accumulates: the update adds to the tile (tile_axpy), which onto a broadcast Warp makes with
        atomics into the source: accumulate_back."""
        views = self.tile_views
        if sym.name in views:
            parent = views[sym.name]
            back = self.accumulate_back(sym, node) if accumulates else None
            through_broadcast = back is not None  # the broadcast itself is taken again from its source
            if back is None:
                self.refuse_broadcast_write(sym.name, node)
                back = self.write_back(sym, node)
            if back is None:
                self.fail("TC0401", f"unsupported syntax: `{sym.name}` is a view of `{parent}`; in Warp writing "
                          f"into it also changes `{parent}`, which tilec does for unit-step views whose indices "
                          "have not changed since", node, help=f"write into `{parent}` directly")
            self.pending_aliases.append(back)
            parent_sym = back.target
            self.note_inplace(parent_sym)
            self.refresh_views(parent_sym, node, skip=None if through_broadcast else sym.name)
            if parent_sym.name in views and parent_sym.name != sym.name:  # a view of a view: up the chain
                self.note_mutation(parent_sym, node)
            return
        self.refresh_views(sym, node)

    def refuse_broadcast_write(self, name: str, node: cst.CSTNode) -> None:
        """A write into a broadcast tile (or into a view of one) is a diagnostic: in Warp it writes the
        source, and a collective one races along the broadcast axes; tilec's broadcast is a copy."""
        op, _ = self.view_exprs.get(name, (None, None))
        if op is None or op.op != "tile_broadcast":
            return
        name, source = name.partition(".")[0], self.tile_views[name].partition(".")[0]  # a struct tile's leaf
        self.fail("TC0401", f"unsupported syntax: `{name}` is a broadcast of `{source}` (wp.tile_broadcast at line "
                  f"{op.span.line}); in Warp its elements alias those of `{source}`, so this write changes `{source}` "
                  "(and a whole-tile write races along the broadcast axes); tilec does not write through broadcasts",
                  node, help=f"write into `{source}` directly: its broadcasts see the change")

    def accumulate_back(self, view_sym: ir.Sym, node: cst.CSTNode) -> ir.Assign | None:
        """After `tile_axpy(alpha, x, b)` onto `b = tile_broadcast(a, shape)`: Warp 1.19 adds atomically
        through the broadcast, so every element of `a` gains the sum of the additions made to the
        elements that alias it (its test_tile_axpy_broadcast_dest). As
        `a = a + reshape(sum over the broadcast axes of (b - tile_broadcast(a, shape)))`; None where `b`
        is no broadcast (or not of an unchanged `a`)."""
        op, _ = self.view_exprs.get(view_sym.name, (None, None))
        parent_binding = self.env.get(self.tile_views[view_sym.name])
        if op is None or op.op != "tile_broadcast" or parent_binding is None or not self.unchanged(view_sym.name):
            return None
        parent, span = parent_binding.sym, self.span(node)
        before = replace(op, args=(ir.Var(parent, span),) + op.args[1:], span=span)
        delta = self.make_op("sub", [ir.Var(view_sym, span), before], {}, node)
        shape, source = tuple(cast(TileT, view_sym.type).shape), tuple(cast(TileT, parent.type).shape)
        padded = (1,) * (len(shape) - len(source)) + source
        for axis in reversed(range(len(shape))):  # the broadcast axes, last first: earlier ones keep their index
            if padded[axis] == 1 and shape[axis] != 1:
                delta = self.make_op("tile_sum", [delta], {"axis": axis}, node)
        if tuple(delta.type.shape) != source:
            delta = self.make_op("tile_reshape", [delta], {"shape": source}, node)
        return ir.Assign(parent, self.make_op("add", [ir.Var(parent, span), delta], {}, node), span)

    def unchanged(self, name: str) -> bool:
        _, counts = self.view_exprs[name]
        return all(self.assign_counts.get(n, 0) == c for n, c in counts.items())

    def refresh_views(self, parent: ir.Sym, node: cst.CSTNode, skip: str | None = None) -> None:
        """After `parent` changed in place: its views are taken again (they alias it in Warp)."""
        for view, p in list(self.tile_views.items()):
            if p != parent.name or view == skip:
                continue
            binding = self.env.get(view)
            if binding is None or view not in self.view_exprs or not self.unchanged(view):
                self.stale_views.setdefault(view, (p, self.span(node).line))
                continue
            op, _ = self.view_exprs[view]
            again = replace(op, args=(ir.Var(parent, op.span),) + op.args[1:])
            self.pending_aliases.append(ir.Assign(binding.sym, again, self.span(node)))
            if view != parent.name:
                self.refresh_views(binding.sym, node)  # a view of this view (a broadcast of a row) follows too

    def write_back(self, view_sym: ir.Sym, node: cst.CSTNode) -> ir.Assign | None:
        """`parent = tile_assign(parent, view, offsets)` for a unit-step view, else None."""
        op, _ = self.view_exprs.get(view_sym.name, (None, None))
        parent_binding = self.env.get(self.tile_views[view_sym.name])
        if op is None or parent_binding is None or not self.unchanged(view_sym.name):
            return None
        parent = parent_binding.sym
        span = self.span(node)
        ptype = cast(TileT, parent.type)
        full: tuple[int, ...]
        if op.op == "tile_slice":
            spec = op.args[2:]
            starts, steps = list(spec[0::2]), spec[1::2]
            if not all(isinstance(s, ir.Const) and s.value in (0, 1) for s in steps):
                return None
            full = tuple(1 if cast(ir.Const, s).value == 0 else n for s, n in zip(steps, _kept_extents(op, steps)))
        elif op.op == "tile_view":
            n = op.attr("offset_count") or 0
            starts = list(op.args[1:1 + n]) + [_int(0, node, self)] * (ptype.ndim - n)
            lead = ptype.ndim - cast(TileT, op.type).ndim
            full = (1,) * lead + tuple(cast(tuple[int, ...], cast(TileT, op.type).shape))
        else:
            return None
        src: ir.Expr = ir.Var(view_sym, span)
        if tuple(full) != tuple(cast(TileT, view_sym.type).shape):
            src = ir.OpCall("tile_reshape", (src,), (("shape", tuple(full)),), TileT(ptype.dtype, tuple(full)),
                            span)
        call = ir.OpCall("tile_assign", (ir.Var(parent, span), src, *starts), (("offset_count", len(starts)),),
                         parent.type, span)
        return ir.Assign(parent, call, span)

    def check_not_stale(self, name: str, node: cst.CSTNode) -> None:
        if name in self.stale_views:
            parent, line = self.stale_views[name]
            self.fail("TC0401", f"unsupported syntax: `{name}` is a view of `{parent}`, which changed at line "
                      f"{line}; in Warp the view sees that change, tilec's views are copies", node,
                      help=f"take the view again after line {line}")


def _kept_extents(op: ir.OpCall, steps: Sequence[ir.Expr]) -> list[int]:
    """Per parent axis of a tile_slice: the result extent of a kept axis (0 for an indexed one)."""
    out: list[int] = []
    shape = list(cast(tuple[int, ...], cast(TileT, op.type).shape))
    for s in steps:
        out.append(shape.pop(0) if cast(ir.Const, s).value != 0 else 0)
    return out


def _int(value: int, node: cst.CSTNode, checker: LoweringHost) -> ir.Const:
    return ir.Const(int(value), INT32, checker.span(node))


def _is_transpose(value: ir.Expr | None) -> bool:
    return isinstance(value, ir.OpCall) and value.op == "tile_transpose"


__all__ = ["ViewLowering", "SliceArgs"]
