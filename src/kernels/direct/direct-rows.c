/*
 * direct-rows.c — the inner kernel of the direct algorithm (filter2d, conv1d, stride-1
 * conv2d): a run of up to four output rows, each the sum over kh input rows and kw taps,
 * with every tap of every row accumulated in registers (4 rows x 3 vectors on AVX2, one row
 * x 8 vectors), so an output is read and written once whatever the kernel size and each
 * input load serves four output channels. Also filter2d's multi-row kernel: up to four
 * output rows of one kernel, each input row loaded once for all the output rows it feeds, and
 * its sliding bands of more rows (kh rows of accumulators moving down column strips).
 * Compiled once per ISA (simd/vec.h); the contracts are fconv_direct_rows_fn and
 * fconv_direct_filter_rows_fn in core/dispatch.h.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>

#include "core/dispatch.h"
#include "simd/vec.h"

/* Two orders for one tap column of nk rows x nv vectors. Taps first (nk broadcasts, then
 * each input vector loaded once into a register and multiplied into all nk rows) where the
 * nk*nv accumulators, nk taps and one input fit the register file: AVX-512's 4 x 6. Else
 * inputs first (nv loads, then one broadcast tap per row), which needs nv registers beside
 * the accumulators instead of nk: AVX2's 4 x 3 in 16 (taps first spilled there, a 3 -> 64
 * channel conv2d ran 2.6 -> 3.75 ms). A preprocessor choice: GCC allocated registers
 * worse (7x7 filter 5-7% slower) with both orders in the source behind a constant test. */
#define TAPS_FIRST (VF_LANES == 16) /* 4 x 6 + 4 + 1 of AVX-512's 32 registers */

/* Vectors of columns per step: as many accumulators as the register file holds beside the
 * input vector and the broadcast tap. */
#define NV_ONE 8
#define NV_FOUR (VF_LANES == 16 ? 6 : 3)

struct rows_args {
    float *const *y;
    const float *const *x_rows, *const *tap_rows;
    ptrdiff_t tap_step, k_stride;
    size_t kh, kw, dist;
    int accumulate;
    /* The epilogue as branch-free arithmetic: max(relu_floor, sum + add[k]), add[k] the bias or
     * -0.0 (x + -0.0 is x, -0.0 and NaN included), relu_floor 0 for ReLU or -infinity (max(-inf,
     * x) is x; max(0, NaN) is NaN, x86's maxps giving its second operand) */
    float add[4], relu_floor;
};

/* Row k's sums as they are stored: with fin the bias added, then ReLU. fin is a constant and
 * the epilogue has no branch: run-time tests in the stores had GCC keep the accumulators on
 * the stack (2 threads, Zen 5, 8 x 3 -> 64 on 224^2: 4.2 ms without an epilogue became 7.9
 * ms, and 5.3-5.8 with ReLU; branch-free, with ReLU 4.2-4.4). */
static ALWAYS_INLINE vf finish(const struct rows_args *r, int k, vf sum, const int fin) {
    return fin ? vf_max(vf_set1(r->relu_floor), vf_add(sum, vf_set1(r->add[k]))) : sum;
}

/* Columns [e, e + nv*VF_LANES) of nk rows (the last vector only `rest` lanes when rest > 0).
 * Taps go in the order (a, b), so an output's summation order depends only on the kernel. */
static ALWAYS_INLINE void rows_block(const struct rows_args *r, const int nk, const int nv, size_t e,
                                     size_t rest, const int stream, const int fin) {
    vf acc[4][NV_ONE];
    for (int k = 0; k < nk; k++)
        for (int v = 0; v < nv; v++) {
            float *p = r->y[k] + e + (size_t)v * VF_LANES;
            acc[k][v] = !r->accumulate ? vf_zero() : rest ? vf_loadu_partial(p, rest) : vf_loadu(p);
        }
    for (size_t a = 0; a < r->kh; a++) {
        const float *xa = r->x_rows[a] + e, *ta = r->tap_rows[a];
        for (size_t b = 0; b < r->kw; b++) {
            const float *xb = xa + b * r->dist, *tb = ta + (ptrdiff_t)b * r->tap_step;
#if TAPS_FIRST
            {
                vf t[4];
                for (int k = 0; k < nk; k++) t[k] = vf_set1(tb[k * r->k_stride]);
                for (int v = 0; v < nv; v++) {
                    vf x = rest ? vf_loadu_partial(xb + (size_t)v * VF_LANES, rest)
                                : vf_loadu(xb + (size_t)v * VF_LANES);
                    if (nk > 1) IN_REGISTER(x);
                    for (int k = 0; k < nk; k++) acc[k][v] = vf_fma(t[k], x, acc[k][v]);
                }
            }
#else
            {
                vf xv[NV_ONE];
                for (int v = 0; v < nv; v++)
                    xv[v] = rest ? vf_loadu_partial(xb + (size_t)v * VF_LANES, rest)
                                 : vf_loadu(xb + (size_t)v * VF_LANES);
                for (int k = 0; k < nk; k++) {
                    vf t = vf_set1(tb[k * r->k_stride]);
                    for (int v = 0; v < nv; v++) acc[k][v] = vf_fma(t, xv[v], acc[k][v]);
                }
            }
#endif
        }
    }
    for (int k = 0; k < nk; k++)
        for (int v = 0; v < nv; v++) {
            float *p = r->y[k] + e + (size_t)v * VF_LANES;
            const vf out = finish(r, k, acc[k][v], fin);
            if (rest) vf_storeu_partial(p, out, rest);
            else if (stream) vf_stream(p, out);
            else vf_storeu(p, out);
        }
}

