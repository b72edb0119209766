/*
 * conv2d-pointwise.c — the 1x1 conv2d as one GEMM per image and group, and that per-group
 * product with its epilogue (see the header).
 * fconv_gemm's sums do not depend on the thread count, so neither does the result.
 */
#include "algo/conv2d-pointwise.h"

#include "algo/conv2d-epilogue.h"
#include "kernels/gemm/gemm.h"

int fconv_conv2d_is_pointwise(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    return plan->kind == FCONV_KIND_CONV2D && d->r == 1 && d->s == 1 && d->stride_h == 1 &&
           d->stride_w == 1 && d->pad_top == 0 && d->pad_left == 0 && d->pad_bottom == 0 &&
           d->pad_right == 0;
}

void fconv_conv2d_gemm_group(const fconv_plan *plan, int64_t n, int64_t g, const float *cols, int64_t depth,
                             int64_t pixels, const float *w, const float *bias, float *y) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    int64_t kg = d->k / d->groups;
    int relu = d->activation == FCONV_ACTIVATION_RELU;
    float *yg = y + (n * d->k + g * kg) * pixels;
    fconv_gemm(plan->threads, 0, 0, (size_t)kg, (size_t)pixels, (size_t)depth, w + g * kg * depth,
               (size_t)depth, cols, (size_t)pixels, 0, yg, (size_t)pixels);
    if (bias || relu)
        fconv_conv2d_bias_relu(plan->threads, yg, kg, pixels, bias ? bias + g * kg : NULL, relu);
}

void fconv_conv2d_pointwise(const fconv_plan *plan, const float *x, const float *w, const float *bias,
                            float *y) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    int64_t cg = d->c / d->groups, pixels = d->h * d->w;
    for (int64_t n = 0; n < d->n; n++)
        for (int64_t g = 0; g < d->groups; g++)
            fconv_conv2d_gemm_group(plan, n, g, x + (n * d->c + g * cg) * pixels, cg, pixels, w, bias, y);
}
