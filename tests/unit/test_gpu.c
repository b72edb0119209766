/*
 * test_gpu.c — the GPU layer through the public API on one device (argv[1]: opencl or cuda):
 * every GPU algorithm against the CPU reference on filter2d (every border), conv1d and
 * conv2d shapes (random ones for gpu-winograd-2x2 and the GEMMs, each tile: partial tiles,
 * padding, groups, bias, ReLU, weights at plan or execute time, a chunked column buffer),
 * their refusals, device timing, CPU algorithms refused on the device. Exits 77 (skip) with
 * the reason when the device is absent, e.g. CUDA on a machine without an NVIDIA GPU.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fastconv.h"
#include "gpu/gpu-driver.h"
#include "test.h"

static fconv_device dev;

static void fill(float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) a[i] = (float)((double)(test_rand_u64() % 2001) / 1000.0 - 1.0);
}

/* Plan on the device with algo and on the CPU with the reference; compare outputs with the
 * normalized bound 1e-5 (scale: max |y_ref| + 1, a loose but failing-capable check).
 * late_w (conv2d): the device plan gets no weights or bias; execute passes them. */
static void compare_ex(const char *what, fconv_algo algo, int kind, const void *desc,
                       const float *w, const float *bias, int late_w) {
    fconv_options g = {.algo = algo, .device = dev}, c = {.algo = FCONV_ALGO_REFERENCE};
    fconv_plan *pg = NULL, *pc = NULL;
    fconv_status sg, sc;
    if (kind == 0) {
        sg = fconv_plan_conv2d(desc, &g, late_w ? NULL : w, late_w ? NULL : bias, &pg);
        sc = fconv_plan_conv2d(desc, &c, w, bias, &pc);
    } else if (kind == 1) {
        sg = fconv_plan_filter2d(desc, &g, w, &pg);
        sc = fconv_plan_filter2d(desc, &c, w, &pc);
    } else {
        sg = fconv_plan_conv1d(desc, &g, w, &pg);
        sc = fconv_plan_conv1d(desc, &c, w, &pc);
    }
    CHECKF(sg == FCONV_OK && sc == FCONV_OK, "%s %s: plan %d/%d: %s", what, fconv_algo_name(algo),
           (int)sg, (int)sc, fconv_last_error());
    if (sg != FCONV_OK || sc != FCONV_OK) goto out;
    int64_t nx = fconv_plan_input_elements(pc), ny = fconv_plan_output_elements(pc);
    float *x = malloc((size_t)nx * 4), *yg = malloc((size_t)ny * 4), *yc = malloc((size_t)ny * 4);
    fill(x, nx);
    for (int64_t i = 0; i < ny; i++) yg[i] = NAN;
    CHECK(fconv_execute(pc, x, NULL, NULL, yc) == FCONV_OK);
    double k_ms = -1, t_ms = -1;
    CHECK(fconv_last_execute_timing(&k_ms, &t_ms) == FCONV_EUNSUPPORTED); /* CPU execute */
    sg = fconv_execute(pg, x, late_w ? w : NULL, late_w ? bias : NULL, yg);
    CHECKF(sg == FCONV_OK, "%s %s: execute: %s", what, fconv_algo_name(algo), fconv_last_error());
    CHECK(fconv_last_execute_timing(&k_ms, &t_ms) == FCONV_OK && k_ms >= 0 && t_ms >= 0);
    double maxdiff = 0, scale = 1;
    for (int64_t i = 0; i < ny; i++) {
        double d = fabs((double)yg[i] - yc[i]);
        if (!(d <= maxdiff)) maxdiff = isnan(d) ? INFINITY : d;
        if (fabs(yc[i]) > scale) scale = fabs(yc[i]);
    }
    CHECKF(maxdiff <= 1e-5 * scale * 10, "%s %s: max diff %g (scale %g)", what, fconv_algo_name(algo),
           maxdiff, scale);
    free(x);
    free(yg);
    free(yc);
out:
    fconv_plan_destroy(pg);
    fconv_plan_destroy(pc);
}

static void compare(const char *what, fconv_algo algo, int kind, const void *desc, const float *w,
                    const float *bias) {
    compare_ex(what, algo, kind, desc, w, bias, 0);
}

/* compare() of a filter2d (kind 1) or conv1d (kind 2) with `taps` random weights. */
static void compare_random_mask(const char *what, fconv_algo algo, int kind, const void *desc,
                                int64_t taps) {
    float *k = malloc((size_t)taps * sizeof(float));
    fill(k, taps);
    compare(what, algo, kind, desc, k, NULL);
    free(k);
}

