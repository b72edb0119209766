/*
 * indirect.c — indirect convolution (Dukhan 2019, XNNPACK) on NCHW without an
 * im2col copy. At plan time an indirection table gives, for every block of MR
 * output pixels and every tap (r, s), the offset of the input sample inside one
 * channel plane (-1: zero padding); the micro-kernel walks channels by adding
 * c*H*W, so one table serves every image, group and channel. Weights are packed
 * to [group][k-block][c][r][s][NR] (zero beyond K/G) so the innermost loop runs
 * over NR output channels with unit stride. Each output is a sum in the fixed
 * order (c, r, s) whatever thread computes its block: results do not depend on
 * the thread count. filter2d and conv1d run as the 'valid' conv2d of
 * filter-lowering.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/filter-lowering.h"
#include "core/internal.h"
#include "core/parallel.h"

/* Larger tables than this are declined: the table holds P*Q*R*S offsets, which
 * for a big filter (2048x2048 image, 15x15 kernel: 3.8 GB) is more memory than
 * the image itself. */
#define INDIRECT_MAX_TABLE_BYTES ((size_t)256 << 20)

/* Block kinds: whether the micro-kernel may skip the padding test, and whether
 * the MR pixels of every tap are MR consecutive floats (stride 1, one output
 * row, no padding). */
enum { BLOCK_PADDED = 0, BLOCK_INTERIOR = 1, BLOCK_CONTIGUOUS = 2 };

/* The problem as the conv2d the kernels run (a filter is its filter-lowering.h
 * form). */
struct indirect_geometry {
    int64_t n, c, h, w, k, r, s, groups, cg, kg, p, q;
    int64_t mr, nr;       /* pixels per block, output channels per block */
    int64_t blocks;       /* ceil(P*Q / MR) */
    int64_t kblocks;      /* ceil(K/G / NR) */
    size_t packed_floats; /* G * kblocks * C/G * R*S * NR */
};

struct indirect_state {
    struct indirect_geometry geo;
    int32_t *offsets;     /* [blocks][R*S][MR], relative to a channel plane; -1 = zero */
    unsigned char *kinds; /* [blocks] BLOCK_* */
    int32_t *tap_offsets; /* [R*S] r*dil_h*W + s*dil_w: an unpadded pixel's tap t
                             reads its tap-0 offset + tap_offsets[t] */
    float *packed;        /* packed plan-time weights, or NULL */
};

static void indirect_geometry(const fconv_plan *plan, struct indirect_geometry *g) {
    fconv_conv2d_desc d =
        plan->kind == FCONV_KIND_CONV2D ? plan->conv2d : fconv_filter_as_conv2d(plan);
    g->n = d.n;
    g->c = d.c;
    g->h = d.h;
    g->w = d.w;
    g->k = d.k;
    g->r = d.r;
    g->s = d.s;
    g->groups = d.groups;
    g->cg = d.c / d.groups;
    g->kg = d.k / d.groups;
    g->p = plan->out_h;
    g->q = plan->out_w;
    /* NR: a block of output channels the inner loop vectorizes over; one channel
     * (filters, depthwise) vectorizes over MR pixels instead, which are
     * contiguous in most blocks. */
    g->nr = g->kg > 1 ? 8 : 1;
    g->mr = g->nr == 8 ? 6 : 32;
    g->blocks = (g->p * g->q + g->mr - 1) / g->mr;
    g->kblocks = (g->kg + g->nr - 1) / g->nr;
    g->packed_floats = (size_t)g->groups * (size_t)g->kblocks * (size_t)g->cg * (size_t)g->r *
                       (size_t)g->s * (size_t)g->nr;
}

static size_t table_bytes(const struct indirect_geometry *g) {
    return (size_t)g->blocks * (size_t)(g->r * g->s) * (size_t)g->mr * sizeof(int32_t);
}

