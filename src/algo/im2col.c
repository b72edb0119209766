/*
 * im2col.c — convolution as one GEMM over a lowered input: every (channel, r, s) becomes a
 * row of a column matrix whose P·Q columns hold the input samples each output reads (zero
 * outside the input), then W[K/G][C/G·R·S] × cols gives the output of one image and group.
 * filter2d/conv1d go through filter-lowering.h (padded planar image, K = 1 per channel).
 * Invariants: one column matrix at a time (images and groups run in sequence; the lowering
 * and the GEMM split their work into fixed chunks), so results do not depend on threads.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "algo/conv2d-pointwise.h"
#include "algo/filter-lowering.h"
#include "core/cost-model.h"
#include "core/dispatch.h"
#include "core/internal.h"
#include "core/parallel.h"
#include "kernels/gemm/gemm.h"

/* One lowered problem: a single image (one group of its channels) as conv2d sees it. */
struct im2col_shape {
    int64_t c, h, w;              /* channels of this group, input extent */
    int64_t r, s;                 /* kernel extent */
    int64_t sh, sw, pt, pl, dh, dw;
    int64_t p, q;                 /* output extent */
};

static struct im2col_shape shape_of_conv2d(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    return (struct im2col_shape){d->c / d->groups, d->h, d->w, d->r, d->s, d->stride_h,
                                 d->stride_w, d->pad_top, d->pad_left, d->dilation_h,
                                 d->dilation_w, plan->out_h, plan->out_w};
}

/* The filter as a 'valid' correlation over one padded channel (filter-lowering.h). */
static struct im2col_shape shape_of_filter(const fconv_plan *plan) {
    return (struct im2col_shape){1, fconv_filter_padded_h(plan), fconv_filter_padded_w(plan),
                                 plan->filter.kh, plan->filter.kw, 1, 1, 0, 0, 1, 1,
                                 plan->out_h, plan->out_w};
}

/* ---- workspace layout -------------------------------------------------------------------- */

/* Byte offsets of the sub-buffers; total is the workspace size. Sizes were checked for
 * overflow by supports() before anyone calls this. */
struct im2col_layout {
    size_t padded;  /* filter: the border-extended planar image, all channels */
    size_t cols;    /* the column matrix for one (image, group) or one channel */
    size_t planar;  /* filter with several channels: one channel's output before interleaving */
    size_t weights; /* conv2d: one group's packed weights, when not given at plan time */
    size_t total;
};

static struct im2col_layout layout_of(const fconv_plan *plan) {
    struct im2col_layout l = {0, 0, 0, 0, 0};
    if (plan->kind == FCONV_KIND_CONV2D) {
        struct im2col_shape sh = shape_of_conv2d(plan);
        if (!fconv_conv2d_is_pointwise(plan))
            l.weights = fconv_round_up_64((size_t)(sh.c * sh.r * sh.s) * (size_t)(sh.p * sh.q) * sizeof(float));
        l.total = l.weights + fconv_conv2d_packed_group_bytes(plan, sh.c * sh.r * sh.s);
        return l;
    }
    struct im2col_shape sh = shape_of_filter(plan);
    size_t pixels = (size_t)(plan->out_h * plan->out_w);
    l.cols = fconv_round_up_64(fconv_filter_padded_bytes(plan));
    l.planar = l.cols + fconv_round_up_64((size_t)(sh.r * sh.s) * pixels * sizeof(float));
    l.total = l.planar;
    if (plan->filter.channels > 1) l.total += fconv_round_up_64(pixels * sizeof(float));
    return l;
}

/* ---- lowering ---------------------------------------------------------------------------- */

struct lower_ctx {
    struct im2col_shape sh;
    const struct fconv_kernels *kern;
    const float *x;     /* the image's first channel of this group: x[c][h][w] */
    float *cols;        /* [c·r·s][p·q] */
    int reverse_rows;   /* store row t at rows-1-t: folds the convolution flip into the order */
};

/* First q whose sample q·sw + off lies at or right of column 0, and one past the last one
 * left of column w: the columns in [q0, q1) read the input, the others are zero padding. */
static void inside_columns(const struct im2col_shape *sh, int64_t off, int64_t *q0, int64_t *q1) {
    int64_t first = off >= 0 ? 0 : (-off + sh->sw - 1) / sh->sw;
    int64_t last = sh->w - 1 - off >= 0 ? (sh->w - 1 - off) / sh->sw + 1 : 0;
    if (first > sh->q) first = sh->q;
    if (last > sh->q) last = sh->q;
    if (last < first) last = first;
    *q0 = first;
    *q1 = last;
}