/* A streamed row reads its input from memory once, and there the vector loads at x + e + b,
 * most of which straddle two cache lines, held the stream back: 10^8 x 3 on 2 threads (Zen 5,
 * AVX-512) ran at ~45 GB/s where an aligned copy moves ~60. Where the taps are neighbours
 * (dist 1), a block of one row loads its input as aligned vectors, NV_ONE + 1 per group of
 * taps whose vectors start in the same aligned vector, and cuts each tap's vector from two
 * of them (vf_shift_pair): the same floats in the same order, so the same bits as rows_block.
 * 7 alternated rounds, 10^8 x 3 on 2 threads: 17.2-17.4 -> 14.4-14.6 ms in the VM's quiet
 * spells (the bound at 60 GB/s: 13.4). Rows in cache gain too, with plain stores and kernels
 * of any width (separable's horizontal pass, one thread, 1024^2: 5x5 1.09x, 15x15 1.18x,
 * 31x31 1.13x; conv1d 10^6 x 31 1.34x on 2 threads). AVX-512 only: AVX2's 32-byte loads
 * straddle half as often, and its 16 registers cannot hold the block's 8 accumulators and 10
 * input vectors (15.5 -> 16.9 ms with it). */
#define SHIFTED_ROWS (VF_LANES == 16)

/* How far ahead a streamed one-row block asks for its input: the hardware prefetchers alone
 * kept conv1d 10^8 x 3 on 2 threads at 1.1-1.3x a non-temporal copy of the same buffers in the
 * same process (bench/bandwidth_1d.c), the copy's simpler loop issuing its loads faster. Zen 5,
 * non-temporal prefetches, 9 alternated rounds in a fast spell: 14.0 -> 12.9 ms, 1.31 -> 1.23x
 * the copy; 5 in a slow one: 20.5 -> 19.8 ms (19.5 at 16 KiB ahead). Into L1 as ordinary
 * prefetches (T0) since the Sapphire Rapids VM, where the non-temporal ones ran 1.28-1.88x the
 * copy, worse than none (1.10-1.19), and T0 0.94-1.00x at 4, 8 and 16 KiB ahead alike (3
 * alternated rounds in one process each; the CLI, 5 against two copies of the old binary:
 * 34.2-34.7 -> 27.3-28.9 ms; 4096^2 3x3 unchanged). */
#define STREAM_PREFETCH_BYTES 8192

/* The blocks of a one-row call that can take row_block_shifted, among e0, e0 + B, e0 + 2B, ...
 * (B = NV_ONE vectors, so each input row's misalignment is the same in all of them): those in
 * [*lo, *hi] (empty: *lo > *hi). A block can where dist allows it, y is written (not
 * accumulated), and the aligned vectors it loads lie within what the contract lets the kernel
 * read of every input row (x_rows[a][0 .. n - 1 + kw - 1]), so no load reaches past the
 * caller's data: they start inside the row from some block on and end inside it up to some
 * block. Worked out once per call: tested per block, it had cost a 3-tap block as many
 * instructions as its loads and stores. */
static void shifted_blocks(const struct rows_args *r, size_t n, size_t e0, size_t *lo, size_t *hi) {
    const size_t step = NV_ONE * VF_LANES;
    *lo = 1;
    *hi = 0;
    if (!SHIFTED_ROWS || r->dist != 1 || r->accumulate) return;
    size_t first = e0, last = SIZE_MAX;
    for (size_t a = 0; a < r->kh; a++) {
        const uintptr_t row = (uintptr_t)r->x_rows[a];
        if (row % sizeof(float)) return;
        /* block e's first aligned load: e - mis floats into the row (mis: x_rows[a] + e0's
         * floats past a vector boundary); it loads (last_group + NV_ONE + 1) vectors */
        const size_t mis = (size_t)((row + e0 * sizeof(float)) % (VF_LANES * sizeof(float))) / sizeof(float);
        const size_t loads = ((mis + r->kw - 1) / VF_LANES + NV_ONE + 1) * VF_LANES, readable = n + r->kw - 1;
        if (mis > e0) { /* the first block whose loads start inside the row */
            const size_t e = e0 + (mis - e0 + step - 1) / step * step;
            if (e > first) first = e;
        }
        if (readable + mis < loads) return;
        if (readable + mis - loads < last) last = readable + mis - loads;
    }
    *lo = first;
    *hi = last;
}

