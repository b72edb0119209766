/*
 * parallel.c — every OpenMP pragma of fastconv is in this file. Without OpenMP the same
 * functions run serial loops. Nested calls (a caller's parallel region, or a task that
 * itself calls into fastconv) run serially instead of oversubscribing the cores.
 */
#include "core/parallel.h"

#ifdef FCONV_HAVE_OPENMP
#include <omp.h>
#endif

int fconv_parallel_default_threads(void) {
#ifdef FCONV_HAVE_OPENMP
    int n = omp_get_max_threads();
    return n > 0 ? n : 1;
#else
    return 1;
#endif
}

static int effective_threads(int threads, size_t n) {
#ifdef FCONV_HAVE_OPENMP
    if (threads <= 1 || n <= 1 || omp_in_parallel()) return 1;
    if ((size_t)threads > n) return (int)n;
    return threads;
#else
    (void)threads;
    (void)n;
    return 1;
#endif
}

void fconv_parallel_1d(int threads, size_t n, fconv_task_1d task, const void *ctx) {
    int t = effective_threads(threads, n);
    if (t == 1) {
        for (size_t i = 0; i < n; i++) task(ctx, i);
        return;
    }
#ifdef FCONV_HAVE_OPENMP
    long long count = (long long)n;
#pragma omp parallel for num_threads(t) schedule(static)
    for (long long i = 0; i < count; i++) task(ctx, (size_t)i);
#endif
}

void fconv_parallel_2d(int threads, size_t ni, size_t nj, fconv_task_2d task, const void *ctx) {
    size_t n = ni * nj;
    int t = effective_threads(threads, n);
    if (t == 1) {
        for (size_t i = 0; i < ni; i++)
            for (size_t j = 0; j < nj; j++) task(ctx, i, j);
        return;
    }
#ifdef FCONV_HAVE_OPENMP
    long long count = (long long)n;
#pragma omp parallel for num_threads(t) schedule(static)
    for (long long ij = 0; ij < count; ij++) task(ctx, (size_t)ij / nj, (size_t)ij % nj);
#endif
}
