/*
 * implicit-gemm-tile.c — the implicit-GEMM conv2d tile: IG_PX output pixels by nv vectors of
 * output channels held in registers, summed over the (input channel, kernel row, kernel
 * column) taps with one vector load of packed weights per channel vector and one broadcast
 * of an input sample per pixel. The samples are read where they lie (a pixel's base plus
 * the tap's offset), so the pixels need not be neighbours and any stride or dilation costs
 * the same: nothing is lowered, and a 7-pixel tile divides the 7x7, 14x14 and 28x28 maps of
 * strided layers exactly (where a GEMM's 32-column tiles waste up to a third). Also a run of
 * whole tiles in one call. Compiled once per ISA (simd/vec.h); contracts:
 * fconv_implicit_gemm_tile_fn and fconv_implicit_gemm_tiles_fn in core/dispatch.h.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>

#include "core/dispatch.h"
#include "simd/vec.h"

/* The tile: IG_PX pixels x IG_NV vectors of channels, IG_PX * IG_NV accumulators plus IG_NV
 * weight vectors and a broadcast in the ISA's IG_REGISTERS vector registers. In a standalone
 * prototype on one Zen 4 core (a 512 -> 512 3x3 stride-2 layer on 14^2), 7 x 4 on AVX-512 ran
 * at 116 GFLOP/s, 6 x 4 at 99, 7 x 3 at 112, 8 x 3 at 99. */
#if VF_LANES == 1
#define IG_PX 4
#define IG_NV 4
#define IG_REGISTERS 64 /* scalar: the compiler's business */
#elif VF_LANES == 16
#define IG_PX 7
#define IG_NV 4
#define IG_REGISTERS 32
#else
#define IG_PX 6
#define IG_NV 2
#define IG_REGISTERS 16
#endif

/* Weight vectors a tile of np pixels holds in registers (IG_NV: all); the others are each
 * FMA's memory operand (fma_mem, below). */
#define MEM_VECTORS(np) ((np) * IG_NV + IG_NV + 1 > IG_REGISTERS ? IG_NV - 1 : IG_NV)

/* The widest tile that holds all its weight vectors in registers: AVX-512 6 x 4 (24
 * accumulators, 4 weights, a broadcast), 10 loads a tap for 24 multiply-adds where 7 x 4 has
 * 17 for 28 (its fourth weight vector read by each of its 7 FMAs). On cores that issue one
 * 512-bit load a cycle (fconv_cpu_info.wide_loads_slow) 7 x 4 waits on loads and the driver
 * tiles by this width instead (docs/algorithms/implicit-gemm.md). */
#define IG_PX_REGISTERS ((IG_REGISTERS - IG_NV - 1) / IG_NV < IG_PX ? (IG_REGISTERS - IG_NV - 1) / IG_NV : IG_PX)
_Static_assert(MEM_VECTORS(IG_PX_REGISTERS) == IG_NV, "IG_PX_REGISTERS holds its weights in registers");

/* Where the sums go: pixel i of channel j at y[j*stride + i] (channels_last: y[i*stride + j])
 * for i < npix, j < nch, bias[j] added (bias may be NULL), then max(0, .) if relu;
 * to_memory: y's lines are not in the caches; nontemporal: channels_last whole tiles store
 * by non-temporal stores (FCONV_IG_OUTPUT_NONTEMPORAL). */
struct tile_out {
    float *y;
    size_t stride, npix, nch;
    int channels_last;
    const float *bias;
    int relu, to_memory;
    int nontemporal;
};

/* Where y goes to memory, the tile asks for its output lines for writing before its taps,
 * a tile's multiply-adds (~900 cycles for 64 taps) ahead of its stores, which otherwise
 * each wait for a line from memory with the store queue full: NHWC, each pixel's nv vectors;
 * NCHW, the line of each channel row that the tile's last pixel ends. 2 threads, Zen 5, 7
 * alternated rounds in several sittings: NHWC 8 x 64 x 56^2 -> 256 1x1 1.025-1.08x (1.33x in
 * a spell of slow memory), 8 x 128 x 28^2 -> 512 0.99-1.13x, 8 x 256 x 14^2 -> 1024
 * 1.03-1.06x; NCHW 8 x 256 x 56^2 -> 128 1.01-1.03x, 8 x 512 x 28^2 -> 256 1.02x. From the
 * caches (batch 1) it cost 1 x 64 x 56^2 -> 256 1-2% in NHWC, 6% in NCHW. */
