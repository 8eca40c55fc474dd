"""Structs holding a bfloat16 vector (Warp names no bfloat16 vector type: it is declared with
wp.types.vector): read element-wise and written whole, and loaded and stored as a tile."""
import warp as wp

vec3bf = wp.types.vector(length=3, dtype=wp.bfloat16)


@wp.struct
class Sample:
    v: vec3bf
    w: float


@wp.kernel
def mix(src: wp.array(dtype=Sample), x: wp.array(dtype=float), dst: wp.array(dtype=Sample),
        y: wp.array(dtype=float)):
    i = wp.tid()
    s = src[i]
    r = Sample()
    r.v = s.v * wp.bfloat16(2.0) + vec3bf(wp.bfloat16(0.5), wp.bfloat16(0.0), wp.bfloat16(1.0))
    r.w = s.w * x[i] + 1.0
    dst[i] = r
    y[i] = float(s.v[0]) * x[i] * s.w + float(s.v[2]) * x[i]


@wp.kernel
def tiles(src: wp.array(dtype=Sample), dst: wp.array(dtype=Sample)):
    i = wp.tid()
    t = wp.tile_load(src, shape=8, offset=i * 8)
    wp.tile_store(dst, t, offset=i * 8)
