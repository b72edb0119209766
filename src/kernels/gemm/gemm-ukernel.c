/*
 * gemm-ukernel.c — the GEMM micro-kernel: an MR x NR tile of C accumulated in registers from
 * packed panels of A (MR rows, k-major) and B (NR columns, k-major), one broadcast of A and
 * NR/VF_LANES loads of B per k step. MR x NR is 6 x 16 on AVX2 (12 accumulators), 8 x 32 on
 * AVX-512 (16), 4 x 4 scalar. Also its half-width twin, MR x NR/2 from NR/2-wide B slivers, for
 * products too narrow for a whole sliver (Winograd's 16-tile blocks on AVX-512: padded to
 * 32 columns, half the multiply-adds were thrown away), the half-width tile over several A
 * panels at once (each B load shared by their rows), and a kernel for a handful of columns
 * (a block's last few tiles), and on AVX-512 a wide tile, half an A panel by two B slivers.
 * Compiled once per ISA (simd/vec.h); contracts: fconv_gemm_ukernel_fn, gemm_ukernel_half,
 * fconv_gemm_ukernel_half_rows_fn, fconv_gemm_ukernel_wide_fn and fconv_gemm_ukernel_cols_fn
 * in core/dispatch.h.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>

#include "core/dispatch.h"
#include "core/internal.h"
#include "simd/vec.h"
#include "kernels/gemm/gemm-tile.h"

/* B rows the packing tile asks for ahead of its loads, into L2: rows ldb apart defeat the
 * hardware prefetchers, and from DRAM (a batch of 8 images does not stay in L3) the tile
 * stalled on every row (8 x 256 x 56^2 -> 64 1x1 layer, 2 threads: 6.40 -> 4.88 ms; 16 and
 * 32 rows alike, 64 slower, no change while B sits in L3). Each row's lines from the start of
 * every vector and the sliver's last float: a sliver off a line boundary (an input from
 * malloc, 16 bytes past one) spans one line more than its vectors' starts, which the tile had
 * waited on from L3 at every row (2 threads, Emerald Rapids VM, im2col, 21 rounds in one
 * process, ABAB and BABA: 256 -> 64 1x1 on 56^2 1.08x, 256 -> 128 1.07x, now within 0-2% of
 * the same layers on a 64-byte-aligned input). */
#define PACK_PREFETCH_ROWS 16

/* A's panel asked for ~500 cycles ahead (steps of 16 or 8 multiply-adds for the whole and
 * half-width tiles): where U no longer sits in L2 (Winograd's transformed weights of deep
 * layers, used by one or few B slivers) each sliver of A came from L3 or memory at the pace
 * of the broadcasts. Standalone, one thread, A streamed once per 16 columns (512 x 512 x 16
 * products x 16): 36 -> 55 G multiply-adds/s for the half-width tile, 47 -> 56 for the whole
 * one at 32 columns; no change where A is reused from L1. */
#define A_PREFETCH_STEPS(nv) (32 * NV / (nv))

/* Asks for A's row `step` into L1; past the panel's end this is the next panel (packed U
 * holds them back to back), or nothing: addressed as an integer, as no pointer may point
 * there. */
static inline void prefetch_a(const float *a, size_t step) {
    __builtin_prefetch((const void *)((uintptr_t)a + step * MR * sizeof(float)));
}

/* One k step p of the tile: B's row p (stored to pack_to, packed slivers, where that is not
 * NULL) times `rows` of A's panel (MR apart a step) into the accumulators. A tile of nv <= NV
 * vectors reads one sliver at b; the wide tile's 2·NV vectors read a second sliver at b +
 * b_next and pack it NR·k floats after the first. */
static ALWAYS_INLINE void ukernel_step(const int rows, const int nv, size_t k, size_t p, const float *restrict a,
                                       const float *restrict b, size_t ldb, size_t b_next,
                                       float *restrict pack_to, vf acc[MR][2 * NV]) {
    vf bv[2 * NV];
    UNROLLED (int v = 0; v < nv; v++) {
        const size_t sliver = (size_t)(v / NV), lane0 = (size_t)(v % NV) * VF_LANES;
        bv[v] = vf_loadu(b + sliver * b_next + p * ldb + lane0);
        if (pack_to) vf_store(pack_to + sliver * NR * k + p * NR + lane0, bv[v]); /* nv >= NV */
    }
    UNROLLED (int i = 0; i < rows; i++) {
        const vf av = vf_set1(a[p * MR + (size_t)i]);
        UNROLLED (int v = 0; v < nv; v++) acc[i][v] = vf_fma(av, bv[v], acc[i][v]);
    }
}