static ALWAYS_INLINE void prefetch_output(const int nv, const int np, const struct tile_out *o) {
    if (o->channels_last) {
        UNROLLED (int i = 0; i < np; i++)
            UNROLLED (int v = 0; v < nv; v++) __builtin_prefetch(o->y + (size_t)i * o->stride + (size_t)v * VF_LANES, 1, 3);
    } else {
        for (size_t j = 0; j < o->nch; j++) __builtin_prefetch(o->y + j * o->stride + o->npix - 1, 1, 3);
    }
}

/* One pixel's sums for channel vector v, the bias added and ReLU applied. */
static ALWAYS_INLINE vf finish(vf sum, const struct tile_out *o, size_t v) {
    if (o->bias) {
        size_t first = v * VF_LANES, left = o->nch - first;
        sum = vf_add(sum, vf_loadu_partial(o->bias + first, left < VF_LANES ? left : VF_LANES));
    }
    return o->relu ? vf_max(vf_zero(), sum) : sum; /* NaN in sum gives sum */
}

/* Taps ahead whose input lines the tile asks for: each tap of a 1x1 layer reads a new
 * channel plane, hundreds of streams the hardware prefetchers do not follow, and a batch of
 * 8 does not stay in L3 (2 threads, 8 x 256 x 56^2 -> 128: 8.7-8.9 -> 8.0-8.6 ms; 8 x 1024 x
 * 14^2 -> 512: 7.7-8.1 -> 7.4-7.6; 512 x 14^2 3x3/2: 1.09-1.11 -> 1.06; 32 taps no better).
 * The first and last pixels' lines: seven pixels may straddle two. */
#define PREFETCH_TAPS 16

/* Where the input streams in from memory (input_streams), a tap also asks for the line
 * after its last pixel's into L2: the line the next tiles read, a whole tile (thousands of
 * cycles) ahead, where 16 taps ahead is too close for memory's latency. 2 threads, Zen 5,
 * 3 alternated rounds: 8 x 256 x 56^2 -> 64 1x1 2.86-3.26 -> 2.78-2.87 ms, 8 x 512 x 28^2 ->
 * 128 2.46-2.65 -> 2.42-2.44; from the caches (batch 1) it cost 3-5%. */
#define LINE_FLOATS 16 /* a 64-byte cache line */

/* How a tile prefetches (tile_sums' `prefetch`, a constant in each instance): NCHW taps
 * read each a line of another plane, all the tile's pixels on one or two lines (the first
 * and last pixels' lines, PREFETCH_TAPS ahead), plus the next tiles' line from memory where
 * the input streams; NHWC taps read a pixel's channels one after another, its own line per
 * pixel every 16 taps: each pixel's line PREFETCH_TAPS ahead, once a line (2 threads, 7
 * back-to-back pairs against the first and last pixels' lines every tap: 8 x 256 x 56^2 ->
 * 128 1x1 1.12, 1 x 256 x 56^2 1.026, 128 x 56^2 3x3/2 and 64 -> 64 on 56^2 level). */
enum { PREFETCH_PLANES, PREFETCH_PLANES_STREAMS, PREFETCH_PIXELS, PREFETCH_PIXELS_WEIGHTS };

/* PREFETCH_PIXELS_WEIGHTS (FCONV_IG_WEIGHT_STREAMS): also each tap's weight rows this many
 * taps ahead (~450 cycles of a whole AVX-512 tile), for weights read once from the shared
 * cache or memory, where the hardware prefetchers keep too few lines in flight: Winograd's
 * channels-last products, U of 37.7 MB split between 2 threads on the Sapphire Rapids VM
 * (the shared cache ~10 GB/s a core), 2 threads, 5-9 alternated rounds: 1 x 512 x 7^2 NHWC
 * winograd-4x4 1.84-1.88 -> 1.19-1.20 ms (NCHW, through the same driver, 1.18-1.27 ->
 * 1.01-1.09), 1 x 512 x 14^2 NHWC 3.39 -> 2.64-2.75, 1 x 1024 x 16^2 NHWC 14.9 -> 11.3-12.3;
 * 16 taps ahead or into L2 no better. Not for implicit-gemm's own tiles, whose weights most
 * tiles find in L2 (1x1 NHWC layers 0.95-1.03x with it). */
