/*
 * winograd-gather.c — the moves between images and the tile-minor layout the transforms run
 * over (winograd.h) of Winograd F(2x2, 3x3), F(4x4, 3x3) and F(3x3, 4x4), one image row of a
 * run of tiles at a time.
 * Gather, F(m x m, 3 x 3): tile r's input patch row is columns col0 + m*r .. col0 + m*r + m + 1,
 * so VF_LANES tiles are m*VF_LANES + 2 consecutive floats: F(4x4) deinterleaves them by 4
 * into patch columns 0..3, F(2x2) takes the even floats from columns c and c + 1, and both
 * shift one tile for the last two columns (a strided scalar copy was ~20% of a 64-channel
 * layer's time, and ~13% of a 7x7 map's F(2x2) layer). F(3x3, 4x4) on a
 * stride-2 phase: columns col0 + 6r + 2j, every sixth float of 6*VF_LANES for j = 0..2,
 * shifted one tile for 3..5. Scatter: the m output columns of VF_LANES tiles interleaved back
 * into one contiguous run of the output row, bias and ReLU applied on the way. Compiled once
 * per ISA; contracts: fconv_wino_gather_fn, fconv_wino_scatter_fn.
 */
#include <assert.h>
#include <stdint.h>

#include "core/dispatch.h"
#include "simd/vec.h"

/* Columns c .. c + VF_LANES - 1 of the row, zero outside [0, w): a plain load inside, a
 * masked load (lanes inside only) at the row's ends. */
static inline vf columns(const float *xr, int64_t c, int64_t w) {
    if (c >= 0 && c + VF_LANES <= w) return vf_loadu(xr + c);
    const int64_t lo = c >= 0 ? 0 : -c, hi = w - c < VF_LANES ? w - c : VF_LANES;
    if (lo >= hi) return vf_zero();
    /* xr + c may lie before the row: address it as an integer, only lanes [lo, hi) are read */
    return vf_loadu_lanes((const float *)((uintptr_t)xr + (uintptr_t)(c * (int64_t)sizeof(float))), (size_t)lo,
                          (size_t)hi);
}

/* Column c of the row, zero outside [0, w). */
static inline float column(const float *xr, int64_t c, int64_t w) { return c >= 0 && c < w ? xr[c] : 0.0f; }

/* One patch row of n (<= VF_LANES) tiles, its alpha columns o[0..alpha-1] at d + j*step; n
 * lanes wide. */
static inline void store_patch_row(float *d, size_t step, const vf o[6], size_t alpha, size_t n) {
    for (size_t j = 0; j < alpha; j++) {
        if (n == VF_LANES) vf_storeu(d + j * step, o[j]);
        else vf_storeu_partial(d + j * step, o[j], n);
    }
}

/* n (<= VF_LANES) outputs from s, the bias added (bias may be NULL), then max(0, .) if relu. */
static inline vf load_outputs(const float *s, size_t n, const float *bias, int relu) {
    vf v = n == VF_LANES ? vf_loadu(s) : vf_loadu_partial(s, n);
    if (bias) v = vf_add(v, vf_set1(*bias));
    return relu ? vf_max(vf_zero(), v) : v; /* NaN in v gives v */
}

/* The gather for one m, inlined with m a constant: tiles `step` columns apart, patch
 * columns `s` apart (F(2x2) and F(4x4): m and 1; F(3x3, 4x4) on a stride-2 phase: 6 and 2).
 * VF_LANES tiles are `step` vectors from column c: patch columns 0 .. m-1 picked from them (a
 * deinterleave by 4, the even floats from c and c + 1, or every sixth float from c + 2j),
 * columns m .. alpha-1 the same shifted one tile (the next tile's columns 0 .. alpha-1-m).
 * Blocks at the row's ends load through masks and a block shorter than a vector (on AVX-512
 * a 56-wide map's 14-tile row is one) is stored n lanes wide, so no tile takes a scalar path. */
