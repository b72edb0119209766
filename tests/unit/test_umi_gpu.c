/*
 * test_umi_gpu.c — the UMI operator on a GPU device (src/umi/umi-gpu.c, kernel umi_generic)
 * against the CPU executor: random problems of every built-in strategy (convolution with
 * bias and each activation, SAD, SSD, bilateral, ABSDIFF) under every border rule. Callback
 * strategies on a GPU device are refused at plan time. argv[1] "cuda" tests CUDA, else
 * OpenCL; exits 77 (skip) when that device is absent.
 */
#include "fastconv.h"
#include "test.h"

static fconv_device dev = FCONV_DEVICE_OPENCL;
static int compared;

static const fconv_umi_border borders[5] = {FCONV_UMI_BORDER_NONE, FCONV_UMI_BORDER_ZERO,
                                            FCONV_UMI_BORDER_REPLICATE, FCONV_UMI_BORDER_MIRROR,
                                            FCONV_UMI_BORDER_SKIP};

/* Run d on the CPU and on the device; every output within tol relative (of max(1, |cpu|)). */
static void compare(const fconv_umi_desc *d, const float *a, const float *b, const float *init,
                    double tol, const char *what) {
    fconv_options cpu = {.threads = 2}, gpu = {.device = dev};
    fconv_umi_plan *pc = NULL, *pg = NULL;
    fconv_status st = fconv_umi_plan_create(d, &cpu, &pc);
    CHECKF(st == FCONV_OK, "%s: cpu plan: %s", what, fconv_last_error());
    st = fconv_umi_plan_create(d, &gpu, &pg);
    CHECKF(st == FCONV_OK, "%s: gpu plan: %s", what, fconv_last_error());
    if (pc && pg) {
        size_t n = (size_t)fconv_umi_plan_output_elements(pc);
        CHECK_EQ_INT(fconv_umi_plan_output_elements(pg), (int64_t)n);
        float *yc = malloc(n * 4), *yg = malloc(n * 4);
        for (size_t i = 0; i < n; i++) yg[i] = -12345.0f; /* every output must be written */
        CHECK(fconv_umi_execute(pc, a, b, init, yc) == FCONV_OK);
        st = fconv_umi_execute(pg, a, b, init, yg);
        CHECKF(st == FCONV_OK, "%s: gpu execute: %s", what, fconv_last_error());
        double km, tm;
        CHECK(fconv_last_execute_timing(&km, &tm) == FCONV_OK && km >= 0 && tm >= 0);
        double worst = 0;
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            double e = fabs((double)yc[i] - yg[i]) / fmax(1.0, fabs((double)yc[i]));
            if (!(e <= worst)) worst = e, at = i; /* NaN counts as the worst */
        }
        CHECKF(worst <= tol, "%s: element %zu: cpu %g gpu %g (relative error %g > %g)", what, at,
               (double)yc[at], (double)yg[at], worst, tol);
        compared++;
        free(yc), free(yg);
    }
    fconv_umi_plan_destroy(pc);
    fconv_umi_plan_destroy(pg);
}

static float *random_floats(size_t n) {
    float *p = malloc((n ? n : 1) * 4);
    test_fill_random(p, n);
    return p;
}

/* conv2d NCHW (stride, dilation, padding, optional bias, each DOT activation): the padding
 * read through the border rule; NONE gets no padding. */