/* With x all ones but one NaN and a mask of ones, exactly the `window` outputs whose window
 * holds the NaN are NaN (the register-blocked kernels skip taps instead of padding them
 * with zeros, which would turn a neighbour's NaN into theirs), and output `clear_at`, whose
 * window ends just short of it, sums all `taps` ones. */
static void check_nan_locality(const char *what, int kind, const void *desc, int64_t n_in,
                               int64_t nan_at, int64_t clear_at, int64_t taps, int64_t window) {
    fconv_options o = {.algo = FCONV_ALGO_GPU_TILED_HALO, .device = dev};
    float *k = malloc((size_t)taps * 4), *x = malloc((size_t)n_in * 4), *y = malloc((size_t)n_in * 4);
    for (int64_t i = 0; i < taps; i++) k[i] = 1.0f;
    for (int64_t i = 0; i < n_in; i++) x[i] = 1.0f;
    x[nan_at] = NAN;
    fconv_plan *plan = NULL;
    fconv_status st = kind == 1 ? fconv_plan_filter2d(desc, &o, k, &plan) : fconv_plan_conv1d(desc, &o, k, &plan);
    CHECK(st == FCONV_OK);
    CHECK(plan && fconv_plan_output_elements(plan) == n_in && fconv_execute(plan, x, NULL, NULL, y) == FCONV_OK);
    int64_t nans = 0;
    for (int64_t i = 0; i < n_in; i++) nans += isnan(y[i]) != 0;
    CHECKF(nans == window && isnan(y[nan_at]) && y[clear_at] == (float)taps,
           "%s NaN: %lld outputs NaN, want the %lld around it", what, (long long)nans, (long long)window);
    fconv_plan_destroy(plan);
    free(k);
    free(x);
    free(y);
}

/* The GEMMs' walk (fconv_gpu_gemm_geometry_of) of random layers, small to 4096 channels,
 * on devices of 1 to 1000 compute units, B gathered or not, each tile forced and the model's
 * choice: the depth ranges cover the depth exactly, none empty, each whole steps; the column
 * buffer and the partial sums within their 32 Mi floats (the columns may exceed it only as
 * one group's 128 columns); no columns for a 1x1 stride-1 unpadded layer or a gathered B. */
static void check_gemm_geometry(void) {
    const int64_t cap = (int64_t)32 << 20;
    for (int i = 0; i < 60; i++) {
        int64_t groups = i % 5 == 0 ? test_rand_int(2, 8) : 1;
        fconv_conv2d_desc d = {.n = test_rand_int(1, 8),
                               .c = groups * test_rand_int(1, 4096 / groups),
                               .k = groups * test_rand_int(1, 2048 / groups),
                               .r = test_rand_int(1, 5), .s = test_rand_int(1, 5),
                               .stride_h = test_rand_int(1, 2), .groups = groups};
        if (i % 4 == 0) d.r = d.s = d.stride_h = 1; /* 1x1 stride 1, unpadded below */
        d.stride_w = d.stride_h;
        int64_t pad = i % 4 == 0 || i % 3 == 0 ? 0 : d.r / 2;
        d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = pad;
        d.h = test_rand_int(d.r, 120);
        d.w = test_rand_int(d.s, 120);
        fconv_options o = {.algo = FCONV_ALGO_GPU_IM2COL_GEMM, .device = dev};
        fconv_plan *p = NULL;
        CHECK(fconv_plan_conv2d(&d, &o, NULL, NULL, &p) == FCONV_OK);
        if (!p) continue;
        int direct = d.r == 1 && d.s == 1 && d.stride_h == 1 && d.pad_top == 0;
        int64_t kg = d.k / d.groups, cu[] = {1, 2, 16, 132, 1000};
        for (int forced = -1; forced < FCONV_GPU_GEMM_TILES; forced++) {
            if (forced >= 0) setenv("FCONV_GPU_GEMM_TILE", fconv_gpu_gemm_tiles[forced].name, 1);
            for (int u = 0; u < 5; u++)
                for (int gather = 0; gather < 2; gather++) {
                    fconv_gpu_gemm_geometry g = fconv_gpu_gemm_geometry_of(p, cu[u], gather);
                    CHECK(g.tile >= 0 && g.tile < FCONV_GPU_GEMM_TILES &&
                          (forced < 0 || g.tile == forced));
                    CHECK(g.splits >= 1 && g.kchunk > 0 && g.kchunk % FCONV_GPU_GEMM_STEP == 0);
                    CHECK(g.splits * g.kchunk >= g.kd && (g.splits - 1) * g.kchunk < g.kd);
                    CHECK(g.part_floats == (g.splits > 1 ? g.splits * g.gchunk * kg * g.ncc : 0));
                    CHECK(g.part_floats <= cap && g.gemm_seconds > 0);
                    CHECK(g.direct == direct && g.gather == (gather && !direct) && g.ncc >= 1 &&
                          g.ncc <= g.nc && g.gchunk >= 1 && g.gchunk <= d.groups);
                    if (direct || gather)
                        CHECK(g.cols_floats == 0 && g.ncc == g.nc && g.gchunk == d.groups);
                    else
                        CHECK(g.cols_floats == g.gchunk * g.kd * g.ncc &&
                              (g.cols_floats <= cap || (g.gchunk == 1 && g.ncc <= 128)));
                }
            unsetenv("FCONV_GPU_GEMM_TILE");
        }
        fconv_plan_destroy(p);
    }
}

