/*
 * separable.c — filter2d with a rank-1 kernel (box, Gaussian, Sobel, any outer
 * product) as two 1D passes: kc = u v^T (correlation orientation), factored
 * once at plan time. Per four output rows: a vertical pass over their KH + 3
 * border-extended input rows into four row buffers (the image columns, then the
 * border columns copied by the border rule), then per row a horizontal pass of
 * KW taps into the output row. Every output row is computed by the same sequence of float
 * operations whatever thread computes it, so results do not depend on the
 * thread count. Both passes run on the dispatched SIMD kernel (core/dispatch.h).
 * Needs the kernel at plan time; conv2d and conv1d are declined.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "algo/filter-lowering.h"
#include "core/border.h"
#include "core/dispatch.h"
#include "core/internal.h"
#include "core/parallel.h"

/*
 * Accept a kernel as rank 1 when max|kc - u v^T| <= SEPARABLE_RANK1_TOL *
 * max|kc|. A float32 outer product k[a][b] = fl(col[a] * row[b]) carries 0.5
 * ulp per entry, and the factor built from the pivot row and column reproduces
 * each entry within about 2 ulp of the largest one; kernels computed entry by
 * entry (exp() of a Gaussian, then a scale) within about 4. 16 FLT_EPSILON
 * (1.9e-6 of the largest entry) accepts all of these and nothing that would
 * change an output by more than float32 rounding of the 2D sum does.
 */
#define SEPARABLE_RANK1_TOL (16.0 * FLT_EPSILON)

/* Plan-time state: the factors in correlation orientation, y = sum_a sum_b u[a]
 * v[b] P. */
struct separable_state {
    float *u;                  /* vertical taps, KH */
    float *v;                  /* horizontal taps, KW */
    float border_column_value; /* t at a column outside the image, constant border
                                */
    float *constant_row;       /* W*CH copies of the border value (0 for zero): what rows
                                  outside the image read under a zero/constant border */
};

/* Factor kc[KH][KW] (double precision) into u, v. Returns the residual max|kc -
 * u v^T| / max|kc| (0 for the all-zero kernel, NaN when kc holds a non-finite
 * value). */
static double factor_rank1(const float *kc, int64_t kh, int64_t kw, float *u, float *v) {
    int64_t pa = 0, pb = 0;
    double kmax = 0.0;
    for (int64_t a = 0; a < kh; a++)
        for (int64_t b = 0; b < kw; b++) {
            double m = fabs((double)kc[a * kw + b]);
            if (!isfinite(m))
                return NAN;
            if (m > kmax) {
                kmax = m;
                pa = a;
                pb = b;
            }
        }
    if (kmax == 0.0) { /* rank 0: the zero kernel is u = 0, v = 0 */
        for (int64_t a = 0; a < kh; a++)
            u[a] = 0.0f;
        for (int64_t b = 0; b < kw; b++)
            v[b] = 0.0f;
        return 0.0;
    }
    double pivot = kc[pa * kw + pb], scale = sqrt(kmax);
    /* u = pivot column / sqrt|pivot|, v = pivot row * sign(pivot) / sqrt|pivot|,
     * so that u[a] v[b] = kc[a][pb] kc[pa][b] / pivot, which is kc[a][b] for a
     * rank-1 kernel. */
    for (int64_t a = 0; a < kh; a++)
        u[a] = (float)((double)kc[a * kw + pb] / scale);
    for (int64_t b = 0; b < kw; b++)
        v[b] = (float)((double)kc[pa * kw + b] / scale * (pivot < 0 ? -1.0 : 1.0));
    double residual = 0.0;
    for (int64_t a = 0; a < kh; a++)
        for (int64_t b = 0; b < kw; b++) {
            double d = fabs((double)kc[a * kw + b] - (double)u[a] * (double)v[b]);
            if (d > residual)
                residual = d;
        }
    return residual / kmax;
}

