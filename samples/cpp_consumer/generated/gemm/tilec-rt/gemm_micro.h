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

    // acc (MR_ x NV registers) += the K-step product of MR_ rows of A and one panel of B. RSA == 0:
    // A's rows are `lda` apart (known at run time: rows read in place from an array).
    // PF (run_sum): also fetch the next step's operands into L1 meanwhile, as they are other
    // copies, where the hardware prefetcher's stream ends: PF_B next_b's row k, PF_A the k-th MR_
    // values of next_a (a copied micro-panel: MR_ rows of K, contiguous).
    enum { PF_B = 1, PF_A = 2 };
    template <class T, int MR_, int K, int RSA, int CSA, int LDB, int PF = 0, class V>
    TILEC_GEMM_MICRO_TARGET TILEC_GEMM_FN __attribute__((always_inline)) static inline void
    accumulate(V (&acc)[MR_][I::NV], const T* __restrict a, const T* __restrict bp, const T* next_a = nullptr,
               const T* next_b = nullptr, long lda = RSA) {
        TILEC_GEMM_CONTRACT
        constexpr int NV = I::NV, W = Simd<T, I::BYTES>::W, LINE = 64 / int(sizeof(T));
        const long rs = RSA != 0 ? long(RSA) : lda;
#pragma GCC unroll 4
        for (int k = 0; k < K; ++k) {
            if constexpr ((PF & PF_B) != 0) {
#pragma GCC unroll 4
                for (int q = 0; q < NV * W; q += LINE) __builtin_prefetch(next_b + k * LDB + q, 0, 3);
            }
            if constexpr ((PF & PF_A) != 0) __builtin_prefetch(next_a + k * MR_, 0, 3);
            V b[NV];
#pragma GCC unroll 4
            for (int q = 0; q < NV; ++q) b[q] = load<V>(bp + k * LDB + q * W);
#pragma GCC unroll 16
            for (int r = 0; r < MR_; ++r) {
                const V av = splat<T, V>(a[r * rs + k * CSA]);
#pragma GCC unroll 4
                for (int q = 0; q < NV; ++q) acc[r][q] += av * b[q];
            }
        }
    }

    // C's block = alpha * acc + beta * C (beta == 0 ignores C's contents), `cols` of its NR columns.
    template <class T, int MR_, class V>
    TILEC_GEMM_MICRO_TARGET TILEC_GEMM_FN __attribute__((always_inline)) static inline void
    epilogue(V (&acc)[MR_][I::NV], T* __restrict c, int ldc, int cols, T alpha, T beta) {
        TILEC_GEMM_CONTRACT
        constexpr int NV = I::NV, W = Simd<T, I::BYTES>::W, NR = NV * W;
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

    // C's block is read (beta != 0) or written only after the k loop: fetch its rows meanwhile.
    template <class T, int MR_>
    TILEC_GEMM_MICRO_TARGET __attribute__((always_inline)) static inline void fetch_c(T* c, int ldc) {
        constexpr int NR = I::NV * Simd<T, I::BYTES>::W;
        for (int r = 0; r < MR_; ++r)
            for (int q = 0; q < NR * int(sizeof(T)); q += 64) __builtin_prefetch(reinterpret_cast<char*>(c + r * ldc) + q, 1, 3);
    }

    template <class T, int MR_, class V>
    TILEC_GEMM_MICRO_TARGET __attribute__((always_inline)) static inline void zero(V (&acc)[MR_][I::NV]) {
#pragma GCC unroll 16
        for (int r = 0; r < MR_; ++r)
#pragma GCC unroll 4
            for (int q = 0; q < I::NV; ++q) acc[r][q] = splat<T, V>(T(0));
    }

    template <class T, int MR_, int K, int RSA, int CSA, int LDB>
    TILEC_GEMM_MICRO_TARGET TILEC_GEMM_FN static void run(const T* __restrict a, const T* __restrict bp,
                                                          T* __restrict c, int ldc, int cols, T alpha, T beta) {
        using V = typename Simd<T, I::BYTES>::V;
        V acc[MR_][I::NV];
        fetch_c<T, MR_>(c, ldc);
        zero<T, MR_>(acc);
        accumulate<T, MR_, K, RSA, CSA, LDB>(acc, a, bp);
        epilogue<T, MR_>(acc, c, ldc, cols, alpha, beta);
    }

    // run over `steps` pairs (MR_ rows of A at a[s] + a_at, `lda` apart, and B's panel at bp[s] +
    // b_at) summed in the registers: C = alpha * sum_s A_s @ B_s + beta * C, C read and written once
    // (gemm.h matmul_sum). lda == K: each step's rows are a copy (MR_ x K, contiguous); else they are
    // read in place, and the next step's rows continue the same rows (the hardware's streams).
    template <class T, int MR_, int K, int LDB>
    TILEC_GEMM_MICRO_TARGET TILEC_GEMM_FN static void run_sum(const T* const* a, long a_at, long lda, const T* const* bp,
                                                              long b_at, int steps, T* __restrict c, int ldc, int cols,
                                                              T alpha, T beta) {
        using V = typename Simd<T, I::BYTES>::V;
        V acc[MR_][I::NV];
        zero<T, MR_>(acc);
        // C's rows are fetched two steps before the end: fetched at the start, a long sum's stream
        // of B through L1 evicted them again before the epilogue
        const int fetch_at = steps > 2 ? steps - 2 : 0;
        int s = 0;
        if (lda == K) {
            for (; s + 1 < steps; ++s) {
                if (s == fetch_at) fetch_c<T, MR_>(c, ldc);
                accumulate<T, MR_, K, K, 1, LDB, PF_A | PF_B>(acc, a[s] + a_at, bp[s] + b_at, a[s + 1] + a_at,
                                                               bp[s + 1] + b_at);
            }
            if (s == fetch_at) fetch_c<T, MR_>(c, ldc);
            accumulate<T, MR_, K, K, 1, LDB>(acc, a[s] + a_at, bp[s] + b_at);
        } else {
            for (; s + 1 < steps; ++s) {
                if (s == fetch_at) fetch_c<T, MR_>(c, ldc);
                accumulate<T, MR_, K, 0, 1, LDB, PF_B>(acc, a[s] + a_at, bp[s] + b_at, nullptr, bp[s + 1] + b_at, lda);
            }
            if (s == fetch_at) fetch_c<T, MR_>(c, ldc);
            accumulate<T, MR_, K, 0, 1, LDB>(acc, a[s] + a_at, bp[s] + b_at, nullptr, nullptr, lda);
        }
        epilogue<T, MR_>(acc, c, ldc, cols, alpha, beta);
    }
};
