"""Arrays of structs that hold arrays: each element carries its own arrays (`ps[i].data`), read
element by element, written through, and turned into tiles."""
import warp as wp


@wp.struct
class Signal:
    data: wp.array[float]
    gain: float
    tag: int


@wp.struct
class Channel:
    src: wp.array[float]
    dst: wp.array[float]
    bias: float


@wp.kernel
def energy(sigs: wp.array[Signal], out: wp.array[float]):
    i = wp.tid()
    s = sigs[i]
    acc = float(0.0)
    for j in range(s.data.shape[0]):
        acc += s.data[j] * s.data[j]
    out[i] = acc * s.gain + float(s.tag)


@wp.kernel
def lane_tiles(sigs: wp.array[Signal], out: wp.array[float]):
    i, lane = wp.tid()
    v = sigs[i].data[lane] * sigs[i].gain
    t = wp.tile(v)
    wp.tile_store(out, wp.tile_sum(wp.tile_map(wp.sin, t)), offset=i)


@wp.kernel
def route(chans: wp.array[Channel]):
    i, j = wp.tid()
    chans[i].dst[j] = wp.tanh(chans[i].src[j]) + chans[i].bias
