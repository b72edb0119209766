/*
 * test_umi.c — the UMI operator against the library's own convolutions (conv2d, filter2d,
 * on random shapes) and against plain loops (SAD, SSD, bilateral, activations, callbacks,
 * every border rule), plus thread-count invariance.
 */
#include "fastconv.h"
#include "test.h"

static double max_abs(const float *p, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fabs(p[i]) > m ? fabs(p[i]) : m;
    return m;
}

/* conv2d (N, C, H, W, K, R, S, stride, pad, dilation, bias, ReLU) as a UMI, against
 * fconv_plan_conv2d with the reference algorithm. */
static void umi_conv2d_matches_conv2d(void) {
    for (int trial = 0; trial < 40; trial++) {
        int64_t n = test_rand_int(1, 2), c = test_rand_int(1, 5), h = test_rand_int(1, 12),
                w = test_rand_int(1, 12), k = test_rand_int(1, 4), r = test_rand_int(1, 4),
                s = test_rand_int(1, 4), sh = test_rand_int(1, 3), sw = test_rand_int(1, 3),
                dh = test_rand_int(1, 2), dw = test_rand_int(1, 2), pt = test_rand_int(0, 3),
                pl = test_rand_int(0, 3), pb = test_rand_int(0, 3), pr = test_rand_int(0, 3);
        int relu = (int)test_rand_int(0, 1), bias = (int)test_rand_int(0, 1);
        int64_t p = (h + pt + pb - dh * (r - 1) - 1), q = (w + pl + pr - dw * (s - 1) - 1);
        if (p < 0 || q < 0) continue;
        p = p / sh + 1, q = q / sw + 1;
        fconv_conv2d_desc cd = {.n = n, .c = c, .h = h, .w = w, .k = k, .r = r, .s = s,
                                .stride_h = sh, .stride_w = sw, .pad_top = pt, .pad_left = pl,
                                .pad_bottom = pb, .pad_right = pr, .dilation_h = dh, .dilation_w = dw,
                                .has_bias = bias, .activation = relu ? FCONV_ACTIVATION_RELU : FCONV_ACTIVATION_NONE};
        size_t nx = (size_t)(n * c * h * w), nw = (size_t)(k * c * r * s), ny = (size_t)(n * k * p * q);
        float *x = malloc(nx * 4), *wt = malloc(nw * 4), *b = malloc((size_t)k * 4), *y0 = malloc(ny * 4),
              *y1 = malloc(ny * 4), *mag = calloc(ny, 4);
        test_fill_random(x, nx);
        test_fill_random(wt, nw);
        test_fill_random(b, (size_t)k);
        fconv_options ref = {.algo = FCONV_ALGO_REFERENCE, .threads = 1};
        fconv_plan *plan = NULL;
        CHECK(fconv_plan_conv2d(&cd, &ref, wt, bias ? b : NULL, &plan) == FCONV_OK);
        CHECK(fconv_execute(plan, x, NULL, NULL, y0) == FCONV_OK);
        fconv_plan_destroy(plan);
        fconv_umi_desc d = {
            .n_par = 4, .par_extent = {n, k, p, q}, .n_acc = 3, .acc_extent = {c, r, s},
            .a = {.ndim = 4, .shape = {n, c, h, w},
                  .par = {{0, 1, 0}, {0, 0, 0}, {2, sh, -pt}, {3, sw, -pl}},
                  .acc = {{1, 1, 0}, {2, dh, 0}, {3, dw, 0}}, .border = FCONV_UMI_BORDER_ZERO},
            .b = {.ndim = 4, .shape = {k, c, r, s}, .par = {{0, 0, 0}, {0, 1, 0}},
                  .acc = {{1, 1, 0}, {2, 1, 0}, {3, 1, 0}}},
            .init = {.ndim = 1, .shape = {k}, .par = {{0, 0, 0}, {0, 1, 0}}},
            .has_b = 1, .has_init = bias, .strategy = relu ? FCONV_UMI_DOT_RELU : FCONV_UMI_DOT};
        fconv_options opt = {.threads = (int)test_rand_int(1, 3)};
        fconv_umi_plan *up = NULL;
        fconv_status st = fconv_umi_plan_create(&d, &opt, &up);
        CHECKF(st == FCONV_OK, "%s", fconv_last_error());
        if (st == FCONV_OK) {
            CHECK_EQ_INT(fconv_umi_plan_output_elements(up), (int64_t)ny);
            CHECK(fconv_umi_execute(up, x, wt, bias ? b : NULL, y1) == FCONV_OK);
            double bound = 1e-5 * (double)(c * r * s + 1) + 1e-6;
            double err = 0;
            for (size_t i = 0; i < ny; i++) err = fmax(err, fabs((double)y0[i] - y1[i]));
            CHECKF(err <= bound, "trial %d: error %g > %g", trial, err, bound);
        }
        fconv_umi_plan_destroy(up);
        free(x), free(wt), free(b), free(y0), free(y1), free(mag);
    }
}

