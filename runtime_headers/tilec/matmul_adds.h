// tilec runtime (CPU): an adjoint's product added into per-thread sums, multiplied straight into them.
//
// `z = a b; tile_atomic_add(adj, z)` into an array summed per thread (tile_sums.h) writes the
// product to z, then reads it again to add it into the tile's sums: tile_matmul_add multiplies
// into the sums instead (C += a b, the sums read and written once by the GEMM), and on the
// launch's only worker, when the array itself takes the adds (the sums are off), into the array's
// tile where its rows lie back to back. The emitter uses it only for such an add of such a
// product (codegen/matmul_adds.py). Anything else (a block of several lanes, a partial block, a
// tile off the sums' grid) computes z and adds it as before. The sums are those of the adds up to
// the order of the float additions (docs/gradients.md).
#pragma once
#if !defined(__CUDACC__)
#include "linalg.h"
#include "tile_sums.h"

namespace tl {

// A row-major M x N tile held in memory a Tile does not own (the sums' slot, an array's rows).
template <class T, int M, int N> struct TileAt {
    using value_type = T;
    static constexpr int ndim = 2;
    static constexpr int size = M * N;
    static constexpr int dim(int k) { return k == 0 ? M : N; }
    T* data;
};

template <class T, int N, int... D, class AT, class BT, class... O>
inline void tile_matmul_add(Ctx& ctx, TileSumsPart<T, N, D...>& sums, const AT& a, const BT& b, O... o) {
    using TT = Tile<T, D...>;
    static_assert(TT::ndim == 2 && N == 2, "a 2-d product into a 2-d array");
    constexpr int R = TT::dim(0), C = TT::dim(1);
    if (ctx.group == nullptr && !ctx.partial() && ctx.leader()) {  // one lane per block, every element live
        bool first = false;
        if (T* into = sums.sums_at(first, o...)) {  // the tile's first add: its value (0 + x would turn -0 into +0)
            TileAt<T, R, C> c{into};
            tile_matmul(ctx, c, a, b, 1.0, first ? 0.0 : 1.0);
            return;
        }
        const Array<T, 2>& array = sums.target();
        int64_t off[2];
        offsets_of<2>(off, o...);
        if (interior_rows<TT>(array, off) && (R == 1 || array.strides[0] == int64_t(sizeof(T)) * C)) {
            const SoloAdd solo(ctx.solo);  // the launch's only worker: nobody else adds into the array meanwhile
            if (solo.held) {
                TileAt<T, R, C> c{array.ptr_n(off)};
                tile_matmul(ctx, c, a, b, 1.0, 1.0);
                return;
            }
        }
    }
    TT z;
    tile_matmul(ctx, z, a, b, 1.0, 0.0);
    tile_atomic_add(ctx, DiscardOld{}, sums, z, true, o...);
}

}  // namespace tl
#endif