/* rows_block for nk = 1 and NV_ONE whole vectors, written (streamed with stream), where
 * shifted_blocks allows. Per kernel row, the taps go in groups whose vectors start in the
 * same aligned vector of the input: NV_ONE + 1 aligned loads per group, each tap's vector cut
 * from two of them. */
static ALWAYS_INLINE void row_block_shifted(const struct rows_args *r, size_t e, const int stream, const int fin) {
    vf acc[NV_ONE];
    for (int v = 0; v < NV_ONE; v++) acc[v] = vf_zero();
    for (size_t a = 0; a < r->kh; a++) {
        const float *xa = r->x_rows[a] + e, *ta = r->tap_rows[a];
        const size_t mis = (size_t)((uintptr_t)xa / sizeof(float) % VF_LANES);
        for (size_t b = 0; b < r->kw;) {
            const size_t group = (mis + b) / VF_LANES, group_end = (group + 1) * VF_LANES - mis;
            const float *base = xa - mis + group * VF_LANES;
            vf xv[NV_ONE + 1];
            for (int v = 0; v <= NV_ONE; v++) xv[v] = vf_load(base + (size_t)v * VF_LANES);
            if (stream && b == 0) /* a streamed row comes from memory: ask for it ahead */
                for (int v = 0; v < NV_ONE; v++)
                    __builtin_prefetch((const char *)(base + (size_t)v * VF_LANES) + STREAM_PREFETCH_BYTES, 0, 3);
            for (; b < r->kw && b < group_end; b++) {
                const vf t = vf_set1(ta[(ptrdiff_t)b * r->tap_step]);
                const int s = (int)(mis + b - group * VF_LANES); /* tap b's vector v starts s floats into xv[v] */
                for (int v = 0; v < NV_ONE; v++) acc[v] = vf_fma(t, vf_shift_pair(xv[v], xv[v + 1], s), acc[v]);
            }
        }
    }
    float *const y = r->y[0] + e; /* read once: the stores could alias r->y, so GCC reloaded it for each */
    for (int v = 0; v < NV_ONE; v++) {
        float *p = y + (size_t)v * VF_LANES;
        if (stream) vf_stream(p, finish(r, 0, acc[v], fin));
        else vf_storeu(p, finish(r, 0, acc[v], fin));
    }
}

/* Every column of nk rows: wide blocks, then pairs and single vectors, then the last few
 * columns. With stream (rows at one alignment), a head of partial vectors first so the wide
 * blocks store aligned. The last columns, where the row is at least a vector long and y is
 * written (not accumulated), are the row's last whole vector: it recomputes some columns
 * already written, with the same taps in the same order, so the same bits. The
 * partial-vector block is kept for the rest: GCC keeps its accumulators on the stack, stored
 * and reloaded at every tap (a 14-lane tail was ~20% of a 3 -> 64 channel 224^2 layer's
 * kernel time). */
#define LAST_COLUMNS(block, n, e)                                                      \
    do {                                                                               \
        if ((e) < (n) && !r->accumulate && (n) >= VF_LANES) block((n) - VF_LANES, 0);  \
        else if ((e) < (n)) block((e), (n) - (e));                                     \
    } while (0)
/* Whether the nk rows y[] share the first one's alignment to a vector, as a streamed block,
 * whose head aligns the first row's stores, needs. */
static int same_alignment(float *const *y, size_t nk) {
    for (size_t k = 1; k < nk; k++)
        if (((uintptr_t)y[k] - (uintptr_t)y[0]) % (VF_LANES * sizeof(float))) return 0;
    return 1;
}

static ALWAYS_INLINE void rows_all(const struct rows_args *r, const int nk, const int nv, size_t n,
                                   const int stream, const int fin) {
    size_t e = 0;
    size_t head = stream ? vf_head_to_alignment(r->y[0], n) : n;
    size_t lo = 1, hi = 0; /* the wide blocks row_block_shifted takes, from e = head (or 0) on */
    if (nk == 1 && nv == NV_ONE) shifted_blocks(r, n, head < n ? head : 0, &lo, &hi);
    if (head < n) {
        if (head) rows_block(r, nk, 1, 0, head, 0, fin); /* one partial vector */
        for (e = head; e + (size_t)nv * VF_LANES <= n; e += (size_t)nv * VF_LANES) {
            if (nk == 1 && nv == NV_ONE && e >= lo && e <= hi) row_block_shifted(r, e, 1, fin);
            else rows_block(r, nk, nv, e, 0, 1, fin);
        }
    }
    for (; e + (size_t)nv * VF_LANES <= n; e += (size_t)nv * VF_LANES) {
        if (nk == 1 && nv == NV_ONE && e >= lo && e <= hi) row_block_shifted(r, e, 0, fin);
        else rows_block(r, nk, nv, e, 0, 0, fin);
    }
    /* Whole vectors from an aligned e: streamed too where the row is. Plain, they had read in
     * the lines they write: 224-column rows end in a pair after the wide blocks, 1/7 of the
     * output (1 thread, Ice Lake VM, 8 x 3 -> 64 on 224^2, 7 alternated rounds: 26.6 -> 19.7 ms). */
    const int aligned_stream = stream && head < n;
    for (; e + 2 * VF_LANES <= n; e += 2 * VF_LANES) {
        if (aligned_stream) rows_block(r, nk, 2, e, 0, 1, fin);
        else rows_block(r, nk, 2, e, 0, 0, fin);
    }
    /* More than a vector left and y written, not accumulated: one pair ending at the row's
     * end, recomputing a few columns with the same bits, rather than a single vector and
     * then the last one. A single vector's nk chains of multiply-adds wait on their latency
     * (Zen 5 would run 8 at a time): single-vector blocks were ~16% of a 3 -> 64 224^2
     * layer's kernel samples, and this rule took ~3% off its time (1 thread, min of 8). */
    if (n - e > VF_LANES && !r->accumulate && n >= 2 * VF_LANES) {
        rows_block(r, nk, 2, n - 2 * VF_LANES, 0, 0, fin);
        e = n;
    }
    for (; e + VF_LANES <= n; e += VF_LANES) {
        if (aligned_stream) rows_block(r, nk, 1, e, 0, 1, fin);
        else rows_block(r, nk, 1, e, 0, 0, fin);
    }
#define ROWS_TAIL(at, rest) rows_block(r, nk, 1, (at), (rest), 0, fin)
    LAST_COLUMNS(ROWS_TAIL, n, e);
#undef ROWS_TAIL
}

