/*
 * fft-cols.c — filter2d by FFTs down the columns: the kernel's columns are summed in the
 * frequency domain, fft-rows (algo/fft-rows.c) turned on its side.
 *
 *   y[i][j] = sum_b (column b of the kernel) correlated with (extended input column j+b) at i
 *
 * A band of hop = n - KH + 1 output rows reads n input rows (overlap-save down the
 * columns); the real FFT of every extended column over those n rows is taken once, and an
 * output column is, per frequency, sum_b U_b X_{j+b} (KW complex multiply-adds), one
 * inverse FFT, and its first hop samples. The kernels (kernels/fft/fft-cols.c) run VF_LANES
 * adjacent columns at once, one per lane: sample t of the lanes is one vector of input row
 * t, output t one vector of output row t, and the shifted columns j+b are the spectra read
 * b*C floats further. So, unlike fft-rows, nothing is transposed, interleaved channels
 * need no (de)interleaving (a lane is a float column, whatever channel it holds), and
 * whole output vectors can leave through non-temporal stores.
 *
 * A task is a band of a strip of at most 1024 floats (even strips across the row); a thread
 * keeps a ring of its band's n extended rows, and takes the spectra a chunk of columns at a
 * time (n planes within L1/L2). Every output is computed by the same operations whichever
 * task computes it (bands and column vectors depend on the problem only), so results do not
 * depend on the thread count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/fft-common.h"
#include "algo/filter-lowering.h"
#include "core/border.h"
#include "core/cost-model.h"
#include "core/dispatch.h"
#include "core/internal.h"
#include "core/parallel.h"


/* Widest strip of output floats: a thread's ring of n extended rows stays small. 2 threads,
 * 3 alternations against 8192: 2048^2 7x7 2.29 -> 2.08 ms, 4096^2 7x7 9.3 -> 8.6, 9x9 10.6 ->
 * 9.8; RGB 1024^2 7x7, 512^2 7x7 and seed 004 ties; 512 no better than 1024. */
#define FFT_COLS_MAX_STRIP 1024

/* Spectra a task keeps: n planes of its chunk's extended columns. */
#define FFT_COLS_SPECTRA_BYTES (48u * 1024u)

struct fft_cols_layout {
    int64_t n, hop;         /* transform size down the columns; output rows per band */
    int64_t lanes;          /* columns per kernel call (VF_LANES) */
    int64_t width;          /* floats per output row: out_w * C */
    int64_t reach;          /* extra extended floats an output reads: (KW - 1) * C */
    int64_t strip, strips;  /* output floats per strip (a multiple of lanes); strips per row */
    int64_t row_stride;     /* floats per ring row: strip + reach, rounded (see layout) */
    int64_t chunk;          /* output floats whose spectra are taken at once */
    int64_t ps;             /* plane stride: chunk + reach, rounded (see layout) */
    int64_t bands, tasks, slots;
    size_t taps_bytes, ring_bytes, spec_bytes, ptr_bytes, slot_bytes; /* workspace */
};

static int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

