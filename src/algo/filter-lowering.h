/*
 * filter-lowering.h — filter2d (and conv1d, which is stored as a one-row filter2d) as a
 * 'valid' correlation over a border-extended image, so that algorithms written for the
 * conv2d form (im2col, MEC, Winograd, FFT, ...) serve every mode and border:
 *
 *   P[ch][i][j] = xe[i + off_h - (KH-1)][j + off_w - (KW-1)],  i < OH+KH-1, j < OW+KW-1
 *   y[i][j][ch] = sum_{a,b} kc[a][b] * P[ch][i+a][j+b]
 *
 * where xe is the input extended by the plan's border and kc the kernel in correlation
 * orientation (the convolution kernel flipped; a --correlate kernel as given).
 * In conv2d terms: n = CH images, c = k = 1, H = OH+KH-1, W = OW+KW-1, R = KH, S = KW,
 * no padding, stride 1 (fconv_filter_as_conv2d).
 */
#ifndef FCONV_FILTER_LOWERING_H
#define FCONV_FILTER_LOWERING_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"

/* Height and width of P. */
static inline int64_t fconv_filter_padded_h(const fconv_plan *plan) {
    return plan->out_h + plan->filter.kh - 1;
}
static inline int64_t fconv_filter_padded_w(const fconv_plan *plan) {
    return plan->out_w + plan->filter.kw - 1;
}

/* Bytes of P for all channels. */
size_t fconv_filter_padded_bytes(const fconv_plan *plan);

/* Write P (planar: [CH][PH][PW]) from the interleaved input x[H][W][CH], on the plan's threads. */
void fconv_filter_pad_planar(const fconv_plan *plan, const float *x, float *padded);

/* Write kc[KH][KW], the kernel in correlation orientation. */
void fconv_filter_correlation_kernel(const fconv_plan *plan, const float *w, float *kc);

/* Interleave planar results [CH][OH][OW] into y[OH][OW][CH] (a copy when CH == 1), on the
 * plan's threads. */
void fconv_filter_interleave_output(const fconv_plan *plan, const float *planar, float *y);

/* Write one channel's planar result [OH][OW] into channel ch of y[OH][OW][CH], on the plan's
 * threads (for algorithms that finish one channel at a time). */
void fconv_filter_interleave_channel(const fconv_plan *plan, const float *planar, int64_t ch,
                                     float *y);

/* The conv2d problem the lowered filter is (see above). */
fconv_conv2d_desc fconv_filter_as_conv2d(const fconv_plan *plan);

#endif