void FCONV_ISA_SUFFIX(fconv_direct_rows_kernel)(float *const *y, size_t nk, size_t n,
                                                const float *const *x_rows,
                                                const float *const *tap_rows, ptrdiff_t tap_step,
                                                ptrdiff_t k_stride, size_t kh, size_t kw, size_t dist,
                                                const float *bias, int flags) {
    assert(y && x_rows && tap_rows && nk >= 1 && nk <= 4 && kh >= 1 && kw >= 1);
    const int accumulate = flags & FCONV_ROWS_ACCUMULATE;
    const int relu = flags & FCONV_ROWS_RELU, fin = bias || relu;
    struct rows_args r = {y, x_rows, tap_rows, tap_step, k_stride, kh, kw, dist, accumulate,
                          {-0.0f, -0.0f, -0.0f, -0.0f}, relu ? 0.0f : -INFINITY};
    for (size_t k = 0; k < nk && bias; k++) r.add[k] = bias[k];
    const int stream = (flags & FCONV_ROWS_STREAM) && !accumulate && same_alignment(y, nk);
    /* nk, stream and fin as constants for rows_all */
#define ROWS_CASES(k, nv)                                          \
    case (k - 1) * 4 + 0: rows_all(&r, k, nv, n, 0, 0); break; \
    case (k - 1) * 4 + 1: rows_all(&r, k, nv, n, 0, 1); break; \
    case (k - 1) * 4 + 2: rows_all(&r, k, nv, n, 1, 0); break; \
    case (k - 1) * 4 + 3: rows_all(&r, k, nv, n, 1, 1); break;
    switch ((nk - 1) * 4 + (size_t)stream * 2 + (size_t)fin) {
    ROWS_CASES(1, NV_ONE)
    ROWS_CASES(2, NV_FOUR)
    ROWS_CASES(3, NV_FOUR)
    ROWS_CASES(4, NV_FOUR)
    default: break;
    }
#undef ROWS_CASES
}

/* filter2d: nr output rows sharing one kernel, as blocks of nr rows x nv vectors (4 x 3 on
 * AVX2: 12 accumulators, 3 input vectors and the broadcast tap fill the 16 registers). Input
 * row i (0 .. kh+nr-2) is loaded once per tap column b and feeds every output row r with
 * a = i - r in [0, kh); for a fixed r, i runs upward, so its taps still go in the order (a, b)
 * and each output has the bits of the one-row kernel. Channels one after the other into the
 * same accumulators: the order (c, a, b), y loaded and stored once for all of them. */
#define NV_FILTER (VF_LANES == 16 ? 6 : VF_LANES == 8 ? 3 : 4)

struct filter_args {
    float *const *y;
    const float *const *x_rows, *const *tap_rows;
    ptrdiff_t tap_step;
    size_t kh, kw, dist;
    int accumulate;
    size_t channels, x_channel_step; /* channel c's rows at x_rows + c*x_channel_step, taps at tap_rows + c*kh */
};

/* Input row i of one channel (its rows x_rows, its taps tap_rows), every tap column b, into
 * output rows klo..khi (tap row i - k). */
