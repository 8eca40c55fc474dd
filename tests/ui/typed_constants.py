import warp as wp
X = wp.constant(wp.float64(1.5))
BIG = wp.constant(wp.uint8(300))
NEG = wp.uint16(-1)


@wp.kernel
def bad(out: wp.array(dtype=wp.float64), ints: wp.array(dtype=wp.int32)):
    i = wp.tid()
    out[i] = X + wp.float32(1.0)  # ERROR TC0201: cannot mix float64 and float32
    ints[i] = wp.int32(BIG)  # ERROR TC0112: module constant `BIG` = 300 does not fit in uint8
    ints[i] = wp.int32(NEG)  # ERROR TC0112: `NEG` = -1 does not fit in uint16
