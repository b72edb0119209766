/*
 * bandwidth_1d.c — issue 4's 1D bandwidth target measured in one process: conv1d of n samples
 * by m taps (mode same, AUTO, `threads` threads) against its bound, a non-temporal copy of the
 * same n floats between the same two buffers on as many threads, the two alternated `reps`
 * times. On this VM a process's memory bandwidth is a draw: the same copy measured 50 GB/s in
 * one process and 80-95 in the next, minutes apart, while in one process fastconv and the copy
 * stayed within a few percent of each other; a bound taken in another process (as
 * bench/machine_peaks.c's was) measured that draw, not the code. Prints one JSON line: the
 * median times, the median of the per-round ratios (conv1d / copy) and the algorithm AUTO ran.
 * Built and run by bench/compare.py against the build tree's shared library:
 *
 *   gcc -O2 -mavx512f -fopenmp -Iinclude bench/bandwidth_1d.c -Lbuild -lfastconv \
 *       -Wl,-rpath,$PWD/build -o /tmp/bandwidth_1d && /tmp/bandwidth_1d 100000000 3 2 9
 */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "fastconv.h"

#if defined(__AVX512F__)
#define LANES 16
#define stream_copy(d, s) _mm512_stream_ps((d), _mm512_load_ps(s))
#else
#define LANES 8
#define stream_copy(d, s) _mm256_stream_ps((d), _mm256_load_ps(s))
#endif

static void copy(const float *x, float *y, size_t n, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i += LANES) stream_copy(y + i, x + i);
    _mm_sfence();
}

static int by_value(const void *a, const void *b) {
    const double u = *(const double *)a, v = *(const double *)b;
    return (u > v) - (u < v);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s samples taps threads reps\n", argv[0]);
        return 2;
    }
    const size_t n = (size_t)strtoull(argv[1], NULL, 10) / LANES * LANES;
    const int64_t m = atoll(argv[2]);
    const int threads = atoi(argv[3]), reps = atoi(argv[4]);
    if (n == 0 || m < 1 || threads < 1 || reps < 1 || reps > 1000) {
        fprintf(stderr, "bandwidth_1d: bad arguments\n");
        return 2;
    }
    float *x = aligned_alloc(64, n * sizeof *x), *y = aligned_alloc(64, n * sizeof *y);
    float *taps = malloc((size_t)m * sizeof *taps);
    double *t_conv = malloc(3 * (size_t)reps * sizeof *t_conv), *t_copy = t_conv + reps, *ratio = t_copy + reps;
    if (!x || !y || !taps || !t_conv) {
        fprintf(stderr, "bandwidth_1d: out of memory\n");
        return 1;
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) x[i] = y[i] = (float)(i % 1021) * 0.001f;
    for (int64_t k = 0; k < m; k++) taps[k] = 1.0f / (float)(k + 1);
    const fconv_conv1d_desc desc = {.n = (int64_t)n, .m = m, .mode = FCONV_MODE_SAME};
    const fconv_options options = {.threads = threads};
    fconv_plan *plan;
    if (fconv_plan_conv1d(&desc, &options, taps, &plan) != FCONV_OK) {
        fprintf(stderr, "bandwidth_1d: %s\n", fconv_last_error());
        return 1;
    }
    for (int r = 0; r < 2; r++) { /* warm-up: the threads started, both paths run once */
        fconv_execute(plan, x, NULL, NULL, y);
        copy(x, y, n, threads);
    }
    for (int r = 0; r < reps; r++) { /* alternated, the order swapped every round */
        for (int k = 0; k < 2; k++) {
            const double t0 = omp_get_wtime();
            if ((k + r) % 2 == 0) {
                if (fconv_execute(plan, x, NULL, NULL, y) != FCONV_OK) return 1;
                t_conv[r] = omp_get_wtime() - t0;
            } else {
                copy(x, y, n, threads);
                t_copy[r] = omp_get_wtime() - t0;
            }
        }
        ratio[r] = t_conv[r] / t_copy[r];
    }
    const char *algo = fconv_algo_name(fconv_plan_algo(plan));
    printf("{\"algo\": \"%s\", \"fastconv_ms\": %.3f, \"copy_ms\": %.3f, \"ratio\": %.4f}\n", algo ? algo : "?",
           median(t_conv, reps) * 1e3, median(t_copy, reps) * 1e3, median(ratio, reps));
    fconv_plan_destroy(plan);
    free(t_conv);
    free(taps);
    free(x);
    free(y);
    return 0;
}