static struct fft_cols_layout fft_cols_layout(const fconv_plan *plan) {
    const fconv_filter2d_desc *f = &plan->filter;
    struct fft_cols_layout l = {0};
    l.n = fconv_fft_segment_size(f->kw, f->kh);
    if (!l.n) return l;
    l.hop = l.n - f->kh + 1;
    l.lanes = (int64_t)plan->kernels->lanes;
    l.width = plan->out_w * f->channels;
    l.reach = (f->kw - 1) * f->channels;
    /* Strips bound the ring of extended rows (n of them per thread) for very wide images. */
    l.strips = (l.width + FFT_COLS_MAX_STRIP - 1) / FFT_COLS_MAX_STRIP;
    l.strip = round_up((l.width + l.strips - 1) / l.strips, l.lanes);
    /* Row and plane strides: an odd number of cache lines, so that the n rows (planes) of
     * one column spread over L1's sets (a multiple of 4 KiB put them all in one set). */
    l.row_stride = round_up(l.strip + l.reach, 16);
    if ((l.row_stride / 16) % 2 == 0) l.row_stride += 16;
    /* The widest chunk whose spectra fit FFT_COLS_SPECTRA_BYTES, but at least 4 vectors and
     * twice the reach (each chunk transforms its reach again). */
    const int64_t budget = (int64_t)(FFT_COLS_SPECTRA_BYTES / sizeof(float)) / l.n;
    int64_t chunk = (budget - l.reach) / l.lanes * l.lanes;
    if (chunk < 4 * l.lanes) chunk = 4 * l.lanes;
    if (chunk < 2 * l.reach) chunk = round_up(2 * l.reach, l.lanes);
    if (chunk > l.strip) chunk = l.strip;
    const int64_t chunks = (l.strip + chunk - 1) / chunk;
    l.chunk = round_up((l.strip + chunks - 1) / chunks, l.lanes); /* even chunks */
    l.ps = round_up(l.chunk + l.reach, 16);
    if ((l.ps / 16) % 2 == 0) l.ps += 16;
    l.bands = (plan->out_h + l.hop - 1) / l.hop;
    l.tasks = l.bands * l.strips;
    l.slots = plan->threads < l.tasks ? plan->threads : l.tasks;
    if (l.slots < 1) l.slots = 1;
    /* the kernel in correlation orientation, transposed, and its column spectra, when the
     * weights come at execute time (with plan-time weights prepare() keeps the spectra) */
    l.taps_bytes = plan->weights ? 0
                                 : 2 * fconv_round_up_64((size_t)(f->kh * f->kw) * sizeof(float)) +
                                       fconv_round_up_64((size_t)(f->kw * l.n) * sizeof(float));
    l.ring_bytes = (size_t)(l.n * l.row_stride) * sizeof(float); /* multiples of 64 */
    l.spec_bytes = (size_t)(l.n * l.ps) * sizeof(float);
    l.ptr_bytes = fconv_round_up_64((size_t)(2 * l.n) * sizeof(float *));
    l.slot_bytes = l.ring_bytes + l.spec_bytes + l.ptr_bytes;
    return l;
}

