/*
 * direct.h — private to the direct algorithm: its two drivers and the row loops they share.
 * A "row" is one output row accumulated from one input row through a row of kernel taps.
 * Borders are handled in place ("dynamic padding"): each tap only touches the output
 * columns whose input column lies inside the row, so no padded copy and no index checks
 * in the inner loops, which are unit-stride axpys the compiler vectorizes.
 */
#ifndef FCONV_ALGO_DIRECT_H
#define FCONV_ALGO_DIRECT_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"

/* The drivers (direct-conv2d.c, direct-filter.c). conv1d is a one-row filter and runs
 * through the filter driver, which chunks rows into fixed runs of outputs. */
void fconv_direct_conv2d(const fconv_plan *plan, const float *x, const float *w, const float *bias,
                         float *y);
void fconv_direct_filter(const fconv_plan *plan, const float *x, const float *w, float *y);

/*
 * One axis of a row correlation: output column q reads input column
 * q*stride - pad + s*dilation for tap s in [0, taps). Columns are `unit` floats wide (the
 * interleaved channels of filter2d; 1 for conv2d), so with stride 1 a whole row, all
 * channels together, is one contiguous run. unit > 1 only with stride 1.
 */
struct fconv_direct_axis {
    int64_t taps;
    int64_t stride, pad, dilation;
    int64_t in_w; /* input columns */
    int64_t unit; /* floats per column */
};