static inline void gather_run(const float *xr, int64_t col0, int64_t w, size_t m, size_t run, float *dst,
                              size_t dst_step) {
    const int64_t step = m == 3 ? 6 : (int64_t)m, s = m == 3 ? 2 : 1;
    const size_t alpha = m == 3 ? 6 : m + 2;
    for (size_t r = 0; r < run; r += VF_LANES) {
        const size_t n = run - r < VF_LANES ? run - r : VF_LANES;
        const int64_t c = col0 + step * (int64_t)r;
        vf in[6], o[6];
        for (int64_t k = 0; k < step; k++) in[k] = columns(xr, c + k * VF_LANES, w);
        if (m == 4) {
            vf_deinterleave4(in, o);
        } else if (m == 2) {
            o[0] = vf_even2(in[0], in[1]);
            o[1] = vf_even2(columns(xr, c + 1, w), columns(xr, c + 1 + VF_LANES, w));
        } else {
            for (size_t j = 0; j < m; j++) o[j] = vf_every6(in, (int)(s * (int64_t)j));
        }
        for (size_t j = m; j < alpha; j++)
            o[j] = vf_shift_in(o[j - m], column(xr, c + step * VF_LANES + s * (int64_t)(j - m), w));
        store_patch_row(dst + r, dst_step, o, alpha, n);
    }
}

void FCONV_ISA_SUFFIX(fconv_wino_gather_kernel)(const float *xr, int64_t col0, int64_t w, size_t m, size_t run,
                                                float *dst, size_t dst_step) {
    assert(xr && dst && dst_step >= run && m >= 2 && m <= 4);
    if (m == 4) gather_run(xr, col0, w, 4, run, dst, dst_step);
    else if (m == 3) gather_run(xr, col0, w, 3, run, dst, dst_step);
    else gather_run(xr, col0, w, 2, run, dst, dst_step);
}

void FCONV_ISA_SUFFIX(fconv_wino_f4_gather_grid_kernel)(const float *const *rows, int64_t col0, int64_t w,
                                                        size_t ntiles, float *dst, size_t dst_step) {
    assert(rows && dst && ntiles % 4 == 0 && dst_step >= ntiles);
    /* VF_LANES tiles are 4*VF_LANES floats of the tile rows' 16 columns laid end to end
     * (a vector's worth never crosses a tile row: VF_LANES divides 16), so the run gather's
     * deinterleave by 4 serves: in[k] from columns c .. c + VF_LANES - 1 of its tile row
     * gives patch columns 0-3, the same 4 columns to the right columns 4 and 5. */
    for (size_t t0 = 0; t0 < ntiles; t0 += VF_LANES) {
        const size_t n = ntiles - t0 < VF_LANES ? ntiles - t0 : VF_LANES;
        for (size_t i = 0; i < 6; i++) {
            vf in[4], in4[4], o[6], o4[4];
            for (int k = 0; k < 4; k++) {
                const size_t f = 4 * t0 + (size_t)k * VF_LANES, tr = f / 16;
                const float *xr = tr < ntiles / 4 ? rows[tr * 6 + i] : NULL;
                const int64_t c = col0 + (int64_t)(f % 16);
                in[k] = xr ? columns(xr, c, w) : vf_zero();
                in4[k] = xr ? columns(xr, c + 4, w) : vf_zero();
            }
            vf_deinterleave4(in, o);
            vf_deinterleave4(in4, o4);
            o[4] = o4[0];
            o[5] = o4[1];
            store_patch_row(dst + i * 6 * dst_step + t0, dst_step, o, 6, n);
        }
    }
}

/* p[m*t + j] = v[j][t] for m = 2, 3 or 4. */
static inline void interleave(const vf v[4], size_t m, float *p) {
    if (m == 4) vf_interleave4(v, p);
    else if (m == 3) vf_interleave3(v, p);
    else vf_interleave2(v, p);
}

/* The scatter for one m, inlined with m a constant (a run-time m had left v[] on the stack
 * and the loops over j rolled). */
