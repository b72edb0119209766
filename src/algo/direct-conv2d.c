/*
 * direct-conv2d.c — conv2d by direct loops over NCHW. A task owns a block of output channels
 * of one image and group and a block of output rows; for each output row it sums, input
 * channel by input channel and kernel row by kernel row, the row correlation of four output
 * channels at a time (one input load serves all four, and the input row is reused from L1
 * across the block), then adds the bias and applies ReLU.
 * Stride 1 runs through the dispatched SIMD kernel (core/dispatch.h): the interior columns
 * straight from the input, the columns next to the padding from zero-padded strips. With
 * fewer than four output channels per group there is no load to share between channels, so
 * the interior of a block of rows goes through filter2d's kernel instead, which shares each
 * input row between the output rows it feeds (filter_row_block).
 * Layers with few input channels (all their (c, r) rows in one call) run every output row
 * whole instead, from a task's strip of zero-padded input rows (whole_row_block); layers with
 * short rows run a task's rows as one long row over such a strip (flat_row_block); pointwise
 * layers each plane as one row (pointwise_task); strided rows from strips split into the
 * stride's phases (strided_row_block).
 * Zero padding is skipped, never read, outside those strips: kernel rows above/below the
 * input are left out and (strided rows no strip holds) each tap only touches the columns it
 * reads inside the input (fconv_direct_rows_strided).
 */

#include <stdatomic.h>

#include "algo/direct.h"
#include "core/dispatch.h"
#include "core/parallel.h"
#include "core/scratch.h"

/* Output channels per task: their rows (8 x Q floats) stay in L1 while one input row is
 * streamed through all of them. Output rows per task: enough work per task to amortize
 * the scheduling, small enough to share out a single layer between threads. Neither
 * depends on the thread count, and neither changes any output's summation order. */
#define DIRECT_K_BLOCK 8
#define DIRECT_P_BLOCK 4
/* Output channels per task where each output row takes one whole-row call per four channels
 * (fconv_direct_conv2d_whole_rows): nothing accumulates in y, so y need not stay in L1, and
 * a larger block shares the task's strip among more calls. 2 threads, Zen 5, 3 -> 64 on 224^2, 7 alternated
 * rounds: 8 channels 0.62 ms, 16 0.65, 32 0.72, 64 0.536-0.543; 8 x 3 x 224^2: 16 5.26-5.38,
 * 64 4.65-5.08. */
#define DIRECT_K_BLOCK_WHOLE_ROWS 64

struct conv2d_ctx {
    const fconv_plan *plan;
    const float *x, *w, *bias;
    float *y;
    int64_t k_block;  /* output channels per task */
    int64_t k_blocks; /* per group */
    int whole_rows;   /* every output row as one call per four channels (fconv_direct_conv2d_whole_rows) */
    int strided;      /* stride > 1 along the rows, from phase-split strips (strided_row_block) */
    int64_t flat_rows; /* output rows per task as one long row (flat_row_block), or 0 */
    /* FCONV_ROWS_STREAM for whole rows where the output is far larger than the caches, or 0.
     * Each row is written once, bias and ReLU included, so its lines need not be read in
     * first: 2 threads, Zen 5, 4 alternated rounds, 8 x 3 -> 64 on 224^2 4.8-5.1 -> 4.3-4.4 ms. */
    int stream;
    /* FCONV_ROWS_STREAM for a few-channel block's interior (filter_row_block, in place, one
     * kernel call for every channel) where the layer's input and output do not stay cached
     * between runs (FCONV_CACHED_BYTES: the output goes to memory anyway) and no bias or ReLU
     * reads it back, or 0. 3 -> 1 3x3, Zen 4 VM, 2 threads, 31 alternated rounds, plain
     * against streamed: 1024^2 0.77 -> 0.66 ms with the caches flushed before each run, 0.83
     * -> 0.76 without; 768^2 0.59 -> 0.55 and 0.32 -> 0.28; 2048^2 3.54 -> 3.28 and 3.28 ->
     * 2.98; 5x5 on 1024^2 1.25 -> 1.19 flushed, level without. (512^2, 4 MB in all, also ran
     * streamed 1.0-1.2x faster there but is left to stay cached for its next reader.) */
    int few_stream;
    int64_t p_blocks;
    struct fconv_direct_axis axis;
    uint64_t execute; /* this call's number (struct strip_ring) */
};

/* Kernel rows of the layers filter_row_block takes, and input channels per kernel call
 * there (each call reads and writes y once): bound its pointer arrays. */
#define FEW_CHANNEL_MAX_R 32
#define FEW_CHANNELS_PER_CALL 8
/* From this many output columns per kernel column a few-channel block reads its interior
 * columns in place and its edges from strips of their own (all the block's rows a call,
 * FEW_EDGE) rather than copying every row into the thread's strip: the copy, a larger share
 * of the work the fewer taps read each input, then costs more than the edges save. Emerald
 * Rapids VM, 2 threads, 3 -> 1, 21-41 alternated rounds in one process, in place against the
 * strip: 3x3 256^2 0.92x, 320^2 0.98-1.02x, 384^2 1.04x, 448^2 1.15x, 512^2 1.18x, 768^2
 * 1.12-1.15x; 2048 x 256 0.95x, 128 x 1024 1.03x; 5x5 384^2 0.94x, 512^2 1.02-1.07x, 1024^2
 * 1.24x; 7x7 512^2 0.93-0.97x, 1024^2 1.11-1.13x; 1 -> 1 3x3 256^2 0.81-0.86x, 512^2 0.99x.
 * (With the edges a call per row, on the Ice Lake VM, the crossing had been near 320 columns
 * a tap: 3x3 768^2 0.59 against 0.70 ms, 1024^2 1.34 against 1.18.) */
#define FEW_WHOLE_MAX_COLUMNS_PER_TAP 112

/* Kernel rows ((c, r) pairs) per call of the SIMD kernel: bounds the pointer arrays. */
#define ROWS_PER_CALL 64

/* Floats of the strip (the thread's scratch, 32 KiB) that edge columns are computed from. */
#define EDGE_STRIP_FLOATS 8192

/* Floats of each thread's strip for whole rows (256 KiB, in L2; the thread's scratch rather
 * than on the stack, whose size a caller's threads choose): 3 channels x 6 rows of 3000
 * columns. The 32 KiB stack strip had held rows up to 450 columns; past it, 2 threads, Zen 5,
 * 3 alternated rounds: 3 -> 16 on 512^2 0.91-0.94 -> 0.72-0.73 ms, 3 -> 32 on 1024^2 8.0-8.8
 * -> 6.3-6.9, 4 -> 64 5x5 on 512^2 10.9-13.6 -> 8.8-10.1. */
#define WHOLE_STRIP_FLOATS ((int64_t)1 << 16)

/* The thread's strip (core/scratch.h), or NULL: the task then does nothing, and the execute
 * reports it. */
static float *thread_strip(void) { return fconv_thread_scratch(FCONV_SCRATCH_DIRECT_ROWS, WHOLE_STRIP_FLOATS); }

/* What a thread's strip holds as a ring (filter_row_block): input rows [end - ring, end) of the
 * cg channels from xg, row ih of channel c in slot c * ring + ih % ring (ring: a block's rows
 * per channel), copied during execute number `execute` (a caller may change x between executes
 * at the same address); execute 0: nothing. A task's block of output rows shares all but four of
 * its input rows with the block before it, which the same thread mostly ran (each takes its
 * share in order): the strip copy had been 35% of a 3 -> 1 3x3 layer's samples on 1024^2. */
