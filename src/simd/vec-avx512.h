/*
 * vec-avx512.h — 16 floats in a zmm register, AVX-512F (files including it are compiled with
 * -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma and only called after cpuid + XGETBV say
 * the CPU and OS support it). Partial vectors use opmask loads/stores, which fault on no lane
 * beyond the n asked for.
 */
#ifndef FCONV_SIMD_VEC_AVX512_H
#define FCONV_SIMD_VEC_AVX512_H

#include <immintrin.h>
#include <stddef.h>

#define FCONV_VEC_TAG __avx512
#define FCONV_VEC_ISA_NAME "avx512"
#define VF_LANES 16

typedef __m512 vf;

static inline vf vf_zero(void) { return _mm512_setzero_ps(); }
static inline vf vf_set1(float a) { return _mm512_set1_ps(a); }
static inline vf vf_load(const float *p) { return _mm512_load_ps(p); }
static inline vf vf_loadu(const float *p) { return _mm512_loadu_ps(p); }
static inline void vf_store(float *p, vf v) { _mm512_store_ps(p, v); }
static inline void vf_storeu(float *p, vf v) { _mm512_storeu_ps(p, v); }
static inline vf vf_add(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf vf_fma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf vf_max(vf a, vf b) { return _mm512_max_ps(a, b); }
static inline vf vf_loadu_partial(const float *p, size_t n) {
    return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p);
}
static inline void vf_storeu_partial(float *p, vf v, size_t n) {
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), v);
}
/* Lanes [lo, hi) of p, zero elsewhere; only p[lo .. hi-1] is read (see vec-avx2.h). */
static inline vf vf_loadu_lanes(const float *p, size_t lo, size_t hi) {
    return _mm512_maskz_loadu_ps((__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u)), p);
}
/* Non-temporal store of a 64-byte-aligned vector; see vec-avx2.h. */
static inline void vf_stream(float *p, vf v) { _mm512_stream_ps(p, v); }
static inline void vf_stream_fence(void) { _mm_sfence(); }
static inline float vf_reduce_add(vf v) { return _mm512_reduce_add_ps(v); }
/* lo in lanes [0, 8), hi in [8, 16) (see vec-avx2.h) */
static inline vf vf_set1_halves(float lo, float hi) {
    return _mm512_mask_broadcastss_ps(_mm512_set1_ps(lo), (__mmask16)0xFF00u, _mm_set_ss(hi));
}
/* The 8 floats at p in lanes [0, 8), the upper lanes undefined: a 256-bit load, for
 * vf_broadcast_lane8 to spread (on cores that issue one 512-bit load a cycle but two
 * narrower ones, broadcasts taken from it spare the loads; gemm-ukernel.c). */
static inline vf vf_loadu_low8(const float *p) { return _mm512_castps256_ps512(_mm256_loadu_ps(p)); }
/* p[0..4) in each 128-bit lane (a 128-bit broadcast load), for vf_spread4. */
static inline vf vf_broadcast4(const float *p) { return _mm512_broadcast_f32x4(_mm_loadu_ps(p)); }
/* Lane j (< 4) of each 128-bit lane of v, in all its lanes: one in-lane shuffle with an
 * immediate (no index register); of vf_broadcast4's vector, p[j] in every lane. */
static inline vf vf_spread4(vf v, int j) {
    switch (j) {
    case 0: return _mm512_shuffle_ps(v, v, 0x00);
    case 1: return _mm512_shuffle_ps(v, v, 0x55);
    case 2: return _mm512_shuffle_ps(v, v, 0xaa);
    default: return _mm512_shuffle_ps(v, v, 0xff);
    }
}
/* Lane i (< 8) of v in every lane: one permute, on the shuffle port. */
static inline vf vf_broadcast_lane8(vf v, int i) { return _mm512_permutexvar_ps(_mm512_set1_epi32(i), v); }
/* Lanes [0, 8): lane i + lane i + 8; lanes [8, 16) hold the same sums. */
static inline vf vf_fold_halves(vf v) {
    return _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
}
/* The 4-way deinterleave of the 4*VF_LANES floats in in[0..3]: o[j][t] = float 4t + j (see
 * vec-avx2.h). */
