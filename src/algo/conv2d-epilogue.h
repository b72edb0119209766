/*
 * conv2d-epilogue.h — the pass GEMM-based conv2d drivers run after their product: add the
 * bias and apply ReLU to an output block y[K'][pixels], one task per output channel.
 */
#ifndef FCONV_CONV2D_EPILOGUE_H
#define FCONV_CONV2D_EPILOGUE_H

#include <stdint.h>

/* y[k][i] = act(y[k][i] + bias[k]) for k < channels (bias may be NULL). NaN stays NaN. */
void fconv_conv2d_bias_relu(int threads, float *y, int64_t channels, int64_t pixels,
                            const float *bias, int relu);

#endif