struct strip_ring {
    uint64_t execute;
    const float *xg;
    int64_t ring, width, end;
};
static _Thread_local struct strip_ring strip_ring;
static atomic_uint_fast64_t executes; /* numbers fconv_direct_conv2d's calls, from 1 */

/* y (+)= nrows input rows (row rs[i] of channel cs[i] each) for channels [k0, k1), columns
 * [q0, q1): the same rows serve every group of four channels; a row's tap columns `dist`
 * floats apart. flags: the kernel's; finish: the call completes these outputs, so the kernel
 * adds the bias and applies ReLU as it stores them (else conv2d_task's epilogue does, once
 * every call is in). */
static void rows_call(const struct conv2d_ctx *ctx, float *yn, int64_t p, int64_t k0, int64_t k1, int64_t q0,
                      int64_t q1, const float *const *xs, const int64_t *cs, const int64_t *rs, size_t nrows,
                      int flags, int finish, size_t dist) {
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t P = ctx->plan->out_h, Q = ctx->plan->out_w, cg = d->c / d->groups;
    for (int64_t k = k0; k < k1; k += 4) {
        const size_t nk = (size_t)fconv_direct_min(4, k1 - k);
        float *ys[4];
        const float *ts[ROWS_PER_CALL];
        for (size_t t = 0; t < nk; t++) ys[t] = yn + ((k + (int64_t)t) * P + p) * Q + q0;
        for (size_t i = 0; i < nrows; i++) ts[i] = ctx->w + ((k * cg + cs[i]) * d->r + rs[i]) * d->s;
        const float *bias = finish && ctx->bias ? ctx->bias + k : NULL;
        const int relu = finish && d->activation == FCONV_ACTIVATION_RELU ? FCONV_ROWS_RELU : 0;
        ctx->plan->kernels->direct_rows(ys, nk, (size_t)(q1 - q0), xs, ts, 1, cg * d->r * d->s, nrows,
                                        (size_t)d->s, dist, bias, flags | relu);
    }
}

/* Output row p of channels [k0, k1), columns [q0, q1) (stride 1): y = the sum over the input
 * rows inside the image (at least one) of all their taps, by the dispatched kernel, four
 * channels per call, up to ROWS_PER_CALL rows per call. Interior columns (strip NULL: every
 * tap inside the row) read the input in place; columns next to the padding read a copy of
 * what they need, zero outside the row, in strip (rows of `width` floats). */
static void sum_columns(const struct conv2d_ctx *ctx, int64_t n, int64_t g, int64_t p, int64_t k0, int64_t k1,
                        int64_t q0, int64_t q1, float *strip, int64_t width) {
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t P = ctx->plan->out_h, Q = ctx->plan->out_w, cg = d->c / d->groups;
    const float *xg = ctx->x + (n * d->c + g * cg) * d->h * d->w;
    float *yn = ctx->y + n * d->k * P * Q;
    const float *xs[ROWS_PER_CALL];
    int64_t cs[ROWS_PER_CALL], rs[ROWS_PER_CALL]; /* the (c, r) of each row */
    size_t nrows = 0;
    int flags = 0; /* the first call writes y, the others add to it */
    for (int64_t c = 0; c < cg; c++) {
        for (int64_t r = 0; r < d->r; r++) {
            int64_t ih = p * d->stride_h - d->pad_top + r * d->dilation_h;
            if (ih < 0 || ih >= d->h) continue; /* a padding row: contributes zero */
            const float *xrow = xg + (c * d->h + ih) * d->w;
            if (strip) { /* srow[e] = xrow[q0 - pad_left + e], zero outside the row */
                float *srow = strip + (int64_t)nrows * width;
                fconv_copy_padded_row(srow, width, xrow, d->w, q0 - d->pad_left);
                xs[nrows] = srow;
            } else {
                xs[nrows] = xrow + (q0 - d->pad_left);
            }
            cs[nrows] = c;
            rs[nrows] = r;
            if (++nrows == ROWS_PER_CALL) {
                rows_call(ctx, yn, p, k0, k1, q0, q1, xs, cs, rs, nrows, flags, 0, (size_t)d->dilation_w);
                nrows = 0;
                flags = FCONV_ROWS_ACCUMULATE;
            }
        }
    }
    if (nrows) rows_call(ctx, yn, p, k0, k1, q0, q1, xs, cs, rs, nrows, flags, 0, (size_t)d->dilation_w);
}

/* Output row p of channels [k0, k1), columns [q0, q1) next to the padding (stride 1), as
 * sum_columns from a strip (the thread's scratch): the SIMD kernel runs over them as over the
 * interior (a per-output scalar loop over every tap was 20% of a 3 -> 64 channel 224² layer).
 * Strips wider than EDGE_STRIP_FLOATS (huge dilated kernels) take that loop instead. */
static void edge_columns(const struct conv2d_ctx *ctx, int64_t n, int64_t g, int64_t p, int64_t k0,
                         int64_t k1, int64_t q0, int64_t q1) {
    if (q0 >= q1) return;
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t width = q1 - q0 + (d->s - 1) * d->dilation_w; /* floats per strip row */
    if (width * ROWS_PER_CALL <= EDGE_STRIP_FLOATS) {
        float *strip = fconv_thread_scratch(FCONV_SCRATCH_EDGE, EDGE_STRIP_FLOATS);
        if (strip) sum_columns(ctx, n, g, p, k0, k1, q0, q1, strip, width); /* else the execute reports it */
        return;
    }
    const int64_t P = ctx->plan->out_h, Q = ctx->plan->out_w, cg = d->c / d->groups;
    const float *xg = ctx->x + (n * d->c + g * cg) * d->h * d->w;
    float *yn = ctx->y + n * d->k * P * Q;
    for (int64_t k = k0; k < k1; k++)
        for (int64_t q = q0; q < q1; q++) {
            float acc = 0.0f;
            for (int64_t c = 0; c < cg; c++)
                for (int64_t r = 0; r < d->r; r++) {
                    int64_t ih = p * d->stride_h - d->pad_top + r * d->dilation_h;
                    if (ih < 0 || ih >= d->h) continue;
                    const float *xrow = xg + (c * d->h + ih) * d->w;
                    const float *wr = ctx->w + ((k * cg + c) * d->r + r) * d->s;
                    for (int64_t s = 0; s < d->s; s++) {
                        int64_t iw = q - d->pad_left + s * d->dilation_w;
                        if (iw >= 0 && iw < d->w) acc += wr[s] * xrow[iw];
                    }
                }
            yn[(k * P + p) * Q + q] = acc;
        }
}

/* Floats of a strip row holding every input column the Q output columns read, padding
 * included. */
static int64_t strip_width(const fconv_plan *plan) {
    return plan->out_w + (plan->conv2d.s - 1) * plan->conv2d.dilation_w;
}

/* Whether rows_per_channel input rows of each of a group's channels fit the thread's strip. */
static int strip_fits(const fconv_plan *plan, int64_t rows_per_channel) {
    const int64_t cg = plan->conv2d.c / plan->conv2d.groups;
    return cg * rows_per_channel <= WHOLE_STRIP_FLOATS / strip_width(plan);
}

/* The thread's strip for whole rows: row (c, i) is input row top + i of channel c (of the cg
 * from xg) as `copies` copies `stride` floats apart, copy b the `cols` columns of the
 * zero-padded row from padded column b * dilation on (one copy: the padded row itself; several:
 * whole_rows_shifted), columns outside the input the padding's zeros; rows outside the image
 * are left as they are (nothing reads them). */
