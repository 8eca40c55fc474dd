// tilec runtime: the block context a kernel body runs with.
// On the GPU: one CUDA block, tiles in shared memory (ctx_cuda.h). On the CPU, and in the
// CUDA emulation: lanes as fibers on host threads (lanes.h).
#pragma once
#if defined(__CUDACC__)
#include "ctx_cuda.h"
#else
#include "lanes.h"
#endif
