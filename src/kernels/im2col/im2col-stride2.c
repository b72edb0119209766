/*
 * im2col-stride2.c — the row copy of im2col's lowering at stride 2 (ResNet's downsampling
 * layers), compiled once per ISA (simd/vec.h): two loads and one permute per vector of
 * outputs, masked ones for the rest. The scalar loop it replaces took 12% of a 128x56^2
 * 3x3/2 layer's time on one thread. Contract: fconv_copy_stride2_fn in core/dispatch.h.
 */
#include "core/dispatch.h"
#include "simd/vec.h"

void FCONV_ISA_SUFFIX(fconv_im2col_copy_stride2)(float *restrict dst, const float *restrict src,
                                                 size_t n) {
    if (n == 0) return;
    size_t i = 0;
    /* Whole vectors while their last (odd) float, src[2i + 2 VF_LANES - 1], stays before
     * src[2n - 2], the last one the contract lets us read. */
    for (; i + VF_LANES < n; i += VF_LANES)
        vf_storeu(dst + i, vf_even2(vf_loadu(src + 2 * i), vf_loadu(src + 2 * i + VF_LANES)));
    /* The last 1..VF_LANES outputs from masked loads of the 2r - 1 floats they need (a
     * 28-wide input row gives 14: no whole vector at all on AVX-512). */
    size_t r = n - i, need = 2 * r - 1;
    vf lo = vf_loadu_partial(src + 2 * i, need < VF_LANES ? need : VF_LANES);
    vf hi = vf_loadu_partial(src + 2 * i + VF_LANES, need > VF_LANES ? need - VF_LANES : 0);
    vf_storeu_partial(dst + i, vf_even2(lo, hi), r);
}