/* filter2d (convolution, 'same', one channel) as a UMI with a flipped kernel view, for
 * the zero, replicate and mirror borders. */
static void umi_filter2d_matches_filter2d(void) {
    const fconv_border fb[3] = {FCONV_BORDER_ZERO, FCONV_BORDER_REPLICATE, FCONV_BORDER_MIRROR};
    const fconv_umi_border ub[3] = {FCONV_UMI_BORDER_ZERO, FCONV_UMI_BORDER_REPLICATE, FCONV_UMI_BORDER_MIRROR};
    for (int trial = 0; trial < 30; trial++) {
        int bi = trial % 3;
        int64_t h = test_rand_int(2, 20), w = test_rand_int(2, 20), kh = test_rand_int(1, 7), kw = test_rand_int(1, 7);
        if (bi == 2 && (kh > 2 * h - 1 || kw > 2 * w - 1)) continue;
        float *x = malloc((size_t)(h * w) * 4), *k = malloc((size_t)(kh * kw) * 4), *y0 = malloc((size_t)(h * w) * 4),
              *y1 = malloc((size_t)(h * w) * 4);
        test_fill_random(x, (size_t)(h * w));
        test_fill_random(k, (size_t)(kh * kw));
        fconv_filter2d_desc fd = {.h = h, .w = w, .kh = kh, .kw = kw, .mode = FCONV_MODE_SAME, .border = fb[bi]};
        fconv_options ref = {.algo = FCONV_ALGO_REFERENCE, .threads = 1};
        fconv_plan *plan = NULL;
        CHECK(fconv_plan_filter2d(&fd, &ref, k, &plan) == FCONV_OK);
        CHECK(fconv_execute(plan, x, NULL, NULL, y0) == FCONV_OK);
        fconv_plan_destroy(plan);
        /* y[i][j] = sum_{a,b} k[a][b] x[i + (kh-1)/2 - a][j + (kw-1)/2 - b] */
        fconv_umi_desc d = {
            .n_par = 2, .par_extent = {h, w}, .n_acc = 2, .acc_extent = {kh, kw},
            .a = {.ndim = 2, .shape = {h, w}, .par = {{0, 1, (kh - 1) / 2}, {1, 1, (kw - 1) / 2}},
                  .acc = {{0, -1, 0}, {1, -1, 0}}, .border = ub[bi]},
            .b = {.ndim = 2, .shape = {kh, kw}, .acc = {{0, 1, 0}, {1, 1, 0}}},
            .has_b = 1, .strategy = FCONV_UMI_DOT};
        fconv_umi_plan *up = NULL;
        CHECKF(fconv_umi_plan_create(&d, NULL, &up) == FCONV_OK, "%s", fconv_last_error());
        if (up) {
            CHECK(fconv_umi_execute(up, x, k, NULL, y1) == FCONV_OK);
            double err = 0;
            for (int64_t i = 0; i < h * w; i++) err = fmax(err, fabs((double)y0[i] - y1[i]));
            CHECKF(err <= 1e-5 * (double)(kh * kw), "trial %d border %d: error %g", trial, bi, err);
        }
        fconv_umi_plan_destroy(up);
        free(x), free(k), free(y0), free(y1);
    }
}

