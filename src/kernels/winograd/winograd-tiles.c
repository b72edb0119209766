/*
 * winograd-tiles.c — the float32 tile transforms of F(2x2,3x3), F(4x4,3x3) and F(6x6,3x3),
 * and the output transform of F(3x3,4x4) (its input transform is F(4x4,3x3)'s):
 * V = B^T d B for input tiles and A^T M A for output tiles, on many tiles at once in the
 * tile-minor layout (algo/winograd.h), VF_LANES tiles per vector. Each 2D transform is one
 * loop over tile vectors in straight-line vector code: a row's 1D transform from its loads
 * into registers, then the column transforms from those registers into the stores. (The
 * earlier form, twelve out-of-line 1D passes over a scratch array per channel, spent most
 * of its time in loop set-up on 16-tile slivers: ~350 cycles per 16 F(4x4) tiles against
 * ~120 now, and the input transform was a fifth of a 28x28 layer's time.) Compiled once per
 * ISA; contracts: fconv_wino_input_fn, fconv_wino_output_fn. test_algo_winograd.c checks
 * every ISA's transforms against the float64 matrices.
 */
#include <math.h>

#include "core/dispatch.h"
#include "simd/vec.h"

#include "kernels/winograd/winograd-1d.h"

/* ---- the 2D transforms, one pair per tile size ------------------------------------------------
 * Both are one shape: NIN x NIN elements in (element (i, j) at src + i*src_row + j*src_col),
 * each row's 1D transform T1D into registers (r[i][.] = row i times the matrix's transpose),
 * then the column transforms of r into NOUT x NOUT elements out (element (i, j) at
 * dst + i*dst_row + j*dst_col), each vector through STORE. Input: NIN = NOUT = alpha,
 * V = B^T d B. Output: NIN = alpha, NOUT = m, out = A^T M A. */
#define TRANSFORM_2D(T1D, NIN, NOUT, src, src_row, src_col, dst, dst_row, dst_col, ncols, STORE)              \
    for (size_t t = 0; t < (ncols); t += VF_LANES) {                                                      \
        vf r[NIN][NOUT];                                                                                  \
        UNROLLED (size_t i = 0; i < (NIN); i++) {                                                         \
            vf row[NIN];                                                                                  \
            UNROLLED (size_t j = 0; j < (NIN); j++) row[j] = vf_loadu((src) + i * (src_row) + j * (src_col) + t); \
            T1D(row, r[i]);                                                                               \
        }                                                                                                 \
        UNROLLED (size_t j = 0; j < (NOUT); j++) {                                                        \
            vf col[NIN], o[NOUT];                                                                         \
            UNROLLED (size_t i = 0; i < (NIN); i++) col[i] = r[i][j];                                     \
            T1D(col, o);                                                                                  \
            UNROLLED (size_t i = 0; i < (NOUT); i++) STORE((dst) + i * (dst_row) + j * (dst_col) + t, o[i], t); \
        }                                                                                                 \
    }

#define STORE_PLAIN(p, v, t) vf_storeu((p), (v))
/* The NHWC epilogue: the lanes are output channels, so lane t's bias is bias[t] (else -0.0,
 * which adds nothing: +0.0 would turn a -0.0 sum into +0.0); max(0, .) with the sum second
 * keeps NaN and -0.0, as every other path's epilogue. Stored plainly, or through
 * non-temporal stores (the channels-last driver's large NHWC outputs). */
#define BIAS_RELU(v, t) vf_max(floor, vf_add((v), bias ? vf_loadu(bias + (t)) : no_bias))
#define STORE_BIAS_RELU(p, v, t) vf_storeu((p), BIAS_RELU(v, t))
#define STREAM_BIAS_RELU(p, v, t) vf_stream((p), BIAS_RELU(v, t))

#define DEFINE_OUTPUT_TRANSFORM(M, ALPHA)                                                                    \
    void FCONV_ISA_SUFFIX(fconv_wino_output_f##M)(const float *mm, size_t m_step, float *out, size_t out_row,   \
                                                  size_t out_col, const float *bias, int relu, int stream,       \
                                                  size_t ncols) {                                                \
        if (!bias && !relu && !stream) {                                                                     \
            TRANSFORM_2D(output_1d_f##M, ALPHA, M, mm, ALPHA * m_step, m_step, out, out_row, out_col, ncols,  \
                         STORE_PLAIN)                                                                        \
            return;                                                                                          \
        }                                                                                                    \
        const vf no_bias = vf_set1(-0.0f), floor = vf_set1(relu ? 0.0f : -INFINITY);                     \
        if (stream) {                                                                                        \
            TRANSFORM_2D(output_1d_f##M, ALPHA, M, mm, ALPHA * m_step, m_step, out, out_row, out_col, ncols,  \
                         STREAM_BIAS_RELU)                                                                   \
            return;                                                                                          \
        }                                                                                                    \
        TRANSFORM_2D(output_1d_f##M, ALPHA, M, mm, ALPHA * m_step, m_step, out, out_row, out_col, ncols,      \
                     STORE_BIAS_RELU)                                                                        \
    }
#define DEFINE_TRANSFORMS(M, ALPHA)                                                                          \
    void FCONV_ISA_SUFFIX(fconv_wino_input_f##M)(const float *d, size_t d_row, size_t d_col, float *v,       \
                                                 size_t v_step, size_t ncols) {                              \
        TRANSFORM_2D(input_1d_f##M, ALPHA, ALPHA, d, d_row, d_col, v, ALPHA * v_step, v_step, ncols,          \
                     STORE_PLAIN)                                                                            \
    }                                                                                                        \
    DEFINE_OUTPUT_TRANSFORM(M, ALPHA)

DEFINE_TRANSFORMS(2, 4)
DEFINE_TRANSFORMS(4, 6)
DEFINE_TRANSFORMS(6, 8)
DEFINE_OUTPUT_TRANSFORM(3, 6)
