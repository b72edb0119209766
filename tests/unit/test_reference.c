/*
 * test_reference.c — the reference is the oracle every algorithm is tested against, so it is
 * checked here against implementations written the other obvious way:
 *   conv2d    zero-pad explicitly into a bigger buffer, then sum over it (no bounds tests);
 *   filter2d  build the border-extended image with numpy.pad's own iterative algorithm
 *             (pads of kernel-1 on each side), 'valid'-correlate with the flipped kernel,
 *             crop the mode's window;
 *   conv1d    the formula full[j] = sum_t k[t] x[j - t] with an explicit range test.
 * Through the public API (algo = reference, 1 and 2 threads, which must agree bit for bit)
 * and through ref/conv-ref.h (value and magnitude sum of every output). Plus hand-computed
 * cases, so that one mistake made twice cannot hide, and properties (linearity, impulses,
 * shift equivariance).
 */
#include <math.h>

#include "core/border.h"
#include "fastconv.h"
#include "ref/conv-ref.h"
#include "test.h"

#define TOL 1e-6 /* max normalized error (DESIGN.md §4) of the float32 output */

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- independent implementations ----------------------------------------------------------- */

/*
 * numpy.pad (numpy >= 2, lib/_arraypad_impl.py) along one axis, run on the index sequence
 * 0..n-1: out[t], t in [0, left + n + right), is the source index numpy copies to position t,
 * or -1 for 'constant'. Reflections and wraps are filled iteratively, chunk by chunk, as
 * numpy does (_set_reflect_both, _set_wrap_both).
 */
static void numpy_pad_indices(fconv_border border, int64_t n, int64_t left, int64_t right,
                              int64_t *out) {
    int64_t len = left + n + right;
    for (int64_t t = 0; t < len; t++) out[t] = -2;
    for (int64_t i = 0; i < n; i++) out[left + i] = i;
    int64_t lp = left, rp = right;
    switch (border) {
    case FCONV_BORDER_ZERO:
    case FCONV_BORDER_CONSTANT:
        for (int64_t t = 0; t < lp; t++) out[t] = -1;
        for (int64_t t = len - rp; t < len; t++) out[t] = -1;
        return;
    case FCONV_BORDER_REPLICATE:
        for (int64_t t = 0; t < lp; t++) out[t] = 0;
        for (int64_t t = len - rp; t < len; t++) out[t] = n - 1;
        return;
    case FCONV_BORDER_REFLECT:
    case FCONV_BORDER_MIRROR: {
        int include_edge = border == FCONV_BORDER_REFLECT; /* numpy 'symmetric' */
        if (n == 1) { /* numpy: "extending singleton dimension for 'reflect' is legacy" */
            for (int64_t t = 0; t < len; t++) out[t] = 0;
            return;
        }
        while (lp > 0 || rp > 0) {
            int64_t old_length = len - rp - lp, edge_offset;
            if (include_edge) {
                old_length = old_length / n * n;
                edge_offset = 1;
            } else {
                old_length = (old_length - 1) / (n - 1) * (n - 1) + 1;
                edge_offset = 0;
                old_length -= 1;
            }
            if (lp > 0) {
                int64_t chunk = min64(old_length, lp);
                int64_t stop = lp - edge_offset, start = stop + chunk; /* slice(start, stop, -1) */
                for (int64_t q = 0; q < chunk; q++) out[lp - chunk + q] = out[start - q];
                lp -= chunk;
            }
            if (rp > 0) {
                int64_t chunk = min64(old_length, rp);
                int64_t start = len - rp + edge_offset - 2; /* slice(-rp + eo - 2, ..., -1) */
                for (int64_t q = 0; q < chunk; q++) out[len - rp + q] = out[start - q];
                rp -= chunk;
            }
        }
        return;
    }
    case FCONV_BORDER_WRAP:
        while (lp > 0 || rp > 0) {
            int64_t period = (len - rp - lp) / n * n, new_lp = 0, new_rp = 0;
            if (lp > 0) {
                int64_t slice_end = lp + period, chunk = min64(period, lp);
                int64_t slice_start = slice_end - chunk, dst = 0;
                if (lp > period) {
                    dst = lp - period;
                    new_lp = lp - period;
                }
                for (int64_t q = 0; q < chunk; q++) out[dst + q] = out[slice_start + q];
            }
            if (rp > 0) {
                int64_t slice_start = len - rp - period, chunk = min64(period, rp);
                if (rp > period) new_rp = rp - period;
                for (int64_t q = 0; q < chunk; q++) out[len - rp + q] = out[slice_start + q];
            }
            lp = new_lp;
            rp = new_rp;
        }
        return;
    }
}

/* Output length and offset of one axis of the full convolution's window. */
static int64_t mode_window(fconv_mode mode, int64_t n, int64_t m, int64_t *offset) {
    switch (mode) {
    case FCONV_MODE_FULL: *offset = 0; return n + m - 1;
    case FCONV_MODE_SAME: *offset = (m - 1) / 2; return n;
    case FCONV_MODE_VALID: *offset = m - 1; return n - m + 1;
    }
    return -1;
}

/* filter2d by explicit extension: y and mag get OH*OW*CH values (mag may be NULL). */
static void indep_filter2d(const fconv_filter2d_desc *d, const float *x, const float *k,
                           double *y, double *mag) {
    int64_t H = d->h, W = d->w, C = d->channels ? d->channels : 1, KH = d->kh, KW = d->kw;
    int64_t EH = H + 2 * (KH - 1), EW = W + 2 * (KW - 1);
    int64_t *ri = xmalloc((size_t)EH * sizeof *ri), *ci = xmalloc((size_t)EW * sizeof *ci);
    numpy_pad_indices(d->border, H, KH - 1, KH - 1, ri);
    numpy_pad_indices(d->border, W, KW - 1, KW - 1, ci);
    double *xe = xmalloc((size_t)(EH * EW * C) * sizeof *xe);
    double fill = d->border == FCONV_BORDER_CONSTANT ? (double)d->border_value : 0.0;
    for (int64_t i = 0; i < EH; i++)
        for (int64_t j = 0; j < EW; j++)
            for (int64_t c = 0; c < C; c++)
                xe[(i * EW + j) * C + c] =
                    ri[i] < 0 || ci[j] < 0 ? fill : (double)x[(ri[i] * W + ci[j]) * C + c];
    /* valid correlation of xe with kc: kc = k flipped for convolution, k for correlation. */
    double *kc = xmalloc((size_t)(KH * KW) * sizeof *kc);
    for (int64_t a = 0; a < KH; a++)
        for (int64_t b = 0; b < KW; b++)
            kc[a * KW + b] = d->correlate ? k[a * KW + b] : k[(KH - 1 - a) * KW + (KW - 1 - b)];
    int64_t oi, oj;
    int64_t OH = mode_window(d->mode, H, KH, &oi), OW = mode_window(d->mode, W, KW, &oj);
    for (int64_t i = 0; i < OH; i++)
        for (int64_t j = 0; j < OW; j++)
            for (int64_t c = 0; c < C; c++) {
                double s = 0, m = 0;
                for (int64_t a = 0; a < KH; a++)
                    for (int64_t b = 0; b < KW; b++) {
                        double t = kc[a * KW + b] * xe[((i + oi + a) * EW + (j + oj + b)) * C + c];
                        s += t;
                        m += fabs(t);
                    }
                y[(i * OW + j) * C + c] = s;
                if (mag) mag[(i * OW + j) * C + c] = m;
            }
    free(ri);
    free(ci);
    free(xe);
    free(kc);
}

