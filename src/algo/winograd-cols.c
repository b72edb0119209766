/*
 * winograd-cols.c — conv2d with 3-tall kernels at stride 1 (any width, column dilation,
 * padding and groups) by Winograd F(4,3) down each image column: a kernel column's three taps
 * cost 6 multiplies per 4 outputs instead of 12, and the sum over input channels and kernel
 * columns runs in the transform domain, so each output is transformed back once.
 * winograd-rows' twin turned a quarter: there the lanes are tiles of 4 columns and the inverse
 * transform leaves the four phases of 16 tiles in 4 vectors that must be interleaved into
 * columns (8 two-source permutes, on the port that also multiplies, per 18 slots of the
 * output stage) and a row padded to whole vectors of tiles; here the lanes are 16
 * neighbouring columns and a tile is 4 output rows, so the inverse transform leaves each
 * output row's columns in order and a row is padded to whole vectors of columns only (224:
 * none).
 * A task owns an image, a group, a block of output channels and one tile of 4 output rows: it
 * transforms the 6 input rows the tile reads, once per (input channel, kernel column) pair with
 * the pair's column shift applied as it reads, into the thread's strip, then one product call
 * sums every pair for all the task's channels and writes the tile's rows, bias and ReLU
 * included (streamed where y outgrows the caches). Zero padding is never stored: rows above
 * and below the image and columns beside it read as zeros.
 * NHWC plans of one group and a multiple of 16 output channels run as they lie, the lanes
 * output channels instead of columns (the inverse transform then leaves each output pixel's
 * channels in order for the tile's 4 rows): the tile's 6 input rows, each a row of pixels'
 * channels, transformed as planes, and a product over pixels; other NHWC plans run on counted
 * NCHW copies (core/layout.c).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "algo/winograd.h"
#include "core/cost-model.h"
#include "core/dispatch.h"
#include "core/internal.h"
#include "core/parallel.h"
#include "core/scratch.h"

/* Output channels per task: the transformed rows are shared by them all; beyond 64 the tasks
 * of one image get too few to share out (winograd-rows measured the same). */
#define COLS_K_BLOCK 64
/* Floats of each thread's strip of transformed rows (256 KiB, in L2), the thread's scratch
 * (core/scratch.h) rather than on the stack, whose size a caller's threads choose. */
#define COLS_STRIP_FLOATS ((size_t)1 << 16)

struct cols_geometry {
    int64_t cg, kg, pairs, padded; /* pairs: cg * S; padded: out_w rounded up to 16 */
    int64_t tiles;                 /* tiles of 4 output rows: ceil(out_h / 4) */
    size_t strip_floats;           /* what one task's transformed rows take */
};

static struct cols_geometry geometry(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    struct cols_geometry g;
    g.cg = d->c / d->groups;
    g.kg = d->k / d->groups;
    g.pairs = g.cg * d->s;
    /* a whole number of 64-byte lines per row, and so of vectors whatever the ISA: every row
     * stays aligned */
    g.padded = (plan->out_w + 15) / 16 * 16;
    g.tiles = (plan->out_h + 3) / 4;
    g.strip_floats = (size_t)g.pairs * 6 * (size_t)g.padded;
    return g;
}

/* An NHWC plan that runs as it lies: one group, whole vectors of output channels, and a
 * tile's transformed input rows (the columns the outputs read, each pixel's channels) within
 * a plane. */
static int nhwc_native(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const double row = ((double)plan->out_w + (double)(d->s - 1) * (double)d->dilation_w) * (double)d->c;
    return d->layout == FCONV_LAYOUT_NHWC && d->groups == 1 && d->k % 16 == 0 &&
           ceil(row / 16.0) * 16.0 <= FCONV_WINO_COLS_PLANE;
}