static ALWAYS_INLINE void filter_input_row(const struct filter_args *r, const float *const *x_rows,
                                           const float *const *tap_rows, vf acc[4][NV_FILTER], const int nv,
                                           const int klo, const int khi, size_t i, size_t e, size_t rest) {
    const float *xi = x_rows[i] + e;
    const float *tk[4];
    for (int k = klo; k <= khi; k++) tk[k] = tap_rows[i - (size_t)k];
    for (size_t b = 0; b < r->kw; b++) {
        const float *xb = xi + b * r->dist;
#if TAPS_FIRST
        {
            vf t[4];
            for (int k = klo; k <= khi; k++) t[k] = vf_set1(tk[k][(ptrdiff_t)b * r->tap_step]);
            for (int v = 0; v < nv; v++) {
                vf x = rest ? vf_loadu_partial(xb + (size_t)v * VF_LANES, rest)
                            : vf_loadu(xb + (size_t)v * VF_LANES);
                if (khi > klo) IN_REGISTER(x);
                for (int k = klo; k <= khi; k++) acc[k][v] = vf_fma(t[k], x, acc[k][v]);
            }
        }
#else
        {
            vf xv[NV_FILTER];
            for (int v = 0; v < nv; v++)
                xv[v] = rest ? vf_loadu_partial(xb + (size_t)v * VF_LANES, rest)
                             : vf_loadu(xb + (size_t)v * VF_LANES);
            for (int k = klo; k <= khi; k++) {
                vf t = vf_set1(tk[k][(ptrdiff_t)b * r->tap_step]);
                for (int v = 0; v < nv; v++) acc[k][v] = vf_fma(t, xv[v], acc[k][v]);
            }
        }
#endif
    }
}

static ALWAYS_INLINE void filter_block(const struct filter_args *r, const int nr, const int nv, size_t e,
                                       size_t rest, const int stream) {
    vf acc[4][NV_FILTER];
    for (int k = 0; k < nr; k++)
        for (int v = 0; v < nv; v++) {
            float *p = r->y[k] + e + (size_t)v * VF_LANES;
            acc[k][v] = !r->accumulate ? vf_zero() : rest ? vf_loadu_partial(p, rest) : vf_loadu(p);
        }
    const size_t rows = r->kh + (size_t)nr - 1;
    for (size_t c = 0; c < r->channels; c++) {
        const float *const *xc = r->x_rows + c * r->x_channel_step, *const *tc = r->tap_rows + c * r->kh;
        for (size_t i = 0; i < rows; i++) {
            /* output rows klo..khi use input row i; a constant range per case keeps the loads
             * shared (a test on k inside the tap loop lets the compiler split it per row) */
            const int klo = i >= r->kh ? (int)(i - r->kh + 1) : 0, khi = i < (size_t)nr ? (int)i : nr - 1;
            switch (klo * 4 + khi) {
#define FILTER_CASE(lo, hi) \
    case lo * 4 + hi: filter_input_row(r, xc, tc, acc, nv, lo, hi, i, e, rest); break;
            FILTER_CASE(0, 0) FILTER_CASE(0, 1) FILTER_CASE(0, 2) FILTER_CASE(0, 3)
            FILTER_CASE(1, 1) FILTER_CASE(1, 2) FILTER_CASE(1, 3)
            FILTER_CASE(2, 2) FILTER_CASE(2, 3)
            FILTER_CASE(3, 3)
#undef FILTER_CASE
            default: break;
            }
        }
    }
    for (int k = 0; k < nr; k++)
        for (int v = 0; v < nv; v++) {
            float *p = r->y[k] + e + (size_t)v * VF_LANES;
            if (rest) vf_storeu_partial(p, acc[k][v], rest);
            else if (stream) vf_stream(p, acc[k][v]);
            else vf_storeu(p, acc[k][v]);
        }
}

/* As rows_all; stream needs every row at the same alignment as the first. */
static ALWAYS_INLINE void filter_all(const struct filter_args *r, const int nr, size_t n, const int stream) {
    size_t e = 0;
    size_t head = stream ? vf_head_to_alignment(r->y[0], n) : n;
    if (head < n) {
        if (head) filter_block(r, nr, 1, 0, head, 0); /* one partial vector */
        for (e = head; e + (size_t)NV_FILTER * VF_LANES <= n; e += (size_t)NV_FILTER * VF_LANES)
            filter_block(r, nr, NV_FILTER, e, 0, 1);
    }
    for (; e + (size_t)NV_FILTER * VF_LANES <= n; e += (size_t)NV_FILTER * VF_LANES)
        filter_block(r, nr, NV_FILTER, e, 0, 0);
    const int aligned_stream = stream && head < n; /* as rows_all */
    for (; e + 2 * VF_LANES <= n; e += 2 * VF_LANES) {
        if (aligned_stream) filter_block(r, nr, 2, e, 0, 1);
        else filter_block(r, nr, 2, e, 0, 0);
    }
    for (; e + VF_LANES <= n; e += VF_LANES) {
        if (aligned_stream) filter_block(r, nr, 1, e, 0, 1);
        else filter_block(r, nr, 1, e, 0, 0);
    }
#define FILTER_TAIL(at, rest) filter_block(r, nr, 1, (at), (rest), 0)
    LAST_COLUMNS(FILTER_TAIL, n, e);
#undef FILTER_TAIL
}

/* nr (1..4; 1 for the last of several channels' rows) as a constant for filter_all, with stream
 * a constant too (each case compiled apart). */
