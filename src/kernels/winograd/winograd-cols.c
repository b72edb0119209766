/*
 * winograd-cols.c — the kernels of winograd-cols (algo/winograd-cols.c): Winograd F(4,3) down
 * image columns, each kernel column's three taps in 6 multiplies per 4 outputs, the input
 * channels and kernel columns summed in the transform domain. The lanes of a vector are 16
 * neighbouring columns and a tile is 4 output rows, so the inverse transform leaves each
 * output row's columns in order: no interleave of phases (winograd-rows spends 8 two-source
 * permutes per 16 of its tiles on that, on the port that also multiplies) and no padding of
 * a row to whole vectors of tiles (224 columns: 56 tiles of 4 padded to 64, a seventh more
 * products). The input transform reads six input rows and writes one (channel, kernel column)
 * pair's six transformed rows, the pair's column shift applied as it reads; the product sums,
 * for a few output channels, every pair's transformed rows times its transformed taps in
 * registers and ends with the inverse transform and the stores. For NHWC the lanes are output
 * channels instead: the input transform writes planes of a row's pixels' channels and the
 * NHWC product leaves each pixel's channels in order. Compiled once per ISA; contracts:
 * fconv_wino_cols_input_fn, fconv_wino_cols_product_fn, fconv_wino_cols_product_nhwc_fn
 * (core/dispatch.h).
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "core/dispatch.h"
#include "simd/vec.h"

#include "kernels/winograd/winograd-1d.h"

/* Column vectors per step of the product: 2 output channels x 6 components x COLS_NV
 * accumulators, beside COLS_NV transformed input vectors and one broadcast tap. AVX-512's 32
 * registers hold 24 + 2 + 1; AVX2's 16 (and the scalar build's) 12 + 1 + 1. */
#define COLS_NV (VF_LANES == 16 ? 2 : 1)

/* Input columns [col0 + q, col0 + q + VF_LANES) of row i, zero outside [0, in_w) or where the
 * row lies outside the image (NULL). */
static ALWAYS_INLINE vf input_vector(const float *row, ptrdiff_t at, size_t in_w) {
    if (!row) return vf_zero();
    if (at >= 0 && at + VF_LANES <= (ptrdiff_t)in_w) return vf_loadu(row + at);
    const ptrdiff_t lo = at < 0 ? -at : 0, hi = (ptrdiff_t)in_w - at < VF_LANES ? (ptrdiff_t)in_w - at : VF_LANES;
    return hi > lo ? vf_loadu_lanes(row + at, (size_t)lo, (size_t)hi) : vf_zero();
}

void FCONV_ISA_SUFFIX(fconv_wino_cols_input_kernel)(float *v, int planes, const float *const rows[6],
                                                      ptrdiff_t col0, size_t in_w, size_t ncols) {
    assert(v && (uintptr_t)v % (VF_LANES * sizeof(float)) == 0);
    const size_t v_vstep = planes ? VF_LANES : 6 * VF_LANES, v_jstep = planes ? FCONV_WINO_COLS_PLANE : VF_LANES;
    for (size_t q = 0; q < ncols; q += VF_LANES, v += v_vstep) {
        vf d[6], o[6];
        for (int i = 0; i < 6; i++) d[i] = input_vector(rows[i], col0 + (ptrdiff_t)q, in_w);
        input_1d_f4(d, o);
        for (int j = 0; j < 6; j++) vf_store(v + (size_t)j * v_jstep, o[j]);
    }
}

/* A tile's sums out, for both products: A^T of m (one vector of each of the 6 components), ReLU
 * with relu, and the tile's rows [0, rows) stored rstride apart from y, each `lanes` floats
 * (VF_LANES: whole vectors, streamed with stream; fewer: cut; 0: none). */
