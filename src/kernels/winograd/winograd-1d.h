/*
 * winograd-1d.h — the float32 1D Winograd transforms o = B^T d and o = A^T d of F(2,3), F(4,3),
 * F(6,3) and F(3,4)'s output, on one column of tile vectors: the matrices of
 * algo/winograd-transforms.c with common terms shared (the factorisation NNPACK uses). The 2D
 * tile transforms (winograd-tiles.c) apply them to rows then columns; winograd-rows applies
 * F(4,3)'s along image rows only (winograd-rows.c). Included by per-ISA kernel files after
 * simd/vec.h.
 */
#ifndef FCONV_KERNELS_WINOGRAD_1D_H
#define FCONV_KERNELS_WINOGRAD_1D_H

static inline vf wino_c(float c) { return vf_set1(c); }

static inline void input_1d_f2(const vf d[4], vf o[4]) {
    o[0] = vf_sub(d[0], d[2]);
    o[1] = vf_add(d[1], d[2]);
    o[2] = vf_sub(d[2], d[1]);
    o[3] = vf_sub(d[1], d[3]);
}

static inline void output_1d_f2(const vf d[4], vf o[2]) {
    o[0] = vf_add(vf_add(d[0], d[1]), d[2]);
    o[1] = vf_sub(vf_sub(d[1], d[2]), d[3]);
}

static inline void input_1d_f4(const vf d[6], vf o[6]) {
    const vf s34 = vf_add(d[3], d[4]), s12 = vf_add(d[1], d[2]), t43 = vf_sub(d[4], d[3]);
    const vf t12 = vf_sub(d[1], d[2]), t42 = vf_sub(d[4], d[2]), t31 = vf_sub(d[3], d[1]);
    o[0] = vf_fma(wino_c(4.0f), vf_sub(d[0], d[2]), t42); /* = 4d0 - 5d2 + d4, fewer roundings of big terms */
    o[1] = vf_fma(wino_c(-4.0f), s12, s34);
    o[2] = vf_fma(wino_c(4.0f), t12, t43);
    o[3] = vf_fma(wino_c(2.0f), t31, t42);
    o[4] = vf_fma(wino_c(-2.0f), t31, t42);
    o[5] = vf_fma(wino_c(4.0f), vf_sub(d[1], d[3]), vf_sub(d[5], d[3]));
}

static inline void output_1d_f4(const vf d[6], vf o[4]) {
    const vf s12 = vf_add(d[1], d[2]), t12 = vf_sub(d[1], d[2]);
    const vf s34 = vf_add(d[3], d[4]), t34 = vf_sub(d[3], d[4]);
    o[0] = vf_add(vf_add(d[0], s12), s34);
    o[1] = vf_fma(wino_c(2.0f), t34, t12);
    o[2] = vf_fma(wino_c(4.0f), s34, s12);
    o[3] = vf_add(vf_fma(wino_c(8.0f), t34, t12), d[5]);
}

static inline void output_1d_f3(const vf d[6], vf o[3]) {
    const vf s12 = vf_add(d[1], d[2]), s34 = vf_add(d[3], d[4]);
    o[0] = vf_add(vf_add(d[0], s12), s34);
    o[1] = vf_fma(wino_c(2.0f), vf_sub(d[3], d[4]), vf_sub(d[1], d[2]));
    o[2] = vf_add(vf_fma(wino_c(4.0f), s34, s12), d[5]);
}

static inline void input_1d_f6(const vf d[8], vf o[8]) {
    const vf e1 = vf_fma(wino_c(-4.25f), d[4], vf_add(d[2], d[6])); /* points ±1 */
    const vf o1 = vf_fma(wino_c(-4.25f), d[3], vf_add(d[1], d[5]));
    const vf e2 = vf_fma(wino_c(-1.25f), d[4], vf_fma(wino_c(0.25f), d[2], d[6])); /* ±1/2 */
    const vf o2 = vf_fma(wino_c(-2.5f), d[3], vf_fma(wino_c(0.5f), d[1], vf_mul(wino_c(2.0f), d[5])));
    const vf e3 = vf_fma(wino_c(-5.0f), d[4], vf_fma(wino_c(4.0f), d[2], d[6])); /* ±2 */
    const vf o3 = vf_fma(wino_c(-2.5f), d[3], vf_fma(wino_c(2.0f), d[1], vf_mul(wino_c(0.5f), d[5])));
    o[0] = vf_fma(wino_c(5.25f), vf_sub(d[4], d[2]), vf_sub(d[0], d[6]));
    o[1] = vf_add(e1, o1);
    o[2] = vf_sub(e1, o1);
    o[3] = vf_add(e2, o2);
    o[4] = vf_sub(e2, o2);
    o[5] = vf_add(e3, o3);
    o[6] = vf_sub(e3, o3);
    o[7] = vf_fma(wino_c(5.25f), vf_sub(d[3], d[5]), vf_sub(d[7], d[1]));
}

static inline void output_1d_f6(const vf d[8], vf o[6]) {
    const vf s12 = vf_add(d[1], d[2]), t12 = vf_sub(d[1], d[2]);
    const vf s34 = vf_add(d[3], d[4]), t34 = vf_sub(d[3], d[4]);
    const vf s56 = vf_add(d[5], d[6]), t56 = vf_sub(d[5], d[6]);
    o[0] = vf_add(vf_add(vf_add(d[0], s12), s34), s56);
    o[1] = vf_fma(wino_c(0.5f), t56, vf_fma(wino_c(2.0f), t34, t12));
    o[2] = vf_fma(wino_c(0.25f), s56, vf_fma(wino_c(4.0f), s34, s12));
    o[3] = vf_fma(wino_c(0.125f), t56, vf_fma(wino_c(8.0f), t34, t12));
    o[4] = vf_fma(wino_c(0.0625f), s56, vf_fma(wino_c(16.0f), s34, s12));
    o[5] = vf_add(vf_fma(wino_c(0.03125f), t56, vf_fma(wino_c(32.0f), t34, t12)), d[7]);
}

#endif