/* A random conv2d for algo (winograd: 3x3, stride 1, dilation 1): sizes that leave partial
 * 2x2 tiles and partial 64 x 64 / 2 x 16-tile blocks, asymmetric padding, groups, bias and
 * ReLU on or off, weights at plan or execute time. */
static void random_conv2d(fconv_algo algo, int winograd, int i) {
    int64_t groups = test_rand_int(1, 3), cg = test_rand_int(1, i % 4 == 0 ? 20 : 6);
    int64_t kg = test_rand_int(1, i % 3 == 0 ? 40 : 9);
    fconv_conv2d_desc d = {.n = test_rand_int(1, 2), .c = groups * cg, .k = groups * kg,
                           .r = winograd ? 3 : test_rand_int(1, 4),
                           .s = winograd ? 3 : test_rand_int(1, 4),
                           .stride_h = winograd ? 1 : test_rand_int(1, 3),
                           .stride_w = winograd ? 1 : test_rand_int(1, 3),
                           .dilation_h = winograd ? 1 : test_rand_int(1, 2),
                           .dilation_w = winograd ? 1 : test_rand_int(1, 3),
                           .pad_top = test_rand_int(0, 2), .pad_bottom = test_rand_int(0, 2),
                           .pad_left = test_rand_int(0, 2), .pad_right = test_rand_int(0, 1),
                           .groups = groups, .has_bias = (int)test_rand_int(0, 1),
                           .activation = test_rand_int(0, 1) ? FCONV_ACTIVATION_RELU
                                                             : FCONV_ACTIVATION_NONE};
    /* big enough for one output: (h + pads - dilation (r - 1) - 1) / stride + 1 >= 1 */
    int64_t eh = d.dilation_h * (d.r - 1) + 1, ew = d.dilation_w * (d.s - 1) + 1;
    d.h = test_rand_int(eh > 1 + d.pad_top ? eh : 1, 45);
    d.w = test_rand_int(ew > 1 + d.pad_left ? ew : 1, 70);
    if (d.h + d.pad_top + d.pad_bottom < eh) d.h = eh;
    if (d.w + d.pad_left + d.pad_right < ew) d.w = ew;
    int64_t nw = d.k * cg * d.r * d.s;
    float *w = malloc((size_t)nw * 4), *b = malloc((size_t)d.k * 4);
    fill(w, nw);
    fill(b, d.k);
    char what[200];
    snprintf(what, sizeof what,
             "conv2d #%d n%lld c%lld %lldx%lld k%lld %lldx%lld s%lld,%lld d%lld,%lld "
             "pad %lld,%lld,%lld,%lld g%lld bias%d relu%d", i, (long long)d.n, (long long)d.c,
             (long long)d.h, (long long)d.w, (long long)d.k, (long long)d.r, (long long)d.s,
             (long long)d.stride_h, (long long)d.stride_w, (long long)d.dilation_h,
             (long long)d.dilation_w, (long long)d.pad_top, (long long)d.pad_bottom,
             (long long)d.pad_left, (long long)d.pad_right, (long long)d.groups, d.has_bias,
             d.activation == FCONV_ACTIVATION_RELU);
    compare_ex(what, algo, 0, &d, w, d.has_bias ? b : NULL, i % 3 == 1);
    free(w);
    free(b);
}

