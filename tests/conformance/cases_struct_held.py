"""Conformance cases of arrays of structs that hold arrays (issue #13, Warp's test_tile_struct array
payloads): element reads through `a[i].field[j]`, tiles of values read through them, writes
through them; gradients into the arrays each element holds (area prefix `held`)."""
from cases import Case, HeldArr, arr, out

H = "structs_held.py"
SIGNAL = (("gain", "float32", "rand"), ("tag", "int32", "int:0:5"))

CASES = [
    Case("held_energy", H, "energy", dim=(3,), launch="simt",
         args=(HeldArr("Signal", 3, (("data", arr(6)),), SIGNAL), out(3))),
    Case("held_lane_tiles", H, "lane_tiles", dim=(2,), block_dim=8,
         args=(HeldArr("Signal", 2, (("data", arr(8)),), SIGNAL), out(2))),
    Case("held_route", H, "route", dim=(2, 4), launch="simt",
         args=(HeldArr("Channel", 2, (("src", arr(4)), ("dst", out(4))), (("bias", "float32", "rand"),)),)),
]