static inline void vf_deinterleave4(const vf in[4], vf o[4]) {
    /* per pair of inputs, elements j = 0 and 2 (and 1 and 3) of its eight tiles into the
     * two halves of one vector, then the halves of the two pairs put side by side: 8
     * shuffles where three per output took 12 */
    const __m512i even = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 2, 6, 10, 14, 18, 22, 26, 30);
    const __m512i odd = _mm512_setr_epi32(1, 5, 9, 13, 17, 21, 25, 29, 3, 7, 11, 15, 19, 23, 27, 31);
    __m512 ab02 = _mm512_permutex2var_ps(in[0], even, in[1]), ab13 = _mm512_permutex2var_ps(in[0], odd, in[1]);
    __m512 cd02 = _mm512_permutex2var_ps(in[2], even, in[3]), cd13 = _mm512_permutex2var_ps(in[2], odd, in[3]);
    o[0] = _mm512_shuffle_f32x4(ab02, cd02, _MM_SHUFFLE(1, 0, 1, 0));
    o[1] = _mm512_shuffle_f32x4(ab13, cd13, _MM_SHUFFLE(1, 0, 1, 0));
    o[2] = _mm512_shuffle_f32x4(ab02, cd02, _MM_SHUFFLE(3, 2, 3, 2));
    o[3] = _mm512_shuffle_f32x4(ab13, cd13, _MM_SHUFFLE(3, 2, 3, 2));
}
/* The 3-way deinterleave of the 3*VF_LANES floats in in[0..2] (see vec-avx2.h): o[j][t] = float
 * 3t + j, from in[0] and in[1] by one two-source permute, the lanes whose float lies in in[2]
 * (3t + j >= 32) by a masked one-source one with the same indices. */
static inline void vf_deinterleave3(const vf in[3], vf o[3]) {
    for (int j = 0; j < 3; j++) {
        const __m512i at = _mm512_add_epi32(_mm512_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45),
                                            _mm512_set1_epi32(j));
        const __m512i idx = _mm512_and_si512(at, _mm512_set1_epi32(31));
        const __mmask16 past32 = _mm512_cmpge_epi32_mask(at, _mm512_set1_epi32(32));
        o[j] = _mm512_mask_permutexvar_ps(_mm512_permutex2var_ps(in[0], idx, in[1]), past32, idx, in[2]);
    }
}
/* The even floats of the 2*VF_LANES in a, b (see vec-avx2.h): one two-source permute. */
static inline vf vf_even2(vf a, vf b) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(a, even, b);
}
/* Lanes s .. s + VF_LANES - 1 of the 2*VF_LANES floats lo:hi (0 <= s < VF_LANES, run time):
 * what an unaligned load at lo's address + s would give, from two aligned ones. One
 * two-source permute; the index vector depends on s only, so loops over v hoist it. */
static inline vf vf_shift_pair(vf lo, vf hi, int s) {
    const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm512_permutex2var_ps(lo, _mm512_add_epi32(lanes, _mm512_set1_epi32(s)), hi);
}
/* v moved down one lane, `next` into the top lane: [v1 .. v15, next]. */
static inline vf vf_shift_in(vf v, float next) {
    return _mm512_castsi512_ps(
        _mm512_alignr_epi32(_mm512_castps_si512(_mm512_set1_ps(next)), _mm512_castps_si512(v), 1));
}

/* The inverse of vf_deinterleave4 into registers: float 4t + j of out[0..3] (end to end) =
 * in[j][t]. */