/* compare() of a GEMM algorithm on conv2d d with random weights and bias (when d has one). */
static void compare_random_conv2d(const char *what, fconv_algo algo, const fconv_conv2d_desc *d) {
    int64_t nw = d->k * (d->c / (d->groups ? d->groups : 1)) * d->r * d->s;
    float *w = malloc((size_t)nw * 4), *b = malloc((size_t)d->k * 4);
    fill(w, nw);
    fill(b, d->k);
    compare(what, algo, 0, d, w, d->has_bias ? b : NULL);
    free(w);
    free(b);
}

/* gpu-im2col-gemm or gpu-implicit-gemm with the tile FCONV_GPU_GEMM_TILE forces (`forced`,
 * or -1: the model's): random shapes; layers of more than one block of 128 channels and
 * columns; a depthwise one; split-K (tiles too few for the device: the depth is cut and the
 * partial sums added by a second kernel), also per group; the 1x1 stride-1 path, which
 * reads x as it lies (columns across images, groups), with and without split-K; and once,
 * a column buffer beyond its 128 MiB cap (576 x 62500 floats per group: the groups and the
 * columns go in chunks, 2 groups x 2 column chunks; gathered, one pass). */
static void gemm_cases(fconv_algo algo, int forced) {
    for (int i = 0; i < 12; i++) random_conv2d(algo, 0, i + 12 * (forced + 1));
    static const fconv_conv2d_desc shapes[] = {
        {.n = 1, .c = 19, .h = 37, .w = 75, .k = 70, .r = 3, .s = 3, .pad_top = 1,
         .pad_bottom = 1, .pad_left = 1, .pad_right = 1, .has_bias = 1,
         .activation = FCONV_ACTIVATION_RELU},
        {.n = 2, .c = 40, .h = 20, .w = 30, .k = 260, .r = 3, .s = 3, .stride_h = 2,
         .stride_w = 1, .pad_top = 1, .pad_left = 2, .dilation_h = 2, .has_bias = 1},
        {.n = 2, .c = 12, .h = 9, .w = 14, .k = 12, .r = 3, .s = 3, .pad_top = 2, .pad_left = 1,
         .groups = 12},
        {.n = 1, .c = 300, .h = 6, .w = 6, .k = 70, .r = 3, .s = 3, .pad_top = 1,
         .pad_bottom = 1, .pad_left = 1, .pad_right = 1, .has_bias = 1,
         .activation = FCONV_ACTIVATION_RELU},
        {.n = 2, .c = 300, .h = 5, .w = 4, .k = 70, .r = 3, .s = 2, .pad_top = 1, .groups = 2,
         .has_bias = 1},
        {.n = 3, .c = 80, .h = 9, .w = 13, .k = 140, .r = 1, .s = 1, .groups = 2, .has_bias = 1,
         .activation = FCONV_ACTIVATION_RELU},
        {.n = 2, .c = 600, .h = 3, .w = 5, .k = 20, .r = 1, .s = 1},
        {.n = 1, .c = 1, .h = 1, .w = 1, .k = 1, .r = 1, .s = 1, .has_bias = 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "conv2d-gemm #%d tile %s", (int)i,
                 forced < 0 ? "auto" : fconv_gpu_gemm_tiles[forced].name);
        compare_random_conv2d(what, algo, &shapes[i]);
    }
    if (forced == 0) {
        fconv_conv2d_desc d = {.n = 1, .c = 128, .h = 250, .w = 250, .k = 6, .r = 3, .s = 3,
                               .pad_top = 1, .pad_bottom = 1, .pad_left = 1, .pad_right = 1,
                               .groups = 2, .has_bias = 1};
        compare_random_conv2d("conv2d-chunked", algo, &d);
    }
}

/* fconv_plan_device_bytes of conv2d plans on the device: the weights and bias kept there
 * plus each algorithm's buffers, by its walk (gpu-implicit-gemm: partial sums only;
 * gpu-im2col-gemm: columns and partial sums; Winograd: transformed filters, scratch). */