static void copy_strip_rows(const fconv_conv2d_desc *d, const float *xg, int64_t cg, int64_t top, int64_t span,
                            int64_t cols, int64_t copies, int64_t stride, float *strip) {
    for (int64_t c = 0; c < cg; c++)
        for (int64_t i = 0; i < span; i++) {
            const int64_t ih = top + i;
            if (ih >= 0 && ih < d->h)
                for (int64_t b = 0; b < copies; b++)
                    fconv_copy_padded_row(strip + ((c * span + i) * copies + b) * stride, cols,
                                          xg + (c * d->h + ih) * d->w, d->w, b * d->dilation_w - d->pad_left);
        }
}

/* Whole rows read their input from shifted copies (S of each row, copy_strip_rows) where split
 * loads are slow and 512-bit loads issue one a cycle (fconv_cpu_info: Ice Lake), and the copies
 * of a task's rows fit this many floats, a core's L1 (48 KiB on Ice Lake and Zen 5). A tap
 * column b of the kernel reads its row at every output column shifted by b, so all but one of
 * every S vector loads straddle two cache lines (two load slots each on Intel's cores,
 * fconv_cpu_info); from S copies, copy b starting at column b, every load is aligned. 2
 * threads, Ice Lake VM, 21 alternated rounds in one process, medians: 3 -> 64
 * on 224^2 1.145 -> 1.050 and 1.131 -> 1.083 ms (one thread 2.42 -> 2.21), 3 -> 64 on 112^2
 * 0.306 -> 0.260, 4 -> 64 5x5 on 64^2 0.307 -> 0.254, 8 -> 64 on 112^2 (64 KiB of copies)
 * 0.715 -> 0.692; past L1 they lost: 16 -> 32 on 112^2 (128 KiB) 0.81 -> 0.86, 16 -> 64 on
 * 56^2 (72 KiB) 0.53 -> 0.58. Batch 8 of 3 -> 64 on 224^2 (its output from memory) level.
 * An Emerald Rapids VM (two 512-bit loads a cycle) ran the copies level or slower (2 threads,
 * 9-21 alternated rounds: 3 -> 64 on 224^2 0.97x, batch 8 0.95x, on 112^2 0.99x, 4 -> 64 5x5 on
 * 64^2 0.99x), and winograd-rows 1.15-1.17x faster than either on 224^2: without the copies
 * direct's cost (direct.c) leaves that layer to winograd-rows there. */
#define SHIFTED_STRIP_FLOATS 12288

/* Floats from one shifted copy of a strip row to the next: the output row in whole 64-byte
 * lines, so that every copy starts on a vector boundary. */
static int64_t shifted_copy_stride(const fconv_plan *plan) { return (plan->out_w + 15) / 16 * 16; }

/* Whether a task's whole rows, `span` input rows a channel, read shifted copies: with AVX-512
 * only (AVX2's 32-byte loads straddle lines half as often, and 3 -> 64 on 224^2 and 112^2 ran
 * 0.97-1.01x with the copies). */
static int whole_rows_shifted(const fconv_plan *plan, int64_t span) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const fconv_cpu_info *cpu = fconv_cpu();
    return cpu->split_loads_slow && cpu->wide_loads_slow && fconv_plan_isa(plan) >= FCONV_ISA_AVX512 &&
           d->c / d->groups * span * d->s * shifted_copy_stride(plan) <= SHIFTED_STRIP_FLOATS;
}

/* Whether a few-channel block of output rows [p0, p1) runs every column from the thread's
 * strip: rows short enough (FEW_WHOLE_MAX_COLUMNS_PER_TAP) whose input rows fit it. */
static int few_rows_from_strip(const fconv_plan *plan, int64_t p0, int64_t p1) {
    return plan->out_w < FEW_WHOLE_MAX_COLUMNS_PER_TAP * plan->conv2d.s &&
           strip_fits(plan, p1 - p0 + plan->conv2d.r - 1);
}

/* Whether output rows [p0, p1) take filter_row_block: stride and dilation 1 down the
 * columns (consecutive output rows read consecutive input rows), stride 1 along them, none
 * of the rows' kernel rows in the padding, and fewer output channels per group than
 * direct_rows shares a load between (a few-channel layer: 3 -> 1; depthwise). With AVX2 the
 * four-row block of 3 x 3 taps and several input channels runs no faster than sum_columns'
 * one row of every (c, r) row, and pays only by its cheaper edges, up to
 * FEW_AVX2_MAX_COLUMNS_PER_TAP: 2 threads, Ice Lake VM, 3 -> 1 3x3, alternated rounds,
 * sum_columns against it (edges row by row): 112^2 0.035 against 0.019 ms, 224^2 0.090
 * against 0.062, 512^2 0.39 against 0.36, 768^2 0.83 against 0.86, 1024^2 (in place)
 * 1.45-1.54 against 1.64-1.70; AVX2 on the Emerald Rapids VM, 21 alternated rounds, in place
 * with FEW_EDGE against sum_columns: 384^2 1.26-1.30x, 512^2 1.26-1.28x, 768^2 1.17-1.21x, 1024^2
 * 0.96-0.97x. */
#define FEW_AVX2_MAX_COLUMNS_PER_TAP 320
static int few_channel_rows(const struct conv2d_ctx *ctx, int64_t p0, int64_t p1) {
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int pays = d->c / d->groups == 1 || d->r * d->s >= 25 || ctx->plan->kernels->lanes >= 16 ||
                     ctx->plan->out_w < FEW_AVX2_MAX_COLUMNS_PER_TAP * d->s;
    return pays && d->k / d->groups < 4 && d->r <= FEW_CHANNEL_MAX_R && d->stride_h == 1 && d->dilation_h == 1 &&
           ctx->axis.stride == 1 && p0 - d->pad_top >= 0 && p1 - 1 - d->pad_top + d->r - 1 < d->h;
}

enum few_rows_source {
    FEW_IN_PLACE,   /* interior columns, every tap inside the rows: the input itself */
    FEW_WHOLE_ROWS, /* qa = 0, qb = Q (the rows fitting the thread's strip): every column at
                     * once, from the block's input rows copied zero-padded into the strip's
                     * ring (conv2d_task then runs no edge columns) */
    FEW_EDGE,       /* columns next to the padding: from the caller's strip of
                     * EDGE_STRIP_FLOATS, filled here with the columns they read, zero outside
                     * the row (few_edge_fits) */
};

/* Whether filter_row_block can take columns [qa, qb) of a block of nr rows as FEW_EDGE: its
 * strip holds every channel's rows of them. */
static int few_edge_fits(const fconv_plan *plan, int64_t nr, int64_t qa, int64_t qb) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    return d->c / d->groups * (d->r + nr - 1) * (qb - qa + (d->s - 1) * d->dilation_w) <= EDGE_STRIP_FLOATS;
}

/* Output rows [p0, p1) (at most 4) of channels [k0, k1), columns [qa, qb) from `source`, as
 * sum_columns would give them for every row: through the filter2d kernel, which loads each
 * input row once for all the rows it feeds (direct_rows loads it once per output row, for one
 * to three channels here), FEW_CHANNELS_PER_CALL input channels a call summed in registers
 * (the rows accumulating from call to call). The kernel's multiply-add chain per output runs
 * over (c, r, s) in sum_columns' order from the same partial sums, so the bits are the same
 * (the edge columns recompute some interior ones). 3 -> 1 on 1024^2, AVX-512, 2 threads, Zen
 * 5: 3x3 0.81-0.84 -> 0.70-0.73 ms (the input's and output's memory traffic the bound now),
 * 5x5 2.0 -> 1.3. A call per channel had stored and reloaded the rows per channel: Ice Lake
 * VM, 3x3 from the strip, separate runs of one harness, 2.0-2.2 -> 1.2 ms. */
