"""Conformance cases for tile ops the #14 audit found without a Warp comparison: max/min and the
arg-reductions (Warp has no axis= forms of them), the exclusive and extreme scans, Cholesky (lower, upper,
in place) with the triangular and Cholesky solves (in place too) and diag_add, element reads,
tile_assign, the indexed store and atomic add (repeated indices), tile_squeeze and
tile_empty (filled before it is read). Where Warp 1.19's
gradient is known wrong (DESIGN §6) the case says so and finite differences are the oracle."""
from cases import Case, arr, out

P = "ops_audit.py"
WRONG_EXTREMES = "Warp 1.19 gives tile_max/tile_min a zero gradient; the gradient is one-hot at the first extreme"
WRONG_SCAN = "Warp 1.19 gives tile_scan_exclusive a zero gradient; it is the reversed exclusive scan of the seed"
WRONG_SCAN_EXTREMES = ("Warp 1.19 gives tile_scan_max_inclusive/tile_scan_min_inclusive a zero gradient; each "
                       "element's gradient is the seed of every output its running extreme reached")
WRONG_INPLACE = ("Warp 1.19's adjoint through tile_cholesky_inplace and tile_lower_solve_inplace gives the matrix "
                 "a gradient that float64 finite differences reject (its out-of-place forms agree with them)")
WRONG_SOLVES = ("Warp 1.19 gives tile_cholesky_solve, tile_upper_solve and tile_diag_add zero gradients for "
                "every input")


def f64(*shape, role="in"):
    return arr(*shape, dtype="float64") if role == "in" else out(*shape, dtype="float64")


CASES = [
    Case("ops_audit_extremes", P, "extremes", dim=(1,), args=(arr(3, 5), out(1)), block_dim=16,
         warp_wrong=WRONG_EXTREMES),
    Case("ops_audit_arg_extremes", P, "arg_extremes", dim=(1,),
         args=(arr(4, 6), out(2, dtype="int32")), block_dim=16,
         grad=False),
    Case("ops_audit_scan_exclusive", P, "scan_exclusive", dim=(1,), args=(arr(3, 6), out(3, 6)), block_dim=16,
         warp_wrong=WRONG_SCAN),
    Case("ops_audit_scan_extremes", P, "scan_extremes", dim=(1,), args=(arr(14, kind="arange"), out(14), out(14)),
         block_dim=16,
         warp_wrong=WRONG_SCAN_EXTREMES),
    Case("ops_audit_cholesky_lower", P, "cholesky_lower", dim=(1,),
         args=(f64(4, 8), f64(4), f64(4, 4, role="out"), f64(4, role="out")), block_dim=16, rtol=1e-9, atol=1e-9),
    Case("ops_audit_cholesky_inplace", P, "cholesky_inplace", dim=(1,),
         args=(f64(4, 8), f64(4), f64(4, role="out"), f64(4, 4, role="out")), block_dim=16, rtol=1e-9, atol=1e-9,
         warp_wrong=WRONG_INPLACE),
    Case("ops_audit_cholesky_upper", P, "cholesky_upper", dim=(1,), args=(f64(4, 8), f64(4, 4, role="out")),
         block_dim=16, rtol=1e-9, atol=1e-9),
    Case("ops_audit_solves", P, "solves", dim=(1,),
         args=(f64(4, 8), f64(4), arr(4, dtype="float64", kind="rand"), f64(4, role="out"), f64(4, role="out"),
               f64(4, role="out")), block_dim=16, rtol=1e-9, atol=1e-9, warp_wrong=WRONG_SOLVES),
    Case("ops_audit_layout", P, "layout", dim=(1,),
         args=(arr(4, 6), arr(4, dtype="int32", kind="arange"), arr(4, dtype="int32", kind="int:0:3"), out(2),
               out(6, 6), out(4, 6), out(3, 6), out(6), out(4, 6)),
         block_dim=16),
]
