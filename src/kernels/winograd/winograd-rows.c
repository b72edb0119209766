/*
 * winograd-rows.c — the kernels of winograd-rows (algo/winograd-rows.c): Winograd F(4,3) along
 * image rows, each kernel row's three taps in 6 multiplies per 4 outputs, the kernel rows and
 * input channels summed in the transform domain. The input transform turns a gathered row
 * (fconv_wino_gather_fn, m = 4) into its six transformed rows in place; the product sums, for
 * a few output channels, every (input channel, kernel row) pair's transformed row times its
 * transformed taps in registers and ends with the inverse transform, so each output is stored
 * once per call and the sum over pairs runs as deep as the layer has pairs (the 2D Winograd's
 * products sum over input channels only: 3 for a first layer). Compiled once per ISA;
 * contracts: fconv_wino_rows_input_fn, fconv_wino_rows_product_fn (core/dispatch.h).
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "core/dispatch.h"
#include "simd/vec.h"

#include "kernels/winograd/winograd-1d.h"

/* Tile vectors per step of the product: 2 output channels x 6 components x ROWS_NV
 * accumulators, beside ROWS_NV transformed input vectors and one broadcast tap. AVX-512's 32
 * registers hold 24 + 2 + 1; AVX2's 16 (and the scalar build's) 12 + 1 + 1. */
#define ROWS_NV (VF_LANES == 16 ? 2 : 1)

void FCONV_ISA_SUFFIX(fconv_wino_rows_input_kernel)(float *u, size_t u_step, size_t ntiles) {
    assert(u && (uintptr_t)u % (VF_LANES * sizeof(float)) == 0 && u_step % VF_LANES == 0 && u_step >= ntiles);
    for (size_t t = 0; t < ntiles; t += VF_LANES) {
        const size_t n = ntiles - t < VF_LANES ? ntiles - t : VF_LANES;
        vf d[6], o[6];
        for (size_t j = 0; j < 6; j++)
            d[j] = n == VF_LANES ? vf_load(u + j * u_step + t) : vf_loadu_partial(u + j * u_step + t, n);
        input_1d_f4(d, o);
        for (size_t j = 0; j < 6; j++) vf_store(u + j * u_step + t, o[j]); /* the padding lanes: 0 */
    }
}

/* One call's operands (fconv_wino_rows_product_fn). */
struct rows_args {
    float *y;
    size_t y_kstride, out_w, u_step, nc, nr, g_kstride, g_cstep;
    const float *u, *g;
    ptrdiff_t u_cstep, u_rstep;
    const float *bias;
    int stream;
};

/* Columns [q, q + 4*VF_LANES) of an output row, cut at out_w: the four phase vectors
 * interleaved in registers and stored whole (streamed with stream), or vector by vector past
 * the row's end (whole ones streamed too: plain, they had read in the lines they write, 1/7
 * of a 224-column row). Written straight from the product: stores spread among its multiply-adds,
 * where a scatter pass after each row had stalled on its bursts of non-temporal stores
 * (3 -> 64 on 224^2 x 8, one thread: 14 ms, against direct's 8.5). */
static ALWAYS_INLINE void store_columns(const struct rows_args *r, float *yrow, size_t q, const vf o[4]) {
    vf out[4];
    vf_interleave4_regs(o, out);
    if (q + 4 * VF_LANES <= r->out_w) {
        for (int v = 0; v < 4; v++) {
            if (r->stream) vf_stream(yrow + q + (size_t)v * VF_LANES, out[v]);
            else vf_storeu(yrow + q + (size_t)v * VF_LANES, out[v]);
        }
        return;
    }
    for (size_t v = 0; v < 4 && q + v * VF_LANES < r->out_w; v++) {
        const size_t left = r->out_w - q - v * VF_LANES;
        if (left >= VF_LANES && r->stream) vf_stream(yrow + q + v * VF_LANES, out[v]);
        else if (left >= VF_LANES) vf_storeu(yrow + q + v * VF_LANES, out[v]);
        else vf_storeu_partial(yrow + q + v * VF_LANES, out[v], left);
    }
}

/* nk (1 or 2, a constant) output channels from channel k, nv (1 or ROWS_NV) tile vectors from
 * tile t: the sum over the pairs in registers, then A^T, the epilogue and the stores. */
