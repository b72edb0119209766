/*
 * conv-ref.h — the reference: obviously correct loops with float64 accumulation, the oracle
 * every algorithm is tested against. Each function computes one output element and the
 * magnitude sum |bias| + sum |x * w| of its terms (DESIGN.md §4's error normalizer), so the
 * tests and `fastconv bench` can check a sample of outputs of a huge problem.
 * The plan must be valid (made by fconv_plan_*); no argument is checked here.
 */
#ifndef FCONV_CONV_REF_H
#define FCONV_CONV_REF_H

#include <stdint.h>

#include "fastconv.h"

/* conv2d output y[n][k][p][q] before the activation; *magnitude may be NULL. */
double fconv_ref_conv2d_at(const fconv_plan *plan, const float *x, const float *w,
                           const float *bias, int64_t n, int64_t k, int64_t p, int64_t q,
                           double *magnitude);

/* filter2d / conv1d output y[i][j][ch] (conv1d: i = 0, ch = 0); *magnitude may be NULL. */
double fconv_ref_filter_at(const fconv_plan *plan, const float *x, const float *w, int64_t i,
                           int64_t j, int64_t ch, double *magnitude);

/* The output element at flat C-order index e of the plan's output, after the activation. */
double fconv_ref_output_at(const fconv_plan *plan, const float *x, const float *w,
                           const float *bias, int64_t e, double *magnitude);

/* DESIGN.md §4's normalized error of the plan's output y: max |y - ref| / max magnitude over
 * every `step`-th output (step >= 1) and the last one, or the max error itself when every
 * magnitude is 0. A NaN in y counts as the largest error. *worst (may be NULL) gets the
 * flat index of the largest error. */
double fconv_ref_normalized_error(const fconv_plan *plan, const float *x, const float *w,
                                  const float *bias, const float *y, int64_t step, int64_t *worst);

/* The whole output (float32), on the plan's threads. */
void fconv_ref_execute(const fconv_plan *plan, const float *x, const float *w, const float *bias,
                       float *y);

#endif