/* conv2d by copying x into an explicitly zero-padded buffer. */
static void indep_conv2d(const fconv_conv2d_desc *d0, const float *x, const float *w,
                         const float *bias, double *y, double *mag) {
    fconv_conv2d_desc d = *d0;
    if (!d.n) d.n = 1;
    if (!d.stride_h) d.stride_h = 1;
    if (!d.stride_w) d.stride_w = 1;
    if (!d.dilation_h) d.dilation_h = 1;
    if (!d.dilation_w) d.dilation_w = 1;
    if (!d.groups) d.groups = 1;
    int64_t HP = d.h + d.pad_top + d.pad_bottom, WP = d.w + d.pad_left + d.pad_right;
    double *xp = xmalloc((size_t)(d.n * d.c * HP * WP) * sizeof *xp);
    for (int64_t i = 0; i < d.n * d.c * HP * WP; i++) xp[i] = 0.0;
    for (int64_t nc = 0; nc < d.n * d.c; nc++)
        for (int64_t i = 0; i < d.h; i++)
            for (int64_t j = 0; j < d.w; j++)
                xp[(nc * HP + i + d.pad_top) * WP + j + d.pad_left] = x[(nc * d.h + i) * d.w + j];
    int64_t P = (HP - (d.dilation_h * (d.r - 1) + 1)) / d.stride_h + 1;
    int64_t Q = (WP - (d.dilation_w * (d.s - 1) + 1)) / d.stride_w + 1;
    int64_t cg = d.c / d.groups, kg = d.k / d.groups;
    for (int64_t n = 0; n < d.n; n++)
        for (int64_t k = 0; k < d.k; k++)
            for (int64_t p = 0; p < P; p++)
                for (int64_t q = 0; q < Q; q++) {
                    double s = bias ? bias[k] : 0.0, m = bias ? fabs(bias[k]) : 0.0;
                    for (int64_t c = 0; c < cg; c++) {
                        int64_t ic = (k / kg) * cg + c;
                        for (int64_t r = 0; r < d.r; r++)
                            for (int64_t t = 0; t < d.s; t++) {
                                double v = xp[((n * d.c + ic) * HP + p * d.stride_h +
                                               r * d.dilation_h) * WP +
                                              q * d.stride_w + t * d.dilation_w];
                                double prod = v * w[((k * cg + c) * d.r + r) * d.s + t];
                                s += prod;
                                m += fabs(prod);
                            }
                    }
                    if (d.activation == FCONV_ACTIVATION_RELU && !isnan(s)) s = fmax(s, 0.0);
                    int64_t e = ((n * d.k + k) * P + p) * Q + q;
                    y[e] = s;
                    if (mag) mag[e] = m;
                }
    free(xp);
}

/* conv1d by the formula, with an explicit range test. */
static void indep_conv1d(const fconv_conv1d_desc *d, const float *x, const float *k, double *y,
                         double *mag) {
    int64_t off, len = mode_window(d->mode, d->n, d->m, &off);
    for (int64_t i = 0; i < len; i++) {
        int64_t j = i + off;
        double s = 0, m = 0;
        for (int64_t t = 0; t < d->m; t++) {
            if (j - t < 0 || j - t >= d->n) continue;
            double kv = d->correlate ? k[d->m - 1 - t] : k[t];
            s += kv * x[j - t];
            m += fabs(kv * x[j - t]);
        }
        y[i] = s;
        if (mag) mag[i] = m;
    }
}

/* ---- comparing the library's reference with an independent answer -------------------------- */

static int cases_checked;
static int force_two_threads; /* compare 1 and 2 threads on every case */

/*
 * Run `plan` (the reference, 1 thread) and `plan2` (the same problem on 2 threads) on x, w,
 * bias; compare with want/mag: normalized error of the float output <= TOL, every
 * fconv_ref_output_at value and magnitude within 1e-12 of the independent ones, and the
 * two thread counts bit-identical. NaN in want must be NaN in the output.
 */
static void compare(const fconv_plan *plan, const fconv_plan *plan2, const float *x,
                    const float *w, const float *bias, const double *want, const double *mag,
                    const char *label) {
    int64_t ne = fconv_plan_output_elements(plan);
    float *y = xmalloc((size_t)ne * sizeof *y), *y2 = xmalloc((size_t)ne * sizeof *y2);
    for (int64_t e = 0; e < ne; e++) y[e] = y2[e] = -777.0f;
    fconv_status st = fconv_execute(plan, x, w, bias, y);
    CHECKF(st == FCONV_OK, "%s: execute: %s", label, fconv_last_error());
    if (plan2) {
        st = fconv_execute(plan2, x, w, bias, y2);
        CHECKF(st == FCONV_OK, "%s: execute (2 threads): %s", label, fconv_last_error());
        CHECKF(memcmp(y, y2, (size_t)ne * sizeof *y) == 0, "%s: 1 and 2 threads differ", label);
    }
    double maxmag = 0;
    for (int64_t e = 0; e < ne; e++)
        if (mag[e] > maxmag) maxmag = mag[e];
    if (maxmag == 0) maxmag = 1;
    double maxerr = 0, maxref = 0, maxmagerr = 0;
    int64_t bad_nan = 0, worst = 0;
    for (int64_t e = 0; e < ne; e++) {
        double m = -1;
        double v = fconv_ref_output_at(plan, x, w, bias, e, &m);
        if (isnan(want[e])) {
            bad_nan += !isnan(y[e]) || !isnan(v);
            continue;
        }
        double err = fabs((double)y[e] - want[e]), rerr = fabs(v - want[e]);
        double merr = fabs(m - mag[e]);
        if (isnan(err) || isnan(rerr) || isnan(merr)) {
            bad_nan++;
            continue;
        }
        if (err > maxerr) {
            maxerr = err;
            worst = e;
        }
        if (rerr > maxref) maxref = rerr;
        if (merr > maxmagerr) maxmagerr = merr;
    }
    CHECKF(maxerr / maxmag <= TOL, "%s: normalized error %.3g at element %lld: got %.9g want %.9g",
           label, maxerr / maxmag, (long long)worst, (double)y[worst], want[worst]);
    CHECKF(maxref / maxmag <= 1e-12, "%s: fconv_ref_output_at off by %.3g", label, maxref / maxmag);
    CHECKF(maxmagerr / maxmag <= 1e-12, "%s: magnitude off by %.3g", label, maxmagerr / maxmag);
    CHECKF(bad_nan == 0, "%s: %lld outputs NaN where they should not be, or not NaN", label, (long long)bad_nan);
    cases_checked++;
    free(y);
    free(y2);
}

static const char *const border_names[] = {"zero", "constant", "replicate", "reflect", "mirror",
                                           "wrap"};
static const char *const mode_names[] = {"full", "same", "valid"};

/* Plan the problem on the reference with 1 thread and, for every 8th case (OpenMP start-up
 * dominates tiny problems), 2 threads; check the planned shape. */
static int plan_pair(int kind, const void *desc, const int64_t *want_shape, int ndim,
                     fconv_plan **p1, fconv_plan **p2, const char *label) {
    fconv_options o1 = {.algo = FCONV_ALGO_REFERENCE, .threads = 1};
    fconv_options o2 = {.algo = FCONV_ALGO_REFERENCE, .threads = 2};
    fconv_status s1, s2;
    static int count;
    int two = count++ % 8 == 0 || force_two_threads;
    *p1 = *p2 = NULL;
    if (kind == 0) {
        s1 = fconv_plan_conv2d(desc, &o1, NULL, NULL, p1);
        s2 = two ? fconv_plan_conv2d(desc, &o2, NULL, NULL, p2) : FCONV_OK;
    } else if (kind == 1) {
        s1 = fconv_plan_filter2d(desc, &o1, NULL, p1);
        s2 = two ? fconv_plan_filter2d(desc, &o2, NULL, p2) : FCONV_OK;
    } else {
        s1 = fconv_plan_conv1d(desc, &o1, NULL, p1);
        s2 = two ? fconv_plan_conv1d(desc, &o2, NULL, p2) : FCONV_OK;
    }
    CHECKF(s1 == FCONV_OK && s2 == FCONV_OK, "%s: plan: %s", label, fconv_last_error());
    if (s1 != FCONV_OK || s2 != FCONV_OK) {
        fconv_plan_destroy(*p1);
        fconv_plan_destroy(*p2);
        return 0;
    }
    int64_t shape[4] = {0, 0, 0, 0};
    int nd = fconv_plan_output_shape(*p1, shape);
    int same = nd == ndim;
    for (int i = 0; i < ndim && same; i++) same = shape[i] == want_shape[i];
    CHECKF(same, "%s: output shape %lld %lld %lld %lld (ndim %d) != %lld %lld %lld %lld", label,
           (long long)shape[0], (long long)shape[1], (long long)shape[2], (long long)shape[3], nd,
           (long long)want_shape[0], (long long)(ndim > 1 ? want_shape[1] : 0),
           (long long)(ndim > 2 ? want_shape[2] : 0), (long long)(ndim > 3 ? want_shape[3] : 0));
    if (!same) {
        fconv_plan_destroy(*p1);
        fconv_plan_destroy(*p2);
        return 0;
    }
    return 1;
}

