// Workers: the count of host threads running tilec blocks in this process, shared by the CPU
// runtime (lanes.h registers each worker) and the lock-free tile add (atomic.h SoloAdd). Its own
// header because both need it and lanes.h is included by way of atomic.h's ctx.h.
#pragma once

#include <atomic>
#include <cstddef>

namespace tl {

// The host threads running blocks right now, in every launch of the process (as far as tilec's
// span locks reach: atomic.h), and a flag a lone worker holds while it adds a tile without locks.
// A worker registers before its first block; a new one then waits for a lock-free add in
// progress to finish, and every add that checks after the registration sees two workers and
// locks (atomic.h SoloAdd: both sides are sequentially consistent, Dekker's order).
struct Workers {
    static std::atomic<int>& running() {
        static std::atomic<int> n{0};
        return n;
    }
    static std::atomic<unsigned char>& solo_add() {
        static std::atomic<unsigned char> busy{0};
        return busy;
    }
    Workers() {
        running().fetch_add(1);
        while (solo_add().load()) {}
    }
    ~Workers() { running().fetch_sub(1); }
    Workers(const Workers&) = delete;
    Workers& operator=(const Workers&) = delete;
};

#if !defined(__CUDA_ARCH__)
// A tile add by the only worker running in the process needs no span locks (atomic.h): nothing
// else can touch the array meanwhile. Held (true) means the caller may add without locks until the
// object goes; a worker that registers meanwhile waits for that (Workers). One exchange instead
// of a lock per row: a 32 x 32 tile add of a GEMM adjoint took 32 locks. A launch's only worker
// takes it once per chunk of blocks (lanes.h launch_blocks) and the adds in between borrow it
// (`chunk`: the block's Ctx::solo): the exchange, a full barrier behind the block's stores, cost
// ~3 % of a layernorm adjoint per add.
// Exactly as safe as the span locks themselves: both are the process's single objects where the
// compiler merges them across libraries (g++), per library otherwise.
struct SoloAdd {
    bool held = false;
    explicit SoloAdd(bool chunk) { take(chunk); }
    explicit SoloAdd(std::nullptr_t) {}  // nothing taken yet (memory.h RowAdd takes it later)
    void take(bool chunk) {
        if (chunk) {  // the chunk's: borrowed, never released here
            held = borrowed_ = true;
            return;
        }
        if (Workers::solo_add().exchange(1) == 0) {
            held = Workers::running().load() == 1;
            if (!held) Workers::solo_add().store(0, std::memory_order_release);
        }
    }
    void drop() {  // a release store (no locked instruction): a worker that then reads 0 sees the adds
        if (held && !borrowed_) Workers::solo_add().store(0, std::memory_order_release);
        held = borrowed_ = false;
    }
    ~SoloAdd() { drop(); }
    SoloAdd(const SoloAdd&) = delete;
    SoloAdd& operator=(const SoloAdd&) = delete;

  private:
    bool borrowed_ = false;
};

#endif

}  // namespace tl
