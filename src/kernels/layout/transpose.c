/*
 * transpose.c — a block of a matrix transposed: what moves conv2d's NHWC tensors to NCHW and
 * back for the algorithms that read NCHW only. Whole VF_LANES x VF_LANES squares go through
 * registers (VF_LANES row loads, vf_transpose, VF_LANES row stores), and so do the ragged right
 * and bottom edges, by partial loads and stores: the NCHW Winograd driver transposes rows of
 * 14-58 pixels, mostly edge. Compiled once per ISA (simd/vec.h); contract: fconv_transpose_fn
 * in core/dispatch.h.
 */
#include "core/dispatch.h"
#include "simd/vec.h"

/* One square of at most VF_LANES x VF_LANES: nr rows of nc floats in, nc rows of nr out, through
 * registers (the rows past nr zero, the lanes past nc neither read nor stored). */
static ALWAYS_INLINE void transpose_square(const float *src, size_t ld_src, size_t nr, size_t nc, float *dst,
                                    size_t ld_dst) {
    vf r[VF_LANES];
    UNROLLED (size_t a = 0; a < VF_LANES; a++)
        r[a] = a >= nr ? vf_zero() : nc == VF_LANES ? vf_loadu(src + a * ld_src) : vf_loadu_partial(src + a * ld_src, nc);
    vf_transpose(r);
    for (size_t a = 0; a < nc; a++) {
        if (nr == VF_LANES) vf_storeu(dst + a * ld_dst, r[a]);
        else vf_storeu_partial(dst + a * ld_dst, r[a], nr);
    }
}

void FCONV_ISA_SUFFIX(fconv_transpose)(const float *src, size_t ld_src, size_t rows, size_t cols, float *dst,
                                       size_t ld_dst) {
    const size_t full_rows = rows - rows % VF_LANES, full_cols = cols - cols % VF_LANES;
    for (size_t i = 0; i < rows; i += VF_LANES) {
        const size_t nr = i < full_rows ? VF_LANES : rows - i;
        for (size_t j = 0; j < full_cols; j += VF_LANES) {
            const float *s = src + i * ld_src + j;
            float *d = dst + j * ld_dst + i;
            if (nr == VF_LANES) transpose_square(s, ld_src, VF_LANES, VF_LANES, d, ld_dst); /* constants: no masks */
            else transpose_square(s, ld_src, nr, VF_LANES, d, ld_dst);
        }
        if (full_cols < cols)
            transpose_square(src + i * ld_src + full_cols, ld_src, nr, cols - full_cols, dst + full_cols * ld_dst + i,
                             ld_dst);
    }
}