static void filter_row_block(const struct conv2d_ctx *ctx, int64_t n, int64_t g, int64_t p0, int64_t p1,
                             int64_t k0, int64_t k1, int64_t qa, int64_t qb, enum few_rows_source source,
                             float *edge_strip) {
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t P = ctx->plan->out_h, Q = ctx->plan->out_w, cg = d->c / d->groups;
    const int64_t nr = p1 - p0, rows = d->r + nr - 1;
    const float *xg = ctx->x + (n * d->c + g * cg) * d->h * d->w;
    float *yn = ctx->y + n * d->k * P * Q;
    const int64_t width = strip_width(ctx->plan), top = p0 - d->pad_top;
    const int64_t edge_width = qb - qa + (d->s - 1) * d->dilation_w;
    float *whole_strip = source == FEW_WHOLE_ROWS ? thread_strip() : NULL;
    if (source == FEW_WHOLE_ROWS && !whole_strip) return;
    if (source == FEW_EDGE)
        for (int64_t c = 0; c < cg; c++)
            for (int64_t i = 0; i < rows; i++)
                fconv_copy_padded_row(edge_strip + (c * rows + i) * edge_width, edge_width,
                                      xg + (c * d->h + top + i) * d->w, d->w, qa - d->pad_left);
    if (source == FEW_WHOLE_ROWS) {
        /* the rows the strip lacks, into their slots: where it holds rows [end - rows, end)
         * with end - rows <= top <= end, only rows end .. top + rows - 1 (a 3 -> 1 3x3 block of
         * 4 output rows: 4 of its 6), each into the slot of a row no longer needed */
        struct strip_ring *s = &strip_ring;
        const int continues = s->execute == ctx->execute && s->xg == xg && s->ring == rows && s->width == width &&
                              top >= s->end - rows && top <= s->end;
        for (int64_t c = 0; c < cg; c++)
            for (int64_t ih = continues ? s->end : top; ih < top + rows; ih++)
                fconv_copy_padded_row(whole_strip + (c * rows + ih % rows) * width, width,
                                      xg + (c * d->h + ih) * d->w, d->w, -d->pad_left);
        *s = (struct strip_ring){ctx->execute, xg, rows, width, top + rows};
    }
    const float *xs[FEW_CHANNELS_PER_CALL * (DIRECT_P_BLOCK + FEW_CHANNEL_MAX_R - 1)];
    const float *ts[FEW_CHANNELS_PER_CALL * FEW_CHANNEL_MAX_R];
    float *ys[DIRECT_P_BLOCK];
    for (int64_t k = k0; k < k1; k++) {
        for (int64_t r = 0; r < nr; r++) ys[r] = yn + (k * P + p0 + r) * Q + qa;
        for (int64_t c0 = 0; c0 < cg; c0 += FEW_CHANNELS_PER_CALL) {
            const int64_t nc = fconv_direct_min(FEW_CHANNELS_PER_CALL, cg - c0);
            for (int64_t c = c0; c < c0 + nc; c++) {
                for (int64_t i = 0; i < rows; i++)
                    xs[(c - c0) * rows + i] = source == FEW_WHOLE_ROWS ? whole_strip + (c * rows + (top + i) % rows) * width
                                              : source == FEW_EDGE     ? edge_strip + (c * rows + i) * edge_width
                                                                       : xg + (c * d->h + top + i) * d->w + (qa - d->pad_left);
                for (int64_t a = 0; a < d->r; a++) ts[(c - c0) * d->r + a] = ctx->w + ((k * cg + c) * d->r + a) * d->s;
            }
            const int streamed = source == FEW_IN_PLACE && c0 == 0 && nc == cg ? ctx->few_stream : 0;
            ctx->plan->kernels->direct_filter_rows(ys, (size_t)nr, (size_t)(qb - qa), xs, ts, 1, (size_t)nc,
                                                   (size_t)d->r, (size_t)d->s, (size_t)d->dilation_w,
                                                   (c0 ? FCONV_ROWS_ACCUMULATE : 0) | streamed);
            if (streamed) fconv_stream_fence();
        }
    }
}

/* The input rows a task's output rows [p0, p1) read per channel: (p1 - p0 - 1) * stride_h +
 * (R - 1) * dilation_h + 1 at most. */
static int64_t whole_rows_span(const fconv_conv2d_desc *d, int64_t out_rows) {
    return (out_rows - 1) * d->stride_h + (d->r - 1) * d->dilation_h + 1;
}

/* Output rows [p0, p1) of channels [k0, k1) over all Q columns (fconv_direct_conv2d_whole_rows):
 * the input rows they read inside the image copied once, zero-padded on both sides, into the
 * thread's strip that every output row and every four channels then read in place, one kernel
 * call each (the layer's (c, r) rows fit one call, so y is written, never accumulated), or
 * from shifted copies of those rows (whole_rows_shifted). Each output sums its (c, r, s) taps
 * in sum_columns' order, the padding's zeros included, as the edge strips gave them: the same
 * bits. */
static void whole_row_block(const struct conv2d_ctx *ctx, int64_t n, int64_t g, int64_t p0, int64_t p1,
                            int64_t k0, int64_t k1) {
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t Q = ctx->plan->out_w, cg = d->c / d->groups, width = strip_width(ctx->plan);
    const int64_t span = whole_rows_span(d, p1 - p0), top = p0 * d->stride_h - d->pad_top;
    const float *xg = ctx->x + (n * d->c + g * cg) * d->h * d->w;
    float *yn = ctx->y + n * d->k * ctx->plan->out_h * Q;
    float *whole_strip = thread_strip();
    if (!whole_strip) return;
    /* one copy of each padded row, its taps dilation apart; or S shifted copies of Q columns,
     * tap column b of output column q at q in copy b: the taps a copy apart */
    const int shifted = whole_rows_shifted(ctx->plan, span);
    const int64_t copies = shifted ? d->s : 1, copy_floats = shifted ? shifted_copy_stride(ctx->plan) : width;
    const size_t dist = (size_t)(shifted ? copy_floats : d->dilation_w);
    copy_strip_rows(d, xg, cg, top, span, shifted ? Q : width, copies, copy_floats, whole_strip);
    strip_ring.execute = 0; /* the strip no longer holds a ring */
    for (int64_t p = p0; p < p1; p++) {
        const float *xs[ROWS_PER_CALL];
        int64_t cs[ROWS_PER_CALL], rs[ROWS_PER_CALL];
        size_t nrows = 0;
        for (int64_t c = 0; c < cg; c++)
            for (int64_t r = 0; r < d->r; r++) {
                const int64_t i = (p - p0) * d->stride_h + r * d->dilation_h;
                if (top + i < 0 || top + i >= d->h) continue; /* a padding row: contributes zero */
                xs[nrows] = whole_strip + (c * span + i) * copies * copy_floats;
                cs[nrows] = c;
                rs[nrows++] = r;
            }
        if (nrows) /* else conv2d_task zeroes it */
            rows_call(ctx, yn, p, k0, k1, 0, Q, xs, cs, rs, nrows, ctx->stream, 1, dist);
    }
    if (ctx->stream) fconv_stream_fence();
}

