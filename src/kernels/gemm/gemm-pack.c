/*
 * gemm-pack.c — packing an untransposed B block into the micro-kernel's NR-column slivers,
 * compiled once per ISA (simd/vec.h) so that NR is a constant and a sliver row is NR/VF_LANES
 * whole-vector copies, and eight rows of B at a time, so every visit of a sliver writes it
 * eight consecutive lines. On a 256 x 3136 B, one thread: the generic row-at-a-time loop
 * with NR a variable 5-6 GB/s, whole vectors a row at a time 11-14, eight rows 22-29 (and,
 * unlike a sliver at a time, still 19 on 12544 columns). Contract: fconv_gemm_pack_b_fn in
 * core/dispatch.h.
 */
#include <assert.h>

#include "core/dispatch.h"
#include "simd/vec.h"
#include "kernels/gemm/gemm-tile.h"

#define ROWS 8

/* Row p of B's columns [js, js + NR) into row p of its sliver. */
static inline void copy_sliver_row(const float *restrict src, float *restrict dst) {
    for (int v = 0; v < NV; v++) vf_store(dst + v * VF_LANES, vf_loadu(src + v * VF_LANES));
}

void FCONV_ISA_SUFFIX(fconv_gemm_pack_b)(size_t kc, size_t cols, const float *restrict b, size_t ldb,
                                         float *restrict dst) {
    assert(b && dst && cols >= 1);
    const size_t full = cols / NR * NR;
    size_t p = 0;
    for (; p + ROWS <= kc; p += ROWS)
        for (size_t js = 0; js < full; js += NR)
            for (size_t r = 0; r < ROWS; r++)
                copy_sliver_row(b + (p + r) * ldb + js, dst + js * kc + (p + r) * NR);
    for (; p < kc; p++)
        for (size_t js = 0; js < full; js += NR) copy_sliver_row(b + p * ldb + js, dst + js * kc + p * NR);
    if (full < cols) /* the last, partial sliver, zero-padded */
        for (p = 0; p < kc; p++) {
            const float *src = b + p * ldb + full;
            float *d = dst + full * kc + p * NR;
            for (size_t j = 0; j < NR; j++) d[j] = full + j < cols ? src[j] : 0.0f;
        }
}
