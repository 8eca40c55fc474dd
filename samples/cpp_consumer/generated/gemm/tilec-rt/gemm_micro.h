// tilec runtime: gemm.h's micro-kernel for one register blocking, Micro<TILEC_GEMM_MICRO_ISA>.
//
// Included by gemm.h only, inside namespace tl::gemm, once per ISA it compiles a kernel for (no
// include guard): TILEC_GEMM_MICRO_ISA names the blocking (IsaBuild, IsaAvx512: vector bytes, MR,
// NV) and TILEC_GEMM_MICRO_TARGET is the target attribute every function here carries (empty for
// the build's own ISA). Everything the kernel calls is defined here with that attribute, so that
// the compiler sees the kernel's vectors in that ISA from the start.
//
// run: the MR_ x NR block of C at c (row stride ldc, `cols` <= NR of its columns real) from MR_
// rows of A at a (element (r, k) at a[r * RSA + k * CSA]) and one panel of B: K rows of NR values,
// LDB apart. C = alpha * A @ B + beta * C (beta == 0 ignores C's contents).
template <> struct Micro<TILEC_GEMM_MICRO_ISA> {
    using I = TILEC_GEMM_MICRO_ISA;

    template <class V> TILEC_GEMM_MICRO_TARGET static V load(const void* p) {
        V v;
        std::memcpy(&v, p, sizeof(V));
        return v;
    }
    template <class V> TILEC_GEMM_MICRO_TARGET static void store(void* p, V v) { std::memcpy(p, &v, sizeof(V)); }
    template <class V, class T, std::size_t... L>
    TILEC_GEMM_MICRO_TARGET static V splat_lanes(T x, std::index_sequence<L...>) {
        return V{((void)L, x)...};
    }
    template <class T, class V> TILEC_GEMM_MICRO_TARGET static V splat(T x) {  // every lane x (one broadcast)
        return splat_lanes<V>(x, std::make_index_sequence<sizeof(V) / sizeof(T)>{});
    }

    template <class T, int MR_, int K, int RSA, int CSA, int LDB>
    TILEC_GEMM_MICRO_TARGET TILEC_GEMM_FN static void run(const T* __restrict a, const T* __restrict bp,
                                                          T* __restrict c, int ldc, int cols, T alpha, T beta) {
        TILEC_GEMM_CONTRACT
        using V = typename Simd<T, I::BYTES>::V;
        constexpr int NV = I::NV, W = Simd<T, I::BYTES>::W, NR = NV * W;
        V acc[MR_][NV];
        if (beta != T(0))  // C's block is read only after the k loop: start fetching its rows now
            for (int r = 0; r < MR_; ++r) __builtin_prefetch(c + r * ldc, 1, 3);
#pragma GCC unroll 16
        for (int r = 0; r < MR_; ++r)
#pragma GCC unroll 4
            for (int q = 0; q < NV; ++q) acc[r][q] = splat<T, V>(T(0));
#pragma GCC unroll 4
        for (int k = 0; k < K; ++k) {
            V b[NV];
#pragma GCC unroll 4
            for (int q = 0; q < NV; ++q) b[q] = load<V>(bp + k * LDB + q * W);
#pragma GCC unroll 16
            for (int r = 0; r < MR_; ++r) {
                const V av = splat<T, V>(a[r * RSA + k * CSA]);
#pragma GCC unroll 4
                for (int q = 0; q < NV; ++q) acc[r][q] += av * b[q];
            }
        }
        const V va = splat<T, V>(alpha), vb = splat<T, V>(beta);
        if (cols == NR && alpha == T(1) && (beta == T(1) || beta == T(0))) {
            // The tiled GEMM's accumulate (alpha = beta = 1): acc + C, the value alpha * acc + beta * C
            // has then (each product exact, one rounding), without the multiplies on the FMA ports.
#pragma GCC unroll 16
            for (int r = 0; r < MR_; ++r)
#pragma GCC unroll 4
                for (int q = 0; q < NV; ++q)
                    store(c + r * ldc + q * W, beta == T(0) ? acc[r][q] : acc[r][q] + load<V>(c + r * ldc + q * W));
            return;
        }
        for (int r = 0; r < MR_; ++r) {
            T* row = c + r * ldc;
            if (cols == NR) {
#pragma GCC unroll 4
                for (int q = 0; q < NV; ++q) {
                    V out = va * acc[r][q];
                    if (beta != T(0)) out += vb * load<V>(row + q * W);
                    store(row + q * W, out);
                }
            } else {  // the last panel of a tile whose N is no multiple of NR
                T lanes[NR];
                std::memcpy(lanes, acc[r], sizeof(acc[r]));
                for (int j = 0; j < cols; ++j)
                    row[j] = beta == T(0) ? alpha * lanes[j] : alpha * lanes[j] + beta * row[j];
            }
        }
    }
};
