/*
 * conv2d-epilogue.c — bias and ReLU in one pass over each output channel (see the header).
 * Each channel is one task, so the result does not depend on the thread count.
 */
#include "algo/conv2d-epilogue.h"
#include "core/parallel.h"

struct epilogue_ctx {
    float *y;
    const float *bias; /* or NULL */
    int64_t pixels;
    int relu;
};

static void epilogue_task(const void *vctx, size_t k) {
    const struct epilogue_ctx *e = vctx;
    float *restrict row = e->y + (int64_t)k * e->pixels;
    float b = e->bias ? e->bias[k] : 0.0f;
    if (e->relu) {
        for (int64_t i = 0; i < e->pixels; i++) {
            float v = row[i] + b;
            row[i] = v < 0.0f ? 0.0f : v; /* NaN < 0 is false: NaN stays */
        }
    } else {
        for (int64_t i = 0; i < e->pixels; i++) row[i] += b;
    }
}

void fconv_conv2d_bias_relu(int threads, float *y, int64_t channels, int64_t pixels,
                            const float *bias, int relu) {
    struct epilogue_ctx e = {y, bias, pixels, relu};
    fconv_parallel_1d(threads, (size_t)channels, epilogue_task, &e);
}
