/*
 * conv2d-pointwise.h — a 1x1, stride-1, unpadded conv2d, which needs no lowering: the input
 * of one image and group already is the column matrix, so the layer is one GEMM per image
 * and group. im2col and MEC both serve it this way; im2col's other layers share the
 * per-group product and epilogue.
 */
#ifndef FCONV_CONV2D_POINTWISE_H
#define FCONV_CONV2D_POINTWISE_H

#include "core/internal.h"

/* Image n, group g of a conv2d whose column matrix cols (depth x pixels, row-major) is at
 * hand: Y[n][g] = W_g · cols (fconv_gemm on the plan's threads), then bias and ReLU. For a
 * 1x1 layer cols is the input itself; im2col passes its lowered matrix. */
void fconv_conv2d_gemm_group(const fconv_plan *plan, int64_t n, int64_t g, const float *cols, int64_t depth,
                             int64_t pixels, const float *w, const float *bias, float *y);

/* Whether the plan is such a layer (any batch, groups, bias or activation). */
int fconv_conv2d_is_pointwise(const fconv_plan *plan);

/* Y[n][g] = W_g · X[n][g] for every image n and group g (fconv_gemm on the plan's threads),
 * then bias and ReLU; no workspace. Only for plans fconv_conv2d_is_pointwise accepts. */
void fconv_conv2d_pointwise(const fconv_plan *plan, const float *x, const float *w, const float *bias,
                            float *y);

#endif
