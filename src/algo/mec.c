/*
 * mec.c — Memory-Efficient Convolution (Cho & Brand, ICML 2017): lower the input by column
 * strips, one strip per output column q (the padded input rows × the S·C samples that
 * column's windows read), then one GEMM per output row on an overlapping view of the strips.
 * Rows of the windows overlap, so the lowered matrix is about R/stride_h times smaller than
 * im2col's. filter2d/conv1d go through filter-lowering.h (C = 1, K = 1 per channel).
 * Invariants: one lowered matrix at a time; work is split into fixed chunks (strips, output
 * rows, fconv_gemm's fixed tiles), so results do not depend on the thread count.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "algo/conv2d-pointwise.h"
#include "algo/filter-lowering.h"
#include "core/cost-model.h"
#include "core/internal.h"
#include "core/parallel.h"
#include "kernels/gemm/gemm.h"

/*
 * Layout of the lowered matrix L, for one image and one group:
 *
 *     L[q][h][c][s] = xpad[c][h][q·stride_w + s·dilation_w]     h in [0, HU)
 *
 * where xpad is the zero-padded input (row h is input row h - pad_top) and HU the padded
 * rows any output reads. Row h of strip q is a block of C·S floats, and the R rows of a
 * window are consecutive blocks, so for output row p (dilation_h = 1) the operand
 *
 *     B_p[q][r·C·S + c·S + s] = L[q][p·stride_h + r][c][s]
 *
 * is a Q x (R·C·S) matrix with the fixed leading dimension HU·C·S, starting at block
 * p·stride_h: every output row's GEMM is a view of L, Y[k][p][:] = W'[k][:] · B_p^T, with
 * the weights re-laid out once to W'[k][r][c][s]. (Cho & Brand lay L out as [q][h][s][c]
 * for NHWC input; c before s keeps each run of S input samples contiguous when reading NCHW.)
 * With dilation_h > 1 the window rows p·stride_h + r·dilation_h are not consecutive: then
 * each output row is R GEMMs of depth C·S accumulated in order r = 0..R-1.
 */
struct mec_shape {
    int64_t c, h, w;              /* channels of this group, input extent */
    int64_t r, s;                 /* kernel extent */
    int64_t sh, sw, pt, pl, dh, dw;
    int64_t p, q;                 /* output extent */
    int64_t hu;                   /* padded rows read: (P-1)·stride_h + (R-1)·dilation_h + 1 */
};

static struct mec_shape shape_of_conv2d(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    struct mec_shape m = {d->c / d->groups, d->h, d->w, d->r, d->s, d->stride_h, d->stride_w,
                          d->pad_top, d->pad_left, d->dilation_h, d->dilation_w,
                          plan->out_h, plan->out_w, 0};
    m.hu = (m.p - 1) * m.sh + (m.r - 1) * m.dh + 1;
    return m;
}

/* The filter as a 'valid' correlation over one padded channel (filter-lowering.h). */
static struct mec_shape shape_of_filter(const fconv_plan *plan) {
    return (struct mec_shape){1, fconv_filter_padded_h(plan), fconv_filter_padded_w(plan),
                              plan->filter.kh, plan->filter.kw, 1, 1, 0, 0, 1, 1,
                              plan->out_h, plan->out_w, fconv_filter_padded_h(plan)};
}

static struct mec_shape shape_of(const fconv_plan *plan) {
    return plan->kind == FCONV_KIND_CONV2D ? shape_of_conv2d(plan) : shape_of_filter(plan);
}

/* Do the weights need re-laying out? conv2d: [K][C][R][S] -> [K][R][C][S], the identity when
 * R or C/G is 1. filter: a convolution kernel is flipped into correlation orientation. */
static int needs_weight_transform(const fconv_plan *plan) {
    if (plan->kind != FCONV_KIND_CONV2D) return !plan->filter.correlate;
    struct mec_shape m = shape_of_conv2d(plan);
    return !fconv_conv2d_is_pointwise(plan) && m.r > 1 && m.c > 1;
}

/* Output channels per GEMM. Weights given at execute time are re-laid out one block at a
 * time, so their buffer stays small next to L (deep layers: K·C·R·S can exceed L and
 * im2col's matrix); weights given at plan time run through the very same blocks, so both
 * give identical bits. */
#define MEC_K_BLOCK 64