/* Block-matching cost volumes (SAD and SSD) with candidates beyond the frame, replicate
 * border: against plain loops. */
static void umi_sad_ssd_match_loops(void) {
    for (int trial = 0; trial < 10; trial++) {
        int64_t h = test_rand_int(4, 24), w = test_rand_int(4, 24), bs = test_rand_int(1, 4),
                rs = test_rand_int(0, 3);
        int64_t nby = h / bs, nbx = w / bs, side = 2 * rs + 1, n = nby * nbx * side * side;
        float *f0 = malloc((size_t)(h * w) * 4), *f1 = malloc((size_t)(h * w) * 4), *y = malloc((size_t)n * 4);
        test_fill_random(f0, (size_t)(h * w));
        test_fill_random(f1, (size_t)(h * w));
        for (int ssd = 0; ssd < 2; ssd++) {
            fconv_umi_desc d = {
                .n_par = 4, .par_extent = {nby, nbx, side, side}, .n_acc = 2, .acc_extent = {bs, bs},
                .a = {.ndim = 2, .shape = {h, w}, .par = {{0, bs, 0}, {1, bs, 0}, {0, 1, -rs}, {1, 1, -rs}},
                      .acc = {{0, 1, 0}, {1, 1, 0}}, .border = FCONV_UMI_BORDER_REPLICATE},
                .b = {.ndim = 2, .shape = {h, w}, .par = {{0, bs, 0}, {1, bs, 0}}, .acc = {{0, 1, 0}, {1, 1, 0}}},
                .has_b = 1, .strategy = ssd ? FCONV_UMI_SSD : FCONV_UMI_SAD};
            fconv_umi_plan *up = NULL;
            CHECKF(fconv_umi_plan_create(&d, NULL, &up) == FCONV_OK, "%s", fconv_last_error());
            if (!up) continue;
            CHECK(fconv_umi_execute(up, f1, f0, NULL, y) == FCONV_OK);
            fconv_umi_plan_destroy(up);
            double err = 0;
            for (int64_t by = 0; by < nby; by++)
                for (int64_t bx = 0; bx < nbx; bx++)
                    for (int64_t sy = 0; sy < side; sy++)
                        for (int64_t sx = 0; sx < side; sx++) {
                            double ref = 0;
                            for (int64_t i = 0; i < bs; i++)
                                for (int64_t j = 0; j < bs; j++) {
                                    int64_t yy = by * bs + sy - rs + i, xx = bx * bs + sx - rs + j;
                                    yy = yy < 0 ? 0 : yy >= h ? h - 1 : yy;
                                    xx = xx < 0 ? 0 : xx >= w ? w - 1 : xx;
                                    double diff = (double)f1[yy * w + xx] - f0[(by * bs + i) * w + bx * bs + j];
                                    ref += ssd ? diff * diff : fabs(diff);
                                }
                            double got = y[((by * nbx + bx) * side + sy) * side + sx];
                            err = fmax(err, fabs(got - ref));
                        }
            CHECKF(err <= 1e-5 * (double)(bs * bs * 4), "trial %d ssd %d: error %g", trial, ssd, err);
        }
        free(f0), free(f1), free(y);
    }
}

