/*
 * direct-filter.c — filter2d (and conv1d, a one-row filter with a zero border) by direct
 * loops over the interleaved H x W x CH image. A task owns a fixed run of at most
 * DIRECT_CHUNK output floats of one output row; a kernel tap at column offset b is an axpy
 * over the whole interleaved row shifted by b*CH, so every channel count vectorizes.
 * Borders in place: the run splits into the interior (every tap inside the row: the
 * dispatched SIMD kernel, all taps in registers) and the edge columns (zero border: taps
 * clipped; others: samples fetched through fconv_border_index). Rows outside the image map
 * to the row the border rule names, or for zero/constant to nothing/V.
 */
#include "algo/direct.h"
#include "core/border.h"
#include "core/dispatch.h"
#include "core/parallel.h"

/* Outputs at least this large are written with non-temporal stores: 4096^2 3x3 measured
 * 5.47 -> 5.24-5.43 ms on 2 threads (no read-for-ownership of 64 MB), while 2048^2 (16 MB,
 * partly cache-resident when the caller reads it back) measured 1.39 -> 1.59 ms. */
#define FILTER_STREAM_BYTES (32.0 * 1024 * 1024)

/* Output floats per task: 16 KiB of outputs stay in L1 while the taps stream through. */
#define DIRECT_CHUNK 4096

struct filter_ctx {
    const fconv_plan *plan;
    const float *x, *w;
    float *y;
    int64_t chunk_cols; /* output columns per task */
    int64_t chunks;     /* tasks per output row */
    int stream;         /* FCONV_ROWS_STREAM for the interior, or 0 */
    struct fconv_direct_axis axis;
};

/* Taps of kernel row a in correlation orientation: kc[a][b] = taps[b * *step]. Convolution
 * reads the kernel flipped in place, so any kernel size needs no copy. */
static const float *kernel_row(const fconv_filter2d_desc *f, const float *w, int64_t a, ptrdiff_t *step) {
    if (f->correlate) {
        *step = 1;
        return w + a * f->kw;
    }
    *step = -1;
    return w + (f->kh - 1 - a) * f->kw + (f->kw - 1);
}

/* Columns [j0, j1) where some tap leaves the row, one output at a time through the border
 * rule (not used for the zero border, which fconv_direct_row clips instead). */
static void border_columns(const struct filter_ctx *ctx, float *yrow, const float *xrow,
                           const float *taps, ptrdiff_t step, int64_t j0, int64_t j1) {
    const fconv_filter2d_desc *f = &ctx->plan->filter;
    const int64_t C = f->channels, pad = ctx->axis.pad;
    for (int64_t j = j0; j < j1; j++) {
        for (int64_t ch = 0; ch < C; ch++) {
            float acc = 0.0f;
            for (int64_t b = 0; b < f->kw; b++) {
                int64_t col = fconv_border_index(f->border, j - pad + b, f->w);
                float v = col < 0 ? f->border_value : xrow[col * C + ch];
                acc += taps[b * step] * v;
            }
            yrow[j * C + ch] += acc;
        }
    }
}

/* Kernel rows per call of the SIMD kernel (taller kernels take several calls, each adding to
 * the previous): bounds the row-pointer arrays on the stack. */
#define ROWS_PER_CALL 64

/* Output row i, chunk jc. With interior_done, the interior columns already hold the
 * result (filter_task's multi-row kernel) and only the edge columns are computed. */