static ALWAYS_INLINE void product_block(const struct rows_args *r, const int nk, const int nv, const int relu,
                                        const int shuffled, size_t k, size_t t) {
    vf acc[2][6][ROWS_NV];
    for (int a = 0; a < nk; a++)
        for (int j = 0; j < 6; j++)
            for (int v = 0; v < nv; v++) /* the bias as m[1]'s start: A^T's column 1 is all ones */
                acc[a][j][v] = j == 1 && r->bias ? vf_set1(r->bias[k + (size_t)a]) : vf_zero();
    for (size_t c = 0; c < r->nc; c++)
        for (size_t b = 0; b < r->nr; b++) {
            const float *up = r->u + (ptrdiff_t)c * r->u_cstep + (ptrdiff_t)b * r->u_rstep + t;
            const float *gp = r->g + k * r->g_kstride + c * r->g_cstep + b * 6;
#if VF_LANES == 16
            vf taps4[2]; /* shuffled: each channel's taps 0-3 in every 128-bit lane */
            for (int a = 0; a < nk; a++) taps4[a] = shuffled ? vf_broadcast4(gp + (size_t)a * r->g_kstride) : vf_zero();
#endif
            for (int j = 0; j < 6; j++) {
                vf x[ROWS_NV];
                for (int v = 0; v < nv; v++) {
                    x[v] = vf_load(up + (size_t)j * r->u_step + (size_t)v * VF_LANES);
                    if (nk > 1) IN_REGISTER(x[v]); /* one load for both channels, not one folded into each FMA */
                }
                for (int a = 0; a < nk; a++) {
#if VF_LANES == 16
                    const vf tap = shuffled && j < 4 ? vf_spread4(taps4[a], j)
                                                     : vf_set1(gp[(size_t)a * r->g_kstride + (size_t)j]);
#else
                    (void)shuffled;
                    const vf tap = vf_set1(gp[(size_t)a * r->g_kstride + (size_t)j]);
#endif
                    for (int v = 0; v < nv; v++) acc[a][j][v] = vf_fma(tap, x[v], acc[a][j][v]);
                }
            }
        }
    for (int a = 0; a < nk; a++) {
        float *yrow = r->y + (k + (size_t)a) * r->y_kstride;
        for (int v = 0; v < nv; v++) {
            vf m[6], o[4];
            for (int j = 0; j < 6; j++) m[j] = acc[a][j][v];
            output_1d_f4(m, o);
            if (relu)
                for (int i = 0; i < 4; i++) o[i] = vf_max(vf_zero(), o[i]); /* NaN stays NaN: maxps gives its second operand */
            store_columns(r, yrow, 4 * (t + (size_t)v * VF_LANES), o);
        }
    }
}

/* The product kernel (fconv_wino_rows_product_fn), its taps broadcast by loads or, shuffled
 * (AVX-512), taps 0-3 of each channel by in-lane shuffles of one 128-bit load. */
static ALWAYS_INLINE void product_kernel(const struct rows_args *r, size_t nk, int relu, const int shuffled) {
    const size_t tiles = (r->out_w + 3) / 4, padded = (tiles + VF_LANES - 1) / VF_LANES * VF_LANES;
    /* channels outer: the pairs' transformed rows stay in L1 across the tile steps of two
     * channels, and the two channels' taps are broadcast once per step */
    for (size_t k = 0; k < nk; k += 2) {
        const int two = k + 2 <= nk;
        /* nk, nv and relu constants in each instance: run-time tests in the block had GCC keep
         * accumulators on the stack (direct-rows.c measured the same) */
#define ROWS_BLOCK(nv) \
    do { \
        if (two && relu) product_block(r, 2, nv, 1, shuffled, k, t); \
        else if (two) product_block(r, 2, nv, 0, shuffled, k, t); \
        else if (relu) product_block(r, 1, nv, 1, shuffled, k, t); \
        else product_block(r, 1, nv, 0, shuffled, k, t); \
    } while (0)
        size_t t = 0;
        for (; t + ROWS_NV * VF_LANES <= padded; t += ROWS_NV * VF_LANES) ROWS_BLOCK(ROWS_NV);
        for (; t < padded; t += VF_LANES) ROWS_BLOCK(1);
#undef ROWS_BLOCK
    }
}

/* The exported kernels' parameters (fconv_wino_rows_product_fn) and body. */
#define PRODUCT_ARGS                                                                                     \
    float *y, size_t y_kstride, size_t nk, size_t out_w, const float *u, size_t u_step, ptrdiff_t u_cstep, \
        ptrdiff_t u_rstep, size_t nc, size_t nr, const float *g, size_t g_kstride, size_t g_cstep,         \
        const float *bias, int relu, int stream
#define PRODUCT_CALL(shuffled)                                                                           \
    do {                                                                                                 \
        assert(y && u && g && (uintptr_t)u % (VF_LANES * sizeof(float)) == 0 && u_step % VF_LANES == 0); \
        assert(u_cstep % VF_LANES == 0 && u_rstep % VF_LANES == 0);                                      \
        const struct rows_args r = {y, y_kstride, out_w, u_step, nc, nr, g_kstride, g_cstep,             \
                                    u, g, u_cstep, u_rstep, bias, stream};                               \
        product_kernel(&r, nk, relu, shuffled);                                                          \
    } while (0)

void FCONV_ISA_SUFFIX(fconv_wino_rows_product_kernel)(PRODUCT_ARGS) { PRODUCT_CALL(0); }

#if VF_LANES == 16
/* Per transformed row and pair, the two channels' 12 tap broadcasts and 12 input vector loads
 * feed 24 multiply-adds: one 512-bit load per multiply-add, and where those issue one a cycle
 * (fconv_cpu_info.wide_loads_slow: Intel's Ice Lake) the product waited on its loads at twice
 * its multiply-adds' time. Taps 0-3 of each channel come instead from one 128-bit broadcast
 * load (all four in every 128-bit lane) by an in-lane shuffle each (the port that also
 * multiplies, so taps 4 and 5 keep their loads): ~16 wide loads and 32 multiply-add or shuffle
 * slots a step against 24 and 24. The same products: the same bits. Ice Lake VM, 3 -> 64 on
 * 224^2 (VGG's first layer), 2 threads: in one process (9-31 alternated rounds, medians)
 * 1.08-1.09x at batch 1, 1.08x at batch 8, 1.04x on one thread; 9 alternated CLI rounds 1.06x,
 * 1.15x and 1.13x. */
void FCONV_ISA_SUFFIX(fconv_wino_rows_product_shuffled_kernel)(PRODUCT_ARGS) { PRODUCT_CALL(1); }
#endif