/* Line u of the rows asked for ahead (gemm_ukernel_ahead): row u / 3's first float, float 16
 * and last float (u % 3), so every line of NR floats at any alignment. */
static ALWAYS_INLINE const float *ahead_line(const float *next, size_t next_ld, size_t u) {
    const size_t offset[3] = {0, NR > 16 ? 16 : NR - 1, NR - 1};
    return next + u / 3 * next_ld + offset[u % 3];
}

/* The tile of `rows` x nv vectors (MR x NV or NV/2; the wide tile MR/2 x 2·NV) from B rows
 * ldb floats apart, each B row also stored to pack_to (packed slivers) where that is not
 * NULL, and next_rows rows at `next` asked for meanwhile where that is not (gemm_ukernel_ahead). */
static ALWAYS_INLINE void ukernel(const int rows, const int nv, size_t k, const float *restrict a,
                                  const float *restrict b, size_t ldb, size_t b_next, float *restrict pack_to,
                                  float *restrict c, size_t ldc, int store, size_t mr, size_t nr, const float *bias,
                                  int relu, const int fin, const float *next, size_t next_ld, size_t next_rows) {
    const size_t width = (size_t)nv * VF_LANES;
    assert(a && b && c && mr >= 1 && mr <= (size_t)rows && nr >= 1 && nr <= width &&
           ldb >= (nv > NV ? NR : width) && (pack_to || ldb % VF_LANES == 0));
    vf acc[MR][2 * NV];
    UNROLLED (int i = 0; i < rows; i++)
        UNROLLED (int v = 0; v < nv; v++) acc[i][v] = vf_zero();
    /* Two k steps a trip: the loop's counter, compare and pointer bumps, and A's prefetch
     * (a line holds at least two steps of A: 8 x 4 bytes on AVX-512), once per two steps of 16
     * multiply-adds (2 threads, Ice Lake VM, 31 alternated rounds, medians, im2col's 1x1 layers
     * on NCHW: 256 -> 64 on 56^2 1.04-1.06x, 64 -> 256 1.04-1.13x, 128 -> 512 on 28^2 1.05x;
     * one thread, the tile alone in L1: 153 -> 156 GFLOP/s at k = 64, 156 -> 159 at 256). */
    size_t p = 0, ahead = 0;
    const size_t ahead_lines = next ? 3 * next_rows : 0;
    for (; p + 2 <= k; p += 2) {
        if (next && ahead < ahead_lines) { /* two lines a trip (gemm_ukernel_ahead) */
            __builtin_prefetch(ahead_line(next, next_ld, ahead++), 0, 2);
            if (ahead < ahead_lines) __builtin_prefetch(ahead_line(next, next_ld, ahead++), 0, 2);
        }
        if (pack_to)
            UNROLLED (int v = 0; v < nv; v++) {
                const float *bv = b + (size_t)(v / NV) * b_next + (size_t)(v % NV) * VF_LANES;
                __builtin_prefetch(bv + (p + PACK_PREFETCH_ROWS) * ldb, 0, 2);
                __builtin_prefetch(bv + (p + 1 + PACK_PREFETCH_ROWS) * ldb, 0, 2);
                if (v % NV == NV - 1) { /* the sliver's last float (PACK_PREFETCH_ROWS) */
                    __builtin_prefetch(bv + VF_LANES - 1 + (p + PACK_PREFETCH_ROWS) * ldb, 0, 2);
                    __builtin_prefetch(bv + VF_LANES - 1 + (p + 1 + PACK_PREFETCH_ROWS) * ldb, 0, 2);
                }
            }
        prefetch_a(a, p + (size_t)A_PREFETCH_STEPS(nv));
        ukernel_step(rows, nv, k, p, a, b, ldb, b_next, pack_to, acc);
        ukernel_step(rows, nv, k, p + 1, a, b, ldb, b_next, pack_to, acc);
    }
    if (p < k) ukernel_step(rows, nv, k, p, a, b, ldb, b_next, pack_to, acc);
    /* The epilogue (fin, a constant: a run-time test in the stores would cost the
     * accumulators their registers, as in the direct row kernel): max(relu_floor, sum + add[i]),
     * add = the bias or -0.0 (the identity), floor = 0 with ReLU, else -inf; max keeps its
     * second operand on a tie or NaN, so -0.0 and NaN stay, as fconv_bias_relu_rows has them. */
    float add[MR];
    const float relu_floor = relu ? 0.0f : -INFINITY;
    UNROLLED (int i = 0; i < rows; i++) add[i] = fin && bias && (size_t)i < mr ? bias[i] : -0.0f;
    if (mr == (size_t)rows && nr == width) { /* full tile: straight to C */
        const int stream = store == FCONV_GEMM_STREAM && vf_head_to_alignment(c, VF_LANES) == 0 && ldc % VF_LANES == 0;
        UNROLLED (int i = 0; i < rows; i++)
            UNROLLED (int v = 0; v < nv; v++) {
                float *ci = c + (size_t)i * ldc + (size_t)v * VF_LANES;
                vf sum = store == FCONV_GEMM_ACCUMULATE ? vf_add(vf_loadu(ci), acc[i][v]) : acc[i][v];
                if (fin) sum = vf_max(vf_set1(relu_floor), vf_add(sum, vf_set1(add[i])));
                if (stream) vf_stream(ci, sum);
                else vf_storeu(ci, sum);
            }
        return;
    }
    /* An edge tile: the packed panels are zero-padded, so compute all, store what exists. */
    float tile[MR * NR];
    _Static_assert(MR / 2 * 2 * NR <= MR * NR, "the wide tile's edge fits the tile buffer");
    UNROLLED (int i = 0; i < rows; i++)
        UNROLLED (int v = 0; v < nv; v++) vf_storeu(tile + (size_t)i * width + (size_t)v * VF_LANES, acc[i][v]);
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++)
            c[i * ldc + j] = store == FCONV_GEMM_ACCUMULATE ? c[i * ldc + j] + tile[i * width + j] : tile[i * width + j];
    if (fin) fconv_bias_relu_rows(c, ldc, mr, (int64_t)nr, bias, relu);
}

