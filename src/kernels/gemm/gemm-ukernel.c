/*
 * gemm-ukernel.c — the GEMM micro-kernel: an MR x NR tile of C accumulated in registers from
 * packed panels of A (MR rows, k-major) and B (NR columns, k-major), one broadcast of A and
 * NR/VF_LANES loads of B per k step. MR x NR is 6 x 16 on AVX2 (12 accumulators), 6 x 32 on
 * AVX-512, 4 x 4 scalar. Also its half-width twin, MR x NR/2 from NR/2-wide B slivers, for
 * products too narrow for a whole sliver (Winograd's 16-tile blocks on AVX-512: padded to
 * 32 columns, half the multiply-adds were thrown away). Compiled once per ISA (simd/vec.h);
 * contracts: fconv_gemm_ukernel_fn and fconv_gemm_ukernel_half in core/dispatch.h.
 */
#include <assert.h>

#include "core/dispatch.h"
#include "simd/vec.h"
#include "kernels/gemm/gemm-tile.h"

#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* The tile of nv vectors per row (NV or NV/2), B slivers nv*VF_LANES wide. */
static ALWAYS_INLINE void ukernel(const int nv, size_t k, const float *restrict a, const float *restrict b,
                                  float *restrict c, size_t ldc, int accumulate, size_t mr, size_t nr) {
    const size_t width = (size_t)nv * VF_LANES;
    assert(a && b && c && mr >= 1 && mr <= MR && nr >= 1 && nr <= width);
    vf acc[MR][NV];
    for (int i = 0; i < MR; i++)
        for (int v = 0; v < nv; v++) acc[i][v] = vf_zero();
    for (size_t p = 0; p < k; p++) {
        vf bv[NV];
        for (int v = 0; v < nv; v++) bv[v] = vf_load(b + p * width + (size_t)v * VF_LANES);
        for (int i = 0; i < MR; i++) {
            vf av = vf_set1(a[p * MR + (size_t)i]);
            for (int v = 0; v < nv; v++) acc[i][v] = vf_fma(av, bv[v], acc[i][v]);
        }
    }
    if (mr == MR && nr == width) { /* full tile: straight to C */
        for (int i = 0; i < MR; i++)
            for (int v = 0; v < nv; v++) {
                float *ci = c + (size_t)i * ldc + (size_t)v * VF_LANES;
                vf_storeu(ci, accumulate ? vf_add(vf_loadu(ci), acc[i][v]) : acc[i][v]);
            }
        return;
    }
    /* An edge tile: the packed panels are zero-padded, so compute all, store what exists. */
    float tile[MR * NR];
    for (int i = 0; i < MR; i++)
        for (int v = 0; v < nv; v++) vf_storeu(tile + (size_t)i * width + (size_t)v * VF_LANES, acc[i][v]);
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++)
            c[i * ldc + j] = accumulate ? c[i * ldc + j] + tile[i * width + j] : tile[i * width + j];
}

void FCONV_ISA_SUFFIX(fconv_gemm_ukernel)(size_t k, const float *restrict a, const float *restrict b,
                                          float *restrict c, size_t ldc, int accumulate, size_t mr,
                                          size_t nr) {
    ukernel(NV, k, a, b, c, ldc, accumulate, mr, nr);
}

void FCONV_ISA_SUFFIX(fconv_gemm_ukernel_half)(size_t k, const float *restrict a, const float *restrict b,
                                               float *restrict c, size_t ldc, int accumulate, size_t mr,
                                               size_t nr) {
    ukernel(NV / 2, k, a, b, c, ldc, accumulate, mr, nr);
}

/* The tile shape of this compilation, for the dispatch table. */
size_t FCONV_ISA_SUFFIX(fconv_gemm_mr)(void) { return MR; }
size_t FCONV_ISA_SUFFIX(fconv_gemm_nr)(void) { return NR; }
