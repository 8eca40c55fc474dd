// tilec runtime: the CUDA emulation. A .cu written by tilec compiles as host C++ with this
// header forced in (-include): each CUDA block runs as block_dim fibers on a host thread, with a
// real barrier for __syncthreads(), and its shared memory is a per-block host buffer. So the
// GPU layouts and synchronisation run, and are tested, on a machine without a GPU.
#pragma once
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "global_scratch.h"
#include "lanes.h"

namespace tl {

inline unsigned char*& emu_smem() {
    static thread_local unsigned char* p = nullptr;
    return p;
}

inline unsigned char*& emu_gmem() {
    static thread_local unsigned char* p = nullptr;
    return p;
}

// The context of the running fiber, as device_ctx gives it on the GPU.
inline Ctx device_ctx(const LaunchDesc&, unsigned char*) {
    LaneGroup* g = LaneGroup::running();
    Ctx ctx = g ? g->ctxs[g->current] : *single_lane_ctx();
    ctx.smem = emu_smem();
    ctx.gmem = emu_gmem();
    return ctx;
}
// The emulation runs the kernel once per block: the block is the fiber's.
inline Ctx device_ctx(const LaunchDesc& L, unsigned char* smem, int64_t) { return device_ctx(L, smem); }

// The emulation's "device" memory for the tape's launch loop (device_tape.h): the host's.
struct HostMemory {
    void* alloc(size_t bytes) { return std::calloc(bytes ? bytes : 1, 1); }
    void zero(void* p, size_t bytes) { std::memset(p, 0, bytes); }
    int read(void* dst, const void* src, size_t bytes) {
        std::memcpy(dst, src, bytes);
        return 0;
    }
    void free(void* p) { std::free(p); }
};

template <class T> inline void shared_atomic_add(T* p, T v) { *p = T(compute_t<T>(*p) + compute_t<T>(v)); }
template <class T> inline void shared_atomic_bit(T* p, T v, char Op) {
    if constexpr (std::is_integral<T>::value) *p = Op == '&' ? T(*p & v) : Op == '|' ? T(*p | v) : T(*p ^ v);
}

// Runs kernel() as blocks of block_dim fibers; blocks spread over host threads; each block
// gets zeroed shared memory.
template <class F> inline void emu_launch(const LaunchDesc& L, size_t smem_bytes, size_t stack_bytes, F kernel) {
    std::function<void(Ctx&)> body = [&](Ctx&) { kernel(); };
    launch_blocks(L, true, stack_bytes, body, [&]() {
        static thread_local std::vector<unsigned char> buffer;
        buffer.assign(smem_bytes + 64, 0);
        emu_smem() = buffer.data();
    }, true);  // a partial last block: block_dim fibers, the missing threads as stand-ins (ctx_cuda.h)
}

// emu_launch for a kernel with global scratch: each worker thread (a resident block) takes its
// own slice of scratch.base, as each resident CUDA block does on the GPU.
template <class F>
inline void emu_launch(const LaunchDesc& L, size_t smem_bytes, size_t stack_bytes, const ScratchDesc& scratch,
                       F kernel) {
    std::function<void(Ctx&)> body = [&](Ctx&) { kernel(); };
    std::mutex lock;
    std::map<std::thread::id, int64_t> slices;
    launch_blocks(L, true, stack_bytes, body, [&]() {
        static thread_local std::vector<unsigned char> buffer;
        buffer.assign(smem_bytes + 64, 0);
        emu_smem() = buffer.data();
        int64_t slice = 0;
        {
            std::lock_guard<std::mutex> hold(lock);
            slice = slices.emplace(std::this_thread::get_id(), int64_t(slices.size())).first->second;
        }
        if (slice >= scratch.slots) throw std::logic_error("more emulation workers than scratch slices");
        emu_gmem() = scratch.base + slice * scratch.block_bytes;
    }, true);
}

}  // namespace tl
