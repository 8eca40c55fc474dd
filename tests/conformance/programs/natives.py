"""@wp.func_native snippets of scalars, as Newton writes them (a float's sortable bits, a sentinel, a
lowest set bit with a CPU branch, a barrier guarded for CUDA), called from kernels and funcs."""
import warp as wp


@wp.func_native("""
uint32_t i = reinterpret_cast<uint32_t&>(f);
uint32_t mask = (uint32_t)(-(int)(i >> 31)) | 0x80000000u;
return i ^ mask;
""")
def float_flip(f: float) -> wp.uint32: ...


@wp.func_native("""return 0x7FFFFFFFFFFFFFFFull;""")
def sentinel() -> wp.uint64: ...


@wp.func_native("""
#if defined(__CUDA_ARCH__)
return ((int)__ffsll((long long)mask)) - 1;
#else
if (mask == 0) return -1;
int position = 0;
while ((mask & 1LL) == 0LL) { mask >>= 1; position++; }
return position;
#endif
""")
def lowest_set(mask: wp.int64) -> wp.int32: ...


@wp.func_native("""
#if defined(__CUDA_ARCH__)
__syncthreads();
#endif
""")
def barrier(): ...


@wp.func
def ordered(a: float, b: float) -> bool:
    return float_flip(a) < float_flip(b)


@wp.kernel
def natives(x: wp.array(dtype=float), masks: wp.array(dtype=wp.int64), bits: wp.array(dtype=wp.uint32),
            keys: wp.array(dtype=wp.uint64), low: wp.array(dtype=wp.int32), y: wp.array(dtype=float)):
    i = wp.tid()
    bits[i] = float_flip(x[i])
    keys[i] = sentinel()
    barrier()
    low[i] = lowest_set(masks[i])
    scale = float(lowest_set(masks[i]) + 1)
    if ordered(x[i], 0.25):
        scale = -scale
    y[i] = x[i] * x[i] * scale
