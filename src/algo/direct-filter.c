/*
 * direct-filter.c — filter2d (and conv1d, a one-row filter with a zero border) by direct
 * loops over the interleaved H x W x CH image. A task owns a fixed run of at most
 * DIRECT_CHUNK output floats of a band of output rows (4, or up to FILTER_BAND_ROWS where the
 * kernel slides); a kernel tap at column offset b is an axpy over the whole interleaved row
 * shifted by b*CH, so every channel count vectorizes. Borders in place: the run splits into
 * the interior (every tap inside the row: the dispatched SIMD kernel, all taps in registers)
 * and the edge columns (a strip of samples copied through fconv_border_index). Rows outside
 * the image map to the row the border rule names, or for zero/constant to nothing/V.
 */
#include <string.h>

#include "algo/direct.h"
#include "core/border.h"
#include "core/dispatch.h"
#include "core/parallel.h"
#include "core/scratch.h"

/* Outputs at least this large are written with non-temporal stores (no read-for-ownership
 * of lines nobody reads soon): 4096^2 3x3 measured 5.47 -> 5.24-5.43 ms on 2 threads with the
 * one-row kernel, while 2048^2 (16 MB, partly cache-resident when the caller reads it back)
 * measured 1.39 -> 1.59 ms. The multi-row kernel too (Zen 4 VM, 2 threads, AVX-512, 2
 * alternations: 4096^2 3x3 4.5 -> 3.4-4.1 ms, 5x5 6.4 -> 5.5-5.8, 7x7 10.4 -> 9.6, 3072^2 3x3
 * 2.0 -> 1.5, RGB 2048^2 5x5 4.5 -> 4.2; AVX2 4096^2 3x3 6.1 -> 5.9, 5x5 8.2 -> 8.0; 2048^2
 * and RGB 1024^2 5x5 ties). The Zen 5 VM had measured it 2x slower with AVX2 (4096^2 5x5
 * 19.6 vs 9.3 ms), which this VM does not reproduce. */
#define FILTER_STREAM_BYTES (32.0 * 1024 * 1024)
/* A sliding band's stores reach 32 rows a strip apart, each a read-for-ownership of its own
 * that plain stores wait for: from 8 MB its outputs stream too (Ice Lake, 2 threads, 41
 * alternations in one process: 2048^2 7x7 3.00 -> 2.47 ms streamed, 3.13 plain; RGB 1024^2
 * 5x5 1.39 -> 1.16, 1.48 plain; 2048^2 5x5 1.86 -> 1.66; 1024^2 5x5 (4 MB) plain 0.51,
 * streamed 0.47, 4x4 plain 0.37, streamed 0.43). */
#define FILTER_BAND_STREAM_BYTES (8.0 * 1024 * 1024)

/* Output floats per task: 16 KiB of outputs stay in L1 while the taps stream through. */
#define DIRECT_CHUNK 4096