static void check_device_bytes(void) {
    fconv_conv2d_desc d = {.n = 2, .c = 24, .h = 30, .w = 26, .k = 40, .r = 3, .s = 3,
                           .pad_top = 1, .pad_bottom = 1, .pad_left = 1, .pad_right = 1,
                           .has_bias = 1};
    static const fconv_algo algos[] = {FCONV_ALGO_GPU_IMPLICIT_GEMM, FCONV_ALGO_GPU_IM2COL_GEMM,
                                       FCONV_ALGO_GPU_WINOGRAD_2X2, FCONV_ALGO_GPU_WINOGRAD_4X4,
                                       FCONV_ALGO_GPU_NAIVE};
    float *w = calloc(40 * 24 * 9, 4), b[40] = {0};
    for (int a = 0; a < 5; a++) {
        for (int late = 0; late < 2; late++) {
            fconv_options o = {.algo = algos[a], .device = dev};
            fconv_plan *p = NULL;
            CHECK(fconv_plan_conv2d(&d, &o, late ? NULL : w, late ? NULL : b, &p) == FCONV_OK);
            if (!p) continue;
            int64_t limits_cu = 0; /* the walk as prepare chose it, on this device */
            fconv_gpu_limits lim;
            const fconv_gpu_ops *ops = fconv_gpu_backend(dev);
            fconv_gpu *g = NULL;
            if (ops && ops->open(&g) == FCONV_OK) ops->limits(g, &lim), limits_cu = lim.compute_units;
            size_t want = late ? 0 : (40 * 24 * 9 + 40) * sizeof(float);
            if (a == 2 || a == 3) {
                int m = a == 2 ? 2 : 4;
                fconv_gpu_gemm_geometry gg = fconv_gpu_winograd_geometry_of(p, limits_cu, m);
                want += (size_t)((m + 2) * (m + 2) * 40 * 24 + gg.cols_floats + gg.part_floats) *
                        sizeof(float);
            } else if (a < 2) {
                fconv_gpu_gemm_geometry gg = fconv_gpu_gemm_geometry_of(p, limits_cu, a == 0);
                want += (size_t)(gg.cols_floats + gg.part_floats) * sizeof(float);
            }
            CHECKF(fconv_plan_device_bytes(p) == want, "%s%s: device bytes %zu, want %zu",
                   fconv_algo_name(algos[a]), late ? " (weights at execute)" : "",
                   fconv_plan_device_bytes(p), want);
            fconv_plan_destroy(p);
        }
    }
    free(w);
}

/* Planning algo for d fails with EUNSUPPORTED and a reason naming the algorithm. */
static void expect_decline(fconv_algo algo, const fconv_conv2d_desc *d, const char *reason) {
    fconv_options o = {.algo = algo, .device = dev};
    fconv_plan *p = NULL;
    int64_t groups = d->groups ? d->groups : 1; /* 0 means 1 */
    int64_t nw = d->k * (d->c / groups) * d->r * d->s;
    float *w = calloc((size_t)nw, 4);
    fconv_status st = fconv_plan_conv2d(d, &o, w, NULL, &p);
    CHECKF(st == FCONV_EUNSUPPORTED && p == NULL, "%s: expected a refusal (%s), got %d",
           fconv_algo_name(algo), reason, (int)st);
    CHECK_STR_CONTAINS(fconv_last_error(), reason);
    fconv_plan_destroy(p);
    free(w);
}

