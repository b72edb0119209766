/*
 * direct-filter.c — filter2d (and conv1d, a one-row filter with a zero border) by direct
 * loops over the interleaved H x W x CH image. A task owns a fixed run of at most
 * DIRECT_CHUNK output floats of one output row; a kernel tap at column offset b is an axpy
 * over the whole interleaved row shifted by b*CH, so every channel count vectorizes.
 * Borders in place: zero borders skip what lies outside; other borders split the run into
 * the interior (every tap inside the row, plain loads) and the border columns (samples
 * fetched through fconv_border_index). Rows outside the image map to the row the border
 * rule names, or for zero/constant to nothing/V.
 */
#include "algo/direct.h"
#include "core/border.h"
#include "core/parallel.h"

/* Output floats per task: 16 KiB of outputs stay in L1 while the taps stream through. */
#define DIRECT_CHUNK 4096

struct filter_ctx {
    const fconv_plan *plan;
    const float *x, *w;
    float *y;
    int64_t chunk_cols; /* output columns per task */
    int64_t chunks;     /* tasks per output row */
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

static void filter_task(const void *vctx, size_t i, size_t jc) {
    const struct filter_ctx *ctx = vctx;
    const fconv_plan *plan = ctx->plan;
    const fconv_filter2d_desc *f = &plan->filter;
    const int64_t C = f->channels, OW = plan->out_w, pad = ctx->axis.pad;
    const int64_t j0 = (int64_t)jc * ctx->chunk_cols, j1 = fconv_direct_min(j0 + ctx->chunk_cols, OW);
    float *yrow = ctx->y + (int64_t)i * OW * C;

    for (int64_t e = j0 * C; e < j1 * C; e++) yrow[e] = 0.0f;
    /* Interior columns [ib, ie): for a zero border every column, as taps clip themselves. */
    int64_t ib = j0, ie = j1;
    if (f->border != FCONV_BORDER_ZERO) {
        ib = fconv_direct_min(fconv_direct_max(pad, j0), j1);
        ie = fconv_direct_min(fconv_direct_max(f->w + pad - f->kw + 1, ib), j1);
    }
    for (int64_t a = 0; a < f->kh; a++) {
        ptrdiff_t step;
        const float *taps = kernel_row(f, ctx->w, a, &step);
        int64_t row = fconv_border_index(f->border, (int64_t)i + plan->off_h - (f->kh - 1) + a, f->h);
        if (row < 0) { /* outside, zero or constant border: every tap reads V */
            if (f->border == FCONV_BORDER_CONSTANT) {
                float s = 0.0f;
                for (int64_t b = 0; b < f->kw; b++) s += taps[b * step] * f->border_value;
                for (int64_t e = j0 * C; e < j1 * C; e++) yrow[e] += s;
            }
            continue;
        }
        const float *xrow = ctx->x + row * f->w * C;
        fconv_direct_row(&ctx->axis, yrow, xrow, taps, step, ib, ie);
        if (f->border != FCONV_BORDER_ZERO) {
            border_columns(ctx, yrow, xrow, taps, step, j0, ib);
            border_columns(ctx, yrow, xrow, taps, step, ie, j1);
        }
    }
}

void fconv_direct_filter(const fconv_plan *plan, const float *x, const float *w, float *y) {
    const fconv_filter2d_desc *f = &plan->filter;
    int64_t chunk_cols = fconv_direct_max(1, DIRECT_CHUNK / f->channels);
    struct filter_ctx ctx = {
        .plan = plan, .x = x, .w = w, .y = y,
        .chunk_cols = chunk_cols,
        .chunks = (plan->out_w + chunk_cols - 1) / chunk_cols,
        /* y[i][j] = sum_{a,b} kc[a][b] * xe[i + off_h - (KH-1) + a][j + off_w - (KW-1) + b] */
        .axis = {.taps = f->kw, .stride = 1, .pad = f->kw - 1 - plan->off_w, .dilation = 1,
                 .in_w = f->w, .unit = f->channels},
    };
    fconv_parallel_2d(plan->threads, (size_t)plan->out_h, (size_t)ctx.chunks, filter_task, &ctx);
}
