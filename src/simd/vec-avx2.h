/*
 * vec-avx2.h — 8 floats in a ymm register, AVX2 + FMA (the files including it are compiled
 * with -mavx2 -mfma and only called after cpuid + XGETBV said so). Partial vectors use
 * vmaskmov, which never touches memory beyond the n lanes asked for.
 */
#ifndef FCONV_SIMD_VEC_AVX2_H
#define FCONV_SIMD_VEC_AVX2_H

#include <immintrin.h>
#include <stddef.h>

#define FCONV_VEC_TAG __avx2
#define FCONV_VEC_ISA_NAME "avx2"
#define VF_LANES 8

typedef __m256 vf;

static inline vf vf_zero(void) { return _mm256_setzero_ps(); }
static inline vf vf_set1(float a) { return _mm256_set1_ps(a); }
static inline vf vf_load(const float *p) { return _mm256_load_ps(p); }
static inline vf vf_loadu(const float *p) { return _mm256_loadu_ps(p); }
static inline void vf_store(float *p, vf v) { _mm256_store_ps(p, v); }
static inline void vf_storeu(float *p, vf v) { _mm256_storeu_ps(p, v); }
static inline vf vf_add(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf vf_fma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf vf_max(vf a, vf b) { return _mm256_max_ps(a, b); }

/* Lane i active iff i < n: compare the lane numbers against n. */
static inline __m256i vf_tail_mask_(size_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline vf vf_loadu_partial(const float *p, size_t n) {
    return _mm256_maskload_ps(p, vf_tail_mask_(n));
}
/* Not vmaskmovps: its masked store is microcoded on AMD cores (a Winograd gather whose
 * short rows ended in one ran 2x slower than with scalar stores); at most three plain
 * stores of 4, 2 and 1 floats instead. */
static inline void vf_storeu_partial(float *p, vf v, size_t n) {
    if (n >= 8) {
        _mm256_storeu_ps(p, v);
        return;
    }
    __m128 part = _mm256_castps256_ps128(v);
    if (n >= 4) {
        _mm_storeu_ps(p, part);
        part = _mm256_extractf128_ps(v, 1);
        p += 4;
        n -= 4;
    }
    if (n >= 2) {
        _mm_storel_pi((__m64 *)p, part);
        part = _mm_movehl_ps(part, part);
        p += 2;
        n -= 2;
    }
    if (n) _mm_store_ss(p, part);
}
/* Lanes [lo, hi) (lo < hi <= VF_LANES) of p, zero elsewhere; only p[lo .. hi-1] is read, so
 * p may point before the start of an array. */
static inline vf vf_loadu_lanes(const float *p, size_t lo, size_t hi) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i in = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)lo), lane),
                                           _mm256_cmpgt_epi32(_mm256_set1_epi32((int)hi), lane));
    return _mm256_maskload_ps(p, in);
}
/* Non-temporal store of a 32-byte-aligned vector (no read-for-ownership of the line; weakly
 * ordered: vf_stream_fence() before another thread may read it). */
static inline void vf_stream(float *p, vf v) { _mm256_stream_ps(p, v); }
static inline void vf_stream_fence(void) { _mm_sfence(); }
/* lo in the lower half of the lanes, hi in the upper: with a micro-kernel tile of half a
 * vector of rows, two k steps share one multiply-add (kernels/gemm/gemm-ukernel.c). */