#define WEIGHT_PREFETCH_TAPS 32

_Static_assert(IG_PX <= 8 && IG_PX <= FCONV_IMPLICIT_GEMM_PX_MAX, "the transposing store takes up to 8 pixel rows");

/* AVX-512's 7 x 4 tile needs 28 accumulators + 4 weights + a broadcast, one register more
 * than there are: GCC kept an accumulator on the stack, a load, FMA and store per tap in one
 * chain. Reading the fourth weight vector from L1 in each of its 7 FMAs instead (the asm: a
 * plain load would be shared and held in a register): 1 thread, Zen 5, 1024 -> 512 1x1 on
 * 14^2 1.16 -> 1.06 ms, 512 x 14^2 3x3/2 1.29 -> 1.23. */
#if VF_LANES == 16
static ALWAYS_INLINE vf fma_mem(vf b, const float *p, vf a) {
    __asm__("vfmadd231ps %[w], %[b], %[a]" : [a] "+v"(a) : [b] "v"(b), [w] "m"(*(const vf *)p));
    return a;
}
#else
static ALWAYS_INLINE vf fma_mem(vf b, const float *p, vf a) { return vf_fma(b, vf_load(p), a); }
#endif

/* The accumulators of one tile between chunks of its taps: pixel i's vector v at
 * acc[(i*IG_NV + v) * VF_LANES]. */
#define ACC_AT(i, v) (((size_t)(i) * IG_NV + (size_t)(v)) * VF_LANES)

/* One tap: its weight vectors times pixels [i0, i1)'s samples into their accumulators (taps:
 * the tile's count, for the prefetch; width: floats from one tap's weights to the next). */
static ALWAYS_INLINE void tap_step(vf acc[IG_PX][IG_NV], const int nv, const int np, const int prefetch, size_t t,
                                   const int i0, const int i1, size_t taps, const float *const *xs,
                                   const int32_t *restrict off, const float *restrict w, size_t width) {
    const int32_t ot = off[t];
    if (prefetch == PREFETCH_PIXELS || prefetch == PREFETCH_PIXELS_WEIGHTS) {
        if (t % LINE_FLOATS == 0 && t + PREFETCH_TAPS < taps)
            UNROLLED (int i = 0; i < np; i++) __builtin_prefetch(xs[i] + off[t + PREFETCH_TAPS], 0, 3);
    } else if (t + PREFETCH_TAPS < taps) {
        __builtin_prefetch(xs[0] + off[t + PREFETCH_TAPS], 0, 3);
        __builtin_prefetch(xs[np - 1] + off[t + PREFETCH_TAPS], 0, 3);
    }
    if (prefetch == PREFETCH_PLANES_STREAMS) __builtin_prefetch(xs[np - 1] + ot + LINE_FLOATS, 0, 2);
    vf wv[IG_NV];
    const float *wt = w + t * width;
    if (prefetch == PREFETCH_PIXELS_WEIGHTS) /* past the last tap: the next block's rows, or
                                                 nothing (a prefetch does not fault); addressed
                                                 as an integer, as no pointer may point there */
        UNROLLED (int v = 0; v < nv; v++)
            __builtin_prefetch((const void *)((uintptr_t)wt + (WEIGHT_PREFETCH_TAPS * width + (size_t)v * VF_LANES) * sizeof(float)), 0, 3);
    const int mem_v = MEM_VECTORS(np);
    UNROLLED (int v = 0; v < nv; v++) if (v < mem_v) wv[v] = vf_load(wt + (size_t)v * VF_LANES);
    UNROLLED (int i = i0; i < i1; i++) {
        const vf xv = vf_set1(xs[i][ot]);
        UNROLLED (int v = 0; v < nv; v++)
            acc[i][v] = v < mem_v ? vf_fma(xv, wv[v], acc[i][v]) : fma_mem(xv, wt + (size_t)v * VF_LANES, acc[i][v]);
    }
}