static ALWAYS_INLINE void tile_out(const vf m[6], const int relu, float *y, size_t rstride, size_t rows, int stream,
                                   size_t lanes) {
    vf o[4];
    output_1d_f4(m, o);
    if (relu)
        for (int i = 0; i < 4; i++) o[i] = vf_max(vf_zero(), o[i]); /* NaN stays NaN: maxps gives its second operand */
    for (size_t i = 0; i < rows; i++) {
        float *p = y + i * rstride;
        if (lanes == VF_LANES && stream) vf_stream(p, o[i]);
        else if (lanes == VF_LANES) vf_storeu(p, o[i]);
        else if (lanes) vf_storeu_partial(p, o[i], lanes);
    }
}

/* One call's operands (fconv_wino_cols_product_fn). */
struct cols_args {
    float *y;
    size_t y_kstride, y_rstride, nrows, out_w, v_pstep, npairs, g_kpstride;
    const float *v, *g, *bias;
    int stream;
};

/* nk (1 or 2, a constant) output channels from channel k (even), nv (1 or COLS_NV) column
 * vectors from column q: the sum over the pairs in registers, then A^T, the epilogue and the
 * stores of the tile's rows: all 4 with full (a constant), else nrows; whole vectors with
 * whole, else cut at out_w. Every operand lies at a constant offset from the two pointers
 * the pair loop steps (the transformed rows' and the taps' layouts are made for it), so the
 * loop keeps its addresses in registers beside the 24 accumulators. */
static ALWAYS_INLINE void product_block(const struct cols_args *r, const int nk, const int nv, const int relu,
                                        const int full, const int whole, size_t k, size_t q) {
    vf acc[2][6][COLS_NV];
    for (int a = 0; a < nk; a++)
        for (int j = 0; j < 6; j++)
            for (int w = 0; w < nv; w++) /* the bias as m[1]'s start: A^T's column 1 is all ones */
                acc[a][j][w] = j == 1 && r->bias ? vf_set1(r->bias[k + (size_t)a]) : vf_zero();
    const float *vp = r->v + q * 6, *gp = r->g + k / 2 * r->g_kpstride;
    for (size_t p = 0; p < r->npairs; p++, vp += r->v_pstep, gp += 12)
        for (int j = 0; j < 6; j++) {
            vf x[COLS_NV];
            for (int w = 0; w < nv; w++) {
                x[w] = vf_load(vp + (size_t)(w * 6 + j) * VF_LANES);
                if (nk > 1) IN_REGISTER(x[w]); /* one load for both channels, not one folded into each FMA */
            }
            for (int a = 0; a < nk; a++) {
                const vf tap = vf_set1(gp[a * 6 + j]);
                for (int w = 0; w < nv; w++) acc[a][j][w] = vf_fma(tap, x[w], acc[a][j][w]);
            }
        }
    for (int a = 0; a < nk; a++)
        for (int w = 0; w < nv; w++) {
            vf m[6];
            for (int j = 0; j < 6; j++) m[j] = acc[a][j][w];
            const size_t at = q + (size_t)w * VF_LANES, left = at < r->out_w ? r->out_w - at : 0;
            tile_out(m, relu, r->y + (k + (size_t)a) * r->y_kstride + at, r->y_rstride, full ? 4 : r->nrows,
                     whole && r->stream, whole || left > VF_LANES ? VF_LANES : left);
        }
}

/* Vectors of columns per step of the channel loop: at least a 64-byte line, so that a row's
 * stores of a step fill whole lines together. */
#define COLS_STEP_NV (VF_LANES == 8 ? 2 : COLS_NV)
/* Streamed stores only where a vector is a whole line (AVX-512). AVX2's 32-byte halves of a
 * line, even written a block apart, ran the first layer 4.5x slower streamed than plain (one
 * thread, 1 x 3 x 224^2 -> 64: 7.1 against 1.6 ms; a step of one vector, the halves 256 lines
 * apart, 10x). */
#define COLS_STREAM (VF_LANES * 4 >= 64)

