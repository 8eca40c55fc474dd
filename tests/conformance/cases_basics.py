"""Conformance cases for the core already written in Warp's own spelling (keyword annotations)."""
from cases import Arr, Case, Scal, arr, out

CASES = [
    Case("basics_tile_scale", "basics.py", "tile_scale", dim=(4,), args=(arr(256), out(256), Scal(1.5))),
    Case("basics_rowsum", "basics.py", "rowsum", dim=(3,), args=(arr(24, 16), out(24)), block_dim=32),
    Case("basics_gemm_partial", "basics.py", "gemm", dim=(2, 2), args=(arr(30, 20), arr(20, 28), out(30, 28)),
         rtol=1e-4, atol=1e-4),
    # narrowing integer conversions wrap, folded from literals or at run time
    Case("basics_int_wrap", "int_wrap.py", "narrowed", dim=(8,), launch="simt", grad=False, fd=False,
         args=(Arr((8,), "int32", "in", "int:-400:400"), out(16, dtype="int32"))),
    # locals assigned once from a constant fold where a constant is needed (tile_arange bounds, shapes)
    Case("basics_local_consts", "local_consts.py", "ramps", dim=(1,), block_dim=16, fd=True,
         args=(arr(16), out(8), out(1, dtype="int32"))),
]
