/*
 * test_algo_direct.c — the direct algorithm on the shapes the generic random test rarely
 * reaches: rows wider than one task's chunk (4096 outputs) with every border, long 1D
 * signals, kernels wider than the image, output-channel counts around the 4-channel
 * blocking, dilation with stride, and that it never asks for a workspace.
 */
#include <stdint.h>

#include "fastconv.h"
#include "ref/conv-ref.h"
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

int main(void) {
    test_init();
    TEST(test_wide_rows);
    TEST(test_kernel_larger_than_image);
    TEST(test_conv1d);
    TEST(test_conv2d_blocking);
    return test_finish();
}