/* The channels' blocks for one column step of sv vectors (nv at a time): nk, nv, relu, full
 * and whole constants in each instance (run-time tests in the block had GCC keep accumulators
 * on the stack: direct-rows.c measured the same). */
static ALWAYS_INLINE void channel_blocks(const struct cols_args *r, size_t nk, const int sv, const int nv,
                                        const int relu, const int full, const int whole, size_t q) {
    size_t k = 0;
    for (; k + 2 <= nk; k += 2)
        for (int v = 0; v < sv; v += nv) product_block(r, 2, nv, relu, full, whole, k, q + (size_t)v * VF_LANES);
    if (k < nk)
        for (int v = 0; v < sv; v += nv) product_block(r, 1, nv, relu, full, whole, k, q + (size_t)v * VF_LANES);
}

/* Column steps outer, output channels inner: a step's transformed rows (every pair's 6 x
 * COLS_NV vectors: 6.9 KiB for a first layer's 9 pairs on AVX-512) stay in L1 across the
 * channels, whose transformed taps (a first layer's 64 channels: 14 KiB) stay there across
 * the steps. */
static ALWAYS_INLINE void product_kernel(const struct cols_args *r, size_t nk, const int relu, const int full) {
    const size_t step = COLS_STEP_NV * VF_LANES, whole_end = r->out_w / step * step;
    size_t q = 0;
    for (; q < whole_end; q += step) channel_blocks(r, nk, COLS_STEP_NV, COLS_NV, relu, full, 1, q);
    for (; q < r->out_w; q += VF_LANES) channel_blocks(r, nk, 1, 1, relu, full, 0, q);
}

void FCONV_ISA_SUFFIX(fconv_wino_cols_product_kernel)(float *y, size_t y_kstride, size_t y_rstride, size_t nrows,
                                                        size_t nk, size_t out_w, const float *v, size_t v_pstep,
                                                        size_t npairs, const float *g, size_t g_kpstride,
                                                        const float *bias, int relu, int stream) {
    assert(y && v && g && nrows >= 1 && nrows <= 4 && (uintptr_t)v % (VF_LANES * sizeof(float)) == 0);
    assert(v_pstep % VF_LANES == 0);
    const struct cols_args r = {y, y_kstride, y_rstride, nrows, out_w, v_pstep, npairs, g_kpstride,
                                v, g, bias, COLS_STREAM && stream};
    if (relu && nrows == 4) product_kernel(&r, nk, 1, 1);
    else if (relu) product_kernel(&r, nk, 1, 0);
    else if (nrows == 4) product_kernel(&r, nk, 0, 1);
    else product_kernel(&r, nk, 0, 0);
}

/* ---- NHWC: the lanes are output channels -------------------------------------------------- */

/* Channel vectors per step of the NHWC product: npx (up to NHWC_PX) output pixels x 6
 * components x NHWC_KV vectors of output channels, beside NHWC_KV vectors of taps and one
 * broadcast input float. AVX-512's 32 registers hold 24 + 2 + 1; AVX2's 16 (and the scalar
 * build's) one pixel's 12 + 2 + 1. */
#define NHWC_KV 2
#define NHWC_PX (VF_LANES == 16 ? 2 : 1)
/* Output channels in a block of taps (fconv_wino_cols_product_nhwc_fn): the same on every ISA,
 * so that the weights' layout does not depend on it. */
#define NHWC_KB 32

struct nhwc_args {
    float *y;
    size_t nrows, out_w, k, c, s, s_step;
    const float *v, *g, *bias;
    int stream;
};

/* npx pixels from w, nkv channel vectors from channel k0 (in block k0 / NHWC_KB): the pairs'
 * sum in registers, A^T, the epilogue and the stores of the tile's rows (all 4 with full). */
