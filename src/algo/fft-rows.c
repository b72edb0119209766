/*
 * fft-rows.c — filter2d and conv1d by FFTs along rows only: the kernel's rows are summed in
 * the frequency domain, so only one dimension is transformed and no FFT library is involved.
 *
 *   y[i][j] = sum_a (row a of the kernel) correlated with (extended input row i+a) at j
 *
 * Each extended input row is cut into overlapping segments of n samples (n = 16..128) that
 * start hop = n - KW + 1 apart; a real FFT of each segment is taken once per row and kept
 * in a ring of KH spectra. An output row is then the sum over a of kernel row a's spectrum
 * times its input row's spectrum (KH complex multiply-adds per frequency), one inverse FFT,
 * and the first hop samples of every segment (overlap-save). Per output that is about
 * 2 KH n / hop multiply-adds plus two small transforms, against KH KW for direct: 7x7 with
 * n = 32 needs 17 instead of 49, 11x11 32 instead of 121.
 *
 * The transforms run VF_LANES segments (a column group) at once, one per lane
 * (kernels/fft/fft-rows.c). A task is a band of output rows and a chunk of column groups,
 * every channel; it transforms the band's KH - 1 rows above again (bands exist only to feed
 * the threads). The segmentation depends on the problem alone and every output is computed
 * by the same operations whichever task computes it, so results do not depend on the
 * thread count.
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

/* Tallest kernel: its KH spectra per thread stay within a few MB. */
#define FFT_ROWS_MAX_KH 1024


/* Spectra a task keeps (KH rows x channels x its groups): within L2 beside the rows it
 * reads (a whole 2048-wide row's groups for 11x11; chunks of 2 groups measured slower). */
#define FFT_ROWS_RING_BYTES (256u * 1024u)

struct fft_rows_layout {
    int64_t n, hop;        /* transform size; outputs per segment */
    int64_t lanes;         /* segments per group (the kernels' VF_LANES) */
    int64_t groups;        /* column groups per row */
    int64_t chunk_groups, chunks; /* groups per task; column chunks per row */
    int64_t bands, band_rows;
    int64_t tasks, slots;  /* band x chunk; threads with work */
    size_t taps_bytes, ext_bytes, ring_bytes, ptr_bytes, out_bytes, slot_bytes; /* workspace */
};

static struct fft_rows_layout fft_rows_layout(const fconv_plan *plan) {
    const fconv_filter2d_desc *f = &plan->filter;
    struct fft_rows_layout l = {0};
    l.n = fconv_fft_segment_size(f->kh, f->kw);
    if (!l.n) return l;
    l.hop = l.n - f->kw + 1;
    l.lanes = (int64_t)plan->kernels->lanes;
    int64_t segments = (plan->out_w + l.hop - 1) / l.hop;
    l.groups = (segments + l.lanes - 1) / l.lanes;
    /* A task walks down its rows, every channel and group of its chunk per row, so that it
     * reads input rows and writes output rows in long runs, each once; its chunk's spectra
     * (KH per channel and group) stay within FFT_ROWS_RING_BYTES. Bands: enough tasks for
     * four per thread, but each at least 4 KH rows tall so that transforming KH - 1 rows
     * again per band stays cheap. */
    const size_t spec_bytes = (size_t)(l.n * l.lanes) * sizeof(float);
    const int64_t C = f->channels;
    l.chunk_groups = (int64_t)(FFT_ROWS_RING_BYTES / ((size_t)(f->kh * C) * spec_bytes));
    if (l.chunk_groups < 1) l.chunk_groups = 1;
    if (l.chunk_groups > l.groups) l.chunk_groups = l.groups;
    l.chunks = (l.groups + l.chunk_groups - 1) / l.chunk_groups;
    l.chunk_groups = (l.groups + l.chunks - 1) / l.chunks; /* even chunks */
    int64_t per_band = l.chunks, bands = 1;
    if (plan->threads > 1) bands = ((int64_t)plan->threads * 4 + per_band - 1) / per_band;
    l.band_rows = (plan->out_h + bands - 1) / bands;
    int64_t min_rows = 4 * f->kh < plan->out_h ? 4 * f->kh : plan->out_h;
    if (l.band_rows < min_rows) l.band_rows = min_rows;
    l.bands = (plan->out_h + l.band_rows - 1) / l.band_rows;
    l.tasks = per_band * l.bands;
    l.slots = plan->threads < l.tasks ? plan->threads : l.tasks;
    if (l.slots < 1) l.slots = 1;
    /* the kernel in correlation orientation and its spectra, when the weights come at
     * execute time (with plan-time weights prepare() keeps the spectra in the plan) */
    l.taps_bytes = plan->weights ? 0
                                 : fconv_round_up_64((size_t)(f->kh * f->kw) * sizeof(float)) +
                                       fconv_round_up_64((size_t)(f->kh * l.n) * sizeof(float));
    l.ext_bytes = fconv_round_up_64((size_t)(l.chunk_groups * l.lanes * l.hop + l.n - l.hop) * sizeof(float));
    l.ring_bytes = (size_t)(f->kh * C * l.chunk_groups) * spec_bytes; /* a multiple of 64 */
    l.ptr_bytes = fconv_round_up_64((size_t)f->kh * sizeof(float *));
    /* per channel, then (C > 1) the channels interleaved into one run of the output row */
    l.out_bytes = fconv_round_up_64((size_t)(l.chunk_groups * l.lanes * l.hop) * sizeof(float)) * (size_t)C;
    if (C > 1) l.out_bytes += fconv_round_up_64((size_t)(l.chunk_groups * l.lanes * l.hop * C) * sizeof(float));
    l.slot_bytes = l.ext_bytes + l.ring_bytes + l.ptr_bytes + l.out_bytes;
    return l;
}

