"""Conformance cases for @wp.func_grad on funcs over tiles (issue #13 item 7), area prefix `fgrad`."""
from cases import Case, arr, out

P = "funcs_custom_grad.py"

CASES = [
    Case("fgrad_double_rows", P, "double_rows", dim=(3,), args=(arr(3, 8), out(3, 8)), block_dim=16),
    Case("fgrad_double_rows_one_lane", P, "double_rows", dim=(2,), args=(arr(2, 8), out(2, 8)), block_dim=1,
         build_block_dim=1),
    Case("fgrad_mix_rows", P, "mix_rows", dim=(2,), args=(arr(2, 8), arr(2, 8), out(2, 8)), block_dim=32),
    # the user's rule is not the body's derivative on purpose: Warp is the oracle, not finite differences
    Case("fgrad_straight_through", P, "straight_through", dim=(1,), args=(arr(8), out(8)), block_dim=8,
         fd=False),
    Case("fgrad_grid", P, "grid", dim=(1,), args=(arr(4, 8), out(1)), block_dim=16),
]

# func_grad over arrays: `wp.adjoint[a][i] += ...` adds into the caller's adjoint arrays
CASES += [
    Case("fgrad_array_weighted", P, "weighted", dim=(6,), args=(arr(6), out(6)), launch="simt", fd=False),
    Case("fgrad_array_row_dots", P, "row_dots", dim=(3,), args=(arr(3, 5), arr(3, 5), out(3)), launch="simt",
         fd=False),
]

# @wp.func_replay: the adjoint's forward replay takes the replay func's value
CASES += [
    Case("fgrad_replay_differs", P, "replayed", dim=(5,), args=(arr(5), out(5)), launch="simt", fd=False),
    Case("fgrad_replay_same", P, "replayed_same", dim=(5,), args=(arr(5), out(5)), launch="simt"),
]

# @wp.func_replay on funcs returning tiles or nothing, with @wp.func_grad on one func, and func_grad
# funcs under tile_map (programs/funcs_custom_replay.py). A replay or rule that differs from the body on
# purpose makes Warp the only oracle (fd=False); where they agree with the body, finite differences too.
R = "funcs_custom_replay.py"
CASES += [
    Case("fgrad_replay_tile_result", R, "replay_tile_result", dim=(3,), args=(arr(3, 8), out(3, 8)), block_dim=16,
         fd=False),
    Case("fgrad_replay_tile_result_one_lane", R, "replay_tile_result", dim=(2,), args=(arr(2, 8), out(2, 8)),
         block_dim=1, build_block_dim=1, fd=False),
    Case("fgrad_replay_tile_same", R, "replay_tile_same", dim=(1,), args=(arr(2, 8), out(2, 8)), block_dim=32),
    Case("fgrad_replay_in_place", R, "replay_in_place", dim=(1,), args=(arr(8), out(8)), block_dim=8, fd=False),
    Case("fgrad_replay_in_place_same", R, "replay_in_place_same", dim=(1,), args=(arr(8), out(8)), block_dim=16),
    Case("fgrad_replay_side_effect", R, "replay_side_effect", dim=(6,),
         args=(arr(6), out(1, dtype="int32"), out(6)), launch="simt"),
    Case("fgrad_grad_and_replay", R, "grad_and_replay", dim=(7,), args=(arr(7), out(7)), launch="simt"),
    Case("fgrad_grad_and_replay_differ", R, "grad_and_replay_differ", dim=(5,), args=(arr(5), out(5)),
         launch="simt", fd=False),
    Case("fgrad_grad_and_replay_tiles", R, "grad_and_replay_tiles", dim=(2,), args=(arr(2, 8), out(2, 8)),
         block_dim=8, fd=False),
    Case("fgrad_mapped_grad", R, "mapped_grad", dim=(3,), args=(arr(3, 8), out(3, 8)), block_dim=16),
    Case("fgrad_mapped_grad_one_lane", R, "mapped_grad", dim=(2,), args=(arr(2, 8), out(2, 8)), block_dim=1,
         build_block_dim=1),
    Case("fgrad_mapped_straight_through", R, "mapped_straight_through", dim=(1,), args=(arr(8), out(8)),
         block_dim=8, fd=False),
    Case("fgrad_mapped_grad_binary", R, "mapped_grad_binary", dim=(1,), args=(arr(2, 8), arr(2, 8), out(2, 8)),
         block_dim=32),
    Case("fgrad_mapped_grad_scalar", R, "mapped_grad_scalar", dim=(1,), args=(arr(8), arr(1), out(8)), block_dim=8),
    Case("fgrad_mapped_replay", R, "mapped_replay", dim=(1,), args=(arr(8), out(8)), block_dim=8),
]

# custom adjoints defined beside a factory's kernel: applied per binding (the replay differs: fd=False)
CASES += [
    Case("fgrad_factory_leaky_small", R, "leaky_rows__slope_0p1__TILE_8", dim=(3,), args=(arr(3, 8), out(3, 8)),
         block_dim=16, warp_kernel="leaky_small", fd=False),
    Case("fgrad_factory_leaky_wide", R, "leaky_rows__slope_0p5__TILE_16", dim=(2,), args=(arr(2, 16), out(2, 16)),
         block_dim=8, warp_kernel="leaky_wide", fd=False),
]
CASES += [
    Case("fgrad_replay_vector", R, "replay_vector", dim=(6,), args=(arr(6), out(6)), launch="simt", fd=False),
]
CASES += [
    Case("fgrad_grad_vector_result", R, "grad_vector_result", dim=(6,), args=(arr(6), out(6)), launch="simt",
         fd=False),
    Case("fgrad_grad_value_reused", R, "grad_value_reused", dim=(6,), args=(arr(6), out(6)), launch="simt"),
]
