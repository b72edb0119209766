/*
 * transpose.c — a block of a matrix transposed: what moves conv2d's NHWC tensors to NCHW and
 * back for the algorithms that read NCHW only. Whole VF_LANES x VF_LANES squares go through
 * registers (VF_LANES row loads, vf_transpose, VF_LANES row stores); the ragged right and
 * bottom edges one float at a time. Compiled once per ISA (simd/vec.h); contract:
 * fconv_transpose_fn in core/dispatch.h.
 */
#include "core/dispatch.h"
#include "simd/vec.h"

void FCONV_ISA_SUFFIX(fconv_transpose)(const float *src, size_t ld_src, size_t rows, size_t cols, float *dst,
                                       size_t ld_dst) {
    const size_t full_rows = rows - rows % VF_LANES, full_cols = cols - cols % VF_LANES;
    for (size_t i = 0; i < full_rows; i += VF_LANES) {
        for (size_t j = 0; j < full_cols; j += VF_LANES) {
            vf r[VF_LANES];
            UNROLLED (int a = 0; a < VF_LANES; a++) r[a] = vf_loadu(src + (i + (size_t)a) * ld_src + j);
            vf_transpose(r);
            UNROLLED (int a = 0; a < VF_LANES; a++) vf_storeu(dst + (j + (size_t)a) * ld_dst + i, r[a]);
        }
        for (size_t j = full_cols; j < cols; j++)
            for (size_t a = i; a < i + VF_LANES; a++) dst[j * ld_dst + a] = src[a * ld_src + j];
    }
    for (size_t i = full_rows; i < rows; i++)
        for (size_t j = 0; j < cols; j++) dst[j * ld_dst + i] = src[i * ld_src + j];
}
