/*
 * registry.c — the algorithm table. Adding an algorithm is adding its file in src/algo/
 * and one line here; AUTO, the CLI and `fastconv info` see it from this table alone.
 * Order matters only for ties in AUTO's cost estimate (earlier wins).
 */
#include <stddef.h>

#include "core/internal.h"

extern const struct fconv_algorithm fconv_algorithm_reference;
extern const struct fconv_algorithm fconv_algorithm_direct;
extern const struct fconv_algorithm fconv_algorithm_im2col;
extern const struct fconv_algorithm fconv_algorithm_mec;
extern const struct fconv_algorithm fconv_algorithm_winograd_2x2;
extern const struct fconv_algorithm fconv_algorithm_winograd_4x4;
extern const struct fconv_algorithm fconv_algorithm_winograd_6x6;
extern const struct fconv_algorithm fconv_algorithm_winograd_stride2;
extern const struct fconv_algorithm fconv_algorithm_winograd_rows;
extern const struct fconv_algorithm fconv_algorithm_winograd_cols;
extern const struct fconv_algorithm fconv_algorithm_fft;
extern const struct fconv_algorithm fconv_algorithm_fft_tiled;
extern const struct fconv_algorithm fconv_algorithm_fft_rows;
extern const struct fconv_algorithm fconv_algorithm_fft_cols;
extern const struct fconv_algorithm fconv_algorithm_separable;
extern const struct fconv_algorithm fconv_algorithm_indirect;
extern const struct fconv_algorithm fconv_algorithm_implicit_gemm;
/* GPU algorithms (src/gpu/gpu-algorithms.c): run only on a GPU device. */
extern const struct fconv_algorithm fconv_algorithm_gpu_naive;
extern const struct fconv_algorithm fconv_algorithm_gpu_constant;
extern const struct fconv_algorithm fconv_algorithm_gpu_tiled_halo;
extern const struct fconv_algorithm fconv_algorithm_gpu_tiled_global;
extern const struct fconv_algorithm fconv_algorithm_gpu_implicit_gemm;
extern const struct fconv_algorithm fconv_algorithm_gpu_winograd_2x2;
extern const struct fconv_algorithm fconv_algorithm_gpu_winograd_4x4;
extern const struct fconv_algorithm fconv_algorithm_gpu_im2col_gemm;

const struct fconv_algorithm *const fconv_algorithms[] = {
    &fconv_algorithm_direct,
    &fconv_algorithm_separable,
    &fconv_algorithm_winograd_2x2,
    &fconv_algorithm_winograd_4x4,
    &fconv_algorithm_winograd_6x6,
    &fconv_algorithm_winograd_stride2,
    &fconv_algorithm_winograd_rows,
    &fconv_algorithm_winograd_cols,
    &fconv_algorithm_im2col,
    &fconv_algorithm_implicit_gemm,
    &fconv_algorithm_indirect,
    &fconv_algorithm_mec,
    &fconv_algorithm_fft,
    &fconv_algorithm_fft_tiled,
    &fconv_algorithm_fft_rows,
    &fconv_algorithm_fft_cols,
    &fconv_algorithm_reference,
    &fconv_algorithm_gpu_winograd_4x4,
    &fconv_algorithm_gpu_winograd_2x2,
    &fconv_algorithm_gpu_implicit_gemm,
    &fconv_algorithm_gpu_im2col_gemm,
    &fconv_algorithm_gpu_tiled_halo,
    &fconv_algorithm_gpu_tiled_global,
    &fconv_algorithm_gpu_constant,
    &fconv_algorithm_gpu_naive,
    NULL,
};

const struct fconv_algorithm *fconv_algorithm_find(fconv_algo id) {
    for (size_t i = 0; fconv_algorithms[i]; i++)
        if (fconv_algorithms[i]->id == id) return fconv_algorithms[i];
    return NULL;
}
