/*
 * direct-conv2d.c — conv2d by direct loops over NCHW. A task owns a block of output channels
 * of one image and group and a block of output rows; for each output row it starts from the
 * bias and adds, input channel by input channel and kernel row by kernel row, the row
 * correlation of four output channels at a time (one input load serves all four, and the
 * input row is reused from L1 across the block).
 * Zero padding is skipped, never read: kernel rows above/below the input are left out and
 * each tap only touches the columns it reads inside the input (fconv_direct_row).
 */
#include "algo/direct.h"
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
        for (int64_t c = 0; c < cg; c++) {
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
