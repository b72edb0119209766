/*
 * direct.c — the direct algorithm's table entry: the definition computed with vectorizable
 * row loops (direct.h), borders handled in place. Serves every problem with no workspace
 * and no plan-time state, so plan-time and execute-time weights run the same code; each
 * output's summation order is fixed by its position, so any thread count gives the same bits.
 */
#include "algo/direct.h"
#include "core/cost-model.h"

static fconv_status direct_supports(const fconv_plan *plan, char *why, size_t why_len) {
    (void)plan;
    (void)why;
    (void)why_len;
    return FCONV_OK;
}

static size_t direct_workspace(const fconv_plan *plan) {
    (void)plan;
    return 0;
}

/*
 * Seconds: multiply-adds over the rate the row loops reach, plus a fixed cost per row
 * correlation (tap ranges, loop set-up: about 7 ns), over the threads that have work.
 * Fitted on the 2-core Zen 5 VM: the scalar/auto-vectorized rates to single-thread CPU times
 * (docs/algorithms/direct.md), the SIMD filter rates to docs/algorithms.md's table. The
 * rate depends on how many multiply-adds each load feeds: taps fused per pass (kernel width)
 * and, for conv2d, four output channels per pass.
 */
static double direct_cost(const fconv_plan *plan) {
    double macs = fconv_plan_macs(plan), rate, rows, tasks, border = 0.0;
    if (plan->kind == FCONV_KIND_CONV2D) {
        const fconv_conv2d_desc *d = &plan->conv2d;
        int64_t kg = d->k / d->groups;
        double channels_per_setup = 1.0; /* output channels sharing one row set-up */
        const int pointwise = fconv_direct_conv2d_pointwise(plan);
        const int64_t flat = fconv_direct_conv2d_flat_rows(plan);
        if (flat && fconv_plan_isa(plan) >= FCONV_ISA_AVX2) {
            /* A task's rows as one long row of L columns (direct-conv2d.c): measured per thread
             * (2 threads, Zen 5, AVX-512) 60-68 G/s on 224^2, 56^2 and 28^2 maps, 43-51 on 14^2,
             * 31 on 7^2 (63 columns); at the GEMM family's scale, as pointwise below
             * (implicit-gemm ran 64 -> 64 on 56^2 1.7x faster, Winograd 4x). */
            const double cols = (double)((flat - 1) * (plan->out_w + (d->s - 1) * d->dilation_w) + plan->out_w);
            rate = (fconv_plan_isa(plan) >= FCONV_ISA_AVX512 ? 36e9 : 20e9) * cols / (cols + 64.0);
        } else if (pointwise && fconv_plan_isa(plan) >= FCONV_ISA_AVX2) {
            /* Each plane one row, in chunks of 192 columns (direct-conv2d.c): measured per thread
             * (2 threads, Zen 5, AVX-512) 61-67 G/s on 56^2 planes, 45-56 on 28^2 and 14^2, 23 on
             * 7^2 (49 columns: four vectors, one of a single lane). Read here at the scale the
             * GEMM family's estimates read their measured times (1.5-1.9x on this VM: im2col and
             * implicit-gemm run these layers in about half direct's time, and must stay ahead). */
            const double cols = (double)(d->h * d->w);
            rate = (fconv_plan_isa(plan) >= FCONV_ISA_AVX512 ? 36e9 : 20e9) * cols / (cols + 48.0);
        } else if (d->stride_w != 1 && fconv_plan_isa(plan) >= FCONV_ISA_AVX2 && fconv_direct_conv2d_strided_rows(plan)) {
            /* Phase-split strips through the SIMD kernel (direct-conv2d.c), four output channels
             * a call: the rate grows with the row's columns and with the taps of each residue;
             * where all (c, r) rows of a residue fit one call the output is read back once per
             * residue only. Measured per thread (2 threads, Zen 5, AVX-512): 3 -> 64 7x7/2 on
             * 224^2 (112 columns, 21 rows a call) 70 G/s; 64 -> 128 and 128 -> 128 3x3/2 on
             * 56^2 (28 columns) 15-16.5; 256 -> 512 1x1/2 on 28^2 (14 columns, one tap) 6. */
            const double cols = (double)plan->out_w, taps = (double)((d->s + d->stride_w - 1) / d->stride_w);
            rate = ((d->c / d->groups) * d->r <= 64 ? 80e9 : 25e9) * cols / (cols + 16.0) * (taps >= 2.0 ? 1.0 : 0.5);
            if (fconv_plan_isa(plan) < FCONV_ISA_AVX512) rate *= 0.6;
            /* one call per four channels, residue and 64 (c, r) rows */
            const int64_t rows_cr = (d->c / d->groups) * d->r;
            channels_per_setup = 4.0 * (double)rows_cr / (double)(((rows_cr + 63) / 64) * d->stride_w);
        } else if (d->stride_w != 1)
            rate = 3e9; /* strided loads, one tap per pass */
        else if (d->s == 1)
            rate = kg >= 4 ? 6e9 : 3e9;
        else if (fconv_plan_isa(plan) >= FCONV_ISA_AVX2 && fconv_direct_conv2d_whole_rows(plan)) {
            /* Whole rows from a task's strip, up to 64 output channels sharing it: measured on
             * the Zen 5 VM (2 threads, 3 -> 64 on 224^2, 3 -> 16 on 512^2, 4 -> 32 on 128^2) at
             * 63-82 G/s per thread with AVX-512, 48 with AVX2. The other rates here and the
             * other algorithms' were fitted on the Zen 4 VM, whose AVX-512 FMAs run at half
             * Zen 5's rate; set against those algorithms' estimates as the measured times
             * compare on Zen 5 (direct 0.54 ms, winograd-4x4 0.89, im2col 0.90 on 3 -> 64;
             * their estimates 1.0 and 1.05 ms), these read 65 and 45 G/s. From shifted copies
             * (Intel, every load aligned) the Ice Lake VM ran 3 -> 64 on 224^2 1.12-1.18x faster
             * than winograd-rows (batch 1 and 8, 112^2; 2 threads, and one), whose estimate is
             * 0.78x this one's at 65 G/s: read at 100 G/s there. */
            rate = fconv_plan_isa(plan) >= FCONV_ISA_AVX512 ? (fconv_direct_conv2d_whole_rows_shifted(plan) ? 100e9 : 65e9)
                                                            : 45e9;
            channels_per_setup = 4.0;
        } else if (fconv_plan_isa(plan) >= FCONV_ISA_AVX2 && (d->c / d->groups) * d->r <= 64) {
            /* Few channels: every (c, r) row of an output row in one SIMD kernel call for
             * four output channels, the output read and written once. Measured (2 threads,
             * AVX2): 3->1 channels 1024² 3x3 1.03 ms (~14 G/s per thread), 3->16 512², 3->64
             * 224² and 8->8 256² 5x5 ~20-23 G/s; AVX-512 (Zen 4, one thread) 3->64 224² 32. */
            /* Fewer than four output channels through the filter2d kernel (direct-conv2d.c),
             * AVX-512, 2 threads: 3->1 1024² 5x5 1.3 ms (~30 G/s per thread), 3x3 0.72 (~20:
             * the memory traffic's). */
            const int avx512 = fconv_plan_isa(plan) >= FCONV_ISA_AVX512;
            rate = kg >= 4 ? (avx512 ? 32e9 : 22e9) : avx512 ? 28e9 : 14e9;
            channels_per_setup = 4.0; /* one row set-up per call, four channels per call */
        } else {
            rate = kg >= 4 ? 10e9 : 5e9;
        }
        if (flat) /* one call per four channels, block of rows and 64 (c, r) rows */
            rows = (double)d->n * (double)((d->k + 3) / 4) * (double)((plan->out_h + flat - 1) / flat) *
                   (double)(((d->c / d->groups) * d->r + 63) / 64);
        else if (pointwise) /* one call per four channels, chunk and 64 input channels */
            rows = (double)d->n * (double)((d->k + 3) / 4) * (double)((d->h * d->w + 191) / 192) *
                   (double)((d->c / d->groups + 63) / 64);
        else
            rows = (double)d->n * (double)d->k * (double)plan->out_h * (double)(d->c / d->groups) *
                   (double)d->r / channels_per_setup;
        tasks = (double)d->n * (double)d->groups * (double)((kg + 7) / 8) *
                (double)((plan->out_h + 3) / 4);
    } else {
        const fconv_filter2d_desc *f = &plan->filter;
        const int64_t band = fconv_direct_filter_band_rows(plan);
        /* The SIMD row kernel (AVX2+FMA) keeps every tap in registers: ~18 G multiply-adds/s
         * per thread from 5 taps wide, ~11 G for 3; the scalar build reaches the
         * auto-vectorized rates. Kernels 3+ rows tall run 4 output rows per step
         * (direct-filter.c), one load per input row. */
        if (fconv_plan_isa(plan) >= FCONV_ISA_AVX512 && f->kh >= 3) {
            /* AVX-512's 4 x 6 accumulators, measured one thread (Zen 4 VM, min of 10,
             * 1024² and 2048²): 3x3 17-25 G/s, 5x5 29-35 G/s, 7x7-11x11 33-39 G, 15x15
             * 40-45 G. 3x3 at Zen 5's 24-30 G per thread (2 threads, 1024² and 2048², gray
             * and RGB), where separable competes for rank-1 kernels
             * (docs/algorithms/separable.md). 7x7 at 42.5: set against fft-cols' estimate,
             * which reads its Zen 5 times 1.27-1.43x high where this one read 1.5-1.65x, and
             * direct ran 2048^2 7x7 in 1.67-1.79 ms against fft-cols' 1.79-2.00 (9-11
             * alternated rounds, 2 threads) while AUTO took fft-cols; 9x9 and up stay on
             * fft-cols. */
            rate = f->kw >= 13 ? 42e9 : f->kw >= 9 ? 37e9 : f->kw >= 7 ? 42.5e9 : f->kw >= 5 ? 31e9 :
                   f->kw >= 3 ? 30e9 : 15e9;
            /* The rate grows with the row (edges, the row's last vectors and each call's
             * set-up spread over more columns): ~67 G/s per thread x L / (L + 330) for rows of
             * L floats on Zen 5 (7x7, 2 threads: gray 512^2 41, 1024^2 49, 2048^2 58; RGB,
             * whose interleaved rows are 3W floats, 256^2 50, 512^2 55, 1024^2 58). The rates
             * above as they stand at 1024 floats: RGB 512^2 7x7 ran 0.35 ms on direct against
             * fft-cols' 0.51 where AUTO had taken fft-cols, and gray 512^2 7x7 0.156 against
             * 0.134. */
            const double l = (double)plan->out_w * (double)f->channels;
            double row_factor = (l / (l + 330.0)) / (1024.0 / (1024.0 + 330.0));
            /* Sliding bands (direct-filter.c) set up per strip of 32 rows, not per row: on the
             * Ice Lake VM (2 threads) they ran 7x7 at ~32 G multiply-adds/s per thread from
             * 512^2 to 2048^2 alike (0.20, 0.82, 3.2 ms), where four-row blocks had fallen to
             * 21 G at 512^2; so short rows cost them nothing (512^2 7x7 0.201 ms against
             * fft-cols' 0.238, RGB 256^2 7x7 0.141 against 0.177, where AUTO took fft-cols). */
            if (band > 4 && row_factor < 1.0) row_factor = 1.0;
            rate *= row_factor;
        } else if (fconv_plan_isa(plan) >= FCONV_ISA_AVX2 && f->kh >= 3) {
            /* The multi-row kernel, more multiply-adds per load as the kernel widens:
             * measured per thread (2 threads) 1024² 5x5 ~23 G/s, 2048² 7x7 ~28 G, 11x11
             * ~32 G, 1024² 15x15 and the seed-004 RGB 15x15 ~35-38 G; 3x3 ~13 G (Zen 4). */
            rate = f->kw >= 13 ? 36e9 : f->kw >= 9 ? 31e9 : f->kw >= 7 ? 27e9 : f->kw >= 5 ? 22e9 :
                   f->kw >= 3 ? 13e9 : 11e9;
        } else if (fconv_plan_isa(plan) >= FCONV_ISA_AVX512) {
            rate = f->kw >= 5 ? 24e9 : f->kw >= 3 ? 15e9 : 6e9; /* 1024² 3x3: 20 G/s, 2048²: 12 */
        } else if (fconv_plan_isa(plan) >= FCONV_ISA_AVX2) {
            rate = f->kw >= 5 ? 18e9 : f->kw >= 3 ? 11e9 : 5e9;
        } else {
            rate = f->kw >= 5 ? 10e9 : f->kw >= 3 ? 7e9 : 4e9;
        }
        rows = (double)plan->out_h * (double)f->kh;
        tasks = (double)((plan->out_h + band - 1) / band) * (double)((plan->out_w * f->channels + 4095) / 4096);
        /* The edge columns' strips (direct-filter.c): per task of `band` output rows and side,
         * (kh + band - 1) rows of ~1.5 kw samples, ~0.7 ns each since the rows' inside columns
         * are one copy (512^2 7x7, one thread, Ice Lake: the strips 12% -> 5.5% of the time,
         * ~17 us, where a sample at a time through the border rule had cost ~2 ns). */
        border = (double)plan->out_h * (double)(f->kh + band - 1) / (double)band * 2.0 * 1.5 * (double)f->kw *
                 (double)f->channels * 0.7e-9;
    }
    double threads = (double)plan->threads < tasks ? (double)plan->threads : tasks;
    if (threads < 1.0) threads = 1.0;
    /* Opening a parallel region costs ~3 us; a single task runs in the caller without one
     * (1D 10^3 x 3: 0.4 us measured, where the region's cost had AUTO pick im2col, 5 us). */
    return (macs / rate + rows * 7e-9 + border) / threads + (threads > 1.0 ? FCONV_PARALLEL_REGION_SECONDS : 0.0);
}

static void direct_execute(const fconv_plan *plan, const float *x, const float *w, const float *bias,
                           float *y, void *workspace) {
    (void)workspace;
    if (plan->kind == FCONV_KIND_CONV2D)
        fconv_direct_conv2d(plan, x, w, bias, y);
    else
        fconv_direct_filter(plan, x, w, y);
}

const struct fconv_algorithm fconv_algorithm_direct = {
    .id = FCONV_ALGO_DIRECT,
    .name = "direct",
    .summary = "direct loops, vectorized rows, borders in place: no workspace",
    .serves = FCONV_SERVES_CONV2D | FCONV_SERVES_FILTER2D | FCONV_SERVES_CONV1D,
    .error_bound = 2e-6,
    .supports = direct_supports,
    .workspace = direct_workspace,
    .cost = direct_cost,
    .execute = direct_execute,
};