/* Tap t, column s of its group, on an edged tile of np pixels: pixel 0 leaves out the
 * group's first `first` taps, pixel np - 1 those from `last_from` on. */
static ALWAYS_INLINE void edged_tap_step(vf acc[IG_PX][IG_NV], const int nv, const int np, const int prefetch,
                                         size_t t, size_t s, size_t first, size_t last_from, size_t taps,
                                         const float *const *xs, const int32_t *restrict off,
                                         const float *restrict w, size_t width) {
    if (s < first) {
        if (s >= last_from) tap_step(acc, nv, np, prefetch, t, 1, np - 1, taps, xs, off, w, width);
        else tap_step(acc, nv, np, prefetch, t, 1, np, taps, xs, off, w, width);
    } else if (s >= last_from) {
        tap_step(acc, nv, np, prefetch, t, 0, np - 1, taps, xs, off, w, width);
    } else {
        tap_step(acc, nv, np, prefetch, t, 0, np, taps, xs, off, w, width);
    }
}

/* Tap t of a tile that asks for the caller's next weights (fconv_implicit_gemm_tile_fn's
 * `ahead`): their t-th line, into L2. */
static ALWAYS_INLINE void ask_ahead(const float *ahead, size_t ahead_lines, size_t t) {
    if (t < ahead_lines) __builtin_prefetch(ahead + t * LINE_FLOATS, 0, 1);
}

static ALWAYS_INLINE void tile_sums(const int nv, const int np, const int prefetch, const int edged, size_t taps,
                                    const float *const *x, const int32_t *restrict off, const float *restrict w,
                                    const struct fconv_implicit_gemm_edges *edges, const float *acc_in,
                                    float *acc_out, const float *ahead, size_t ahead_lines,
                                    const struct tile_out *o) {
    const float *xs[IG_PX];
    UNROLLED (int i = 0; i < IG_PX; i++) xs[i] = x[i];
    vf acc[IG_PX][IG_NV];
    UNROLLED (int i = 0; i < np; i++)
        UNROLLED (int v = 0; v < nv; v++) acc[i][v] = acc_in ? vf_load(acc_in + ACC_AT(i, v)) : vf_zero();
    const size_t width = (size_t)nv * VF_LANES;
    const int nontemporal = o->nontemporal && o->npix == (size_t)np && o->nch == (size_t)nv * VF_LANES;
    if (!acc_out && o->to_memory && !nontemporal) prefetch_output(nv, np, o);
    if (!edged) {
        for (size_t t = 0; t < taps; t++) {
            ask_ahead(ahead, ahead_lines, t);
            tap_step(acc, nv, np, prefetch, t, 0, np, taps, xs, off, w, width);
        }
    } else {
        /* Taps come in groups of a kernel row's columns; the first pixel leaves out each
         * group's first `first` taps (their columns lie left of x), the last pixel its last
         * `last`. A branch per tap, the same in every group: predicted. The call's first tap
         * is tap `phase` of its group (a chunk may begin inside one). */
        const size_t group = edges->group, first = edges->first, last_from = edges->group - edges->last;
        if (edges->phase == 0 && taps % group == 0) { /* whole groups (the bounds below cost NCHW's
                                                         3-tap groups 4% of a 3x3/2 layer) */
            for (size_t g = 0; g < taps; g += group)
                for (size_t s = 0; s < group; s++) {
                    ask_ahead(ahead, ahead_lines, g + s);
                    edged_tap_step(acc, nv, np, prefetch, g + s, s, first, last_from, taps, xs, off, w, width);
                }
        } else {
            for (size_t g = 0, s0 = edges->phase; g < taps; g += group - s0, s0 = 0) {
                const size_t s1 = taps - g < group - s0 ? s0 + (taps - g) : group;
                for (size_t s = s0; s < s1; s++) {
                    ask_ahead(ahead, ahead_lines, g + s - s0);
                    edged_tap_step(acc, nv, np, prefetch, g + s - s0, s, first, last_from, taps, xs, off, w, width);
                }
            }
        }
    }
    if (acc_out) { /* a chunk before the tile's last: the sums wait for the next one */
        UNROLLED (int i = 0; i < np; i++)
            UNROLLED (int v = 0; v < nv; v++) vf_store(acc_out + ACC_AT(i, v), acc[i][v]);
        return;
    }
    if (o->channels_last) { /* a vector holds one pixel's channels, as y does */
        if (o->npix == (size_t)np && o->nch == (size_t)nv * VF_LANES) {
            /* A whole tile: the bias loaded once per vector and no test per store (per pixel
             * and vector they cost 64 -> 256 1x1 on 56^2, 64 taps a tile, ~4%). max(floor,
             * sum + add) is finish()'s bits: -0.0 adds nothing, -inf floors nothing. */
            vf add[IG_NV];
            UNROLLED (int v = 0; v < nv; v++)
                add[v] = o->bias ? vf_loadu(o->bias + (size_t)v * VF_LANES) : vf_set1(-0.0f);
            const vf floor = vf_set1(o->relu ? 0.0f : -INFINITY);
            if (nontemporal) {
                UNROLLED (int i = 0; i < np; i++)
                    UNROLLED (int v = 0; v < nv; v++)
                        vf_stream(o->y + (size_t)i * o->stride + (size_t)v * VF_LANES,
                                  vf_max(floor, vf_add(acc[i][v], add[v])));
                return;
            }
            UNROLLED (int i = 0; i < np; i++)
                UNROLLED (int v = 0; v < nv; v++)
                    vf_storeu(o->y + (size_t)i * o->stride + (size_t)v * VF_LANES,
                              vf_max(floor, vf_add(acc[i][v], add[v])));
            return;
        }
        UNROLLED (int i = 0; i < np; i++) {
            if ((size_t)i >= o->npix) break;
            UNROLLED (int v = 0; v < nv; v++) {
                const size_t first = (size_t)v * VF_LANES;
                if (first >= o->nch) break;
                const vf sum = finish(acc[i][v], o, (size_t)v);
                float *dst = o->y + (size_t)i * o->stride + first;
                if (o->nch - first >= VF_LANES) vf_storeu(dst, sum);
                else vf_storeu_partial(dst, sum, o->nch - first);
            }
        }
        return;
    }
    /* A vector holds one pixel's channels and y wants a channel's pixels side by side: a
     * transposing store per channel vector (a scalar one took a third of a 7x7 stem
     * layer's time). */
    UNROLLED (int v = 0; v < nv; v++) { /* unrolled: a run-time index put acc on the stack */
        const size_t first = (size_t)v * VF_LANES;
        if (first < o->nch) {
            vf rows[8];
            UNROLLED (int i = 0; i < 8; i++) rows[i] = i < np ? finish(acc[i][v], o, (size_t)v) : vf_zero();
            size_t count = o->nch - first < VF_LANES ? o->nch - first : VF_LANES;
            vf_store_transposed8(rows, o->y + first * o->stride, o->stride, o->npix, count);
        }
    }
}