/*
 * Strided rows (stride st > 1 along the row) through the same SIMD kernel: output column q of
 * tap s reads padded column q*st + s*dilation, which is column q + (s*dilation)/st of the
 * padded row's phase (s*dilation) % st, the row's every st-th column. Taps s0, s0 + period,
 * s0 + 2*period, ... (period = st / gcd(st, dilation)) share that phase and read consecutive
 * phase columns dilation / gcd apart: one kernel row of taps tap_step = period apart. A
 * task's input rows are split into their phases once, zero-padded, in the thread's strip (a
 * chunk of input channels at a time where they do not all fit), and every output row then
 * sums its (c, r) rows residue by residue. The scalar loop this replaces read one strided
 * column per tap (3 -> 64 7x7/2 on 224^2: 14 ms).
 */
struct strided_geometry {
    int64_t period, dist, width; /* tap residues; phase columns between a residue's taps; floats per phase row */
};

static struct strided_geometry strided_geometry(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    int64_t a = d->stride_w, b = d->dilation_w;
    while (b) {
        const int64_t t = a % b;
        a = b;
        b = t;
    }
    return (struct strided_geometry){d->stride_w / a, d->dilation_w / a,
                                     plan->out_w + (d->s - 1) * d->dilation_w / d->stride_w + 1};
}

/* Input channels whose phase-split rows for out_rows output rows fit the thread's strip (0:
 * not even one). */
static int64_t strided_channels(const fconv_plan *plan, int64_t out_rows) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const double per_channel = (double)whole_rows_span(d, out_rows) * (double)d->stride_w *
                               (double)strided_geometry(plan).width;
    const double fit = (double)WHOLE_STRIP_FLOATS / per_channel;
    return fit < 1.0 ? 0 : fit > (double)(d->c / d->groups) ? d->c / d->groups : (int64_t)fit;
}

/* dst[ph * width + j] = input column j*st + ph - pad_left of xrow (w floats), 0 outside it,
 * for each phase ph < st. */
static void copy_phase_rows(const struct conv2d_ctx *ctx, float *dst, int64_t width, const float *xrow) {
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t st = d->stride_w;
    for (int64_t ph = 0; ph < st; ph++) {
        float *row = dst + ph * width;
        const int64_t first = ph - d->pad_left; /* input column of row[0] */
        /* row[j] lies inside for lo <= j < hi */
        const int64_t lo = fconv_direct_min(fconv_direct_max(fconv_direct_ceil_div(-first, st), 0), width);
        const int64_t hi = fconv_direct_min(fconv_direct_max(fconv_direct_ceil_div(d->w - first, st), lo), width);
        fconv_zero_floats(row, lo);
        if (st == 2 && hi > lo) ctx->plan->kernels->im2col_copy_stride2(row + lo, xrow + first + 2 * lo, (size_t)(hi - lo));
        else
            for (int64_t j = lo; j < hi; j++) row[j] = xrow[first + j * st];
        fconv_zero_floats(row + hi, width - hi);
    }
}

/* y (+)= nrows phase rows xs (of the (c, r) in cs, rs), residue s0's taps, for output row p of
 * channels [k0, k1); *written: whether y holds this row's partial sums already. */
static void strided_call(const struct conv2d_ctx *ctx, const struct strided_geometry *geo, float *yn, int64_t p,
                         int64_t k0, int64_t k1, const float *const *xs, const int64_t *cs, const int64_t *rs,
                         size_t nrows, int64_t s0, int *written) {
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t P = ctx->plan->out_h, Q = ctx->plan->out_w, cg = d->c / d->groups;
    const size_t taps = (size_t)((d->s - s0 + geo->period - 1) / geo->period);
    for (int64_t k = k0; k < k1; k += 4) {
        const size_t nk = (size_t)fconv_direct_min(4, k1 - k);
        float *ys[4];
        const float *ts[ROWS_PER_CALL];
        for (size_t t = 0; t < nk; t++) ys[t] = yn + ((k + (int64_t)t) * P + p) * Q;
        for (size_t e = 0; e < nrows; e++) ts[e] = ctx->w + ((k * cg + cs[e]) * d->r + rs[e]) * d->s + s0;
        ctx->plan->kernels->direct_rows(ys, nk, (size_t)Q, xs, ts, geo->period, cg * d->r * d->s, nrows, taps,
                                        (size_t)geo->dist, NULL, *written ? FCONV_ROWS_ACCUMULATE : 0);
    }
    *written = 1;
}

/* Output rows [p0, p1) of channels [k0, k1), every column, bias and ReLU included: each
 * output sums its taps residue by residue, input channel by channel, kernel row by row. */
static void strided_row_block(const struct conv2d_ctx *ctx, int64_t n, int64_t g, int64_t p0, int64_t p1,
                              int64_t k0, int64_t k1) {
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t P = ctx->plan->out_h, Q = ctx->plan->out_w, cg = d->c / d->groups, st = d->stride_w;
    const struct strided_geometry geo = strided_geometry(ctx->plan);
    const int64_t span = whole_rows_span(d, p1 - p0), top = p0 * d->stride_h - d->pad_top;
    const int64_t chunk = strided_channels(ctx->plan, p1 - p0), row_floats = st * geo.width;
    const float *xg = ctx->x + (n * d->c + g * cg) * d->h * d->w;
    float *yn = ctx->y + n * d->k * P * Q;
    int written[DIRECT_P_BLOCK] = {0}; /* does output row p0 + i hold partial sums yet? */
    float *whole_strip = thread_strip();
    if (!whole_strip) return;
    strip_ring.execute = 0; /* the strip no longer holds a ring */
    for (int64_t c0 = 0; c0 < cg; c0 += chunk) {
        const int64_t c1 = fconv_direct_min(c0 + chunk, cg);
        for (int64_t c = c0; c < c1; c++)
            for (int64_t i = 0; i < span; i++)
                if (top + i >= 0 && top + i < d->h)
                    copy_phase_rows(ctx, whole_strip + ((c - c0) * span + i) * row_floats, geo.width,
                                    xg + (c * d->h + top + i) * d->w);
        for (int64_t p = p0; p < p1; p++)
            for (int64_t s0 = 0; s0 < geo.period && s0 < d->s; s0++) {
                const int64_t offset = s0 * d->dilation_w; /* residue s0's first tap, in padded columns */
                const float *xs[ROWS_PER_CALL];
                int64_t cs[ROWS_PER_CALL], rs[ROWS_PER_CALL];
                size_t nrows = 0;
                for (int64_t c = c0; c < c1; c++)
                    for (int64_t r = 0; r < d->r; r++) {
                        const int64_t i = (p - p0) * d->stride_h + r * d->dilation_h;
                        if (top + i < 0 || top + i >= d->h) continue; /* a padding row: contributes zero */
                        xs[nrows] = whole_strip + ((c - c0) * span + i) * row_floats + (offset % st) * geo.width +
                                    offset / st;
                        cs[nrows] = c;
                        rs[nrows] = r;
                        if (++nrows == ROWS_PER_CALL) {
                            strided_call(ctx, &geo, yn, p, k0, k1, xs, cs, rs, nrows, s0, &written[p - p0]);
                            nrows = 0;
                        }
                    }
                if (nrows) strided_call(ctx, &geo, yn, p, k0, k1, xs, cs, rs, nrows, s0, &written[p - p0]);
            }
    }
    for (int64_t p = p0; p < p1; p++) {
        if (!written[p - p0]) /* every kernel row in the padding */
            for (int64_t k = k0; k < k1; k++) fconv_zero_floats(yn + (k * P + p) * Q, Q);
        fconv_bias_relu_rows(yn + (k0 * P + p) * Q, (size_t)(P * Q), (size_t)(k1 - k0), Q,
                             ctx->bias ? ctx->bias + k0 : NULL, d->activation == FCONV_ACTIVATION_RELU);
    }
}

