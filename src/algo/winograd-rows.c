/*
 * winograd-rows.c — conv2d with 3-wide kernels at stride 1 along the rows (any height, row
 * stride, row dilation, padding and groups) by Winograd F(4,3) along each image row: a
 * kernel row's three taps cost 6 multiplies per 4 outputs instead of 12, and the sum over
 * kernel rows and input channels runs in the transform domain, so each output is transformed
 * back once. Where the 2D Winograd sums over input channels only (3 for a network's first
 * layer, a product step too shallow to keep the FMAs busy), this sums over every (input
 * channel, kernel row) pair in registers (kernels/winograd/winograd-rows.c): the few-channel
 * layers direct runs at 27 multiply-adds per output (3 -> 64 on 224^2), here 13.5 and the
 * transforms.
 * A task owns an image, a group, a block of output channels and a block of output rows: it
 * gathers and transforms the input rows they read into the thread's strip once (each
 * channel's rows shared by all the task's output channels and rows), then per output row one
 * product call sums every pair for all the task's channels and writes the row, bias and ReLU
 * included (streamed where y outgrows the caches). Zero padding is never stored: kernel rows
 * above and below the input are left out of the sum; the gather zero-fills columns outside
 * the row.
 * NCHW only: NHWC plans run on counted NCHW copies (core/layout.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "algo/winograd.h"
#include "core/cost-model.h"
#include "core/dispatch.h"
#include "core/internal.h"
#include "core/parallel.h"
#include "core/scratch.h"

/* Output rows per task: each channel's input rows are transformed once for all of them
 * ((rows - 1) * stride + (R - 1) * dilation + 1 rows), enough work per task to spread the
 * scheduling, and a single image still splits between threads. */
#define ROWS_P_BLOCK 4
/* Output channels per task: the transformed rows are shared by them all; beyond 64 the
 * tasks of one image get too few to share out. */
#define ROWS_K_BLOCK 64
/* Floats of each thread's strip of transformed rows (256 KiB, in L2), the thread's scratch
 * (core/scratch.h) rather than on the stack, whose size a caller's threads choose. */
#define ROWS_STRIP_FLOATS ((size_t)1 << 16)

struct rows_geometry {
    int64_t cg, kg, tiles, padded; /* tiles: ceil(Q / 4); padded: rounded up to 16 */
    int64_t span;                  /* input rows a task's block of output rows reads, per channel */
    size_t strip_floats;           /* what one task's transformed rows take */
};

static struct rows_geometry geometry(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const int64_t p_rows = plan->out_h < ROWS_P_BLOCK ? plan->out_h : ROWS_P_BLOCK;
    struct rows_geometry g;
    g.cg = d->c / d->groups;
    g.kg = d->k / d->groups;
    g.tiles = (plan->out_w + 3) / 4;
    /* a whole number of 64-byte lines per row, and so of vectors whatever the ISA: every row
     * stays aligned */
    g.padded = (g.tiles + 15) / 16 * 16;
    g.span = (p_rows - 1) * d->stride_h + (d->r - 1) * d->dilation_h + 1;
    g.strip_floats = (size_t)g.cg * (size_t)g.span * 6 * (size_t)g.padded;
    return g;
}

