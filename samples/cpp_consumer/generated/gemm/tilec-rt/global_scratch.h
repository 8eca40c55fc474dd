// tilec runtime: global scratch, for tiles past a kernel's shared-memory budget
// (backend_cuda/storage.py). Such a kernel keeps its largest tiles in a slice of a global buffer,
// `block_bytes` per resident block. On the GPU the launch runs min(blocks, resident blocks) CUDA
// blocks, at most as many as the device's free memory holds slices for; each loops over the
// grid's blocks (blockIdx.x, += gridDim.x) and reuses its slice, zeroed per block like shared
// memory. In the CUDA emulation each host worker thread is one resident block. The launch
// allocates the buffer on its stream and frees it stream-ordered (the driver's pool caches it);
// when that fails the C entry returns 2 (out of memory) and the loader raises MemoryError.
#pragma once
#include <cstdint>

namespace tl {

struct ScratchDesc {  // a kernel parameter, by value
    unsigned char* base;
    int64_t block_bytes;  // one resident block's slice
    int64_t slots;        // resident blocks: slices in the buffer
    int64_t blocks;       // the grid's blocks
};

#if defined(__CUDACC__) && !defined(TILEC_CUDA_EMU)
// How many blocks of `kernel` run at once on the current device (occupancy x multiprocessors),
// at most `blocks`, and at most as many slices as half the free device memory holds (at least 1).
template <class K>
inline int64_t resident_blocks(K kernel, int block_dim, size_t smem_bytes, int64_t blocks, int64_t block_bytes) {
    int device = 0, sms = 1, per_sm = 1;
    cudaGetDevice(&device);
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms < 1) sms = 1;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_dim, smem_bytes) != cudaSuccess ||
        per_sm < 1)
        per_sm = 1;
    cudaGetLastError();  // the queries' failures are not the launch's
    int64_t slots = int64_t(sms) * per_sm;
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess && block_bytes > 0) {
        const int64_t fit = int64_t(free_bytes / 2 / size_t(block_bytes));
        slots = fit < slots ? fit : slots;
    }
    slots = slots < blocks ? slots : blocks;
    return slots < 1 ? 1 : slots;
}

// The launch's scratch on `stream`: 0, or 2 when the device is out of memory (another CUDA error:
// its code).
inline int open_device_scratch(ScratchDesc& s, cudaStream_t stream) {
    void* p = nullptr;
    const cudaError_t e = cudaMallocAsync(&p, size_t(s.block_bytes) * size_t(s.slots), stream);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return e == cudaErrorMemoryAllocation ? 2 : int(e);
    }
    s.base = static_cast<unsigned char*>(p);
    return 0;
}

inline void close_device_scratch(ScratchDesc& s, cudaStream_t stream) { cudaFreeAsync(s.base, stream); }
#endif

}  // namespace tl