/* i = (n * groups + g) * k_blocks + kb; j = the row block. */
static void conv2d_task(const void *vctx, size_t i, size_t j) {
    const struct conv2d_ctx *ctx = vctx;
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t P = ctx->plan->out_h, Q = ctx->plan->out_w;
    const int64_t cg = d->c / d->groups, kg = d->k / d->groups;
    const int64_t kb = (int64_t)i % ctx->k_blocks, ng = (int64_t)i / ctx->k_blocks;
    const int64_t g = ng % d->groups, n = ng / d->groups;
    const int64_t k0 = g * kg + kb * ctx->k_block;
    const int64_t k1 = fconv_direct_min(k0 + ctx->k_block, (g + 1) * kg);
    const int64_t p0 = (int64_t)j * DIRECT_P_BLOCK, p1 = fconv_direct_min(p0 + DIRECT_P_BLOCK, P);
    const float *xg = ctx->x + (n * d->c + g * cg) * d->h * d->w;
    float *yn = ctx->y + n * d->k * P * Q;
    if (ctx->strided) {
        strided_row_block(ctx, n, g, p0, p1, k0, k1);
        return;
    }
    const int rows_kernel = few_channel_rows(ctx, p0, p1);
    if (ctx->whole_rows) whole_row_block(ctx, n, g, p0, p1, k0, k1);
    /* A few-channel block whose input rows fit the thread's strip runs every column from it,
     * as whole_row_block does: its edge columns had been one-vector blocks with strips of
     * their own (2 threads, Zen 5, 3 alternated rounds: depthwise 32 channels 3x3 on 112^2
     * 0.24 -> 0.105 ms, 3 -> 1 5x5 on 1024^2 0.90-0.94 -> 0.82-0.85, 3x3 0.50-0.57 -> 0.50-0.54).
     * Long rows read the input in place instead (few_rows_from_strip). */
    const int few_whole = rows_kernel && few_rows_from_strip(ctx->plan, p0, p1);
    if (few_whole) filter_row_block(ctx, n, g, p0, p1, k0, k1, 0, Q, FEW_WHOLE_ROWS, NULL);

    for (int64_t p = p0; p < p1; p++) {
        int rows_inside = 0; /* does any kernel row read inside the image? */
        for (int64_t r = 0; r < d->r; r++) {
            int64_t ih = p * d->stride_h - d->pad_top + r * d->dilation_h;
            rows_inside |= ih >= 0 && ih < d->h;
        }
        /* Stride 1: the interior columns [qa, qb), where every tap reads inside the row, go
         * through the dispatched SIMD kernel (four output channels x all (c, r, s) taps in
         * registers), the few columns next to the padding through it too, from strips; both
         * write y, so it needs no initializing pass (which was 16% of a 3 -> 64 channel
         * 224² layer: the first touch of y). Other strides add the row loops below to zero. */
        const int stride1 = ctx->axis.stride == 1 && rows_inside;
        for (int64_t k = k0; k < k1 && !stride1; k++) {
            float *yrow = yn + (k * P + p) * Q;
            for (int64_t q = 0; q < Q; q++) yrow[q] = 0.0f;
        }
        if (stride1 && !ctx->whole_rows && !few_whole) { /* (else written above) */
            int64_t qa = fconv_direct_min(d->pad_left, Q);
            int64_t qb = fconv_direct_min(fconv_direct_max(d->w + d->pad_left - (d->s - 1) * d->dilation_w, qa), Q);
            if (qa >= qb) qa = qb = Q; /* no interior: the edge loop takes every column */
            /* Each edge as one whole vector where the row holds one, recomputing a few
             * interior columns with the same taps in the same order (the same bits): the
             * kernel's partial-vector block for one or two columns keeps its accumulators
             * on the stack, and the two edge columns of a 3 -> 64 channel 224^2 layer took
             * a quarter of its time (1 thread: 3 -> 64 on 224^2 2.82 -> 2.69 ms, 64 -> 64
             * on 56^2 7.22 -> 6.73, min of 7 alternated runs). The interior is what is left
             * (none where the edges meet). */
            const int64_t lanes = (int64_t)ctx->plan->kernels->lanes;
            const int widen = Q >= lanes && (lanes + (d->s - 1) * d->dilation_w) * ROWS_PER_CALL <= EDGE_STRIP_FLOATS;
            if (widen && qa > 0 && qa < lanes) qa = lanes;
            if (widen && qb < Q && qb > Q - lanes) qb = Q - lanes;
            /* A few-channel block's edges as its interior, all its rows a call, from strips
             * of their own: row by row (sum_columns, a call per row and edge) they had been a
             * sixth of a 3 -> 1 3x3 layer's samples on 1024^2 (perf, 2 threads). */
            const int edge_block = rows_kernel && few_edge_fits(ctx->plan, p1 - p0, 0, qa) &&
                                   few_edge_fits(ctx->plan, p1 - p0, qb, Q);
            if (!rows_kernel && qa < qb) sum_columns(ctx, n, g, p, k0, k1, qa, qb, NULL, 0);
            if (rows_kernel && p == p0) {
                if (qa < qb) filter_row_block(ctx, n, g, p0, p1, k0, k1, qa, qb, FEW_IN_PLACE, NULL);
                float *strip = edge_block ? fconv_thread_scratch(FCONV_SCRATCH_EDGE, EDGE_STRIP_FLOATS) : NULL;
                if (strip) { /* (else the execute reports it) */
                    if (qa > 0) filter_row_block(ctx, n, g, p0, p1, k0, k1, 0, qa, FEW_EDGE, strip);
                    if (qb < Q) filter_row_block(ctx, n, g, p0, p1, k0, k1, qb, Q, FEW_EDGE, strip);
                }
            }
            if (!edge_block) {
                edge_columns(ctx, n, g, p, k0, k1, 0, qa);
                edge_columns(ctx, n, g, p, k0, k1, qb, Q);
            }
        }
        for (int64_t c = 0; c < cg && !stride1; c++) {
            for (int64_t r = 0; r < d->r; r++) {
                int64_t ih = p * d->stride_h - d->pad_top + r * d->dilation_h;
                if (ih < 0 || ih >= d->h) continue; /* a padding row: contributes zero */
                const float *xrow = xg + (c * d->h + ih) * d->w;
                /* Four output channels per pass share each input load; the rest one by one. */
                for (int64_t k = k0; k < k1;) {
                    int nk = k + 4 <= k1 ? 4 : 1;
                    float *ys[4];
                    const float *taps[4];
                    for (int t = 0; t < nk; t++) {
                        ys[t] = yn + ((k + t) * P + p) * Q;
                        taps[t] = ctx->w + (((k + t) * cg + c) * d->r + r) * d->s;
                    }
                    fconv_direct_rows_strided(&ctx->axis, nk, ys, xrow, taps, 1, 0, Q);
                    k += nk;
                }
            }
        }
        /* The epilogue while the rows are in L1: bias (added last), then ReLU; whole rows had
         * theirs from the kernel. */
        const int finished = ctx->whole_rows && rows_inside;
        if (!finished)
            fconv_bias_relu_rows(yn + (k0 * P + p) * Q, (size_t)(P * Q), (size_t)(k1 - k0), Q,
                                 ctx->bias ? ctx->bias + k0 : NULL, d->activation == FCONV_ACTIVATION_RELU);
    }
}