static inline int64_t fconv_direct_max(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t fconv_direct_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* ceil(a / b) for b > 0 and any sign of a. */
static inline int64_t fconv_direct_ceil_div(int64_t a, int64_t b) {
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/* The output columns [*lo, *hi) within [qb, qe) for which tap s reads inside the row. */
static inline void fconv_direct_tap_range(const struct fconv_direct_axis *a, int64_t s, int64_t qb,
                                          int64_t qe, int64_t *lo, int64_t *hi) {
    int64_t off = s * a->dilation - a->pad; /* input column = q*stride + off */
    int64_t l, h;
    if (a->stride == 1) {
        l = -off;
        h = a->in_w - off;
    } else {
        l = fconv_direct_ceil_div(-off, a->stride);
        h = fconv_direct_ceil_div(a->in_w - off, a->stride);
    }
    l = fconv_direct_min(fconv_direct_max(l, qb), qe);
    h = fconv_direct_min(fconv_direct_max(h, l), qe);
    *lo = l;
    *hi = h;
}

/* y[i] += w0*x[i] + w1*x[i+d] + ... for i < n: one to four taps fused, so each output is
 * loaded and stored once per four multiply-adds. */
static inline void fconv_direct_taps1(float *restrict y, const float *restrict x, float w0, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += w0 * x[i];
}
static inline void fconv_direct_taps2(float *restrict y, const float *restrict x, int64_t d, float w0,
                                      float w1, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += w0 * x[i] + w1 * x[i + d];
}
static inline void fconv_direct_taps3(float *restrict y, const float *restrict x, int64_t d, float w0,
                                      float w1, float w2, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += w0 * x[i] + w1 * x[i + d] + w2 * x[i + 2 * d];
}
static inline void fconv_direct_taps4(float *restrict y, const float *restrict x, int64_t d, float w0,
                                      float w1, float w2, float w3, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        y[i] += w0 * x[i] + w1 * x[i + d] + w2 * x[i + 2 * d] + w3 * x[i + 3 * d];
}
/* The same for four output rows at once (four output channels of conv2d), weights
 * w[k*4 + t]: each input load serves four channels. */
static inline void fconv_direct_taps1_k4(float *restrict y0, float *restrict y1, float *restrict y2,
                                         float *restrict y3, const float *restrict x,
                                         const float *restrict w, int64_t n) {
    const float a0 = w[0], b0 = w[4], c0 = w[8], e0 = w[12];
    for (int64_t i = 0; i < n; i++) {
        float x0 = x[i];
        y0[i] += a0 * x0;
        y1[i] += b0 * x0;
        y2[i] += c0 * x0;
        y3[i] += e0 * x0;
    }
}
static inline void fconv_direct_taps2_k4(float *restrict y0, float *restrict y1, float *restrict y2,
                                         float *restrict y3, const float *restrict x, int64_t d,
                                         const float *restrict w, int64_t n) {
    const float a0 = w[0], a1 = w[1], b0 = w[4], b1 = w[5];
    const float c0 = w[8], c1 = w[9], e0 = w[12], e1 = w[13];
    for (int64_t i = 0; i < n; i++) {
        float x0 = x[i], x1 = x[i + d];
        y0[i] += a0 * x0 + a1 * x1;
        y1[i] += b0 * x0 + b1 * x1;
        y2[i] += c0 * x0 + c1 * x1;
        y3[i] += e0 * x0 + e1 * x1;
    }
}
static inline void fconv_direct_taps3_k4(float *restrict y0, float *restrict y1, float *restrict y2,
                                         float *restrict y3, const float *restrict x, int64_t d,
                                         const float *restrict w, int64_t n) {
    const float a0 = w[0], a1 = w[1], a2 = w[2], b0 = w[4], b1 = w[5], b2 = w[6];
    const float c0 = w[8], c1 = w[9], c2 = w[10], e0 = w[12], e1 = w[13], e2 = w[14];
    for (int64_t i = 0; i < n; i++) {
        float x0 = x[i], x1 = x[i + d], x2 = x[i + 2 * d];
        y0[i] += a0 * x0 + a1 * x1 + a2 * x2;
        y1[i] += b0 * x0 + b1 * x1 + b2 * x2;
        y2[i] += c0 * x0 + c1 * x1 + c2 * x2;
        y3[i] += e0 * x0 + e1 * x1 + e2 * x2;
    }
}
static inline void fconv_direct_taps4_k4(float *restrict y0, float *restrict y1, float *restrict y2,
                                         float *restrict y3, const float *restrict x, int64_t d,
                                         const float *restrict w, int64_t n) {
    const float a0 = w[0], a1 = w[1], a2 = w[2], a3 = w[3], b0 = w[4], b1 = w[5], b2 = w[6], b3 = w[7];
    const float c0 = w[8], c1 = w[9], c2 = w[10], c3 = w[11];
    const float e0 = w[12], e1 = w[13], e2 = w[14], e3 = w[15];
    for (int64_t i = 0; i < n; i++) {
        float x0 = x[i], x1 = x[i + d], x2 = x[i + 2 * d], x3 = x[i + 3 * d];
        y0[i] += a0 * x0 + a1 * x1 + a2 * x2 + a3 * x3;
        y1[i] += b0 * x0 + b1 * x1 + b2 * x2 + b3 * x3;
        y2[i] += c0 * x0 + c1 * x1 + c2 * x2 + c3 * x3;
        y3[i] += e0 * x0 + e1 * x1 + e2 * x2 + e3 * x3;
    }
}
/* y[i] += w * x[i*stride] (strided conv2d rows). */
static inline void fconv_direct_taps_strided(float *restrict y, const float *restrict x, int64_t stride,
                                             float w, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += w * x[i * stride];
}

/* Columns [q0, q1) of fconv_direct_rows' tap group s0..s0+nt-1 (weights wt[k*4 + t]), one
 * column and one tap at a time, skipping taps that read outside the row. Stride 1. */
static inline void fconv_direct_edge_columns(const struct fconv_direct_axis *a, int nk, float *const y[],
                                             const float *xrow, const float *wt, int64_t s0, int64_t nt,
                                             int64_t q0, int64_t q1) {
    const int64_t u = a->unit;
    for (int64_t q = q0; q < q1; q++) {
        for (int64_t t = 0; t < nt; t++) {
            int64_t col = q + (s0 + t) * a->dilation - a->pad;
            if (col < 0 || col >= a->in_w) continue;
            const float *xq = xrow + col * u;
            if (u == 1) { /* conv2d, conv1d, one-channel filters: no channel loop */
                for (int k = 0; k < nk; k++) y[k][q] += wt[k * 4 + t] * xq[0];
                continue;
            }
            for (int k = 0; k < nk; k++) {
                float w = wt[k * 4 + t], *yq = y[k] + q * u;
                for (int64_t ch = 0; ch < u; ch++) yq[ch] += w * xq[ch];
            }
        }
    }
}

/*
 * Accumulate, for output columns [qb, qe) and each of nk (1 or 4) output rows k,
 * y[k][q] += sum_s taps[k][s*tap_step] * xrow[col(q, s)] over the taps whose input column
 * lies in the row; y[k] and xrow point at column 0 of their rows. Taps go in groups of
 * four: the columns every tap of the group can read (the interior) get the fused loop, the
 * few edge columns a scalar loop. Each output's summation order depends only on
 * its position and nk, never on how the caller splits the work between threads.
 */
static inline void fconv_direct_rows(const struct fconv_direct_axis *a, int nk, float *const y[],
                                     const float *xrow, const float *const taps[], ptrdiff_t tap_step,
                                     int64_t qb, int64_t qe) {
    if (a->stride != 1) {
        for (int64_t s = 0; s < a->taps; s++) {
            int64_t lo, hi;
            fconv_direct_tap_range(a, s, qb, qe, &lo, &hi);
            if (lo < hi)
                for (int k = 0; k < nk; k++)
                    fconv_direct_taps_strided(y[k] + lo, xrow + lo * a->stride - a->pad + s * a->dilation,
                                              a->stride, taps[k][s * tap_step], hi - lo);
        }
        return;
    }
    const int64_t u = a->unit, d = a->dilation * u;
    for (int64_t s0 = 0; s0 < a->taps; s0 += 4) {
        int64_t nt = fconv_direct_min(4, a->taps - s0);
        float wt[16] = {0.0f}; /* wt[k*4 + t] */
        int64_t ia = qb, ib = qe; /* interior: every tap of the group reads inside the row */
        for (int64_t t = 0; t < nt; t++) {
            for (int k = 0; k < nk; k++) wt[k * 4 + t] = taps[k][(s0 + t) * tap_step];
            int64_t lo, hi;
            fconv_direct_tap_range(a, s0 + t, qb, qe, &lo, &hi);
            ia = fconv_direct_max(ia, lo);
            ib = fconv_direct_min(ib, hi);
        }
        if (ia >= ib) ia = ib = qe; /* no interior: the edge pieces below cover everything */
        if (ia < ib) {
            const float *xi = xrow + (ia + s0 * a->dilation - a->pad) * u;
            int64_t n = (ib - ia) * u, o = ia * u;
            if (nk == 4) {
                switch (nt) {
                case 1: fconv_direct_taps1_k4(y[0] + o, y[1] + o, y[2] + o, y[3] + o, xi, wt, n); break;
                case 2: fconv_direct_taps2_k4(y[0] + o, y[1] + o, y[2] + o, y[3] + o, xi, d, wt, n); break;
                case 3: fconv_direct_taps3_k4(y[0] + o, y[1] + o, y[2] + o, y[3] + o, xi, d, wt, n); break;
                default: fconv_direct_taps4_k4(y[0] + o, y[1] + o, y[2] + o, y[3] + o, xi, d, wt, n); break;
                }
            } else {
                for (int k = 0; k < nk; k++) {
                    const float *w = wt + k * 4;
                    switch (nt) {
                    case 1: fconv_direct_taps1(y[k] + o, xi, w[0], n); break;
                    case 2: fconv_direct_taps2(y[k] + o, xi, d, w[0], w[1], n); break;
                    case 3: fconv_direct_taps3(y[k] + o, xi, d, w[0], w[1], w[2], n); break;
                    default: fconv_direct_taps4(y[k] + o, xi, d, w[0], w[1], w[2], w[3], n); break;
                    }
                }
            }
        }
        /* The edge columns, few (about the kernel's reach), one column at a time: cheaper
         * than starting a vector loop per tap for one or two elements. */
        fconv_direct_edge_columns(a, nk, y, xrow, wt, s0, nt, qb, ia);
        fconv_direct_edge_columns(a, nk, y, xrow, wt, s0, nt, ib, qe);
    }
}

#endif
