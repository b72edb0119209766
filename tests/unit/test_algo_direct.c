/*
 * test_algo_direct.c — the direct algorithm on the shapes the generic random test rarely
 * reaches: rows wider than one task's chunk (4096 outputs) with every border, sliding bands
 * of tall images, long 1D
 * signals, kernels wider than the image, output-channel counts around the 4-channel
 * blocking, dilation with stride, strided rows, pointwise layers, rows as long rows, the
 * few-channel path's bits, and that it never asks for a workspace.
 */
#include <stdint.h>
#include <string.h>

#include "fastconv.h"
#include "ref/conv-ref.h"
#include "test-cpu.h"
#include "test.h"

#define DIRECT_BOUND 2e-6

/* Run plan (direct, weights at plan time) and compare with the reference; then check that
 * two threads with execute-time weights give the same bits. */
static void check_plan(fconv_plan *plan, fconv_plan *plan2, const float *x, const float *w,
                       const float *bias, const char *what) {
    CHECKF(fconv_plan_algo(plan) == FCONV_ALGO_DIRECT, "%s: not direct", what);
    CHECKF(fconv_plan_workspace_size(plan) == 0, "%s: direct asked for a workspace", what);
    int64_t ny = fconv_plan_output_elements(plan);
    float *y1 = malloc((size_t)ny * sizeof *y1), *y2 = malloc((size_t)ny * sizeof *y2);
    CHECK(fconv_execute_with_workspace(plan, x, NULL, NULL, y1, NULL, 0) == FCONV_OK);
    CHECK(fconv_execute_with_workspace(plan2, x, w, bias, y2, NULL, 0) == FCONV_OK);
    double norm = fconv_ref_normalized_error(plan, x, w, bias, y1, 1, NULL);
    CHECKF(norm <= DIRECT_BOUND, "%s: normalized error %.3g", what, norm);
    CHECKF(memcmp(y1, y2, (size_t)ny * sizeof *y1) == 0, "%s: 1 and 2 threads differ", what);
    free(y1);
    free(y2);
}

static float *random_array(int64_t n) {
    float *p = malloc((size_t)n * sizeof *p);
    test_fill_random(p, (size_t)n);
    return p;
}

static void filter_case(int64_t h, int64_t w, int64_t ch, int64_t kh, int64_t kw, fconv_mode mode,
                        fconv_border border, int correlate) {
    fconv_filter2d_desc d = {.h = h, .w = w, .channels = ch, .kh = kh, .kw = kw, .mode = mode,
                             .border = border, .border_value = 0.75f, .correlate = correlate};
    char what[160];
    snprintf(what, sizeof what, "filter %lldx%lldx%lld kernel %lldx%lld mode %d border %d corr %d",
             (long long)h, (long long)w, (long long)ch, (long long)kh, (long long)kw, (int)mode,
             (int)border, correlate);
    float *x = random_array(h * w * ch), *k = random_array(kh * kw);
    fconv_plan *p1, *p2;
    CHECKF(fconv_plan_filter2d(&d, &(fconv_options){.algo = FCONV_ALGO_DIRECT, .threads = 1}, k, &p1) ==
               FCONV_OK, "%s: %s", what, fconv_last_error());
    CHECKF(fconv_plan_filter2d(&d, &(fconv_options){.algo = FCONV_ALGO_DIRECT, .threads = 2}, NULL, &p2) ==
               FCONV_OK, "%s: %s", what, fconv_last_error());
    check_plan(p1, p2, x, k, NULL, what);
    fconv_plan_destroy(p1);
    fconv_plan_destroy(p2);
    free(x);
    free(k);
}

/* Rows of more than one 4096-float chunk: chunk edges inside the interior and inside the
 * border columns, for every border. */
static void test_wide_rows(void) {
    for (int b = 0; b <= 5; b++) {
        filter_case(3, 4100, 1, 3, 5, FCONV_MODE_SAME, (fconv_border)b, b & 1);
        filter_case(2, 1400, 3, 2, 4, FCONV_MODE_FULL, (fconv_border)b, 0);
    }
    filter_case(1, 5000, 1, 1, 9, FCONV_MODE_VALID, FCONV_BORDER_REFLECT, 1);
}