/*
 * Long rows (stride 1, at least four output channels per group, more (c, r) rows than whole
 * rows take, the task's zero-padded rows of every channel of the group in the strip): a
 * task's output rows, as many as make FLAT_MIN_COLUMNS columns (one where a row has that
 * many), run as one long row.
 * Its input rows, zero-padded to W' = Q + (S-1)*dilation columns (padding rows zero too), lie
 * end to end in the thread's strip, so output column q of row p is long-row column p*W' + q
 * and every tap reads the strip at one offset from it; the W' - Q columns between the rows are
 * computed and dropped. The long row accumulates in the thread's scratch over all (c, r)
 * rows, 64 a call, and is copied into y once, bias and ReLU included. Row by row, a 7-column
 * row was one partial vector per call (8 x 512 x 7^2 -> 512 3x3: 94x the best algorithm), and
 * a 224-column one three calls per 64 (c, r) rows (interior and two edge strips), its partial
 * sums read back from y per call (64 x 224^2 -> 64 3x3: 25 ms, 12.2 as one long row each).
 */
#define FLAT_MIN_COLUMNS 192 /* a long row at least this long where the strip allows */
#define FLAT_OUT_FLOATS 4096 /* the buffer's long row, per channel */

int64_t fconv_direct_conv2d_flat_rows(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const int64_t width = strip_width(plan), cg = d->c / d->groups, halo = (d->r - 1) * d->dilation_h;
    if (d->stride_h != 1 || d->stride_w != 1 || d->k / d->groups < 4 || fconv_direct_conv2d_whole_rows(plan) ||
        fconv_direct_conv2d_pointwise(plan) || (double)cg * (double)width > 1e9)
        return 0;
    int64_t rows = (FLAT_MIN_COLUMNS + width - 1) / width;
    rows = fconv_direct_min(fconv_direct_min(rows, plan->out_h), WHOLE_STRIP_FLOATS / (cg * width) - halo);
    return rows >= 1 && rows * width <= FLAT_OUT_FLOATS ? rows : 0;
}

/* Output rows [p0, p1) of channels [k0, k1) as one long row each. */
static void flat_row_block(const struct conv2d_ctx *ctx, int64_t n, int64_t g, int64_t p0, int64_t p1, int64_t k0,
                           int64_t k1) {
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t P = ctx->plan->out_h, Q = ctx->plan->out_w, cg = d->c / d->groups, width = strip_width(ctx->plan);
    const int64_t span = (p1 - p0) + (d->r - 1) * d->dilation_h, top = p0 - d->pad_top;
    const int64_t length = (p1 - p0 - 1) * width + Q; /* the long row's columns */
    const float *xg = ctx->x + (n * d->c + g * cg) * d->h * d->w;
    float *yn = ctx->y + n * d->k * P * Q;
    float *whole_strip = thread_strip();
    float *flat_out = fconv_thread_scratch(FCONV_SCRATCH_DIRECT_FLAT, 4 * FLAT_OUT_FLOATS);
    if (!whole_strip || !flat_out) return;
    strip_ring.execute = 0; /* the strip no longer holds a ring */
    for (int64_t c = 0; c < cg; c++)
        for (int64_t i = 0; i < span; i++) {
            float *row = whole_strip + (c * span + i) * width;
            if (top + i >= 0 && top + i < d->h)
                fconv_copy_padded_row(row, width, xg + (c * d->h + top + i) * d->w, d->w, -d->pad_left);
            else
                fconv_zero_floats(row, width); /* a padding row: read by the long row's other rows */
        }
    for (int64_t k = k0; k < k1; k += 4) {
        const size_t nk = (size_t)fconv_direct_min(4, k1 - k);
        float *ys[4];
        for (size_t t = 0; t < nk; t++) ys[t] = flat_out + t * FLAT_OUT_FLOATS;
        const float *xs[ROWS_PER_CALL], *ts[ROWS_PER_CALL];
        size_t nrows = 0;
        int flags = 0;
        for (int64_t c = 0; c < cg; c++)
            for (int64_t r = 0; r < d->r; r++) {
                xs[nrows] = whole_strip + (c * span + r * d->dilation_h) * width;
                ts[nrows++] = ctx->w + ((k * cg + c) * d->r + r) * d->s;
                if (nrows == ROWS_PER_CALL || (c + 1 == cg && r + 1 == d->r)) {
                    ctx->plan->kernels->direct_rows(ys, nk, (size_t)length, xs, ts, 1, cg * d->r * d->s, nrows,
                                                    (size_t)d->s, (size_t)d->dilation_w, NULL, flags);
                    nrows = 0;
                    flags = FCONV_ROWS_ACCUMULATE;
                }
            }
        for (size_t t = 0; t < nk; t++)
            for (int64_t p = p0; p < p1; p++)
                memcpy(yn + ((k + (int64_t)t) * P + p) * Q, flat_out + t * FLAT_OUT_FLOATS + (p - p0) * width,
                       (size_t)Q * sizeof(float));
        for (int64_t p = p0; p < p1; p++)
            fconv_bias_relu_rows(yn + (k * P + p) * Q, (size_t)(P * Q), nk, Q, ctx->bias ? ctx->bias + k : NULL,
                                 d->activation == FCONV_ACTIVATION_RELU);
    }
}

/* i = (n * groups + g) * k_blocks + kb; j = the block of flat_rows output rows. */
static void flat_task(const void *vctx, size_t i, size_t j) {
    const struct conv2d_ctx *ctx = vctx;
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t kg = d->k / d->groups, kb = (int64_t)i % ctx->k_blocks, ng = (int64_t)i / ctx->k_blocks;
    const int64_t g = ng % d->groups, n = ng / d->groups;
    const int64_t k0 = g * kg + kb * ctx->k_block, k1 = fconv_direct_min(k0 + ctx->k_block, (g + 1) * kg);
    const int64_t p0 = (int64_t)j * ctx->flat_rows, p1 = fconv_direct_min(p0 + ctx->flat_rows, ctx->plan->out_h);
    flat_row_block(ctx, n, g, p0, p1, k0, k1);
}

/* Pointwise layers (1x1 kernels, stride 1, no padding): output pixel i of a plane reads input
 * pixel i of each channel's plane, so each plane is one row of H*W columns and the kernel runs
 * over chunks of it: 4 output channels x the chunk, summed over 64 input channels a call (their
 * chunks 48 KiB, in L1 for the next 4 channels), the chunk of y (3 KiB) staying in L1 across
 * the calls. Row by row, 56-column rows had kept direct 2.3-12x behind the best algorithm on
 * ResNet-50's 1x1 layers. A chunk is two of AVX-512's 6-vector blocks, eight of AVX2's; chunks
 * of equal width instead (a 196-column plane as 112 and 84, not 192 and 4) ran 8 x 1024 x 14^2
 * -> 512 12% slower: their partial blocks cost more than the short chunk. */
#define POINTWISE_CHUNK 192

int fconv_direct_conv2d_pointwise(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    return d->r == 1 && d->s == 1 && d->stride_h == 1 && d->stride_w == 1 && d->pad_top == 0 && d->pad_left == 0 &&
           d->pad_bottom == 0 && d->pad_right == 0;
}

