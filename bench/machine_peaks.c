/*
 * machine_peaks.c — the two roofs the benchmark tables are read against, measured rather than
 * taken from /proc/cpuinfo (whose clock is the nominal one): the FMA rate of every core
 * (12 independent FMA chains per thread of the widest vector it is compiled for, AVX-512 or
 * AVX2, all threads at once) and the memory bandwidth of a 256 MiB -> 256 MiB copy on all
 * threads with ordinary and with non-temporal stores. Prints "fma_gflops copy_gbs stream_gbs
 * lanes stream_median_gbs": the roofs from each copy's fastest of 10 runs, and the median of
 * the 10 non-temporal ones, which compare.py holds a median time against (this VM's
 * bandwidth swings by 2x from one minute to the next). Built and run by bench/compare.py,
 * with AVX-512 where the CPU has it:
 *
 *   gcc -O3 -mavx512f -mfma -fopenmp bench/machine_peaks.c -o /tmp/machine_peaks   (or -mavx2)
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

#ifdef __AVX512F__
#define LANES 16
typedef __m512 vec;
#define vec_set1 _mm512_set1_ps
#define vec_fma _mm512_fmadd_ps
#define vec_load _mm512_load_ps
#define vec_store _mm512_store_ps
#define vec_storeu _mm512_storeu_ps
#define vec_stream _mm512_stream_ps
#else
#define LANES 8
typedef __m256 vec;
#define vec_set1 _mm256_set1_ps
#define vec_fma _mm256_fmadd_ps
#define vec_load _mm256_load_ps
#define vec_store _mm256_store_ps
#define vec_storeu _mm256_storeu_ps
#define vec_stream _mm256_stream_ps
#endif

static float fma_chains(void) {
    vec acc[CHAINS];
    const vec m = vec_set1(0.999f), d = vec_set1(0.001f);
    for (int i = 0; i < CHAINS; i++) acc[i] = vec_set1((float)i);
    for (long r = 0; r < ITERS; r++)
        for (int i = 0; i < CHAINS; i++) acc[i] = vec_fma(acc[i], m, d);
    float out[LANES], s = 0.0f;
    for (int i = 0; i < CHAINS; i++) {
        vec_storeu(out, acc[i]);
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
    double fma = 2.0 * LANES * CHAINS * (double)ITERS * threads / best / 1e9;

    size_t n = (size_t)64 << 20; /* 256 MiB a buffer: with 64 MiB the 32 MiB L3 kept part of the source and the
                                    * copy measured 48-85 GB/s; with 256 MiB 38-45 */
    float *a = aligned_alloc(64, n * sizeof *a), *b = aligned_alloc(64, n * sizeof *b);
    if (!a || !b) return 1;
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) a[i] = b[i] = (float)(i & 1023);
    double gbs[2], times[10];
    for (int stream = 0; stream < 2; stream++) {
        best = 1e30;
        for (int rep = 0; rep < 10; rep++) {
            double t = now();
#pragma omp parallel for
            for (size_t i = 0; i < n; i += LANES) {
                vec v = vec_load(a + i);
                if (stream) vec_stream(b + i, v);
                else vec_store(b + i, v);
            }
            t = now() - t;
            if (t < best) best = t;
            times[rep] = t;
        }
        gbs[stream] = 2.0 * (double)n * sizeof(float) / best / 1e9;
    }
    for (int i = 1; i < 10; i++) /* the non-temporal times sorted, for their median */
        for (int j = i; j > 0 && times[j] < times[j - 1]; j--) {
            double swap = times[j];
            times[j] = times[j - 1];
            times[j - 1] = swap;
        }
    double median = 2.0 * (double)n * sizeof(float) / ((times[4] + times[5]) / 2) / 1e9;
    printf("%.1f %.1f %.1f %d %.1f\n", fma, gbs[0], gbs[1], LANES, median);
    free(a);
    free(b);
    return sink == 12345.0f;
}
