/*
 * conv-ref.c — the reference algorithm: the definitions of DESIGN.md §2 written as loops,
 * one output at a time, float64 accumulation. Slow on purpose: nothing clever to get wrong.
 */
#include <math.h>

#include "ref/conv-ref.h"
#include "core/border.h"
#include "core/internal.h"
#include "core/parallel.h"

double fconv_ref_conv2d_at(const fconv_plan *plan, const float *x, const float *w,
                           const float *bias, int64_t n, int64_t k, int64_t p, int64_t q,
                           double *magnitude) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    int64_t cg = d->c / d->groups, kg = d->k / d->groups, g = k / kg;
    double sum = 0.0, mag = 0.0;
    if (bias) {
        sum = bias[k];
        mag = fabs((double)bias[k]);
    }
    /* x[n][ch][ih][iw] at x_image + ch*ch_step + (ih*W + iw)*px_step */
    const int nhwc = d->layout == FCONV_LAYOUT_NHWC;
    const int64_t ch_step = nhwc ? 1 : d->h * d->w, px_step = nhwc ? d->c : 1;
    for (int64_t c = 0; c < cg; c++) {
        const float *xc = x + n * d->c * d->h * d->w + (g * cg + c) * ch_step;
        const float *wc = w + ((k * cg + c) * d->r) * d->s;
        for (int64_t r = 0; r < d->r; r++) {
            int64_t ih = p * d->stride_h - d->pad_top + r * d->dilation_h;
            if (ih < 0 || ih >= d->h) continue;
            for (int64_t s = 0; s < d->s; s++) {
                int64_t iw = q * d->stride_w - d->pad_left + s * d->dilation_w;
                if (iw < 0 || iw >= d->w) continue;
                double t = (double)xc[(ih * d->w + iw) * px_step] * (double)wc[r * d->s + s];
                sum += t;
                mag += fabs(t);
            }
        }
    }
    if (magnitude) *magnitude = mag;
    return sum;
}

double fconv_ref_filter_at(const fconv_plan *plan, const float *x, const float *w, int64_t i,
                           int64_t j, int64_t ch, double *magnitude) {
    const fconv_filter2d_desc *d = &plan->filter;
    /* full[fi][fj] = sum_{a,b} k[a][b] * xe[fi - a][fj - b]; correlation flips k. */
    int64_t fi = i + plan->off_h, fj = j + plan->off_w;
    double sum = 0.0, mag = 0.0;
    for (int64_t a = 0; a < d->kh; a++) {
        int64_t row = fconv_border_index(d->border, fi - a, d->h);
        for (int64_t b = 0; b < d->kw; b++) {
            int64_t col = fconv_border_index(d->border, fj - b, d->w);
            double v;
            if (row < 0 || col < 0)
                v = d->border == FCONV_BORDER_CONSTANT ? (double)d->border_value : 0.0;
            else
                v = x[(row * d->w + col) * d->channels + ch];
            double kv = d->correlate ? w[(d->kh - 1 - a) * d->kw + (d->kw - 1 - b)]
                                     : w[a * d->kw + b];
            double t = v * kv;
            sum += t;
            mag += fabs(t);
        }
    }
    if (magnitude) *magnitude = mag;
    return sum;
}

double fconv_ref_output_at(const fconv_plan *plan, const float *x, const float *w,
                           const float *bias, int64_t e, double *magnitude) {
    if (plan->kind != FCONV_KIND_CONV2D) {
        int64_t ch = e % plan->filter.channels, pix = e / plan->filter.channels;
        return fconv_ref_filter_at(plan, x, w, pix / plan->out_w, pix % plan->out_w, ch,
                                   magnitude);
    }
    int64_t n, k, p, q;
    if (plan->conv2d.layout == FCONV_LAYOUT_NHWC) {
        k = e % plan->conv2d.k;
        int64_t pix = e / plan->conv2d.k, pixels = plan->out_h * plan->out_w;
        n = pix / pixels;
        p = pix % pixels / plan->out_w;
        q = pix % plan->out_w;
    } else {
        q = e % plan->out_w;
        int64_t rest = e / plan->out_w;
        p = rest % plan->out_h;
        rest /= plan->out_h;
        k = rest % plan->conv2d.k;
        n = rest / plan->conv2d.k;
    }
    double v = fconv_ref_conv2d_at(plan, x, w, bias, n, k, p, q, magnitude);
    if (plan->conv2d.activation == FCONV_ACTIVATION_RELU && v < 0) v = 0; /* NaN stays */
    return v;
}

double fconv_ref_normalized_error(const fconv_plan *plan, const float *x, const float *w,
                                  const float *bias, const float *y, int64_t step, int64_t *worst) {
    double max_err = 0.0, max_mag = 0.0;
    int64_t n = plan->y_elems, at = 0;
    for (int64_t e = 0; e < n; e = e + step < n || e == n - 1 ? e + step : n - 1) {
        double mag, ref = fconv_ref_output_at(plan, x, w, bias, e, &mag);
        double err = fabs((double)y[e] - ref);
        if (!(err <= max_err)) { /* NaN counts as the largest */
            max_err = err;
            at = e;
        }
        if (mag > max_mag) max_mag = mag;
    }
    if (worst) *worst = at;
    return max_mag > 0.0 ? max_err / max_mag : max_err;
}

struct ref_ctx {
    const fconv_plan *plan;
    const float *x, *w, *bias;
    float *y;
    int64_t row_len; /* outputs per task */
};

static void ref_row_task(const void *vctx, size_t row) {
    const struct ref_ctx *c = vctx;
    int64_t base = (int64_t)row * c->row_len;
    for (int64_t e = 0; e < c->row_len; e++)
        c->y[base + e] = (float)fconv_ref_output_at(c->plan, c->x, c->w, c->bias, base + e, NULL);
}

void fconv_ref_execute(const fconv_plan *plan, const float *x, const float *w, const float *bias,
                       float *y) {
    /* One task per output row (conv2d: per (n, k, p), NHWC per (n, p); filter: per output
     * row). */
    int64_t row_len = plan->kind != FCONV_KIND_CONV2D ? plan->out_w * plan->filter.channels
                      : plan->conv2d.layout == FCONV_LAYOUT_NHWC ? plan->out_w * plan->conv2d.k
                                                                 : plan->out_w;
    struct ref_ctx ctx = {plan, x, w, bias, y, row_len};
    fconv_parallel_1d(plan->threads, (size_t)(plan->y_elems / row_len), ref_row_task, &ctx);
}