/* i = (n * groups + g) * k_blocks + kb; j = the chunk of the plane. */
static void pointwise_task(const void *vctx, size_t i, size_t j) {
    const struct conv2d_ctx *ctx = vctx;
    const fconv_conv2d_desc *d = &ctx->plan->conv2d;
    const int64_t plane = d->h * d->w, cg = d->c / d->groups, kg = d->k / d->groups;
    const int64_t kb = (int64_t)i % ctx->k_blocks, ng = (int64_t)i / ctx->k_blocks;
    const int64_t g = ng % d->groups, n = ng / d->groups;
    const int64_t k0 = g * kg + kb * ctx->k_block, k1 = fconv_direct_min(k0 + ctx->k_block, (g + 1) * kg);
    const int64_t e0 = (int64_t)j * POINTWISE_CHUNK, cols = fconv_direct_min(POINTWISE_CHUNK, plane - e0);
    const float *xg = ctx->x + (n * d->c + g * cg) * plane + e0;
    float *yn = ctx->y + n * d->k * plane + e0;
    const int relu = d->activation == FCONV_ACTIVATION_RELU ? FCONV_ROWS_RELU : 0;
    for (int64_t k = k0; k < k1; k += 4) {
        const size_t nk = (size_t)fconv_direct_min(4, k1 - k);
        float *ys[4];
        for (size_t t = 0; t < nk; t++) ys[t] = yn + (k + (int64_t)t) * plane;
        for (int64_t c0 = 0; c0 < cg; c0 += ROWS_PER_CALL) {
            const int64_t c1 = fconv_direct_min(c0 + ROWS_PER_CALL, cg);
            const float *xs[ROWS_PER_CALL], *ts[ROWS_PER_CALL];
            for (int64_t c = c0; c < c1; c++) {
                xs[c - c0] = xg + c * plane;
                ts[c - c0] = ctx->w + k * cg + c;
            }
            const int last = c1 == cg; /* the bias and ReLU as the last call stores */
            /* a single call per chunk writes y once: streamed where y is far larger than the caches */
            ctx->plan->kernels->direct_rows(ys, nk, (size_t)cols, xs, ts, 1, cg, (size_t)(c1 - c0), 1, 1,
                                            last && ctx->bias ? ctx->bias + k : NULL,
                                            (c0 ? FCONV_ROWS_ACCUMULATE : 0) | (last ? relu : 0) |
                                                (c0 == 0 && last ? ctx->stream : 0));
        }
    }
    if (ctx->stream) fconv_stream_fence();
}

/* Whether every output row of this layer (stride 1 along rows) runs as one kernel call per
 * four output channels over all Q columns, from the task's strip of zero-padded input rows
 * (whole_row_block): the layer's (c, r) rows fit one call, the task's rows fit the thread's
 * strip, and the few-channel path does not take it. Otherwise the interior columns read the
 * input in place and the columns next to the padding go through small strips, each edge a
 * one-vector block whose four chains of multiply-adds wait on their latency; with few input
 * channels those edges and their strips were a third of the time. 2 threads, Zen 5,
 * alternated rounds, before -> after (with 64-channel tasks): 3 -> 64 on 224^2 1.20-1.50 ->
 * 0.54 ms, batch 8 7.6-8.8 -> 4.7-5.1, 3 -> 128 on 56^2 0.24 -> 0.10, 2 x 4 -> 64 5x5 on
 * 64^2 0.83 -> 0.31; 16 -> 32 on 112^2 (48 rows a call) unchanged. */
int fconv_direct_conv2d_whole_rows(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    return d->stride_w == 1 && d->k / d->groups >= 4 && d->c / d->groups * d->r <= ROWS_PER_CALL &&
           strip_fits(plan, whole_rows_span(d, fconv_direct_min(DIRECT_P_BLOCK, plan->out_h)));
}

int fconv_direct_conv2d_whole_rows_shifted(const fconv_plan *plan) {
    return fconv_direct_conv2d_whole_rows(plan) &&
           whole_rows_shifted(plan, whole_rows_span(&plan->conv2d, fconv_direct_min(DIRECT_P_BLOCK, plan->out_h)));
}

int fconv_direct_conv2d_strided_rows(const fconv_plan *plan) {
    return plan->conv2d.stride_w > 1 && strided_channels(plan, fconv_direct_min(DIRECT_P_BLOCK, plan->out_h)) > 0;
}

void fconv_direct_conv2d(const fconv_plan *plan, const float *x, const float *w, const float *bias,
                         float *y) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    int64_t kg = d->k / d->groups;
    /* the paths run below: pointwise, long rows, or conv2d_task's (strided, whole rows, rows) */
    const int pointwise = fconv_direct_conv2d_pointwise(plan);
    const int64_t flat = fconv_direct_conv2d_flat_rows(plan);
    const int whole = !pointwise && fconv_direct_conv2d_whole_rows(plan), strided = fconv_direct_conv2d_strided_rows(plan);
    const int64_t k_block = whole || strided || pointwise || flat ? DIRECT_K_BLOCK_WHOLE_ROWS : DIRECT_K_BLOCK;
    /* Pointwise output streamed past the last-level cache only, where one call per chunk
     * writes it: 1 x 3 x 224^2 -> 64 (12.8 MB) ran 0.15 ms with plain stores and 0.39
     * streamed, 8 x 1 x 224^2 -> 64 (103 MB) 3.97 and 2.89. */
    const double y_bytes = (double)plan->y_elems * sizeof(float);
    const int stream = pointwise ? d->c / d->groups <= ROWS_PER_CALL && y_bytes > FCONV_LLC_BYTES
                                 : whole && y_bytes >= FCONV_STREAM_OUTPUT_BYTES;
    struct conv2d_ctx ctx = {
        .plan = plan, .x = x, .w = w, .bias = d->has_bias ? bias : NULL, .y = y,
        .k_block = k_block,
        .k_blocks = (kg + k_block - 1) / k_block,
        .whole_rows = whole,
        .strided = strided,
        .flat_rows = flat,
        .stream = stream ? FCONV_ROWS_STREAM : 0,
        .few_stream = !d->has_bias && d->activation == FCONV_ACTIVATION_NONE &&
                              (double)(plan->x_elems + plan->y_elems) * sizeof(float) > FCONV_CACHED_BYTES
                          ? FCONV_ROWS_STREAM : 0,
        .p_blocks = (plan->out_h + DIRECT_P_BLOCK - 1) / DIRECT_P_BLOCK,
        .axis = {.taps = d->s, .stride = d->stride_w, .pad = d->pad_left,
                 .dilation = d->dilation_w, .in_w = d->w},
        .execute = atomic_fetch_add_explicit(&executes, 1, memory_order_relaxed) + 1,
    };
    /* Each path: each thread's share of the tasks, then what the other has not begun: the VM's
     * vCPUs can run at unequal speeds for minutes (docs/algorithms/direct.md). */
    if (pointwise) {
        fconv_parallel_2d_steal(plan->threads, (size_t)(d->n * d->groups * ctx.k_blocks),
                                (size_t)((d->h * d->w + POINTWISE_CHUNK - 1) / POINTWISE_CHUNK), pointwise_task, &ctx);
        return;
    }
    if (flat) {
        fconv_parallel_2d_steal(plan->threads, (size_t)(d->n * d->groups * ctx.k_blocks),
                                (size_t)((plan->out_h + flat - 1) / flat), flat_task, &ctx);
        return;
    }
    fconv_parallel_2d_steal(plan->threads, (size_t)(d->n * d->groups * ctx.k_blocks), (size_t)ctx.p_blocks,
                            conv2d_task, &ctx);
}