/* The tile with or without the epilogue, each compiled apart (fin a constant). */
#define UKERNEL(rows, nv, b_next, pack_to, nr)                                                               \
    do {                                                                                                     \
        if (bias || relu)                                                                                    \
            ukernel(rows, nv, k, a, b, ldb, b_next, pack_to, c, ldc, store, mr, nr, bias, relu, 1, NULL, 0, 0); \
        else ukernel(rows, nv, k, a, b, ldb, b_next, pack_to, c, ldc, store, mr, nr, NULL, 0, 0, NULL, 0, 0); \
    } while (0)

void FCONV_ISA_SUFFIX(fconv_gemm_ukernel)(size_t k, const float *restrict a, const float *restrict b,
                                          size_t ldb, float *restrict c, size_t ldc, int store,
                                          size_t mr, size_t nr, const float *bias, int relu) {
    UKERNEL(MR, NV, 0, NULL, nr);
}

/* The whole-width tile reading B where it lies (any ldb, any alignment) and packing it on
 * the way: the first A sliver against a B sliver packs it for the others, no pass of its
 * own (packing B first cost 9% of a 64 x 3136 x 256 product). */
void FCONV_ISA_SUFFIX(fconv_gemm_ukernel_pack)(size_t k, const float *restrict a, const float *restrict b,
                                               size_t ldb, float *restrict packed_b, float *restrict c,
                                               size_t ldc, int store, size_t mr, const float *bias, int relu) {
    UKERNEL(MR, NV, 0, packed_b, NR);
}

