// tilec runtime (CPU): the block context, cooperative lanes and the block-parallel driver.
//
// A kernel body runs once per block with one lane, unless it depends on the
// lane (tile(x), untile, the lane from tid(), per-lane atomics): then its
// block_dim lanes run as fibers on one OS thread, switching at barriers.
// Every lane holds its own copy of each tile and computes it redundantly;
// cross-lane ops gather through the block's scratch buffer, and tile side
// effects are performed by the leader lane only.
#pragma once
#include <atomic>
#include <exception>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <sys/mman.h>
#include <thread>
#include <ucontext.h>
#include <vector>

#include "core.h"
#include "thread_pool.h"
#include "workers.h"

namespace tl {

struct LaneGroup;
struct DeviceTape;  // the .cu tape (device_tape.h), in the CUDA emulation

// A lane's stack of saved values for the reverse sweep of an adjoint kernel.
struct Tape {
    std::vector<unsigned char> bytes;
    size_t top = 0;
    template <class T> void push(const T& v) {
        if (top + sizeof(T) > bytes.size()) bytes.resize((top + sizeof(T)) * 2);
        std::memcpy(bytes.data() + top, &v, sizeof(T));
        top += sizeof(T);
    }
    template <class T> void pop(T& v) {
        top -= sizeof(T);
        std::memcpy(&v, bytes.data() + top, sizeof(T));
    }
};

struct Ctx {
    int64_t tid[5] = {};  // block coordinates, then the lane when the launch asked for it
    int lane = 0;
    int nlanes = 1;
    int block_dim = 1;
    LaneGroup* group = nullptr;
    Tape* tape = nullptr;
    DeviceTape* dtape = nullptr;
    unsigned char* smem = nullptr;  // the block's shared memory (CUDA emulation only)
    unsigned char* gmem = nullptr;  // the block's global scratch slice (CUDA emulation only)
    // The lanes this block runs: block_dim, or fewer in the partial last block of a SIMT launch.
    // Warp's rule there: tile element e belongs to lane e % block_dim, and the elements of the
    // missing lanes are inactive (stores skip them, reductions and scans leave them out).
    int active = 1 << 30;
    // The launch's only worker holds the lock-free tile add for this block's chunk (workers.h
    // SoloAdd): its tile adds borrow it instead of taking it each.
    bool solo = false;
    // The lane that performs a block's tile side effects: the lowest-numbered lane that had not
    // returned at the last barrier (Warp elects the same after a barrier), so a block whose lane 0
    // returned early still stores.
    inline bool leader() const;
    bool partial() const { return active < block_dim; }
    bool live(int e) const { return active >= block_dim || e % block_dim < active; }
    // A lane past the partial last block's threads, run only by the CUDA emulation (launch_blocks'
    // standins): it joins the block's tile operations, its own effects are masked (ctx_cuda.h).
    bool standin() const { return lane >= active; }
    // Whether lane l's body has not returned: a returned lane's exchange slots are stale.
    inline bool running(int l) const;
    inline void sync();
    inline unsigned char* scratch();
    // One T per lane in the block's shared buffer (grown on demand; lanes switch only at sync).
    template <class T> T* shared_slots();
};

struct LaneGroup {
    int n = 0;
    size_t stack_bytes = 0;
    std::vector<ucontext_t> lanes;
    std::vector<char*> stacks;
    std::vector<unsigned char> done;
    ucontext_t scheduler;
    int current = 0;
    int first_alive = 0;  // the lowest-numbered lane whose body had not returned when this phase began
    std::vector<unsigned char> scratch;  // 512 bytes per lane (a spatial_matrixd element and its index fit)
    std::vector<unsigned char> shared;  // larger per-lane slots (lane_sum)
    const std::function<void(Ctx&)>* body = nullptr;
    Ctx* ctxs = nullptr;

