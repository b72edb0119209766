/*
 * direct-conv2d.c — conv2d by direct loops over NCHW. A task owns a block of output channels
 * of one image and group and a block of output rows; for each output row it starts from the
 * bias and adds, input channel by input channel and kernel row by kernel row, the row
 * correlation of four output channels at a time (one input load serves all four, and the
 * input row is reused from L1 across the block).
 * Stride 1 runs instead through the dispatched SIMD kernel (core/dispatch.h) for the interior
 * columns and a plain per-output loop for the columns next to the padding.
 * Zero padding is skipped, never read: kernel rows above/below the input are left out and
 * each tap only touches the columns it reads inside the input (fconv_direct_rows).
 */
#include "algo/direct.h"
#include "core/dispatch.h"
#include "core/parallel.h"

/* Output channels per task: their rows (8 x Q floats) stay in L1 while one input row is
 * streamed through all of them. Output rows per task: enough work per task to amortize
 * the scheduling, small enough to share out a single layer between threads. Neither
 * depends on the thread count, and neither changes any output's summation order. */
#define DIRECT_K_BLOCK 8
#define DIRECT_P_BLOCK 4

struct conv2d_ctx {
    const fconv_plan *plan;
    const float *x, *w, *bias;
    float *y;
    int64_t k_blocks; /* per group */
    int64_t p_blocks;
    struct fconv_direct_axis axis;
};

/* Kernel rows ((c, r) pairs) per call of the SIMD kernel: bounds the pointer arrays. */
#define ROWS_PER_CALL 64

/* Output row p of channels [k0, k1), columns [qa, qb) (stride 1, every tap inside the input
 * row): y += sum over the input rows inside the image of all their taps, by the dispatched
 * kernel, four channels per call. y already holds the bias. */
static void interior_columns(const struct conv2d_ctx *ctx, int64_t n, int64_t g, int64_t p, int64_t k0,
                             int64_t k1, int64_t qa, int64_t qb) {
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t P = ctx->plan->out_h, Q = ctx->plan->out_w, cg = d->c / d->groups;
    const float *xg = ctx->x + (n * d->c + g * cg) * d->h * d->w;
    float *yn = ctx->y + n * d->k * P * Q;
    for (int64_t k = k0; k < k1; k += 4) {
        const size_t nk = (size_t)fconv_direct_min(4, k1 - k);
        float *ys[4];
        for (size_t t = 0; t < nk; t++) ys[t] = yn + ((k + (int64_t)t) * P + p) * Q + qa;
        const float *xs[ROWS_PER_CALL], *ts[ROWS_PER_CALL];
        size_t nrows = 0;
        for (int64_t c = 0; c < cg; c++) {
            for (int64_t r = 0; r < d->r; r++) {
                int64_t ih = p * d->stride_h - d->pad_top + r * d->dilation_h;
                if (ih < 0 || ih >= d->h) continue; /* a padding row: contributes zero */
                xs[nrows] = xg + (c * d->h + ih) * d->w + (qa - d->pad_left);
                ts[nrows] = ctx->w + ((k * cg + c) * d->r + r) * d->s;
                if (++nrows == ROWS_PER_CALL) {
                    ctx->plan->kernels->direct_rows(ys, nk, (size_t)(qb - qa), xs, ts, 1, cg * d->r * d->s,
                                                    nrows, (size_t)d->s, (size_t)d->dilation_w, 1);
                    nrows = 0;
                }
            }
        }
        if (nrows)
            ctx->plan->kernels->direct_rows(ys, nk, (size_t)(qb - qa), xs, ts, 1, cg * d->r * d->s, nrows,
                                            (size_t)d->s, (size_t)d->dilation_w, 1);
    }
}

/* Output row p of channels [k0, k1), columns [q0, q1) next to the padding (stride 1): one
 * output at a time over every tap that reads inside the input. These are a few columns per
 * row, so a plain loop beats a call per (c, r) row, whose fixed cost would dominate. */
static void edge_columns(const struct conv2d_ctx *ctx, int64_t n, int64_t g, int64_t p, int64_t k0,
                         int64_t k1, int64_t q0, int64_t q1) {
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t P = ctx->plan->out_h, Q = ctx->plan->out_w, cg = d->c / d->groups;
    const float *xg = ctx->x + (n * d->c + g * cg) * d->h * d->w;
    float *yn = ctx->y + n * d->k * P * Q;
    for (int64_t k = k0; k < k1; k++) {
        for (int64_t q = q0; q < q1; q++) {
            float acc = 0.0f;
            for (int64_t c = 0; c < cg; c++) {
                for (int64_t r = 0; r < d->r; r++) {
                    int64_t ih = p * d->stride_h - d->pad_top + r * d->dilation_h;
                    if (ih < 0 || ih >= d->h) continue;
                    const float *xrow = xg + (c * d->h + ih) * d->w;
                    const float *wr = ctx->w + ((k * cg + c) * d->r + r) * d->s;
                    for (int64_t s = 0; s < d->s; s++) {
                        int64_t iw = q - d->pad_left + s * d->dilation_w;
                        if (iw >= 0 && iw < d->w) acc += wr[s] * xrow[iw];
                    }
                }
            }
            yn[(k * P + p) * Q + q] += acc;
        }
    }
}