static fconv_status cols_supports(const fconv_plan *plan, char *why, size_t why_len) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    if (d->r != 3) {
        snprintf(why, why_len, "winograd-cols needs a kernel 3 tall, got %lldx%lld", (long long)d->r, (long long)d->s);
        return FCONV_EUNSUPPORTED;
    }
    if (d->stride_h != 1 || d->dilation_h != 1 || d->stride_w != 1) {
        snprintf(why, why_len,
                 "winograd-cols needs stride 1 both ways and dilation 1 down the columns, got stride %lldx%lld "
                 "and dilation %lld",
                 (long long)d->stride_h, (long long)d->stride_w, (long long)d->dilation_h);
        return FCONV_EUNSUPPORTED;
    }
    const struct cols_geometry g = geometry(plan);
    if (nhwc_native(plan)) return FCONV_OK;
    /* in floating point: absurd sizes (a kernel millions of columns wide) must not wrap around */
    if ((double)g.cg * (double)d->s * 6.0 * (double)g.padded > (double)COLS_STRIP_FLOATS) {
        snprintf(why, why_len,
                 "winograd-cols: a task's transformed rows (%lld channels x %lld kernel columns x 6 x %lld "
                 "columns) outgrow its %zu KiB strip",
                 (long long)g.cg, (long long)d->s, (long long)g.padded, COLS_STRIP_FLOATS * sizeof(float) / 1024);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

/* Each group's output channels in pairs (the last one padded with zeros where a group has an
 * odd count), a pair's taps side by side (fconv_wino_cols_product_fn). */
static size_t weights_floats(const fconv_plan *plan) {
    const struct cols_geometry g = geometry(plan);
    if (nhwc_native(plan)) /* blocks of 32 output channels (fconv_wino_cols_product_nhwc_fn) */
        return (size_t)((plan->conv2d.k + 31) / 32 * 32) * (size_t)g.pairs * 6;
    return (size_t)plan->conv2d.groups * (size_t)((g.kg + 1) / 2) * (size_t)g.pairs * 12;
}

/* For output channel k = grp*kg + kl and pair p = c*S + s:
 * gw[((grp*ceil(kg/2) + kl/2)*pairs + p)*12 + (kl%2)*6 + j] = (G g)[j] for kernel column s of
 * filter (k, c): G of F(4,3) in float64 (winograd-transforms.c), rounded once. */
static void transform_weights(const fconv_plan *plan, const float *w, float *gw) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const struct cols_geometry g = geometry(plan);
    const struct fconv_wino_matrices *mat = fconv_wino_matrices_for(4);
    if (nhwc_native(plan)) { /* gw[(k/32)*32*pairs*6 + (s*C + c)*192 + j*32 + k%32] */
        for (int64_t k = 0; k < d->k; k++)
            for (int64_t p = 0; p < g.pairs; p++) {
                const int64_t s = p / g.cg, c = p % g.cg;
                const float *column = w + (k * g.cg + c) * 3 * d->s + s;
                float *to = gw + k / 32 * 32 * g.pairs * 6 + p * 192 + k % 32;
                for (int j = 0; j < 6; j++) {
                    double sum = 0.0;
                    for (int64_t r = 0; r < 3; r++) sum += mat->g[j * 3 + (int)r] * (double)column[r * d->s];
                    to[j * 32] = (float)sum;
                }
            }
        return;
    }
    const int64_t kpairs = (g.kg + 1) / 2;
    for (int64_t grp = 0; grp < d->groups; grp++)
        for (int64_t kl = 0; kl < 2 * kpairs; kl++)
            for (int64_t p = 0; p < g.pairs; p++) {
                float *to = gw + ((grp * kpairs + kl / 2) * g.pairs + p) * 12 + (kl % 2) * 6;
                /* filter (k, c), kernel column s: its 3 taps d->s apart */
                const float *column = w + ((grp * g.kg + kl) * g.cg + p / d->s) * 3 * d->s + p % d->s;
                for (int j = 0; j < 6; j++) {
                    double sum = 0.0;
                    if (kl < g.kg)
                        for (int64_t r = 0; r < 3; r++) sum += mat->g[j * 3 + (int)r] * (double)column[r * d->s];
                    to[j] = (float)sum;
                }
            }
}

/* Plan-time weights: transformed once into plan->algo_state. */
static fconv_status cols_prepare(fconv_plan *plan) {
    return fconv_wino_1d_prepare(plan, weights_floats(plan), transform_weights, "winograd-cols");
}

/* Execute-time weights are transformed into the workspace. */
static size_t cols_workspace(const fconv_plan *plan) {
    return plan->weights ? 0 : weights_floats(plan) * sizeof(float);
}

struct cols_ctx {
    const fconv_plan *plan;
    struct cols_geometry g;
    const float *x, *gw, *bias;
    float *y;
    int64_t k_blocks;
    int stream;
};

/* The 6 input rows the tile of output rows from p0 reads, row_floats apart from image (a
 * channel's plane, or an NHWC image), NULL for those outside it. */
static void tile_input_rows(const fconv_conv2d_desc *d, const float *image, int64_t row_floats, int64_t p0,
                            const float *rows[6]) {
    for (int64_t r = 0; r < 6; r++) {
        const int64_t ih = p0 + r - d->pad_top;
        rows[r] = ih >= 0 && ih < d->h ? image + ih * row_floats : NULL;
    }
}