static fconv_status fft_rows_supports(const fconv_plan *plan, char *why, size_t why_len) {
    if (plan->kind == FCONV_KIND_CONV2D) {
        snprintf(why, why_len, "fft-rows serves filter2d and conv1d, not conv2d");
        return FCONV_EUNSUPPORTED;
    }
    const fconv_filter2d_desc *f = &plan->filter;
    if (f->kw > FCONV_FFT_SEGMENT_MAX_SPAN) {
        snprintf(why, why_len, "fft-rows: kernel %lld wide, at most %d", (long long)f->kw, FCONV_FFT_SEGMENT_MAX_SPAN);
        return FCONV_EUNSUPPORTED;
    }
    if (f->kh > FFT_ROWS_MAX_KH) {
        snprintf(why, why_len, "fft-rows: kernel %lld tall, at most %d", (long long)f->kh, FFT_ROWS_MAX_KH);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

static size_t fft_rows_workspace(const fconv_plan *plan) {
    struct fft_rows_layout l = fft_rows_layout(plan);
    return l.taps_bytes + (size_t)l.slots * l.slot_bytes;
}

/* Seconds: the modelled time of every output the groups compute (the last group's idle
 * lanes included) at the ISA's speed (fconv_fft_segment_isa_speed), plus the extended
 * rows' copies, over the threads with work. Checked against 2 threads (Zen 4 VM): 2048^2
 * 11x11 3.85 ms modelled, 4.1-4.3 measured. */
static double fft_rows_cost(const fconv_plan *plan) {
    const fconv_filter2d_desc *f = &plan->filter;
    struct fft_rows_layout l = fft_rows_layout(plan);
    double speed = fconv_fft_segment_isa_speed(fconv_plan_isa(plan));
    double outputs = (double)f->channels * (double)plan->out_h * (double)(l.groups * l.lanes * l.hop);
    double rows = (double)f->channels * (double)l.chunks * (double)(plan->out_h + l.bands * (f->kh - 1));
    double work = outputs * fconv_fft_segment_seconds(l.n, f->kh, f->kw) / speed + fconv_stream_seconds(rows * (double)l.ext_bytes);
    /* Interleaved channels: the scalar (de)interleaving and C times the spectra per row
     * (measured RGB 1024^2 7x7 and 15x15, 2 threads: 1.3-2x the one-channel time per output) */
    if (f->channels > 1) work = 1.3 * work + 0.9e-9 * outputs;
    return work / (double)l.slots + (l.slots > 1 ? FCONV_PARALLEL_REGION_SECONDS : 0.0);
}

struct fft_rows_ctx {
    const fconv_plan *plan;
    struct fft_rows_layout l;
    const float *x, *taps;
    float *y;
    char *slots; /* slot s's buffers at slots + s * l.slot_bytes */
    int64_t pad; /* output column j reads input columns j - pad .. j - pad + KW - 1 */
    int stream;  /* output rows go out with non-temporal stores */
};

/* With the weights at plan time, their spectra are computed once here and kept as the
 * plan's state (recomputing them at every execute was ~8% of a 512^2 31x31 filter on two
 * threads: 0.65 -> 0.59 ms); execute-time weights take the same function in the workspace. */
static fconv_status fft_rows_prepare(fconv_plan *plan) {
    if (!plan->weights) return FCONV_OK;
    const fconv_filter2d_desc *f = &plan->filter;
    const int64_t n = fconv_fft_segment_size(f->kh, f->kw);
    float *kc = malloc((size_t)(f->kh * f->kw) * sizeof *kc);
    float *taps = malloc((size_t)(f->kh * n) * sizeof *taps);
    if (!kc || !taps) {
        free(kc);
        free(taps);
        return fconv_fail(FCONV_ENOMEM, "fft-rows: out of memory for the kernel spectra");
    }
    fconv_filter_correlation_kernel(plan, plan->weights, kc);
    fconv_fft_segment_spectra(kc, f->kh, f->kw, n, taps);
    free(kc);
    plan->algo_state = taps;
    return FCONV_OK;
}

static void fft_rows_release(fconv_plan *plan) {
    free(plan->algo_state);
    plan->algo_state = NULL;
}

/* Extended input row q (any integer: the border rule maps it), channel ch, the columns the
 * groups [g0, g1) read: ext[c] = xe[q][g0*lanes*hop + c - pad], zero past the last extended
 * column. One pass per row, in order: the hardware prefetchers then stream the input
 * (reading each group's segments straight from x instead, in the transforms' order, left
 * 1.2 ms of cache misses in a 2048^2 11x11 filter's 8 ms on one thread). */
static void extended_row(const struct fft_rows_ctx *ctx, int64_t q, int64_t ch, int64_t g0, int64_t g1, float *ext) {
    const fconv_plan *plan = ctx->plan;
    const fconv_filter2d_desc *f = &plan->filter;
    const int64_t span = ctx->l.lanes * ctx->l.hop, base = g0 * span;
    const int64_t len = (g1 - g0) * span + ctx->l.n - ctx->l.hop;
    const int64_t extent = plan->out_w + f->kw - 1 - base; /* extended columns left from base */
    const int64_t end = len < extent ? len : extent, C = f->channels;
    const float fill = f->border == FCONV_BORDER_CONSTANT ? f->border_value : 0.0f;
    const int64_t row = fconv_border_index(f->border, q, f->h);
    int64_t c = 0;
    if (row >= 0) {
        const float *xr = ctx->x + row * f->w * C + ch;
        /* columns inside the image: c in [lo, hi) */
        const int64_t lo = ctx->pad - base > 0 ? ctx->pad - base : 0;
        const int64_t hi = f->w + ctx->pad - base < end ? f->w + ctx->pad - base : end;
        for (; c < lo && c < end; c++) {
            int64_t col = fconv_border_index(f->border, base + c - ctx->pad, f->w);
            ext[c] = col >= 0 ? xr[col * C] : fill;
        }
        if (lo < hi) {
            const float *src = xr + (base + lo - ctx->pad) * C;
            if (C == 1) memcpy(ext + lo, src, (size_t)(hi - lo) * sizeof(float));
            else
                for (int64_t e = lo; e < hi; e++) ext[e] = src[(e - lo) * C];
            c = hi;
        }
        for (; c < end; c++) {
            int64_t col = fconv_border_index(f->border, base + c - ctx->pad, f->w);
            ext[c] = col >= 0 ? xr[col * C] : fill;
        }
    } else {
        for (; c < end; c++) ext[c] = fill;
    }
    for (c = end > 0 ? end : 0; c < len; c++) ext[c] = 0.0f;
}

/* Asks for part `part` of `parts` of what extended_row(q, ., g0, g1) will copy from the
 * input. The copy was the first touch of every input line and waited on memory (a fifth of
 * a 2048^2 7x7 filter's time on one thread); asked for during the row before's inverse
 * transforms, the lines arrive meanwhile (2 threads: 2.93 -> 2.80 ms, medians of 7
 * alternated runs). Always inlined: GCC 12 found the function, prefetches alone, free of
 * side effects and deleted its calls. */
static inline __attribute__((always_inline)) void prefetch_input_row(const struct fft_rows_ctx *ctx, int64_t q,
                                                                    int64_t g0, int64_t g1, int64_t part,
                                                                    int64_t parts) {
    const fconv_filter2d_desc *f = &ctx->plan->filter;
    const int64_t row = fconv_border_index(f->border, q, f->h);
    if (row < 0) return;
    const int64_t span = ctx->l.lanes * ctx->l.hop, base = g0 * span - ctx->pad;
    const int64_t lo = base > 0 ? base : 0;
    int64_t hi = base + (g1 - g0) * span + ctx->l.n - ctx->l.hop;
    if (hi > f->w) hi = f->w;
    if (lo >= hi) return;
    const char *first = (const char *)(ctx->x + (row * f->w + lo) * f->channels);
    const size_t bytes = (size_t)((hi - lo) * f->channels) * sizeof(float);
    const size_t from = bytes * (size_t)part / (size_t)parts, to = bytes * (size_t)(part + 1) / (size_t)parts;
    for (size_t b = from & ~(size_t)63; b < to; b += 64) __builtin_prefetch(first + b);
}

/* Output rows of band `band`, groups [g0, g1), every channel. Window row d of the band
 * (input row q0 + d) keeps channel c, group g's spectrum in ring slot
 * ((d mod KH) * C + c) * (g1 - g0) + g - g0. */
static void fft_rows_task(const struct fft_rows_ctx *ctx, char *slot, int64_t band, int64_t g0, int64_t g1) {
    const fconv_plan *plan = ctx->plan;
    const fconv_filter2d_desc *f = &plan->filter;
    const struct fft_rows_layout *l = &ctx->l;
    const struct fconv_kernels *kern = plan->kernels;
    const int64_t kh = f->kh, spec_floats = l->n * l->lanes, C = f->channels, ng = g1 - g0;
    const int64_t span = l->lanes * l->hop, j0 = g0 * span;
    const int64_t row_end = g1 * span < plan->out_w ? g1 * span : plan->out_w, cols = row_end - j0;
    const size_t out_stride = fconv_round_up_64((size_t)(ng * span) * sizeof(float)) / sizeof(float);
    float *ext = (float *)slot, *ring = (float *)(slot + l->ext_bytes);
    const float **spec = (const float **)(slot + l->ext_bytes + l->ring_bytes);
    float *out = (float *)(slot + l->ext_bytes + l->ring_bytes + l->ptr_bytes);
    float *mixed = out + (size_t)C * out_stride; /* C > 1: the channels interleaved */
    const int64_t i0 = band * l->band_rows, i1 = i0 + l->band_rows < plan->out_h ? i0 + l->band_rows : plan->out_h;
    const int64_t q0 = i0 + plan->off_h - (kh - 1);
    for (int64_t d = 0; d < kh - 1 + (i1 - i0); d++) {
        for (int64_t c = 0; c < C; c++) { /* window row d's spectra */
            extended_row(ctx, q0 + d, c, g0, g1, ext);
            for (int64_t g = g0; g < g1; g++)
                kern->fft_rows_forward((size_t)l->n, ext + (g - g0) * span, (size_t)l->hop,
                                       ring + (((d % kh) * C + c) * ng + g - g0) * spec_floats);
        }
        if (d < kh - 1) continue;
        const int64_t i = i0 + d - (kh - 1); /* its window is rows d - kh + 1 .. d */
        for (int64_t c = 0; c < C; c++)
            for (int64_t g = g0; g < g1; g++) {
                const size_t count = (size_t)(row_end - g * span < span ? row_end - g * span : span);
                if (c == C - 1) prefetch_input_row(ctx, q0 + d + 1, g0, g1, g - g0, ng);
                for (int64_t a = 0; a < kh; a++)
                    spec[a] = ring + ((((d - kh + 1 + a) % kh) * C + c) * ng + g - g0) * spec_floats;
                kern->fft_rows_inverse((size_t)l->n, spec, ctx->taps, (size_t)kh, (size_t)l->hop,
                                       out + (size_t)c * out_stride + (size_t)((g - g0) * span), count);
            }
        const float *run = out;
        if (C > 1) {
            for (int64_t t = 0; t < cols; t++)
                for (int64_t c = 0; c < C; c++) mixed[t * C + c] = out[(size_t)c * out_stride + (size_t)t];
            run = mixed;
        }
        float *yrow = ctx->y + (i * plan->out_w + j0) * C;
        if (ctx->stream) kern->fft_rows_stream_row(yrow, run, (size_t)(cols * C));
        else memcpy(yrow, run, (size_t)(cols * C) * sizeof(float));
    }
}

/* Slot s runs tasks [s T / S, (s+1) T / S), ordered band, chunk. */
static void fft_rows_slot(const void *vctx, size_t s) {
    const struct fft_rows_ctx *ctx = vctx;
    const struct fft_rows_layout *l = &ctx->l;
    char *slot = ctx->slots + s * l->slot_bytes;
    const int64_t t0 = l->tasks * (int64_t)s / l->slots, t1 = l->tasks * ((int64_t)s + 1) / l->slots;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t chunk = t % l->chunks, g0 = chunk * l->chunk_groups;
        fft_rows_task(ctx, slot, t / l->chunks, g0, g0 + l->chunk_groups < l->groups ? g0 + l->chunk_groups : l->groups);
    }
}

static void fft_rows_execute(const fconv_plan *plan, const float *x, const float *w, const float *bias, float *y,
                             void *workspace) {
    (void)bias;
    struct fft_rows_ctx ctx = {.plan = plan, .l = fft_rows_layout(plan), .x = x, .y = y};
    char *ws = workspace;
    if (plan->algo_state) {
        ctx.taps = plan->algo_state;
    } else {
        const fconv_filter2d_desc *f = &plan->filter;
        float *kc = (float *)ws, *taps = (float *)(ws + fconv_round_up_64((size_t)(f->kh * f->kw) * sizeof(float)));
        fconv_filter_correlation_kernel(plan, w, kc);
        fconv_fft_segment_spectra(kc, f->kh, f->kw, ctx.l.n, taps);
        ctx.taps = taps;
    }
    ctx.slots = ws + ctx.l.taps_bytes;
    ctx.pad = plan->filter.kw - 1 - plan->off_w;
    /* Large outputs are written with non-temporal stores: rows come out of the transforms in
     * bursts, whose cache misses (read for ownership) stalled the next row's work; 2048^2 7x7
     * ran 6.9 -> 5.7 ms on one thread (Zen 4 VM). */
    ctx.stream = (double)plan->out_h * (double)plan->out_w * (double)plan->filter.channels * sizeof(float) >=
                 FCONV_STREAM_OUTPUT_BYTES;
    fconv_parallel_1d((int)ctx.l.slots, (size_t)ctx.l.slots, fft_rows_slot, &ctx);
}

const struct fconv_algorithm fconv_algorithm_fft_rows = {
    .id = FCONV_ALGO_FFT_ROWS,
    .name = "fft-rows",
    .summary = "real FFTs along rows (own SIMD transforms), kernel rows summed in the spectra",
    .serves = FCONV_SERVES_FILTER2D | FCONV_SERVES_CONV1D,
    .error_bound = 3e-6,
    .supports = fft_rows_supports,
    .workspace = fft_rows_workspace,
    .cost = fft_rows_cost,
    .prepare = fft_rows_prepare,
    .release = fft_rows_release,
    .execute = fft_rows_execute,
};