static ALWAYS_INLINE void filter_all_rows(const struct filter_args *r, size_t nr, size_t n, const int stream) {
    switch (nr) {
    case 1: filter_all(r, 1, n, stream); break;
    case 2: filter_all(r, 2, n, stream); break;
    case 3: filter_all(r, 3, n, stream); break;
    default: filter_all(r, 4, n, stream); break;
    }
}

/* A sliding band: more than four output rows of one kernel, kh rows of accumulators (a strip
 * of SLIDE_NV vectors) moving down a column strip. While input row i is read, accumulator row
 * a holds output row i - a, so each input vector, loaded once per tap column, feeds all kh
 * output rows it belongs to (the four-row block reloads an input row for every block it
 * meets and multiplies it into fewer rows near the block's top and bottom: 7x7 took 60
 * unaligned loads for 168 multiply-adds a tap column, the band 3 for 21); after row i the
 * row i - kh + 1 is complete and leaves, and the others move up a row (register moves). Each
 * output still sums its taps in the order (a, b) from zero (or from y), the bits of the
 * one-row kernel. Accumulators, inputs and the broadcast tap fill the register file: AVX-512
 * holds kh x SLIDE_NV + SLIDE_NV + 1 of 32 up to kh = 8, AVX2's 16 kh x 2 + 3 up to 6
 * (beyond, one vector a row would load more than the four-row block). Standalone, in L1, on
 * one Ice Lake thread: 7x7 slid 120-133 GFLOP/s against the four-row block's 90-95, 5x5
 * 94-106 against 65-73; 3x3 only 1.07x there and 0.86x in the image, so from kh = 4
 * (FCONV_FILTER_SLIDE_KH_MIN). The taps are packed tap column by tap column, one pointer for
 * all kernel rows. */
#if VF_LANES == 16
#define SLIDE_KH_MAX FCONV_FILTER_SLIDE_KH_MAX_AVX512
#define SLIDE_NV(kh) ((kh) <= 4 ? 5 : (kh) <= 6 ? 4 : 3)
#define SLIDE_PREFETCH_NEAR_ROWS 2
#elif VF_LANES == 8
#define SLIDE_KH_MAX FCONV_FILTER_SLIDE_KH_MAX_AVX2
#define SLIDE_NV(kh) 2
#define SLIDE_PREFETCH_NEAR_ROWS 0
#else
#define SLIDE_KH_MAX 0 /* scalar: the four-row block */
#endif
#if SLIDE_KH_MAX > 0

/* How far ahead (in strips) the band asks for the input rows it meets: a strip walks down
 * kh + nr - 1 rows, each a stream of its own, more than the hardware prefetchers follow. A
 * standalone harness walking whole 2048-row strips ran 36 GFLOP/s without, 93 with two
 * strips ahead; in the library's 32-row bands it matters less (2048^2 7x7 on the Ice Lake
 * VM, 15 alternations in one process: one thread 5.69 -> 5.43 ms, one strip ahead 5.54, four
 * 5.60; two threads and RGB 1024^2 5x5 within the noise).
 *
 * With AVX-512 that far request goes to L2 only, and each row's strip is asked into L1
 * SLIDE_PREFETCH_NEAR_ROWS rows before the walk reads it. Image rows a multiple of 4 KiB
 * apart (2048 or 4096 floats wide) put a strip's kh + nr - 1 rows in the same few L1 sets,
 * 12 ways each: the rows asked into L1 two strips ahead pushed each other out before their
 * turn, and the walk met every row in L2. One Ice Lake thread, the kernel walking a 2048^2
 * image's bands, 15-21 alternated rounds in one process: 7x7 77.0 -> 91.6 GFLOP/s (rows 2112
 * floats apart, out of step with the sets, ran 89.8 the old way), 5x5 56.8 -> 72.0, 4x4 40.7
 * -> 45.2, 6x6 61.4 -> 65.4, 8x8 79.0 -> 92.0, 4096 wide 7x7 73.5 -> 85.9; the library on two
 * threads, 21 rounds, medians: 2048^2 7x7 3.23 -> 2.97 ms, 5x5 1.91 -> 1.60, 4096^2 5x5 7.91
 * -> 6.78, RGB 1024^2 5x5 1.51 -> 1.37, 1024^2 7x7 0.80 -> 0.75. AVX2's two-vector strips
 * gained nothing so (0.94-1.0x, 4x4 to 6x6) and keep the old request. */
#define SLIDE_PREFETCH_STRIPS 2

/* Input row x (its strip), kernel rows alo..ahi into accumulator rows alo..ahi; rest > 0: one
 * vector of rest columns (nv 1). */
static ALWAYS_INLINE void slide_input_row(vf acc[][SLIDE_NV(1)], const float *x, const float *packed_taps,
                                          size_t kw, size_t dist, const int kh, const int nv, size_t rest,
                                          int alo, int ahi, const int full) {
    for (size_t b = 0; b < kw; b++) {
        const float *xb = x + b * dist, *t = packed_taps + b * (size_t)kh;
        vf xv[SLIDE_NV(1)];
        for (int v = 0; v < nv; v++)
            xv[v] = rest ? vf_loadu_partial(xb, rest) : vf_loadu(xb + (size_t)v * VF_LANES);
        for (int a = 0; a < kh; a++) {
            if (!full && (a < alo || a > ahi)) continue;
            const vf tv = vf_set1(t[a]);
            for (int v = 0; v < nv; v++) acc[a][v] = vf_fma(tv, xv[v], acc[a][v]);
        }
    }
}