static fconv_status rows_supports(const fconv_plan *plan, char *why, size_t why_len) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    if (d->s != 3) {
        snprintf(why, why_len, "winograd-rows needs a kernel 3 wide, got %lldx%lld", (long long)d->r, (long long)d->s);
        return FCONV_EUNSUPPORTED;
    }
    if (d->stride_w != 1 || d->dilation_w != 1) {
        snprintf(why, why_len, "winograd-rows needs stride and dilation 1 along the rows, got %lld and %lld",
                 (long long)d->stride_w, (long long)d->dilation_w);
        return FCONV_EUNSUPPORTED;
    }
    const struct rows_geometry g = geometry(plan);
    /* in floating point: absurd sizes (a kernel millions of rows tall) must not wrap around */
    if ((double)g.cg * (double)g.span * 6.0 * (double)g.padded > (double)ROWS_STRIP_FLOATS) {
        snprintf(why, why_len,
                 "winograd-rows: a task's transformed rows (%lld channels x %lld rows x 6 x %lld tiles) "
                 "outgrow its %zu KiB strip",
                 (long long)g.cg, (long long)g.span, (long long)g.padded, ROWS_STRIP_FLOATS * sizeof(float) / 1024);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

static size_t weights_floats(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    return (size_t)d->k * (size_t)(d->c / d->groups) * (size_t)d->r * 6;
}

/* gw[((k*cg + c)*R + r)*6 + j] = (G g)[j] for kernel row r of filter (k, c): G of F(4,3) in
 * float64 (winograd-transforms.c), rounded once. */
static void transform_weights(const fconv_plan *plan, const float *w, float *gw) {
    const struct fconv_wino_matrices *mat = fconv_wino_matrices_for(4);
    const size_t rows = weights_floats(plan) / 6;
    for (size_t i = 0; i < rows; i++)
        for (int j = 0; j < 6; j++) {
            double s = 0.0;
            for (int b = 0; b < 3; b++) s += mat->g[j * 3 + b] * (double)w[i * 3 + (size_t)b];
            gw[i * 6 + (size_t)j] = (float)s;
        }
}

/* Plan-time weights: transformed once into plan->algo_state. */
static fconv_status rows_prepare(fconv_plan *plan) {
    return fconv_wino_1d_prepare(plan, weights_floats(plan), transform_weights, "winograd-rows");
}

/* Execute-time weights are transformed into the workspace. */
static size_t rows_workspace(const fconv_plan *plan) {
    return plan->weights ? 0 : weights_floats(plan) * sizeof(float);
}

struct rows_ctx {
    const fconv_plan *plan;
    struct rows_geometry g;
    const float *x, *gw, *bias;
    float *y;
    int64_t k_blocks;
    int stream;
    /* the product kernel: its shuffled form where 512-bit loads are slow
     * (fconv_cpu_info.wide_loads_slow), chosen once per execute */
    fconv_wino_rows_product_fn product;
};

/* Output row p of channels [k0, k1) (the strip's first row: input row top): one product
 * call over the kernel rows whose input row lies inside the image, which are consecutive. */
static void output_row(const struct rows_ctx *ctx, const float *rows_strip, float *yn, int64_t p, int64_t top,
                       int64_t k0, int64_t k1) {
    const fconv_plan *plan = ctx->plan;
    const fconv_conv2d_desc *d = &plan->conv2d;
    const struct rows_geometry *g = &ctx->g;
    const int64_t row_floats = 6 * g->padded, first = p * d->stride_h - d->pad_top;
    int64_t r0 = 0, r1 = d->r; /* the kernel rows [r0, r1) that read inside the image */
    while (r0 < r1 && first + r0 * d->dilation_h < 0) r0++;
    while (r1 > r0 && first + (r1 - 1) * d->dilation_h >= d->h) r1--;
    ctx->product(yn + (k0 * plan->out_h + p) * plan->out_w, (size_t)(plan->out_h * plan->out_w), (size_t)(k1 - k0),
                 (size_t)plan->out_w, rows_strip + (first + r0 * d->dilation_h - top) * row_floats,
                 (size_t)g->padded, (ptrdiff_t)(g->span * row_floats), (ptrdiff_t)(d->dilation_h * row_floats),
                 (size_t)g->cg, (size_t)(r1 - r0), ctx->gw + (k0 * g->cg * d->r + r0) * 6,
                 (size_t)(g->cg * d->r * 6), (size_t)(d->r * 6), ctx->bias ? ctx->bias + k0 : NULL,
                 d->activation == FCONV_ACTIVATION_RELU, ctx->stream);
}

/* i = (n * groups + g) * k_blocks + kb; j = the block of output rows. */
static void rows_task(const void *vctx, size_t i, size_t j) {
    const struct rows_ctx *ctx = vctx;
    const fconv_plan *plan = ctx->plan;
    const fconv_conv2d_desc *d = &plan->conv2d;
    const struct rows_geometry *g = &ctx->g;
    const int64_t kb = (int64_t)i % ctx->k_blocks, ng = (int64_t)i / ctx->k_blocks;
    const int64_t grp = ng % d->groups, n = ng / d->groups;
    const int64_t k0 = grp * g->kg + kb * ROWS_K_BLOCK;
    const int64_t k1 = k0 + ROWS_K_BLOCK < (grp + 1) * g->kg ? k0 + ROWS_K_BLOCK : (grp + 1) * g->kg;
    const int64_t p0 = (int64_t)j * ROWS_P_BLOCK, p1 = p0 + ROWS_P_BLOCK < plan->out_h ? p0 + ROWS_P_BLOCK : plan->out_h;
    const int64_t top = p0 * d->stride_h - d->pad_top;
    const float *xg = ctx->x + (n * d->c + grp * g->cg) * d->h * d->w;
    const size_t row_floats = 6 * (size_t)g->padded;
    float *rows_strip = fconv_thread_scratch(FCONV_SCRATCH_WINO_ROWS, ROWS_STRIP_FLOATS);
    if (!rows_strip) return; /* the execute reports it */
    /* the block's input rows inside the image, gathered by tiles and transformed */
    for (int64_t c = 0; c < g->cg; c++)
        for (int64_t s = 0; s < g->span; s++) {
            const int64_t ih = top + s;
            if (ih < 0 || ih >= d->h) continue;
            float *u = rows_strip + (size_t)(c * g->span + s) * row_floats;
            plan->kernels->wino_gather(xg + (c * d->h + ih) * d->w, -d->pad_left, d->w, 4, (size_t)g->tiles, u,
                                       (size_t)g->padded);
            plan->kernels->wino_rows_input(u, (size_t)g->padded, (size_t)g->tiles);
        }
    float *yn = ctx->y + n * d->k * plan->out_h * plan->out_w;
    for (int64_t p = p0; p < p1; p++) output_row(ctx, rows_strip, yn, p, top, k0, k1);
    if (ctx->stream) fconv_stream_fence();
}

static void rows_execute(const fconv_plan *plan, const float *x, const float *w, const float *bias, float *y,
                         void *workspace) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const float *gw = plan->algo_state;
    if (!gw) {
        transform_weights(plan, w, workspace);
        gw = workspace;
    }
    struct rows_ctx ctx = {
        .plan = plan, .g = geometry(plan), .x = x, .gw = gw, .bias = d->has_bias ? bias : NULL, .y = y,
        /* rows a whole number of vectors long (y itself aligned, as fastconv.h asks for speed) */
        .stream = (double)plan->y_elems * sizeof(float) >= FCONV_STREAM_OUTPUT_BYTES &&
                  plan->out_w % 16 == 0 && (uintptr_t)y % 64 == 0,
        .product = plan->kernels->wino_rows_product_shuffled && fconv_cpu()->wide_loads_slow
                       ? plan->kernels->wino_rows_product_shuffled
                       : plan->kernels->wino_rows_product,
    };
    ctx.k_blocks = (ctx.g.kg + ROWS_K_BLOCK - 1) / ROWS_K_BLOCK;
    fconv_parallel_2d_steal(plan->threads, (size_t)(d->n * d->groups * ctx.k_blocks),
                            (size_t)((plan->out_h + ROWS_P_BLOCK - 1) / ROWS_P_BLOCK), rows_task, &ctx);
}