/* i = (n * groups + g) * k_blocks + kb; j = the tile of output rows. */
static void cols_task(const void *vctx, size_t i, size_t j) {
    const struct cols_ctx *ctx = vctx;
    const fconv_plan *plan = ctx->plan;
    const fconv_conv2d_desc *d = &plan->conv2d;
    const struct cols_geometry *g = &ctx->g;
    const int64_t kb = (int64_t)i % ctx->k_blocks, ng = (int64_t)i / ctx->k_blocks;
    const int64_t grp = ng % d->groups, n = ng / d->groups;
    const int64_t k0 = grp * g->kg + kb * COLS_K_BLOCK;
    const int64_t k1 = k0 + COLS_K_BLOCK < (grp + 1) * g->kg ? k0 + COLS_K_BLOCK : (grp + 1) * g->kg;
    const int64_t p0 = (int64_t)j * 4, nrows = plan->out_h - p0 < 4 ? plan->out_h - p0 : 4;
    const size_t pair_floats = 6 * (size_t)g->padded;
    float *strip = fconv_thread_scratch(FCONV_SCRATCH_WINO_ROWS, COLS_STRIP_FLOATS);
    if (!strip) return; /* the execute reports it */
    for (int64_t c = 0; c < g->cg; c++) {
        const float *rows[6];
        tile_input_rows(d, ctx->x + ((n * d->c + grp * g->cg + c) * d->h) * d->w, d->w, p0, rows);
        for (int64_t s = 0; s < d->s; s++)
            plan->kernels->wino_cols_input(strip + (size_t)(c * d->s + s) * pair_floats, 0, rows,
                                           (ptrdiff_t)(s * d->dilation_w - d->pad_left), (size_t)d->w,
                                           (size_t)plan->out_w);
    }
    const size_t kpair0 = (size_t)(grp * ((g->kg + 1) / 2) + (k0 - grp * g->kg) / 2); /* k0 - grp*kg: even */
    plan->kernels->wino_cols_product(ctx->y + ((n * d->k + k0) * plan->out_h + p0) * plan->out_w,
                                     (size_t)(plan->out_h * plan->out_w), (size_t)plan->out_w, (size_t)nrows,
                                     (size_t)(k1 - k0), (size_t)plan->out_w, strip, pair_floats, (size_t)g->pairs,
                                     ctx->gw + kpair0 * (size_t)g->pairs * 12, (size_t)g->pairs * 12,
                                     ctx->bias ? ctx->bias + k0 : NULL, d->activation == FCONV_ACTIVATION_RELU,
                                     ctx->stream);
    if (ctx->stream) fconv_stream_fence();
}

/* NHWC as it lies: i = the image, j = the tile of output rows. */
static void cols_task_nhwc(const void *vctx, size_t i, size_t j) {
    const struct cols_ctx *ctx = vctx;
    const fconv_plan *plan = ctx->plan;
    const fconv_conv2d_desc *d = &plan->conv2d;
    const int64_t n = (int64_t)i, p0 = (int64_t)j * 4, nrows = plan->out_h - p0 < 4 ? plan->out_h - p0 : 4;
    float *strip = fconv_thread_scratch(FCONV_SCRATCH_WINO_ROWS, COLS_STRIP_FLOATS);
    if (!strip) return; /* the execute reports it */
    const float *rows[6];
    tile_input_rows(d, ctx->x + n * d->h * d->w * d->c, d->w * d->c, p0, rows);
    plan->kernels->wino_cols_input(strip, 1, rows, (ptrdiff_t)(-d->pad_left * d->c), (size_t)(d->w * d->c),
                                   (size_t)((plan->out_w + (d->s - 1) * d->dilation_w) * d->c));
    plan->kernels->wino_cols_product_nhwc(ctx->y + ((n * plan->out_h + p0) * plan->out_w) * d->k, (size_t)nrows,
                                          (size_t)plan->out_w, (size_t)d->k, strip, (size_t)d->c, (size_t)d->s,
                                          (size_t)(d->dilation_w * d->c), ctx->gw, ctx->bias,
                                          d->activation == FCONV_ACTIVATION_RELU, ctx->stream);
    if (ctx->stream) fconv_stream_fence();
}

