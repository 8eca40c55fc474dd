// tilec runtime: the adjoint tape of .cu code (on the GPU and in the CUDA emulation).
// A backward kernel that saves values gets a global buffer with one region per block: a block
// stack for tiles (the block's threads push and pop them together) and one stack per thread for
// scalars, interleaved word by word (a thread's k-th 8-byte word sits at k * nlanes + lane) so
// that threads saving together touch neighbouring words. Capacity is fixed per launch. A push past it is counted but not stored; at the end of
// the replay (tape_ready) a block that overflowed reports what it needed and skips its reverse
// sweep, so it has written nothing. The host (launch_with_tape) then relaunches with the
// measured size, and blocks that already finished return at once.
#pragma once
#include "registers.h"

namespace tl {

struct TapeDesc {  // a kernel parameter, by value
    unsigned char* base;
    int64_t block_bytes;   // per block: the tile stack
    int64_t thread_bytes;  // per thread: the scalar stack
    int32_t* done;         // per block: 1 once its reverse sweep ran, -1 while reporting an overflow
    unsigned long long* need;  // [0] most block bytes, [1] most thread bytes any block needed
};

struct DeviceTape {
    unsigned char* block = nullptr;
    unsigned char* thread = nullptr;  // this thread's first word
    int64_t stride = 0;               // bytes between a thread's words
    int64_t block_cap = 0, thread_cap = 0, block_top = 0, thread_top = 0;  // thread_*: in bytes, 8 per value
    volatile int32_t* done = nullptr;
    unsigned long long* need = nullptr;
};

// This block's tape, or nullptr when the block finished in an earlier launch.
TL_HD bool open_tape(Ctx& ctx, DeviceTape& t, const TapeDesc& d, const LaunchDesc& L) {
    int64_t block = 0;
    for (int k = 0; k < L.ndim; ++k)  // lane_tid 2: the last tid is block coordinate * block_dim + lane
        block = block * L.dim[k] + (L.lane_tid == 2 && k == L.ndim - 1 ? ctx.tid[k] / L.block_dim : ctx.tid[k]);
    if (L.lane_tid == 3) block /= L.block_dim;  // lane_tid 3: tid is the thread's point of dim
    t.done = d.done + block;
    if (*t.done == 1) return false;
    unsigned char* region = d.base + block * (d.block_bytes + int64_t(ctx.nlanes) * d.thread_bytes);
    t.block = region;
    t.thread = region + d.block_bytes + 8 * int64_t(ctx.lane);
    t.stride = 8 * int64_t(ctx.nlanes);
    t.block_cap = d.block_bytes;
    t.thread_cap = d.thread_bytes;
    t.need = d.need;
    ctx.sync();
    if (ctx.leader()) *t.done = 0;
    ctx.sync();
    ctx.dtape = &t;
    return true;
}

// A thread's value takes one 8-byte word per 8 bytes (a vector or matrix several, pushed in order).
template <class T> TL_HD void tape_push_scalar(Ctx& ctx, const T& v) {
    constexpr int words = (int(sizeof(T)) + 7) / 8;
    DeviceTape& t = *ctx.dtape;
    const unsigned char* src = reinterpret_cast<const unsigned char*>(&v);
    for (int w = 0; w < words; ++w) {
        const int n = int(sizeof(T)) - 8 * w < 8 ? int(sizeof(T)) - 8 * w : 8;
        if (t.thread_top + 8 <= t.thread_cap) memcpy(t.thread + t.thread_top / 8 * t.stride, src + 8 * w, n);
        t.thread_top += 8;
    }
}
template <class T> TL_HD T tape_pop_scalar(Ctx& ctx) {
    constexpr int words = (int(sizeof(T)) + 7) / 8;
    DeviceTape& t = *ctx.dtape;
    T v;
    unsigned char* dst = reinterpret_cast<unsigned char*>(&v);
    for (int w = words - 1; w >= 0; --w) {
        const int n = int(sizeof(T)) - 8 * w < 8 ? int(sizeof(T)) - 8 * w : 8;
        t.thread_top -= 8;
        memcpy(dst + 8 * w, t.thread + t.thread_top / 8 * t.stride, n);
    }
    return v;
}

template <class TT> constexpr int64_t tape_tile_bytes() { return (int64_t(sizeof(TT)) + 15) / 16 * 16; }

// A shared tile, saved by the block's threads together (each copies the elements it later restores).
template <class TT> TL_HD void tape_push_tile(Ctx& ctx, const TT& x) {
    DeviceTape& t = *ctx.dtape;
    if (t.block_top + tape_tile_bytes<TT>() <= t.block_cap) {
        auto* slot = reinterpret_cast<typename TT::value_type*>(t.block + t.block_top);
        ctx.sync();
        for (int e = ctx.lane; e < TT::size; e += ctx.nlanes) slot[e] = x.data[e];
    }
    t.block_top += tape_tile_bytes<TT>();
}
template <class TT> TL_HD void tape_pop_tile(Ctx& ctx, TT& x) {
    DeviceTape& t = *ctx.dtape;
    t.block_top -= tape_tile_bytes<TT>();
    const auto* slot = reinterpret_cast<const typename TT::value_type*>(t.block + t.block_top);
    ctx.sync();
    for (int e = ctx.lane; e < TT::size; e += ctx.nlanes) x.data[e] = slot[e];
    ctx.sync();
}

// Between replay and reverse sweep: true when the whole block's tape fit. Otherwise the block
// reports its need and returns before writing anything.
TL_HD bool tape_ready(Ctx& ctx) {
    DeviceTape& t = *ctx.dtape;
    const bool over = t.block_top > t.block_cap || t.thread_top > t.thread_cap;
    if (over) {
        const auto block_need = (unsigned long long)t.block_top, thread_need = (unsigned long long)t.thread_top;
        atomic_update(t.need, [block_need](unsigned long long o) { return o < block_need ? block_need : o; });
        atomic_update(t.need + 1, [thread_need](unsigned long long o) { return o < thread_need ? thread_need : o; });
        *t.done = -1;
    }
    ctx.sync();
    const bool fits = *t.done != -1;
    ctx.sync();
    if (fits && ctx.leader()) *t.done = 1;
    return fits;
}

// Host side: launch(TapeDesc) until every block has run its reverse sweep. Mem allocates, zeroes,
// reads and frees the launch's memory (the device's, or the host's in the emulation).
template <class Mem, class Launch> int launch_with_tape(Mem& mem, int64_t blocks, int nlanes, Launch launch) {
    int64_t block_bytes = 256, thread_bytes = 32;  // a first guess; grows to the measured need
    auto* done = static_cast<int32_t*>(mem.alloc(size_t(blocks) * sizeof(int32_t)));
    auto* need = static_cast<unsigned long long*>(mem.alloc(2 * sizeof(unsigned long long)));
    if (!done || !need) return 2;  // out of memory
    mem.zero(done, size_t(blocks) * sizeof(int32_t));
    int rc = 0;
    for (int attempt = 0;; ++attempt) {
        TapeDesc t{};
        t.block_bytes = (block_bytes + 15) / 16 * 16;
        t.thread_bytes = (thread_bytes + 15) / 16 * 16;  // a multiple of the 8-byte word
        t.base = static_cast<unsigned char*>(mem.alloc(size_t(blocks * (t.block_bytes + nlanes * t.thread_bytes))));
        t.done = done;
        t.need = need;
        if (!t.base) { rc = 2; break; }
        mem.zero(need, 2 * sizeof(unsigned long long));
        rc = launch(t);
        unsigned long long got[2] = {0, 0};
        if (rc == 0) rc = mem.read(got, need, sizeof(got));
        mem.free(t.base);
        if (rc != 0 || (got[0] <= (unsigned long long)t.block_bytes && got[1] <= (unsigned long long)t.thread_bytes))
            break;
        if (attempt == 2) { rc = 3; break; }  // the replay is deterministic: one relaunch suffices
        block_bytes = block_bytes > int64_t(got[0]) ? block_bytes : int64_t(got[0]);
        thread_bytes = thread_bytes > int64_t(got[1]) ? thread_bytes : int64_t(got[1]);
    }
    mem.free(done);
    mem.free(need);
    return rc;
}

#if defined(__CUDACC__) && !defined(TILEC_CUDA_EMU)
// Device memory on the launch's stream, for launch_with_tape.
struct DeviceMemory {
    cudaStream_t stream;
    void* alloc(size_t bytes) {
        void* p = nullptr;
        return cudaMalloc(&p, bytes ? bytes : 1) == cudaSuccess ? p : nullptr;
    }
    void zero(void* p, size_t bytes) { cudaMemsetAsync(p, 0, bytes, stream); }
    int read(void* dst, const void* src, size_t bytes) {
        cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream);
        return int(e == cudaSuccess ? cudaStreamSynchronize(stream) : e);
    }
    void free(void* p) {
        cudaStreamSynchronize(stream);
        cudaFree(p);
    }
};
#endif

}  // namespace tl