/* The bilateral strategy with a mirror border against a plain loop. */
static void umi_bilateral_matches_loop(void) {
    int64_t h = 13, w = 17, rad = 3, k = 2 * rad + 1;
    float x[13 * 17], y[13 * 17], sp[49];
    for (int i = 0; i < h * w; i++) x[i] = 100.0f * (test_rand_float() + 1.0f);
    for (int i = 0; i < k * k; i++) sp[i] = (float)exp(-(double)((i / k - rad) * (i / k - rad) + (i % k - rad) * (i % k - rad)) / 8.0);
    sp[0] = 0; /* a zero weight is left out of both sums */
    const float kr = 1.0f / (2.0f * 40.0f * 40.0f);
    fconv_umi_desc d = {
        .n_par = 2, .par_extent = {h, w}, .n_acc = 2, .acc_extent = {k, k},
        .a = {.ndim = 2, .shape = {h, w}, .par = {{0, 1, 0}, {1, 1, 0}}, .acc = {{0, 1, -rad}, {1, 1, -rad}},
              .border = FCONV_UMI_BORDER_MIRROR},
        .b = {.ndim = 2, .shape = {k, k}, .acc = {{0, 1, 0}, {1, 1, 0}}},
        .init = {.ndim = 2, .shape = {h, w}, .par = {{0, 1, 0}, {1, 1, 0}}},
        .has_b = 1, .has_init = 1, .strategy = FCONV_UMI_BILATERAL, .param = {kr}};
    fconv_umi_plan *up = NULL;
    CHECKF(fconv_umi_plan_create(&d, NULL, &up) == FCONV_OK, "%s", fconv_last_error());
    if (!up) return;
    CHECK(fconv_umi_execute(up, x, sp, x, y) == FCONV_OK);
    fconv_umi_plan_destroy(up);
    double err = 0;
    for (int64_t i = 0; i < h; i++)
        for (int64_t j = 0; j < w; j++) {
            double ws = 0, wx = 0, c = x[i * w + j];
            for (int64_t a = 0; a < k; a++)
                for (int64_t b = 0; b < k; b++) {
                    int64_t yy = i + a - rad, xx = j + b - rad;
                    yy = yy < 0 ? -yy : yy >= h ? 2 * (h - 1) - yy : yy;
                    xx = xx < 0 ? -xx : xx >= w ? 2 * (w - 1) - xx : xx;
                    double v = x[yy * w + xx], wt = sp[a * k + b] * exp(-(v - c) * (v - c) * kr);
                    ws += wt, wx += wt * v;
                }
            err = fmax(err, fabs(wx / ws - y[i * w + j]));
        }
    CHECKF(err <= 1e-3, "bilateral error %g", err);
}

/* Activations after a dot product, and n_acc = 0 (y = post(pre(init))). */
static void umi_activations(void) {
    const fconv_umi_strategy s[4] = {FCONV_UMI_DOT_LEAKY_RELU, FCONV_UMI_DOT_SIGMOID, FCONV_UMI_DOT_TANH, FCONV_UMI_DOT_RELU};
    float x[5] = {-2, -0.5f, 0, 0.5f, 3}, y[5];
    for (int t = 0; t < 4; t++) {
        fconv_umi_desc d = {.n_par = 1, .par_extent = {5}, .n_acc = 0,
                            .a = {.ndim = 1, .shape = {5}}, .b = {.ndim = 1, .shape = {5}},
                            .init = {.ndim = 1, .shape = {5}, .par = {{0, 1, 0}}},
                            .has_b = 1, .has_init = 1, .strategy = s[t], .param = {0.1f}};
        fconv_umi_plan *up = NULL;
        CHECKF(fconv_umi_plan_create(&d, NULL, &up) == FCONV_OK, "%s", fconv_last_error());
        if (!up) continue;
        CHECK(fconv_umi_execute(up, x, x, x, y) == FCONV_OK);
        fconv_umi_plan_destroy(up);
        for (int i = 0; i < 5; i++) {
            double v = x[i], want = t == 0 ? (v < 0 ? 0.1 * v : v) : t == 1 ? 1 / (1 + exp(-v)) : t == 2 ? tanh(v) : fmax(v, 0);
            CHECKF(fabs(want - y[i]) < 1e-6, "strategy %d x %g: %g vs %g", (int)s[t], v, y[i], want);
        }
    }
}

