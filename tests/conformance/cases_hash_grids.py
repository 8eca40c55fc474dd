"""Conformance cases for Warp's hash grid (wp.HashGrid, wp.hash_grid_query / _next / _point_id):
neighbour sums bit for bit in Warp's visiting order (cells z, y, x, a cell's points in their
original order), points in negative coordinates and past the grid (cells wrap), forward and the
points' gradient (the grid itself is built once from the stored points on each side)."""
from cases import Arr, Case, Grid, Scal, out, varr

P = "hash_grids.py"
N = 96
SIMT = dict(launch="simt", block_dim=32)
H = 0.6

CASES = [
    Case("hg_density", P, "density", dim=(N,), args=(Grid(1, (8, 8, 8), H), varr(N, "vec3"), Scal(H), out(N)),
         rtol=1e-5, atol=1e-6, **SIMT),
    Case("hg_density_small_grid", P, "density", dim=(N,),
         args=(Grid(1, (3, 2, 5), 0.4), varr(N, "vec3"), Scal(0.45), out(N)), rtol=1e-5, atol=1e-6, **SIMT),
    # a negative radius: the box is empty, and Warp's query still visits one cell, the one holding
    # point - max_dist (mostly not the point's own: most sums are 0)
    Case("hg_negative_radius", P, "density", dim=(N,), args=(Grid(1, (8, 8, 8), H), varr(N, "vec3"), Scal(-0.7), out(N)),
         rtol=1e-5, atol=1e-6, **SIMT),
    Case("hg_relative_while", P, "relative", dim=(N,),
         args=(Grid(1, (16, 16, 16), H), varr(N, "vec3"), varr(N, "vec3"), Scal(H), varr(N, "vec3", "out")),
         rtol=1e-5, atol=1e-6, **SIMT),
    Case("hg_first_neighbors_break", P, "first_neighbors", dim=(N,),
         args=(Grid(1, (8, 8, 8), H), varr(N, "vec3"), Scal(1.5), out(N, dtype="int32"), out(N, dtype="int32"),
               out(N)), rtol=1e-5, atol=1e-6, fd=False, **SIMT),  # no FD: the first four candidates change
    # when a step moves a point into another cell (a jump, not a derivative); Warp's gradient is the oracle
    Case("hg_through_func", P, "through_func", dim=(N,), args=(Grid(1, (8, 8, 8), H), varr(N, "vec3"), Scal(H), out(N)),
         rtol=1e-5, atol=1e-6, **SIMT),
    Case("hg_density64", P, "density64", dim=(N,),
         args=(Grid(1, (8, 8, 8), H, "float64"), varr(N, "vec3d"), Scal(H, "float64"), out(N, dtype="float64")),
         rtol=1e-12, atol=1e-12, **SIMT),
    Case("hg_grouped", P, "grouped", dim=(N,),
         args=(Grid(1, (8, 8, 8), H, groups=2), varr(N, "vec3"), Arr((N,), "int32", "in", "int:-1:3"), Scal(H), out(N),
               out(N, dtype="int32")), rtol=1e-5, atol=1e-6, **SIMT),
    Case("hg_query_args", P, "query_args", dim=(N,),
         args=(Grid(1, (8, 8, 8), H, groups=2), varr(N, "vec3"), Arr((N,), "int32", "in", "int:0:2"), Scal(H), out(N)),
         rtol=1e-5, atol=1e-6, **SIMT),
    Case("hg_sorted_order", P, "sorted_order", dim=(N,),
         args=(Grid(1, (8, 8, 8), H), varr(N, "vec3"), varr(N, "vec3", "out"), out(N, dtype="int32")), **SIMT),
]
