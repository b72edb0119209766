/*
 * winograd-gather.c — Winograd F(4x4, 3x3)'s moves between images and the tile-minor layout
 * the transforms run over (winograd.h), one image row of a run of tiles at a time.
 * Gather: tile r's 6x6 input patch row is columns col0 + 4r .. col0 + 4r + 5, so VF_LANES
 * tiles are 4*VF_LANES + 2 consecutive floats, deinterleaved by 4 into patch columns 0..3
 * and shifted one tile for columns 4 and 5 (a strided scalar copy was ~20% of a 64-channel
 * layer's time). Scatter: the 4 output columns of VF_LANES tiles interleaved back into one
 * contiguous run of the output row, bias and ReLU applied on the way. Compiled once per
 * ISA; contracts: fconv_wino_f4_gather_fn, fconv_wino_f4_scatter_fn.
 */
#include <assert.h>
#include <stdint.h>

#include "core/dispatch.h"
#include "simd/vec.h"

/* Column col of the row, zero outside [0, w). */
static inline float column(const float *xr, int64_t col, int64_t w) {
    return col >= 0 && col < w ? xr[col] : 0.0f;
}

static void gather_scalar(const float *xr, int64_t col0, int64_t w, size_t r0, size_t r1, float *dst,
                          size_t dst_step) {
    for (size_t r = r0; r < r1; r++)
        for (size_t j = 0; j < 6; j++) dst[j * dst_step + r] = column(xr, col0 + 4 * (int64_t)r + (int64_t)j, w);
}

void FCONV_ISA_SUFFIX(fconv_wino_f4_gather_kernel)(const float *xr, int64_t col0, int64_t w, size_t run,
                                                   float *dst, size_t dst_step) {
    assert(xr && dst && dst_step >= run);
    /* Whole vectors where every float they read is inside the row: from the first tile with
     * col0 + 4r >= 0, while col0 + 4(r + VF_LANES) + 2 <= w. */
    size_t r = col0 >= 0 ? 0 : (size_t)((-col0 + 3) / 4);
    if (r > run) r = run;
    gather_scalar(xr, col0, w, 0, r, dst, dst_step);
    for (; r + VF_LANES <= run && col0 + 4 * (int64_t)(r + VF_LANES) + 2 <= w; r += VF_LANES) {
        const float *p = xr + col0 + 4 * (int64_t)r;
        vf o[4];
        vf_deinterleave4(p, o);
        for (size_t j = 0; j < 4; j++) vf_storeu(dst + j * dst_step + r, o[j]);
        vf_storeu(dst + 4 * dst_step + r, vf_shift_in(o[0], p[4 * VF_LANES]));
        vf_storeu(dst + 5 * dst_step + r, vf_shift_in(o[1], p[4 * VF_LANES + 1]));
    }
    gather_scalar(xr, col0, w, r, run, dst, dst_step);
}

void FCONV_ISA_SUFFIX(fconv_wino_f4_scatter_kernel)(const float *src, size_t src_step, size_t run,
                                                    float *yrow, int64_t q0, int64_t out_w,
                                                    const float *bias, int relu) {
    assert(src && yrow && q0 >= 0 && src_step >= run);
    /* VF_LANES tiles at a time; a block that would pass the row's end, or the last, shorter
     * one, is interleaved into a buffer and only what exists is copied out. */
    for (size_t r = 0; r < run;) {
        const size_t n = run - r < VF_LANES ? run - r : VF_LANES;
        const int64_t q = q0 + 4 * (int64_t)r, avail = out_w - q;
        vf v[4];
        for (size_t j = 0; j < 4; j++) {
            v[j] = n == VF_LANES ? vf_loadu(src + j * src_step + r) : vf_loadu_partial(src + j * src_step + r, n);
            if (bias) v[j] = vf_add(v[j], vf_set1(*bias));
            if (relu) v[j] = vf_max(vf_zero(), v[j]); /* NaN in v[j] gives v[j] */
        }
        if (n == VF_LANES && avail >= 4 * VF_LANES) {
            vf_interleave4(v, yrow + q);
        } else {
            float buf[4 * VF_LANES];
            vf_interleave4(v, buf);
            const int64_t count = avail < 4 * (int64_t)n ? avail : 4 * (int64_t)n;
            for (int64_t i = 0; i < count; i++) yrow[q + i] = buf[i];
        }
        r += n;
    }
}