/* Sliding bands (kernels 4..8 rows on the SIMD ISAs): images tall enough for bands of more
 * than four rows on two threads, every border and mode, widths at and off a power of two
 * (rows 4 KiB apart and not), interleaved channels, the taller and shorter kernels beside
 * them, and one output past the band's 8 MB streaming size. */
static void sliding_band_cases(void) {
    for (int64_t kh = 3; kh <= 9; kh++) {
        const int b = (int)(kh % 6);
        filter_case(70 + kh, 256, 1, kh, kh, FCONV_MODE_SAME, (fconv_border)b, (int)(kh & 1));
        filter_case(61, 101 + kh, kh == 5 ? 3 : 1, kh, 9 - kh / 2, FCONV_MODE_FULL, (fconv_border)((b + 1) % 6), 0);
        filter_case(90, 77, 1, kh, kh + 1, FCONV_MODE_VALID, FCONV_BORDER_ZERO, 1);
    }
    for (int b = 0; b <= 5; b++) filter_case(120, 64, 3, 5, 5, FCONV_MODE_SAME, (fconv_border)b, b & 1);
    filter_case(1024, 2048, 1, 7, 7, FCONV_MODE_SAME, FCONV_BORDER_REFLECT, 0);
}

/* cases() with split loads (and 512-bit loads) taken as fast and as slow, whatever this
 * machine's are. */
static void with_split_loads_both_ways(void (*cases)(void)) {
    fconv_cpu_info *cpu = test_cpu_figures();
    const int saved = cpu->split_loads_slow, saved_wide = cpu->wide_loads_slow;
    for (int slow = 0; slow <= 1; slow++) {
        cpu->split_loads_slow = cpu->wide_loads_slow = slow;
        cases();
    }
    cpu->split_loads_slow = saved;
    cpu->wide_loads_slow = saved_wide;
}

/* The bands run where split loads are slow (Intel): both ways on any machine. */
static void test_sliding_bands(void) { with_split_loads_both_ways(sliding_band_cases); }

/* Kernels wider/taller than the image: no interior at all, every column through the edges. */
static void test_kernel_larger_than_image(void) {
    for (int b = 0; b <= 5; b++) {
        filter_case(3, 2, 2, 7, 9, FCONV_MODE_FULL, (fconv_border)b, 0);
        filter_case(1, 1, 1, 5, 6, FCONV_MODE_SAME, (fconv_border)b, 1);
    }
}

static void conv1d_case(int64_t n, int64_t m, fconv_mode mode, int correlate) {
    fconv_conv1d_desc d = {.n = n, .m = m, .mode = mode, .correlate = correlate};
    char what[96];
    snprintf(what, sizeof what, "conv1d n%lld m%lld mode %d corr %d", (long long)n, (long long)m,
             (int)mode, correlate);
    float *x = random_array(n), *k = random_array(m);
    fconv_plan *p1, *p2;
    CHECKF(fconv_plan_conv1d(&d, &(fconv_options){.algo = FCONV_ALGO_DIRECT, .threads = 1}, k, &p1) ==
               FCONV_OK, "%s: %s", what, fconv_last_error());
    CHECKF(fconv_plan_conv1d(&d, &(fconv_options){.algo = FCONV_ALGO_DIRECT, .threads = 2}, NULL, &p2) ==
               FCONV_OK, "%s: %s", what, fconv_last_error());
    check_plan(p1, p2, x, k, NULL, what);
    fconv_plan_destroy(p1);
    fconv_plan_destroy(p2);
    free(x);
    free(k);
}

static void test_conv1d(void) {
    conv1d_case(20000, 33, FCONV_MODE_FULL, 0);
    conv1d_case(8193, 4096, FCONV_MODE_SAME, 1);
    conv1d_case(3, 11, FCONV_MODE_FULL, 0);
    conv1d_case(4097, 4097, FCONV_MODE_VALID, 1);
}

