/*
 * vec-scalar.h — the portable "vector" of one float. Kernels compiled against it are the
 * reference every SIMD build is tested against, and the path taken on CPUs without AVX2.
 * Multiply-add is a rounded multiply then a rounded add (no FMA contraction on baseline x86-64).
 */
#ifndef FCONV_SIMD_VEC_SCALAR_H
#define FCONV_SIMD_VEC_SCALAR_H

#include <stddef.h>

#define FCONV_VEC_TAG __scalar
#define FCONV_VEC_ISA_NAME "scalar"
#define VF_LANES 1

typedef float vf;

static inline vf vf_zero(void) { return 0.0f; }
static inline vf vf_set1(float a) { return a; }
static inline vf vf_load(const float *p) { return *p; }
static inline vf vf_loadu(const float *p) { return *p; }
static inline void vf_store(float *p, vf v) { *p = v; }
static inline void vf_storeu(float *p, vf v) { *p = v; }
static inline vf vf_add(vf a, vf b) { return a + b; }
static inline vf vf_sub(vf a, vf b) { return a - b; }
static inline vf vf_mul(vf a, vf b) { return a * b; }
/* a * b + c */
static inline vf vf_fma(vf a, vf b, vf c) { return a * b + c; }
/* NaN in a or b gives b (as x86 max does with its second operand). */
static inline vf vf_max(vf a, vf b) { return a > b ? a : b; }
/* The first n < VF_LANES lanes; with one lane there is never a partial vector. */
static inline vf vf_loadu_partial(const float *p, size_t n) { return n ? *p : 0.0f; }
static inline void vf_storeu_partial(float *p, vf v, size_t n) { if (n) *p = v; }
/* Lanes [lo, hi) of p (lo < hi <= 1): the one lane. */
static inline vf vf_loadu_lanes(const float *p, size_t lo, size_t hi) {
    (void)lo;
    (void)hi;
    return *p;
}
static inline void vf_stream(float *p, vf v) { *p = v; } /* no non-temporal store: plain */
static inline void vf_stream_fence(void) {}
static inline float vf_reduce_add(vf v) { return v; }
/* One lane has no halves (see vec-avx2.h): no kernel takes these where VF_LANES == 1. */
static inline vf vf_set1_halves(float lo, float hi) {
    (void)hi;
    return lo;
}
static inline vf vf_fold_halves(vf v) { return v; }
/* The 4-way deinterleave of the 4*VF_LANES floats in in[0..3]: o[j][t] = float 4t + j (see
 * vec-avx2.h). */
static inline void vf_deinterleave4(const vf in[4], vf o[4]) {
    for (int j = 0; j < 4; j++) o[j] = in[j];
}
/* The 3-way deinterleave of the 3*VF_LANES floats in in[0..2] (see vec-avx2.h). */
static inline void vf_deinterleave3(const vf in[3], vf o[3]) {
    for (int j = 0; j < 3; j++) o[j] = in[j];
}
/* The even floats of the 2*VF_LANES in a, b (see vec-avx2.h): with one lane, a. */
static inline vf vf_even2(vf a, vf b) {
    (void)b;
    return a;
}
/* Lanes s .. s + VF_LANES - 1 of lo:hi (see vec-avx2.h): with one lane s is 0. */
static inline vf vf_shift_pair(vf lo, vf hi, int s) {
    (void)hi;
    (void)s;
    return lo;
}
/* v moved down one lane, `next` into the top lane: with one lane, next. */
static inline vf vf_shift_in(vf v, float next) {
    (void)v;
    return next;
}

/* The inverse of vf_deinterleave4 into registers: float 4t + j of out[0..3] (end to end) =
 * in[j][t]. */
static inline void vf_interleave4_regs(const vf in[4], vf out[4]) {
    for (int j = 0; j < 4; j++) out[j] = in[j];
}

/* Every sixth of the 6*VF_LANES floats in in[0..5], from float e (see vec-avx2.h): in[e]. */
static inline vf vf_every6(const vf in[6], int e) { return in[e]; }

/* p[2t + j] = in[j][t] for 2*VF_LANES floats. */
static inline void vf_interleave2(const vf in[2], float *p) {
    p[0] = in[0];
    p[1] = in[1];
}

/* p[3t + j] = in[j][t] for 3*VF_LANES floats. */
static inline void vf_interleave3(const vf in[3], float *p) {
    for (int j = 0; j < 3; j++) p[j] = in[j];
}

/* c - a*b. */
static inline vf vf_fnma(vf a, vf b, vf c) { return c - a * b; }

/* The 1 x 1 transpose. */
static inline void vf_transpose(vf r[1]) { (void)r; }

/* The transpose of rows r[0..7] stored column by column: y[i] = r[i] for i < nrows (<= 8)
 * when ncols is 1. */
static inline void vf_store_transposed8(const vf r[8], float *y, size_t stride, size_t nrows, size_t ncols) {
    (void)stride;
    for (size_t i = 0; ncols && i < nrows; i++) y[i] = r[i];
}

#endif
