/*
 * direct-rows.c — the inner kernel of the direct algorithm (filter2d, conv1d, stride-1
 * conv2d): a run of up to four output rows, each the sum over kh input rows and kw taps,
 * with every tap of every row accumulated in registers (4 rows x 3 vectors on AVX2, one row
 * x 8 vectors), so an output is read and written once whatever the kernel size and each
 * input load serves four output channels. Compiled once per ISA (simd/vec.h); the contract
 * is fconv_direct_rows_fn in core/dispatch.h.
 */
#include <assert.h>

#include "core/dispatch.h"
#include "simd/vec.h"

#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* Vectors of columns per step: as many accumulators as the register file holds beside the
 * input vector and the broadcast tap. */
#define NV_ONE 8
#define NV_FOUR (VF_LANES == 16 ? 6 : 3)

struct rows_args {
    float *const *y;
    const float *const *x_rows, *const *tap_rows;
    ptrdiff_t tap_step, k_stride;
    size_t kh, kw, dist;
    int accumulate;
};

/* Columns [e, e + nv*VF_LANES) of nk rows (the last vector only `rest` lanes when rest > 0).
 * Taps go in the order (a, b), so an output's summation order depends only on the kernel. */
static ALWAYS_INLINE void rows_block(const struct rows_args *r, const int nk, const int nv, size_t e,
                                     size_t rest) {
    vf acc[4][NV_ONE];
    for (int k = 0; k < nk; k++)
        for (int v = 0; v < nv; v++) {
            float *p = r->y[k] + e + (size_t)v * VF_LANES;
            acc[k][v] = !r->accumulate ? vf_zero() : rest ? vf_loadu_partial(p, rest) : vf_loadu(p);
        }
    for (size_t a = 0; a < r->kh; a++) {
        const float *xa = r->x_rows[a] + e, *ta = r->tap_rows[a];
        for (size_t b = 0; b < r->kw; b++) {
            const float *xb = xa + b * r->dist, *tb = ta + (ptrdiff_t)b * r->tap_step;
            vf xv[NV_ONE];
            for (int v = 0; v < nv; v++)
                xv[v] = rest ? vf_loadu_partial(xb + (size_t)v * VF_LANES, rest)
                             : vf_loadu(xb + (size_t)v * VF_LANES);
            for (int k = 0; k < nk; k++) {
                vf t = vf_set1(tb[k * r->k_stride]);
                for (int v = 0; v < nv; v++) acc[k][v] = vf_fma(t, xv[v], acc[k][v]);
            }
        }
    }
    for (int k = 0; k < nk; k++)
        for (int v = 0; v < nv; v++) {
            float *p = r->y[k] + e + (size_t)v * VF_LANES;
            if (rest) vf_storeu_partial(p, acc[k][v], rest);
            else vf_storeu(p, acc[k][v]);
        }
}

/* Every column of nk rows: wide blocks, then single vectors, then one partial vector. */
static ALWAYS_INLINE void rows_all(const struct rows_args *r, const int nk, const int nv, size_t n) {
    size_t e = 0;
    for (; e + (size_t)nv * VF_LANES <= n; e += (size_t)nv * VF_LANES) rows_block(r, nk, nv, e, 0);
    for (; e + VF_LANES <= n; e += VF_LANES) rows_block(r, nk, 1, e, 0);
    if (e < n) rows_block(r, nk, 1, e, n - e);
}

void FCONV_ISA_SUFFIX(fconv_direct_rows_kernel)(float *const *y, size_t nk, size_t n,
                                                const float *const *x_rows,
                                                const float *const *tap_rows, ptrdiff_t tap_step,
                                                ptrdiff_t k_stride, size_t kh, size_t kw, size_t dist,
                                                int accumulate) {
    assert(y && x_rows && tap_rows && nk >= 1 && nk <= 4 && kh >= 1 && kw >= 1);
    const struct rows_args r = {y, x_rows, tap_rows, tap_step, k_stride, kh, kw, dist, accumulate};
    switch (nk) {
    case 1: rows_all(&r, 1, NV_ONE, n); break;
    case 2: rows_all(&r, 2, NV_FOUR, n); break;
    case 3: rows_all(&r, 3, NV_FOUR, n); break;
    default: rows_all(&r, 4, NV_FOUR, n); break;
    }
}
