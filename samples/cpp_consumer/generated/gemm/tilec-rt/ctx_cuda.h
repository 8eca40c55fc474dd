// tilec runtime (CUDA): the block context. A kernel body runs in every thread of one CUDA
// block; a tile lives in registers spread over the threads (registers.h) or once per block in
// dynamic shared memory (smem), where tile operations run shared across threads or on the
// leader, with __syncthreads() between them.
#pragma once
#include "core.h"

namespace tl {

struct LaunchDesc {
    int64_t dim[4];
    int32_t ndim;
    int32_t lane_tid;
    int32_t block_dim;
    int32_t num_threads;
};

// The CPU runtime's per-lane tape and scratch have no GPU counterpart: .cu code uses the device
// tape (device_tape.h) and the shared-tile operations instead. These stubs let the shared headers
// compile for both sides of nvcc.
struct DeviceTape;
struct Tape {
    template <class T> TL_HD void push(const T&) {}
    template <class T> TL_HD void pop(T&) {}
};

struct Ctx {
    int64_t tid[5] = {};
    int lane = 0;
    int nlanes = 1;
    int block_dim = 1;
    unsigned char* smem = nullptr;
    unsigned char* gmem = nullptr;  // the block's global scratch slice (global_scratch.h)
    Tape* tape = nullptr;
    DeviceTape* dtape = nullptr;
    // The threads of this block the launch has (lanes.h): block_dim, or fewer in the partial last
    // block of a SIMT launch. That block is launched whole: its threads from `active` on are
    // stand-ins, which join every tile operation and barrier (so each __syncthreads is reached by
    // the whole block) while their own effects are masked: their tile elements are inactive (as
    // Warp's missing threads' are: live), they store, add atomically and print nothing (standin).
    // A stand-in's wp.tid() wraps past the launch's last thread, so its array reads stay in range.
    int active = 1 << 30;
    bool solo = false;  // the CPU's (lanes.h): what the host pass of a shared template may read
    TL_HD bool leader() const { return lane == 0; }
    TL_HD bool partial() const { return active < block_dim; }
    TL_HD bool live(int e) const { return active >= block_dim || e % block_dim < active; }
    TL_HD bool standin() const { return lane >= active; }
    TL_HD bool running(int) const { return true; }  // lanes.h: only the CPU exchanges through slots
    TL_HD void sync() {
#if defined(__CUDA_ARCH__)
        __syncthreads();
#endif
    }
    TL_HD unsigned char* scratch() { return smem; }
    template <class T> TL_HD T* shared_slots() { return reinterpret_cast<T*>(smem); }
};

// The context of this thread in grid block `block` (blockIdx.x unless the kernel loops over the
// grid: global_scratch.h): block coordinates from the block's index over the launch grid.
__device__ inline Ctx device_ctx(const LaunchDesc& L, unsigned char* smem, int64_t block) {
    Ctx ctx;
    ctx.lane = int(threadIdx.x);
    ctx.nlanes = int(blockDim.x);
    ctx.block_dim = L.block_dim;
    ctx.smem = smem;
    // Constant indices only (unrolled): one runtime index would put ctx in local memory.
    // lane_tid 3: dim counts threads; this thread's global linear index unflattens over it
    int64_t rest = L.lane_tid == 3 ? block * int64_t(L.block_dim) + int64_t(threadIdx.x) : block;
    if (L.lane_tid == 3) {  // the last block may be partial
        int64_t threads = 1;
#pragma unroll
        for (int k = 0; k < 4; ++k)
            if (k < L.ndim) threads *= L.dim[k];
        const int64_t left = threads - block * int64_t(L.block_dim);
        if (left < int64_t(L.block_dim)) ctx.active = int(left);
    }
#pragma unroll
    for (int k = 3; k >= 0; --k) {
        if (k < L.ndim) {
            ctx.tid[k] = rest % L.dim[k];
            rest /= L.dim[k];
        }
    }
    if (L.lane_tid == 2) {  // the global thread index along the last dimension (a tile kernel's launch())
        const int64_t lane = ctx.lane, bd = L.block_dim;
        ctx.tid[0] = L.ndim == 1 ? ctx.tid[0] * bd + lane : ctx.tid[0];
        ctx.tid[1] = L.ndim == 2 ? ctx.tid[1] * bd + lane : ctx.tid[1];
        ctx.tid[2] = L.ndim == 3 ? ctx.tid[2] * bd + lane : ctx.tid[2];
        ctx.tid[3] = L.ndim == 4 ? ctx.tid[3] * bd + lane : ctx.tid[3];
    } else if (L.lane_tid) {
        const int64_t lane = ctx.lane;
        ctx.tid[1] = L.ndim == 1 ? lane : ctx.tid[1];
        ctx.tid[2] = L.ndim == 2 ? lane : ctx.tid[2];
        ctx.tid[3] = L.ndim == 3 ? lane : ctx.tid[3];
        ctx.tid[4] = L.ndim == 4 ? lane : ctx.tid[4];
    }
    return ctx;
}

__device__ inline Ctx device_ctx(const LaunchDesc& L, unsigned char* smem) {
    return device_ctx(L, smem, int64_t(blockIdx.x));
}

template <class T> TL_HD void shared_atomic_add(T* p, T v) {
#if defined(__CUDA_ARCH__)
    atomicAdd(p, v);
#else
    *p += v;
#endif
}

// *p &= v, |= v or ^= v atomically (Op is the operator character); integer tiles only.
template <class T> TL_HD void shared_atomic_bit(T* p, T v, char Op) {
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
        using W = typename std::conditional<sizeof(T) == 4, unsigned int, unsigned long long>::type;
        W* w = reinterpret_cast<W*>(p);
        const W b = W(v);
        if (Op == '&') atomicAnd(w, b);
        else if (Op == '|') atomicOr(w, b);
        else atomicXor(w, b);
    } else {  // narrow integers: a compare-and-swap loop on the enclosing word
        unsigned int* word = reinterpret_cast<unsigned int*>(reinterpret_cast<size_t>(p) & ~size_t(3));
        const int shift = int(reinterpret_cast<size_t>(p) & 3) * 8;
        const unsigned int mask = ((1u << (sizeof(T) * 8)) - 1u) << shift;
        unsigned int old = *word, assumed;
        do {
            assumed = old;
            T cur = T((assumed & mask) >> shift);
            T next = Op == '&' ? T(cur & v) : Op == '|' ? T(cur | v) : T(cur ^ v);
            old = atomicCAS(word, assumed, (assumed & ~mask) | ((unsigned int)(next) << shift & mask));
        } while (old != assumed);
    }
#else
    *p = Op == '&' ? T(*p & v) : Op == '|' ? T(*p | v) : T(*p ^ v);
#endif
}

}  // namespace tl