static void conv2d_case(fconv_conv2d_desc d) {
    char what[160];
    snprintf(what, sizeof what, "conv2d c%lld k%lld %lldx%lld r%lld s%lld stride %lld dil %lld groups %lld",
             (long long)d.c, (long long)d.k, (long long)d.h, (long long)d.w, (long long)d.r,
             (long long)d.s, (long long)d.stride_w, (long long)d.dilation_w, (long long)d.groups);
    int64_t g = d.groups ? d.groups : 1;
    float *x = random_array((d.n ? d.n : 1) * d.c * d.h * d.w), *w = random_array(d.k * d.c / g * d.r * d.s);
    float *bias = d.has_bias ? random_array(d.k) : NULL;
    fconv_plan *p1, *p2;
    CHECKF(fconv_plan_conv2d(&d, &(fconv_options){.algo = FCONV_ALGO_DIRECT, .threads = 1}, w, bias, &p1) ==
               FCONV_OK, "%s: %s", what, fconv_last_error());
    CHECKF(fconv_plan_conv2d(&d, &(fconv_options){.algo = FCONV_ALGO_DIRECT, .threads = 2}, NULL, NULL,
                             &p2) == FCONV_OK, "%s: %s", what, fconv_last_error());
    check_plan(p1, p2, x, w, bias, what);
    fconv_plan_destroy(p1);
    fconv_plan_destroy(p2);
    free(x);
    free(w);
    free(bias);
}

/* K around the 4-channel passes and 8-channel task blocks; taps in groups of 4 and more;
 * dilation and stride together; padding wider than the kernel's reach. */
static void test_conv2d_blocking(void) {
    for (int64_t k = 1; k <= 13; k += 3)
        conv2d_case((fconv_conv2d_desc){.n = 2, .c = 3, .h = 9, .w = 21, .k = k, .r = 3, .s = 7,
                                        .pad_top = 2, .pad_left = 3, .pad_bottom = 1, .pad_right = 4,
                                        .has_bias = 1, .activation = FCONV_ACTIVATION_RELU});
    conv2d_case((fconv_conv2d_desc){.c = 4, .h = 17, .w = 19, .k = 8, .r = 3, .s = 5, .stride_h = 2,
                                    .stride_w = 3, .dilation_h = 2, .dilation_w = 2, .pad_top = 3,
                                    .pad_left = 5, .pad_bottom = 0, .pad_right = 6});
    conv2d_case((fconv_conv2d_desc){.c = 6, .h = 8, .w = 8, .k = 12, .r = 2, .s = 9, .dilation_w = 3,
                                    .pad_left = 9, .pad_right = 9, .groups = 2});
    conv2d_case((fconv_conv2d_desc){.c = 5, .h = 30, .w = 31, .k = 10, .r = 3, .s = 3, .pad_top = 1,
                                    .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .groups = 5,
                                    .has_bias = 1});
}

/* Layers whose output rows run whole from a task's strip of zero-padded input rows
 * (direct-conv2d.c's whole_rows: few input channels, stride 1 along rows): more output
 * channels than one 64-channel task block with a remainder of two, batch, bias and ReLU;
 * stride and dilation down the columns with dilation along them and asymmetric padding;
 * output rows whose kernel rows all lie in the padding; groups; and rows as wide as the
 * thread's strip holds (3 channels x 6 rows of 3640 floats: 3638 columns) and one past it
 * (the edge-strip path). Where split and 512-bit loads are slow the narrower ones read shifted
 * copies of their rows (whole_rows_shifted): both ways on any machine. */
