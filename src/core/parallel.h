/*
 * parallel.h — the only ways fastconv runs work on several threads. Every OpenMP pragma
 * lives in parallel.c; drivers pass a task function and a const context (NNPACK's shape).
 */
#ifndef FCONV_PARALLEL_H
#define FCONV_PARALLEL_H

#include <stdatomic.h>
#include <stddef.h>

/* task(ctx, i) for i in [0, n), on up to `threads` threads (1: serial, in the caller).
 * Iterations are split statically into contiguous chunks, so which thread computes an
 * output never changes the result. Runs serially when already inside a parallel region. */
typedef void (*fconv_task_1d)(const void *ctx, size_t i);
void fconv_parallel_1d(int threads, size_t n, fconv_task_1d task, const void *ctx);

/* task(ctx, i, j) for i in [0, ni), j in [0, nj): the ni*nj pairs are shared out as one range. */
typedef void (*fconv_task_2d)(const void *ctx, size_t i, size_t j);
void fconv_parallel_2d(int threads, size_t ni, size_t nj, fconv_task_2d task, const void *ctx);

/* task(ctx, begin, end, worker) over pieces of [0, n): worker w (0 .. threads-1) owns the
 * w-th contiguous share of the pieces (fconv_parallel_1d's static split) and goes through it
 * in order, `grain` items a piece (pieces start at multiples of grain); a worker done with
 * its share then takes the pieces the others have not begun. A static split waits on the
 * slower thread, and this VM's two vCPUs can run at very unequal speeds (docs/benchmarks.md:
 * one 1.65x slower for minutes); a dynamic one loses what each thread keeps in its caches
 * from its own share, where stealing moves only the last pieces. Which worker computes a
 * piece must not change its result. */
typedef void (*fconv_task_range)(const void *ctx, size_t begin, size_t end, size_t worker);
void fconv_parallel_steal(int threads, size_t n, size_t grain, fconv_task_range task, const void *ctx);

/* fconv_parallel_1d's and fconv_parallel_2d's tasks shared out as fconv_parallel_steal does,
 * one item a piece (the 2d pairs as one range, j fastest). */
void fconv_parallel_1d_steal(int threads, size_t n, fconv_task_1d task, const void *ctx);
void fconv_parallel_2d_steal(int threads, size_t ni, size_t nj, fconv_task_2d task, const void *ctx);

/* Threads used for threads == 0 (the OpenMP default; 1 without OpenMP). */
int fconv_parallel_default_threads(void);

/* A run: one execute's algorithm. A task that cannot do its work (its thread's scratch not
 * allocated: core/scratch.h) calls fconv_run_fail, and the run that began on the calling
 * thread (fconv_run_begin, core/plan.c) then ends failed; the functions above hand the run
 * to every thread of their region. A task outside any run fails silently. */
struct fconv_run {
    atomic_int failed;
    struct fconv_run *outer; /* the run this one interrupted on the thread, or NULL */
};
void fconv_run_begin(struct fconv_run *run);
/* Ends the thread's current run (`run`); nonzero: a task failed. */
int fconv_run_end(struct fconv_run *run);
void fconv_run_fail(void);

#endif