/* One filter2d case: random image and kernel, compared with indep_filter2d. */
static void check_filter2d(const fconv_filter2d_desc *d) {
    char label[200];
    snprintf(label, sizeof label,
             "filter2d h=%lld w=%lld ch=%lld k=%lldx%lld mode=%s border=%s V=%g correlate=%d",
             (long long)d->h, (long long)d->w, (long long)d->channels, (long long)d->kh,
             (long long)d->kw, mode_names[d->mode], border_names[d->border], d->border_value,
             d->correlate);
    int64_t C = d->channels ? d->channels : 1, oi, oj;
    int64_t shape[3] = {mode_window(d->mode, d->h, d->kh, &oi), mode_window(d->mode, d->w, d->kw, &oj),
                        C};
    fconv_plan *p1, *p2;
    if (!plan_pair(1, d, shape, 3, &p1, &p2, label)) return;
    int64_t nx = d->h * d->w * C, nk = d->kh * d->kw, ny = shape[0] * shape[1] * C;
    float *x = xmalloc((size_t)nx * sizeof *x), *k = xmalloc((size_t)nk * sizeof *k);
    test_fill_random(x, (size_t)nx);
    test_fill_random(k, (size_t)nk);
    double *want = xmalloc((size_t)ny * sizeof *want), *mag = xmalloc((size_t)ny * sizeof *mag);
    indep_filter2d(d, x, k, want, mag);
    compare(p1, p2, x, k, NULL, want, mag, label);
    free(x);
    free(k);
    free(want);
    free(mag);
    fconv_plan_destroy(p1);
    fconv_plan_destroy(p2);
}

