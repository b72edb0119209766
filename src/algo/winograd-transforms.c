/*
 * winograd-transforms.c — the matrices of F(2x2,3x3), F(4x4,3x3), F(6x6,3x3) and the tile
 * transforms built from them. The matrices are exact fractions in float64 (the tests check
 * them; the filter transform uses them); the input/output tile transforms are the same
 * matrices factored by hand into float32 straight-line code, checked against them by
 * test_algo_winograd.c. Every transform is elementwise over tiles, so results never
 * depend on how tiles are grouped into blocks.
 */
#include "algo/winograd.h"

/* ---- the matrices --------------------------------------------------------------------
 * Interpolation points: F(2,3) 0, ±1, ∞; F(4,3) 0, ±1, ±2, ∞ (Lavin & Gray 2016);
 * F(6,3) 0, ±1, ±2, ±1/2, ∞ (the set NNPACK and oneDNN use). Row i of B^T, column of A^T
 * and row of G belong to point i; the last one is the point at infinity. */

#define F2_BT {1, 0, -1, 0, \
               0, 1, 1, 0, \
               0, -1, 1, 0, \
               0, 1, 0, -1}
#define F2_G {1, 0, 0, \
              0.5, 0.5, 0.5, \
              0.5, -0.5, 0.5, \
              0, 0, 1}
#define F2_AT {1, 1, 1, 0, \
               0, 1, -1, -1}

#define F4_BT {4, 0, -5, 0, 1, 0, \
               0, -4, -4, 1, 1, 0, \
               0, 4, -4, -1, 1, 0, \
               0, -2, -1, 2, 1, 0, \
               0, 2, -1, -2, 1, 0, \
               0, 4, 0, -5, 0, 1}
#define F4_G {1.0 / 4, 0, 0, \
              -1.0 / 6, -1.0 / 6, -1.0 / 6, \
              -1.0 / 6, 1.0 / 6, -1.0 / 6, \
              1.0 / 24, 1.0 / 12, 1.0 / 6, \
              1.0 / 24, -1.0 / 12, 1.0 / 6, \
              0, 0, 1}
#define F4_AT {1, 1, 1, 1, 1, 0, \
               0, 1, -1, 2, -2, 0, \
               0, 1, 1, 4, 4, 0, \
               0, 1, -1, 8, -8, 1}

#define F6_BT {1, 0, -21.0 / 4, 0, 21.0 / 4, 0, -1, 0, \
               0, 1, 1, -17.0 / 4, -17.0 / 4, 1, 1, 0, \
               0, -1, 1, 17.0 / 4, -17.0 / 4, -1, 1, 0, \
               0, 0.5, 0.25, -2.5, -1.25, 2, 1, 0, \
               0, -0.5, 0.25, 2.5, -1.25, -2, 1, 0, \
               0, 2, 4, -2.5, -5, 0.5, 1, 0, \
               0, -2, 4, 2.5, -5, -0.5, 1, 0, \
               0, -1, 0, 21.0 / 4, 0, -21.0 / 4, 0, 1}
#define F6_G {1, 0, 0, \
              -2.0 / 9, -2.0 / 9, -2.0 / 9, \
              -2.0 / 9, 2.0 / 9, -2.0 / 9, \
              1.0 / 90, 1.0 / 45, 2.0 / 45, \
              1.0 / 90, -1.0 / 45, 2.0 / 45, \
              32.0 / 45, 16.0 / 45, 8.0 / 45, \
              32.0 / 45, -16.0 / 45, 8.0 / 45, \
              0, 0, 1}
#define F6_AT {1, 1, 1, 1, 1, 1, 1, 0, \
               0, 1, -1, 2, -2, 0.5, -0.5, 0, \
               0, 1, 1, 4, 4, 0.25, 0.25, 0, \
               0, 1, -1, 8, -8, 0.125, -0.125, 0, \
               0, 1, 1, 16, 16, 1.0 / 16, 1.0 / 16, 0, \
               0, 1, -1, 32, -32, 1.0 / 32, -1.0 / 32, 1}

static const double f2_bt[] = F2_BT, f2_g[] = F2_G, f2_at[] = F2_AT;
static const double f4_bt[] = F4_BT, f4_g[] = F4_G, f4_at[] = F4_AT;
static const double f6_bt[] = F6_BT, f6_g[] = F6_G, f6_at[] = F6_AT;

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
    static void input_f##M(const float *d, float *tmp, float *v, size_t v_step, size_t ld,   \
                           size_t ncols) {                                                    \
        for (size_t j = 0; j < ALPHA; j++)                                                    \
            input_1d_f##M(d + j * ld, ALPHA * ld, tmp + j * ld, ALPHA * ld, ncols);           \
        for (size_t i = 0; i < ALPHA; i++)                                                    \
            input_1d_f##M(tmp + i * ALPHA * ld, ld, v + i * ALPHA * v_step, v_step, ncols);   \
    }                                                                                         \
    static void output_f##M(const float *mm, size_t m_step, float *tmp, float *out, size_t ld,\
                            size_t ncols) {                                                   \
        for (size_t nu = 0; nu < ALPHA; nu++)                                                 \
            output_1d_f##M(mm + nu * m_step, ALPHA * m_step, tmp + nu * ld, ALPHA * ld, ncols);\
        for (size_t i = 0; i < M; i++)                                                        \
            output_1d_f##M(tmp + i * ALPHA * ld, ld, out + i * M * ld, ld, ncols);            \
    }

DEFINE_TRANSFORMS(2, 4)
DEFINE_TRANSFORMS(4, 6)
DEFINE_TRANSFORMS(6, 8)

static const struct fconv_wino_matrices matrices[3] = {
    {2, 4, f2_bt, f2_g, f2_at, input_f2, output_f2},
    {4, 6, f4_bt, f4_g, f4_at, input_f4, output_f4},
    {6, 8, f6_bt, f6_g, f6_at, input_f6, output_f6},
};

const struct fconv_wino_matrices *fconv_wino_matrices_for(int m) {
    switch (m) {
    case 2: return &matrices[0];
    case 4: return &matrices[1];
    case 6: return &matrices[2];
    default: return NULL;
    }
}

void fconv_wino_transform_filter(const struct fconv_wino_matrices *mat, const float *g,
                                 float *u, size_t u_step) {
    int alpha = mat->alpha;
    double gg[8][3]; /* G g */
    for (int i = 0; i < alpha; i++)
        for (int b = 0; b < 3; b++) {
            double s = 0.0;
            for (int a = 0; a < 3; a++) s += mat->g[i * 3 + a] * (double)g[a * 3 + b];
            gg[i][b] = s;
        }
    for (int i = 0; i < alpha; i++)
        for (int j = 0; j < alpha; j++) {
            double s = 0.0;
            for (int b = 0; b < 3; b++) s += gg[i][b] * mat->g[j * 3 + b];
            u[(size_t)(i * alpha + j) * u_step] = (float)s;
        }
}