    LaneGroup(int lanes_, size_t stack_bytes_) : n(lanes_), stack_bytes(stack_bytes_) {
        lanes.resize(n);
        stacks.resize(n);
        done.resize(n);
        scratch.resize(size_t(n) * 512);
        for (int l = 0; l < n; ++l) {
            void* p = mmap(nullptr, stack_bytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (p == MAP_FAILED) throw std::bad_alloc();
            stacks[l] = static_cast<char*>(p);
        }
    }
    ~LaneGroup() {
        for (char* s : stacks) munmap(s, stack_bytes);
    }
    static LaneGroup*& running() {
        static thread_local LaneGroup* g = nullptr;
        return g;
    }
    std::exception_ptr failure;  // the first exception a lane threw (rethrown by run)
    static void trampoline() {
        LaneGroup* g = running();
        int l = g->current;
        try {  // an exception must not unwind out of a fiber
            (*g->body)(g->ctxs[l]);
        } catch (...) {
            if (!g->failure) g->failure = std::current_exception();
        }
        g->done[l] = 1;
    }
    // Runs body for the first `count` lanes (all by default); lanes switch at sync() in
    // round-robin order.
    void run(const std::function<void(Ctx&)>& fn, Ctx* lane_ctxs, int count = -1) {
        body = &fn;
        ctxs = lane_ctxs;
        LaneGroup* outer = running();
        running() = this;
        const int n = count < 0 || count > this->n ? this->n : count;
        first_alive = 0;
        for (int l = n; l < this->n; ++l) done[l] = 1;  // lanes a partial block does not run
        for (int l = 0; l < n; ++l) {
            done[l] = 0;
            getcontext(&lanes[l]);
            lanes[l].uc_stack.ss_sp = stacks[l];
            lanes[l].uc_stack.ss_size = stack_bytes;
            lanes[l].uc_link = &scheduler;
            makecontext(&lanes[l], trampoline, 0);
        }
        // TILEC_EMU_SCHEDULE=reverse runs each phase from the last lane down: results that change
        // with the order expose a missing barrier (a GPU would race there).
        const char* schedule = std::getenv("TILEC_EMU_SCHEDULE");
        const bool reverse = schedule && std::strcmp(schedule, "reverse") == 0;
        int alive = n;
        while (alive > 0) {
            alive = 0;
            // a phase: every live lane runs to its next barrier (or returns); its leader is fixed
            // at its start, so a leader that returns in it does not hand its effects to the next lane
            while (first_alive < this->n && done[first_alive]) ++first_alive;
            for (int k = 0; k < n; ++k) {
                const int l = reverse ? n - 1 - k : k;
                if (done[l]) continue;
                current = l;
                swapcontext(&scheduler, &lanes[l]);
                if (!done[l]) ++alive;
            }
        }
        running() = outer;
        if (failure) {
            std::exception_ptr e = failure;
            failure = nullptr;
            std::rethrow_exception(e);
        }
    }
    void barrier(int lane) { swapcontext(&lanes[lane], &scheduler); }
};

inline bool Ctx::leader() const { return group ? lane == group->first_alive : lane == 0; }
inline bool Ctx::running(int l) const { return !group || !group->done[l]; }
inline void Ctx::sync() {
    if (group) group->barrier(lane);
}
inline unsigned char* Ctx::scratch() { return group ? group->scratch.data() : nullptr; }
template <class T> T* Ctx::shared_slots() {
    size_t need = sizeof(T) * size_t(nlanes) + alignof(T);
    if (group->shared.size() < need) group->shared.resize(need);
    void* p = group->shared.data();
    size_t space = group->shared.size();
    return static_cast<T*>(std::align(alignof(T), sizeof(T) * size_t(nlanes), p, space));
}

// The C ABI launch description (mirrored in the generated header).
struct LaunchDesc {
    int64_t dim[4];
    int32_t ndim;
    int32_t lane_tid;  // 1: tid() returns the lane after the block coordinates; 2: tid() is the global
                       // thread index (a tile kernel's launch(): the last block coordinate * block_dim + lane);
                       // 3: dim counts threads, a block is block_dim consecutive ones in row-major order
                       // (a tile kernel's launch() whose blocks span rows of dim); the last block
                       // has fewer lanes when block_dim does not divide the number of threads
    int32_t block_dim;
    int32_t num_threads;  // 0: all cores
};


inline int worker_count(const LaunchDesc& L, int64_t nblocks) {
    int n = L.num_threads;
    if (n <= 0) {
        const char* env = std::getenv("TILEC_NUM_THREADS");
        n = env ? std::atoi(env) : int(std::thread::hardware_concurrency());
    }
    if (n < 1) n = 1;
    if (int64_t(n) > nblocks) n = int(nblocks);
    return n < 1 ? 1 : n;
}

// A thread's fibers (their stacks mapped, the pages they touched faulted in) are kept for its next
// launch of the same block_dim: making them anew cost a one-block launch of 64 lanes ~0.5 ms (64
// mmap and munmap calls, the stacks' first pages faulted again).
inline std::unique_ptr<LaneGroup>& lane_group_slot() {
    static thread_local std::unique_ptr<LaneGroup> kept;
    return kept;
}
inline std::unique_ptr<LaneGroup> kept_lane_group(int lanes, size_t stack_bytes) {
    std::unique_ptr<LaneGroup>& kept = lane_group_slot();
    if (kept && kept->n == lanes && kept->stack_bytes >= stack_bytes) return std::move(kept);
    return std::unique_ptr<LaneGroup>(new LaneGroup(lanes, stack_bytes));
}
inline void keep_lane_group(std::unique_ptr<LaneGroup> group) { lane_group_slot() = std::move(group); }

inline Ctx*& single_lane_ctx() {
    static thread_local Ctx* ctx = nullptr;
    return ctx;
}

// Runs body(ctx) for every block of the launch grid, in parallel across cores. block_setup,
// when given, runs on the block's host thread before the block starts.
// TILEC_SHARED_RUNTIME: declared only, defined once in a runtime object that tilec compiles per
// compiler and flags, caches and links into each CPU library (TILEC_RUNTIME_IMPL compiles that
// object): each module's build skips compiling the launch machinery (threads, fibers) again.
#if defined(TILEC_SHARED_RUNTIME) && !defined(TILEC_RUNTIME_IMPL)
void launch_blocks(const LaunchDesc& L, bool lanes_needed, size_t stack_bytes,
                   const std::function<void(Ctx&)>& body, const std::function<void()>& block_setup = nullptr,
                   bool standins = false);
#else
#ifdef TILEC_RUNTIME_IMPL
#define TILEC_RUNTIME_LINKAGE
#else
#define TILEC_RUNTIME_LINKAGE inline
#endif
TILEC_RUNTIME_LINKAGE void launch_blocks(const LaunchDesc& L, bool lanes_needed, size_t stack_bytes,
                                         const std::function<void(Ctx&)>& body,
                                         const std::function<void()>& block_setup = nullptr,
                                         bool standins = false) {
    int64_t nblocks = 1;
    for (int k = 0; k < L.ndim; ++k) nblocks *= L.dim[k];
    const int64_t threads = nblocks;  // lane_tid 3: the launch's threads
    if (L.lane_tid == 3) nblocks = (nblocks + L.block_dim - 1) / L.block_dim;  // the last may be partial
    if (nblocks <= 0) return;
    const bool fibers = (lanes_needed || L.lane_tid) && L.block_dim > 1;
    std::atomic<int64_t> next{0};
    const int nworkers = worker_count(L, nblocks);
    int64_t chunk = nblocks / (int64_t(nworkers) * 16);
    chunk = chunk < 1 ? 1 : chunk;
    std::exception_ptr failure;  // the first exception of any worker: rethrown to the entry point
    std::mutex failure_lock;
    auto guarded_worker = [&](auto&& work) {
        try {
            work();
        } catch (...) {
            std::lock_guard<std::mutex> hold(failure_lock);
            if (!failure) failure = std::current_exception();
            next.store(nblocks);  // the other workers stop at their next chunk
        }
    };
    auto worker_body = [&]() {
        if (next.load(std::memory_order_relaxed) >= nblocks) return;  // a helper that came late
        const Workers registered;  // before any block: see Workers
        // the fibers' stacks, kept by the thread between launches (taken out while in use)
        std::unique_ptr<LaneGroup> owned = fibers ? kept_lane_group(L.block_dim, stack_bytes) : nullptr;
        struct GiveBack {
            std::unique_ptr<LaneGroup>& group;
            ~GiveBack() {
                if (group) keep_lane_group(std::move(group));
            }
        } give_back{owned};
        LaneGroup* group = owned.get();
        std::vector<Ctx> ctxs(fibers ? L.block_dim : 1);
        std::vector<Tape> tapes(ctxs.size());
        Ctx proto;  // what every block's context starts from
        proto.block_dim = L.block_dim;
        proto.tape = &tapes[0];
        ctxs[0] = proto;
        int64_t coord[4] = {};  // block b's coordinates: divided out once per chunk, then counted up
        int64_t b = 0, chunk_end = 0;
        SoloAdd solo(nullptr);  // a lone worker's tile adds skip their locks: taken once per chunk (workers.h)
        for (;; ++b) {
            if (b >= chunk_end) {  // claim blocks a chunk at a time: one shared atomic per chunk
                solo.drop();
                b = next.fetch_add(chunk);
                if (b >= nblocks) break;
                if (nworkers == 1) solo.take(false);
                proto.solo = solo.held;
                ctxs[0].solo = solo.held;
                chunk_end = b + chunk < nblocks ? b + chunk : nblocks;
                int64_t rest = b;
                for (int k = L.ndim - 1; k >= 0; --k) {
                    coord[k] = rest % L.dim[k];
                    rest /= L.dim[k];
                }
                if (!fibers) single_lane_ctx() = &ctxs[0];
            } else {
                for (int k = L.ndim - 1; k >= 0 && ++coord[k] == L.dim[k]; --k) coord[k] = 0;
            }
            if (block_setup) block_setup();
            if (!fibers) {  // the kernel reads its context and never writes it: only tid changes
                Ctx& ctx = ctxs[0];
                for (int k = 0; k < L.ndim; ++k) ctx.tid[k] = coord[k];
                tapes[0].top = 0;
                body(ctx);
                continue;
            }
            Ctx base = proto;
            for (int k = 0; k < L.ndim; ++k) base.tid[k] = coord[k];
            // the partial last block of a SIMT launch runs only its threads' lanes; with standins (the
            // CUDA emulation, as a GPU launches whole blocks) all block_dim, the rest as stand-ins
            const int active = L.lane_tid == 3 && threads - b * L.block_dim < L.block_dim
                                   ? int(threads - b * L.block_dim) : L.block_dim;
            const int running = standins ? L.block_dim : active;
            for (int l = 0; l < running; ++l) {
                ctxs[l] = base;
                ctxs[l].lane = l;
                ctxs[l].nlanes = running;
                ctxs[l].active = active;
                ctxs[l].group = group;
                tapes[l].top = 0;
                ctxs[l].tape = &tapes[l];
                if (L.lane_tid == 1) ctxs[l].tid[L.ndim] = l;
                if (L.lane_tid == 2) ctxs[l].tid[L.ndim - 1] = base.tid[L.ndim - 1] * L.block_dim + l;
                if (L.lane_tid == 3) {  // the thread's global linear index, unflattened over dim
                    int64_t g = b * L.block_dim + l;
                    for (int k = L.ndim - 1; k >= 0; --k) {
                        ctxs[l].tid[k] = g % L.dim[k];
                        g /= L.dim[k];
                    }
                }
            }
            group->run(body, ctxs.data(), running);
        }
    };
    auto worker = [&]() { guarded_worker(worker_body); };
    run_on_threads(nworkers, worker);  // the calling thread and kept helpers (thread_pool.h)
    if (failure) std::rethrow_exception(failure);
}
#undef TILEC_RUNTIME_LINKAGE
#endif

// A tile too large for a thread's stack, on the heap (std::bad_alloc when memory runs out).
template <class T> struct HeapTile {
    std::unique_ptr<T> p;
    explicit HeapTile(bool zero) : p(zero ? new T() : new T) {}
    T& operator*() { return *p; }
};

// The C entry points' status: 0 ok, 2 out of memory, 4 another failure (3: a failed assert, debug.h;
// 5: a reduction over a partial block's group without an active element and without an identity;
// 6: a partial last block the kernel's result is not defined for, see partial_block_defined).
// No exception crosses the C ABI.
// Counts the launches of this library: gemm.h's panel cache keeps B panels packed by a thread for
// the rest of one launch only (the host may rewrite any array between launches). Internal
// linkage, like the cache: an inline variable would be one object shared by every tilec library
// in the process (g++ makes it STB_GNU_UNIQUE), whatever tilec version built them.
namespace {
inline std::atomic<unsigned long long> launch_epoch{1};
}  // namespace

template <class F> inline int guarded_launch(F&& launch) {
    launch_epoch.fetch_add(1, std::memory_order_relaxed);
    try {
        launch();
        return 0;
    } catch (const std::bad_alloc&) {
        return 2;
    } catch (const std::domain_error&) {  // reduce.h: no_active_element
        return 5;
    } catch (...) {
        return 4;  // 3 is TILEC_ASSERT_FAILED (debug.h)
    }
}

}  // namespace tl
