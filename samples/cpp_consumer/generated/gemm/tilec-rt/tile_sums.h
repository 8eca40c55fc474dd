// tilec runtime (CPU): per-thread sums of the tiles an adjoint adds into an array, added into the
// array once, when the launch's blocks are done.
//
// A GEMM adjoint's block (i, j) adds A_ik^T dC_ij into tile (k, j) of adj_B for every k, and a
// thread runs a block row after another: every block row re-adds into all of adj_B, a
// read-modify-write of the whole array per block row, in rows one array row apart. A TileSums
// gives each worker thread its own copy of the tiles it adds into, each tile contiguous (the
// prefetchers follow it; no locks), and adds every copy into the array after the launch's blocks.
//
// Valid only for an array the kernel never reads, nor writes otherwise, during the launch: the
// emitter proves it (codegen/tile_sums.py) before it passes a TileSums::Part instead of the array.
// The sums are the same up to the order of the float additions (docs/gradients.md). Adds the
// accumulator cannot take go straight into the array, as before: a tile not on the grid of the
// accumulator's tile shape (an offset that is not a multiple of it, or outside the array), a
// partial block (its inactive elements are not added), an array that shares memory with another
// argument of the launch, a grid too large for the index, more worker threads than MAX_PARTS, and
// the tiles past a thread's memory budget.
#pragma once
#if !defined(__CUDACC__)
#include <initializer_list>
#include <memory>
#include <new>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "memory.h"