static void whole_rows_cases(void) {
    conv2d_case((fconv_conv2d_desc){.n = 2, .c = 3, .h = 40, .w = 37, .k = 70, .r = 3, .s = 3, .pad_top = 1,
                                    .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .has_bias = 1,
                                    .activation = FCONV_ACTIVATION_RELU});
    conv2d_case((fconv_conv2d_desc){.c = 2, .h = 23, .w = 29, .k = 6, .r = 3, .s = 4, .stride_h = 2,
                                    .dilation_h = 2, .dilation_w = 3, .pad_top = 0, .pad_left = 4,
                                    .pad_bottom = 5, .pad_right = 2});
    conv2d_case((fconv_conv2d_desc){.c = 1, .h = 6, .w = 20, .k = 4, .r = 3, .s = 3, .pad_top = 5,
                                    .pad_left = 1, .pad_bottom = 5, .pad_right = 1, .has_bias = 1});
    conv2d_case((fconv_conv2d_desc){.c = 6, .h = 11, .w = 50, .k = 8, .r = 3, .s = 3, .pad_top = 1,
                                    .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .groups = 2});
    for (int64_t w = 3638; w <= 3639; w++)
        conv2d_case((fconv_conv2d_desc){.c = 3, .h = 5, .w = w, .k = 4, .r = 3, .s = 3, .pad_top = 1,
                                        .pad_left = 1, .pad_bottom = 1, .pad_right = 1});
    /* outputs of 8 MiB and more, streamed: every channel's rows at one alignment (128^2, with
     * the kernel's bias and ReLU; test_kernels_direct streams rows without them), and not
     * (129 x 131: a channel's plane an odd number of floats) */
    conv2d_case((fconv_conv2d_desc){.n = 2, .c = 3, .h = 128, .w = 128, .k = 64, .r = 3, .s = 3, .pad_top = 1,
                                    .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .has_bias = 1,
                                    .activation = FCONV_ACTIVATION_RELU});
    conv2d_case((fconv_conv2d_desc){.n = 2, .c = 3, .h = 129, .w = 131, .k = 66, .r = 3, .s = 3, .pad_top = 1,
                                    .pad_left = 1, .pad_bottom = 1, .pad_right = 1});
}

static void test_whole_rows(void) { with_split_loads_both_ways(whole_rows_cases); }

/* Strided rows (direct-conv2d.c's strided_row_block: phase-split strips through the SIMD
 * kernel): a 7x7/2 stem with bias and ReLU over more output channels than one 64-channel
 * block; stride coprime to the dilation (3 and 2: one residue per tap column) and sharing a
 * factor with it (2 and 2: every tap in one phase; 4 and 6: two residues, taps 2 phase
 * columns apart); more (c, r) rows than one kernel call takes; more input channels than the
 * strip holds at once (40 channels of 400-wide rows: two chunks); output rows whose kernel
 * rows all lie in the padding; 1x1 at stride 2; groups; a kernel wider than the padded row
 * reaches with one stride; and rows too wide for even one channel's phases (the scalar
 * loop). */
static void test_strided_rows(void) {
    conv2d_case((fconv_conv2d_desc){.n = 2, .c = 3, .h = 29, .w = 31, .k = 70, .r = 7, .s = 7, .stride_h = 2,
                                    .stride_w = 2, .pad_top = 3, .pad_left = 3, .pad_bottom = 3, .pad_right = 3,
                                    .has_bias = 1, .activation = FCONV_ACTIVATION_RELU});
    conv2d_case((fconv_conv2d_desc){.c = 5, .h = 13, .w = 40, .k = 6, .r = 3, .s = 5, .stride_w = 3,
                                    .dilation_w = 2, .pad_left = 4, .pad_right = 1});
    conv2d_case((fconv_conv2d_desc){.c = 4, .h = 9, .w = 33, .k = 5, .r = 2, .s = 4, .stride_h = 3, .stride_w = 2,
                                    .dilation_w = 2, .pad_top = 2, .pad_left = 5, .pad_bottom = 1, .pad_right = 2,
                                    .has_bias = 1});
    conv2d_case((fconv_conv2d_desc){.c = 3, .h = 10, .w = 57, .k = 9, .r = 3, .s = 5, .stride_w = 4,
                                    .dilation_w = 6, .pad_left = 7, .pad_right = 7});
    conv2d_case((fconv_conv2d_desc){.c = 30, .h = 12, .w = 21, .k = 12, .r = 3, .s = 3, .stride_h = 2,
                                    .stride_w = 2, .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1,
                                    .activation = FCONV_ACTIVATION_RELU});
    conv2d_case((fconv_conv2d_desc){.c = 40, .h = 9, .w = 400, .k = 4, .r = 3, .s = 3, .stride_w = 2,
                                    .pad_left = 1, .pad_right = 1});
    conv2d_case((fconv_conv2d_desc){.c = 2, .h = 4, .w = 16, .k = 4, .r = 3, .s = 3, .stride_h = 2,
                                    .stride_w = 2, .pad_top = 6, .pad_left = 1, .pad_bottom = 6, .pad_right = 1,
                                    .has_bias = 1});
    conv2d_case((fconv_conv2d_desc){.c = 16, .h = 14, .w = 14, .k = 8, .r = 1, .s = 1, .stride_h = 2,
                                    .stride_w = 2});
    conv2d_case((fconv_conv2d_desc){.c = 8, .h = 11, .w = 12, .k = 8, .r = 3, .s = 3, .stride_w = 2,
                                    .pad_left = 1, .pad_right = 1, .groups = 4, .has_bias = 1});
    conv2d_case((fconv_conv2d_desc){.c = 2, .h = 3, .w = 3, .k = 4, .r = 2, .s = 9, .stride_w = 5,
                                    .pad_left = 4, .pad_right = 4});
    conv2d_case((fconv_conv2d_desc){.c = 1, .h = 3, .w = 40000, .k = 4, .r = 3, .s = 3, .stride_w = 2,
                                    .pad_left = 1, .pad_right = 1});
}