static void filter_row(const struct filter_ctx *ctx, int64_t i, int64_t jc, int interior_done) {
    const fconv_plan *plan = ctx->plan;
    const fconv_filter2d_desc *f = &plan->filter;
    const int64_t C = f->channels, OW = plan->out_w, pad = ctx->axis.pad;
    const int64_t j0 = jc * ctx->chunk_cols, j1 = fconv_direct_min(j0 + ctx->chunk_cols, OW);
    float *yrow = ctx->y + i * OW * C;

    /* Interior columns [ib, ie): every tap of a kernel row reads inside the image row. They
     * go through the dispatched SIMD kernel, all taps of all kernel rows in registers. */
    const int64_t ib = fconv_direct_min(fconv_direct_max(pad, j0), j1);
    const int64_t ie = fconv_direct_min(fconv_direct_max(f->w + pad - f->kw + 1, ib), j1);
    float constant_sum = 0.0f; /* rows wholly outside under a constant border read V */
    int have_constant = 0, accumulate = 0;
    const float *xs[ROWS_PER_CALL], *ts[ROWS_PER_CALL];
    size_t nrows = 0;
    ptrdiff_t step = 1;
    for (int64_t a = 0; a < f->kh && !interior_done; a++) {
        const float *taps = kernel_row(f, ctx->w, a, &step);
        int64_t row = fconv_border_index(f->border, i + plan->off_h - (f->kh - 1) + a, f->h);
        if (row < 0) {
            if (f->border == FCONV_BORDER_CONSTANT) {
                for (int64_t b = 0; b < f->kw; b++) constant_sum += taps[b * step] * f->border_value;
                have_constant = 1;
            }
            continue;
        }
        /* (no interior: ib - pad may be negative, so point at the row itself, never read) */
        xs[nrows] = ctx->x + (row * f->w + (ib < ie ? ib - pad : 0)) * C;
        ts[nrows] = taps;
        if (++nrows == ROWS_PER_CALL || a == f->kh - 1) {
            if (ib < ie) {
                float *const yk[1] = {yrow + ib * C};
                plan->kernels->direct_rows(yk, 1, (size_t)((ie - ib) * C), xs, ts, step, 0, nrows,
                                           (size_t)f->kw, (size_t)C,
                                           accumulate ? FCONV_ROWS_ACCUMULATE : ctx->stream);
            }
            accumulate = 1;
            nrows = 0;
        }
    }
    if (nrows > 0 && ib < ie) { /* the last kernel row was outside: flush the rest */
        float *const yk[1] = {yrow + ib * C};
        plan->kernels->direct_rows(yk, 1, (size_t)((ie - ib) * C), xs, ts, step, 0, nrows,
                                   (size_t)f->kw, (size_t)C, accumulate ? FCONV_ROWS_ACCUMULATE : ctx->stream);
        accumulate = 1;
    }
    if (!accumulate && !interior_done)
        for (int64_t e = ib * C; e < ie * C; e++) yrow[e] = 0.0f;

    /* The few edge columns [j0, ib) and [ie, j1), kernel row by kernel row. */
    for (int64_t e = j0 * C; e < ib * C; e++) yrow[e] = 0.0f;
    for (int64_t e = ie * C; e < j1 * C; e++) yrow[e] = 0.0f;
    for (int64_t a = 0; a < f->kh && (j0 < ib || ie < j1); a++) {
        const float *taps = kernel_row(f, ctx->w, a, &step);
        int64_t row = fconv_border_index(f->border, i + plan->off_h - (f->kh - 1) + a, f->h);
        if (row < 0) continue; /* counted in constant_sum */
        const float *xrow = ctx->x + row * f->w * C;
        if (f->border == FCONV_BORDER_ZERO) { /* fconv_direct_row clips the taps itself */
            fconv_direct_row(&ctx->axis, yrow, xrow, taps, step, j0, ib);
            fconv_direct_row(&ctx->axis, yrow, xrow, taps, step, ie, j1);
        } else {
            border_columns(ctx, yrow, xrow, taps, step, j0, ib);
            border_columns(ctx, yrow, xrow, taps, step, ie, j1);
        }
    }
    if (have_constant)
        for (int64_t e = j0 * C; e < j1 * C; e++) yrow[e] += constant_sum;
}

/* Output rows per task: the multi-row kernel loads each input row once for up to this many
 * output rows (kh-fold fewer loads than one row at a time). It serves kernels at least
 * FILTER_MIN_KH tall: 5x5 and 7x7 gain 10-25% (2-core Zen 5 VM, 2048^2, one thread), while
 * 3x3 on large images is memory-bound and measured ~5% slower with it, so 3x3 keeps one
 * row per step (direct.c's cost model follows the same rule). */