/* The whole-width tile over a packed B sliver, asking for the next sliver's rows meanwhile:
 * where B comes from memory, the packed GEMM's tiles after the one that packs a sliver (the
 * first A sliver's, which reads B's rows as it packs them) spread the next sliver's rows over
 * their k steps, so that its packing tile finds them in L2. That tile had run ~2.5x as long as
 * the others on deep NCHW 1x1 layers (perf, 256 -> 64 on 56^2, Emerald Rapids VM); the same
 * lines asked for in bursts before each tile, or further ahead within the packing tile itself,
 * changed nothing (0.96-1.03x); where B stays in the caches (batch 1) this cost up to 3%
 * (gemm-packed.c has the figures). */
void FCONV_ISA_SUFFIX(fconv_gemm_ukernel_ahead)(size_t k, const float *restrict a, const float *restrict b,
                                                size_t ldb, float *restrict c, size_t ldc, int store, size_t mr,
                                                size_t nr, const float *bias, int relu, const float *next,
                                                size_t next_ld, size_t rows) {
    if (bias || relu) ukernel(MR, NV, k, a, b, ldb, 0, NULL, c, ldc, store, mr, nr, bias, relu, 1, next, next_ld, rows);
    else ukernel(MR, NV, k, a, b, ldb, 0, NULL, c, ldc, store, mr, nr, NULL, 0, 0, next, next_ld, rows);
}

void FCONV_ISA_SUFFIX(fconv_gemm_ukernel_half)(size_t k, const float *restrict a, const float *restrict b,
                                               size_t ldb, float *restrict c, size_t ldc, int store,
                                               size_t mr, size_t nr, const float *bias, int relu) {
    UKERNEL(MR, NV / 2, 0, NULL, nr);
}

#if VF_LANES == 16
/* Half an A panel by two B slivers: 4 rows x 64 columns, the same 16 accumulators as the 8 x
 * 32 tile, but 4 loads of B and 4 broadcasts of A per 16 multiply-adds where 8 x 32 takes 2
 * and 8. On the Ice Lake VM, whose 512-bit loads issue one a cycle (fconv_cpu_info
 * .wide_loads_slow), 8 x 32's 10 loads a step set its pace (8 cycles of multiply-adds); 8
 * here match them. Standalone, one thread, a 144-row block against 64 columns of B: k = 256
 * 141-145 -> 175-176 GFLOP/s, k = 64 156 -> 165 (two halves a panel; a 6 x 64 tile ran alike,
 * but would need panels of 6 rows). In the packed GEMM, products of depth 256 and more gain
 * little: a k step's pair of slivers (64 KiB at 256) no longer fits L1, and reading B set
 * their pace anyway (docs/kernels.md). On an Emerald Rapids VM, two 512-bit loads a cycle,
 * it still ran the shallow 1x1 layers 1.07-1.22x faster (fconv_cpu_info.gemm_wide_tile). */
void FCONV_ISA_SUFFIX(fconv_gemm_ukernel_wide)(size_t k, const float *restrict a, const float *restrict b,
                                               size_t ldb, size_t b_next, float *restrict packed_b,
                                               float *restrict c, size_t ldc, int store, size_t mr,
                                               const float *bias, int relu) {
    if (packed_b) UKERNEL(MR / 2, 2 * NV, b_next, packed_b, 2 * NR);
    else UKERNEL(MR / 2, 2 * NV, b_next, NULL, 2 * NR);
}
#endif
#undef UKERNEL

/* A half-width tile's B load feeds MR multiply-adds, and with MR broadcasts of A and A's
 * prefetch it made 10 loads per 8 multiply-adds on AVX-512: standalone (one thread, Zen 5, A
 * and B in cache, k = 128) it ran 182-192 GFLOP/s where the whole-width tile runs 221-235.
 * Rows of HALF_ROWS_SLIVERS A slivers share each B load (24 accumulators on AVX-512: 210-223;
 * 16 rows 189-206), and A's prefetch goes once per two k steps (a step reads MR floats of
 * each sliver, half a cache line on AVX-512). */
#define HALF_ROWS_SLIVERS (VF_LANES == 16 ? 3 : VF_LANES == 8 ? 2 : 1)