static inline vf vf_set1_halves(float lo, float hi) {
    return _mm256_insertf128_ps(_mm256_set1_ps(lo), _mm_set1_ps(hi), 1);
}
/* The lower half's lanes: lane i + lane i + VF_LANES/2; the upper half holds the same sums. */
static inline vf vf_fold_halves(vf v) { return _mm256_add_ps(v, _mm256_permute2f128_ps(v, v, 1)); }
static inline float vf_reduce_add(vf v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
/* The 4-way deinterleave of 4*VF_LANES floats held in in[0..3] (float i in lane i % VF_LANES
 * of in[i / VF_LANES]): o[j][t] = float 4t + j (Winograd F(4x4) tiles start 4 columns
 * apart). Per 128-bit lane a 4x4 transpose, then the lanes put in order. */
static inline void vf_deinterleave4(const vf in[4], vf o[4]) {
    __m256 a = in[0], b = in[1], c = in[2], d = in[3];
    __m256 ab_lo = _mm256_unpacklo_ps(a, b), ab_hi = _mm256_unpackhi_ps(a, b);
    __m256 cd_lo = _mm256_unpacklo_ps(c, d), cd_hi = _mm256_unpackhi_ps(c, d);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7); /* t0 t2 t4 t6 | t1 t3 t5 t7 */
    o[0] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(ab_lo, cd_lo, _MM_SHUFFLE(1, 0, 1, 0)), order);
    o[1] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(ab_lo, cd_lo, _MM_SHUFFLE(3, 2, 3, 2)), order);
    o[2] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(ab_hi, cd_hi, _MM_SHUFFLE(1, 0, 1, 0)), order);
    o[3] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(ab_hi, cd_hi, _MM_SHUFFLE(3, 2, 3, 2)), order);
}
/* The 3-way deinterleave of 3*VF_LANES floats held in in[0..2] (float i in lane i % VF_LANES of
 * in[i / VF_LANES]): o[j][t] = float 3t + j, the channels of VF_LANES RGB pixels (NHWC to NCHW).
 * Float 3t + j lies in lane (3t + j) % 8 of its vector, and those lanes differ for the three
 * vectors: two blends gather o[j]'s floats into one vector, one permute puts them in order (a
 * gather through memory ran 1.2-1.4x slower than the padded register transpose). */
static inline void vf_deinterleave3(const vf in[3], vf o[3]) {
    const __m256 a = in[0], b = in[1], c = in[2];
    o[0] = _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(a, b, 0x92), c, 0x24),
                                    _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5));
    o[1] = _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(a, b, 0x24), c, 0x49),
                                    _mm256_setr_epi32(1, 4, 7, 2, 5, 0, 3, 6));
    o[2] = _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(a, b, 0x49), c, 0x92),
                                    _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7));
}
/* The even floats of the 2*VF_LANES in a (floats 0..7) and b (8..15): floats 0, 2, .. 14, the
 * columns a stride-2 window reads. Per 128-bit lane a2 a0 / b2 b0 pairs, then the 64-bit
 * halves put in order. */
static inline vf vf_even2(vf a, vf b) {
    __m256 pairs = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), _MM_SHUFFLE(3, 1, 2, 0)));
}
/* Lanes s .. s + VF_LANES - 1 of the 2*VF_LANES floats lo:hi (0 <= s < VF_LANES, run time):
 * what an unaligned load at lo's address + s would give, from two aligned ones. Each source
 * permuted by the same indices (mod 8), the lanes past lo's end taken from hi's. */
static inline vf vf_shift_pair(vf lo, vf hi, int s) {
    const __m256i idx = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(s));
    const __m256 from_hi = _mm256_castsi256_ps(_mm256_cmpgt_epi32(idx, _mm256_set1_epi32(7)));
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(lo, idx), _mm256_permutevar8x32_ps(hi, idx), from_hi);
}
/* v moved down one lane, `next` into the top lane: [v1 .. v7, next]. */
static inline vf vf_shift_in(vf v, float next) {
    const __m256i down = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0);
    return _mm256_blend_ps(_mm256_permutevar8x32_ps(v, down), _mm256_set1_ps(next), 0x80);
}

/* The inverse of vf_deinterleave4 into registers: float 4t + j of out[0..3] (end to end) =
 * in[j][t]. */
