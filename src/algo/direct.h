/*
 * direct.h — private to the direct algorithm: its two drivers and the strided row loop of
 * conv2d. A "row" is one output row accumulated from one input row through a row of kernel
 * taps. Borders are handled in place ("dynamic padding"): each tap only touches the output
 * columns whose input column lies inside the row, so no padded copy and no index checks in
 * the inner loops.
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
/* Output rows per task of fconv_direct_filter: more than four where its kernel slides down
 * bands of rows (fconv_direct_filter_rows_fn), else four; for the cost model too. */
int64_t fconv_direct_filter_band_rows(const fconv_plan *plan);
/* Whether fconv_direct_conv2d runs every output row of this layer whole, from a task's strip
 * of zero-padded input rows (few input channels; direct-conv2d.c), for the cost model. */
int fconv_direct_conv2d_whole_rows(const fconv_plan *plan);
/* Whether those whole rows read shifted copies of the strip's rows, every load aligned (with
 * AVX-512 where split loads are slow and the copies fit L1; direct-conv2d.c), for the cost
 * model. */
int fconv_direct_conv2d_whole_rows_shifted(const fconv_plan *plan);
/* Whether fconv_direct_conv2d runs this layer's strided rows (stride > 1 along them) through the
 * SIMD kernel from phase-split strips, for the cost model. */
int fconv_direct_conv2d_strided_rows(const fconv_plan *plan);
/* Whether fconv_direct_conv2d runs this layer as pointwise (1x1, stride 1, no padding: each
 * plane one long row), for the cost model. */
int fconv_direct_conv2d_pointwise(const fconv_plan *plan);
/* Output rows per task where fconv_direct_conv2d runs a task's output rows as one long row
 * (stride 1, more (c, r) rows than whole rows take, the task's padded rows in the strip),
 * else 0; for the cost model. */
int64_t fconv_direct_conv2d_flat_rows(const fconv_plan *plan);

/* One axis of a row correlation: output column q reads input column
 * q*stride - pad + s*dilation for tap s in [0, taps). */
struct fconv_direct_axis {
    int64_t taps;
    int64_t stride, pad, dilation;
    int64_t in_w; /* input columns */
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

/*
 * Strided rows (stride > 1 along the row; stride-1 rows run through the dispatched SIMD
 * kernels, core/dispatch.h): for output columns [qb, qe) and each of nk output rows k,
 * y[k][q] += sum_s taps[k][s*tap_step] * xrow[q*stride - pad + s*dilation] over the taps whose
 * input column lies in the row, one tap at a time; y[k] and xrow point at column 0 of their
 * rows. Each output's summation order depends only on its position.
 */
static inline void fconv_direct_rows_strided(const struct fconv_direct_axis *a, int nk, float *const y[],
                                             const float *xrow, const float *const taps[],
                                             ptrdiff_t tap_step, int64_t qb, int64_t qe) {
    for (int64_t s = 0; s < a->taps; s++) {
        int64_t lo, hi;
        fconv_direct_tap_range(a, s, qb, qe, &lo, &hi);
        if (lo >= hi) continue;
        const float *x = xrow + lo * a->stride - a->pad + s * a->dilation;
        for (int k = 0; k < nk; k++) {
            float *restrict yk = y[k] + lo;
            const float w = taps[k][s * tap_step];
            for (int64_t i = 0; i < hi - lo; i++) yk[i] += w * x[i * a->stride];
        }
    }
}

#endif