/* Rows [k0, k0 + count) of W'[k][r][c][s] = w[k][c][r][s] (conv2d). */
static void transform_conv2d_weights(const struct mec_shape *m, const float *w, int64_t k0,
                                     int64_t count, float *out) {
    for (int64_t k = k0; k < k0 + count; k++)
        for (int64_t r = 0; r < m->r; r++)
            for (int64_t c = 0; c < m->c; c++) {
                const float *restrict src = w + ((k * m->c + c) * m->r + r) * m->s;
                float *restrict dst = out + (((k - k0) * m->r + r) * m->c + c) * m->s;
                for (int64_t s = 0; s < m->s; s++) dst[s] = src[s];
            }
}

/* Bytes of the execute-time weight buffer: one K block (conv2d) or the flipped kernel. */
static size_t weight_buffer_bytes(const fconv_plan *plan) {
    if (plan->weights || !needs_weight_transform(plan)) return 0;
    if (plan->kind != FCONV_KIND_CONV2D)
        return (size_t)(plan->filter.kh * plan->filter.kw) * sizeof(float);
    struct mec_shape m = shape_of_conv2d(plan);
    int64_t kg = plan->conv2d.k / plan->conv2d.groups;
    int64_t rows = kg < MEC_K_BLOCK ? kg : MEC_K_BLOCK;
    return (size_t)(rows * m.c * m.r) * (size_t)m.s * sizeof(float);
}

/* ---- workspace layout -------------------------------------------------------------------- */

/* Byte offsets of the sub-buffers; total is the workspace size. */
struct mec_layout {
    size_t padded;   /* filter: the border-extended planar image, all channels */
    size_t lowered;  /* L for one (image, group) or one channel */
    size_t planar;   /* filter with several channels: one channel's output before interleaving */
    size_t weights;  /* re-laid-out weights (one K block), when not given at plan time */
    size_t total;
};

static struct mec_layout layout_of(const fconv_plan *plan) {
    struct mec_layout l = {0, 0, 0, 0, 0};
    if (fconv_conv2d_is_pointwise(plan)) { /* im2col's GEMM: one group's packed weights */
        l.total = fconv_conv2d_packed_group_bytes(plan, plan->conv2d.c / plan->conv2d.groups);
        return l;
    }
    struct mec_shape m = shape_of(plan);
    size_t at = 0;
    if (plan->kind != FCONV_KIND_CONV2D) at += fconv_round_up_64(fconv_filter_padded_bytes(plan));
    l.lowered = at;
    at += fconv_round_up_64((size_t)(m.q * m.hu) * (size_t)(m.c * m.s) * sizeof(float));
    l.planar = at;
    if (plan->kind != FCONV_KIND_CONV2D && plan->filter.channels > 1)
        at += fconv_round_up_64((size_t)(m.p * m.q) * sizeof(float));
    l.weights = at;
    at += fconv_round_up_64(weight_buffer_bytes(plan));
    l.total = at;
    return l;
}

/* ---- lowering ---------------------------------------------------------------------------- */

struct lower_ctx {
    struct mec_shape m;
    const float *x;  /* the image's first channel of this group: x[c][h][w] */
    float *lowered;  /* L[q][hu][c][s] */
};

/* Strips per lowering task: fixed, so the chunks never depend on the thread count. */
#define MEC_STRIPS_PER_TASK 8

/* Strips [q0, q0 + 8), row by row: the input rows of one h stay in L1 while they are spread
 * over the strips, and each strip is written front to back (8 sequential streams), which
 * matters when a row block is small (filters: C·S = KW floats). Zero outside the input. */
static void lower_strips_task(const void *vctx, size_t block) {
    const struct lower_ctx *lc = vctx;
    const struct mec_shape *m = &lc->m;
    int64_t cs = m->c * m->s, q0 = (int64_t)block * MEC_STRIPS_PER_TASK;
    int64_t q1 = q0 + MEC_STRIPS_PER_TASK < m->q ? q0 + MEC_STRIPS_PER_TASK : m->q;
    for (int64_t h = 0; h < m->hu; h++) {
        int64_t ih = h - m->pt;
        for (int64_t q = q0; q < q1; q++) {
            float *restrict dst = lc->lowered + (q * m->hu + h) * cs;
            if (ih < 0 || ih >= m->h) {
                memset(dst, 0, (size_t)cs * sizeof *dst);
                continue;
            }
            int64_t iw0 = q * m->sw - m->pl;
            const float *src = lc->x + ih * m->w; /* channel c's row: src + c·H·W */
            if (iw0 >= 0 && iw0 + (m->s - 1) * m->dw < m->w) { /* no column of padding */
                for (int64_t c = 0; c < m->c; c++, dst += m->s) {
                    const float *restrict row = src + c * m->h * m->w + iw0;
                    if (m->dw == 1) /* unit stride: a vectorized copy */
                        for (int64_t s = 0; s < m->s; s++) dst[s] = row[s];
                    else
                        for (int64_t s = 0; s < m->s; s++) dst[s] = row[s * m->dw];
                }
            } else {
                for (int64_t c = 0; c < m->c; c++, dst += m->s) {
                    const float *row = src + c * m->h * m->w;
                    for (int64_t s = 0; s < m->s; s++) {
                        int64_t iw = iw0 + s * m->dw;
                        dst[s] = iw >= 0 && iw < m->w ? row[iw] : 0.0f;
                    }
                }
            }
        }
    }
}