/* One call's operands, for the instances below. */
struct tile_call {
    size_t taps;
    const float *const *x;
    const int32_t *off;
    const float *w;
    const struct fconv_implicit_gemm_edges *edges;
    const float *acc_in;
    float *acc_out;
    const float *ahead;
    size_t ahead_lines;
    struct tile_out o;
};

/* tile_sums with its shape and prefetch as constants, each instance a function of its own:
 * GCC allocates registers per function, and with every instance inlined into one it kept
 * accumulators of the hottest loop on the stack once narrow tiles joined them (2 threads,
 * 1 x 256 x 56^2 -> 128 1x1 and 1 x 128 x 56^2 3x3/2 ran 9% slower). Edged tiles of NCHW
 * layers once took the prefetch at run time, a test and a load from the stack a tap: with it
 * a constant too (2 threads, Ice Lake VM, 21 alternated rounds in one process, medians: 3x3/2
 * 1 x 256 x 28^2 1.365 -> 1.264 and 1.293 -> 1.214 ms, 1 x 512 x 14^2 1.756 -> 1.578 and
 * 1.197 -> 1.120, 1 x 128 x 56^2 1.01-1.02x; batch 8 x 512 x 14^2 10.3 -> 9.0). */
#define TILE_FN(name, nv, np, prefetch, edged)                                                             \
    static __attribute__((noinline)) void name(const struct tile_call *c) {                                \
        tile_sums(nv, np, prefetch, edged, c->taps, c->x, c->off, c->w, c->edges, c->acc_in, c->acc_out,   \
                  c->ahead, c->ahead_lines, &c->o);                                                        \
    }