/* Rows of each A panel that half_rows' shuffled form (AVX-512 only) broadcasts by a permute of
 * one 256-bit load of the panel's step instead of a 512-bit broadcast load each. A k step of
 * the 3-panel tile is 24 multiply-adds against 25 vector loads (B's row and 24 broadcasts),
 * and the Ice Lake VM issues one 512-bit load a cycle (two of 256 bits), so the tile waited
 * on its loads at ~22 cycles a step where its multiply-adds need 12. Each permute takes a
 * slot of the port that also multiplies, so only some rows go that way: 3 of 8 left 16 wide
 * loads and 33 multiply-add or shuffle slots a step (~16.5 cycles). Standalone, one thread,
 * in L1 (A and B packed, 3 panels, 21 runs in one process): k = 128 98.9 -> 130.5 GFLOP/s,
 * k = 256 79.8 -> 114.9; 2, 4 and 5 rows 1.17-1.22x. In the layers whose Winograd blocks are
 * 16 tiles wide (2 threads, 31 alternated rounds in one process, medians): F(4x4) 1 x 128 x
 * 16^2 1.08x, 256 x 16^2 1.11-1.13x, 256 x 14^2 1.06-1.15x, 512 x 16^2 1.08-1.09x, F(2x2) 512
 * x 7^2 1.09-1.14x; 8 x 256 x 14^2 level (wider blocks). The same products in the same order:
 * the same bits. Where 512-bit loads issue two a cycle (fconv_cpu_info.wide_loads_slow unset)
 * the permutes would only take multiply-add slots, and the loads stay. */
#define HALF_ROWS_SHUFFLED 3

/* One k step q of half_rows: B's row q loaded once, multiplied into the ns panels' rows
 * (shuffled, a constant: the last HALF_ROWS_SHUFFLED rows' broadcasts by permutes). */
static ALWAYS_INLINE void half_rows_step(const int ns, const int shuffled, size_t k, const float *restrict a,
                                         const float *restrict b, size_t ldb, size_t q,
                                         vf acc[HALF_ROWS_SLIVERS][MR][NV / 2]) {
    vf bv[NV / 2];
    UNROLLED (int v = 0; v < NV / 2; v++) bv[v] = vf_loadu(b + q * ldb + (size_t)v * VF_LANES);
    UNROLLED (int s = 0; s < ns; s++) {
        const float *as = a + (size_t)s * MR * k + q * MR;
#if VF_LANES == 16
        _Static_assert(MR == 8, "a panel's step is the 8 floats vf_loadu_low8 reads");
        const vf step = shuffled ? vf_loadu_low8(as) : vf_zero();
#endif
        UNROLLED (int i = 0; i < MR; i++) {
#if VF_LANES == 16
            const vf av = shuffled && i >= MR - HALF_ROWS_SHUFFLED ? vf_broadcast_lane8(step, i) : vf_set1(as[i]);
#else
            (void)shuffled;
            const vf av = vf_set1(as[i]);
#endif
            UNROLLED (int v = 0; v < NV / 2; v++) acc[s][i][v] = vf_fma(av, bv[v], acc[s][i][v]);
        }
    }
}

static ALWAYS_INLINE void half_rows(const int ns, const int shuffled, size_t k, const float *restrict a,
                                    const float *restrict b, size_t ldb, float *restrict c, size_t ldc) {
    vf acc[HALF_ROWS_SLIVERS][MR][NV / 2];
    UNROLLED (int s = 0; s < ns; s++)
        UNROLLED (int i = 0; i < MR; i++)
            UNROLLED (int v = 0; v < NV / 2; v++) acc[s][i][v] = vf_zero();
    size_t p = 0;
    for (; p + 2 <= k; p += 2) {
        UNROLLED (int s = 0; s < ns; s++) prefetch_a(a + (size_t)s * MR * k, p + (size_t)A_PREFETCH_STEPS(NV / 2));
        half_rows_step(ns, shuffled, k, a, b, ldb, p, acc);
        half_rows_step(ns, shuffled, k, a, b, ldb, p + 1, acc);
    }
    if (p < k) half_rows_step(ns, shuffled, k, a, b, ldb, p, acc);
    UNROLLED (int s = 0; s < ns; s++)
        UNROLLED (int i = 0; i < MR; i++)
            UNROLLED (int v = 0; v < NV / 2; v++)
                vf_storeu(c + ((size_t)s * MR + (size_t)i) * ldc + (size_t)v * VF_LANES, acc[s][i][v]);
}