static void conv_matches_cpu(void) {
    const fconv_umi_strategy acts[5] = {FCONV_UMI_DOT, FCONV_UMI_DOT_RELU, FCONV_UMI_DOT_LEAKY_RELU,
                                        FCONV_UMI_DOT_SIGMOID, FCONV_UMI_DOT_TANH};
    for (int trial = 0; trial < 25; trial++) {
        fconv_umi_border border = borders[trial % 5];
        int64_t n = test_rand_int(1, 2), c = test_rand_int(1, 4), h = test_rand_int(4, 13),
                w = test_rand_int(4, 13), k = test_rand_int(1, 3), r = test_rand_int(1, 3),
                s = test_rand_int(1, 3), sh = test_rand_int(1, 2), sw = test_rand_int(1, 2),
                dh = test_rand_int(1, 2), dw = test_rand_int(1, 2);
        int64_t pt = 0, pl = 0, pb = 0, pr = 0;
        if (border != FCONV_UMI_BORDER_NONE)
            pt = test_rand_int(0, 3), pl = test_rand_int(0, 3), pb = test_rand_int(0, 3), pr = test_rand_int(0, 3);
        int64_t p = h + pt + pb - dh * (r - 1) - 1, q = w + pl + pr - dw * (s - 1) - 1;
        if (p < 0 || q < 0) continue;
        p = p / sh + 1, q = q / sw + 1;
        int bias = (int)test_rand_int(0, 1);
        fconv_umi_desc d = {
            .n_par = 4, .par_extent = {n, k, p, q}, .n_acc = 3, .acc_extent = {c, r, s},
            .a = {.ndim = 4, .shape = {n, c, h, w},
                  .par = {{0, 1, 0}, {0, 0, 0}, {2, sh, -pt}, {3, sw, -pl}},
                  .acc = {{1, 1, 0}, {2, dh, 0}, {3, dw, 0}}, .border = border},
            .b = {.ndim = 4, .shape = {k, c, r, s}, .par = {{0, 0, 0}, {0, 1, 0}},
                  .acc = {{1, 1, 0}, {2, 1, 0}, {3, 1, 0}}},
            .init = {.ndim = 1, .shape = {k}, .par = {{0, 0, 0}, {0, 1, 0}}},
            .has_b = 1, .has_init = bias, .strategy = acts[trial / 5], .param = {0.1f}};
        float *x = random_floats((size_t)(n * c * h * w)), *wt = random_floats((size_t)(k * c * r * s)),
              *bs = random_floats((size_t)k);
        char what[96];
        snprintf(what, sizeof what, "conv trial %d (strategy %d, border %d, bias %d)", trial,
                 (int)d.strategy, (int)border, bias);
        compare(&d, x, wt, bias ? bs : NULL, 1e-5, what);
        free(x), free(wt), free(bs);
    }
}

/* Block matching on a stereo pair: y[dsp][i][j] = sum over a (2R+1)^2 window of
 * op(left[i+u][j+v], right[i+u][j+v-dsp]). NONE shifts the outputs inside the images. */
static void matching_matches_cpu(fconv_umi_strategy strategy, const char *name) {
    for (int trial = 0; trial < 10; trial++) {
        fconv_umi_border border = borders[trial % 5];
        int64_t H = test_rand_int(8, 20), W = test_rand_int(12, 24), R = test_rand_int(0, 3),
                D = test_rand_int(1, 4);
        int none = border == FCONV_UMI_BORDER_NONE;
        int64_t oy = none ? 0 : -R, ox = none ? D - 1 : -R;
        int64_t ph = none ? H - 2 * R : H, pw = none ? W - 2 * R - (D - 1) : W;
        fconv_umi_desc d = {
            .n_par = 3, .par_extent = {D, ph, pw}, .n_acc = 2, .acc_extent = {2 * R + 1, 2 * R + 1},
            .a = {.ndim = 2, .shape = {H, W}, .par = {{0, 0, 0}, {0, 1, oy}, {1, 1, ox}},
                  .acc = {{0, 1, 0}, {1, 1, 0}}, .border = border},
            .b = {.ndim = 2, .shape = {H, W}, .par = {{1, -1, 0}, {0, 1, oy}, {1, 1, ox}},
                  .acc = {{0, 1, 0}, {1, 1, 0}}, .border = border},
            .has_b = 1, .strategy = strategy};
        float *l = random_floats((size_t)(H * W)), *rt = random_floats((size_t)(H * W));
        char what[96];
        snprintf(what, sizeof what, "%s trial %d (border %d, R %lld, D %lld)", name, trial,
                 (int)border, (long long)R, (long long)D);
        compare(&d, l, rt, NULL, 1e-5, what);
        free(l), free(rt);
    }
}

