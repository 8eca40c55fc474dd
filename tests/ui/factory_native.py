import warp as wp

snippet = """return (uint64_t)arr.data;"""


def make_offset_pointer(dtype):
    @wp.func_native(snippet)
    def pointer(arr: wp.indexedarray(dtype=wp.types.vector(length=3, dtype=dtype))) -> wp.uint64: ...

    @wp.func
    def offset_pointer(arr: wp.array(dtype=wp.types.vector(length=3, dtype=dtype)), start: int) -> wp.uint64:
        return pointer(arr) + wp.uint64(start * 4)  # ERROR TC0401: `pointer` is a @wp.func_native

    return offset_pointer


@wp.kernel
def k(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.uint64)):
    out[0] = wp.static(make_offset_pointer(float))(a, 1)