static fconv_status indirect_supports(const fconv_plan *plan, char *why, size_t why_len) {
    struct indirect_geometry g;
    indirect_geometry(plan, &g);
    if (g.h * g.w > INT32_MAX) {
        snprintf(why, why_len, "indirect: a %lldx%lld input plane does not fit 32-bit offsets",
                 (long long)g.h, (long long)g.w);
        return FCONV_EUNSUPPORTED;
    }
    /* blocks * R*S * MR < 2 * P*Q*R*S: checked in double so it cannot overflow.
     */
    double bytes = (double)g.blocks * (double)g.r * (double)g.s * (double)g.mr * 4.0;
    if (bytes > (double)INDIRECT_MAX_TABLE_BYTES) {
        snprintf(why, why_len,
                 "indirect: the indirection table (%lld pixels x %lldx%lld taps) "
                 "would take "
                 "%.0f MiB, over the %zu MiB limit",
                 (long long)(g.p * g.q), (long long)g.r, (long long)g.s, bytes / 1048576.0,
                 INDIRECT_MAX_TABLE_BYTES >> 20);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

/* Workspace: [padded planar image][planar output][packed weights], each 64-byte
 * aligned, each present only when needed (see docs/algorithms/indirect.md). */
struct indirect_layout {
    size_t padded, planar_out, packed, total;
};

static struct indirect_layout indirect_layout(const fconv_plan *plan) {
    struct indirect_geometry g;
    indirect_geometry(plan, &g);
    struct indirect_layout l = {0, 0, 0, 0};
    if (plan->kind != FCONV_KIND_CONV2D) {
        l.padded = fconv_round_up_64(fconv_filter_padded_bytes(plan));
        if (plan->filter.channels > 1)
            l.planar_out = fconv_round_up_64((size_t)plan->y_elems * sizeof(float));
    }
    if (!plan->weights)
        l.packed = fconv_round_up_64(g.packed_floats * sizeof(float));
    l.total = l.padded + l.planar_out + l.packed;
    return l;
}

static size_t indirect_workspace(const fconv_plan *plan) { return indirect_layout(plan).total; }

/* Measured on the 2-core Zen 5 VM (-O3, SSE2 auto-vectorized, thread CPU time; refitted
 * 2026-11-28 on 2 threads: 64 -> 64 and 16 -> 32 1x1 layers 1.0 and 0.70 ms, 1 -> 64 on
 * 224^2 1.04, 3 -> 64 1.71): about 0.16 ns per multiply-add computed (zero lanes of a
 * partial k-block included) by the 8x6 kernel and the contiguous 1x32 kernel, 0.86 ns by
 * the gathering 1x32 kernel (blocks that straddle an output row or touch padding;
 * estimated as MR/Q of them). */
static double indirect_cost(const fconv_plan *plan) {
    struct indirect_geometry g;
    indirect_geometry(plan, &g);
    double per_mac = 0.16e-9;
    if (g.nr == 1) {
        int64_t sw = plan->kind == FCONV_KIND_CONV2D ? plan->conv2d.stride_w : 1;
        double gathered = sw == 1 && g.q > g.mr ? (double)g.mr / (double)g.q : 1.0;
        per_mac = 0.16e-9 + 0.7e-9 * gathered;
    }
    double macs = (double)g.n * (double)g.groups * (double)g.kblocks * (double)g.nr *
                  (double)g.blocks * (double)g.mr * (double)g.cg * (double)(g.r * g.s);
    double lowering =
        plan->kind == FCONV_KIND_CONV2D
            ? 0.0
            : 1e-9 * (double)fconv_filter_padded_bytes(plan) / 4.0 + 1e-9 * (double)plan->y_elems;
    /* each output's tile bookkeeping and store: ~0.6 ns, which the multiply-adds hid until a
     * layer had few of them per output (1 -> 64 1x1 on 224^2 x 8 ran 9 ms, estimated 1.3 ms,
     * and AUTO took it over direct's 1.5) */
    return (per_mac * macs + 0.6e-9 * (double)plan->y_elems) / (double)plan->threads + lowering + 2e-6;
}

/* Pack w into [group][k-block][c][r][s][NR], zero for channels beyond K/G.
 * Filters: the kernel in correlation orientation (NR = 1, one channel). */
static void pack_weights(const fconv_plan *plan, const struct indirect_geometry *g, const float *w,
                         float *packed) {
    if (plan->kind != FCONV_KIND_CONV2D) {
        fconv_filter_correlation_kernel(plan, w, packed);
        return;
    }
    int64_t rs = g->r * g->s;
    float *dst = packed;
    for (int64_t grp = 0; grp < g->groups; grp++)
        for (int64_t kb = 0; kb < g->kblocks; kb++)
            for (int64_t c = 0; c < g->cg; c++)
                for (int64_t t = 0; t < rs; t++)
                    for (int64_t lane = 0; lane < g->nr; lane++, dst++) {
                        int64_t kk = kb * g->nr + lane;
                        *dst = kk < g->kg ? w[((grp * g->kg + kk) * g->cg + c) * rs + t] : 0.0f;
                    }
}

/* Fill offsets/kinds from the geometry (stride, padding and dilation live only
 * here). */
static void build_table(const fconv_plan *plan, const struct indirect_geometry *g, int32_t *offsets,
                        unsigned char *kinds, int32_t *tap_offsets) {
    int64_t sh = 1, sw = 1, pt = 0, pl = 0, dh = 1, dw = 1;
    if (plan->kind == FCONV_KIND_CONV2D) {
        const fconv_conv2d_desc *d = &plan->conv2d;
        sh = d->stride_h;
        sw = d->stride_w;
        pt = d->pad_top;
        pl = d->pad_left;
        dh = d->dilation_h;
        dw = d->dilation_w;
    }
    int64_t pixels = g->p * g->q, rs = g->r * g->s;
    for (int64_t r = 0; r < g->r; r++)
        for (int64_t s = 0; s < g->s; s++)
            tap_offsets[r * g->s + s] = (int32_t)(r * dh * g->w + s * dw);
    for (int64_t b = 0; b < g->blocks; b++) {
        int32_t *off = offsets + b * rs * g->mr;
        int padded = 0, contiguous = sw == 1 && (b + 1) * g->mr <= pixels &&
                                     (b * g->mr) / g->q == ((b + 1) * g->mr - 1) / g->q;
        for (int64_t m = 0; m < g->mr; m++) {
            int64_t pix = b * g->mr + m;
            for (int64_t r = 0; r < g->r; r++)
                for (int64_t s = 0; s < g->s; s++) {
                    int32_t o = -1;
                    if (pix < pixels) {
                        int64_t ih = pix / g->q * sh - pt + r * dh;
                        int64_t iw = pix % g->q * sw - pl + s * dw;
                        if (ih >= 0 && ih < g->h && iw >= 0 && iw < g->w)
                            o = (int32_t)(ih * g->w + iw);
                    }
                    if (o < 0)
                        padded = 1;
                    off[(r * g->s + s) * g->mr + m] = o;
                }
        }
        kinds[b] = padded ? BLOCK_PADDED : contiguous ? BLOCK_CONTIGUOUS : BLOCK_INTERIOR;
    }
}

static void indirect_release(fconv_plan *plan) {
    struct indirect_state *s = plan->algo_state;
    if (!s)
        return;
    free(s->offsets);
    free(s->kinds);
    free(s->tap_offsets);
    free(s->packed);
    free(s);
    plan->algo_state = NULL;
}

static fconv_status indirect_prepare(fconv_plan *plan) {
    struct indirect_state *s = calloc(1, sizeof *s);
    if (!s)
        return fconv_fail(FCONV_ENOMEM, "indirect: out of memory for the plan state");
    plan->algo_state = s;
    indirect_geometry(plan, &s->geo);
    s->offsets = malloc(table_bytes(&s->geo));
    s->kinds = malloc((size_t)s->geo.blocks);
    s->tap_offsets = malloc((size_t)(s->geo.r * s->geo.s) * sizeof(int32_t));
    if (plan->weights)
        s->packed = malloc(s->geo.packed_floats * sizeof(float));
    if (!s->offsets || !s->kinds || !s->tap_offsets || (plan->weights && !s->packed)) {
        size_t bytes = table_bytes(&s->geo); /* before the release frees s */
        indirect_release(plan);
        return fconv_fail(FCONV_ENOMEM, "indirect: out of memory for a %zu-byte indirection table",
                          bytes);
    }
    build_table(plan, &s->geo, s->offsets, s->kinds, s->tap_offsets);
    if (plan->weights)
        pack_weights(plan, &s->geo, plan->weights, s->packed);
    return FCONV_OK;
}

/* ---- micro-kernels
 * ----------------------------------------------------------------------- */

/*
 * acc[MR][NR] = sum over c < cg, t < R*S of x(c, t, m) * wp[c][t][lane], where
 * x(c, t, m) = plane_c[off[t][m]] (0 where off is -1) and plane_c = x + c*hw.
 * The padding test is a select after a load from a clamped offset, so it never
 * branches and a NaN in the input never leaks into a padded tap. MR and NR are
 * compile-time constants per instance; gathering the MR inputs first and then
 * looping lanes outside pixels is the form GCC keeps in registers (measured:
 * 0.11 ns per multiply-add for 8x6 with SSE2, 4x slower otherwise).
 */
/* Micro-kernels stay out of line (inlined into the task, GCC 12 spills the
 * accumulators: 2x slower) and without -O3's unroll-and-jam, which turns the
 * tap loop of the contiguous kernel into scalar code (measured 0.44 vs 0.08 ns
 * per multiply-add). */
#if defined(__GNUC__) && !defined(__clang__)
#define FCONV_NOINLINE __attribute__((noinline, optimize("no-loop-unroll-and-jam")))
#elif defined(__GNUC__)
#define FCONV_NOINLINE __attribute__((noinline))
#else
#define FCONV_NOINLINE
#endif

#define DEFINE_BLOCK_KERNEL(NR, MR)                                                                \
    FCONV_NOINLINE static void block_kernel_##NR##x##MR(                                           \
        const float *restrict x, int64_t hw, int64_t cg, int64_t taps,                             \
        const int32_t *restrict off, const float *restrict wp, float *restrict out) {              \
        float acc[MR][NR] = {{0}};                                                                 \
        for (int64_t c = 0; c < cg; c++) {                                                         \
            const float *restrict plane = x + c * hw;                                              \
            const float *restrict wc = wp + c * taps * NR;                                         \
            for (int64_t t = 0; t < taps; t++) {                                                   \
                const int32_t *restrict ot = off + t * MR;                                         \
                const float *restrict wt = wc + t * NR;                                            \
                float xs[MR];                                                                      \
                for (int m = 0; m < MR; m++) {                                                     \
                    int32_t o = ot[m];                                                             \
                    float xv = plane[o < 0 ? 0 : o];                                               \
                    xs[m] = o < 0 ? 0.0f : xv;                                                     \
                }                                                                                  \
                for (int l = 0; l < NR; l++) {                                                     \
                    float wv = wt[l];                                                              \
                    for (int m = 0; m < MR; m++)                                                   \
                        acc[m][l] += xs[m] * wv;                                                   \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        memcpy(out, acc, sizeof acc);                                                              \
    }

DEFINE_BLOCK_KERNEL(8, 6)
DEFINE_BLOCK_KERNEL(1, 32)

/* One output channel, MR = 32 pixels that are consecutive floats for every tap:
 * a unit-stride vector over pixels (filters and depthwise layers). Tap t starts
 * at off0 + tap_offsets[t], so the block's table row is not read at all (it
 * would cost as much bandwidth as x). Same summation order as the general
 * kernel, so a block gives the same result either way. */
FCONV_NOINLINE static void block_kernel_contiguous_1x32(const float *restrict x, int64_t hw,
                                                        int64_t cg, int64_t taps, int32_t off0,
                                                        const int32_t *restrict tap_offsets,
                                                        const float *restrict wp,
                                                        float *restrict out) {
    float acc[32] = {0};
    for (int64_t c = 0; c < cg; c++) {
        const float *restrict plane = x + c * hw + off0;
        for (int64_t t = 0; t < taps; t++) {
            const float *restrict src = plane + tap_offsets[t];
            float wv = wp[c * taps + t];
            for (int m = 0; m < 32; m++)
                acc[m] += src[m] * wv;
        }
    }
    memcpy(out, acc, sizeof acc);
}

/* ---- driver
 * ------------------------------------------------------------------------------
 */

struct indirect_ctx {
    const struct indirect_geometry *geo;
    const int32_t *offsets;
    const unsigned char *kinds;
    const int32_t *tap_offsets;
    const float *x;      /* conv2d input, or the padded planar image */
    const float *packed; /* packed weights */
    const float *bias;   /* conv2d bias or NULL */
    float *y;            /* [N][K][P][Q] (a filter: planar [CH][OH][OW]) */
    int relu;
};

/* Task (i, j): i = (image, group, k-block), j = pixel block. */
static void indirect_task(const void *vctx, size_t i, size_t j) {
    const struct indirect_ctx *c = vctx;
    const struct indirect_geometry *g = c->geo;
    int64_t kb = (int64_t)i % g->kblocks, rest = (int64_t)i / g->kblocks;
    int64_t grp = rest % g->groups, n = rest / g->groups;
    int64_t hw = g->h * g->w, taps = g->r * g->s, pixels = g->p * g->q;
    const float *x = c->x + (n * g->c + grp * g->cg) * hw;
    const int32_t *off = c->offsets + (int64_t)j * taps * g->mr;
    const float *wp = c->packed + (grp * g->kblocks + kb) * g->cg * taps * g->nr;
    float out[48]; /* [MR][NR], MR*NR <= 48 for every kernel */
    if (g->nr == 8)
        block_kernel_8x6(x, hw, g->cg, taps, off, wp, out);
    else if (c->kinds[j] == BLOCK_CONTIGUOUS)
        block_kernel_contiguous_1x32(x, hw, g->cg, taps, off[0], c->tap_offsets, wp, out);
    else
        block_kernel_1x32(x, hw, g->cg, taps, off, wp, out);

    int64_t pix0 = (int64_t)j * g->mr;
    int64_t mcount = pixels - pix0 < g->mr ? pixels - pix0 : g->mr;
    int64_t k0 = grp * g->kg + kb * g->nr;
    int64_t lanes = g->kg - kb * g->nr < g->nr ? g->kg - kb * g->nr : g->nr;
    for (int64_t l = 0; l < lanes; l++) {
        float *yk = c->y + (n * g->k + k0 + l) * pixels + pix0;
        float b = c->bias ? c->bias[k0 + l] : 0.0f;
        for (int64_t m = 0; m < mcount; m++) {
            float v = out[m * g->nr + l];
            if (c->bias)
                v += b;
            if (c->relu && v < 0.0f)
                v = 0.0f; /* NaN stays NaN */
            yk[m] = v;
        }
    }
}

static void indirect_execute(const fconv_plan *plan, const float *x, const float *w,
                             const float *bias, float *y, void *workspace) {
    const struct indirect_state *s = plan->algo_state;
    const struct indirect_geometry *g = &s->geo;
    struct indirect_layout l = indirect_layout(plan);
    char *ws = workspace;
    /* No workspace (every part is 0 bytes) comes as NULL, and NULL + 0 is undefined in C. */
    float *padded = (float *)ws, *planar_out = ws ? (float *)(ws + l.padded) : NULL;
    float *packed = ws ? (float *)(ws + l.padded + l.planar_out) : NULL;

    const float *packed_weights = s->packed;
    if (!plan->weights) {
        pack_weights(plan, g, w, packed);
        packed_weights = packed;
    }
    struct indirect_ctx c = {g,    s->offsets, s->kinds, s->tap_offsets, x, packed_weights,
                             NULL, y,          0};
    if (plan->kind == FCONV_KIND_CONV2D) {
        c.bias = plan->conv2d.has_bias ? bias : NULL;
        c.relu = plan->conv2d.activation == FCONV_ACTIVATION_RELU;
    } else {
        fconv_filter_pad_planar(plan, x, padded);
        c.x = padded;
        if (plan->filter.channels > 1)
            c.y = planar_out;
    }
    fconv_parallel_2d(plan->threads, (size_t)(g->n * g->groups * g->kblocks), (size_t)g->blocks,
                      indirect_task, &c);
    if (plan->kind != FCONV_KIND_CONV2D && plan->filter.channels > 1)
        fconv_filter_interleave_output(plan, planar_out, y);
}

const struct fconv_algorithm fconv_algorithm_indirect = {
    .id = FCONV_ALGO_INDIRECT,
    .name = "indirect",
    .summary = "indirect convolution: a plan-time table of input offsets, no "
               "im2col copy",
    .serves = FCONV_SERVES_CONV2D | FCONV_SERVES_FILTER2D | FCONV_SERVES_CONV1D,
    .error_bound = 5e-6,
    .supports = indirect_supports,
    .workspace = indirect_workspace,
    .cost = indirect_cost,
    .prepare = indirect_prepare,
    .release = indirect_release,
    .execute = indirect_execute,
};