/* Long rows (direct-conv2d.c's flat_row_block: a task's output rows as one long row over the
 * strip's zero-padded rows; every case has more (c, r) rows than whole rows take): a 7x7 map
 * with more (c, r) rows than one call, output channels
 * around the 4-channel passes, bias and ReLU, batch; dilation both ways with asymmetric padding
 * and groups; padding rows taller than the kernel's reach (whole output rows from padding
 * only); channels enough that the strip bounds the rows per task (600 channels of 12-wide
 * rows: 7 of 10); a 300-column row (one output row a long row), and one whose channels' rows
 * do not fit the strip (the row paths). */
static void test_flat_rows(void) {
    conv2d_case((fconv_conv2d_desc){.n = 2, .c = 40, .h = 7, .w = 7, .k = 10, .r = 3, .s = 3, .pad_top = 1,
                                    .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .has_bias = 1,
                                    .activation = FCONV_ACTIVATION_RELU});
    conv2d_case((fconv_conv2d_desc){.c = 72, .h = 11, .w = 9, .k = 12, .r = 3, .s = 2, .dilation_h = 2,
                                    .dilation_w = 3, .pad_top = 3, .pad_left = 0, .pad_bottom = 1, .pad_right = 4,
                                    .groups = 3});
    conv2d_case((fconv_conv2d_desc){.c = 30, .h = 3, .w = 5, .k = 4, .r = 3, .s = 3, .pad_top = 4, .pad_left = 1,
                                    .pad_bottom = 4, .pad_right = 1, .has_bias = 1});
    conv2d_case((fconv_conv2d_desc){.c = 600, .h = 10, .w = 10, .k = 5, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1,
                                    .pad_bottom = 1, .pad_right = 1});
    conv2d_case((fconv_conv2d_desc){.c = 24, .h = 5, .w = 300, .k = 6, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1,
                                    .pad_bottom = 1, .pad_right = 1, .has_bias = 1});
    conv2d_case((fconv_conv2d_desc){.c = 300, .h = 3, .w = 300, .k = 4, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1,
                                    .pad_bottom = 1, .pad_right = 1});
}

/* Pointwise layers (direct-conv2d.c's pointwise_task: 1x1, stride 1, no padding, each plane one
 * row in chunks of 192 columns): more input channels than one call (accumulated, bias and ReLU
 * on the last) and output channels around the 4-channel passes; a plane of a chunk and a
 * remainder; groups with batch; and an output past the last-level cache with one call per
 * chunk (streamed). A 1x1 layer with padding or a stride stays on the row paths. */