#define FILTER_ROWS 4
#define FILTER_MIN_KH 4

/* Output rows per task for a kernel kh tall. */
static int64_t rows_per_task(int64_t kh) {
    return kh >= FILTER_MIN_KH ? FILTER_ROWS : 1;
}

/* Output rows [rows*ib, +rows), chunk jc. Where every kernel row of every
 * output row of the block lies inside the image, the interior columns go through the
 * multi-row kernel (same bits per output as the one-row path); the rest row by row. */
static void filter_task(const void *vctx, size_t ib, size_t jc) {
    const struct filter_ctx *ctx = vctx;
    const fconv_plan *plan = ctx->plan;
    const fconv_filter2d_desc *f = &plan->filter;
    const int64_t C = f->channels, OW = plan->out_w, pad = ctx->axis.pad;
    const int64_t rows = rows_per_task(f->kh);
    const int64_t i0 = (int64_t)ib * rows, i1 = fconv_direct_min(i0 + rows, plan->out_h);
    const int64_t top = i0 + plan->off_h - (f->kh - 1); /* first input row of the block */
    const int64_t nr = i1 - i0, nin = f->kh + nr - 1;
    int done = 0;
    if (nr > 1 && top >= 0 && top + nin <= f->h && nin <= ROWS_PER_CALL) {
        const int64_t j0 = (int64_t)jc * ctx->chunk_cols, j1 = fconv_direct_min(j0 + ctx->chunk_cols, OW);
        const int64_t cb = fconv_direct_min(fconv_direct_max(pad, j0), j1);
        const int64_t ce = fconv_direct_min(fconv_direct_max(f->w + pad - f->kw + 1, cb), j1);
        if (cb < ce) {
            const float *xs[ROWS_PER_CALL], *ts[ROWS_PER_CALL];
            float *ys[FILTER_ROWS];
            ptrdiff_t step = 1;
            for (int64_t a = 0; a < f->kh; a++) ts[a] = kernel_row(f, ctx->w, a, &step);
            for (int64_t t = 0; t < nin; t++) xs[t] = ctx->x + ((top + t) * f->w + cb - pad) * C;
            for (int64_t r = 0; r < nr; r++) ys[r] = ctx->y + ((i0 + r) * OW + cb) * C;
            plan->kernels->direct_filter_rows(ys, (size_t)nr, (size_t)((ce - cb) * C), xs, ts, step,
                                              (size_t)f->kh, (size_t)f->kw, (size_t)C, ctx->stream);
        }
        done = 1;
    }
    for (int64_t i = i0; i < i1; i++) filter_row(ctx, i, (int64_t)jc, done);
}

void fconv_direct_filter(const fconv_plan *plan, const float *x, const float *w, float *y) {
    const fconv_filter2d_desc *f = &plan->filter;
    int64_t chunk_cols = fconv_direct_max(1, DIRECT_CHUNK / f->channels);
    struct filter_ctx ctx = {
        .plan = plan, .x = x, .w = w, .y = y,
        .chunk_cols = chunk_cols,
        .chunks = (plan->out_w + chunk_cols - 1) / chunk_cols,
        .stream = (double)plan->out_h * (double)plan->out_w * (double)f->channels * sizeof(float) >=
                          FILTER_STREAM_BYTES ? FCONV_ROWS_STREAM : 0,
        /* y[i][j] = sum_{a,b} kc[a][b] * xe[i + off_h - (KH-1) + a][j + off_w - (KW-1) + b] */
        .axis = {.taps = f->kw, .stride = 1, .pad = f->kw - 1 - plan->off_w, .dilation = 1,
                 .in_w = f->w, .unit = f->channels},
    };
    const int64_t rows = rows_per_task(f->kh);
    fconv_parallel_2d(plan->threads, (size_t)((plan->out_h + rows - 1) / rows),
                      (size_t)ctx.chunks, filter_task, &ctx);
}
