/*
 * winograd-tiles.c — the float32 tile transforms of F(2x2,3x3), F(4x4,3x3) and F(6x6,3x3):
 * V = B^T d B for input tiles and A^T M A for output tiles, on many tiles at once in the
 * tile-minor layout (algo/winograd.h), the matrices of algo/winograd-transforms.c factored by
 * hand into straight-line code per tile. The loops run over tiles with unit stride and are
 * vectorized by the compiler, so this file is compiled once per ISA (8 or 16 tiles per
 * instruction instead of SSE2's 4); contracts: fconv_wino_input_fn, fconv_wino_output_fn.
 * test_algo_winograd.c checks every ISA's transforms against the float64 matrices.
 */
#include "core/dispatch.h"
#include "simd/vec.h"

/* ---- the 1D transforms ------------------------------------------------------------------------
 * B^T d and A^T m for one column of tiles: d_k is the vector of tiles at src + k*src_step,
 * output row i goes to dst + i*dst_step. Each is the matrix above with common terms shared
 * (the factorisation NNPACK uses); straight-line code per tile, so the loop over tiles
 * vectorizes. test_algo_winograd.c checks each against the float64 matrices. */
/* Kept out of line (inlined into the 2D loops, GCC stops vectorizing them). The rows of
 * src and dst never overlap (steps >= ncols), which ivdep tells GCC: otherwise it needs more
 * run-time alias checks than it allows and leaves the loop scalar. */
#if defined(__GNUC__)
#define TRANSFORM_1D static __attribute__((noinline)) void
#define TILE_LOOP _Pragma("GCC ivdep") for
#else
#define TRANSFORM_1D static void
#define TILE_LOOP for
#endif
#define ROWS4 const float *s0 = src, *s1 = s0 + src_step, *s2 = s1 + src_step, *s3 = s2 + src_step
#define ROWS6 ROWS4; const float *s4 = s3 + src_step, *s5 = s4 + src_step
#define ROWS8 ROWS6; const float *s6 = s5 + src_step, *s7 = s6 + src_step
#define LOAD(k) const float d##k = s##k[t]
#define STORE(i, v) dst[(i) * dst_step + t] = (v)

TRANSFORM_1D input_1d_f2(const float *restrict src, size_t src_step, float *restrict dst,
                               size_t dst_step, size_t ncols) {
    ROWS4;
    TILE_LOOP (size_t t = 0; t < ncols; t++) {
        LOAD(0); LOAD(1); LOAD(2); LOAD(3);
        STORE(0, d0 - d2);
        STORE(1, d1 + d2);
        STORE(2, d2 - d1);
        STORE(3, d1 - d3);
    }
}

TRANSFORM_1D output_1d_f2(const float *restrict src, size_t src_step, float *restrict dst,
                                size_t dst_step, size_t ncols) {
    ROWS4;
    TILE_LOOP (size_t t = 0; t < ncols; t++) {
        LOAD(0); LOAD(1); LOAD(2); LOAD(3);
        STORE(0, d0 + d1 + d2);
        STORE(1, d1 - d2 - d3);
    }
}

TRANSFORM_1D input_1d_f4(const float *restrict src, size_t src_step, float *restrict dst,
                               size_t dst_step, size_t ncols) {
    ROWS6;
    TILE_LOOP (size_t t = 0; t < ncols; t++) {
        LOAD(0); LOAD(1); LOAD(2); LOAD(3); LOAD(4); LOAD(5);
        float s34 = d3 + d4, s12 = d1 + d2, t43 = d4 - d3, t12 = d1 - d2;
        float t42 = d4 - d2, t31 = d3 - d1;
        STORE(0, 4.0f * (d0 - d2) + (d4 - d2)); /* = 4d0 - 5d2 + d4, fewer roundings of big terms */
        STORE(1, s34 - 4.0f * s12);
        STORE(2, t43 + 4.0f * t12);
        STORE(3, t42 + 2.0f * t31);
        STORE(4, t42 - 2.0f * t31);
        STORE(5, 4.0f * (d1 - d3) + (d5 - d3));
    }
}

TRANSFORM_1D output_1d_f4(const float *restrict src, size_t src_step, float *restrict dst,
                                size_t dst_step, size_t ncols) {
    ROWS6;
    TILE_LOOP (size_t t = 0; t < ncols; t++) {
        LOAD(0); LOAD(1); LOAD(2); LOAD(3); LOAD(4); LOAD(5);
        float s12 = d1 + d2, t12 = d1 - d2, s34 = d3 + d4, t34 = d3 - d4;
        STORE(0, d0 + s12 + s34);
        STORE(1, t12 + 2.0f * t34);
        STORE(2, s12 + 4.0f * s34);
        STORE(3, t12 + 8.0f * t34 + d5);
    }
}