/* i = (n * groups + g) * k_blocks + kb; j = the row block. */
static void conv2d_task(const void *vctx, size_t i, size_t j) {
    const struct conv2d_ctx *ctx = vctx;
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t P = ctx->plan->out_h, Q = ctx->plan->out_w;
    const int64_t cg = d->c / d->groups, kg = d->k / d->groups;
    const int64_t kb = (int64_t)i % ctx->k_blocks, ng = (int64_t)i / ctx->k_blocks;
    const int64_t g = ng % d->groups, n = ng / d->groups;
    const int64_t k0 = g * kg + kb * DIRECT_K_BLOCK;
    const int64_t k1 = fconv_direct_min(k0 + DIRECT_K_BLOCK, (g + 1) * kg);
    const int64_t p0 = (int64_t)j * DIRECT_P_BLOCK, p1 = fconv_direct_min(p0 + DIRECT_P_BLOCK, P);
    const float *xg = ctx->x + (n * d->c + g * cg) * d->h * d->w;
    float *yn = ctx->y + n * d->k * P * Q;

    for (int64_t p = p0; p < p1; p++) {
        for (int64_t k = k0; k < k1; k++) {
            float *yrow = yn + (k * P + p) * Q;
            float b = ctx->bias ? ctx->bias[k] : 0.0f;
            for (int64_t q = 0; q < Q; q++) yrow[q] = b;
        }
        /* Stride 1: the interior columns [qa, qb), where every tap reads inside the row, go
         * through the dispatched SIMD kernel (four output channels x all (c, r, s) taps in
         * registers), the few columns next to the padding a plain loop; other strides
         * keep the row loops below. */
        if (ctx->axis.stride == 1) {
            int64_t qa = fconv_direct_min(d->pad_left, Q);
            int64_t qb = fconv_direct_min(fconv_direct_max(d->w + d->pad_left - (d->s - 1) * d->dilation_w, qa), Q);
            if (qa < qb) interior_columns(ctx, n, g, p, k0, k1, qa, qb);
            else qa = qb = Q; /* no interior: the edge loop takes every column */
            edge_columns(ctx, n, g, p, k0, k1, 0, qa);
            edge_columns(ctx, n, g, p, k0, k1, qb, Q);
        }
        for (int64_t c = 0; c < cg && ctx->axis.stride != 1; c++) {
            for (int64_t r = 0; r < d->r; r++) {
                int64_t ih = p * d->stride_h - d->pad_top + r * d->dilation_h;
                if (ih < 0 || ih >= d->h) continue; /* a padding row: contributes zero */
                const float *xrow = xg + (c * d->h + ih) * d->w;
                /* Four output channels per pass share each input load; the rest one by one. */
                for (int64_t k = k0; k < k1;) {
                    int nk = k + 4 <= k1 ? 4 : 1;
                    float *ys[4];
                    const float *taps[4];
                    for (int t = 0; t < nk; t++) {
                        ys[t] = yn + ((k + t) * P + p) * Q;
                        taps[t] = ctx->w + (((k + t) * cg + c) * d->r + r) * d->s;
                    }
                    fconv_direct_rows(&ctx->axis, nk, ys, xrow, taps, 1, 0, Q);
                    k += nk;
                }
            }
        }
        if (d->activation == FCONV_ACTIVATION_RELU) {
            for (int64_t k = k0; k < k1; k++) {
                float *yrow = yn + (k * P + p) * Q;
                for (int64_t q = 0; q < Q; q++) yrow[q] = yrow[q] < 0.0f ? 0.0f : yrow[q]; /* NaN stays */
            }
        }
    }
}

void fconv_direct_conv2d(const fconv_plan *plan, const float *x, const float *w, const float *bias,
                         float *y) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    int64_t kg = d->k / d->groups;
    struct conv2d_ctx ctx = {
        .plan = plan, .x = x, .w = w, .bias = d->has_bias ? bias : NULL, .y = y,
        .k_blocks = (kg + DIRECT_K_BLOCK - 1) / DIRECT_K_BLOCK,
        .p_blocks = (plan->out_h + DIRECT_P_BLOCK - 1) / DIRECT_P_BLOCK,
        .axis = {.taps = d->s, .stride = d->stride_w, .pad = d->pad_left,
                 .dilation = d->dilation_w, .in_w = d->w, .unit = 1},
    };
    fconv_parallel_2d(plan->threads, (size_t)(d->n * d->groups * ctx.k_blocks), (size_t)ctx.p_blocks,
                      conv2d_task, &ctx);
}