/*
 * Seconds, over the plan's threads: the products' multiply-adds (6 per 4 outputs per pair,
 * padded tiles included) at the kernel's rate (AVX-512 on the scale of direct's whole-row
 * rate, so their estimates compare as the measured times do: docs/algorithms/winograd.md),
 * the gather and input transform per transformed float, the inverse transform, interleave
 * and store per output; an output that outgrows the caches is streamed, bounded by the store
 * bandwidth of both cores.
 */
static double rows_cost(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const struct rows_geometry g = geometry(plan);
    const double pairs = (double)g.cg * (double)d->r, outputs = (double)d->n * (double)d->k * (double)plan->out_h;
    const double macs = outputs * pairs * 6.0 * (double)g.padded;
    /* The product loads one transformed vector per two multiply-adds, every pair's rows once
     * per two output channels: from L1 where one output row's pairs fit it (a first layer's
     * 14 KiB), from L2 past it, where the measured rate falls by a third (2 threads, Zen 5: 3
     * -> 64 on 224^2 ~53 G/s per thread; 64 -> 64 on 56^2, 72 KiB, ~42, and implicit-gemm
     * runs that layer in 0.57 ms against 0.79: at 65 G/s AUTO had taken winograd-rows there
     * under a no-workspace budget). */
    const int in_l1 = pairs * 6.0 * (double)g.padded * sizeof(float) <= 32.0 * 1024;
    const double rate = fconv_plan_isa(plan) >= FCONV_ISA_AVX512 ? (in_l1 ? 65e9 : 28e9)
                        : fconv_plan_isa(plan) >= FCONV_ISA_AVX2 ? (in_l1 ? 30e9 : 13e9)
                                                                 : 3e9;
    const double tasks = (double)d->n * (double)d->groups * (double)((g.kg + ROWS_K_BLOCK - 1) / ROWS_K_BLOCK) *
                         (double)((plan->out_h + ROWS_P_BLOCK - 1) / ROWS_P_BLOCK);
    const double transformed = tasks * (double)g.strip_floats, stored = outputs * (double)plan->out_w;
    double t = macs / rate + transformed * 0.3e-9 + stored * 0.1e-9;
    if (!plan->weights) t += 3e-9 * (double)weights_floats(plan);
    return fconv_wino_1d_seconds(plan, t, tasks);
}

const struct fconv_algorithm fconv_algorithm_winograd_rows = {
    .id = FCONV_ALGO_WINOGRAD_ROWS,
    .name = "winograd-rows",
    .summary = "Winograd F(4,3) along rows, kernel rows and channels summed transformed: kernels 3 wide, stride 1 along rows",
    .serves = FCONV_SERVES_CONV2D,
    .error_bound = 1e-5,
    .supports = rows_supports,
    .workspace = rows_workspace,
    .cost = rows_cost,
    .prepare = rows_prepare,
    .release = fconv_wino_1d_release,
    .execute = rows_execute,
};
