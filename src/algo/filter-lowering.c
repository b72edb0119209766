/*
 * filter-lowering.c — builds the border-extended planar image and the correlation kernel
 * of filter-lowering.h. Rows are independent, so padding runs one task per padded row.
 */
#include <string.h>

#include "algo/filter-lowering.h"
#include "core/border.h"
#include "core/parallel.h"

size_t fconv_filter_padded_bytes(const fconv_plan *plan) {
    return (size_t)fconv_filter_padded_h(plan) * (size_t)fconv_filter_padded_w(plan) *
           (size_t)plan->filter.channels * sizeof(float);
}

struct pad_ctx {
    const fconv_plan *plan;
    const float *x;
    float *padded;
    int64_t ph, pw;
};

static void pad_row_task(const void *vctx, size_t row) {
    const struct pad_ctx *c = vctx;
    const fconv_filter2d_desc *d = &c->plan->filter;
    int64_t ch = (int64_t)row / c->ph, i = (int64_t)row % c->ph;
    int64_t src_row = fconv_border_index(d->border, i + c->plan->off_h - (d->kh - 1), d->h);
    float *dst = c->padded + (ch * c->ph + i) * c->pw;
    float constant = d->border == FCONV_BORDER_CONSTANT ? d->border_value : 0.0f;
    int64_t col0 = c->plan->off_w - (d->kw - 1);
    if (src_row < 0) {
        for (int64_t j = 0; j < c->pw; j++) dst[j] = constant;
        return;
    }
    const float *src = c->x + src_row * d->w * d->channels + ch;
    for (int64_t j = 0; j < c->pw; j++) {
        int64_t col = col0 + j;
        if (col >= 0 && col < d->w) {
            dst[j] = src[col * d->channels];
        } else {
            int64_t k = fconv_border_index(d->border, col, d->w);
            dst[j] = k < 0 ? constant : src[k * d->channels];
        }
    }
}

void fconv_filter_pad_planar(const fconv_plan *plan, const float *x, float *padded) {
    struct pad_ctx c = {plan, x, padded, fconv_filter_padded_h(plan), fconv_filter_padded_w(plan)};
    fconv_parallel_1d(plan->threads, (size_t)(c.ph * plan->filter.channels), pad_row_task, &c);
}

void fconv_filter_correlation_kernel(const fconv_plan *plan, const float *w, float *kc) {
    const fconv_filter2d_desc *d = &plan->filter;
    int64_t n = d->kh * d->kw;
    for (int64_t i = 0; i < n; i++) kc[i] = d->correlate ? w[i] : w[n - 1 - i];
}

struct interleave_ctx {
    const float *planar; /* one channel's [OH][OW] */
    float *y;
    int64_t ow, channels, ch;
};

static void interleave_row_task(const void *vctx, size_t i) {
    const struct interleave_ctx *c = vctx;
    const float *restrict src = c->planar + (int64_t)i * c->ow;
    float *restrict dst = c->y + (int64_t)i * c->ow * c->channels + c->ch;
    for (int64_t j = 0; j < c->ow; j++) dst[j * c->channels] = src[j];
}

void fconv_filter_interleave_channel(const fconv_plan *plan, const float *planar, int64_t ch,
                                     float *y) {
    struct interleave_ctx c = {planar, y, plan->out_w, plan->filter.channels, ch};
    fconv_parallel_1d(plan->threads, (size_t)plan->out_h, interleave_row_task, &c);
}

void fconv_filter_interleave_output(const fconv_plan *plan, const float *planar, float *y) {
    int64_t channels = plan->filter.channels, pixels = plan->out_h * plan->out_w;
    if (channels == 1) {
        memcpy(y, planar, (size_t)pixels * sizeof *y);
        return;
    }
    for (int64_t ch = 0; ch < channels; ch++)
        fconv_filter_interleave_channel(plan, planar + ch * pixels, ch, y);
}

fconv_conv2d_desc fconv_filter_as_conv2d(const fconv_plan *plan) {
    return (fconv_conv2d_desc){.n = plan->filter.channels, .c = 1, .k = 1,
                               .h = fconv_filter_padded_h(plan), .w = fconv_filter_padded_w(plan),
                               .r = plan->filter.kh, .s = plan->filter.kw, .stride_h = 1,
                               .stride_w = 1, .dilation_h = 1, .dilation_w = 1, .groups = 1};
}
