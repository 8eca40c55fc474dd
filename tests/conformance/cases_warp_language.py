"""Conformance cases for the Warp language as Warp users write it: a name rebound in its block to an
array view of another dimension or a tile of another shape (Warp compares an array's or a tile's
dtype, not its shape); functions as values: `f = my_func`, a func's `wp.Function` parameter (a @wp.func
or a builtin, by position, keyword or default), wp.tile_map through such a name, and functions and
numbers picked from a module-level dict by `wp.static(TABLE[key])`; `if wp.static(...)` on comparisons of
constants, strings and dtypes (a factory's `act == "relu"`, `dtype == wp.float64`), only the arm taken compiled;
tuples as values (`t = (x, 2.5, v)`, `t = f(...)` of a func returning several, `t[k]`, `len(t)`, unpacking);
`wp.ref[T]` parameters (the caller's variables updated; forward only: Warp builds no adjoint through them,
tests/test_warp_funcs.py checks tilec's by finite differences)."""
from cases import Arr, Case, Scal, StructArr, arr, out, varr

L = "warp_language.py"
S = "warp_spelling.py"
N = 8
SIMT = dict(launch="simt", block_dim=32)

CASES = [
    Case("wl_rebound_views", L, "rebound_views", dim=(N,), args=(arr(N, 5), arr(N), out(N)), **SIMT),
    Case("wl_function_values", L, "function_values", dim=(N,), args=(arr(N), arr(N), out(N), out(N), out(N), out(N), out(N)),
         **SIMT),
    Case("wl_mapped_function_value", L, "mapped", dim=(1,), args=(arr(4, 8), out(4, 8)), block_dim=32),
    Case("wl_static_tables", L, "static_tables", dim=(N,), args=(arr(N), arr(N), out(N)), **SIMT),
    Case("wl_static_choices", L, "static_choices", dim=(N,), args=(arr(N), out(N)), **SIMT),
    Case("wl_factory_relu", L, "activate__act_relu__dtype_float32", warp_kernel="activate_relu", dim=(N,),
         args=(arr(N), out(N)), **SIMT),
    Case("wl_factory_tanh64", L, "activate__act_tanh__dtype_float64", warp_kernel="activate_tanh64", dim=(N,),
         args=(arr(N, dtype="float64"), out(N, dtype="float64")), **SIMT),
    Case("wl_factory_half", L, "activate__act_tanh__dtype_float32", warp_kernel="activate_half", dim=(N,),
         args=(arr(N), out(N)), **SIMT),
    # Warp 1.19 gives no gradient through a tuple's items at all (0 for `t = (a, 2.5); y = t[0] * t[1]`, measured)
    Case("wl_tuple_values", L, "tuple_values", dim=(N,), args=(arr(N), arr(N), out(N), varr(N, "vec3", "out")),
         warp_wrong="Warp 1.19's adjoint gives a tuple's items no gradient (0, measured); checked by finite differences",
         **SIMT),
    # tuples passed to funcs (`tuple[wp.vec3, float]`, `tuple[float, ...]`, Any), items picked by a loop's variable
    Case("wl_tuple_arguments", L, "tuple_arguments", dim=(N,), args=(arr(N), arr(N), out(N)),
         warp_wrong="Warp 1.19's adjoint gives a tuple's items no gradient (0, measured); checked by finite differences",
         **SIMT),
    Case("wl_static_loop_variables", L, "static_loop_variables", dim=(N,), args=(arr(N), out(N)), **SIMT),
    Case("wl_tuple_structs", L, "tuple_structs", dim=(N,), args=(arr(N), out(N)),
         warp_wrong="Warp 1.19's adjoint gives a tuple's items no gradient (0, measured); checked by finite differences",
         **SIMT),
    Case("wl_tuple_struct_returns", L, "tuple_struct_returns", dim=(N,), args=(arr(N), out(N), varr(N, "vec3", "out")),
         **SIMT),
    Case("wl_nested_classes", L, "nested_classes", dim=(N,), args=(arr(N), out(N)), **SIMT),
    Case("wl_enum_properties", L, "enum_properties", dim=(N,), args=(arr(N), out(6)), **SIMT),
    Case("wl_host_functions", L, "host_functions", dim=(N,), args=(arr(N), out(N)), **SIMT),
    Case("wl_enum_methods", L, "enum_methods", dim=(N,), args=(arr(N), out(N)), **SIMT),
    Case("wl_vector_defaults", L, "vector_defaults", dim=(N,), args=(arr(N), out(N)), **SIMT),
    Case("wl_match_selectors", L, "match_selectors", dim=(N,), args=(arr(N), arr(N), out(N), out(N), out(N)), **SIMT),
    # two instances of one factory, each calling the func it was given: tilec compiled both with the first
    # one's func (its instances were keyed by the parameter's name), silently, until this case
    Case("wl_factory_added", L, "combine__func_added", warp_kernel="combine_added", dim=(N,),
         args=(arr(N), arr(N), out(N)), **SIMT),
    Case("wl_factory_subtracted", L, "combine__func_subtracted", warp_kernel="combine_subtracted", dim=(N,),
         args=(arr(N), arr(N), out(N)), **SIMT),
    Case("wl_module_function_names", L, "module_function_names", dim=(N,), args=(arr(N), out(N)), **SIMT),
    Case("wl_rebound_tiles", L, "rebound_tiles", dim=(1,), args=(arr(4, 8), out(8, 4), out(1)), block_dim=32),
    Case("wl_by_reference", L, "by_reference", dim=(N,), args=(arr(N), varr(N, "vec3"), out(N)), grad=False, **SIMT),
    Case("wl_vector_choices", L, "vector_choices", dim=(N,),
         args=(varr(N, "vec3"), varr(N, "vec3"), varr(N, "mat22"), arr(N), varr(N, "vec3", "out"),
               varr(N, "mat22", "out")), **SIMT),
    Case("wl_struct_vector_updates", L, "struct_vector_updates", dim=(N,),
         args=(StructArr("Swizzle", (N,), (("x", "float32:2"), ("m", "float32:2x2"), ("y", "int32", "int:0:5"))),
               varr(N, "vec2")), **SIMT),
    Case("wl_poisson_draws", L, "poisson_draws", dim=(256,),
         args=(arr(256, kind="rand"), out(256, dtype="uint32"), out(256)), grad=False, **SIMT),
    Case("wl_grad_calls", L, "grad_calls", dim=(N,),
         args=(varr(N, "vec3"), arr(N), arr(N), varr(N, "vec3", "out"), out(N)), grad=False, **SIMT),
    Case("wl_grad_loops", L, "grad_loops", dim=(N,), args=(arr(N), arr(N), out(N), out(N)), grad=False, **SIMT),
    Case("wl_places_by_reference", L, "places_by_reference", dim=(N,),
         args=(arr(N), varr(N, "vec3"), StructArr("Slot", (N,), (("value", "float32"), ("dir", "float32:3"))), out(N)),
         grad=False, **SIMT),
    # Warp's names without `wp.` (its builtins, types and constants) and operators a module's funcs overload
    Case("wl_bare_builtins", S, "bare_builtins", dim=(N,), args=(arr(N), varr(N, "vec3"), out(N)), **SIMT),
    Case("wl_struct_operators", S, "struct_operators", dim=(N,), args=(arr(N), out(N)), **SIMT),
    Case("wl_kind_annotations", S, "kind_annotations", dim=(N,),
         args=(arr(N, dtype="float64"), arr(N), arr(N, dtype="int32", kind="int:0:9"), out(N, dtype="float64"), out(N),
               out(N, dtype="int32")), **SIMT),
    Case("wl_type_factories", S, "type_factories", dim=(N,), args=(arr(N), out(N)), **SIMT),
    Case("wl_keyword_and_bool_values", S, "keyword_and_bool_values", dim=(N,),
         args=(arr(N), out(N), out(N, dtype="int32")), **SIMT),
    Case("wl_transform_parts_in_arrays", S, "transform_parts_in_arrays", dim=(N,),
         args=(varr(N, "vec3"), varr(N, "quat"), varr(N, "transform", "inout"), varr(N, "transform", "inout")),
         **SIMT),
    Case("wl_builtin_keywords", S, "builtin_keywords", dim=(N,), args=(arr(N), varr(N, "vec3"), out(N)), **SIMT),
    Case("wl_literal_locals", S, "literal_locals", dim=(N,),
         args=(arr(N, dtype="float64"), out(N, dtype="float64"), out(N)), **SIMT),
    Case("wl_starred_arguments", S, "starred_arguments", dim=(N,),
         args=(arr(N), varr(N, "vec3"), out(N), varr(N, "vec4", "out")), **SIMT),
    Case("wl_sequence_constants", S, "sequence_constants", dim=(N,),
         args=(arr(N), out(N), out(N, dtype="int32"), varr(N, "vec3", "out")), **SIMT),
    Case("wl_vector_bit_atomics", S, "vector_bit_atomics", dim=(N * 32,),
         args=tuple(Arr((N, 3), "uint32", role, "int:0:4294967295", "vec3ui") for role in ("inout", "inout", "inout", "in"))
         + tuple(Arr((N, 2, 2), "uint32", role, "int:0:4294967295", "mat22ui") for role in ("inout", "inout", "in")),
         grad=False, **SIMT),
    Case("wl_vector_operators", S, "vector_operators", dim=(N,), args=(varr(N, "vec3"), varr(N, "vec3"),
                                                                      varr(N, "vec3", "out")), **SIMT),
    Case("wl_vector_reductions", S, "vector_reductions", dim=(N,),
         args=(varr(N, "vec3"), arr(N), out(N), out(N, dtype="int32"), varr(N, "transform", "out")), **SIMT),
    Case("wl_truth_and_host_constants", S, "truth_and_host_constants", dim=(N,),
         args=(varr(N, "vec3"), varr(N, "vec3"), Arr((N,), "int32", "in", "int:0:4"), out(N), varr(N, "vec3", "out")),
         **SIMT),
    Case("wl_module_aliases_of_names", S, "module_aliases_of_names", dim=(N,),
         args=(arr(N), out(N), StructArr("Complex", (N,), (("re", "float32"), ("im", "float32")), role="out", kind="zeros")),
         **SIMT),
    Case("wl_vector_extremes", S, "vector_extremes", dim=(N,),
         args=(varr(N, "vec3"), Arr((2, 3), "float32", "inout", "int:100:101", "vec3"),
               Arr((1, 3), "float32", "inout", "int:-100:-99", "vec3"), Arr((1, 2, 2), "float32", "inout", "int:-100:-99", "mat22")),
         **SIMT),
    Case("wl_value_subclasses", S, "value_subclasses", dim=(N,),
         args=(arr(N), varr(N, "spatial_vector"), out(N), varr(N, "spatial_vector", "out")), **SIMT),
    Case("wl_factory_funcs", S, "factory_funcs", dim=(N,), args=(arr(N), out(N)), **SIMT),
    Case("wl_tuple_forwarding", S, "tuple_forwarding", dim=(N,),
         args=(varr(N, "vec3"), arr(N), varr(N, "vec3", "out"), out(N)), **SIMT),
    Case("wl_selected_funcs", S, "selected_funcs", dim=(N,), args=(arr(N), out(N)), **SIMT),
    # @wp.func_native snippets of scalars (their C++ compiled as written by tilec and by Warp)
    Case("wl_func_natives", "natives.py", "natives", dim=(N,),
         args=(arr(N), Arr((N,), "int64", "in", "int:0:4096"), out(N, dtype="uint32"), out(N, dtype="uint64"),
               out(N, dtype="int32"), out(N)), **SIMT),
    Case("wl_defaulted_factories", S, "defaulted_factories", dim=(N,), args=(arr(N), out(N)), **SIMT),
    # funcs returning several values or a struct, with effects: the effects made by one instance only
    Case("wl_effect_returns", S, "effect_returns", dim=(N,),
         args=(varr(N, "vec3"), arr(N), varr(N, "vec3", "out"), varr(N, "vec3", "out"), varr(N, "vec3", "out"),
               out(1), out(N), varr(N, "vec3", "out")), **SIMT),
]
# @wp.func_native snippets over arrays, with adj_snippets: forward and adjoint against Warp's and FD
CASES += [
    Case("wl_native_saxpy", "native_arrays.py", "saxpy_kernel", dim=(N,),
         args=(Scal(1.75), arr(N), arr(N), out(N)), **SIMT),
    Case("wl_native_scalar_adjoints", "native_arrays.py", "scalar_adjoints", dim=(N,),
         args=(arr(N), arr(N), arr(N), out(N)), **SIMT),
    Case("wl_native_shaped_and_integer", "native_arrays.py", "shaped_and_integer", dim=(N,),
         args=(arr(N), Arr((N,), "int32", "in", "int:0:50"), out(N, dtype="int32"), out(N), out(N)), **SIMT),
]
# vectors and matrices in and out of snippets, spelled as Warp's C++ (wp::vec_t<3, wp::float32>, wp::mat22)
CASES += [
    Case("wl_native_values", "native_arrays.py", "vectors_and_matrices", dim=(N,),
         args=(arr(N), varr(N, "mat22"), varr(N, "vec3", "out"), varr(N, "mat22", "out")), grad=False, fd=False, **SIMT),
]
CASES += [
    Case("wl_native_vector_arrays", "native_arrays.py", "vector_arrays", dim=(N,),
         args=(varr(N, "vec3"), arr(N), varr(N, "vec3", "out"), out(N)), **SIMT),
]