static void check_conv2d(const fconv_conv2d_desc *d, int nan_at) {
    char label[300];
    snprintf(label, sizeof label,
             "conv2d n=%lld c=%lld h=%lld w=%lld k=%lld r=%lld s=%lld stride=%lld,%lld "
             "pad=%lld,%lld,%lld,%lld dil=%lld,%lld groups=%lld bias=%d act=%d",
             (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w, (long long)d->k,
             (long long)d->r, (long long)d->s, (long long)d->stride_h, (long long)d->stride_w,
             (long long)d->pad_top, (long long)d->pad_left, (long long)d->pad_bottom,
             (long long)d->pad_right, (long long)d->dilation_h, (long long)d->dilation_w,
             (long long)d->groups, d->has_bias, (int)d->activation);
    int64_t N = d->n ? d->n : 1, G = d->groups ? d->groups : 1;
    int64_t sh = d->stride_h ? d->stride_h : 1, sw = d->stride_w ? d->stride_w : 1;
    int64_t dh = d->dilation_h ? d->dilation_h : 1, dw = d->dilation_w ? d->dilation_w : 1;
    int64_t shape[4] = {N, d->k,
                        (d->h + d->pad_top + d->pad_bottom - dh * (d->r - 1) - 1) / sh + 1,
                        (d->w + d->pad_left + d->pad_right - dw * (d->s - 1) - 1) / sw + 1};
    fconv_plan *p1, *p2;
    if (!plan_pair(0, d, shape, 4, &p1, &p2, label)) return;
    int64_t nx = N * d->c * d->h * d->w, nw = d->k * (d->c / G) * d->r * d->s;
    int64_t ny = shape[0] * shape[1] * shape[2] * shape[3];
    float *x = xmalloc((size_t)nx * sizeof *x), *w = xmalloc((size_t)nw * sizeof *w);
    float *b = xmalloc((size_t)d->k * sizeof *b);
    test_fill_random(x, (size_t)nx);
    test_fill_random(w, (size_t)nw);
    test_fill_random(b, (size_t)d->k);
    if (nan_at >= 0) x[nan_at % nx] = NAN;
    double *want = xmalloc((size_t)ny * sizeof *want), *mag = xmalloc((size_t)ny * sizeof *mag);
    indep_conv2d(d, x, w, d->has_bias ? b : NULL, want, mag);
    compare(p1, p2, x, w, d->has_bias ? b : NULL, want, mag, label);
    free(x);
    free(w);
    free(b);
    free(want);
    free(mag);
    fconv_plan_destroy(p1);
    fconv_plan_destroy(p2);
}

static void check_conv1d(const fconv_conv1d_desc *d) {
    char label[120];
    snprintf(label, sizeof label, "conv1d n=%lld m=%lld mode=%s correlate=%d", (long long)d->n,
             (long long)d->m, mode_names[d->mode], d->correlate);
    int64_t off, shape[1] = {mode_window(d->mode, d->n, d->m, &off)};
    fconv_plan *p1, *p2;
    if (!plan_pair(2, d, shape, 1, &p1, &p2, label)) return;
    float *x = xmalloc((size_t)d->n * sizeof *x), *k = xmalloc((size_t)d->m * sizeof *k);
    test_fill_random(x, (size_t)d->n);
    test_fill_random(k, (size_t)d->m);
    double *want = xmalloc((size_t)shape[0] * sizeof *want);
    double *mag = xmalloc((size_t)shape[0] * sizeof *mag);
    indep_conv1d(d, x, k, want, mag);
    compare(p1, p2, x, k, NULL, want, mag, label);
    free(x);
    free(k);
    free(want);
    free(mag);
    fconv_plan_destroy(p1);
    fconv_plan_destroy(p2);
}

/* ---- the independent padding itself, against numpy.pad outputs written out by hand ------------ */

static void check_pad(fconv_border border, int64_t n, int64_t left, int64_t right,
                      const char *want) {
    int64_t idx[64];
    char got[65];
    numpy_pad_indices(border, n, left, right, idx);
    int64_t len = left + n + right;
    for (int64_t t = 0; t < len; t++) got[t] = idx[t] < 0 ? '0' : (char)('a' + idx[t]);
    got[len] = '\0';
    CHECKF(strcmp(got, want) == 0, "numpy.pad(%s, n=%lld, (%lld, %lld)): got %s want %s",
           border_names[border], (long long)n, (long long)left, (long long)right, got, want);
    /* The library's border rule agrees wherever numpy's is periodic (equal pads). */
    if (left == right)
        for (int64_t t = 0; t < len; t++)
            CHECKF(fconv_border_index(border, t - left, n) == idx[t],
                   "border.h %s n=%lld i=%lld: %lld vs numpy %lld", border_names[border],
                   (long long)n, (long long)(t - left),
                   (long long)fconv_border_index(border, t - left, n), (long long)idx[t]);
}

static void test_numpy_pad(void) {
    /* np.pad(list('abcd'), 3, mode) etc., as numpy prints them. */
    check_pad(FCONV_BORDER_ZERO, 4, 3, 3, "000abcd000");
    check_pad(FCONV_BORDER_REPLICATE, 4, 3, 3, "aaaabcdddd");
    check_pad(FCONV_BORDER_REFLECT, 4, 3, 3, "cbaabcddcb");     /* symmetric */
    check_pad(FCONV_BORDER_MIRROR, 4, 3, 3, "dcbabcdcba");      /* reflect */
    check_pad(FCONV_BORDER_WRAP, 4, 3, 3, "bcdabcdabc");
    /* Pads wider than the array: np.pad(list('abc'), 7, ...). */
    check_pad(FCONV_BORDER_REFLECT, 3, 7, 7, "aabccbaabccbaabcc");
    check_pad(FCONV_BORDER_MIRROR, 3, 7, 7, "bcbabcbabcbabcbab");
    check_pad(FCONV_BORDER_WRAP, 3, 7, 7, "cabcabcabcabcabca");
    check_pad(FCONV_BORDER_REPLICATE, 3, 7, 7, "aaaaaaaabcccccccc");
    /* Two elements and one. */
    check_pad(FCONV_BORDER_MIRROR, 2, 5, 5, "babababababa");
    check_pad(FCONV_BORDER_REFLECT, 2, 5, 5, "aabbaabbaabb");
    check_pad(FCONV_BORDER_WRAP, 2, 5, 5, "babababababa");
    check_pad(FCONV_BORDER_MIRROR, 1, 3, 3, "aaaaaaa");
    check_pad(FCONV_BORDER_REFLECT, 1, 3, 3, "aaaaaaa");
    check_pad(FCONV_BORDER_WRAP, 1, 3, 3, "aaaaaaa");
    /* The library's rule against this numpy algorithm for many sizes and equal pads. */
    for (int64_t n = 1; n <= 7; n++)
        for (int64_t pad = 0; pad <= 20; pad++)
            for (int b = 0; b <= FCONV_BORDER_WRAP; b++) {
                int64_t idx[64];
                numpy_pad_indices((fconv_border)b, n, pad, pad, idx);
                for (int64_t t = 0; t < n + 2 * pad; t++)
                    CHECKF(fconv_border_index((fconv_border)b, t - pad, n) == idx[t],
                           "%s n=%lld pad=%lld t=%lld", border_names[b], (long long)n,
                           (long long)pad, (long long)t);
            }
}

/* ---- hand-computed cases ----------------------------------------------------------------------- */

/* Plan (reference), execute, compare with exact expected values (all small integers). */
static void expect_filter2d(fconv_filter2d_desc d, const float *x, const float *k,
                            const float *want, int64_t nwant, const char *what) {
    fconv_options o = {.algo = FCONV_ALGO_REFERENCE};
    fconv_plan *p = NULL;
    fconv_status st = fconv_plan_filter2d(&d, &o, k, &p);
    CHECKF(st == FCONV_OK, "%s: %s", what, fconv_last_error());
    if (st != FCONV_OK) return;
    CHECK_EQ_INT(fconv_plan_output_elements(p), nwant);
    if (fconv_plan_output_elements(p) == nwant) {
        float y[64];
        CHECK_EQ_INT(fconv_execute(p, x, NULL, NULL, y), FCONV_OK);
        for (int64_t i = 0; i < nwant; i++)
            CHECKF(y[i] == want[i], "%s: y[%lld] = %g, want %g", what, (long long)i, y[i], want[i]);
    }
    fconv_plan_destroy(p);
}

static void test_hand_filter2d(void) {
    const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const float k[4] = {1, 2, 3, 4};
    fconv_filter2d_desc d = {.h = 3, .w = 3, .kh = 2, .kw = 2};
    /* scipy.signal.convolve2d(x, k): */
    const float full[16] = {1, 4, 7, 6, 7, 23, 33, 24, 19, 53, 63, 42, 21, 52, 59, 36};
    d.mode = FCONV_MODE_FULL;
    expect_filter2d(d, x, k, full, 16, "convolve2d full");
    const float same[9] = {1, 4, 7, 7, 23, 33, 19, 53, 63};
    d.mode = FCONV_MODE_SAME;
    expect_filter2d(d, x, k, same, 9, "convolve2d same (even kernel)");
    const float valid[4] = {23, 33, 53, 63};
    d.mode = FCONV_MODE_VALID;
    expect_filter2d(d, x, k, valid, 4, "convolve2d valid");
    /* Correlation, valid: y[i][j] = sum k[a][b] x[i+a][j+b]. */
    const float cvalid[4] = {37, 47, 67, 77};
    d.correlate = 1;
    expect_filter2d(d, x, k, cvalid, 4, "correlate valid");
    /* Correlation, same, even kernel: y[i][j] = sum k[a][b] x[i+a-1][j+b-1] (OpenCV anchor). */
    const float csame[9] = {4, 11, 18, 18, 37, 47, 36, 67, 77};
    d.mode = FCONV_MODE_SAME;
    expect_filter2d(d, x, k, csame, 9, "correlate same (even kernel)");

    /* 3x3 box, same mode: the corner for every border (centre is 45 always). */
    const float box[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const float corner[6] = {12, 12 + 5 * 10, 21, 21, 33, 45};
    for (int b = 0; b <= FCONV_BORDER_WRAP; b++) {
        fconv_filter2d_desc e = {.h = 3, .w = 3, .kh = 3, .kw = 3, .mode = FCONV_MODE_SAME,
                                 .border = (fconv_border)b, .border_value = 10};
        fconv_options o = {.algo = FCONV_ALGO_REFERENCE};
        fconv_plan *p = NULL;
        if (fconv_plan_filter2d(&e, &o, box, &p) != FCONV_OK) {
            CHECKF(0, "%s", fconv_last_error());
            continue;
        }
        float y[9];
        CHECK_EQ_INT(fconv_execute(p, x, NULL, NULL, y), FCONV_OK);
        CHECKF(y[0] == corner[b], "box %s corner %g want %g", border_names[b], y[0], corner[b]);
        CHECKF(y[4] == 45, "box %s centre %g", border_names[b], y[4]);
        fconv_plan_destroy(p);
    }
    /* Row "abcd" = 1 2 3 4 and kernel [1 0 0] (picks x[j-1]... in full index terms): same mode,
     * correlate with [1 0 0] gives y[j] = x[j - 1], so y[0] is the first border sample. */
    const float row[4] = {1, 2, 3, 4};
    const float left1[3] = {1, 0, 0};
    const float want_left[6] = {0, 7, 1, 1, 2, 4}; /* zero, V=7, replicate a, reflect a,
                                                      mirror b, wrap d */
    for (int b = 0; b <= FCONV_BORDER_WRAP; b++) {
        fconv_filter2d_desc e = {.h = 1, .w = 4, .kh = 1, .kw = 3, .mode = FCONV_MODE_SAME,
                                 .border = (fconv_border)b, .border_value = 7, .correlate = 1};
        float want[4] = {want_left[b], 1, 2, 3};
        char what[64];
        snprintf(what, sizeof what, "row abcd, left neighbour, %s", border_names[b]);
        expect_filter2d(e, row, left1, want, 4, what);
    }
    /* Kernel of width 9 on the row of 4 with reflect: reaches 4 beyond each edge,
     * numpy symmetric 'dcba|abcd|dcba'. y[0] (same, correlate, kernel e_0) = x[-4] = d. */
    float e0[9] = {1, 0, 0, 0, 0, 0, 0, 0, 0};
    /* x[-4]: zero 0, V, replicate a, symmetric (period abcddcba) d, mirror (period abcdcb) c,
     * wrap a. */
    const float want_far[6] = {0, 7, 1, 4, 3, 1};
    for (int b = 0; b <= FCONV_BORDER_WRAP; b++) {
        fconv_filter2d_desc e = {.h = 1, .w = 4, .kh = 1, .kw = 9, .mode = FCONV_MODE_SAME,
                                 .border = (fconv_border)b, .border_value = 7, .correlate = 1};
        fconv_options o = {.algo = FCONV_ALGO_REFERENCE};
        fconv_plan *p = NULL;
        if (fconv_plan_filter2d(&e, &o, e0, &p) != FCONV_OK) continue;
        float y[4];
        CHECK_EQ_INT(fconv_execute(p, row, NULL, NULL, y), FCONV_OK);
        CHECKF(y[0] == want_far[b], "x[-4] with %s: %g want %g", border_names[b], y[0],
               want_far[b]);
        fconv_plan_destroy(p);
    }
    /* Two interleaved channels are filtered independently: channel 1 = 10 * channel 0. */
    float x2[18], y2[18];
    for (int i = 0; i < 9; i++) x2[2 * i] = x[i], x2[2 * i + 1] = 10 * x[i];
    fconv_filter2d_desc m = {.h = 3, .w = 3, .channels = 2, .kh = 2, .kw = 2,
                             .mode = FCONV_MODE_SAME};
    fconv_options o = {.algo = FCONV_ALGO_REFERENCE};
    fconv_plan *p = NULL;
    if (fconv_plan_filter2d(&m, &o, k, &p) == FCONV_OK) {
        CHECK_EQ_INT(fconv_execute(p, x2, NULL, NULL, y2), FCONV_OK);
        for (int i = 0; i < 9; i++) {
            CHECKF(y2[2 * i] == same[i], "channel 0 [%d] %g", i, y2[2 * i]);
            CHECKF(y2[2 * i + 1] == 10 * same[i], "channel 1 [%d] %g", i, y2[2 * i + 1]);
        }
        fconv_plan_destroy(p);
    }
}

static void expect_conv2d(fconv_conv2d_desc d, const float *x, const float *w, const float *b,
                          const float *want, int64_t nwant, const char *what) {
    fconv_options o = {.algo = FCONV_ALGO_REFERENCE};
    fconv_plan *p = NULL;
    fconv_status st = fconv_plan_conv2d(&d, &o, NULL, NULL, &p);
    CHECKF(st == FCONV_OK, "%s: %s", what, fconv_last_error());
    if (st != FCONV_OK) return;
    CHECK_EQ_INT(fconv_plan_output_elements(p), nwant);
    if (fconv_plan_output_elements(p) == nwant) {
        float y[64];
        CHECK_EQ_INT(fconv_execute(p, x, w, b, y), FCONV_OK);
        for (int64_t i = 0; i < nwant; i++)
            CHECKF(y[i] == want[i] || (isnan(want[i]) && isnan(y[i])), "%s: y[%lld] = %g, want %g",
                   what, (long long)i, y[i], want[i]);
    }
    fconv_plan_destroy(p);
}

static void test_hand_conv2d(void) {
    const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const float w[4] = {1, 2, 3, 4};
    fconv_conv2d_desc d = {.c = 1, .h = 3, .w = 3, .k = 1, .r = 2, .s = 2};
    /* torch.nn.functional.conv2d is a correlation. */
    const float plain[4] = {37, 47, 67, 77};
    expect_conv2d(d, x, w, NULL, plain, 4, "conv2d plain");
    /* pad 1, stride 2: windows at padded (0,0), (0,2), (2,0), (2,2). */
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
    d.stride_h = d.stride_w = 2;
    const float strided[4] = {4, 18, 36, 77};
    expect_conv2d(d, x, w, NULL, strided, 4, "conv2d pad 1 stride 2");
    /* + bias -50, ReLU. */
    d.has_bias = 1;
    d.activation = FCONV_ACTIVATION_RELU;
    const float bias[1] = {-50};
    const float relu[4] = {0, 0, 0, 27};
    expect_conv2d(d, x, w, bias, relu, 4, "conv2d bias relu");
    /* Asymmetric padding: only bottom/right 1, stride 1: 3x3 output. */
    d = (fconv_conv2d_desc){.c = 1, .h = 3, .w = 3, .k = 1, .r = 2, .s = 2, .pad_bottom = 1,
                            .pad_right = 1};
    /* [0][2] = 3*1 + 6*3, [1][2] = 6*1 + 9*3, [2][0] = 7*1 + 8*2, [2][1] = 8*1 + 9*2, [2][2] = 9 */
    const float asym[9] = {37, 47, 21, 67, 77, 33, 23, 26, 9};
    expect_conv2d(d, x, w, NULL, asym, 9, "conv2d asymmetric pad");
    /* Dilation 2: the kernel taps the corners. */
    d = (fconv_conv2d_desc){.c = 1, .h = 3, .w = 3, .k = 1, .r = 2, .s = 2, .dilation_h = 2,
                            .dilation_w = 2};
    const float dil[1] = {1 * 1 + 3 * 2 + 7 * 3 + 9 * 4};
    expect_conv2d(d, x, w, NULL, dil, 1, "conv2d dilation 2");
    /* Two channels, two groups (depthwise): each output sees only its own channel. */
    float x2[18];
    for (int i = 0; i < 9; i++) x2[i] = x[i], x2[9 + i] = -x[i];
    const float w2[8] = {1, 2, 3, 4, 1, 0, 0, 0};
    d = (fconv_conv2d_desc){.c = 2, .h = 3, .w = 3, .k = 2, .r = 2, .s = 2, .groups = 2};
    const float dw[8] = {37, 47, 67, 77, -1, -2, -4, -5};
    expect_conv2d(d, x2, w2, NULL, dw, 8, "conv2d depthwise");
    /* Same with groups = 1: both outputs sum both channels; w as [2][2][2][2]. */
    const float w3[16] = {1, 2, 3, 4, 1, 2, 3, 4, /* k0: x - x = 0 */
                          1, 0, 0, 0, 0, 0, 0, 0};
    d.groups = 1;
    const float dense[8] = {0, 0, 0, 0, 1, 2, 4, 5};
    expect_conv2d(d, x2, w3, NULL, dense, 8, "conv2d dense 2 channels");
    /* ReLU keeps NaN, zeroes negatives, keeps positives; NaN spreads to the windows that read
     * it only. */
    float xn[9];
    memcpy(xn, x, sizeof xn);
    xn[0] = NAN;
    d = (fconv_conv2d_desc){.c = 1, .h = 3, .w = 3, .k = 1, .r = 2, .s = 2, .has_bias = 1,
                            .activation = FCONV_ACTIVATION_RELU};
    const float b60[1] = {-60};
    const float nanrelu[4] = {NAN, 0, 7, 17};
    expect_conv2d(d, xn, w, b60, nanrelu, 4, "conv2d NaN relu");
}

static void expect_conv1d(fconv_conv1d_desc d, const float *x, const float *k, const float *want,
                          int64_t nwant, const char *what) {
    fconv_options o = {.algo = FCONV_ALGO_REFERENCE};
    fconv_plan *p = NULL;
    fconv_status st = fconv_plan_conv1d(&d, &o, k, &p);
    CHECKF(st == FCONV_OK, "%s: %s", what, fconv_last_error());
    if (st != FCONV_OK) return;
    CHECK_EQ_INT(fconv_plan_output_elements(p), nwant);
    if (fconv_plan_output_elements(p) == nwant) {
        float y[64];
        CHECK_EQ_INT(fconv_execute(p, x, NULL, NULL, y), FCONV_OK);
        for (int64_t i = 0; i < nwant; i++)
            CHECKF(y[i] == want[i], "%s: y[%lld] = %g, want %g", what, (long long)i, y[i], want[i]);
    }
    fconv_plan_destroy(p);
}

static void test_hand_conv1d(void) {
    const float x[3] = {1, 2, 3}, k[3] = {0, 1, 0.5f};
    /* numpy.convolve([1,2,3], [0,1,.5], mode) */
    const float full[5] = {0, 1, 2.5f, 4, 1.5f}, same[3] = {1, 2.5f, 4}, valid[1] = {2.5f};
    expect_conv1d((fconv_conv1d_desc){.n = 3, .m = 3, .mode = FCONV_MODE_FULL}, x, k, full, 5,
                  "convolve full");
    expect_conv1d((fconv_conv1d_desc){.n = 3, .m = 3, .mode = FCONV_MODE_SAME}, x, k, same, 3,
                  "convolve same");
    expect_conv1d((fconv_conv1d_desc){.n = 3, .m = 3, .mode = FCONV_MODE_VALID}, x, k, valid, 1,
                  "convolve valid");
    /* numpy.correlate([1,2,3], [0,1,.5], mode) */
    const float cfull[5] = {0.5f, 2, 3.5f, 3, 0}, csame[3] = {2, 3.5f, 3}, cvalid[1] = {3.5f};
    expect_conv1d((fconv_conv1d_desc){.n = 3, .m = 3, .mode = FCONV_MODE_FULL, .correlate = 1}, x,
                  k, cfull, 5, "correlate full");
    expect_conv1d((fconv_conv1d_desc){.n = 3, .m = 3, .mode = FCONV_MODE_SAME, .correlate = 1}, x,
                  k, csame, 3, "correlate same");
    expect_conv1d((fconv_conv1d_desc){.n = 3, .m = 3, .mode = FCONV_MODE_VALID, .correlate = 1},
                  x, k, cvalid, 1, "correlate valid");
    /* Even kernel: numpy.convolve([1,2,3], [1,10], 'same') = [1, 12, 23]. */
    const float k2[2] = {1, 10}, same2[3] = {1, 12, 23};
    expect_conv1d((fconv_conv1d_desc){.n = 3, .m = 2, .mode = FCONV_MODE_SAME}, x, k2, same2, 3,
                  "convolve same, even kernel");
    /* m > n: scipy.signal.convolve([1,2], [1,1,1,1], 'same') = [3, 3]; full = [1,3,3,3,2]. */
    const float x2[2] = {1, 2}, k4[4] = {1, 1, 1, 1}, full4[5] = {1, 3, 3, 3, 2}, same4[2] = {3, 3};
    expect_conv1d((fconv_conv1d_desc){.n = 2, .m = 4, .mode = FCONV_MODE_FULL}, x2, k4, full4, 5,
                  "m > n full");
    expect_conv1d((fconv_conv1d_desc){.n = 2, .m = 4, .mode = FCONV_MODE_SAME}, x2, k4, same4, 2,
                  "m > n same");
    /* m > n, asymmetric kernel: scipy.signal.convolve([1,2], [1,2,3,4,5], 'same'):
     * full = [1, 4, 7, 10, 13, 10], window starts at (6 - 2) / 2 = 2: [7, 10]. */
    const float k5[5] = {1, 2, 3, 4, 5}, same5[2] = {7, 10};
    expect_conv1d((fconv_conv1d_desc){.n = 2, .m = 5, .mode = FCONV_MODE_SAME}, x2, k5, same5, 2,
                  "m > n same, odd kernel");
}

/* ---- random cases against the independent implementations ---------------------------------- */

static void test_random_conv2d(void) {
    for (int iter = 0; iter < 200; iter++) {
        fconv_conv2d_desc d;
        for (;;) {
            /* One draw per statement: the order is then the same for every compiler. */
            int64_t g = test_rand_int(1, 3), cg, kg;
            cg = test_rand_int(1, 3);
            kg = test_rand_int(1, 3);
            if (test_rand_int(0, 4) == 0) cg = 1, g = test_rand_int(1, 4); /* depthwise */
            d = (fconv_conv2d_desc){.c = g * cg, .k = g * kg};
            d.groups = g == 1 ? test_rand_int(0, 1) : g; /* 0 means 1 */
            d.n = test_rand_int(0, 2);
            d.h = test_rand_int(1, 9);
            d.w = test_rand_int(1, 9);
            d.r = test_rand_int(1, 4);
            d.s = test_rand_int(1, 4);
            d.stride_h = test_rand_int(0, 3);
            d.stride_w = test_rand_int(0, 3);
            d.pad_top = test_rand_int(0, 3);
            d.pad_left = test_rand_int(0, 3);
            d.pad_bottom = test_rand_int(0, 3);
            d.pad_right = test_rand_int(0, 3);
            d.dilation_h = test_rand_int(0, 3);
            d.dilation_w = test_rand_int(0, 3);
            d.has_bias = (int)test_rand_int(0, 1);
            d.activation = (fconv_activation)test_rand_int(0, 1);
            if (test_rand_int(0, 9) == 0) d.pad_top += 6; /* padding wider than the kernel */
            int64_t dh = d.dilation_h ? d.dilation_h : 1, dw = d.dilation_w ? d.dilation_w : 1;
            if (dh * (d.r - 1) + 1 <= d.h + d.pad_top + d.pad_bottom &&
                dw * (d.s - 1) + 1 <= d.w + d.pad_left + d.pad_right)
                break;
        }
        check_conv2d(&d, iter % 10 == 0 ? (int)test_rand_int(0, 1000) : -1);
    }
}

static void test_random_filter2d(void) {
    for (int iter = 0; iter < 300; iter++) {
        fconv_filter2d_desc d;
        do {
            d = (fconv_filter2d_desc){0};
            d.h = test_rand_int(1, 8);
            d.w = test_rand_int(1, 8);
            d.channels = test_rand_int(0, 3); /* 0 means 1 */
            d.kh = test_rand_int(1, 10);
            d.kw = test_rand_int(1, 10);
            d.mode = (fconv_mode)test_rand_int(0, 2);
            d.border = (fconv_border)test_rand_int(0, 5);
            d.border_value = test_rand_float() * 4;
            d.correlate = (int)test_rand_int(0, 1);
        } while (d.mode == FCONV_MODE_VALID && (d.kh > d.h || d.kw > d.w));
        check_filter2d(&d);
    }
}

/* Every mode x border x correlate, on even/odd/large kernels and tiny/non-square images. */
static void test_filter2d_grid(void) {
    const int64_t images[][3] = {{1, 1, 1}, {3, 4, 1}, {5, 2, 3}, {2, 7, 2}};
    const int64_t kernels[][2] = {{1, 1}, {2, 3}, {3, 3}, {4, 4}, {7, 5}, {1, 9}};
    for (int mode = 0; mode < 3; mode++)
        for (int border = 0; border <= FCONV_BORDER_WRAP; border++)
            for (int corr = 0; corr < 2; corr++)
                for (size_t i = 0; i < sizeof images / sizeof images[0]; i++)
                    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
                        fconv_filter2d_desc d = {
                            .h = images[i][0], .w = images[i][1], .channels = images[i][2],
                            .kh = kernels[k][0], .kw = kernels[k][1], .mode = (fconv_mode)mode,
                            .border = (fconv_border)border, .border_value = -1.5f,
                            .correlate = corr};
                        if (mode == FCONV_MODE_VALID && (d.kh > d.h || d.kw > d.w)) continue;
                        check_filter2d(&d);
                    }
}

static void test_random_conv1d(void) {
    for (int iter = 0; iter < 200; iter++) {
        fconv_conv1d_desc d;
        do {
            d = (fconv_conv1d_desc){0};
            d.n = test_rand_int(1, 12);
            d.m = test_rand_int(1, 15);
            d.mode = (fconv_mode)test_rand_int(0, 2);
            d.correlate = (int)test_rand_int(0, 1);
        } while (d.mode == FCONV_MODE_VALID && d.m > d.n);
        check_conv1d(&d);
    }
    /* Larger, with more threads than rows (conv1d has one row). */
    fconv_conv1d_desc d = {.n = 1000, .m = 37, .mode = FCONV_MODE_SAME, .correlate = 1};
    check_conv1d(&d);
}

/* Larger problems, so that the 2-thread run really splits the work. */
static void test_larger(void) {
    force_two_threads = 1;
    fconv_conv2d_desc c = {.n = 2, .c = 6, .h = 17, .w = 13, .k = 8, .r = 3, .s = 5, .stride_w = 2,
                           .pad_top = 1, .pad_left = 2, .pad_bottom = 1, .pad_right = 2,
                           .dilation_h = 2, .groups = 2, .has_bias = 1,
                           .activation = FCONV_ACTIVATION_RELU};
    check_conv2d(&c, -1);
    fconv_filter2d_desc f = {.h = 37, .w = 29, .channels = 3, .kh = 6, .kw = 9,
                             .mode = FCONV_MODE_SAME, .border = FCONV_BORDER_MIRROR};
    check_filter2d(&f);
    f.kh = 50, f.kw = 41, f.border = FCONV_BORDER_WRAP, f.correlate = 1; /* kernel > image */
    check_filter2d(&f);
    force_two_threads = 0;
}

/* ---- properties ---------------------------------------------------------------------------------- */

/* y = plan(x, w) as float; also the max magnitude (via the reference's own magnitude). */
static double run_ref(const fconv_plan *p, const float *x, const float *w, float *y) {
    CHECK_EQ_INT(fconv_execute(p, x, w, NULL, y), FCONV_OK);
    double maxmag = 0;
    for (int64_t e = 0; e < fconv_plan_output_elements(p); e++) {
        double m;
        fconv_ref_output_at(p, x, w, NULL, e, &m);
        if (m > maxmag) maxmag = m;
    }
    return maxmag;
}

/* Linearity: f(a x1 + b x2, w) = a f(x1, w) + b f(x2, w), and the same in w. */
static void check_linearity(const fconv_plan *p, const char *label) {
    int64_t nx = fconv_plan_input_elements(p), nw = fconv_plan_weight_elements(p);
    int64_t ny = fconv_plan_output_elements(p);
    float *x1 = xmalloc((size_t)nx * 4), *x2 = xmalloc((size_t)nx * 4), *x3 = xmalloc((size_t)nx * 4);
    float *w1 = xmalloc((size_t)nw * 4), *w2 = xmalloc((size_t)nw * 4), *w3 = xmalloc((size_t)nw * 4);
    float *y1 = xmalloc((size_t)ny * 4), *y2 = xmalloc((size_t)ny * 4), *y3 = xmalloc((size_t)ny * 4);
    const float a = 0.75f, b = -1.25f;
    test_fill_random(x1, (size_t)nx);
    test_fill_random(x2, (size_t)nx);
    test_fill_random(w1, (size_t)nw);
    test_fill_random(w2, (size_t)nw);
    for (int64_t i = 0; i < nx; i++) x3[i] = a * x1[i] + b * x2[i];
    for (int64_t i = 0; i < nw; i++) w3[i] = a * w1[i] + b * w2[i];
    for (int in_w = 0; in_w < 2; in_w++) {
        double m1 = run_ref(p, x1, w1, y1);
        double m2 = in_w ? run_ref(p, x1, w2, y2) : run_ref(p, x2, w1, y2);
        double m3 = in_w ? run_ref(p, x1, w3, y3) : run_ref(p, x3, w1, y3);
        double norm = fabs(a) * m1 + fabs(b) * m2 + m3;
        if (norm == 0) norm = 1;
        double maxerr = 0;
        for (int64_t e = 0; e < ny; e++) {
            double err = fabs((double)y3[e] - ((double)a * y1[e] + (double)b * y2[e]));
            if (err > maxerr) maxerr = err;
        }
        CHECKF(maxerr / norm <= TOL, "%s: not linear in %s: %.3g", label, in_w ? "w" : "x",
               maxerr / norm);
    }
    free(x1), free(x2), free(x3), free(w1), free(w2), free(w3), free(y1), free(y2), free(y3);
}

static void test_linearity(void) {
    fconv_options o = {.algo = FCONV_ALGO_REFERENCE, .threads = 1};
    fconv_plan *p;
    for (int iter = 0; iter < 40; iter++) {
        /* filter2d: linear in x for every border but a nonzero constant; always linear in w. */
        fconv_filter2d_desc f = {0};
        f.h = test_rand_int(1, 9);
        f.w = test_rand_int(1, 9);
        f.channels = test_rand_int(1, 2);
        f.kh = test_rand_int(1, 6);
        f.kw = test_rand_int(1, 6);
        f.mode = (fconv_mode)test_rand_int(0, 1);
        f.border = (fconv_border)test_rand_int(0, 5);
        f.correlate = (int)test_rand_int(0, 1);
        if (f.border == FCONV_BORDER_CONSTANT) f.border_value = 0; /* constant 0 is linear */
        if (fconv_plan_filter2d(&f, &o, NULL, &p) == FCONV_OK) {
            check_linearity(p, "filter2d");
            fconv_plan_destroy(p);
        } else {
            CHECKF(0, "%s", fconv_last_error());
        }
        fconv_conv2d_desc c = {.c = 2, .k = 2};
        c.n = test_rand_int(1, 2);
        c.h = test_rand_int(3, 8);
        c.w = test_rand_int(5, 8); /* >= the largest dilated extent, 2 * 2 + 1 */
        c.r = test_rand_int(1, 3);
        c.s = test_rand_int(1, 3);
        c.stride_h = test_rand_int(1, 2);
        c.pad_left = test_rand_int(0, 2);
        c.dilation_w = test_rand_int(1, 2);
        c.groups = test_rand_int(1, 2);
        if (fconv_plan_conv2d(&c, &o, NULL, NULL, &p) == FCONV_OK) {
            check_linearity(p, "conv2d");
            fconv_plan_destroy(p);
        } else {
            CHECKF(0, "%s", fconv_last_error());
        }
        fconv_conv1d_desc d = {0};
        d.n = test_rand_int(1, 20);
        d.m = test_rand_int(1, 20);
        d.mode = (fconv_mode)test_rand_int(0, 1);
        d.correlate = (int)test_rand_int(0, 1);
        if (fconv_plan_conv1d(&d, &o, NULL, &p) == FCONV_OK) {
            check_linearity(p, "conv1d");
            fconv_plan_destroy(p);
        } else {
            CHECKF(0, "%s", fconv_last_error());
        }
    }
}

/* An impulse image reproduces the kernel (convolution) or the flipped kernel (correlation,
 * and conv2d, which correlates); an impulse kernel at the mode's centre reproduces the image,
 * whatever the border. */
static void test_impulses(void) {
    fconv_options o = {.algo = FCONV_ALGO_REFERENCE, .threads = 1};
    for (int iter = 0; iter < 40; iter++) {
        int64_t H = test_rand_int(1, 7), W = test_rand_int(1, 7);
        int64_t KH = test_rand_int(1, 6), KW = test_rand_int(1, 6);
        int corr = (int)test_rand_int(0, 1);
        int64_t i0 = test_rand_int(0, H - 1), j0 = test_rand_int(0, W - 1);
        float x[49] = {0}, k[49], y[144];
        test_fill_random(k, 49);
        x[i0 * W + j0] = 1;
        fconv_filter2d_desc f = {.h = H, .w = W, .kh = KH, .kw = KW, .mode = FCONV_MODE_FULL,
                                 .correlate = corr};
        fconv_plan *p = NULL;
        if (fconv_plan_filter2d(&f, &o, k, &p) != FCONV_OK) {
            CHECKF(0, "%s", fconv_last_error());
            continue;
        }
        CHECK_EQ_INT(fconv_execute(p, x, NULL, NULL, y), FCONV_OK);
        int64_t OW = W + KW - 1, bad = 0;
        for (int64_t i = 0; i < H + KH - 1; i++)
            for (int64_t j = 0; j < OW; j++) {
                int64_t a = i - i0, b = j - j0;
                float want = 0;
                if (a >= 0 && a < KH && b >= 0 && b < KW)
                    want = corr ? k[(KH - 1 - a) * KW + (KW - 1 - b)] : k[a * KW + b];
                bad += y[i * OW + j] != want;
            }
        CHECKF(bad == 0, "impulse image, %s: %lld wrong", corr ? "correlate" : "convolve",
               (long long)bad);
        fconv_plan_destroy(p);

        /* Impulse kernel, same mode, every border, 2 channels: y == x exactly. */
        float img[98], out[98], kd[36] = {0};
        test_fill_random(img, (size_t)(H * W * 2));
        int64_t a0 = (KH - 1) / 2, b0 = (KW - 1) / 2;
        if (corr) a0 = KH - 1 - a0, b0 = KW - 1 - b0;
        kd[a0 * KW + b0] = 1;
        fconv_filter2d_desc g = {.h = H, .w = W, .channels = 2, .kh = KH, .kw = KW,
                                 .mode = FCONV_MODE_SAME,
                                 .border = (fconv_border)test_rand_int(0, 5), .border_value = 9,
                                 .correlate = corr};
        if (fconv_plan_filter2d(&g, &o, kd, &p) == FCONV_OK) {
            CHECK_EQ_INT(fconv_execute(p, img, NULL, NULL, out), FCONV_OK);
            CHECKF(memcmp(img, out, (size_t)(H * W * 2) * sizeof(float)) == 0,
                   "impulse kernel %lldx%lld %s border %s changed the image", (long long)KH,
                   (long long)KW, corr ? "correlate" : "convolve", border_names[g.border]);
            fconv_plan_destroy(p);
        }

        /* conv2d (a correlation): impulse input, y[p][q] = w[i0 - p][j0 - q]. */
        int64_t R = test_rand_int(1, H), S = test_rand_int(1, W);
        fconv_conv2d_desc c = {.c = 1, .h = H, .w = W, .k = 1, .r = R, .s = S};
        if (fconv_plan_conv2d(&c, &o, k, NULL, &p) == FCONV_OK) {
            CHECK_EQ_INT(fconv_execute(p, x, NULL, NULL, y), FCONV_OK);
            int64_t P = H - R + 1, Q = W - S + 1;
            bad = 0;
            for (int64_t pp = 0; pp < P; pp++)
                for (int64_t q = 0; q < Q; q++) {
                    int64_t a = i0 - pp, b = j0 - q;
                    float want = a >= 0 && a < R && b >= 0 && b < S ? k[a * S + b] : 0;
                    bad += y[pp * Q + q] != want;
                }
            CHECKF(bad == 0, "conv2d impulse: %lld wrong", (long long)bad);
            fconv_plan_destroy(p);
        }

        /* conv1d: impulse at t0 -> full[j] = k[j - t0] (correlate: k[m - 1 - (j - t0)]). */
        int64_t n = test_rand_int(1, 10), m = test_rand_int(1, 10), t0 = test_rand_int(0, n - 1);
        float s[10] = {0};
        s[t0] = 1;
        fconv_conv1d_desc d = {.n = n, .m = m, .mode = FCONV_MODE_FULL, .correlate = corr};
        if (fconv_plan_conv1d(&d, &o, k, &p) == FCONV_OK) {
            CHECK_EQ_INT(fconv_execute(p, s, NULL, NULL, y), FCONV_OK);
            bad = 0;
            for (int64_t j = 0; j < n + m - 1; j++) {
                int64_t t = j - t0;
                float want = t >= 0 && t < m ? (corr ? k[m - 1 - t] : k[t]) : 0;
                bad += y[j] != want;
            }
            CHECKF(bad == 0, "conv1d impulse: %lld wrong", (long long)bad);
            fconv_plan_destroy(p);
        }
    }
}

/* Shifting the input shifts the output, away from the borders. */
static void test_shift_equivariance(void) {
    fconv_options o = {.algo = FCONV_ALGO_REFERENCE, .threads = 1};
    for (int iter = 0; iter < 30; iter++) {
        int64_t H = test_rand_int(6, 14), W = test_rand_int(6, 14), C = test_rand_int(1, 2);
        int64_t KH = test_rand_int(1, 4), KW = test_rand_int(1, 4);
        int64_t dy = test_rand_int(0, 2), dx = test_rand_int(0, 2);
        float x1[14 * 14 * 2], x2[14 * 14 * 2], k[16], y1[14 * 14 * 2], y2[14 * 14 * 2];
        test_fill_random(x1, (size_t)(H * W * C));
        test_fill_random(x2, (size_t)(H * W * C));
        test_fill_random(k, (size_t)(KH * KW));
        for (int64_t i = dy; i < H; i++)
            for (int64_t j = dx; j < W; j++)
                for (int64_t c = 0; c < C; c++)
                    x2[(i * W + j) * C + c] = x1[((i - dy) * W + (j - dx)) * C + c];
        /* filter2d, valid mode: y2[i + dy][j + dx] = y1[i][j] wherever both windows lie in
         * the shifted region. Any border (valid mode never reads it). */
        fconv_filter2d_desc f = {.h = H, .w = W, .channels = C, .kh = KH, .kw = KW,
                                 .mode = FCONV_MODE_VALID};
        f.border = (fconv_border)test_rand_int(0, 5);
        f.correlate = (int)test_rand_int(0, 1);
        fconv_plan *p = NULL;
        if (fconv_plan_filter2d(&f, &o, k, &p) == FCONV_OK) {
            CHECK_EQ_INT(fconv_execute(p, x1, NULL, NULL, y1), FCONV_OK);
            CHECK_EQ_INT(fconv_execute(p, x2, NULL, NULL, y2), FCONV_OK);
            int64_t OH = H - KH + 1, OW = W - KW + 1, bad = 0;
            for (int64_t i = 0; i + dy < OH; i++)
                for (int64_t j = 0; j + dx < OW; j++)
                    for (int64_t c = 0; c < C; c++)
                        bad += y2[((i + dy) * OW + j + dx) * C + c] != y1[(i * OW + j) * C + c];
            CHECKF(bad == 0, "filter2d shift (%lld, %lld): %lld outputs differ", (long long)dy,
                   (long long)dx, (long long)bad);
            fconv_plan_destroy(p);
        }
        /* conv2d, stride 1 or 2, shift by a multiple of the stride, with padding: compare
         * the outputs whose windows lie inside the image in both. */
        int64_t st = test_rand_int(1, 2);
        if (dy % st || dx % st) continue;
        fconv_conv2d_desc c = {.c = C, .h = H, .w = W, .k = 1, .r = KH, .s = KW, .stride_h = st,
                               .stride_w = st, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
                               .pad_right = 1};
        if (fconv_plan_conv2d(&c, &o, NULL, NULL, &p) != FCONV_OK) continue;
        /* conv2d is NCHW: relayout x1/x2 (HWC) into CHW. */
        float a1[14 * 14 * 2], a2[14 * 14 * 2], kw[32];
        for (int64_t ch = 0; ch < C; ch++)
            for (int64_t i = 0; i < H * W; i++) {
                a1[ch * H * W + i] = x1[i * C + ch];
                a2[ch * H * W + i] = x2[i * C + ch];
            }
        test_fill_random(kw, (size_t)(C * KH * KW));
        CHECK_EQ_INT(fconv_execute(p, a1, kw, NULL, y1), FCONV_OK);
        CHECK_EQ_INT(fconv_execute(p, a2, kw, NULL, y2), FCONV_OK);
        int64_t shape[4];
        fconv_plan_output_shape(p, shape);
        int64_t P = shape[2], Q = shape[3], bad = 0;
        for (int64_t pp = 0; pp < P; pp++)
            for (int64_t q = 0; q < Q; q++) {
                int64_t top = pp * st - 1, left = q * st - 1; /* window origin in x1 */
                int64_t pp2 = pp + dy / st, q2 = q + dx / st;
                if (top < 0 || left < 0 || top + KH > H - dy || left + KW > W - dx) continue;
                if (pp2 >= P || q2 >= Q) continue;
                bad += y2[pp2 * Q + q2] != y1[pp * Q + q];
            }
        CHECKF(bad == 0, "conv2d shift (%lld, %lld) stride %lld: %lld outputs differ",
               (long long)dy, (long long)dx, (long long)st, (long long)bad);
        fconv_plan_destroy(p);
    }
}

/* fconv_ref_filter_at and fconv_ref_conv2d_at directly (the entry points bench uses). */
static void test_ref_entry_points(void) {
    const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, k[4] = {1, 2, 3, 4};
    fconv_options o = {.algo = FCONV_ALGO_REFERENCE};
    fconv_filter2d_desc f = {.h = 3, .w = 3, .kh = 2, .kw = 2, .mode = FCONV_MODE_VALID};
    fconv_plan *p = NULL;
    if (fconv_plan_filter2d(&f, &o, NULL, &p) == FCONV_OK) {
        double m = -1;
        double v = fconv_ref_filter_at(p, x, k, 1, 0, 0, &m);
        CHECK(v == 53);
        CHECK(m == 53); /* all terms positive */
        CHECK(fconv_ref_filter_at(p, x, k, 0, 1, 0, NULL) == 33);
        fconv_plan_destroy(p);
    }
    const float xs[9] = {1, -2, 3, -4, 5, -6, 7, -8, 9};
    fconv_conv2d_desc c = {.c = 1, .h = 3, .w = 3, .k = 1, .r = 2, .s = 2, .has_bias = 1};
    const float b[1] = {-0.5f};
    if (fconv_plan_conv2d(&c, &o, NULL, NULL, &p) == FCONV_OK) {
        double m = -1;
        /* y[0][0] = -0.5 + 1*1 - 2*2 - 4*3 + 5*4 = 4.5; magnitude 0.5 + 1 + 4 + 12 + 20. */
        double v = fconv_ref_conv2d_at(p, xs, k, b, 0, 0, 0, 0, &m);
        CHECK(v == 4.5);
        CHECK(m == 37.5);
        fconv_plan_destroy(p);
    }
}

int main(void) {
    test_init();
    TEST(test_numpy_pad);
    TEST(test_hand_filter2d);
    TEST(test_hand_conv2d);
    TEST(test_hand_conv1d);
    TEST(test_ref_entry_points);
    TEST(test_random_conv2d);
    TEST(test_random_filter2d);
    TEST(test_filter2d_grid);
    TEST(test_random_conv1d);
    TEST(test_larger);
    TEST(test_linearity);
    TEST(test_impulses);
    TEST(test_shift_equivariance);
    if (getenv("FCONV_TEST_VERBOSE"))
        fprintf(stderr, "test_reference: %d cases against the independent implementations\n",
                cases_checked);
    return test_finish();
}