static void test_pointwise(void) {
    conv2d_case((fconv_conv2d_desc){.n = 2, .c = 150, .h = 13, .w = 17, .k = 7, .r = 1, .s = 1, .has_bias = 1,
                                    .activation = FCONV_ACTIVATION_RELU});
    conv2d_case((fconv_conv2d_desc){.c = 64, .h = 7, .w = 7, .k = 70, .r = 1, .s = 1, .has_bias = 1});
    conv2d_case((fconv_conv2d_desc){.n = 3, .c = 6, .h = 1, .w = 1, .k = 9, .r = 1, .s = 1, .groups = 3,
                                    .activation = FCONV_ACTIVATION_RELU});
    conv2d_case((fconv_conv2d_desc){.c = 2, .h = 363, .w = 362, .k = 64, .r = 1, .s = 1, .has_bias = 1});
    conv2d_case((fconv_conv2d_desc){.c = 5, .h = 9, .w = 11, .k = 6, .r = 1, .s = 1, .pad_top = 1, .pad_left = 2,
                                    .pad_bottom = 1, .pad_right = 0});
}

/* Few output channels per group (direct-conv2d.c's filter_row_block: filter2d's kernel, up to
 * FEW_CHANNELS_PER_CALL input channels a call) against the four-channel row kernel: output
 * channel 0 of a layer with four output channels per group, the first having the few-channel
 * layer's weights, must have the same bits, edges, padding rows and the last short block of
 * rows included. */
static void few_channel_case(int64_t c, int64_t groups, int64_t kg, int64_t h, int64_t w, int64_t r, int64_t s,
                             int64_t pad, int64_t dil_w) {
    const int64_t cg = c / groups, taps = cg * r * s;
    fconv_conv2d_desc few = {.c = c, .h = h, .w = w, .k = groups * kg, .r = r, .s = s, .pad_top = pad,
                             .pad_left = pad, .pad_bottom = pad, .pad_right = pad, .dilation_w = dil_w,
                             .groups = groups};
    fconv_conv2d_desc four = few;
    four.k = groups * 4;
    char what[160];
    snprintf(what, sizeof what, "few-channel c%lld groups %lld kg %lld %lldx%lld kernel %lldx%lld pad %lld dil %lld",
             (long long)c, (long long)groups, (long long)kg, (long long)h, (long long)w, (long long)r,
             (long long)s, (long long)pad, (long long)dil_w);
    float *x = random_array(c * h * w), *w1 = random_array(few.k * taps), *w4 = random_array(four.k * taps);
    for (int64_t g = 0; g < groups; g++) /* channel 4g of the wide layer is channel g*kg of the narrow one */
        memcpy(w4 + g * 4 * taps, w1 + g * kg * taps, (size_t)taps * sizeof *w1);
    fconv_plan *p1, *p4, *p2;
    CHECKF(fconv_plan_conv2d(&few, &(fconv_options){.algo = FCONV_ALGO_DIRECT, .threads = 1}, w1, NULL, &p1) ==
               FCONV_OK, "%s: %s", what, fconv_last_error());
    CHECKF(fconv_plan_conv2d(&four, &(fconv_options){.algo = FCONV_ALGO_DIRECT, .threads = 1}, w4, NULL, &p4) ==
               FCONV_OK, "%s: %s", what, fconv_last_error());
    CHECKF(fconv_plan_conv2d(&few, &(fconv_options){.algo = FCONV_ALGO_DIRECT, .threads = 2}, NULL, NULL, &p2) ==
               FCONV_OK, "%s: %s", what, fconv_last_error());
    check_plan(p1, p2, x, w1, NULL, what);
    const int64_t plane = (h + 2 * pad - r + 1) * (w + 2 * pad - (s - 1) * dil_w);
    float *y1 = malloc((size_t)(few.k * plane) * sizeof *y1), *y4 = malloc((size_t)(four.k * plane) * sizeof *y4);
    CHECK(fconv_execute_with_workspace(p1, x, NULL, NULL, y1, NULL, 0) == FCONV_OK);
    CHECK(fconv_execute_with_workspace(p4, x, NULL, NULL, y4, NULL, 0) == FCONV_OK);
    for (int64_t g = 0; g < groups; g++)
        CHECKF(memcmp(y1 + g * kg * plane, y4 + g * 4 * plane, (size_t)plane * sizeof *y1) == 0,
               "%s: group %lld differs from the four-channel kernel's bits", what, (long long)g);
    fconv_plan_destroy(p1);
    fconv_plan_destroy(p4);
    fconv_plan_destroy(p2);
    free(x);
    free(w1);
    free(w4);
    free(y1);
    free(y4);
}

