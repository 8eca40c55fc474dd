// tilec runtime (CPU): the helper threads that run a launch's blocks beside the calling thread.
//
// A thread started per launch began running 0.5-1.7 ms after it was made on a 2-vCPU VM (median;
// the new thread waits on the parent's CPU for the scheduler's balance): GEMM 256/512 launches of
// 0.5-3 ms were over before their second thread ran, and two threads were slower than one. The
// helpers here are made once and kept: a launch hands each the same work, and wakes it (a futex
// when it sleeps). A helper that finishes spins a while (TILEC_SPIN_US, default 100) before it
// sleeps, so that back-to-back launches find it awake.
//
// A launch never waits for a helper to arrive: once the calling thread finds no block left, it
// takes back the helpers that have not begun (a late wake-up costs the launch nothing) and waits
// only for those running blocks. Several launches at once (from several host threads) take
// distinct helpers; past MAX_HELPERS a launch starts threads of its own for the rest, as before.
//
// One pool per library (internal linkage, like gemm.h's PanelCache: libraries built by other
// tilec versions share nothing), never freed: idle helpers sleep until the process ends. A forked
// child starts a new one (the parent's helpers do not exist there; its pool's lock may be held).
// Compiled where launch_blocks is defined: lanes.h.
#pragma once
#if !defined(__CUDACC__) && (!defined(TILEC_SHARED_RUNTIME) || defined(TILEC_RUNTIME_IMPL))
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <thread>
#include <vector>

namespace tl {

inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

namespace {

// One kept thread. Its state moves IDLE -> POSTED (a launch hands it work) -> RUNNING (it took
// the work) -> DONE -> IDLE (the launch took it back), or POSTED -> IDLE (the launch took it back
// before it began).
class Helper {
  public:
    enum State : int { IDLE, POSTED, RUNNING, DONE };

    explicit Helper(long spin_us) : spin_us_(spin_us), thread_([this] { loop(); }) { thread_.detach(); }
    Helper(const Helper&) = delete;
    Helper& operator=(const Helper&) = delete;

    void post(void (*work)(void*), void* arg) {
        work_ = work;
        arg_ = arg;
        set(POSTED);
    }
    // After the launch's own blocks: takes the helper back (true: it never began the work), else
    // waits until it finished.
    bool take_back() {
        int expect = POSTED;
        if (state_.compare_exchange_strong(expect, IDLE)) return true;
        for (int k = 0; k < 1 << 12 && state_.load() != DONE; ++k) spin_pause();  // its last block
        if (state_.load() != DONE) {
            std::unique_lock<std::mutex> hold(lock_);
            launch_waits_ = true;
            woken_.wait(hold, [&] { return state_.load() == DONE; });
            launch_waits_ = false;
        }
        state_.store(IDLE);
        return false;
    }

  private:
    void set(State s) {
        bool wake;
        {
            std::lock_guard<std::mutex> hold(lock_);
            state_.store(s);
            wake = s == POSTED ? helper_sleeps_ : launch_waits_;
        }
        if (wake) woken_.notify_all();
    }
    // Spins up to spin_us_ for work, then sleeps until some arrives.
    bool await_work() {
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us_);
        for (int k = 0;; ++k) {
            const int s = state_.load();
            if (s == POSTED) return true;
            if ((k & 63) == 63 && std::chrono::steady_clock::now() >= until) break;
            spin_pause();
        }
        std::unique_lock<std::mutex> hold(lock_);
        helper_sleeps_ = true;
        woken_.wait(hold, [&] { return state_.load() == POSTED; });
        helper_sleeps_ = false;
        return true;
    }
    void loop() {
        // A thread_local with a destructor keeps the library loaded while this thread lives
        // (glibc does not unmap a library whose thread_local destructors are pending at dlclose).
        static thread_local struct Pin {
            ~Pin() {}
        } pin;
        (void)&pin;
        while (await_work()) {
            int expect = POSTED;
            if (!state_.compare_exchange_strong(expect, RUNNING)) continue;  // taken back
            work_(arg_);
            set(DONE);
        }
    }

    const long spin_us_;
    std::atomic<int> state_{IDLE};
    void (*work_)(void*) = nullptr;
    void* arg_ = nullptr;
    std::mutex lock_;
    std::condition_variable woken_;
    // Who sleeps on woken_ (two flags: a launch woken late must not clear the helper's, which may
    // already sleep again for its next work).
    bool helper_sleeps_ = false;  // for POSTED
    bool launch_waits_ = false;   // for DONE
    std::thread thread_;    // last: it starts running loop() when made
};

class HelperPool {
  public:
    static constexpr int MAX_HELPERS = 256;

    // The process's pool (made on first use; a new one in a forked child).
    static HelperPool& get() {
        static std::once_flag once;
        std::call_once(once, [] { pthread_atfork(nullptr, nullptr, [] { current() = nullptr; }); });
        HelperPool*& p = current();
        if (!p) p = new HelperPool();  // never freed: its helpers live as long as the process
        return *p;
    }

    // Up to n idle helpers, made when there are too few (at most MAX_HELPERS in all); the rest of
    // the n the caller starts itself.
    std::vector<Helper*> take(int n) {
        std::vector<Helper*> out;
        std::lock_guard<std::mutex> hold(lock_);
        while (int(out.size()) < n && !idle_.empty()) {
            out.push_back(idle_.back());
            idle_.pop_back();
        }
        while (int(out.size()) < n && int(all_.size()) < MAX_HELPERS) {
            try {
                all_.emplace_back(new Helper(spin_us_));
            } catch (...) {  // no thread to be had: the launch runs on fewer
                break;
            }
            out.push_back(all_.back().get());
        }
        return out;
    }
    void give_back(const std::vector<Helper*>& helpers) {
        std::lock_guard<std::mutex> hold(lock_);
        idle_.insert(idle_.end(), helpers.begin(), helpers.end());
    }

  private:
    HelperPool() {
        const char* env = std::getenv("TILEC_SPIN_US");
        spin_us_ = env ? std::max(0L, std::atol(env)) : 100L;
    }
    static HelperPool*& current() {
        static HelperPool* p = nullptr;
        return p;
    }

    std::mutex lock_;
    std::vector<std::unique_ptr<Helper>> all_;
    std::vector<Helper*> idle_;
    long spin_us_ = 100;
};

}  // namespace

// Runs work() on n threads at once, the calling thread one of them; returns when every call that
// began has returned. work must return at once when there is nothing left to do (a helper may
// begin after the others finished, or not at all when the caller takes it back first).
template <class F> inline void run_on_threads(int n, F& work) {
    if (n <= 1) {
        work();
        return;
    }
    HelperPool& pool = HelperPool::get();
    std::vector<Helper*> helpers = pool.take(n - 1);
    auto call = [](void* f) { (*static_cast<F*>(f))(); };
    for (Helper* h : helpers) h->post(call, &work);
    std::vector<std::thread> extra;  // past the pool's limit
    for (int t = 1 + int(helpers.size()); t < n; ++t) {
        try {
            extra.emplace_back([&work] { work(); });
        } catch (...) {
            break;  // the launch's blocks go to the threads it has
        }
    }
    work();
    for (Helper* h : helpers) h->take_back();
    for (auto& t : extra) t.join();
    pool.give_back(helpers);
}

}  // namespace tl
#endif
