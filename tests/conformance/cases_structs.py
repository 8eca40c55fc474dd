"""Conformance cases of issue #15's @wp.struct part: struct-of-parameters kernels, arrays of structs,
funcs taking and returning structs (area prefix `structs`)."""
from cases import Case, Scal, StructArg, StructArr, arr, out

P = "structs_params.py"
A = "structs_arrays.py"
F = "structs_funcs.py"
LOOP = ("Warp 1.19's adjoint of `acc += ...` in a dynamic range() loop inside a @wp.func is wrong with or "
        "without structs (off by up to 0.5 against the closed form outer(seed * gain * (1 - y^2), x))")
PARTICLE = (("pos", "float32"), ("vel", "float32"), ("mass", "float32", "rand"), ("tag", "int32", "int:0:9"))

CASES = [
    Case("structs_spring_force", P, "spring_force", dim=(24,), launch="simt",
         args=(StructArg("Material", (("stiffness", Scal(3.0)), ("damping", Scal(0.25)), ("rest", arr(24)))),
               arr(24), arr(24), out(24))),
    Case("structs_dense_func", P, "dense", dim=(6,), launch="simt",
         args=(StructArg("Layer", (("weight", arr(6, 5)), ("bias", arr(6)), ("gain", Scal(0.7)))), arr(5), out(6)),
         rtol=1e-4, atol=1e-5, warp_wrong=LOOP),
    Case("structs_tile_affine", P, "tile_affine", dim=(3,), block_dim=16,
         args=(StructArg("Layer", (("weight", arr(1, 1)), ("bias", arr(48)), ("gain", Scal(1.5)))), arr(48), out(48))),
    Case("structs_empty", P, "empty_structs", dim=(8,), launch="simt",
         args=(StructArg("Empty", ()), StructArg("Tagged", (("scale", Scal(1.5)),)), arr(8), out(8))),
    Case("structs_generic_construction", P, "generic_struct_construction", dim=(8,), launch="simt",
         args=(arr(8), out(8))),
    Case("structs_kick", A, "kick", dim=(20,), launch="simt",
         args=(StructArr("Particle", (20,), PARTICLE), arr(20), Scal(0.1),
               StructArr("Particle", (20,), PARTICLE, role="out", kind="zeros"))),
    Case("structs_cell_mass", A, "cell_mass", dim=(12,), launch="simt",
         args=(StructArr("Cell", (12,), (("density", "float32", "rand"), ("box.lo", "float32"), ("box.hi", "float32"),
                                          ("count", "int16", "int:0:5"))), arr(12), out(12))),
    Case("structs_accumulate", A, "accumulate", dim=(10,), launch="simt", grad=False,
         args=(StructArr("Particle", (10,), PARTICLE), arr(10), out(10))),
    Case("structs_integrate", F, "integrate", dim=(16,), launch="simt",
         args=(arr(16), arr(16), arr(16), out(16), out(16))),
    Case("structs_bodies", F, "bodies", dim=(16,), launch="simt",
         args=(arr(16), arr(16), arr(16, kind="rand"), out(16)), rtol=1e-4, atol=1e-4),
    Case("structs_unannotated_returns", F, "unannotated", dim=(16,), launch="simt",
         args=(arr(16), arr(16), out(16))),
]

BODY = (("pos", "float32:3"), ("vel", "float32:3"), ("frame", "float32:2x2"), ("mass", "float32", "rand"))
CASES += [
    Case("structs_values_step", "structs_values.py", "step", dim=(10,), launch="simt",
         args=(StructArr("Body", (10,), BODY), StructArg("Env", (("gravity", Scal((0.0, -9.8, 0.5))), ("dt", Scal(0.1)))),
               StructArr("Body", (10,), BODY, role="out", kind="zeros"), out(10)), rtol=1e-4, atol=1e-5),
]

# bfloat16 vector fields: numpy holds their raw bits (uint16), drawn from 0x3F00..0x4080 (0.5 .. 4.0),
# so they are not differentiated; the float32 parts are
BF16_SAMPLE = (("v", "uint16:3", "int:16128:16512"), ("w", "float32"))
BF16_OUT = (("v", "uint16:3"), ("w", "float32"))
CASES += [
    Case("structs_bf16_mix", "structs_bf16.py", "mix", dim=(16,), launch="simt",
         args=(StructArr("Sample", (16,), BF16_SAMPLE), arr(16),
               StructArr("Sample", (16,), BF16_OUT, role="out", kind="zeros"), out(16)), rtol=1e-5, atol=1e-5),
    Case("structs_bf16_tiles", "structs_bf16.py", "tiles", dim=(2,), block_dim=8,
         args=(StructArr("Sample", (16,), BF16_SAMPLE), StructArr("Sample", (16,), BF16_OUT, role="out", kind="zeros"))),
]
