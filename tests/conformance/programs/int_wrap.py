"""Integer conversions wrap modulo 2**bits as in C: the same for literals folded at compile time
and for values read at run time."""
import warp as wp

BIG = wp.constant(70000)


@wp.kernel
def narrowed(x: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    if i == 0:
        out[0] = wp.int32(wp.uint8(300))
        out[1] = wp.int32(wp.int8(200))
        out[2] = wp.int32(wp.uint8(-1))
        out[3] = wp.int32(wp.int16(BIG))
        out[4] = wp.int32(wp.uint16(-70000))
        out[5] = wp.int32(wp.uint8(wp.int64(-3)))
        out[6] = wp.int32(wp.int8(wp.uint8(255))) + 1000
    out[8 + i] = wp.int32(wp.uint8(x[i])) * 1000 + wp.int32(wp.int8(x[i]))