static fconv_status separable_supports(const fconv_plan *plan, char *why, size_t why_len) {
    if (plan->kind == FCONV_KIND_CONV1D) {
        snprintf(why, why_len, "separable: conv1d is already one-dimensional");
        return FCONV_EUNSUPPORTED;
    }
    if (plan->kind != FCONV_KIND_FILTER2D) {
        snprintf(why, why_len, "separable serves filter2d only, not %s",
                 fconv_kind_name(plan->kind));
        return FCONV_EUNSUPPORTED;
    }
    if (!plan->weights) {
        snprintf(why, why_len, "separable needs the kernel at plan time to factor it");
        return FCONV_EUNSUPPORTED;
    }
    int64_t kh = plan->filter.kh, kw = plan->filter.kw, n = kh * kw;
    float *buf = malloc((size_t)(n + kh + kw) * sizeof *buf);
    if (!buf) {
        snprintf(why, why_len, "separable: out of memory factoring a %lldx%lld kernel",
                 (long long)kh, (long long)kw);
        return FCONV_ENOMEM; /* select.c passes this through for a named request */
    }
    fconv_filter_correlation_kernel(plan, plan->weights, buf);
    double residual = factor_rank1(buf, kh, kw, buf + n, buf + n + kh);
    free(buf);
    if (isnan(residual)) {
        snprintf(why, why_len, "separable: kernel has a non-finite entry");
        return FCONV_EUNSUPPORTED;
    }
    if (residual > SEPARABLE_RANK1_TOL) {
        snprintf(why, why_len, "separable: kernel is not rank 1 (residual %.1e of its max)",
                 residual);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

/* Output rows per vertical pass (the most fconv_direct_filter_rows_fn takes), and kernel taps
 * per call of it (longer kernels accumulate over several calls). */
#define SEPARABLE_ROWS 4
#define SEPARABLE_TAPS_PER_CALL 64
#define SEPARABLE_PIECE_ROWS (4 * SEPARABLE_ROWS)

/* SEPARABLE_ROWS row buffers per slot (see separable_execute). */
static int64_t separable_slots(const fconv_plan *plan) {
    return plan->threads < plan->out_h ? plan->threads : plan->out_h;
}

static size_t separable_row_bytes(const fconv_plan *plan) {
    return fconv_round_up_64((size_t)fconv_filter_padded_w(plan) * (size_t)plan->filter.channels *
                             sizeof(float));
}

static size_t separable_workspace(const fconv_plan *plan) {
    return (size_t)separable_slots(plan) * SEPARABLE_ROWS * separable_row_bytes(plan);
}

/* Fitted on the 2-core Zen 5 VM (2 threads, 512^2 to 2048^2, gray and RGB, 3x3 to 31x31
 * Gaussians; docs/algorithms/separable.md): per thread, 0.025 ns per tap of the two passes
 * with AVX-512 (0.045 AVX2, 0.3 scalar) and 0.2 ns per output element (0.7 scalar): writing y,
 * the row buffers and their borders. Where the image and its output outgrow the last-level
 * cache, at least the time to move 12 bytes per output (a read, a write and its read for
 * ownership) at 40 GB/s. Then x1.3: direct's and fft-cols' estimates, fitted on the Zen 4 VM,
 * read 1.1-1.6x their Zen 5 times, and AUTO compares estimates, not times (exact, this one
 * took 1024^2 3x3 from direct, 0.171 against 0.199 ms). */
static double separable_cost(const fconv_plan *plan) {
    const fconv_filter2d_desc *d = &plan->filter;
    const fconv_isa isa = fconv_plan_isa(plan);
    const double per_tap = isa >= FCONV_ISA_AVX512 ? 0.025e-9 : isa >= FCONV_ISA_AVX2 ? 0.045e-9 : 0.3e-9;
    const double per_output = isa >= FCONV_ISA_AVX2 ? 0.2e-9 : 0.7e-9;
    double rows = (double)plan->out_h, ch = (double)d->channels;
    double taps = rows * ch * ((double)d->kh * (double)d->w + (double)d->kw * (double)plan->out_w);
    double outputs = rows * ch * (double)fconv_filter_padded_w(plan);
    double compute = (per_tap * taps + per_output * outputs) / (double)separable_slots(plan);
    double bytes = ((double)d->h * (double)d->w * ch + rows * (double)plan->out_w * ch) * sizeof(float);
    double memory = bytes > FCONV_LLC_BYTES ? 12.0 * rows * (double)plan->out_w * ch / 40e9 : 0.0;
    return 1.3 * (compute > memory ? compute : memory) + 2e-6;
}

static void separable_release(fconv_plan *plan) {
    struct separable_state *s = plan->algo_state;
    if (!s)
        return;
    free(s->u);
    free(s->v);
    free(s->constant_row);
    free(s);
    plan->algo_state = NULL;
}

static fconv_status separable_prepare(fconv_plan *plan) {
    int64_t kh = plan->filter.kh, kw = plan->filter.kw;
    struct separable_state *s = calloc(1, sizeof *s);
    float *kc = malloc((size_t)(kh * kw) * sizeof *kc);
    if (s)
        s->u = malloc((size_t)kh * sizeof *s->u);
    if (s)
        s->v = malloc((size_t)kw * sizeof *s->v);
    size_t row_elems = (size_t)plan->filter.w * (size_t)plan->filter.channels;
    if (s)
        s->constant_row = malloc(row_elems * sizeof *s->constant_row);
    if (!s || !kc || !s->u || !s->v || !s->constant_row) {
        free(kc);
        plan->algo_state = s;
        separable_release(plan);
        return fconv_fail(FCONV_ENOMEM, "separable: out of memory for the kernel factors");
    }
    fconv_filter_correlation_kernel(plan, plan->weights, kc);
    factor_rank1(kc, kh, kw, s->u, s->v);
    free(kc);
    /* Outside the image (constant border) every row holds V: t = sum_a u[a] V,
     * summed in the order the vertical pass uses. */
    float value = plan->filter.border == FCONV_BORDER_CONSTANT ? plan->filter.border_value : 0.0f;
    float t = 0.0f;
    for (int64_t a = 0; a < kh; a++)
        t += s->u[a] * value;
    s->border_column_value = t;
    for (size_t e = 0; e < row_elems; e++)
        s->constant_row[e] = value;
    plan->algo_state = s;
    return FCONV_OK;
}

struct separable_ctx {
    const fconv_plan *plan;
    const struct separable_state *state;
    const float *x;
    const float *constant_row; /* W*CH copies of the constant border, for rows outside */
    float *y;
    char *workspace;
    size_t row_bytes;
    int64_t slots;
};

/* Row `a` of the kernel window for output row i: the input row it reads, or the
 * row of the border value outside the image under a zero/constant border. */
static const float *input_row(const struct separable_ctx *c, int64_t i, int64_t a) {
    const fconv_filter2d_desc *d = &c->plan->filter;
    int64_t row = fconv_border_index(d->border, i + a + c->plan->off_h - (d->kh - 1), d->h);
    if (row >= 0)
        return c->x + row * d->w * d->channels;
    return c->constant_row;
}

/* Output rows i .. i+nr-1 (nr <= SEPARABLE_ROWS): the vertical pass of all of them at once
 * into their row buffers t[r], then each one's border columns and horizontal pass. */
static void separable_rows(const struct separable_ctx *c, int64_t i, int64_t nr, float *const *t) {
    const fconv_plan *plan = c->plan;
    const fconv_filter2d_desc *d = &plan->filter;
    const struct separable_state *s = c->state;
    int64_t ch = d->channels, pw = fconv_filter_padded_w(plan);
    /* The padded window's columns are col0 + j, j < PW; the image [0, W) always
     * lies inside it (full: col0 = 1-KW, same: col0 = -(KW/2) and PW >= W + KW/2,
     * valid: col0 = 0). */
    int64_t left = (d->kw - 1) - plan->off_w;
    float *timg[SEPARABLE_ROWS];
    for (int64_t r = 0; r < nr; r++)
        timg[r] = t[r] + left * ch;

    /* Vertical pass into the image columns of t: the dispatched filter kernel with a one-column
     * kernel of kh taps, nr output rows sharing each input row's loads (row by row, each input
     * row came from L2 once per output row it feeds: 1024^2 15x15 ran at a sixth of the FMA
     * peak), up to 64 taps per call. */
    for (int64_t a = 0; a < d->kh; a += SEPARABLE_TAPS_PER_CALL) {
        const float *rows[SEPARABLE_TAPS_PER_CALL + SEPARABLE_ROWS - 1], *taps[SEPARABLE_TAPS_PER_CALL];
        int64_t nt = d->kh - a < SEPARABLE_TAPS_PER_CALL ? d->kh - a : SEPARABLE_TAPS_PER_CALL;
        for (int64_t q = 0; q < nt; q++)
            taps[q] = &s->u[a + q];
        for (int64_t q = 0; q < nt + nr - 1; q++)
            rows[q] = input_row(c, i, a + q);
        plan->kernels->direct_filter_rows(timg, (size_t)nr, (size_t)(d->w * ch), rows, taps, 1, 1, (size_t)nt, 1, 1,
                                          a > 0 ? FCONV_ROWS_ACCUMULATE : 0);
    }
    int64_t m = plan->out_w * ch;
    for (int64_t r = 0; r < nr; r++) {
        /* Border columns: the vertical sums of the columns they copy (numpy.pad's rule). */
        for (int64_t j = 0; j < pw; j++) {
            if (j == left)
                j += d->w;
            if (j >= pw)
                break;
            int64_t col = fconv_border_index(d->border, j - left, d->w);
            for (int64_t k = 0; k < ch; k++)
                t[r][j * ch + k] = col < 0 ? s->border_column_value : timg[r][col * ch + k];
        }
        /* Horizontal pass: y row = sum_b v[b] * t shifted by b pixels (b*CH floats). */
        const float *rows[1] = {t[r]}, *taps[1] = {s->v};
        float *const dst[1] = {c->y + (i + r) * m};
        plan->kernels->direct_rows(dst, 1, (size_t)m, rows, taps, 1, 0, 1, (size_t)d->kw, (size_t)ch, NULL, 0);
    }
}

/* Output rows [begin, end), SEPARABLE_ROWS at a time, with the worker's row buffers. */
static void separable_piece(const void *vctx, size_t begin, size_t end, size_t worker) {
    const struct separable_ctx *c = vctx;
    float *t[SEPARABLE_ROWS];
    for (int64_t r = 0; r < SEPARABLE_ROWS; r++)
        t[r] = (float *)(c->workspace + (worker * SEPARABLE_ROWS + (size_t)r) * c->row_bytes);
    for (int64_t i = (int64_t)begin; i < (int64_t)end; i += SEPARABLE_ROWS)
        separable_rows(c, i, (int64_t)end - i < SEPARABLE_ROWS ? (int64_t)end - i : SEPARABLE_ROWS, t);
}

static void separable_execute(const fconv_plan *plan, const float *x, const float *w,
                              const float *bias, float *y, void *workspace) {
    (void)w; /* == plan->weights, already factored into the state */
    (void)bias;
    const struct separable_state *s = plan->algo_state;
    struct separable_ctx c = {plan,
                              s,
                              x,
                              s->constant_row,
                              y,
                              workspace,
                              separable_row_bytes(plan),
                              separable_slots(plan)};
    /* each worker's share of the rows, then what the others have not begun (pieces of
     * SEPARABLE_PIECE_ROWS: the VM's vCPUs can run at unequal speeds for minutes) */
    fconv_parallel_steal((int)c.slots, (size_t)plan->out_h, SEPARABLE_PIECE_ROWS, separable_piece, &c);
}

const struct fconv_algorithm fconv_algorithm_separable = {
    .id = FCONV_ALGO_SEPARABLE,
    .name = "separable",
    .summary = "rank-1 kernels (box, Gaussian, Sobel) as a vertical then a "
               "horizontal 1D pass",
    .serves = FCONV_SERVES_FILTER2D,
    .error_bound = 2e-6,
    .supports = separable_supports,
    .workspace = separable_workspace,
    .cost = separable_cost,
    .prepare = separable_prepare,
    .release = separable_release,
    .execute = separable_execute,
};