static inline void scatter_run(const float *src, size_t src_step, size_t m, size_t run, float *yrow, int64_t q0,
                               int64_t out_w, const float *bias, int relu, int stream) {
    /* VF_LANES tiles at a time; a block that would pass the row's end, or the last, shorter
     * one, is interleaved into a buffer and only what exists is copied out. With stream, a
     * whole block whose start is vector-aligned goes out through non-temporal stores, each
     * vector loaded back from the very store that wrote it to the buffer (streaming a
     * misaligned y from such a buffer, each load spanning two stores, stalled every load
     * behind the streamed stores: 2 threads, 8 x 3 x 224^2 -> 64, 11 -> 15 ms). */
    for (size_t r = 0; r < run;) {
        const size_t n = run - r < VF_LANES ? run - r : VF_LANES;
        const int64_t q = q0 + (int64_t)(m * r), avail = out_w - q;
        vf v[4];
        for (size_t j = 0; j < m; j++) v[j] = load_outputs(src + j * src_step + r, n, bias, relu);
        const int streamed = stream && vf_head_to_alignment(yrow + q, VF_LANES) == 0;
        if (n == VF_LANES && avail >= (int64_t)(m * VF_LANES) && !streamed) {
            interleave(v, m, yrow + q);
        } else {
            float buf[4 * VF_LANES];
            interleave(v, m, buf);
            const int64_t count = avail < (int64_t)(m * n) ? avail : (int64_t)(m * n);
            int64_t e = 0;
            if (streamed) /* the whole vectors */
                for (; e + VF_LANES <= count; e += VF_LANES) vf_stream(yrow + q + e, vf_loadu(buf + e));
            /* Plain stores, the last one overlapping the one before where the row holds a
             * whole vector: masked stores had stalled the scatter (perf put ~30% of its samples
             * behind them on a 56-wide map's 14-tile rows). That last vector is put together
             * from the buffer's two vectors it spans: a load across two of the stores that
             * filled the buffer would wait for them to complete (half the scatter's samples). */
            for (; e + VF_LANES <= count; e += VF_LANES) vf_storeu(yrow + q + e, vf_loadu(buf + e));
            if (e < count) {
                if (count >= VF_LANES && !streamed)
                    vf_storeu(yrow + q + count - VF_LANES,
                              vf_shift_pair(vf_loadu(buf + e - VF_LANES), vf_loadu(buf + e), (int)(count - e)));
                else
                    vf_storeu_partial(yrow + q + e, vf_loadu(buf + e), (size_t)(count - e));
            }
        }
        r += n;
    }
}

void FCONV_ISA_SUFFIX(fconv_wino_scatter_kernel)(const float *src, size_t src_step, size_t m, size_t run,
                                                 float *yrow, int64_t q0, int64_t out_w, const float *bias,
                                                 int relu, int stream) {
    assert(src && yrow && q0 >= 0 && src_step >= run && m >= 2 && m <= 4);
    if (m == 4) scatter_run(src, src_step, 4, run, yrow, q0, out_w, bias, relu, stream);
    else if (m == 3) scatter_run(src, src_step, 3, run, yrow, q0, out_w, bias, relu, stream);
    else scatter_run(src, src_step, 2, run, yrow, q0, out_w, bias, relu, stream);
}

void FCONV_ISA_SUFFIX(fconv_wino_f4_scatter_grid_kernel)(const float *src, size_t src_step, size_t ntiles,
                                                         float *const *yrows, int64_t out_w, const float *bias,
                                                         int relu) {
    assert(src && yrows && ntiles % 4 == 0 && src_step >= ntiles && out_w <= 16);
    /* The gather grid's layout backwards: VF_LANES tiles interleaved are 4*VF_LANES floats of
     * the tile rows' 16 output columns end to end, each tile row's stored from the buffer
     * out_w wide. */
    for (size_t t0 = 0; t0 < ntiles; t0 += VF_LANES) {
        const size_t n = ntiles - t0 < VF_LANES ? ntiles - t0 : VF_LANES;
        for (size_t i = 0; i < 4; i++) {
            vf v[4];
            for (size_t j = 0; j < 4; j++) v[j] = load_outputs(src + (i * 4 + j) * src_step + t0, n, bias, relu);
            float buf[4 * VF_LANES];
            vf_interleave4(v, buf);
            for (size_t f = 0; f < 4 * n; f += VF_LANES) { /* a piece never crosses a tile row */
                const size_t tr = (4 * t0 + f) / 16;
                const int64_t col = (int64_t)((4 * t0 + f) % 16), count = out_w - col;
                float *yrow = yrows[tr * 4 + i];
                if (!yrow || count <= 0) continue;
                if (count >= VF_LANES) vf_storeu(yrow + col, vf_loadu(buf + f));
                else vf_storeu_partial(yrow + col, vf_loadu(buf + f), (size_t)count);
            }
        }
    }
}