typedef void (*tile_instance)(const struct tile_call *c);
enum { EDGED_PIXELS, EDGED_PLANES, EDGED_STREAMS, PIXELS, PIXELS_WEIGHTS, PLANES_STREAMS, PLANES, TILE_MODES };

/* Whole tiles: IG_PX pixels by nv vectors, every prefetch, edged or not. */
#define WHOLE_FNS(nv)                                                                                      \
    TILE_FN(whole_edged_pixels_##nv, nv, IG_PX, PREFETCH_PIXELS, 1)                                        \
    TILE_FN(whole_edged_planes_##nv, nv, IG_PX, PREFETCH_PLANES, 1)                                        \
    TILE_FN(whole_edged_streams_##nv, nv, IG_PX, PREFETCH_PLANES_STREAMS, 1)                               \
    TILE_FN(whole_pixels_##nv, nv, IG_PX, PREFETCH_PIXELS, 0)                                              \
    TILE_FN(whole_pixels_weights_##nv, nv, IG_PX, PREFETCH_PIXELS_WEIGHTS, 0)                              \
    TILE_FN(whole_streams_##nv, nv, IG_PX, PREFETCH_PLANES_STREAMS, 0)                                     \
    TILE_FN(whole_planes_##nv, nv, IG_PX, PREFETCH_PLANES, 0)
#define WHOLE_ROW(nv)                                                                                      \
    {whole_edged_pixels_##nv, whole_edged_planes_##nv, whole_edged_streams_##nv, whole_pixels_##nv,          \
     whole_pixels_weights_##nv, whole_streams_##nv, whole_planes_##nv}

/* A narrow tile (fewer pixels than the tile holds) with whole channel blocks: only its npix
 * pixels' multiply-adds, not a whole tile's with the last pixel repeated (Winograd's
 * channels-last products: 4 tiles on a 7^2 map ran 7 columns; 1 x 512 x 7^2 1.05-1.12x in 5
 * pairs), and its last pixel the one an edged tile's right edge applies to. The driver's
 * IG_PX_REGISTERS-wide tiles are narrow ones. */
#define NARROW_FNS(np)                                                                                     \
    TILE_FN(narrow_edged_pixels_##np, IG_NV, np, PREFETCH_PIXELS, 1)                                       \
    TILE_FN(narrow_edged_planes_##np, IG_NV, np, PREFETCH_PLANES, 1)                                       \
    TILE_FN(narrow_edged_streams_##np, IG_NV, np, PREFETCH_PLANES_STREAMS, 1)                              \
    TILE_FN(narrow_pixels_##np, IG_NV, np, PREFETCH_PIXELS, 0)                                             \
    TILE_FN(narrow_pixels_weights_##np, IG_NV, np, PREFETCH_PIXELS_WEIGHTS, 0)                             \
    TILE_FN(narrow_streams_##np, IG_NV, np, PREFETCH_PLANES_STREAMS, 0)                                    \
    TILE_FN(narrow_planes_##np, IG_NV, np, PREFETCH_PLANES, 0)
#define NARROW_ROW(np)                                                                                     \
    {narrow_edged_pixels_##np, narrow_edged_planes_##np, narrow_edged_streams_##np, narrow_pixels_##np,      \
     narrow_pixels_weights_##np, narrow_streams_##np, narrow_planes_##np}

WHOLE_FNS(1)
#if IG_NV >= 2
WHOLE_FNS(2)
#endif
#if IG_NV >= 3
WHOLE_FNS(3)
#endif
#if IG_NV >= 4
WHOLE_FNS(4)
#endif
NARROW_FNS(1)
NARROW_FNS(2)
NARROW_FNS(3)
#if IG_PX > 4
NARROW_FNS(4)
#endif
#if IG_PX > 5
NARROW_FNS(5)
#endif
#if IG_PX > 6
NARROW_FNS(6)
#endif

static const tile_instance whole_tiles[IG_NV][TILE_MODES] = {
    WHOLE_ROW(1),
#if IG_NV >= 2
    WHOLE_ROW(2),
#endif
#if IG_NV >= 3
    WHOLE_ROW(3),
#endif
#if IG_NV >= 4
    WHOLE_ROW(4),
#endif
};

/* Row npix - 1 for 1 <= npix < IG_PX. */
static const tile_instance narrow_tiles[IG_PX - 1][TILE_MODES] = {
    NARROW_ROW(1), NARROW_ROW(2), NARROW_ROW(3),
#if IG_PX > 4
    NARROW_ROW(4),
#endif
#if IG_PX > 5
    NARROW_ROW(5),
#endif
#if IG_PX > 6
    NARROW_ROW(6),
#endif
};

/* A run of tiles of px pixels (IG_PX or IG_PX_REGISTERS), all taps, no edges
 * (fconv_implicit_gemm_tiles_fn). */
struct tiles_call {
    size_t tiles, taps;
    const float *x;
    const int32_t *pixel_bases, *off;
    const float *w;
    size_t y_step;
    const float *ahead; /* the run's share of the caller's next weights, split among its tiles */
    size_t ahead_lines;
    struct tile_out o;
};

/* The run's tiles in one function per shape and prefetch, as TILE_FN's instances are. */
#define TILES_FN(name, nv, np, prefetch)                                                                   \
    static __attribute__((noinline)) void name(const struct tiles_call *c) {                               \
        struct tile_out o = c->o;                                                                          \
        for (size_t j = 0; j < c->tiles; j++, o.y += c->y_step) {                                          \
            const float *xs[IG_PX];                                                                        \
            UNROLLED (int e = 0; e < IG_PX; e++)                                                           \
                xs[e] = c->x + c->pixel_bases[j * (np) + (size_t)(e < (np) ? e : (np) - 1)];               \
            const size_t from = j * c->ahead_lines / c->tiles, to = (j + 1) * c->ahead_lines / c->tiles;     \
            tile_sums(nv, np, prefetch, 0, c->taps, xs, c->off, c->w, NULL, NULL, NULL,                    \
                      c->ahead ? c->ahead + from * LINE_FLOATS : NULL, to - from, &o);                     \
        }                                                                                                  \
    }
typedef void (*tiles_instance)(const struct tiles_call *c);
#define RUN_FNS(nv)                                                                                        \
    TILES_FN(run_pixels_##nv, nv, IG_PX, PREFETCH_PIXELS)                                                  \
    TILES_FN(run_streams_##nv, nv, IG_PX, PREFETCH_PLANES_STREAMS)                                         \
    TILES_FN(run_planes_##nv, nv, IG_PX, PREFETCH_PLANES)
#define RUN_ROW(nv) {run_planes_##nv, run_streams_##nv, run_pixels_##nv}

RUN_FNS(1)
#if IG_NV >= 2
RUN_FNS(2)
#endif
#if IG_NV >= 3
RUN_FNS(3)
#endif
#if IG_NV >= 4
RUN_FNS(4)
#endif

/* [nv - 1][prefetch]: the PREFETCH_* values index the row. */
static const tiles_instance run_tiles[IG_NV][3] = {
    RUN_ROW(1),
#if IG_NV >= 2
    RUN_ROW(2),
#endif
#if IG_NV >= 3
    RUN_ROW(3),
#endif
#if IG_NV >= 4
    RUN_ROW(4),
#endif
};

/* Runs of the narrower IG_PX_REGISTERS-wide tiles, whole channel blocks only (the driver
 * tiles by that width only where every block is whole). */
#if IG_PX_REGISTERS < IG_PX
TILES_FN(run_registers_pixels, IG_NV, IG_PX_REGISTERS, PREFETCH_PIXELS)
TILES_FN(run_registers_streams, IG_NV, IG_PX_REGISTERS, PREFETCH_PLANES_STREAMS)
TILES_FN(run_registers_planes, IG_NV, IG_PX_REGISTERS, PREFETCH_PLANES)
static const tiles_instance run_registers_tiles[3] = {run_registers_planes, run_registers_streams,
                                                      run_registers_pixels};
#endif

/* How a call's tiles prefetch (the weights' only where `weights` allows it). */
static int prefetch_mode(int channels_last, unsigned streams, int weights) {
    return channels_last ? (weights && streams & FCONV_IG_WEIGHT_STREAMS ? PREFETCH_PIXELS_WEIGHTS : PREFETCH_PIXELS)
           : streams & FCONV_IG_INPUT_STREAMS ? PREFETCH_PLANES_STREAMS
                                              : PREFETCH_PLANES;
}

void FCONV_ISA_SUFFIX(fconv_implicit_gemm_tiles)(size_t tiles, size_t taps, const float *x,
                                                 const int32_t *pixel_bases, const int32_t *off, const float *w,
                                                 size_t nv, float *y, size_t y_tile_step, size_t y_stride,
                                                 int channels_last, size_t nch, const float *bias, int relu,
                                                 unsigned streams, size_t px, const float *ahead,
                                                 size_t ahead_lines) {
    assert(x && pixel_bases && off && w && y && nv >= 1 && nv <= IG_NV && nch >= 1 && nch <= nv * VF_LANES);
    assert(px == IG_PX || (px == IG_PX_REGISTERS && nv == IG_NV));
    const struct tiles_call c = {
        tiles, taps, x, pixel_bases, off, w, y_tile_step, ahead, ahead ? ahead_lines : 0,
        {y, y_stride, px, nch, channels_last, bias, relu, (streams & FCONV_IG_OUTPUT_STREAMS) != 0,
         channels_last && (streams & FCONV_IG_OUTPUT_NONTEMPORAL) != 0}};
    const int prefetch = prefetch_mode(channels_last, streams, 0);
#if IG_PX_REGISTERS < IG_PX
    if (px < IG_PX) {
        run_registers_tiles[prefetch](&c);
        return;
    }
#endif
    run_tiles[nv - 1][prefetch](&c);
}

void FCONV_ISA_SUFFIX(fconv_implicit_gemm_tile)(size_t taps, const float *const *x, const int32_t *off,
                                                const float *w, size_t nv, float *y, size_t y_stride,
                                                int channels_last, size_t npix, size_t nch, const float *bias,
                                                int relu, unsigned streams,
                                                const struct fconv_implicit_gemm_edges *edges, const float *acc_in,
                                                float *acc_out, const float *ahead, size_t ahead_lines) {
    assert(x && off && w && y && nv >= 1 && nv <= IG_NV && npix >= 1 && npix <= IG_PX && nch >= 1 &&
           nch <= nv * VF_LANES);
    assert(!edges || (edges->group >= 1 && edges->phase < edges->group && edges->first <= edges->group &&
                      edges->last <= edges->group));
    const int prefetch = prefetch_mode(channels_last, streams, !edges);
    const struct tile_call c = {
        taps, x, off, w, edges, acc_in, acc_out, ahead, ahead ? ahead_lines : 0,
        {y, y_stride, npix, nch, channels_last, bias, relu, (streams & FCONV_IG_OUTPUT_STREAMS) != 0,
         channels_last && (streams & FCONV_IG_OUTPUT_NONTEMPORAL) != 0}};
    const int mode = edges ? (prefetch == PREFETCH_PIXELS          ? EDGED_PIXELS
                              : prefetch == PREFETCH_PLANES_STREAMS ? EDGED_STREAMS
                                                                    : EDGED_PLANES)
                     : prefetch == PREFETCH_PIXELS          ? PIXELS
                     : prefetch == PREFETCH_PIXELS_WEIGHTS  ? PIXELS_WEIGHTS
                     : prefetch == PREFETCH_PLANES_STREAMS  ? PLANES_STREAMS
                                                            : PLANES;
    /* fewer vectors than a block and fewer pixels than a tile: the whole tile, its last
       pixel repeated, which an edge would not reach */
    assert(!edges || npix == IG_PX || nv == IG_NV);
    if (nv == IG_NV && npix < IG_PX) narrow_tiles[npix - 1][mode](&c);
    else whole_tiles[nv - 1][mode](&c);
}

/* The tile shapes of this compilation, for the dispatch table. */
size_t FCONV_ISA_SUFFIX(fconv_implicit_gemm_px)(void) { return IG_PX; }
size_t FCONV_ISA_SUFFIX(fconv_implicit_gemm_px_registers)(void) { return IG_PX_REGISTERS; }
size_t FCONV_ISA_SUFFIX(fconv_implicit_gemm_nv)(void) { return IG_NV; }