static void test_few_channels(void) {
    few_channel_case(3, 1, 1, 13, 70, 3, 3, 1, 1);  /* 3 -> 1, rows 13: a last block of one row */
    few_channel_case(3, 1, 2, 14, 37, 5, 5, 2, 1);  /* 5x5 (25 taps: every ISA takes the path) */
    few_channel_case(2, 1, 3, 11, 40, 4, 3, 0, 2);  /* even kernel rows, dilated columns, no padding */
    few_channel_case(4, 4, 1, 10, 33, 3, 3, 1, 1);  /* depthwise */
    few_channel_case(6, 2, 2, 9, 50, 7, 2, 3, 1);   /* groups of 3 channels, padding rows everywhere */
    few_channel_case(1, 1, 1, 40, 20, 33, 3, 16, 1); /* taller than the path's pointer arrays: row kernel */
    for (int64_t c = 36; c <= 37; c++) /* 4 rows' inputs filling the thread's strip (36 x 6 x 302), then past it */
        few_channel_case(c, 1, 1, 14, 300, 3, 3, 1, 1);
    few_channel_case(3, 1, 1, 14, 3700, 3, 3, 0, 1); /* past the strip, no padding: interior = every column */
    few_channel_case(20, 1, 1, 9, 45, 5, 5, 2, 1);   /* more input channels than a call takes */
    few_channel_case(3, 1, 1, 9, 1000, 3, 3, 1, 1);  /* long rows: interior in place, edges from strips */
    few_channel_case(64, 1, 1, 9, 1000, 5, 5, 2, 1); /* edges past their strip: row by row */
    few_channel_case(20, 2, 1, 6, 1700, 5, 5, 2, 1); /* both */
    few_channel_case(64, 1, 1, 9, 300, 3, 3, 1, 1);  /* short rows whose channels pass the strip: in place */
    /* input and output past FCONV_CACHED_BYTES: the interior streamed, rows 4 KiB apart and
     * (1100 columns) at every alignment */
    few_channel_case(3, 1, 1, 701, 1024, 3, 3, 1, 1);
    few_channel_case(3, 1, 1, 650, 1100, 5, 5, 2, 1);
}

/* The few-channel path keeps each thread's strip of input rows from one block of output rows to
 * the next (direct-conv2d.c's strip_ring): a second execute on the same x, changed in place,
 * must read it again. One block of rows, so the second execute's first block asks for exactly
 * the rows the strip holds. */
static void test_few_channels_x_changed(void) {
    const fconv_conv2d_desc d = {.c = 3, .h = 6, .w = 50, .k = 1, .r = 3, .s = 3};
    float *x = random_array(3 * 6 * 50), *w = random_array(27), *y = malloc(4 * 48 * sizeof *y);
    fconv_plan *plan;
    CHECK(fconv_plan_conv2d(&d, &(fconv_options){.algo = FCONV_ALGO_DIRECT, .threads = 1}, w, NULL, &plan) ==
          FCONV_OK);
    for (int run = 0; run < 3; run++) {
        test_fill_random(x, 3 * 6 * 50);
        CHECK(fconv_execute_with_workspace(plan, x, NULL, NULL, y, NULL, 0) == FCONV_OK);
        const double norm = fconv_ref_normalized_error(plan, x, w, NULL, y, 1, NULL);
        CHECKF(norm <= DIRECT_BOUND, "execute %d on x changed in place: normalized error %.3g", run, norm);
    }
    fconv_plan_destroy(plan);
    free(x);
    free(w);
    free(y);
}

int main(void) {
    test_init();
    TEST(test_wide_rows);
    TEST(test_kernel_larger_than_image);
    TEST(test_sliding_bands);
    TEST(test_conv1d);
    TEST(test_conv2d_blocking);
    TEST(test_whole_rows);
    TEST(test_strided_rows);
    TEST(test_pointwise);
    TEST(test_flat_rows);
    TEST(test_few_channels_x_changed);
    TEST(test_few_channels);
    return test_finish();
}