/* Input row i of the band's strip at column e: y's row i into accumulator row 0 where the band
 * accumulates, the prefetches, kernel rows alo..ahi (full: all), then output row i - kh + 1
 * out where it is complete, and every accumulator row down one. */
static ALWAYS_INLINE void slide_row(const struct filter_args *r, vf acc[][SLIDE_NV(1)], size_t nr, size_t i,
                                    size_t e, size_t rest, const float *packed_taps, const int kh, const int nv,
                                    const int stream, int alo, int ahi, const int full) {
    const size_t rows = nr + (size_t)kh - 1;
    if (i < nr && r->accumulate)
        for (int v = 0; v < nv; v++) {
            const float *p = r->y[i] + e + (size_t)v * VF_LANES;
            acc[0][v] = rest ? vf_loadu_partial(p, rest) : vf_loadu(p);
        }
    const float *x = r->x_rows[i] + e;
    for (int v = 0; v <= nv; v++) /* locality 2: L2 (prefetcht1), 3: L1 as well */
        __builtin_prefetch(x + (size_t)(SLIDE_PREFETCH_STRIPS * nv + v) * VF_LANES, 0,
                           SLIDE_PREFETCH_NEAR_ROWS > 0 ? 2 : 3);
    if (SLIDE_PREFETCH_NEAR_ROWS > 0 && i + SLIDE_PREFETCH_NEAR_ROWS < rows)
        for (int v = 0; v <= nv; v++)
            __builtin_prefetch(r->x_rows[i + SLIDE_PREFETCH_NEAR_ROWS] + e + (size_t)v * VF_LANES, 0, 3);
    slide_input_row(acc, x, packed_taps, r->kw, r->dist, kh, nv, rest, alo, ahi, full);
    if (i + 1 >= (size_t)kh) {
        float *out = r->y[i + 1 - (size_t)kh] + e;
        for (int v = 0; v < nv; v++) {
            if (rest) vf_storeu_partial(out, acc[kh - 1][v], rest);
            else if (stream) vf_stream(out + (size_t)v * VF_LANES, acc[kh - 1][v]);
            else vf_storeu(out + (size_t)v * VF_LANES, acc[kh - 1][v]);
        }
    }
    for (int a = kh - 1; a > 0; a--)
        for (int v = 0; v < nv; v++) acc[a][v] = acc[a - 1][v];
    for (int v = 0; v < nv; v++) acc[0][v] = vf_zero();
}

/* Rows [0, nr) of the band, the strip of nv vectors at column e (rest > 0: of rest columns). */
static ALWAYS_INLINE void slide_strip(const struct filter_args *r, size_t nr, size_t e, size_t rest,
                                      const float *packed_taps, const int kh, const int nv, const int stream) {
    vf acc[SLIDE_KH_MAX][SLIDE_NV(1)];
    for (int a = 0; a < kh; a++)
        for (int v = 0; v < nv; v++) acc[a][v] = vf_zero();
    if (nr + 1 >= (size_t)kh) {
        /* the first and last kh - 1 rows feed fewer accumulator rows, each its own constant
         * range (a test per kernel row and tap column cost a 32-row band's 12 such rows
         * ~1.5x), unrolled rather than chosen by a switch a row (one Ice Lake thread, the
         * kernel over a 2048^2 image, 15-21 alternated rounds: 7x7 64.7 -> 71.1 GFLOP/s, 5x5
         * 61.3 -> 64.2, 8x8 71.8 -> 77.7, 4x4 and 6x6 1.02-1.03x; the library on two threads,
         * 21 rounds, medians: 2048^2 7x7 3.46 -> 3.19 ms, 5x5 3.06 -> 2.93, RGB 1024^2 5x5
         * 1.49 -> 1.39, 1024^2 7x7 0.98 -> 0.85, 512^2 7x7 0.26 -> 0.24) */
        UNROLLED (int i = 0; i < kh - 1; i++) /* into accumulator rows 0..i */
            slide_row(r, acc, nr, (size_t)i, e, rest, packed_taps, kh, nv, stream, 0, i, 0);
        for (size_t i = (size_t)kh - 1; i < nr; i++)
            slide_row(r, acc, nr, i, e, rest, packed_taps, kh, nv, stream, 0, kh - 1, 1);
        UNROLLED (int l = 1; l < kh; l++) /* into accumulator rows l..kh - 1 */
            slide_row(r, acc, nr, nr + (size_t)l - 1, e, rest, packed_taps, kh, nv, stream, l, kh - 1, 0);
        return;
    }
    /* bands shorter than the kernel (a short last band of a small image): ranges at run time */
    for (size_t i = 0; i < nr + (size_t)kh - 1; i++)
        slide_row(r, acc, nr, i, e, rest, packed_taps, kh, nv, stream, i >= nr ? (int)(i - nr + 1) : 0,
                  i < (size_t)kh - 1 ? (int)i : kh - 1, 0);
}