/* A user strategy: (max a*b, count of pairs) with the skip border, against a loop. */
static void cb_pre(double st[FCONV_UMI_STATE_SIZE], float init, const void *user) {
    (void)user;
    st[0] = init;
    st[1] = -INFINITY;
}
static void cb_step(double st[FCONV_UMI_STATE_SIZE], float a, float b, const void *user) {
    st[0] += *(const float *)user;
    if (a * b > st[1]) st[1] = a * b;
}
static float cb_post(const double st[FCONV_UMI_STATE_SIZE], const void *user) {
    (void)user;
    return (float)(st[0] * 1000.0 + (st[1] > -INFINITY ? st[1] : 0));
}
static void umi_callback_and_skip(void) {
    int64_t n = 20, m = 5;
    float x[20], k[5], y[20], one = 1.0f;
    test_fill_random(x, 20);
    test_fill_random(k, 5);
    fconv_umi_callbacks cb = {.pre = cb_pre, .step = cb_step, .post = cb_post, .user = &one};
    fconv_umi_desc d = {.n_par = 1, .par_extent = {n}, .n_acc = 1, .acc_extent = {m},
                        .a = {.ndim = 1, .shape = {n}, .par = {{0, 1, -2}}, .acc = {{0, 1, 0}},
                              .border = FCONV_UMI_BORDER_SKIP},
                        .b = {.ndim = 1, .shape = {m}, .acc = {{0, 1, 0}}},
                        .has_b = 1, .strategy = FCONV_UMI_CALLBACK, .callbacks = &cb};
    fconv_umi_plan *up = NULL;
    CHECKF(fconv_umi_plan_create(&d, NULL, &up) == FCONV_OK, "%s", fconv_last_error());
    if (!up) return;
    CHECK(fconv_umi_execute(up, x, k, NULL, y) == FCONV_OK);
    fconv_umi_plan_destroy(up);
    for (int64_t i = 0; i < n; i++) {
        int count = 0;
        double mx = -INFINITY;
        for (int64_t t = 0; t < m; t++) {
            int64_t j = i - 2 + t;
            if (j < 0 || j >= n) continue;
            count++;
            if ((double)(x[j] * k[t]) > mx) mx = (double)(x[j] * k[t]);
        }
        double want = count * 1000.0 + mx;
        CHECKF(fabs(want - y[i]) < 1e-3, "i %lld: %g vs %g", (long long)i, y[i], want);
    }
}

/* One thread or three: identical bits (each output is computed by one thread in a fixed order). */
static void umi_threads_invariant(void) {
    int64_t h = 70, w = 150;
    float *x = malloc((size_t)(h * w) * 4), *y1 = malloc((size_t)(h * w) * 4), *y3 = malloc((size_t)(h * w) * 4), k[25];
    test_fill_random(x, (size_t)(h * w));
    test_fill_random(k, 25);
    fconv_umi_desc d = {.n_par = 2, .par_extent = {h, w}, .n_acc = 2, .acc_extent = {5, 5},
                        .a = {.ndim = 2, .shape = {h, w}, .par = {{0, 1, -2}, {1, 1, -2}}, .acc = {{0, 1, 0}, {1, 1, 0}},
                              .border = FCONV_UMI_BORDER_MIRROR},
                        .b = {.ndim = 2, .shape = {5, 5}, .acc = {{0, 1, 0}, {1, 1, 0}}},
                        .has_b = 1, .strategy = FCONV_UMI_DOT};
    for (int t = 1; t <= 3; t += 2) {
        fconv_options o = {.threads = t};
        fconv_umi_plan *up = NULL;
        CHECK(fconv_umi_plan_create(&d, &o, &up) == FCONV_OK);
        if (up) CHECK(fconv_umi_execute(up, x, k, NULL, t == 1 ? y1 : y3) == FCONV_OK);
        fconv_umi_plan_destroy(up);
    }
    CHECK(memcmp(y1, y3, (size_t)(h * w) * 4) == 0);
    CHECK(max_abs(y1, (size_t)(h * w)) > 0);
    free(x), free(y1), free(y3);
}

int main(void) {
    test_init();
    TEST(umi_conv2d_matches_conv2d);
    TEST(umi_filter2d_matches_filter2d);
    TEST(umi_sad_ssd_match_loops);
    TEST(umi_bilateral_matches_loop);
    TEST(umi_activations);
    TEST(umi_callback_and_skip);
    TEST(umi_threads_invariant);
    return test_finish();
}