static ALWAYS_INLINE void nhwc_block(const struct nhwc_args *r, const int npx, const int nkv, const int relu,
                                     const int full, size_t w, size_t k0) {
    vf acc[NHWC_PX][6][NHWC_KV];
    for (int px = 0; px < npx; px++)
        for (int j = 0; j < 6; j++)
            for (int kv = 0; kv < nkv; kv++) /* the bias as m[1]'s start: A^T's column 1 is all ones */
                acc[px][j][kv] = j == 1 && r->bias ? vf_loadu(r->bias + k0 + (size_t)kv * VF_LANES) : vf_zero();
    const float *gp = r->g + k0 / NHWC_KB * NHWC_KB * r->s * r->c * 6 + k0 % NHWC_KB;
    for (size_t s = 0; s < r->s; s++) {
        const float *vp = r->v + w * r->c + s * r->s_step;
        for (size_t c = 0; c < r->c; c++, vp++, gp += 6 * NHWC_KB)
            for (int j = 0; j < 6; j++) {
                vf u[NHWC_KV];
                for (int kv = 0; kv < nkv; kv++) {
                    u[kv] = vf_load(gp + j * NHWC_KB + kv * VF_LANES);
                    if (npx > 1) IN_REGISTER(u[kv]); /* one load for both pixels */
                }
                for (int px = 0; px < npx; px++) {
                    const vf x = vf_set1(vp[(size_t)px * r->c + (size_t)j * FCONV_WINO_COLS_PLANE]);
                    for (int kv = 0; kv < nkv; kv++) acc[px][j][kv] = vf_fma(x, u[kv], acc[px][j][kv]);
                }
            }
    }
    for (int px = 0; px < npx; px++)
        for (int kv = 0; kv < nkv; kv++) {
            vf m[6];
            for (int j = 0; j < 6; j++) m[j] = acc[px][j][kv];
            tile_out(m, relu, r->y + (w + (size_t)px) * r->k + k0 + (size_t)kv * VF_LANES, r->out_w * r->k,
                     full ? 4 : r->nrows, r->stream, VF_LANES);
        }
}

/* Pixel blocks outer, channels inner: the taps (a first layer's 64 channels x 9 pairs x 6: 14
 * KiB) stay in L1 across the pixels. */
static ALWAYS_INLINE void nhwc_kernel(const struct nhwc_args *r, const int relu, const int full) {
    const size_t pairs_end = r->k / (NHWC_KV * VF_LANES) * (NHWC_KV * VF_LANES);
    size_t w = 0;
#define NHWC_PIXELS(npx)                                                                          \
    do {                                                                                          \
        size_t k0 = 0;                                                                            \
        for (; k0 < pairs_end; k0 += NHWC_KV * VF_LANES) nhwc_block(r, npx, NHWC_KV, relu, full, w, k0); \
        for (; k0 < r->k; k0 += VF_LANES) nhwc_block(r, npx, 1, relu, full, w, k0);               \
    } while (0)
    for (; w + NHWC_PX <= r->out_w; w += NHWC_PX) NHWC_PIXELS(NHWC_PX);
    for (; w < r->out_w; w++) NHWC_PIXELS(1);
#undef NHWC_PIXELS
}

void FCONV_ISA_SUFFIX(fconv_wino_cols_product_nhwc_kernel)(float *y, size_t nrows, size_t out_w, size_t k,
                                                             const float *v, size_t c, size_t s, size_t s_step,
                                                             const float *g, const float *bias, int relu,
                                                             int stream) {
    assert(y && v && g && nrows >= 1 && nrows <= 4 && k % VF_LANES == 0 && k > 0);
    assert((uintptr_t)v % (VF_LANES * sizeof(float)) == 0 && (uintptr_t)g % (VF_LANES * sizeof(float)) == 0);
    const struct nhwc_args r = {y, nrows, out_w, k, c, s, s_step, v, g, bias, stream};
    if (relu && nrows == 4) nhwc_kernel(&r, 1, 1);
    else if (relu) nhwc_kernel(&r, 1, 0);
    else if (nrows == 4) nhwc_kernel(&r, 0, 1);
    else nhwc_kernel(&r, 0, 0);
}