/* One row (c, r, s) of the column matrix: its P·Q samples, zero where the window is outside. */
static void lower_row_task(const void *vctx, size_t row) {
    const struct lower_ctx *lc = vctx;
    const struct im2col_shape *sh = &lc->sh;
    int64_t rows = sh->c * sh->r * sh->s;
    int64_t t = lc->reverse_rows ? rows - 1 - (int64_t)row : (int64_t)row;
    int64_t c = t / (sh->r * sh->s), r = t / sh->s % sh->r, s = t % sh->s;
    const float *xc = lc->x + c * sh->h * sh->w;
    float *restrict dst = lc->cols + (int64_t)row * sh->p * sh->q;
    int64_t off = s * sh->dw - sh->pl, q0, q1;
    inside_columns(sh, off, &q0, &q1);
    for (int64_t p = 0; p < sh->p; p++, dst += sh->q) {
        int64_t ih = p * sh->sh - sh->pt + r * sh->dh;
        if (ih < 0 || ih >= sh->h) {
            memset(dst, 0, (size_t)sh->q * sizeof *dst);
            continue;
        }
        const float *restrict src = xc + ih * sh->w; /* sample of column q: src[q·sw + off] */
        memset(dst, 0, (size_t)q0 * sizeof *dst);
        if (sh->sw == 1) {
            if (q1 > q0) memcpy(dst + q0, src + q0 + off, (size_t)(q1 - q0) * sizeof *dst);
        } else if (sh->sw == 2) {
            if (q1 > q0) lc->kern->im2col_copy_stride2(dst + q0, src + 2 * q0 + off, (size_t)(q1 - q0));
        } else {
            for (int64_t q = q0; q < q1; q++) dst[q] = src[q * sh->sw + off];
        }
        memset(dst + q1, 0, (size_t)(sh->q - q1) * sizeof *dst);
    }
}

static void lower(const fconv_plan *plan, const struct im2col_shape *sh, const float *x, float *cols,
                  int reverse_rows) {
    struct lower_ctx lc = {*sh, plan->kernels, x, cols, reverse_rows};
    fconv_parallel_1d(plan->threads, (size_t)(sh->c * sh->r * sh->s), lower_row_task, &lc);
}

/* ---- conv2d ------------------------------------------------------------------------------ */

static void execute_conv2d(const fconv_plan *plan, const float *x, const float *w,
                           const float *bias, float *y, void *workspace) {
    /* one group's packed weights, when they come at execute time (no workspace else) */
    float *scratch = workspace ? (float *)((char *)workspace + layout_of(plan).weights) : NULL;
    if (fconv_conv2d_is_pointwise(plan)) { /* the input is the column matrix */
        fconv_conv2d_pointwise(plan, x, w, plan->algo_state, bias, y, scratch);
        return;
    }
    const fconv_conv2d_desc *d = &plan->conv2d;
    struct im2col_shape sh = shape_of_conv2d(plan);
    const int64_t depth = sh.c * sh.r * sh.s;
    float *cols = workspace;
    for (int64_t g = 0; g < d->groups; g++) {
        const float *wg = fconv_conv2d_group_weights(plan, g, depth, w, plan->algo_state, scratch);
        for (int64_t n = 0; n < d->n; n++) {
            lower(plan, &sh, x + (n * d->c + g * sh.c) * sh.h * sh.w, cols, 0);
            fconv_conv2d_gemm_group(plan, n, g, cols, depth, sh.p * sh.q, wg, bias, y);
        }
    }
}

/* ---- filter2d / conv1d ------------------------------------------------------------------- */

/* Channel by channel: lower the padded channel, one 1 x (KH·KW) × (KH·KW) x (OH·OW)
 * product, then interleave. The kernel is used as given: for a true convolution the rows
 * are lowered in reverse order, which is the same as flipping the kernel. */
static void execute_filter(const fconv_plan *plan, const float *x, const float *w, float *y,
                           void *workspace) {
    const fconv_filter2d_desc *d = &plan->filter;
    struct im2col_shape sh = shape_of_filter(plan);
    struct im2col_layout l = layout_of(plan);
    char *ws = workspace;
    float *padded = (float *)(ws + l.padded), *cols = (float *)(ws + l.cols);
    float *planar = (float *)(ws + l.planar);
    int64_t depth = sh.r * sh.s, pixels = sh.p * sh.q;
    fconv_filter_pad_planar(plan, x, padded);
    for (int64_t ch = 0; ch < d->channels; ch++) {
        lower(plan, &sh, padded + ch * sh.h * sh.w, cols, !d->correlate);
        float *out = d->channels == 1 ? y : planar;
        fconv_gemm(plan->threads, 0, 0, 1, (size_t)pixels, (size_t)depth, w, (size_t)depth, cols,
                   (size_t)pixels, 0, out, (size_t)pixels);
        if (d->channels > 1) fconv_filter_interleave_channel(plan, planar, ch, y);
    }
}

/* ---- table entry ------------------------------------------------------------------------- */