/* gemm_ukernel_half_rows' panels, HALF_ROWS_SLIVERS at a time. */
static ALWAYS_INLINE void half_rows_panels(const int shuffled, size_t k, const float *restrict a, size_t slivers,
                                           const float *restrict b, size_t ldb, float *restrict c, size_t ldc) {
    assert(a && b && c && slivers >= 1 && ldb >= NR / 2);
    for (size_t s = 0; s < slivers; s += HALF_ROWS_SLIVERS) {
        const size_t n = slivers - s < HALF_ROWS_SLIVERS ? slivers - s : HALF_ROWS_SLIVERS;
        const float *as = a + s * MR * k;
        float *cs = c + s * MR * ldc;
        if (n == HALF_ROWS_SLIVERS) half_rows(HALF_ROWS_SLIVERS, shuffled, k, as, b, ldb, cs, ldc);
#if HALF_ROWS_SLIVERS > 2
        else if (n == 2) half_rows(2, shuffled, k, as, b, ldb, cs, ldc);
#endif
        else half_rows(1, shuffled, k, as, b, ldb, cs, ldc);
    }
}

void FCONV_ISA_SUFFIX(fconv_gemm_ukernel_half_rows)(size_t k, const float *restrict a, size_t slivers,
                                                    const float *restrict b, size_t ldb, float *restrict c,
                                                    size_t ldc) {
    half_rows_panels(0, k, a, slivers, b, ldb, c, ldc);
}

#if VF_LANES == 16
void FCONV_ISA_SUFFIX(fconv_gemm_ukernel_half_rows_shuffled)(size_t k, const float *restrict a, size_t slivers,
                                                             const float *restrict b, size_t ldb,
                                                             float *restrict c, size_t ldc) {
    half_rows_panels(1, k, a, slivers, b, ldb, c, ldc);
}
#endif

/* A few columns: each of the nc (<= COLS_MAX) accumulators holds the MR rows of one column
 * of C in one vector (MR <= VF_LANES), one load of A and nc broadcasts of B per k step,
 * where the half-width kernel would spend MR multiply-adds on 16 columns. Consecutive k
 * steps go to `chains` separate accumulators per column (4 for up to 4 columns, 2 above:
 * the multiply-add's latency, not its throughput, sets the pace with so few; one column
 * over k = 512 took 2 cycles per k step on two chains, a quarter of the 32-column tile's
 * time beside it), nc and chains constants per case so they stay in registers. Past nc,
 * up to nr, C gets zeros. */
#define COLS_MAX 8
/* A's panel asked for this many steps ahead (1-3 cycles each): F(4x4) on 7x7 maps is this
 * kernel alone, with U streamed from memory (1 x 512 x 7^2, 1 thread: 4.4-5.1 -> 3.2-4.2 ms). */
#define COLS_PREFETCH_STEPS 128