int main(int argc, char **argv) {
    test_init();
    dev = argc > 1 && strcmp(argv[1], "cuda") == 0 ? FCONV_DEVICE_CUDA : FCONV_DEVICE_OPENCL;
    const char *dname = dev == FCONV_DEVICE_CUDA ? "cuda" : "opencl";
    if (fconv_device_count(dev) == 0) {
        printf("SKIP: no %s device: %s\n", dname, fconv_last_error());
        return 77;
    }
    char name[256];
    CHECK(fconv_device_name(dev, 0, name, sizeof name) == FCONV_OK && strstr(name, dname));
    CHECK(fconv_device_name(dev, 999, name, sizeof name) == FCONV_EINVAL);

    /* A CPU algorithm on the device is refused, naming both. */
    fconv_conv1d_desc c1 = {.n = 100, .m = 7, .mode = FCONV_MODE_SAME};
    float k7[7];
    fill(k7, 7);
    fconv_plan *p = NULL;
    fconv_options direct_on_gpu = {.algo = FCONV_ALGO_DIRECT, .device = dev};
    CHECK(fconv_plan_conv1d(&c1, &direct_on_gpu, k7, &p) == FCONV_EUNSUPPORTED && p == NULL);
    CHECK_STR_CONTAINS(fconv_last_error(), "direct");
    CHECK_STR_CONTAINS(fconv_last_error(), dname);

    fconv_algo algos1[] = {FCONV_ALGO_GPU_NAIVE, FCONV_ALGO_GPU_CONSTANT, FCONV_ALGO_GPU_TILED_HALO,
                           FCONV_ALGO_GPU_TILED_GLOBAL, FCONV_ALGO_AUTO};
    for (size_t a = 0; a < sizeof algos1 / sizeof algos1[0]; a++)
        for (int mode = 0; mode < 3; mode++) {
            fconv_conv1d_desc d = {.n = 1000, .m = 37, .mode = (fconv_mode)mode, .correlate = mode == 1};
            float k[37];
            fill(k, 37);
            compare("conv1d", algos1[a], 2, &d, k, NULL);
        }
    /* gpu-tiled-halo's 4096-output blocks (16 outputs per thread): several blocks, masks of
     * 1-4 taps (no tap offset serves all four rows), a mask beyond a block, one beyond local
     * memory but within constant memory (runs the constant kernel), every mode. */
    {
        static const struct {
            int64_t n, m;
            fconv_mode mode;
        } shapes[] = {{20000, 1, FCONV_MODE_SAME}, {9001, 2, FCONV_MODE_FULL},
                      {12345, 3, FCONV_MODE_VALID}, {70000, 255, FCONV_MODE_SAME},
                      {5000, 4, FCONV_MODE_FULL}, {3000, 5000, FCONV_MODE_FULL},
                      {7, 7000, FCONV_MODE_SAME}, {1, 1, FCONV_MODE_VALID}};
        for (int i = 0; i < 8; i++) {
            fconv_conv1d_desc d = {.n = shapes[i].n, .m = shapes[i].m, .mode = shapes[i].mode,
                                   .correlate = i & 1};
            compare_random_mask("conv1d-blocks", FCONV_ALGO_GPU_TILED_HALO, 2, &d, d.m);
        }
    }
    /* A mask beyond constant memory falls back to the generic kernel, not an error. */
    {
        fconv_conv1d_desc d = {.n = 9000, .m = 8500, .mode = FCONV_MODE_VALID};
        compare_random_mask("conv1d-large", FCONV_ALGO_GPU_TILED_HALO, 2, &d, d.m);
    }
    fconv_algo algos2[] = {FCONV_ALGO_GPU_NAIVE, FCONV_ALGO_GPU_CONSTANT, FCONV_ALGO_GPU_TILED_HALO,
                           FCONV_ALGO_AUTO};
    for (size_t a = 0; a < sizeof algos2 / sizeof algos2[0]; a++)
        for (int border = 0; border < 6; border++) {
            fconv_filter2d_desc d = {.h = 37, .w = 45, .channels = 3, .kh = 5, .kw = 4,
                                     .mode = (fconv_mode)(border % 3), .border = (fconv_border)border,
                                     .border_value = 0.5f, .correlate = border & 1};
            float k[20];
            fill(k, 20);
            compare("filter2d", algos2[a], 1, &d, k, NULL);
        }
    /* gpu-tiled-halo's 64 x 64 blocks (4 x 4 outputs per thread): several blocks, interior
     * ones among them (loaded without remapping), masks taller than a block, a 1x1 image,
     * a mask beyond local memory (runs the constant-memory kernel), every border. */
    {
        static const struct {
            int64_t h, w, kh, kw;
            fconv_mode mode;
        } shapes[] = {{200, 150, 9, 7, FCONV_MODE_SAME},   {131, 67, 31, 31, FCONV_MODE_VALID},
                      {90, 80, 70, 3, FCONV_MODE_FULL},    {1, 1, 3, 3, FCONV_MODE_SAME},
                      {5, 300, 1, 11, FCONV_MODE_SAME},    {40, 30, 101, 101, FCONV_MODE_SAME}};
        for (int i = 0; i < 6; i++) {
            fconv_filter2d_desc d = {.h = shapes[i].h, .w = shapes[i].w, .channels = 1 + i % 3,
                                     .kh = shapes[i].kh, .kw = shapes[i].kw, .mode = shapes[i].mode,
                                     .border = (fconv_border)i, .border_value = -0.25f,
                                     .correlate = i & 1};
            compare_random_mask("filter2d-blocks", FCONV_ALGO_GPU_TILED_HALO, 1, &d, d.kh * d.kw);
        }
    }
    /* A NaN reaches exactly the outputs whose window holds it (no zero taps padded into
     * another output's sum), in the 2D and the 1D tiled kernel. */
    {
        fconv_filter2d_desc f = {.h = 130, .w = 130, .channels = 1, .kh = 5, .kw = 5,
                                 .mode = FCONV_MODE_SAME};
        check_nan_locality("filter2d", 1, &f, 130 * 130, 65 * 130 + 66, 62 * 130 + 66, 25, 25);
        fconv_conv1d_desc c = {.n = 10000, .m = 5, .mode = FCONV_MODE_SAME};
        check_nan_locality("conv1d", 2, &c, 10000, 5000, 4997, 5, 5);
    }
    fconv_algo algos3[] = {FCONV_ALGO_GPU_NAIVE, FCONV_ALGO_GPU_IMPLICIT_GEMM, FCONV_ALGO_AUTO};
    for (size_t a = 0; a < sizeof algos3 / sizeof algos3[0]; a++) {
        fconv_conv2d_desc d = {.n = 2, .c = 6, .h = 19, .w = 23, .k = 70, .r = 3, .s = 2,
                               .stride_h = 2, .pad_top = 1, .pad_left = 2, .pad_bottom = 0,
                               .pad_right = 1, .dilation_w = 2, .groups = 2, .has_bias = 1,
                               .activation = FCONV_ACTIVATION_RELU};
        float w[70 * 3 * 3 * 2], b[70];
        fill(w, 70 * 3 * 3 * 2);
        fill(b, 70);
        compare("conv2d", algos3[a], 0, &d, w, b);
    }

    check_gemm_geometry();
    check_device_bytes();

    /* gpu-winograd-2x2 and -4x4 on random shapes, with every tile of their GEMMs; the GEMMs
     * likewise (FCONV_GPU_GEMM_TILE). */
    static const fconv_algo winograds[] = {FCONV_ALGO_GPU_WINOGRAD_2X2,
                                           FCONV_ALGO_GPU_WINOGRAD_4X4};
    for (int a = 0; a < 2; a++) {
        fconv_algo algo = winograds[a];
        for (int i = 0; i < 24; i++) random_conv2d(algo, 1, i);
        /* Bigger than one tile block and one 64-channel block; weights at execute time; a
         * depthwise one. */
        fconv_conv2d_desc d = {.n = 1, .c = 19, .h = 37, .w = 75, .k = 70, .r = 3, .s = 3,
                               .pad_top = 1, .pad_bottom = 1, .pad_left = 1, .pad_right = 1,
                               .has_bias = 1, .activation = FCONV_ACTIVATION_RELU};
        float *w = malloc(70 * 19 * 9 * 4), b[70];
        fill(w, 70 * 19 * 9);
        fill(b, 70);
        compare("conv2d-wide", algo, 0, &d, w, b);
        compare_ex("conv2d-wide-late", algo, 0, &d, w, b, 1);
        fconv_conv2d_desc dw = {.n = 2, .c = 12, .h = 9, .w = 14, .k = 12, .r = 3, .s = 3,
                                .pad_top = 2, .pad_left = 1, .groups = 12};
        compare("conv2d-depthwise", algo, 0, &dw, w, NULL);
        free(w);
        /* (m + 2)^2 (C + K) floats per output tile exceed the 32 Mi-float scratch beyond 128
         * tiles: 192 tiles of 8192 channels (F(2x2)), 144 of 4096 (F(4x4)) go in two
         * chunks (groups of 16 channels keep it cheap). */
        int64_t ch = a ? 4096 : 8192;
        fconv_conv2d_desc dc = {.n = a ? 9 : 3, .c = ch, .h = 16, .w = 15, .k = ch, .r = 3,
                                .s = 3, .pad_top = 1, .pad_bottom = 1, .pad_left = 1,
                                .pad_right = 1, .groups = ch / 16, .has_bias = 1,
                                .activation = FCONV_ACTIVATION_RELU};
        compare_random_conv2d("conv2d-winograd-chunked", algo, &dc);
    }
    for (int i = 0; i < 6; i++) random_conv2d(FCONV_ALGO_AUTO, i % 2, i);
    for (int forced = -1; forced < FCONV_GPU_GEMM_TILES; forced++) {
        if (forced >= 0) setenv("FCONV_GPU_GEMM_TILE", fconv_gpu_gemm_tiles[forced].name, 1);
        gemm_cases(FCONV_ALGO_GPU_IM2COL_GEMM, forced);
        gemm_cases(FCONV_ALGO_GPU_IMPLICIT_GEMM, forced);
        for (int i = 0; i < 6; i++) {
            random_conv2d(FCONV_ALGO_GPU_WINOGRAD_2X2, 1, 100 + 6 * forced + i);
            random_conv2d(FCONV_ALGO_GPU_WINOGRAD_4X4, 1, 200 + 6 * forced + i);
        }
        unsetenv("FCONV_GPU_GEMM_TILE");
    }
    for (int a = 0; a < 2; a++) {
        /* gpu-winograd-2x2 / -4x4 decline what is not 3x3 / stride 1 / dilation 1, naming
         * themselves. */
        fconv_algo algo = winograds[a];
        const char *aname = fconv_algo_name(algo);
        char want[96];
        fconv_conv2d_desc d = {.n = 1, .c = 2, .h = 10, .w = 10, .k = 2, .r = 5, .s = 5};
        snprintf(want, sizeof want, "%s needs a 3x3 kernel, got 5x5", aname);
        expect_decline(algo, &d, want);
        d.r = d.s = 3;
        d.stride_w = 2;
        snprintf(want, sizeof want, "%s needs stride 1, got 1x2", aname);
        expect_decline(algo, &d, want);
        d.stride_w = 1;
        d.dilation_h = 2;
        snprintf(want, sizeof want, "%s needs dilation 1, got 2x1", aname);
        expect_decline(algo, &d, want);
        fconv_filter2d_desc f = {.h = 10, .w = 10, .channels = 1, .kh = 3, .kw = 3};
        float k9[9] = {0};
        fconv_options o = {.algo = algo, .device = dev};
        CHECK(fconv_plan_filter2d(&f, &o, k9, &p) == FCONV_EUNSUPPORTED && p == NULL);
        snprintf(want, sizeof want, "%s does not serve filter2d", aname);
        CHECK_STR_CONTAINS(fconv_last_error(), want);
        o.algo = FCONV_ALGO_GPU_IM2COL_GEMM;
        CHECK(fconv_plan_filter2d(&f, &o, k9, &p) == FCONV_EUNSUPPORTED && p == NULL);
        CHECK_STR_CONTAINS(fconv_last_error(), "gpu-im2col-gemm does not serve filter2d");
        /* ... and both are refused on the CPU, naming the device. */
        fconv_options cpu = {.algo = algo};
        d.dilation_h = 1;
        float w[2 * 2 * 9] = {0};
        CHECK(fconv_plan_conv2d(&d, &cpu, w, NULL, &p) == FCONV_EUNSUPPORTED && p == NULL);
        CHECK_STR_CONTAINS(fconv_last_error(), aname);
        CHECK_STR_CONTAINS(fconv_last_error(), "cpu");
    }
    /* AUTO on the device weighs every conv2d algorithm (planned only), here as on the H200,
     * whose times (ms) by gpu-winograd-4x4 / -2x2 / gpu-implicit-gemm / gpu-im2col-gemm were
     * 0.33 / 0.48 / 1.18 / 1.06 for VGG-16's 8 x 512 x 28^2 layer, 0.71 / 1.21 / 1.06 / 1.69
     * for its 8 x 64 x 224^2 one, 0.29 / 0.14 / 0.20 / 0.18 for 1 x 1024 x 16^2, and
     * 0.089 / 0.046 / 0.040 / 0.049 for ResNet-50's 1 x 512 x 7^2. */
    {
        static const struct {
            int64_t n, c, hw;
            fconv_algo want;
        } layers[] = {{8, 512, 28, FCONV_ALGO_GPU_WINOGRAD_4X4},
                      {8, 64, 224, FCONV_ALGO_GPU_WINOGRAD_4X4},
                      {1, 1024, 16, FCONV_ALGO_GPU_WINOGRAD_2X2},
                      {1, 512, 7, FCONV_ALGO_GPU_IMPLICIT_GEMM}};
        for (int i = 0; i < 4; i++) {
            int64_t c = layers[i].c;
            fconv_conv2d_desc d = {.n = layers[i].n, .c = c, .h = layers[i].hw, .w = layers[i].hw,
                                   .k = c, .r = 3, .s = 3, .pad_top = 1, .pad_bottom = 1,
                                   .pad_left = 1, .pad_right = 1};
            float *w = calloc((size_t)(c * c * 9), 4);
            fconv_options o = {.device = dev};
            CHECK(fconv_plan_conv2d(&d, &o, w, NULL, &p) == FCONV_OK);
            CHECKF(fconv_plan_algo(p) == layers[i].want, "AUTO chose %s for %lld x %lld x %lld^2",
                   fconv_algo_name(fconv_plan_algo(p)), (long long)layers[i].n, (long long)c,
                   (long long)layers[i].hw);
            fconv_plan_destroy(p);
            free(w);
        }
    }
    return test_finish();
}