static fconv_status im2col_supports(const fconv_plan *plan, char *why, size_t why_len) {
    struct im2col_shape sh =
        plan->kind == FCONV_KIND_CONV2D ? shape_of_conv2d(plan) : shape_of_filter(plan);
    int64_t depth, pixels, elems, bytes;
    /* The column matrix must be addressable, and the GEMM (BLAS) takes int dimensions. */
    if (fconv_mul_i64(sh.c * sh.r, sh.s, &depth) || fconv_mul_i64(sh.p, sh.q, &pixels) ||
        fconv_mul_i64(depth, pixels, &elems) || fconv_mul_i64(elems, 4, &bytes) ||
        (uint64_t)bytes > SIZE_MAX / 4 || depth > INT_MAX || pixels > INT_MAX) {
        snprintf(why, why_len,
                 "im2col's column matrix (%.3g rows x %.3g columns) is too large for the GEMM",
                 (double)sh.c * (double)sh.r * (double)sh.s, (double)sh.p * (double)sh.q);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

static size_t im2col_workspace(const fconv_plan *plan) { return layout_of(plan).total; }

/*
 * Seconds, fitted to CPU-time measurements on the 2-core Zen 5 VM (OpenBLAS 0.3.21 on one
 * thread; predicted within ~20% on ResNet layers, e.g. 64x56x56 with 64 3x3 filters: 3.3 ms
 * measured, filter2d 1024x1024 7x7: 45 ms):
 *  - GEMM: conv2d's with packed weights fconv_gemm_prepacked_seconds, filters'
 *    fconv_gemm_seconds (kernels/gemm/gemm.h);
 *  - memory passes (lowering, padding, interleave): fconv_stream_seconds.
 */

static double im2col_cost(const fconv_plan *plan) {
    double t = plan->threads;
    if (plan->kind == FCONV_KIND_CONV2D) {
        if (fconv_conv2d_is_pointwise(plan)) return fconv_conv2d_pointwise_seconds(plan);
        const fconv_conv2d_desc *d = &plan->conv2d;
        struct im2col_shape sh = shape_of_conv2d(plan);
        double depth = (double)(sh.c * sh.r * sh.s), pixels = (double)(sh.p * sh.q);
        double kg = (double)(d->k / d->groups), blocks = (double)d->n * (double)d->groups;
        double lowering = fconv_stream_seconds(4.0 * depth * pixels) / t;
        double gemm = fconv_gemm_prepacked_seconds(plan->kernels, kg, pixels, depth, plan->threads,
                                                   fconv_conv2d_gemm_streams(plan, sh.p * sh.q) ? FCONV_GEMM_C_STREAMED
                                                                                               : FCONV_GEMM_C_COPIED);
        return blocks * (lowering + gemm); /* bias and ReLU ride on the GEMM's stores */
    }
    struct im2col_shape sh = shape_of_filter(plan);
    double depth = (double)(sh.r * sh.s), pixels = (double)(sh.p * sh.q);
    double channels = (double)plan->filter.channels;
    double pad = fconv_stream_seconds(8.0 * (double)(sh.h * sh.w)) / t;
    double interleave = channels > 1 ? fconv_stream_seconds(8.0 * pixels) / t : 0.0;
    return channels * (pad + fconv_stream_seconds(4.0 * depth * pixels) / t + interleave +
                       fconv_gemm_seconds(1.0, pixels, depth, plan->threads));
}

/* Plan-time conv2d weights packed once for the GEMM (conv2d-pointwise.h). */
static fconv_status im2col_prepare(fconv_plan *plan) {
    if (plan->kind != FCONV_KIND_CONV2D) return FCONV_OK;
    struct im2col_shape sh = shape_of_conv2d(plan);
    return fconv_conv2d_pack_weights(plan, sh.c * sh.r * sh.s);
}

static void im2col_release(fconv_plan *plan) {
    fconv_free_aligned(plan->algo_state);
    plan->algo_state = NULL;
}

static void im2col_execute(const fconv_plan *plan, const float *x, const float *w,
                           const float *bias, float *y, void *workspace) {
    if (plan->kind == FCONV_KIND_CONV2D)
        execute_conv2d(plan, x, w, bias, y, workspace);
    else
        execute_filter(plan, x, w, y, workspace);
}

const struct fconv_algorithm fconv_algorithm_im2col = {
    .id = FCONV_ALGO_IM2COL,
    .name = "im2col",
    .summary = "lower the input to a (C/G·R·S) x (P·Q) column matrix, then one GEMM (BLAS)",
    .serves = FCONV_SERVES_CONV2D | FCONV_SERVES_FILTER2D | FCONV_SERVES_CONV1D,
    .error_bound = 2e-6,
    .supports = im2col_supports,
    .workspace = im2col_workspace,
    .cost = im2col_cost,
    .prepare = im2col_prepare,
    .release = im2col_release,
    .execute = im2col_execute,
};
