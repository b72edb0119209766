/*
 * machine_peaks.c — the two roofs the benchmark tables are read against, measured rather than
 * taken from /proc/cpuinfo (whose clock is the nominal one): the FMA rate of every core
 * (12 independent AVX2 FMA chains per thread, all threads at once) and the memory bandwidth
 * of a 64 MiB -> 64 MiB copy on all threads with ordinary and with non-temporal stores.
 * Prints "fma_gflops copy_gbs stream_gbs". Built and run by bench/compare.py:
 *
 *   gcc -O3 -mavx2 -mfma -fopenmp bench/machine_peaks.c -o /tmp/machine_peaks
 */
#define _POSIX_C_SOURCE 200809L
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CHAINS 12
#define ITERS 50000000L

static float fma_chains(void) {
    __m256 acc[CHAINS];
    const __m256 m = _mm256_set1_ps(0.999f), d = _mm256_set1_ps(0.001f);
    for (int i = 0; i < CHAINS; i++) acc[i] = _mm256_set1_ps((float)i);
    for (long r = 0; r < ITERS; r++)
        for (int i = 0; i < CHAINS; i++) acc[i] = _mm256_fmadd_ps(acc[i], m, d);
    float out[8], s = 0.0f;
    for (int i = 0; i < CHAINS; i++) {
        _mm256_storeu_ps(out, acc[i]);
        s += out[0];
    }
    return s;
}

int main(void) {
    int threads = omp_get_max_threads();
    double best = 1e30;
    volatile float sink = 0.0f;
    for (int rep = 0; rep < 3; rep++) {
        double t = now();
#pragma omp parallel reduction(+ : sink)
        sink += fma_chains();
        t = now() - t;
        if (t < best) best = t;
    }
    double fma = 2.0 * 8 * CHAINS * (double)ITERS * threads / best / 1e9;

    size_t n = (size_t)16 << 20;
    float *a = aligned_alloc(64, n * sizeof *a), *b = aligned_alloc(64, n * sizeof *b);
    if (!a || !b) return 1;
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) a[i] = b[i] = (float)(i & 1023);
    double gbs[2];
    for (int stream = 0; stream < 2; stream++) {
        best = 1e30;
        for (int rep = 0; rep < 10; rep++) {
            double t = now();
#pragma omp parallel for
            for (size_t i = 0; i < n; i += 8) {
                __m256 v = _mm256_load_ps(a + i);
                if (stream) _mm256_stream_ps(b + i, v);
                else _mm256_store_ps(b + i, v);
            }
            t = now() - t;
            if (t < best) best = t;
        }
        gbs[stream] = 2.0 * (double)n * sizeof(float) / best / 1e9;
    }
    printf("%.1f %.1f %.1f\n", fma, gbs[0], gbs[1]);
    free(a);
    free(b);
    return sink == 12345.0f;
}