static void cols_execute(const fconv_plan *plan, const float *x, const float *w, const float *bias, float *y,
                         void *workspace) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const float *gw = plan->algo_state;
    if (!gw) {
        transform_weights(plan, w, workspace);
        gw = workspace;
    }
    struct cols_ctx ctx = {
        .plan = plan, .g = geometry(plan), .x = x, .gw = gw, .bias = d->has_bias ? bias : NULL, .y = y,
        /* rows a whole number of lines long (y itself aligned, as fastconv.h asks for speed) */
        .stream = (double)plan->y_elems * sizeof(float) >= FCONV_STREAM_OUTPUT_BYTES &&
                  (nhwc_native(plan) || plan->out_w % 16 == 0) && (uintptr_t)y % 64 == 0,
    };
    if (nhwc_native(plan)) {
        fconv_parallel_2d_steal(plan->threads, (size_t)d->n, (size_t)ctx.g.tiles, cols_task_nhwc, &ctx);
        return;
    }
    ctx.k_blocks = (ctx.g.kg + COLS_K_BLOCK - 1) / COLS_K_BLOCK;
    fconv_parallel_2d_steal(plan->threads, (size_t)(d->n * d->groups * ctx.k_blocks), (size_t)ctx.g.tiles,
                            cols_task, &ctx);
}

/*
 * Seconds, over the plan's threads: the products' multiply-adds (6 per 4 output rows per
 * pair, padded columns and rows included) at the kernel's rate, the input transform per
 * transformed float, the inverse transform and store per output; an output that outgrows the
 * caches is streamed, bounded by the store bandwidth of both cores. The same for NHWC as it
 * lies (there the lanes are output channels: 3 -> 64 on 224^2 ran 0.38-0.48 ms against NCHW's
 * 0.41-0.53).
 */
static double cols_cost(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const struct cols_geometry g = geometry(plan);
    /* output channels in pairs: a group's odd last one takes a pair's time alone (its block
     * loads as much for half the multiply-adds), so 3 -> 1 runs at half the rate */
    const double tile_rows = (double)d->n * (double)d->groups * (double)((g.kg + 1) / 2 * 2) * (double)g.tiles;
    const double macs = tile_rows * (double)g.pairs * 6.0 * (double)g.padded;
    /* Every pair's transformed rows of a column block (pairs x 6 x 2 vectors) are read once
     * per two output channels, beside all the taps: where the block takes at most 16 KiB the
     * pair loop runs at the FMA ports' pace, up to L1's 48 KiB a third slower, past it from
     * L2. Fitted on the Emerald Rapids VM, 2 threads (measured / estimated on the scale the
     * other algorithms' estimates read there, ~0.7): 3 -> 64 on 224^2 (9 pairs) 80 G/s per
     * thread; 8 -> 16 on 224^2, 8 and 16 -> 32 on 112^2 (24-48 pairs) 54-58; 32 -> 32 on 112^2,
     * 32 -> 64 on 56^2 (96 pairs) 45-53. AVX2 (FCONV_ISA=avx2 there), whose one-channel-vector
     * step loads 6 inputs and broadcasts 12 taps for 12 multiply-adds: 3 -> 64 on 224^2 level
     * with direct and winograd-rows at batch 1 (1.19 ms against 1.15 and 1.17), 0.82-0.87x at
     * batch 8, so its rates sit below direct's. */
    const double block_bytes = (double)g.pairs * 6.0 * 32.0 * sizeof(float);
    const double rate = fconv_plan_isa(plan) >= FCONV_ISA_AVX512
                            ? (block_bytes <= 16.0 * 1024 ? 80e9 : block_bytes <= 48.0 * 1024 ? 55e9 : 45e9)
                        : fconv_plan_isa(plan) >= FCONV_ISA_AVX2
                            ? (block_bytes <= 16.0 * 1024 ? 20e9 : block_bytes <= 48.0 * 1024 ? 14e9 : 11e9)
                            : 3e9;
    const double tasks = (double)d->n * (double)d->groups * (double)((g.kg + COLS_K_BLOCK - 1) / COLS_K_BLOCK) *
                         (double)g.tiles;
    const double transformed = tasks * (double)g.strip_floats, stored = tile_rows * 4.0 * (double)g.padded;
    /* the input transform: 6 loads, ~12 operations and 6 stores per 6 vectors of transformed
     * floats (perf: 4% of 3 -> 64 on 224^2) */
    double t = macs / rate + transformed * 0.05e-9 + stored * 0.05e-9;
    if (!plan->weights) t += 3e-9 * (double)weights_floats(plan);
    return fconv_wino_1d_seconds(plan, t, tasks);
}

const struct fconv_algorithm fconv_algorithm_winograd_cols = {
    .id = FCONV_ALGO_WINOGRAD_COLS,
    .name = "winograd-cols",
    .summary = "Winograd F(4,3) down columns, kernel columns and channels summed transformed: kernels 3 tall, stride 1",
    .serves = FCONV_SERVES_CONV2D,
    .error_bound = 1e-5,
    .supports = cols_supports,
    .workspace = cols_workspace,
    .cost = cols_cost,
    .prepare = cols_prepare,
    .release = fconv_wino_1d_release,
    .execute = cols_execute,
    .runs_nhwc = nhwc_native,
};