TRANSFORM_1D input_1d_f6(const float *restrict src, size_t src_step, float *restrict dst,
                               size_t dst_step, size_t ncols) {
    ROWS8;
    TILE_LOOP (size_t t = 0; t < ncols; t++) {
        LOAD(0); LOAD(1); LOAD(2); LOAD(3); LOAD(4); LOAD(5); LOAD(6); LOAD(7);
        float e1 = d2 + d6 - 4.25f * d4, o1 = d1 + d5 - 4.25f * d3;  /* points ±1 */
        float e2 = 0.25f * d2 - 1.25f * d4 + d6;                       /* ±1/2 */
        float o2 = 0.5f * d1 - 2.5f * d3 + 2.0f * d5;
        float e3 = 4.0f * d2 - 5.0f * d4 + d6;                         /* ±2 */
        float o3 = 2.0f * d1 - 2.5f * d3 + 0.5f * d5;
        STORE(0, d0 - d6 + 5.25f * (d4 - d2));
        STORE(1, e1 + o1);
        STORE(2, e1 - o1);
        STORE(3, e2 + o2);
        STORE(4, e2 - o2);
        STORE(5, e3 + o3);
        STORE(6, e3 - o3);
        STORE(7, d7 - d1 + 5.25f * (d3 - d5));
    }
}

TRANSFORM_1D output_1d_f6(const float *restrict src, size_t src_step, float *restrict dst,
                                size_t dst_step, size_t ncols) {
    ROWS8;
    TILE_LOOP (size_t t = 0; t < ncols; t++) {
        LOAD(0); LOAD(1); LOAD(2); LOAD(3); LOAD(4); LOAD(5); LOAD(6); LOAD(7);
        float s12 = d1 + d2, t12 = d1 - d2, s34 = d3 + d4, t34 = d3 - d4;
        float s56 = d5 + d6, t56 = d5 - d6;
        STORE(0, d0 + s12 + s34 + s56);
        STORE(1, t12 + 2.0f * t34 + 0.5f * t56);
        STORE(2, s12 + 4.0f * s34 + 0.25f * s56);
        STORE(3, t12 + 8.0f * t34 + 0.125f * t56);
        STORE(4, s12 + 16.0f * s34 + 0.0625f * s56);
        STORE(5, t12 + 32.0f * t34 + 0.03125f * t56 + d7);
    }
}

#undef ROWS4
#undef ROWS6
#undef ROWS8
#undef LOAD
#undef STORE
#undef TRANSFORM_1D
#undef TILE_LOOP

/* The 2D transforms, one per tile size: V = B^T d B (columns of d, then rows of tmp) and
 * out = A^T M A (columns of M into an m x alpha tmp, then its rows). */
#define DEFINE_TRANSFORMS(M, ALPHA)                                                           \
    void FCONV_ISA_SUFFIX(fconv_wino_input_f##M)(const float *d, float *tmp, float *v, size_t v_step, size_t ld,   \
                           size_t ncols) {                                                    \
        for (size_t j = 0; j < ALPHA; j++)                                                    \
            input_1d_f##M(d + j * ld, ALPHA * ld, tmp + j * ld, ALPHA * ld, ncols);           \
        for (size_t i = 0; i < ALPHA; i++)                                                    \
            input_1d_f##M(tmp + i * ALPHA * ld, ld, v + i * ALPHA * v_step, v_step, ncols);   \
    }                                                                                         \
    void FCONV_ISA_SUFFIX(fconv_wino_output_f##M)(const float *mm, size_t m_step, float *tmp, float *out, size_t ld,\
                            size_t ncols) {                                                   \
        for (size_t nu = 0; nu < ALPHA; nu++)                                                 \
            output_1d_f##M(mm + nu * m_step, ALPHA * m_step, tmp + nu * ld, ALPHA * ld, ncols);\
        for (size_t i = 0; i < M; i++)                                                        \
            output_1d_f##M(tmp + i * ALPHA * ld, ld, out + i * M * ld, ld, ncols);            \
    }

DEFINE_TRANSFORMS(2, 4)
DEFINE_TRANSFORMS(4, 6)
DEFINE_TRANSFORMS(6, 8)