static void sad_matches_cpu(void) { matching_matches_cpu(FCONV_UMI_SAD, "sad"); }
static void ssd_matches_cpu(void) { matching_matches_cpu(FCONV_UMI_SSD, "ssd"); }

/* Bilateral filter: A the neighbours (through the border rule), B the spatial weights (zero
 * outside the disc), init the centre pixel. exp differs by a few ulp between devices. */
static void bilateral_matches_cpu(void) {
    for (int trial = 0; trial < 10; trial++) {
        fconv_umi_border border = borders[trial % 5];
        int64_t H = test_rand_int(6, 20), W = test_rand_int(6, 20), R = test_rand_int(1, 3);
        int none = border == FCONV_UMI_BORDER_NONE;
        int64_t o = none ? R : 0, ph = none ? H - 2 * R : H, pw = none ? W - 2 * R : W;
        int64_t K = 2 * R + 1;
        float *img = random_floats((size_t)(H * W)), *sp = malloc((size_t)(K * K) * 4);
        for (int64_t u = 0; u < K; u++)
            for (int64_t v = 0; v < K; v++) {
                double r2 = (double)((u - R) * (u - R) + (v - R) * (v - R));
                sp[u * K + v] = r2 > (double)(R * R) ? 0.0f : (float)exp(-r2 / 2.0);
            }
        fconv_umi_desc d = {
            .n_par = 2, .par_extent = {ph, pw}, .n_acc = 2, .acc_extent = {K, K},
            .a = {.ndim = 2, .shape = {H, W}, .par = {{0, 1, o - R}, {1, 1, o - R}},
                  .acc = {{0, 1, 0}, {1, 1, 0}}, .border = border},
            .b = {.ndim = 2, .shape = {K, K}, .par = {{0, 0, 0}, {0, 0, 0}}, .acc = {{0, 1, 0}, {1, 1, 0}}},
            .init = {.ndim = 2, .shape = {H, W}, .par = {{0, 1, o}, {1, 1, o}}},
            .has_b = 1, .has_init = 1, .strategy = FCONV_UMI_BILATERAL,
            .param = {(float)(1.0 / (2.0 * 0.3 * 0.3))}};
        char what[96];
        snprintf(what, sizeof what, "bilateral trial %d (border %d, R %lld)", trial, (int)border, (long long)R);
        compare(&d, img, sp, img, 1e-4, what);
        free(img), free(sp);
    }
}

/* ABSDIFF planes y[dsp][i][j] = |left[i][j] - right[i][j - dsp]| (n_acc = 0). */
static void absdiff_matches_cpu(void) {
    for (int trial = 0; trial < 10; trial++) {
        fconv_umi_border border = borders[trial % 5];
        int64_t H = test_rand_int(1, 12), W = test_rand_int(6, 40), D = test_rand_int(1, 5);
        int none = border == FCONV_UMI_BORDER_NONE;
        int64_t ox = none ? D - 1 : 0, pw = none ? W - (D - 1) : W;
        fconv_umi_desc d = {
            .n_par = 3, .par_extent = {D, H, pw}, .n_acc = 0,
            .a = {.ndim = 2, .shape = {H, W}, .par = {{0, 0, 0}, {0, 1, 0}, {1, 1, ox}}, .border = border},
            .b = {.ndim = 2, .shape = {H, W}, .par = {{1, -1, 0}, {0, 1, 0}, {1, 1, ox}}, .border = border},
            .has_b = 1, .strategy = FCONV_UMI_ABSDIFF};
        float *l = random_floats((size_t)(H * W)), *rt = random_floats((size_t)(H * W));
        char what[96];
        snprintf(what, sizeof what, "absdiff trial %d (border %d, D %lld)", trial, (int)border, (long long)D);
        compare(&d, l, rt, NULL, 1e-6, what);
        free(l), free(rt);
    }
}