static void lower(int threads, const struct mec_shape *m, const float *x, float *lowered) {
    struct lower_ctx lc = {*m, x, lowered};
    size_t blocks = (size_t)((m->q + MEC_STRIPS_PER_TASK - 1) / MEC_STRIPS_PER_TASK);
    fconv_parallel_1d(threads, blocks, lower_strips_task, &lc);
}

/* ---- per-output-row GEMMs ---------------------------------------------------------------- */

/* Below this many output rows, rows run in sequence and each GEMM is split over the threads
 * instead (same tiles, same bits). */
#define MEC_MIN_PARALLEL_ROWS 4

struct rows_ctx {
    struct mec_shape m;
    const float *w;       /* this group's W'[kg][r][c][s] */
    const float *lowered; /* L */
    float *y;             /* this group's output block y[kg][p][q] */
    const float *bias;    /* this group's bias, or NULL */
    int64_t kg;
    int relu;
    int gemm_threads;
};

/* Output row p of every channel of the group: the GEMM(s) on the view of L, then bias/ReLU. */
static void output_row_task(const void *vctx, size_t row) {
    const struct rows_ctx *rc = vctx;
    const struct mec_shape *m = &rc->m;
    int64_t p = (int64_t)row, cs = m->c * m->s, pixels = m->p * m->q;
    size_t ldb = (size_t)(m->hu * cs), depth = (size_t)(m->r * cs);
    float *out = rc->y + p * m->q;
    if (m->dh == 1) {
        fconv_gemm(rc->gemm_threads, 0, 1, (size_t)rc->kg, (size_t)m->q, depth, rc->w, depth,
                   rc->lowered + p * m->sh * cs, ldb, 0, out, (size_t)pixels);
    } else {
        for (int64_t r = 0; r < m->r; r++)
            fconv_gemm(rc->gemm_threads, 0, 1, (size_t)rc->kg, (size_t)m->q, (size_t)cs,
                       rc->w + r * cs, depth, rc->lowered + (p * m->sh + r * m->dh) * cs, ldb,
                       r > 0, out, (size_t)pixels);
    }
    fconv_bias_relu_rows(out, (size_t)pixels, (size_t)rc->kg, m->q, rc->bias, rc->relu);
}

static void output_rows(int threads, struct rows_ctx *rc) {
    if (rc->m.p >= MEC_MIN_PARALLEL_ROWS) {
        rc->gemm_threads = 1;
        fconv_parallel_1d(threads, (size_t)rc->m.p, output_row_task, rc);
    } else {
        rc->gemm_threads = threads;
        for (int64_t p = 0; p < rc->m.p; p++) output_row_task(rc, (size_t)p);
    }
}

/* ---- conv2d ------------------------------------------------------------------------------ */

/* Per image and group: lower, then for each block of output channels (weights re-laid out
 * now, unless the plan did it) the per-row GEMMs. */
