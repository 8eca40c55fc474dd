"""Conformance cases for indexed arrays (wp.indexedarray): forward results against Warp 1.19.
Warp 1.19 drops every gradient through an indexed array (native array.h: adj_address of an
indexedarray does nothing, and its Tape cannot take one), so the adjoint's oracle is finite
differences; tilec's adjoint accumulates into the base array at the gathered positions."""
from cases import Arr, Case, Indexed, Scal, out, varr

P = "indexed_arrays.py"
NO_WARP_ADJOINT = "Warp 1.19 has no adjoint through indexed arrays (array.h: adj_address of an indexedarray is empty)"


def case(id, kernel, dim, args, **kw):
    return Case(f"indexed_{id}", P, kernel, dim=dim, args=args, launch=kw.pop("launch", "simt"),
                warp_wrong=NO_WARP_ADJOINT, **kw)


CASES = [
    case("gather_scale", "gather_scale", (6,), (Indexed((9,), (6,)), Scal(1.5), out(6))),
    case("subscript_spelling", "gather_subscript_spelling", (5,), (Indexed((5,), (5,)), out(5))),
    case("row_energy", "row_energy", (4,), (Indexed((6, 5), (4, 3)), out(4))),
    case("row_energy_unindexed_rows", "row_energy", (6,), (Indexed((6, 5), (None, 7)), out(6))),
    case("pick_grid_f64", "pick_grid", (3, 4), (Indexed((5, 6), (3, 4), dtype="float64"), out(3, 4, dtype="float64"))),
    case("gather_volume", "gather_volume", (2, 3, 2), (Indexed((3, 4, 3), (2, None, 2)), out(2, 3, 2))),
    case("gather_4d_sum", "gather_4d_sum", (2, 2), (Indexed((3, 2, 4, 3), (2, None, 3, 2)), out(2, 2))),
    case("block_softmax_gather", "block_softmax_gather", (32,), (Indexed((40,), (32,)), out(32)), block_dim=16),
    case("tiled_rows_gather", "tiled_rows_gather", (3,), (Indexed((5, 20), (3, 16)), out(3, 16)), launch="tiled",
         block_dim=16),
    case("shape_counts", "shape_counts", (1,), (Indexed((5, 6), (3, None)), out(2, dtype="int32")), grad=False),
    case("atomic_from_gather", "atomic_from_gather", (7,), (Indexed((4,), (7,)), out(2))),
    # indexed arrays of vectors and transforms; a generic kernel whose overloads take either kind of array
    case("gather_vectors", "gather_vectors", (5,), (Indexed((7,), (5,), value="vec3"), out(5), varr(5, "vec3", "out"))),
    case("transformed_points", "transformed_points", (2, 3),
         (Indexed((3, 4), (2, 3), value="transform"), varr(3, "vec3"), Arr((2, 3, 3), "float32", "out", "zeros", "vec3"))),
    case("copy_rows_indexed_vec3", "copy_rows", (3, 4),
         (Indexed((5, 4), (3, None), value="vec3"), Arr((3, 4, 3), "float32", "out", "zeros", "vec3"))),
    case("copy_rows_plain_vec3", "copy_rows", (3, 4),
         (Arr((3, 4, 3), "float32", "in", "randn", "vec3"), Arr((3, 4, 3), "float32", "out", "zeros", "vec3"))),
    case("copy_rows_indexed_f32", "copy_rows", (3, 4), (Indexed((5, 4), (3, None)), out(3, 4))),
]
