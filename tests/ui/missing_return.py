import warp as wp


@wp.struct
class Sample:
    weight: float
    pos: wp.vec3


# Found by bench/fuzz_hostile.py (a deleted `return out`): an internal compiler error before.
@wp.func
def shifted(s: Sample, d: wp.vec3) -> Sample:  # ERROR TC0410: `shifted` is annotated `-> Sample` but has no return statement
    out = Sample()
    out.weight = s.weight
    out.pos = s.pos + d


@wp.func
def plus_one(x: float) -> float:  # ERROR TC0410: `plus_one` is annotated `-> float`
    y = x + 1.0


@wp.kernel
def moved(src: wp.array[Sample], dst: wp.array[Sample], xs: wp.array[float]):
    t = wp.tile_load(src, shape=8, storage="shared")
    wp.tile_store(dst, wp.tile_map(shifted, t, wp.vec3(1.0, 0.0, 0.0)))
    i = wp.tid()
    xs[i] = plus_one(xs[i])