/* The whole band, columns [0, n): a head of s0 columns (to the stores' vector boundary), whole
 * strips, single vectors, and the last columns (as filter_all's LAST_COLUMNS: without
 * accumulate, the last whole vector again, whose loads and stores stay inside the rows). */
static ALWAYS_INLINE void slide_columns(const struct filter_args *r, size_t nr, size_t n, size_t s0,
                                        const float *packed_taps, const int kh, const int stream) {
    const int nv = SLIDE_NV(kh);
    size_t e = s0;
    if (s0 > 0) slide_strip(r, nr, 0, s0, packed_taps, kh, 1, 0);
    for (; e + (size_t)nv * VF_LANES <= n; e += (size_t)nv * VF_LANES) slide_strip(r, nr, e, 0, packed_taps, kh, nv, stream);
    for (; e + VF_LANES <= n; e += VF_LANES) slide_strip(r, nr, e, 0, packed_taps, kh, 1, stream);
#define SLIDE_TAIL(at, rest) slide_strip(r, nr, (at), (rest), packed_taps, kh, 1, 0)
    LAST_COLUMNS(SLIDE_TAIL, n, e);
#undef SLIDE_TAIL
}

/* kh and stream as constants for slide_columns. */
static void slide_band(const struct filter_args *r, size_t nr, size_t n, size_t s0, const float *packed_taps,
                       const int stream) {
#define SLIDE_CASE(k)                                                  \
    case k:                                                            \
        if (stream) slide_columns(r, nr, n, s0, packed_taps, k, 1);    \
        else slide_columns(r, nr, n, s0, packed_taps, k, 0);           \
        break;
    switch (r->kh) {
    SLIDE_CASE(4) SLIDE_CASE(5) SLIDE_CASE(6)
#if SLIDE_KH_MAX >= 8
    SLIDE_CASE(7) SLIDE_CASE(8)
#endif
    default: assert(0);
    }
#undef SLIDE_CASE
}
#endif

void FCONV_ISA_SUFFIX(fconv_direct_filter_rows_kernel)(float *const *y, size_t nr, size_t n,
                                                       const float *const *x_rows,
                                                       const float *const *tap_rows, ptrdiff_t tap_step,
                                                       size_t channels, size_t kh, size_t kw, size_t dist,
                                                       int flags) {
    assert(y && x_rows && tap_rows && nr >= 1 && nr <= FCONV_FILTER_ROWS_MAX && channels >= 1 && kh >= 1 &&
           kw >= 1);
    const int accumulate = flags & FCONV_ROWS_ACCUMULATE;
    const int aligned = same_alignment(y, nr), stream = (flags & FCONV_ROWS_STREAM) && !accumulate && aligned;
    const size_t x_channel_step = kh + nr - 1;
#if SLIDE_KH_MAX > 0
    if (nr > 4 && channels == 1 && kh >= FCONV_FILTER_SLIDE_KH_MIN && kh <= SLIDE_KH_MAX &&
        kw * kh <= FCONV_FILTER_SLIDE_TAPS_MAX && n > 0) {
        const struct filter_args band = {y, x_rows, tap_rows, tap_step, kh, kw, dist, accumulate, 1, x_channel_step};
        /* strips start on the stores' vector boundary where the rows share it: no line is
         * written by two strips */
        float packed_taps[FCONV_FILTER_SLIDE_TAPS_MAX];
        for (size_t b = 0; b < kw; b++)
            for (size_t a = 0; a < kh; a++) packed_taps[b * kh + a] = tap_rows[a][(ptrdiff_t)b * tap_step];
        slide_band(&band, nr, n, aligned ? vf_head_to_alignment(y[0], n) : 0, packed_taps, stream);
        return;
    }
#endif
    for (size_t r0 = 0; r0 < nr; r0 += 4) { /* four rows at a time */
        float *const *yk = y + r0;
        const size_t rows = nr - r0 < 4 ? nr - r0 : 4;
        if (rows == 1 && (channels == 1 || nr == 1)) {
            /* one row: the one-row kernel's wider block (a single row's channels lie end to
             * end, kh rows each: channels x kh kernel rows to it) */
            const struct rows_args r1 = {yk, x_rows + r0, tap_rows, tap_step, 0, channels * kh, kw, dist, accumulate,
                                         {0}, 0.0f};
            if (stream) rows_all(&r1, 1, NV_ONE, n, 1, 0);
            else rows_all(&r1, 1, NV_ONE, n, 0, 0);
            continue;
        }
        const struct filter_args r = {yk, x_rows + r0, tap_rows, tap_step, kh, kw, dist, accumulate, channels,
                                      x_channel_step};
        if (stream) filter_all_rows(&r, rows, n, 1); /* stream a constant in each */
        else filter_all_rows(&r, rows, n, 0);
    }
}