static fconv_status fft_cols_supports(const fconv_plan *plan, char *why, size_t why_len) {
    if (plan->kind != FCONV_KIND_FILTER2D) {
        snprintf(why, why_len, "fft-cols serves filter2d only (it transforms down image columns)");
        return FCONV_EUNSUPPORTED;
    }
    const fconv_filter2d_desc *f = &plan->filter;
    if (f->kh > FCONV_FFT_SEGMENT_MAX_SPAN) {
        snprintf(why, why_len, "fft-cols: kernel %lld tall, at most %d", (long long)f->kh, FCONV_FFT_SEGMENT_MAX_SPAN);
        return FCONV_EUNSUPPORTED;
    }
    if (f->kw > FCONV_FFT_COLS_MAX_TAPS) {
        snprintf(why, why_len, "fft-cols: kernel %lld wide, at most %d", (long long)f->kw, FCONV_FFT_COLS_MAX_TAPS);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

static size_t fft_cols_workspace(const fconv_plan *plan) {
    struct fft_cols_layout l = fft_cols_layout(plan);
    return l.taps_bytes + (size_t)l.slots * l.slot_bytes;
}

/* Seconds: the modelled time of every output the tasks compute (whole vectors, every
 * band's hop rows) at the ISA's speed, the copies into the rings (prefetched, ~40 GB/s),
 * the output's write-back where it is not streamed, and a microsecond per task, over the
 * threads with work; plus a fixed 2 us, so that tiny problems, where the transforms would
 * save less than that, keep the exact algorithms (a 12 x 13 Sobel or identity filter
 * differed from direct's exact integers by 1e-6). Checked against 2 threads (Zen 4 VM):
 * 2048^2 7x7 2.5 ms modelled, 2.3 measured; 9x9 2.7 / 2.55; 4096^2 7x7 9.4 / 11. */
static double fft_cols_cost(const fconv_plan *plan) {
    const fconv_filter2d_desc *f = &plan->filter;
    struct fft_cols_layout l = fft_cols_layout(plan);
    double speed = fconv_fft_segment_isa_speed(fconv_plan_isa(plan));
    double outputs = (double)(l.bands * l.hop) * (double)(l.strips * l.strip);
    double work = outputs * fconv_fft_segment_seconds(l.n, f->kw, f->kh) / speed;
    double copied = (double)l.strips * (double)(l.bands * l.hop + l.slots * (l.n - l.hop)) * (double)l.row_stride;
    double out_bytes = (double)(plan->out_h * l.width) * sizeof(float);
    work += copied * sizeof(float) / 40e9 + (out_bytes >= FCONV_STREAM_OUTPUT_BYTES ? 0.0 : out_bytes / 20e9);
    work += 1e-6 * (double)l.tasks;
    /* Interleaved channels: on Zen 5 (2 threads, 2026-11-27) this model reads 1.27-1.43x the
     * measured times of gray 512^2 and 1024^2 7x7 but 1.09-1.10x those of RGB (0.51 and 1.71
     * ms), and 1.09-1.31 against 1.0-1.16 at 15x15: RGB runs ~1.2x slower than the gray-fitted
     * terms say, which had AUTO take fft-cols for RGB 1024^2 7x7 (1.71 ms; direct 1.32). */
    if (f->channels > 1) work *= 1.2;
    return work / (double)l.slots + 2e-6 + (l.slots > 1 ? FCONV_PARALLEL_REGION_SECONDS : 0.0);
}

struct fft_cols_ctx {
    const fconv_plan *plan;
    struct fft_cols_layout l;
    const float *x, *taps;
    float *y;
    char *slots;    /* slot s's buffers at slots + s * l.slot_bytes */
    int64_t pad;    /* output column j reads input columns j - pad .. j - pad + KW - 1 */
    int stream;     /* whole output vectors leave through non-temporal stores */
};

/* The kernel's column spectra: kc (correlation orientation, KH x KW) transposed into kt,
 * then column b's spectrum at taps + b*n. */
static void column_spectra(const fconv_plan *plan, int64_t n, const float *kc, float *kt, float *taps) {
    const fconv_filter2d_desc *f = &plan->filter;
    for (int64_t a = 0; a < f->kh; a++)
        for (int64_t b = 0; b < f->kw; b++) kt[b * f->kh + a] = kc[a * f->kw + b];
    fconv_fft_segment_spectra(kt, f->kw, f->kh, n, taps);
}

/* With the weights at plan time, the spectra are computed once and kept as the plan's
 * state; execute-time weights take the same functions in the workspace. */
static fconv_status fft_cols_prepare(fconv_plan *plan) {
    if (!plan->weights) return FCONV_OK;
    const fconv_filter2d_desc *f = &plan->filter;
    const int64_t n = fconv_fft_segment_size(f->kw, f->kh);
    float *kc = malloc((size_t)(2 * f->kh * f->kw) * sizeof *kc);
    float *taps = malloc((size_t)(f->kw * n) * sizeof *taps);
    if (!kc || !taps) {
        free(kc);
        free(taps);
        return fconv_fail(FCONV_ENOMEM, "fft-cols: out of memory for the kernel spectra");
    }
    fconv_filter_correlation_kernel(plan, plan->weights, kc);
    column_spectra(plan, n, kc, kc + f->kh * f->kw, taps);
    free(kc);
    plan->algo_state = taps;
    return FCONV_OK;
}

static void fft_cols_release(fconv_plan *plan) {
    free(plan->algo_state);
    plan->algo_state = NULL;
}

/* Ring row of input row q (any integer): the extended floats [s0, s0 + strip + reach) of
 * row q through the border rule: e is column e / C - pad, channel e % C, and floats past
 * what any output reads are zero. The inside of the image is one copy (interleaved
 * channels are contiguous floats too), read in order so that the prefetchers stream it. */
static void extended_row(const struct fft_cols_ctx *ctx, int64_t q, int64_t s0, float *ext) {
    const fconv_plan *plan = ctx->plan;
    const fconv_filter2d_desc *f = &plan->filter;
    const int64_t C = f->channels, len = ctx->l.strip + ctx->l.reach;
    const int64_t extended = ctx->l.width + ctx->l.reach - s0; /* floats any output reads, from s0 */
    const int64_t end = len < extended ? len : extended;
    const float fill = f->border == FCONV_BORDER_CONSTANT ? f->border_value : 0.0f;
    const int64_t row = fconv_border_index(f->border, q, f->h);
    int64_t c = 0;
    if (row >= 0) {
        const float *xr = ctx->x + row * f->w * C;
        const int64_t lo = ctx->pad * C - s0 > 0 ? ctx->pad * C - s0 : 0;
        const int64_t hi = (ctx->pad + f->w) * C - s0 < end ? (ctx->pad + f->w) * C - s0 : end;
        for (; c < lo && c < end; c++) {
            const int64_t e = s0 + c, col = fconv_border_index(f->border, e / C - ctx->pad, f->w);
            ext[c] = col >= 0 ? xr[col * C + e % C] : fill;
        }
        if (lo < hi) {
            memcpy(ext + lo, xr + (s0 + lo - ctx->pad * C), (size_t)(hi - lo) * sizeof(float));
            c = hi;
        }
        for (; c < end; c++) {
            const int64_t e = s0 + c, col = fconv_border_index(f->border, e / C - ctx->pad, f->w);
            ext[c] = col >= 0 ? xr[col * C + e % C] : fill;
        }
    } else {
        for (; c < end; c++) ext[c] = fill;
    }
    for (c = end > 0 ? end : 0; c < ctx->l.row_stride; c++) ext[c] = 0.0f;
}

/* Asks for bytes [from, to) past float `lo` of input rows [q_lo, q_hi) that exist. Always
 * inlined: GCC deletes calls to a function of prefetches alone (algo/fft-rows.c). */
static inline __attribute__((always_inline)) void prefetch_rows(const struct fft_cols_ctx *ctx, int64_t q_lo,
                                                               int64_t q_hi, int64_t lo, size_t from, size_t to) {
    const fconv_filter2d_desc *f = &ctx->plan->filter;
    if (q_lo < 0) q_lo = 0;
    if (q_hi > f->h) q_hi = f->h;
    for (int64_t q = q_lo; q < q_hi; q++) {
        const char *row = (const char *)(ctx->x + q * f->w * f->channels + lo);
        for (size_t b = from & ~(size_t)63; b < to; b += 64) __builtin_prefetch(row + b, 0, 2);
    }
}

/* Output rows of band `band`, floats [s0, s0 + strip) of them (within the row). Input row
 * q lives in ring row q mod n; rows [have_lo, have_hi) are there already (the slot's
 * previous band of this strip). */
static void fft_cols_task(const struct fft_cols_ctx *ctx, char *slot, int64_t band, int64_t s0, int64_t have_lo,
                          int64_t have_hi) {
    const fconv_plan *plan = ctx->plan;
    const fconv_filter2d_desc *f = &plan->filter;
    const struct fft_cols_layout *l = &ctx->l;
    const struct fconv_kernels *kern = plan->kernels;
    const int64_t n = l->n, lanes = l->lanes, C = f->channels;
    float *ring = (float *)slot, *spec = (float *)(slot + l->ring_bytes);
    const float **block = (const float **)(slot + l->ring_bytes + l->spec_bytes);

    /* segment sample t is input row q0 + t */
    const int64_t i0 = band * l->hop, rows = i0 + l->hop < plan->out_h ? l->hop : plan->out_h - i0;
    const int64_t q0 = i0 + plan->off_h - (f->kh - 1);
    const float **ring_rows = block + n; /* segment sample t's ring row */
    for (int64_t t = 0; t < n; t++) {
        float *row = ring + fconv_mod_i64(q0 + t, n) * l->row_stride;
        if (q0 + t < have_lo || q0 + t >= have_hi) extended_row(ctx, q0 + t, s0, row);
        ring_rows[t] = row;
    }

    const int64_t s1 = s0 + l->strip < l->width ? s0 + l->strip : l->width;
    float *yb = ctx->y + i0 * l->width;
    /* The next band's new input rows, asked for a piece per output vector while this band
     * computes: their copies into the ring otherwise waited on memory. */
    const int64_t in_lo = s0 - ctx->pad * C > 0 ? s0 - ctx->pad * C : 0;
    int64_t in_hi = s1 + l->reach - ctx->pad * C;
    if (in_hi > f->w * C) in_hi = f->w * C;
    const size_t next_bytes = in_hi > in_lo ? (size_t)(in_hi - in_lo) * sizeof(float) : 0;
    const int64_t vectors = (s1 - s0 + lanes - 1) / lanes;
    for (int64_t f0 = s0; f0 < s1; f0 += l->chunk) {
        const int64_t f1 = f0 + l->chunk < s1 ? f0 + l->chunk : s1;
        for (int64_t e0 = f0; e0 < f1 + l->reach; e0 += lanes) {
            for (int64_t t = 0; t < n; t++) block[t] = ring_rows[t] + (e0 - s0);
            kern->fft_cols_forward((size_t)n, block, spec + (e0 - f0), (size_t)l->ps);
        }
        for (int64_t j = f0; j < f1; j += lanes) {
            const int64_t len = f1 - j < lanes ? f1 - j : lanes, k = (j - s0) / lanes;
            if (next_bytes) prefetch_rows(ctx, q0 + n, q0 + n + l->hop, in_lo, next_bytes * (size_t)k / (size_t)vectors,
                                          next_bytes * (size_t)(k + 1) / (size_t)vectors);
            kern->fft_cols_inverse((size_t)n, spec + (j - f0), (size_t)l->ps, (size_t)f->channels, ctx->taps,
                                   (size_t)f->kw, yb + j, (size_t)l->width, (size_t)rows, (size_t)len, ctx->stream);
        }
    }
}

/* Slot s runs tasks [s T / S, (s+1) T / S), ordered strip, band: consecutive bands of a
 * strip share n - hop input rows, which stay in the ring. */
static void fft_cols_slot(const void *vctx, size_t s) {
    const struct fft_cols_ctx *ctx = vctx;
    const struct fft_cols_layout *l = &ctx->l;
    const fconv_plan *plan = ctx->plan;
    char *slot = ctx->slots + s * l->slot_bytes;
    const int64_t t0 = l->tasks * (int64_t)s / l->slots, t1 = l->tasks * ((int64_t)s + 1) / l->slots;
    const int64_t shift = plan->off_h - (plan->filter.kh - 1); /* q0 = band * hop + shift */
    for (int64_t t = t0; t < t1; t++) {
        const int64_t band = t % l->bands, strip = t / l->bands;
        int64_t have_lo = 0, have_hi = 0;
        if (t > t0 && band > 0) { /* the previous task was band - 1 of this strip */
            have_lo = (band - 1) * l->hop + shift;
            have_hi = have_lo + l->n;
        }
        fft_cols_task(ctx, slot, band, strip * l->strip, have_lo, have_hi);
    }
    if (ctx->stream) fconv_stream_fence();
}

static void fft_cols_execute(const fconv_plan *plan, const float *x, const float *w, const float *bias, float *y,
                             void *workspace) {
    (void)bias;
    const fconv_filter2d_desc *f = &plan->filter;
    struct fft_cols_ctx ctx = {.plan = plan, .l = fft_cols_layout(plan), .x = x, .y = y};
    char *ws = workspace;
    if (plan->algo_state) {
        ctx.taps = plan->algo_state;
    } else {
        const size_t kernel_bytes = fconv_round_up_64((size_t)(f->kh * f->kw) * sizeof(float));
        float *kc = (float *)ws, *kt = (float *)(ws + kernel_bytes), *taps = (float *)(ws + 2 * kernel_bytes);
        fconv_filter_correlation_kernel(plan, w, kc);
        column_spectra(plan, ctx.l.n, kc, kt, taps);
        ctx.taps = taps;
    }
    ctx.slots = ws + ctx.l.taps_bytes;
    ctx.pad = f->kw - 1 - plan->off_w;
    const size_t vector_bytes = (size_t)ctx.l.lanes * sizeof(float);
    /* large outputs leave through non-temporal stores where y's rows are whole vectors */
    ctx.stream = (double)plan->out_h * (double)ctx.l.width * sizeof(float) >= FCONV_STREAM_OUTPUT_BYTES &&
                 (uintptr_t)y % vector_bytes == 0 && ctx.l.width % ctx.l.lanes == 0;
    fconv_parallel_1d((int)ctx.l.slots, (size_t)ctx.l.slots, fft_cols_slot, &ctx);
}

const struct fconv_algorithm fconv_algorithm_fft_cols = {
    .id = FCONV_ALGO_FFT_COLS,
    .name = "fft-cols",
    .summary = "real FFTs down columns (own SIMD transforms), kernel columns summed in the spectra",
    .serves = FCONV_SERVES_FILTER2D,
    .error_bound = 3e-6,
    .supports = fft_cols_supports,
    .workspace = fft_cols_workspace,
    .cost = fft_cols_cost,
    .prepare = fft_cols_prepare,
    .release = fft_cols_release,
    .execute = fft_cols_execute,
};
