/*
 * transpose.c — a block of a matrix transposed: what moves conv2d's NHWC tensors to NCHW and
 * back for the algorithms that read NCHW only. Whole VF_LANES x VF_LANES squares go through
 * registers (VF_LANES row loads, vf_transpose, VF_LANES row stores), and so do the ragged right
 * and bottom edges, by partial loads and stores: the NCHW Winograd driver transposes rows of
 * 14-58 pixels, mostly edge. Three or four channels (RGB, RGBA) side by side go through
 * permutes instead. A streamed form writes whole lines of dst by non-temporal stores (the
 * channels-last Winograd driver's large NCHW outputs). Compiled once per ISA (simd/vec.h);
 * contracts: fconv_transpose_fn and transpose_streamed in core/dispatch.h.
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

/* Rows of c = 3 or 4 floats side by side (an NHWC image's RGB or RGBA pixels) into c rows of
 * dst, VF_LANES rows at a time: their c vectors cut apart by a few permutes, where a
 * square, padded to VF_LANES columns, cost a whole register transpose for c columns (2 threads,
 * Ice Lake VM, 1 x 3 x 1024^2 -> 1 3x3 NHWC: the transpose 45% of the samples, the layer 17%).
 * The rows done; the rest go through squares. */
static ALWAYS_INLINE size_t deinterleave_rows(const float *src, size_t rows, const int c, float *dst,
                                              size_t ld_dst) {
    size_t i = 0;
    for (; i + VF_LANES <= rows; i += VF_LANES) {
        vf in[4], o[4];
        UNROLLED (int k = 0; k < c; k++) in[k] = vf_loadu(src + i * (size_t)c + (size_t)k * VF_LANES);
        if (c == 3) vf_deinterleave3(in, o);
        else vf_deinterleave4(in, o);
        UNROLLED (int j = 0; j < c; j++) vf_storeu(dst + (size_t)j * ld_dst + i, o[j]);
    }
    return i;
}

/* The inverse: c = 3 or 4 rows of src into columns side by side in dst (rows of c floats); the
 * columns done. */
static ALWAYS_INLINE size_t interleave_cols(const float *src, size_t ld_src, size_t cols, const int c, float *dst) {
    size_t j = 0;
    for (; j + VF_LANES <= cols; j += VF_LANES) {
        vf in[4];
        UNROLLED (int k = 0; k < c; k++) in[k] = vf_loadu(src + (size_t)k * ld_src + j);
        if (c == 3) vf_interleave3(in, dst + j * 3);
        else vf_interleave4(in, dst + j * 4);
    }
    return j;
}

/* Whole squares, then the ragged right and bottom edges. */
static void transpose_squares(const float *src, size_t ld_src, size_t rows, size_t cols, float *dst, size_t ld_dst) {
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

/* One square of VF_LANES rows of nc <= VF_LANES floats in, nc rows of VF_LANES out, stored
 * non-temporally (the rows past nc neither read nor stored). */
static ALWAYS_INLINE void transpose_square_streamed(const float *src, size_t ld_src, size_t nc, float *dst,
                                                    size_t ld_dst) {
    vf r[VF_LANES];
    UNROLLED (size_t a = 0; a < VF_LANES; a++)
        r[a] = nc == VF_LANES ? vf_loadu(src + a * ld_src) : vf_loadu_partial(src + a * ld_src, nc);
    vf_transpose(r);
    for (size_t a = 0; a < nc; a++) vf_stream(dst + a * ld_dst, r[a]);
}

/* A line's worth of src's rows at a time, so that each of dst's lines is written whole by
 * consecutive stores (two squares' on AVX2, where a vector is half a line). */
void FCONV_ISA_SUFFIX(fconv_transpose_streamed)(const float *src, size_t ld_src, size_t rows, size_t cols, float *dst,
                                                size_t ld_dst) {
    enum { LINE_FLOATS = 16 };
    const size_t full_cols = cols - cols % VF_LANES;
    for (size_t i = 0; i < rows; i += LINE_FLOATS) {
        for (size_t j = 0; j < full_cols; j += VF_LANES)
            UNROLLED (size_t h = 0; h < LINE_FLOATS; h += VF_LANES)
                transpose_square_streamed(src + (i + h) * ld_src + j, ld_src, VF_LANES, dst + j * ld_dst + i + h, ld_dst);
        if (full_cols < cols)
            UNROLLED (size_t h = 0; h < LINE_FLOATS; h += VF_LANES)
                transpose_square_streamed(src + (i + h) * ld_src + full_cols, ld_src, cols - full_cols,
                                          dst + full_cols * ld_dst + i + h, ld_dst);
    }
}

void FCONV_ISA_SUFFIX(fconv_transpose)(const float *src, size_t ld_src, size_t rows, size_t cols, float *dst,
                                       size_t ld_dst) {
    if ((cols == 3 || cols == 4) && ld_src == cols) {
        const size_t done = cols == 3 ? deinterleave_rows(src, rows, 3, dst, ld_dst) : deinterleave_rows(src, rows, 4, dst, ld_dst);
        src += done * ld_src;
        dst += done;
        rows -= done;
    } else if ((rows == 3 || rows == 4) && ld_dst == rows) {
        const size_t done = rows == 3 ? interleave_cols(src, ld_src, cols, 3, dst) : interleave_cols(src, ld_src, cols, 4, dst);
        src += done;
        dst += done * ld_dst;
        cols -= done;
    }
    transpose_squares(src, ld_src, rows, cols, dst, ld_dst);
}
