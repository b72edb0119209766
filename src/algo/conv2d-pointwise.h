/*
 * conv2d-pointwise.h — a 1x1, stride-1, unpadded conv2d, which needs no lowering: the input
 * of one image and group already is the column matrix, so the layer is one GEMM per image
 * and group. im2col and MEC both serve it this way; im2col's other layers share the
 * per-group product, its packed weights and the epilogue.
 *
 * The weights go to the GEMM packed (kernels/gemm/gemm.h, fconv_gemm_pack_a): once at plan
 * time when the plan holds them, else one group at a time into the workspace at every
 * execute. Both pack the same panels and the product never depends on the thread count,
 * so plan-time and execute-time weights give the same bits on any number of threads.
 */
#ifndef FCONV_CONV2D_POINTWISE_H
#define FCONV_CONV2D_POINTWISE_H

#include "core/internal.h"

/* Whether the plan is such a layer (any batch, groups, bias or activation). */
int fconv_conv2d_is_pointwise(const fconv_plan *plan);

/* Plan-time weights (plan->weights: per group a kg x depth matrix) packed for every group,
 * one after the other, into plan->algo_state (fconv_alloc_aligned; the algorithm's
 * release() frees it with fconv_free_aligned), left NULL when the plan holds no weights.
 * FCONV_ENOMEM if that memory cannot be had. For im2col's and MEC's prepare(). */
fconv_status fconv_conv2d_pack_weights(fconv_plan *plan, int64_t depth);

/* Workspace bytes for one group's packed weights when they come at execute time (0 when
 * the plan holds them). */
size_t fconv_conv2d_packed_group_bytes(const fconv_plan *plan, int64_t depth);

/* Group g's packed weights: from the plan's (the `packed` fconv_conv2d_pack_weights made),
 * or, when that is NULL, packed from w into scratch (fconv_conv2d_packed_group_bytes). */
const float *fconv_conv2d_group_weights(const fconv_plan *plan, int64_t g, int64_t depth, const float *w,
                                        const float *packed, float *scratch);

/* Image n, group g of a conv2d whose column matrix cols (depth x pixels, row-major) is at
 * hand: Y[n][g] = W_g · cols on the plan's threads from W_g packed (wg, from
 * fconv_conv2d_group_weights), bias and ReLU applied as C is stored. For a 1x1 layer cols is the input
 * itself; im2col passes its lowered matrix. */
void fconv_conv2d_gemm_group(const fconv_plan *plan, int64_t n, int64_t g, const float *cols, int64_t depth,
                             int64_t pixels, const float *wg, const float *bias, float *y);

/* Whether fconv_conv2d_gemm_group writes Y through non-temporal stores: where the layer's
 * whole output (every image) takes at least 8 MiB, so it would not stay cached for whoever
 * reads it next anyway, and every output plane (`pixels` floats) starts on a vector
 * boundary (bias and ReLU ride on the stores). For the cost models. */
int fconv_conv2d_gemm_streams(const fconv_plan *plan, int64_t pixels);

/* Estimated seconds of fconv_conv2d_pointwise on the plan's threads (im2col's and MEC's
 * cost for such layers). */
double fconv_conv2d_pointwise_seconds(const fconv_plan *plan);

/* Y[n][g] = W_g · X[n][g] for every image n and group g (on the plan's threads), then bias
 * and ReLU: with one group and a batch the threads divide, an image per thread at a time,
 * each image's GEMM on its thread alone; else image by image, each GEMM split over the
 * threads. packed and scratch as for fconv_conv2d_group_weights (scratch: the workspace).
 * Only for plans fconv_conv2d_is_pointwise accepts. */
void fconv_conv2d_pointwise(const fconv_plan *plan, const float *x, const float *w, const float *packed,
                            const float *bias, float *y, void *scratch);

#endif