static void execute_conv2d(const fconv_plan *plan, const float *x, const float *w,
                           const float *bias, float *y, char *ws, const struct mec_layout *l) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    struct mec_shape m = shape_of_conv2d(plan);
    int64_t kg = d->k / d->groups, pixels = m.p * m.q, depth = m.c * m.r * m.s;
    int transform = needs_weight_transform(plan);
    const float *relaid = plan->algo_state; /* all of W', when the weights came at plan time */
    float *lowered = (float *)(ws + l->lowered), *block = (float *)(ws + l->weights);
    for (int64_t n = 0; n < d->n; n++)
        for (int64_t g = 0; g < d->groups; g++) {
            lower(plan->threads, &m, x + (n * d->c + g * m.c) * m.h * m.w, lowered);
            for (int64_t k0 = g * kg; k0 < (g + 1) * kg; k0 += MEC_K_BLOCK) {
                int64_t count = (g + 1) * kg - k0 < MEC_K_BLOCK ? (g + 1) * kg - k0 : MEC_K_BLOCK;
                const float *a = w + k0 * depth;
                if (transform && relaid) {
                    a = relaid + k0 * depth;
                } else if (transform) {
                    transform_conv2d_weights(&m, w, k0, count, block);
                    a = block;
                }
                struct rows_ctx rc = {m, a, lowered, y + (n * d->k + k0) * pixels,
                                      bias ? bias + k0 : NULL, count,
                                      d->activation == FCONV_ACTIVATION_RELU, 1};
                output_rows(plan->threads, &rc);
            }
        }
}

/* ---- filter2d / conv1d ------------------------------------------------------------------- */

/* Channel by channel: strips of the padded channel, one 1 x (KH·KW) GEMM per output row. */
static void execute_filter(const fconv_plan *plan, const float *x, const float *kc, float *y,
                           char *ws, const struct mec_layout *l) {
    const fconv_filter2d_desc *d = &plan->filter;
    struct mec_shape m = shape_of_filter(plan);
    float *padded = (float *)(ws + l->padded), *lowered = (float *)(ws + l->lowered);
    float *planar = (float *)(ws + l->planar);
    fconv_filter_pad_planar(plan, x, padded);
    for (int64_t ch = 0; ch < d->channels; ch++) {
        lower(plan->threads, &m, padded + ch * m.h * m.w, lowered);
        struct rows_ctx rc = {m, kc, lowered, d->channels == 1 ? y : planar, NULL, 1, 0, 1};
        output_rows(plan->threads, &rc);
        if (d->channels > 1) fconv_filter_interleave_channel(plan, planar, ch, y);
    }
}

/* ---- table entry ------------------------------------------------------------------------- */