static inline void vf_interleave4_regs(const vf in[4], vf out[4]) {
    const __m256i split = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7); /* t0 t2 t4 t6 | t1 t3 t5 t7 */
    __m256 j0 = _mm256_permutevar8x32_ps(in[0], split), j1 = _mm256_permutevar8x32_ps(in[1], split);
    __m256 j2 = _mm256_permutevar8x32_ps(in[2], split), j3 = _mm256_permutevar8x32_ps(in[3], split);
    __m256 lo01 = _mm256_unpacklo_ps(j0, j1), lo23 = _mm256_unpacklo_ps(j2, j3);
    __m256 hi01 = _mm256_unpackhi_ps(j0, j1), hi23 = _mm256_unpackhi_ps(j2, j3);
    out[0] = _mm256_shuffle_ps(lo01, lo23, _MM_SHUFFLE(1, 0, 1, 0));
    out[1] = _mm256_shuffle_ps(lo01, lo23, _MM_SHUFFLE(3, 2, 3, 2));
    out[2] = _mm256_shuffle_ps(hi01, hi23, _MM_SHUFFLE(1, 0, 1, 0));
    out[3] = _mm256_shuffle_ps(hi01, hi23, _MM_SHUFFLE(3, 2, 3, 2));
}

/* Every sixth of the 6*VF_LANES floats in in[0..5], from float e (0 <= e < 6): o[t] = float
 * 6t + e, the columns of a stride-2 phase that Winograd F(3x3, 4x4) tiles 3 apart read. Through
 * memory: only the stride-2 layers' gather takes it, and AVX-512 machines a permute path. */
static inline vf vf_every6(const vf in[6], int e) {
    float buf[6 * 8];
    for (int k = 0; k < 6; k++) _mm256_storeu_ps(buf + 8 * k, in[k]);
    return _mm256_i32gather_ps(buf + e, _mm256_setr_epi32(0, 6, 12, 18, 24, 30, 36, 42), 4);
}

/* p[2t + j] = in[j][t] for 2*VF_LANES floats: F(2x2, 3x3)'s output columns back into a row.
 * The unpacks pair lanes within each 128-bit half; the two halves then go in order. */
static inline void vf_interleave2(const vf in[2], float *p) {
    __m256 lo = _mm256_unpacklo_ps(in[0], in[1]), hi = _mm256_unpackhi_ps(in[0], in[1]);
    _mm256_storeu_ps(p, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(p + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
}

/* p[3t + j] = in[j][t] for 3*VF_LANES floats: F(3x3, 4x4)'s output columns back into a row.
 * Through memory, as vf_every6. */
static inline void vf_interleave3(const vf in[3], float *p) {
    float buf[3][8];
    for (int j = 0; j < 3; j++) _mm256_storeu_ps(buf[j], in[j]);
    for (int t = 0; t < 8; t++)
        for (int j = 0; j < 3; j++) p[3 * t + j] = buf[j][t];
}

/* c - a*b, fused. */
static inline vf vf_fnma(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }

/* Transpose the 8 x 8 matrix whose row i is r[i]: afterwards lane j of r[i] is what lane i
 * of r[j] was (24 shuffles). */
static inline void vf_transpose(vf r[8]) {
    __m256 t[8], s[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) { /* s[i + j], 128-bit half h: rows i..i+3 of column 4h + j */
        s[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        s[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        s[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        s[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int j = 0; j < 4; j++) {
        r[j] = _mm256_permute2f128_ps(s[j], s[4 + j], 0x20);
        r[4 + j] = _mm256_permute2f128_ps(s[j], s[4 + j], 0x31);
    }
}

/* The transpose of rows r[0..7] stored column by column: y[j*stride + i] = lane j of r[i]
 * for i < nrows (<= 8), j < ncols (<= 8). */
static inline void vf_store_transposed8(const vf r[8], float *y, size_t stride, size_t nrows, size_t ncols) {
    vf t[8];
    for (int i = 0; i < 8; i++) t[i] = r[i];
    vf_transpose(t);
    for (size_t j = 0; j < ncols; j++) vf_storeu_partial(y + j * stride, t[j], nrows);
}

#endif