static inline void vf_interleave4_regs(const vf in[4], vf out[4]) {
    for (int half = 0; half < 2; half++) { /* tiles 8*half .. 8*half + 7 */
        const int h = 8 * half;
        const __m512i pair = _mm512_setr_epi32(h, h + 16, h + 1, h + 17, h + 2, h + 18, h + 3, h + 19,
                                               h + 4, h + 20, h + 5, h + 21, h + 6, h + 22, h + 7, h + 23);
        __m512 p01 = _mm512_permutex2var_ps(in[0], pair, in[1]), p23 = _mm512_permutex2var_ps(in[2], pair, in[3]);
        const __m512i quad_lo = _mm512_setr_epi32(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
        const __m512i quad_hi = _mm512_setr_epi32(8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
        out[2 * half] = _mm512_permutex2var_ps(p01, quad_lo, p23);
        out[2 * half + 1] = _mm512_permutex2var_ps(p01, quad_hi, p23);
    }
}

/* Every sixth of the 6*VF_LANES floats in in[0..5], from float e (0 <= e < 6): o[t] = float
 * 6t + e (see vec-avx2.h). Lane t's float lies in pair (6t + e) / 32 at (6t + e) % 32: one
 * two-source permute per pair with the same indices, then the three blended. */
static inline vf vf_every6(const vf in[6], int e) {
    const __m512i at = _mm512_add_epi32(_mm512_setr_epi32(0, 6, 12, 18, 24, 30, 36, 42, 48, 54, 60, 66, 72, 78, 84, 90),
                                        _mm512_set1_epi32(e));
    const __m512i idx = _mm512_and_si512(at, _mm512_set1_epi32(31));
    const __mmask16 past32 = _mm512_cmpge_epi32_mask(at, _mm512_set1_epi32(32));
    const __mmask16 past64 = _mm512_cmpge_epi32_mask(at, _mm512_set1_epi32(64));
    vf o = _mm512_mask_blend_ps(past32, _mm512_permutex2var_ps(in[0], idx, in[1]),
                                _mm512_permutex2var_ps(in[2], idx, in[3]));
    return _mm512_mask_blend_ps(past64, o, _mm512_permutex2var_ps(in[4], idx, in[5]));
}

/* p[2t + j] = in[j][t] for 2*VF_LANES floats: one two-source permute per output vector. */
static inline void vf_interleave2(const vf in[2], float *p) {
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    _mm512_storeu_ps(p, _mm512_permutex2var_ps(in[0], lo, in[1]));
    _mm512_storeu_ps(p + 16, _mm512_permutex2var_ps(in[0], hi, in[1]));
}

/* p[3t + j] = in[j][t] for 3*VF_LANES floats (see vec-avx2.h). Output vector v's lane l is
 * float g = 16v + l: in[g % 3][g / 3], from in[0] and in[1] by one two-source permute, from
 * in[2] (lanes with g % 3 == 2, whose index is g / 3 < 16) by a masked one-source one. */
static inline void vf_interleave3(const vf in[3], float *p) {
    const __m512i idx[3] = {
        _mm512_setr_epi32(0, 16, 0, 1, 17, 1, 2, 18, 2, 3, 19, 3, 4, 20, 4, 5),
        _mm512_setr_epi32(21, 5, 6, 22, 6, 7, 23, 7, 8, 24, 8, 9, 25, 9, 10, 26),
        _mm512_setr_epi32(10, 11, 27, 11, 12, 28, 12, 13, 29, 13, 14, 30, 14, 15, 31, 15),
    };
    const __mmask16 from2[3] = {0x4924, 0x2492, 0x9249};
    for (int v = 0; v < 3; v++)
        _mm512_storeu_ps(p + 16 * v, _mm512_mask_permutexvar_ps(_mm512_permutex2var_ps(in[0], idx[v], in[1]),
                                                                from2[v], idx[v], in[2]));
}

/* c - a*b, fused. */
static inline vf vf_fnma(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); }

/* Transpose the 16 x 16 matrix whose row i is r[i]: afterwards lane j of r[i] is what lane i
 * of r[j] was. Pairs, then quadruples inside each 128-bit lane, then the 128-bit blocks
 * across rows four apart: 64 shuffles. */
static inline void vf_transpose(vf r[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);     /* per 128-bit lane: r_i0 r_i+1,0 r_i1 r_i+1,1 */
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]); /* r_i2 r_i+1,2 r_i3 r_i+1,3 */
    }
    for (int i = 0; i < 16; i += 4) { /* r[i + j], 128-bit lane L: rows i..i+3 of column 4L + j */
        __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
        __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
        r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    for (int j = 0; j < 4; j++) { /* column 4L + j gathers 128-bit lane L of r[j], r[4+j], r[8+j], r[12+j] */
        __m512 ab02 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88), ab13 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xdd);
        __m512 cd02 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88), cd13 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xdd);
        t[j] = _mm512_shuffle_f32x4(ab02, cd02, 0x88);
        t[4 + j] = _mm512_shuffle_f32x4(ab13, cd13, 0x88);
        t[8 + j] = _mm512_shuffle_f32x4(ab02, cd02, 0xdd);
        t[12 + j] = _mm512_shuffle_f32x4(ab13, cd13, 0xdd);
    }
    for (int i = 0; i < 16; i++) r[i] = t[i];
}

/* The transpose of rows r[0..7] stored column by column: y[j*stride + i] = lane j of r[i]
 * for i < nrows (<= 8), j < ncols (<= 16). Pairs, then quadruples inside each 128-bit lane
 * (columns 4L + m of rows 0-3 in u[m], of rows 4-7 in u[4 + m]), then two columns' eight
 * rows per permute: 24 shuffles and 8 extracts where the 16-row vf_transpose takes 64. */
static inline void vf_store_transposed8(const vf r[8], float *y, size_t stride, size_t nrows, size_t ncols) {
    __m512 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int h = 0; h < 8; h += 4) {
        u[h + 0] = _mm512_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[h + 1] = _mm512_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[h + 2] = _mm512_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[h + 3] = _mm512_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    const __mmask8 rows = (__mmask8)((1u << nrows) - 1u);
    const __m512i lanes01 = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const __m512i lanes23 = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    for (size_t m = 0; m < 4 && m < ncols; m++) {
        for (size_t pair = 0; pair < 2; pair++) { /* columns 8 pair + m and 8 pair + 4 + m */
            size_t c = 8 * pair + m;
            if (c >= ncols) break;
            __m512 two = _mm512_permutex2var_ps(u[m], pair ? lanes23 : lanes01, u[4 + m]);
            _mm256_mask_storeu_ps(y + c * stride, rows, _mm512_castps512_ps256(two));
            if (c + 4 < ncols) _mm256_mask_storeu_ps(y + (c + 4) * stride, rows, _mm512_extractf32x8_ps(two, 1));
        }
    }
}

#endif