namespace tl {

// The bytes [lo, hi) an array's elements lie in (lo == hi: no element).
struct ByteSpan {
    uintptr_t lo = 0, hi = 0;
};
template <class T, int N> inline ByteSpan byte_span(const Array<T, N>& a) {
    if (!a.data) return {};
    uintptr_t lo = reinterpret_cast<uintptr_t>(a.data), hi = lo;
    for (int k = 0; k < N; ++k) {
        if (a.shape[k] <= 0) return {};
        const int64_t reach = (a.shape[k] - 1) * a.strides[k];
        if (reach < 0)
            lo -= uintptr_t(-reach);
        else
            hi += uintptr_t(reach);
    }
    return {lo, hi + sizeof(T)};
}

// The memory of the sums, kept between launches (a fresh allocation each launch faulted its pages
// in again: 1-2 % of a GEMM 1024 adjoint). Internal linkage, like gemm.h's PanelCache: one pool per
// library, whatever tilec version built the others.
namespace {
struct SumsMemory {
    static constexpr size_t CHUNK_BYTES = 256 * 1024;  // one allocation; a larger tile takes its own
    static constexpr size_t KEPT = 256;                // chunks kept between launches (64 MiB)
    static std::mutex& lock() {
        static std::mutex m;
        return m;
    }
    static std::vector<void*>& spare() {
        static std::vector<void*> chunks;
        return chunks;
    }
    static void* take(size_t bytes) {
        if (bytes == CHUNK_BYTES) {
            std::lock_guard<std::mutex> hold(lock());
            if (!spare().empty()) {
                void* p = spare().back();
                spare().pop_back();
                return p;
            }
        }
        return ::operator new(bytes, std::align_val_t(64));
    }
    static void give(void* p, size_t bytes) {
        if (bytes == CHUNK_BYTES) {
            std::lock_guard<std::mutex> hold(lock());
            if (spare().size() < KEPT) {
                spare().push_back(p);
                return;
            }
        }
        ::operator delete(p, std::align_val_t(64));
    }
};
}  // namespace

template <class T, int N, int... D> class TileSums;

// One worker thread's sums: the tiles it added into, in the order it first did.
template <class T, int N, int... D> class TileSumsPart {
  public:
    using TT = Tile<T, D...>;
    using Owner = TileSums<T, N, D...>;
    static constexpr size_t PART_BYTES = size_t(256) << 20;  // one thread's sums; later tiles add directly
    static constexpr int CHUNK = SumsMemory::CHUNK_BYTES / sizeof(TT) > 0 ? int(SumsMemory::CHUNK_BYTES / sizeof(TT)) : 1;  // tiles per allocation
    static constexpr size_t CHUNK_BYTES = CHUNK * sizeof(TT) > SumsMemory::CHUNK_BYTES ? CHUNK * sizeof(TT) : SumsMemory::CHUNK_BYTES;

    // direct: the part of threads that make no sums (shared by them: it never allocates)
    TileSumsPart(Owner& owner, bool direct) : owner_(owner), direct_(direct) {}
    ~TileSumsPart() {
        for (T* c : chunks_) SumsMemory::give(c, CHUNK_BYTES);
    }
    TileSumsPart(const TileSumsPart&) = delete;
    TileSumsPart& operator=(const TileSumsPart&) = delete;

    template <class ST, class... O> void add(Ctx& ctx, const ST& t, O... o) {
        if (!ctx.leader()) return;
        if constexpr (std::is_same<ST, TT>::value) {
            bool first = false;
            if (T* sums = !ctx.partial() ? sums_at(first, o...) : nullptr) {
                if (first) {  // the tile's first add: its value (0 + x would turn -0 into +0)
                    for (int e = 0; e < TT::size; ++e) sums[e] = t.data[e];
                } else {
                    for (int e = 0; e < TT::size; ++e) sums[e] = T(compute_t<T>(sums[e]) + compute_t<T>(t.data[e]));
                }
                return;
            }
        }
        tile_atomic_add(ctx, DiscardOld{}, owner_.target(), t, true, o...);  // as without sums
    }

    // Where the tile at offsets o is summed (first: nothing summed there yet), or null: the tile
    // is not on the grid, the sums are off or past the budget (tile_matmul_add, matmul_adds.h).
    template <class... O> T* sums_at(bool& first, O... o) {
        const int64_t g = owner_.grid_index(o...);
        T* sums = g >= 0 ? slot(g) : nullptr;
        first = first_;
        return sums;
    }
    const Array<T, N>& target() const { return owner_.target(); }

  private:
    friend Owner;
    // The sums of grid tile g (first_: just made), or null past the budget or when the sums are off.
    T* slot(int64_t g) {
        if (direct_) return nullptr;
        if (slot_of_.empty()) slot_of_.assign(size_t(owner_.ntiles()), 0);
        int32_t s = slot_of_[size_t(g)];
        first_ = s == 0;
        if (first_) {
            if ((tiles_.size() + 1) * sizeof(TT) > PART_BYTES) return nullptr;
            if (tiles_.size() % CHUNK == 0) chunks_.push_back(static_cast<T*>(SumsMemory::take(CHUNK_BYTES)));
            tiles_.push_back(g);
            s = int32_t(tiles_.size());
            slot_of_[size_t(g)] = s;
        }
        return sums_of(size_t(s - 1));
    }
    T* sums_of(size_t s) const { return chunks_[s / CHUNK] + (s % CHUNK) * TT::size; }
    const T* sums_for(int64_t g) const {
        const int32_t s = slot_of_.empty() ? 0 : slot_of_[size_t(g)];
        return s ? sums_of(size_t(s - 1)) : nullptr;
    }

    Owner& owner_;
    const bool direct_;
    std::thread::id thread_;
    bool first_ = false;
    std::vector<int32_t> slot_of_;  // grid tile -> its slot + 1 (0: none yet); made on the first add
    std::vector<int64_t> tiles_;    // the grid tile of each slot
    std::vector<T*> chunks_;        // the slots, CHUNK tiles per allocation (SumsMemory)
};

template <class T, int N, int... D> class TileSums {
  public:
    using TT = Tile<T, D...>;
    using Part = TileSumsPart<T, N, D...>;
    static_assert(TT::ndim == N, "the accumulator's tile has the array's rank");
    static constexpr int MAX_PARTS = 256;                  // worker threads with their own sums
    static constexpr int64_t MAX_GRID = int64_t(1) << 22;  // tiles of the grid (a 16 MiB index per thread)

    // On one thread, an array this small stays in the core's caches between a block's adds and the
    // next block's: the sums would only add their copy and the final add (GEMM 256, arrays of
    // 256 KiB: backward 1.08 -> 1.23 ms at tile 32; GEMM 512, 1 MiB: even; GEMM 1024, 4 MiB: 81 -> 66).
    // On several threads the sums also spare the adds' span locks, whatever the size.
    static constexpr uint64_t ONE_THREAD_MIN_BYTES = uint64_t(1) << 20;

    // others: every other array argument of the launch; sharing memory with one turns the sums off
    // (the kernel would read what it adds, or add into what it reads, through the other argument).
    TileSums(const LaunchDesc& launch, const Array<T, N>& target, std::initializer_list<ByteSpan> others)
        : target_(target), direct_(*this, true) {
        const ByteSpan mine = byte_span(target);
        ntiles_ = 1;
        for (int k = 0; k < N; ++k) {
            grid_[k] = (target.shape[k] + TT::dim(k) - 1) / TT::dim(k);
            ntiles_ *= grid_[k] > 0 ? grid_[k] : 0;
        }
        int64_t blocks = 1;  // an upper bound (a launch of threads counts threads): only caps the workers
        for (int k = 0; k < launch.ndim; ++k) blocks *= launch.dim[k];
        const bool worth = mine.hi - mine.lo >= ONE_THREAD_MIN_BYTES || worker_count(launch, blocks) > 1;
        enabled_ = worth && mine.lo < mine.hi && ntiles_ > 0 && ntiles_ <= MAX_GRID;
        for (const ByteSpan& o : others)
            if (o.lo < mine.hi && mine.lo < o.hi) enabled_ = false;
    }
    TileSums(const TileSums&) = delete;
    TileSums& operator=(const TileSums&) = delete;

    const Array<T, N>& target() const { return target_; }
    int64_t ntiles() const { return ntiles_; }

    // The calling worker thread's sums (made on its first block).
    Part& mine() {
        if (!enabled_) return direct_;  // (fixed before the blocks run: no lock per block, ~3 % of a layernorm adjoint)
        const std::thread::id me = std::this_thread::get_id();
        int n = count_.load(std::memory_order_acquire);
        for (int p = 0; p < n; ++p)
            if (parts_[p]->thread_ == me) return *parts_[p];
        std::lock_guard<std::mutex> hold(lock_);
        n = count_.load(std::memory_order_relaxed);
        if (!enabled_ || n == MAX_PARTS) return direct_;  // direct_ makes no sums: every add goes to the array
        parts_[n].reset(new Part(*this, false));
        parts_[n]->thread_ = me;
        count_.store(n + 1, std::memory_order_release);
        return *parts_[n];
    }

    // After the launch's blocks: every thread's sums added into the array (as the tile adds of
    // memory.h, under its span locks unless one worker runs), the threads' sums of one tile one
    // after another in the order the threads first asked for theirs; the tiles spread over the
    // launch's worker threads when there are several threads' sums to add.
    void flush(const LaunchDesc& launch) {
        const int n = count_.load(std::memory_order_acquire);
        if (n == 0) return;
        if (n == 1) {
            const Workers registered;  // as a launch's worker: a lone one elsewhere then locks (atomic.h SoloAdd)
            Ctx ctx;
            for (int64_t g : parts_[0]->tiles_) add_tile(ctx, g);
            return;
        }
        std::vector<unsigned char> seen(size_t(ntiles_), 0);
        std::vector<int64_t> tiles;
        for (int p = 0; p < n; ++p)
            for (int64_t g : parts_[p]->tiles_)
                if (!seen[size_t(g)]) {
                    seen[size_t(g)] = 1;
                    tiles.push_back(g);
                }
        LaunchDesc each{};
        each.dim[0] = int64_t(tiles.size());
        each.ndim = 1;
        each.block_dim = 1;
        each.num_threads = launch.num_threads;
        launch_blocks(each, false, 64 * 1024, [&](Ctx& ctx) { add_tile(ctx, tiles[size_t(ctx.tid[0])]); });
    }

    // The grid tile whose origin the offsets are, or -1 (not a multiple of the tile, or outside).
    template <class... O> int64_t grid_index(O... o) const {
        int64_t off[N];
        offsets_of<N>(off, o...);
        int64_t g = 0;
        for (int k = 0; k < N; ++k) {
            if (off[k] < 0 || off[k] % TT::dim(k) != 0 || off[k] >= target_.shape[k]) return -1;
            g = g * grid_[k] + off[k] / TT::dim(k);
        }
        return g;
    }

  private:
    void add_tile(Ctx& ctx, int64_t g) const {
        int64_t off[N];
        int64_t rest = g;
        for (int k = N - 1; k >= 0; --k) {
            off[k] = (rest % grid_[k]) * TT::dim(k);
            rest /= grid_[k];
        }
        const int n = count_.load(std::memory_order_acquire);
        for (int p = 0; p < n; ++p) {
            const T* sums = parts_[p]->sums_for(g);
            if (sums) add_at(ctx, *reinterpret_cast<const TT*>(sums), off, std::make_index_sequence<N>{});
        }
    }
    template <size_t... K> void add_at(Ctx& ctx, const TT& t, const int64_t* off, std::index_sequence<K...>) const {
        tile_atomic_add(ctx, DiscardOld{}, target_, t, true, off[K]...);
    }

    Array<T, N> target_;
    Part direct_;
    bool enabled_ = false;
    int64_t grid_[N] = {};
    int64_t ntiles_ = 0;
    std::mutex lock_;
    std::atomic<int> count_{0};
    std::unique_ptr<Part> parts_[MAX_PARTS];
};

// loop_add_row (memory.h) for an array summed per thread: the thread's sums of the tile (from -0
// on its first add, as add() copies it), else as for the array itself.
template <class TT, class T, int N, int... D, class... O>
inline T* loop_add_row(Ctx& ctx, TileSumsPart<T, N, D...>& sums, TT& t, bool, O... o) {
    if constexpr (std::is_same<TT, Tile<T, D...>>::value) {
        bool first = false;
        if (T* slot = ctx.leader() && !ctx.partial() ? sums.sums_at(first, o...) : nullptr)
            return first ? cleared(slot, TT::size) : slot;
    }
    return loop_add_row(ctx, sums.target(), t, true, o...);
}

// A tile add into an array the entry point sums per thread (emitted for the adds that
// codegen/tile_sums.py proved are the kernel's only use of the array).
template <class OT, class ST, class T, int N, int... D, class... O>
inline void tile_atomic_add(Ctx& ctx, OT&&, TileSumsPart<T, N, D...>& sums, const ST& t, bool, O... o) {
    sums.add(ctx, t, o...);
}

}  // namespace tl
#endif
