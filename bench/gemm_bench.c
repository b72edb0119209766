/*
 * gemm_bench.c — fconv_gemm on the shapes the GEMM-based algorithms produce, GFLOP/s of the
 * fastest of 15 runs after a 0.3 s warm-up (the best run shows the code, not the noise of
 * a shared VM). The backend follows FCONV_GEMM as in the library (unset: the shape rule of
 * gemm-blas.c; "packed": fastconv's own GEMM for every shape). A second column times
 * fconv_gemm_prepacked with A packed beforehand, as im2col's and MEC's conv2d layers run it
 * (their weights packed at plan time). Build against a build tree:
 *
 *   gcc -O2 -Isrc -Iinclude bench/gemm_bench.c build/libfastconv.a -lopenblas -lm -fopenmp \
 *       -o /tmp/gemm_bench && /tmp/gemm_bench 2
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/dispatch.h"
#include "kernels/gemm/gemm.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void run(const struct fconv_kernels *kern, int threads, int prepacked, size_t m, size_t n, size_t k,
                const float *a, const float *packed, const float *b, float *c) {
    if (prepacked)
        fconv_gemm_prepacked(kern, threads, m, n, k, packed, b, n, c, n, 0, NULL, 0);
    else
        fconv_gemm(threads, 0, 0, m, n, k, a, k, b, n, 0, c, n);
}

int main(int argc, char **argv) {
    static const size_t shapes[][3] = {
        {64, 3136, 256},  {64, 3136, 576}, {256, 3136, 64}, {64, 12544, 147}, {64, 196, 64},
        {128, 784, 128},  {256, 196, 2304}, {512, 49, 4608}, {256, 196, 256}, {64, 36, 64},
        {512, 784, 128},  {256, 784, 512}, {1024, 196, 256}, {2048, 49, 512},
    };
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    printf("%s; %d thread(s)\n", fconv_gemm_report(), threads);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b), *c = malloc(m * n * sizeof *c);
        if (!a || !b || !c) return 1;
        for (size_t i = 0; i < m * k; i++) a[i] = (float)(i % 7) * 0.1f;
        for (size_t i = 0; i < k * n; i++) b[i] = (float)(i % 5) * 0.1f;
        const struct fconv_kernels *kern = fconv_kernels_for(FCONV_ISA_AUTO);
        float *packed = aligned_alloc(64, (fconv_gemm_packed_a_floats(kern, m, k) * sizeof(float) + 63) / 64 * 64);
        if (!packed) return 1;
        fconv_gemm_pack_a(kern, m, k, a, k, packed);
        double best[2];
        for (int prepacked = 0; prepacked < 2; prepacked++) {
            best[prepacked] = 1e30;
            for (double t0 = now(); now() - t0 < 0.3;) /* warm-up */
                run(kern, threads, prepacked, m, n, k, a, packed, b, c);
            for (int r = 0; r < 15; r++) {
                double t = now();
                run(kern, threads, prepacked, m, n, k, a, packed, b, c);
                t = now() - t;
                if (t < best[prepacked]) best[prepacked] = t;
            }
        }
        printf("%5zu x %5zu x %5zu  %6.1f GFLOP/s  prepacked A %6.1f GFLOP/s\n", m, n, k,
               2.0 * (double)(m * n * k) / best[0] / 1e9, 2.0 * (double)(m * n * k) / best[1] / 1e9);
        free(packed);
        free(a);
        free(b);
        free(c);
    }
    return 0;
}
