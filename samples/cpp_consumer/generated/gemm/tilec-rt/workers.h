// Workers: the count of host threads running tilec blocks in this process, shared by the CPU
// runtime (lanes.h registers each worker) and the lock-free tile add (atomic.h SoloAdd). Its own
// header because both need it and lanes.h is included by way of atomic.h's ctx.h.
#pragma once

#include <atomic>

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

}  // namespace tl