static void step(double st[FCONV_UMI_STATE_SIZE], float a, float b, const void *u) {
    (void)u;
    st[0] += (double)a * b;
}
static float post(const double st[FCONV_UMI_STATE_SIZE], const void *u) {
    (void)u;
    return (float)st[0];
}

/* A callback strategy on a GPU device is refused at plan time, saying why. */
static void callbacks_refused(fconv_device device) {
    fconv_umi_callbacks cb = {.step = step, .post = post};
    fconv_umi_desc d = {.n_par = 1, .par_extent = {4}, .n_acc = 1, .acc_extent = {3},
                        .a = {.ndim = 1, .shape = {6}, .par = {{0, 1, 0}}, .acc = {{0, 1, 0}}},
                        .b = {.ndim = 1, .shape = {3}, .acc = {{0, 1, 0}}},
                        .has_b = 1, .strategy = FCONV_UMI_CALLBACK, .callbacks = &cb};
    fconv_options o = {.device = device};
    fconv_umi_plan *p = NULL;
    CHECK_EQ_INT(fconv_umi_plan_create(&d, &o, &p), FCONV_EUNSUPPORTED);
    CHECK(p == NULL);
    CHECK_STR_CONTAINS(fconv_last_error(), "callback");
    CHECK_STR_CONTAINS(fconv_last_error(), "CPU");
    o.device = FCONV_DEVICE_CPU; /* the same descriptor runs on the CPU */
    CHECK(fconv_umi_plan_create(&d, &o, &p) == FCONV_OK && p);
    fconv_umi_plan_destroy(p);
}

static void callbacks_refused_opencl(void) { callbacks_refused(FCONV_DEVICE_OPENCL); }
static void callbacks_refused_cuda(void) { callbacks_refused(FCONV_DEVICE_CUDA); }

/* An absent GPU device: FCONV_ENODEVICE with the reason, as the other plans. */
static void absent_device_refused(void) {
    const fconv_device both[2] = {FCONV_DEVICE_OPENCL, FCONV_DEVICE_CUDA};
    for (int i = 0; i < 2; i++) {
        if (fconv_device_count(both[i]) > 0) continue;
        fconv_umi_desc d = {.n_par = 1, .par_extent = {4}, .n_acc = 1, .acc_extent = {3},
                            .a = {.ndim = 1, .shape = {6}, .par = {{0, 1, 0}}, .acc = {{0, 1, 0}}},
                            .b = {.ndim = 1, .shape = {3}, .acc = {{0, 1, 0}}}, .has_b = 1};
        fconv_options o = {.device = both[i]};
        fconv_umi_plan *p = NULL;
        CHECK_EQ_INT(fconv_umi_plan_create(&d, &o, &p), FCONV_ENODEVICE);
        CHECK(p == NULL && fconv_last_error()[0] != '\0');
    }
}

int main(int argc, char **argv) {
    test_init();
    dev = argc > 1 && strcmp(argv[1], "cuda") == 0 ? FCONV_DEVICE_CUDA : FCONV_DEVICE_OPENCL;
    const char *dname = dev == FCONV_DEVICE_CUDA ? "cuda" : "opencl";
    TEST(callbacks_refused_opencl);
    TEST(callbacks_refused_cuda);
    TEST(absent_device_refused);
    if (fconv_device_count(dev) == 0) {
        printf("SKIP: no %s device: %s\n", dname, fconv_last_error());
        return test_failures ? 1 : TEST_SKIP_CODE;
    }
    TEST(conv_matches_cpu);
    TEST(sad_matches_cpu);
    TEST(ssd_matches_cpu);
    TEST(bilateral_matches_cpu);
    TEST(absdiff_matches_cpu);
    CHECKF(compared >= 50, "only %d problems compared", compared);
    return test_finish();
}