struct filter_ctx {
    const fconv_plan *plan;
    const float *x, *w;
    float *y;
    int64_t chunk_cols; /* output columns per task */
    int64_t chunks;     /* tasks per output row */
    int64_t band;       /* output rows per task */
    int stream;         /* FCONV_ROWS_STREAM for the interior, or 0 */
    int64_t pad;        /* output column j reads input columns j - pad .. j - pad + kw - 1 */
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

/* Kernel rows per call of the SIMD kernel (taller kernels take several calls, each adding to
 * the previous): bounds the row-pointer arrays on the stack. */
#define ROWS_PER_CALL 64

/* Output rows per call of the multi-row kernel. Kernels at least FILTER_MIN_KH tall run them
 * through it, which loads each input row once for all of them (kh-fold fewer loads than one
 * row at a time): 5x5 and 7x7 gain 10-25% (2-core Zen 5 VM, 2048^2, one thread). 3x3 joined
 * them on the Zen 4 VM (2 threads, 3 alternations: AVX-512 4096^2 5.94 -> 5.03 ms, 2048^2
 * 1.34 -> 0.95, 1024^2 0.231 -> 0.188; AVX2 4096^2 6.6 -> 6.2, RGB 1024^2 0.84 -> 0.58),
 * though the Zen 5 VM had measured it ~5% slower at 2048^2 and 4096^2, where the one-row
 * kernel's non-temporal stores help; 2-row kernels stay on the one-row kernel (4096^2 2x2
 * ran 3.5 -> 4.0 ms without them). Kernels the ISA slides (fconv_direct_filter_rows_fn) take
 * bands of up to FILTER_BAND_ROWS rows a task (Ice Lake, 2 threads, 31-41 alternations in
 * one process against 4-row tasks: 512^2 5x5 0.171 -> 0.127 ms, 7x7 0.308 -> 0.216, 1024^2
 * 4x4 0.405 -> 0.369, 5x5 0.570 -> 0.508, 8x8 1.044 -> 0.939; AVX2 1024^2 5x5 1.00 -> 0.87);
 * fewer rows where that would leave under four tasks a thread. Either way the band's edge
 * columns are one strip. */
#define FILTER_ROWS 4
#define FILTER_BAND_ROWS 32
#define FILTER_MIN_KH 3
/* Floats of the strip (the thread's scratch, 32 KiB) that edge columns are computed from. */
#define EDGE_STRIP_FLOATS 8192

/* Sample (row, col) of the image seen through the border rule, channel ch. */
static float border_sample(const struct filter_ctx *ctx, int64_t row, int64_t col, int64_t ch) {
    const fconv_filter2d_desc *f = &ctx->plan->filter;
    row = fconv_border_index(f->border, row, f->h);
    col = row < 0 ? -1 : fconv_border_index(f->border, col, f->w);
    if (col >= 0) return ctx->x[(row * f->w + col) * f->channels + ch];
    return f->border == FCONV_BORDER_CONSTANT ? f->border_value : 0.0f;
}

/* Output rows [i0, i0 + nr), columns [j0, j1) where some tap leaves the image (the few
 * next to the borders). The samples they read, through the border rule, are copied into a
 * strip (the thread's scratch) that the SIMD kernel runs over as over an interior: a row-loop
 * call per kernel row and side cost more than these outputs (7x7 on 2048^2: 11% of the time),
 * and edge outputs sum in the interior's order. Rows too wide for the strip (huge kernels)
 * take one output at a time instead, taps in the same (a, b) order. */
static void edge_columns(const struct filter_ctx *ctx, int64_t i0, int64_t nr, int64_t j0, int64_t j1) {
    if (j0 >= j1 || nr <= 0) return;
    const fconv_plan *plan = ctx->plan;
    const fconv_filter2d_desc *f = &plan->filter;
    const int64_t C = f->channels, OW = plan->out_w, pad = ctx->pad;
    const int64_t cols = j1 - j0 + f->kw - 1;
    /* rows per strip: as many of the band's as the strip and the row arrays hold */
    const int64_t fit = fconv_direct_min(ROWS_PER_CALL, EDGE_STRIP_FLOATS / (cols * C)) - (f->kh - 1);
    if (fit >= 1 && nr > fit) {
        for (int64_t r = 0; r < nr; r += fit) edge_columns(ctx, i0 + r, fconv_direct_min(fit, nr - r), j0, j1);
        return;
    }
    const int64_t top = i0 + plan->off_h - (f->kh - 1); /* first input row read */
    const int64_t nin = f->kh + nr - 1;
    ptrdiff_t step = 1;
    if (fit >= 1) {
        float *strip = fconv_thread_scratch(FCONV_SCRATCH_EDGE, EDGE_STRIP_FLOATS);
        if (!strip) return; /* the execute reports it */
        const float *xs[ROWS_PER_CALL], *ts[ROWS_PER_CALL];
        float *ys[FILTER_BAND_ROWS];
        /* the border rule per row, the columns inside the image as one copy, the others one
         * by one (a sample at a time through border_sample took 10% of 512^2 7x7) */
        const float outside = f->border == FCONV_BORDER_CONSTANT ? f->border_value : 0.0f;
        const int64_t c0 = j0 - pad; /* the strip's first column in the image */
        const int64_t in_lo = fconv_direct_min(fconv_direct_max(-c0, 0), cols);
        const int64_t in_hi = fconv_direct_min(fconv_direct_max(f->w - c0, in_lo), cols);
        for (int64_t t = 0; t < nin; t++) {
            float *srow = strip + t * cols * C;
            const int64_t row = fconv_border_index(f->border, top + t, f->h);
            xs[t] = srow;
            if (row < 0) {
                for (int64_t e = 0; e < cols * C; e++) srow[e] = outside;
                continue;
            }
            if (in_hi > in_lo)
                memcpy(srow + in_lo * C, ctx->x + (row * f->w + c0 + in_lo) * C,
                       sizeof(float) * (size_t)((in_hi - in_lo) * C));
            for (int64_t c = 0; c < cols; c++) {
                if (c >= in_lo && c < in_hi) continue; /* copied */
                const int64_t col = fconv_border_index(f->border, c0 + c, f->w);
                for (int64_t ch = 0; ch < C; ch++) srow[c * C + ch] = col >= 0 ? ctx->x[(row * f->w + col) * C + ch] : outside;
            }
        }
        for (int64_t a = 0; a < f->kh; a++) ts[a] = kernel_row(f, ctx->w, a, &step);
        for (int64_t r = 0; r < nr; r++) ys[r] = ctx->y + ((i0 + r) * OW + j0) * C;
        plan->kernels->direct_filter_rows(ys, (size_t)nr, (size_t)((j1 - j0) * C), xs, ts, step, 1,
                                          (size_t)f->kh, (size_t)f->kw, (size_t)C, 0);
        return;
    }
    for (int64_t r = 0; r < nr; r++)
        for (int64_t j = j0; j < j1; j++)
            for (int64_t ch = 0; ch < C; ch++) {
                float acc = 0.0f;
                for (int64_t a = 0; a < f->kh; a++) {
                    const float *taps = kernel_row(f, ctx->w, a, &step);
                    for (int64_t b = 0; b < f->kw; b++)
                        acc += taps[b * step] * border_sample(ctx, top + r + a, j - pad + b, ch);
                }
                ctx->y[((i0 + r) * OW + j) * C + ch] = acc;
            }
}

/* Output row i, chunk jc, one row at a time (rows next to the top and bottom borders, and
 * kernels under FILTER_MIN_KH rows). */
static void filter_row(const struct filter_ctx *ctx, int64_t i, int64_t jc) {
    const fconv_plan *plan = ctx->plan;
    const fconv_filter2d_desc *f = &plan->filter;
    const int64_t C = f->channels, OW = plan->out_w, pad = ctx->pad;
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
    for (int64_t a = 0; a < f->kh && ib < ie; a++) {
        const float *taps = kernel_row(f, ctx->w, a, &step);
        int64_t row = fconv_border_index(f->border, i + plan->off_h - (f->kh - 1) + a, f->h);
        if (row < 0) {
            if (f->border == FCONV_BORDER_CONSTANT) {
                for (int64_t b = 0; b < f->kw; b++) constant_sum += taps[b * step] * f->border_value;
                have_constant = 1;
            }
            continue;
        }
        xs[nrows] = ctx->x + (row * f->w + ib - pad) * C;
        ts[nrows] = taps;
        if (++nrows == ROWS_PER_CALL || a == f->kh - 1) {
            float *const yk[1] = {yrow + ib * C};
            plan->kernels->direct_rows(yk, 1, (size_t)((ie - ib) * C), xs, ts, step, 0, nrows,
                                       (size_t)f->kw, (size_t)C, NULL,
                                       accumulate ? FCONV_ROWS_ACCUMULATE : ctx->stream);
            accumulate = 1;
            nrows = 0;
        }
    }
    if (nrows > 0) { /* the last kernel row was outside: flush the rest */
        float *const yk[1] = {yrow + ib * C};
        plan->kernels->direct_rows(yk, 1, (size_t)((ie - ib) * C), xs, ts, step, 0, nrows,
                                   (size_t)f->kw, (size_t)C, NULL,
                                   accumulate ? FCONV_ROWS_ACCUMULATE : ctx->stream);
        accumulate = 1;
    }
    if (!accumulate || have_constant) /* every kernel row outside, or some under a constant */
        for (int64_t e = ib * C; e < ie * C; e++) yrow[e] = accumulate ? yrow[e] + constant_sum : constant_sum;
    edge_columns(ctx, i, 1, j0, ib);
    edge_columns(ctx, i, 1, ie, j1);
}

/* Output rows [band*ib, +band), chunk jc. Rows whose kernel rows all lie inside the image
 * go through the SIMD kernel (multi-row, or row by row under FILTER_MIN_KH: the same bits per
 * output) and their edge columns through one strip; the rest (next to the top and bottom
 * borders) row by row. */
static void filter_task(const void *vctx, size_t ib, size_t jc) {
    const struct filter_ctx *ctx = vctx;
    const fconv_plan *plan = ctx->plan;
    const fconv_filter2d_desc *f = &plan->filter;
    const int64_t C = f->channels, OW = plan->out_w, pad = ctx->pad;
    const int64_t i0 = (int64_t)ib * ctx->band, i1 = fconv_direct_min(i0 + ctx->band, plan->out_h);
    /* output row i reads input rows i + off_h - (kh-1) .. i + off_h: [ia, ie) lie inside */
    int64_t ia = fconv_direct_min(fconv_direct_max(i0, f->kh - 1 - plan->off_h), i1);
    int64_t ie = fconv_direct_min(fconv_direct_max(f->h - plan->off_h, ia), i1);
    if (f->kh > ROWS_PER_CALL) ia = ie = i1;
    for (int64_t i = i0; i < ia; i++) filter_row(ctx, i, (int64_t)jc);
    const int64_t j0 = (int64_t)jc * ctx->chunk_cols, j1 = fconv_direct_min(j0 + ctx->chunk_cols, OW);
    const int64_t cb = fconv_direct_min(fconv_direct_max(pad, j0), j1);
    const int64_t ce = fconv_direct_min(fconv_direct_max(f->w + pad - f->kw + 1, cb), j1);
    /* rows per kernel call: the band, or fewer where kh + nr - 1 input rows pass the arrays */
    const int64_t per_call = fconv_direct_min(FILTER_BAND_ROWS, ROWS_PER_CALL - (f->kh - 1));
    for (int64_t i = ia; i < ie && cb < ce; i += per_call) {
        const int64_t nr = fconv_direct_min(per_call, ie - i), top = i + plan->off_h - (f->kh - 1);
        const float *xs[ROWS_PER_CALL], *ts[ROWS_PER_CALL];
        float *ys[FILTER_BAND_ROWS];
        ptrdiff_t step = 1;
        for (int64_t a = 0; a < f->kh; a++) ts[a] = kernel_row(f, ctx->w, a, &step);
        for (int64_t t = 0; t < f->kh + nr - 1; t++) xs[t] = ctx->x + ((top + t) * f->w + cb - pad) * C;
        for (int64_t r = 0; r < nr; r++) ys[r] = ctx->y + ((i + r) * OW + cb) * C;
        if (f->kh >= FILTER_MIN_KH)
            plan->kernels->direct_filter_rows(ys, (size_t)nr, (size_t)((ce - cb) * C), xs, ts, step, 1,
                                              (size_t)f->kh, (size_t)f->kw, (size_t)C, ctx->stream);
        else
            for (int64_t r = 0; r < nr; r++)
                plan->kernels->direct_filter_rows(ys + r, 1, (size_t)((ce - cb) * C), xs + r, ts, step, 1,
                                                  (size_t)f->kh, (size_t)f->kw, (size_t)C, ctx->stream);
    }
    edge_columns(ctx, ia, ie - ia, j0, cb);
    edge_columns(ctx, ia, ie - ia, ce, j1);
    for (int64_t i = ie; i < i1; i++) filter_row(ctx, i, (int64_t)jc);
    if (ctx->stream) fconv_stream_fence();
}

/* Output columns per task. */
static int64_t filter_chunk_cols(const fconv_plan *plan) {
    const fconv_filter2d_desc *f = &plan->filter;
    int64_t chunk_cols = fconv_direct_max(1, DIRECT_CHUNK / f->channels);
    if (f->kh == 1) {
        /* One kernel row (conv1d): no rows share loads, so a chunk only bounds the tasks;
         * four per thread, each ending in a store fence when streamed (10^8 x 3 on 2
         * threads: 4096-float chunks 19.0 ms, 65536 17.5, 1M 16.5). */
        int64_t per_task = (plan->out_w + 4 * (int64_t)plan->threads - 1) / (4 * (int64_t)plan->threads);
        chunk_cols = fconv_direct_max(chunk_cols, (per_task + 63) / 64 * 64);
    }
    return chunk_cols;
}

int64_t fconv_direct_filter_band_rows(const fconv_plan *plan) {
    const fconv_filter2d_desc *f = &plan->filter;
    /* only where split loads are slow (Intel; core/internal.h): what the band saves is the
     * four-row block's unaligned loads, which Zen 4 and 5 take at little cost (the block ran
     * 2048^2 7x7 at 91% of the FMA peak there, docs/algorithms/direct.md); not measured on
     * AMD */
    const int slides = fconv_cpu()->split_loads_slow && f->kh >= FCONV_FILTER_SLIDE_KH_MIN &&
                       f->kh <= (int64_t)plan->kernels->direct_filter_slide_kh_max &&
                       f->kh * f->kw <= FCONV_FILTER_SLIDE_TAPS_MAX;
    if (!slides) return FILTER_ROWS;
    /* bands of FILTER_BAND_ROWS, or shorter where that leaves under four tasks a thread */
    const int64_t chunk_cols = filter_chunk_cols(plan), chunks = (plan->out_w + chunk_cols - 1) / chunk_cols;
    return fconv_direct_max(FILTER_ROWS, fconv_direct_min(FILTER_BAND_ROWS,
                            plan->out_h * chunks / (4 * (int64_t)plan->threads)));
}

void fconv_direct_filter(const fconv_plan *plan, const float *x, const float *w, float *y) {
    const fconv_filter2d_desc *f = &plan->filter;
    const int64_t chunk_cols = filter_chunk_cols(plan);
    const int64_t chunks = (plan->out_w + chunk_cols - 1) / chunk_cols, band = fconv_direct_filter_band_rows(plan);
    const double out_bytes = (double)plan->out_h * (double)plan->out_w * (double)f->channels * sizeof(float);
    struct filter_ctx ctx = {
        .plan = plan, .x = x, .w = w, .y = y,
        .chunk_cols = chunk_cols,
        .chunks = chunks,
        .band = band,
        .stream = out_bytes >= (band > FILTER_ROWS ? FILTER_BAND_STREAM_BYTES : FILTER_STREAM_BYTES)
                      ? FCONV_ROWS_STREAM : 0,
        /* y[i][j] = sum_{a,b} kc[a][b] * xe[i + off_h - (KH-1) + a][j + off_w - (KW-1) + b] */
        .pad = f->kw - 1 - plan->off_w,
    };
    /* each thread's share of the tasks, then what the other has not begun (direct.md) */
    fconv_parallel_2d_steal(plan->threads, (size_t)((plan->out_h + band - 1) / band), (size_t)ctx.chunks,
                            filter_task, &ctx);
}
