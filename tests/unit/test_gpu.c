/*
 * test_gpu.c — the GPU layer through the public API on one device (argv[1]: opencl or cuda):
 * every GPU algorithm against the CPU reference on filter2d (every border), conv1d and
 * conv2d shapes, device timing, CPU algorithms refused on the device. Exits 77 (skip) with
 * the reason when the device is absent, e.g. CUDA on a machine without an NVIDIA GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fastconv.h"
#include "test.h"

static fconv_device dev;

static void fill(float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) a[i] = (float)((double)(test_rand_u64() % 2001) / 1000.0 - 1.0);
}

/* Plan on the device with algo and on the CPU with the reference; compare outputs with the
 * normalized bound 1e-5 (scale: max |y_ref| + 1, a loose but failing-capable check). */
static void compare(const char *what, fconv_algo algo, int kind, const void *desc, const float *w,
                    const float *bias) {
    fconv_options g = {.algo = algo, .device = dev}, c = {.algo = FCONV_ALGO_REFERENCE};
    fconv_plan *pg = NULL, *pc = NULL;
    fconv_status sg, sc;
    if (kind == 0) {
        sg = fconv_plan_conv2d(desc, &g, w, bias, &pg);
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
    sg = fconv_execute(pg, x, NULL, NULL, yg);
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
    /* A mask beyond constant memory falls back to the generic kernel, not an error. */
    {
        fconv_conv1d_desc d = {.n = 9000, .m = 8500, .mode = FCONV_MODE_VALID};
        float *k = malloc(8500 * 4);
        fill(k, 8500);
        compare("conv1d-large", FCONV_ALGO_GPU_TILED_HALO, 2, &d, k, NULL);
        free(k);
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
    return test_finish();
}
