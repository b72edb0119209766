/*
 * winograd-transforms.c — the matrices of F(2x2,3x3), F(4x4,3x3), F(6x6,3x3), F(3x3,4x4) and
 * the filter transform. The matrices are exact fractions in float64 (the tests check them; the filter
 * transform uses them); the input/output tile transforms, the same matrices factored by
 * hand into float32 straight-line code, are per-ISA kernels (kernels/winograd/winograd-tiles.c),
 * checked against them by test_algo_winograd.c.
 */
#include <math.h>

#include "algo/winograd.h"

#include "core/cost-model.h"
#include "core/internal.h"

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

/* F(3,4) on F(4,3)'s points: y_k = sum_a g_a d_(k+a) holds for every k + a < alpha whatever
 * m and r add up to it, so B^T is F(4,3)'s; G and A^T are the same Vandermonde rows, one
 * power longer and shorter (the point at infinity picks g_3 and y_2). */
#define F3_G {1.0 / 4, 0, 0, 0, \
              -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6, \
              -1.0 / 6, 1.0 / 6, -1.0 / 6, 1.0 / 6, \
              1.0 / 24, 1.0 / 12, 1.0 / 6, 1.0 / 3, \
              1.0 / 24, -1.0 / 12, 1.0 / 6, -1.0 / 3, \
              0, 0, 0, 1}
#define F3_AT {1, 1, 1, 1, 1, 0, \
               0, 1, -1, 2, -2, 0, \
               0, 1, 1, 4, 4, 1}

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
static const double f3_g[] = F3_G, f3_at[] = F3_AT;

static const struct fconv_wino_matrices matrices[4] = {
    {2, 3, 4, f2_bt, f2_g, f2_at, 0, 0},
    {4, 3, 6, f4_bt, f4_g, f4_at, 1, 1},
    {6, 3, 8, f6_bt, f6_g, f6_at, 2, 2},
    {3, 4, 6, f4_bt, f3_g, f3_at, 1, 3},
};

const struct fconv_wino_matrices *fconv_wino_matrices_for(int m) {
    switch (m) {
    case 2: return &matrices[0];
    case 4: return &matrices[1];
    case 6: return &matrices[2];
    case 3: return &matrices[3];
    default: return NULL;
    }
}

fconv_status fconv_wino_1d_prepare(fconv_plan *plan, size_t floats, fconv_wino_1d_transform_fn transform,
                                   const char *name) {
    if (!plan->weights) return FCONV_OK;
    float *gw = fconv_alloc_aligned(floats * sizeof(float));
    if (!gw)
        return fconv_fail(FCONV_ENOMEM, "%s: cannot allocate %zu bytes for the transformed weights", name,
                          floats * sizeof(float));
    transform(plan, plan->weights, gw);
    plan->algo_state = gw;
    return FCONV_OK;
}

void fconv_wino_1d_release(fconv_plan *plan) {
    fconv_free_aligned(plan->algo_state);
    plan->algo_state = NULL;
}

double fconv_wino_1d_seconds(const fconv_plan *plan, double t, double tasks) {
    const double threads = (double)plan->threads < tasks ? (double)plan->threads : tasks;
    double work = t / (threads < 1.0 ? 1.0 : threads);
    const double y_bytes = (double)plan->y_elems * sizeof(float);
    if (y_bytes > FCONV_LLC_BYTES) work = fmax(work, y_bytes / 50e9);
    return work + (threads > 1.0 ? FCONV_PARALLEL_REGION_SECONDS : 0.0);
}

void fconv_wino_transform_filter(const struct fconv_wino_matrices *mat, const float *g,
                                 float *u, size_t u_step) {
    int alpha = mat->alpha, r = mat->r;
    double gg[8][4]; /* G g */
    for (int i = 0; i < alpha; i++)
        for (int b = 0; b < r; b++) {
            double s = 0.0;
            for (int a = 0; a < r; a++) s += mat->g[i * r + a] * (double)g[a * r + b];
            gg[i][b] = s;
        }
    for (int i = 0; i < alpha; i++)
        for (int j = 0; j < alpha; j++) {
            double s = 0.0;
            for (int b = 0; b < r; b++) s += gg[i][b] * mat->g[j * r + b];
            u[(size_t)(i * alpha + j) * u_step] = (float)s;
        }
}