static fconv_status mec_supports(const fconv_plan *plan, char *why, size_t why_len) {
    struct mec_shape m = shape_of(plan);
    int64_t cs, strip, elems, bytes, pixels;
    /* L must be addressable, and the GEMM (BLAS) takes int dimensions and strides. */
    if (fconv_mul_i64(m.c, m.s, &cs) || fconv_mul_i64(cs, m.hu, &strip) ||
        fconv_mul_i64(strip, m.q, &elems) || fconv_mul_i64(elems, 4, &bytes) ||
        fconv_mul_i64(m.p, m.q, &pixels) || (uint64_t)bytes > SIZE_MAX / 4 ||
        strip > INT_MAX || pixels > INT_MAX || cs * m.r > INT_MAX) {
        snprintf(why, why_len,
                 "mec's lowered matrix (%.3g strips of %.3g x %.3g) is too large for the GEMM",
                 (double)m.q, (double)m.hu, (double)m.c * (double)m.s);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

static size_t mec_workspace(const fconv_plan *plan) { return layout_of(plan).total; }

static fconv_status mec_prepare(fconv_plan *plan) {
    if (fconv_conv2d_is_pointwise(plan)) /* im2col's GEMM, with its packed weights */
        return fconv_conv2d_pack_weights(plan, plan->conv2d.c / plan->conv2d.groups);
    if (!plan->weights || !needs_weight_transform(plan)) return FCONV_OK;
    /* aligned like the packed weights above, so that one release() frees either */
    float *t = fconv_alloc_aligned((size_t)plan->w_elems * sizeof *t);
    if (!t)
        return fconv_fail(FCONV_ENOMEM, "mec: cannot allocate %lld re-laid-out weights",
                          (long long)plan->w_elems);
    if (plan->kind == FCONV_KIND_CONV2D) {
        struct mec_shape m = shape_of_conv2d(plan);
        transform_conv2d_weights(&m, plan->weights, 0, plan->conv2d.k, t);
    } else {
        fconv_filter_correlation_kernel(plan, plan->weights, t);
    }
    plan->algo_state = t;
    return FCONV_OK;
}

static void mec_release(fconv_plan *plan) {
    fconv_free_aligned(plan->algo_state);
    plan->algo_state = NULL;
}

/*
 * Seconds, fitted to CPU-time measurements on the 2-core Zen 5 VM (OpenBLAS 0.3.21 on one
 * thread; predicted within ~25% on ResNet layers, e.g. 64x56x56 with 64 3x3 filters: 3.8 ms
 * measured, filter2d 1024x1024 7x7: 31 ms). MEC's GEMMs are narrow (n = Q), which is where
 * it loses to im2col on late layers (Q = 7..14):
 *  - GEMM: fconv_gemm_seconds (kernels/gemm/gemm.h);
 *  - memory passes (lowering, padding, epilogue, interleave): fconv_stream_seconds.
 */

static double mec_cost(const fconv_plan *plan) {
    if (fconv_conv2d_is_pointwise(plan)) return fconv_conv2d_pointwise_seconds(plan); /* im2col's GEMM */
    double t = plan->threads;
    struct mec_shape m = shape_of(plan);
    int conv2d = plan->kind == FCONV_KIND_CONV2D;
    double kg = conv2d ? (double)(plan->conv2d.k / plan->conv2d.groups) : 1.0;
    double cs = (double)(m.c * m.s), depth = cs * (double)m.r, pixels = (double)(m.p * m.q);
    double blocks = conv2d ? (double)plan->conv2d.n * (double)plan->conv2d.groups
                           : (double)plan->filter.channels;
    double epilogue = conv2d && (plan->conv2d.has_bias || plan->conv2d.activation)
                          ? fconv_stream_seconds(8.0 * kg * pixels) / t : 0.0;
    /* Every C·S block of L also costs a cache line of its own: small blocks (filters: KW
     * floats) are written partially. */
    double lowering = fconv_stream_seconds((double)m.q * (double)m.hu * (4.0 * cs + 64.0)) / t;
    /* Rows in parallel, or (few rows) each GEMM's 512-column tiles. */
    double units = m.p >= MEC_MIN_PARALLEL_ROWS ? (double)m.p : ceil((double)m.q / 512);
    double busy = units < t ? units : t;
    /* K/G in blocks of 64 output channels: each block's GEMM streams B again. */
    double kblocks = ceil(kg / MEC_K_BLOCK), kb = kg / kblocks;
    double per_row = m.dh == 1 ? fconv_gemm_call_seconds(kb, (double)m.q, depth)
                               : (double)m.r * fconv_gemm_call_seconds(kb, (double)m.q, cs);
    double rows = kblocks * (double)m.p * per_row / busy;
    if (conv2d) { /* weights given at execute time: re-laid out (serially) per image */
        double relayout = weight_buffer_bytes(plan) ? fconv_stream_seconds(8.0 * kg * depth) : 0.0;
        return blocks * (lowering + rows + epilogue + relayout);
    }
    double pad = fconv_stream_seconds(8.0 * (double)(m.h * m.w)) / t;
    double interleave = plan->filter.channels > 1 ? fconv_stream_seconds(8.0 * pixels) / t : 0.0;
    return blocks * (pad + lowering + rows + interleave);
}

static void mec_execute(const fconv_plan *plan, const float *x, const float *w, const float *bias,
                        float *y, void *workspace) {
    if (fconv_conv2d_is_pointwise(plan)) {
        fconv_conv2d_pointwise(plan, x, w, plan->algo_state, bias, y, workspace);
        return;
    }
    struct mec_layout l = layout_of(plan);
    char *ws = workspace;
    if (plan->kind == FCONV_KIND_CONV2D) {
        execute_conv2d(plan, x, w, bias, y, ws, &l);
        return;
    }
    const float *kc = w; /* the correlation kernel: w itself, the plan's, or flipped now */
    if (needs_weight_transform(plan)) {
        if (plan->algo_state) { /* weights given at plan time: w == plan->weights */
            kc = plan->algo_state;
        } else {
            fconv_filter_correlation_kernel(plan, w, (float *)(ws + l.weights));
            kc = (const float *)(ws + l.weights);
        }
    }
    execute_filter(plan, x, kc, y, ws, &l);
}

const struct fconv_algorithm fconv_algorithm_mec = {
    .id = FCONV_ALGO_MEC,
    .name = "mec",
    .summary = "memory-efficient lowering by column strips (Cho & Brand 2017), one GEMM per "
               "output row on overlapping views",
    .serves = FCONV_SERVES_CONV2D | FCONV_SERVES_FILTER2D | FCONV_SERVES_CONV1D,
    .error_bound = 2e-6,
    .supports = mec_supports,
    .workspace = mec_workspace,
    .cost = mec_cost,
    .prepare = mec_prepare,
    .release = mec_release,
    .execute = mec_execute,
};