static ALWAYS_INLINE void cols_sums(const int nc, const int chains, size_t k, const float *restrict a,
                                    const float *restrict b, size_t ldb, float out[COLS_MAX][VF_LANES]) {
    vf sum[4][COLS_MAX];
    UNROLLED (int h = 0; h < chains; h++)
        UNROLLED (int j = 0; j < nc; j++) sum[h][j] = vf_zero();
    /* Whole-vector loads of A's MR-float rows while the vector ends inside the panel (a
     * masked load ran at 10.6 cycles per k step where this runs at 4.1, nc = 4, Zen 4),
     * masked ones for the last steps. */
    const size_t whole = k * MR >= VF_LANES ? (k * MR - VF_LANES) / MR + 1 : 0; /* rows p < whole */
    size_t p = 0;
#if VF_LANES == 2 * MR
    /* A vector holds A's rows for two k steps: steps p and p + 1 share one multiply-add
     * against B's two values in the vector's halves, folded together at the end (MR = 8 of
     * 16 lanes, so one k step per multiply-add left half of each one idle). An odd last step
     * takes the masked loop below, whose upper lanes are zero. */
    for (; p + 2 * (size_t)chains <= k; p += 2 * (size_t)chains)
        UNROLLED (int h = 0; h < chains; h++) {
            const size_t q = p + 2 * (size_t)h;
            prefetch_a(a, q + COLS_PREFETCH_STEPS);
            const vf av = vf_loadu(a + q * MR);
            UNROLLED (int j = 0; j < nc; j++)
                sum[h][j] = vf_fma(av, vf_set1_halves(b[q * ldb + (size_t)j], b[(q + 1) * ldb + (size_t)j]),
                                   sum[h][j]);
        }
    for (; p + 2 <= k; p += 2) {
        const vf av = vf_loadu(a + p * MR);
        UNROLLED (int j = 0; j < nc; j++)
            sum[0][j] = vf_fma(av, vf_set1_halves(b[p * ldb + (size_t)j], b[(p + 1) * ldb + (size_t)j]), sum[0][j]);
    }
#endif
    for (; p + (size_t)chains <= whole; p += (size_t)chains)
        UNROLLED (int h = 0; h < chains; h++) {
            prefetch_a(a, p + (size_t)h + COLS_PREFETCH_STEPS);
            const vf av = vf_loadu(a + (p + (size_t)h) * MR);
            UNROLLED (int j = 0; j < nc; j++)
                sum[h][j] = vf_fma(av, vf_set1(b[(p + (size_t)h) * ldb + (size_t)j]), sum[h][j]);
        }
    for (; p < k; p++) {
        const vf av = vf_loadu_partial(a + p * MR, MR);
        UNROLLED (int j = 0; j < nc; j++) sum[0][j] = vf_fma(av, vf_set1(b[p * ldb + (size_t)j]), sum[0][j]);
    }
    UNROLLED (int j = 0; j < nc; j++) {
        vf total = sum[0][j];
        UNROLLED (int h = 1; h < chains; h++) total = vf_add(total, sum[h][j]);
#if VF_LANES == 2 * MR
        total = vf_fold_halves(total);
#endif
        vf_storeu(out[j], total);
    }
}

void FCONV_ISA_SUFFIX(fconv_gemm_ukernel_cols)(size_t k, const float *restrict a, const float *restrict b,
                                               size_t ldb, float *restrict c, size_t ldc, size_t mr, size_t nc,
                                               size_t nr) {
    assert(a && b && c && mr >= 1 && mr <= MR && nc <= nr && nc <= COLS_MAX);
#if VF_LANES >= MR
    float out[COLS_MAX][VF_LANES];
    switch (nc) {
#define COLS_CASE(n) \
    case n: cols_sums(n, n <= 4 ? 4 : 2, k, a, b, ldb, out); break;
    COLS_CASE(1) COLS_CASE(2) COLS_CASE(3) COLS_CASE(4) COLS_CASE(5) COLS_CASE(6) COLS_CASE(7) COLS_CASE(8)
#undef COLS_CASE
    default: break;
    }
#else
    float out[COLS_MAX][MR];
    for (size_t j = 0; j < nc; j++) {
        for (size_t i = 0; i < MR; i++) out[j][i] = 0.0f;
        for (size_t p = 0; p < k; p++)
            for (size_t i = 0; i < MR; i++) out[j][i] += a[p * MR + i] * b[p * ldb + j];
    }
#endif
    /* the zeros a vector at a time: written one by one, they were a fifth of the kernel's
     * time for one column over k = 512 */
    for (size_t i = 0; i < mr; i++) {
        float *row = c + i * ldc;
        size_t j = nc;
        for (; j + VF_LANES <= nr; j += VF_LANES) vf_storeu(row + j, vf_zero());
        if (j < nr) vf_storeu_partial(row + j, vf_zero(), nr - j);
        for (j = 0; j < nc; j++) row[j] = out[j][i];
    }
}

/* The tile shape of this compilation, for the dispatch table. */
size_t FCONV_ISA_SUFFIX(fconv_gemm_mr)(void) { return MR; }
size_t FCONV_ISA_SUFFIX(fconv_gemm_nr)(void) { return NR; }
