"""API tile ops the property-based generator (tests/property_programs.py) does not draw, each with
why and the test module that checks it instead (test_property_ops.py keeps this list honest)."""

NOT_GENERATED = {
    "tile": ("one value per lane: needs per-thread values, not a tile transform", "test_fd_coverage.py"),
    "tile_from_thread": ("one lane's value broadcast: a per-thread construct", "test_ops_coop.py"),
    "tile_add_inplace": ("`t[i] += v` runs once per lane (Warp's semantics): per-lane, not a tile transform",
                         "test_fd_coverage.py"),
    "tile_sub_inplace": ("`t[i] -= v` runs once per lane (Warp's semantics)", "test_fd_coverage.py"),
    "tile_bit_and_inplace": ("integer tiles, no gradient", "test_ops_coop.py"),
    "tile_bit_or_inplace": ("integer tiles, no gradient", "test_ops_coop.py"),
    "tile_bit_xor_inplace": ("integer tiles, no gradient", "test_ops_coop.py"),
    "tile_argmax": ("an integer index result, no gradient", "test_ops_reduce_linalg.py"),
    "tile_argmin": ("an integer index result, no gradient", "test_ops_reduce_linalg.py"),
    "tile_sort": ("sorts keys and values in place; ties make the model order-dependent", "test_gradients.py"),
    "tile_empty": ("uninitialised contents: nothing to compare", "test_op_table.py"),
    "tile_randf": ("Warp's random stream: compared bit-exactly with Warp instead", "test_ops_random.py"),
    "tile_randi": ("Warp's random stream: compared bit-exactly with Warp instead", "test_ops_random.py"),
    "tile_load_indexed": ("index arrays: the generator's arrays are dense", "test_ops_views_memory.py"),
    "tile_store_indexed": ("index arrays: duplicate indices are refused for gradients", "test_gradients.py"),
    "tile_atomic_add_indexed": ("index arrays", "test_ops_views_memory.py"),
    "tile_scatter_add": ("per-lane scatters", "test_ops_coop.py"),
    "tile_scatter_masked": ("per-lane scatters", "test_ops_coop.py"),
    "tile_cholesky_inplace": ("in-place forms of the generated solves", "test_ops_linalg_forms.py"),
    "tile_cholesky_solve_inplace": ("in-place forms of the generated solves", "test_ops_linalg_forms.py"),
    "tile_lower_solve_inplace": ("in-place forms of the generated solves", "test_ops_linalg_forms.py"),
    "tile_upper_solve_inplace": ("in-place forms of the generated solves", "test_ops_linalg_forms.py"),
}
