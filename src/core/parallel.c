/*
 * parallel.c — every OpenMP pragma of fastconv is in this file. Without OpenMP the same
 * functions run serial loops. Nested calls (a caller's parallel region, or a task that
 * itself calls into fastconv) run serially instead of oversubscribing the cores. Each region
 * hands its caller's run (fconv_run_begin) to its threads, so a task's failure reaches the
 * execute whatever thread runs it.
 */
#include "core/parallel.h"

#include <stdatomic.h>

#ifdef FCONV_HAVE_OPENMP
#include <omp.h>
#endif

/* The run this thread works for (fconv_run_begin here, or handed over for a region). */
static _Thread_local struct fconv_run *current_run;

void fconv_run_begin(struct fconv_run *run) {
    atomic_init(&run->failed, 0);
    run->outer = current_run;
    current_run = run;
}

int fconv_run_end(struct fconv_run *run) {
    current_run = run->outer;
    return atomic_load_explicit(&run->failed, memory_order_relaxed);
}

void fconv_run_fail(void) {
    if (current_run) atomic_store_explicit(&current_run->failed, 1, memory_order_relaxed);
}

#ifdef FCONV_HAVE_OPENMP
/* Makes `run` this thread's current run (a region's threads take their caller's) and returns
 * the one it replaces, which the thread takes back when the region's work is done. */
static struct fconv_run *hand_run(struct fconv_run *run) {
    struct fconv_run *own = current_run;
    current_run = run;
    return own;
}
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
    struct fconv_run *run = current_run;
#pragma omp parallel num_threads(t)
    {
        struct fconv_run *own = hand_run(run);
#pragma omp for schedule(static) nowait /* the region ends with a barrier */
        for (long long i = 0; i < count; i++) task(ctx, (size_t)i);
        hand_run(own);
    }
#endif
}

/* Threads fconv_parallel_steal runs at most (its shares live on the stack, 64 bytes each). */
#define STEAL_MAX_THREADS 256

#ifdef FCONV_HAVE_OPENMP
/* One worker's share of the pieces: the next one's first item, taken by fetch-and-add, on a
 * cache line of its own. */
struct steal_share {
    _Alignas(64) atomic_size_t next;
    size_t end;
};

/* Worker `worker`'s own share first, then the others' in turn. */
static void steal_worker(struct steal_share *shares, size_t count, size_t grain, size_t worker,
                         fconv_task_range task, const void *ctx) {
    for (size_t k = 0; k < count; k++) {
        struct steal_share *share = &shares[(worker + k) % count];
        for (;;) {
            const size_t begin = atomic_fetch_add_explicit(&share->next, grain, memory_order_relaxed);
            if (begin >= share->end) break;
            task(ctx, begin, begin + grain < share->end ? begin + grain : share->end, worker);
        }
    }
}
#endif

#ifdef FCONV_HAVE_OPENMP
/* fconv_parallel_steal on t > 1 threads, a function of its own so that the shares' 16 KiB of
 * stack are taken only there (a serial call, as in a task or a one-thread plan, runs on the
 * caller's stack, which a caller's thread may have sized small). */
static __attribute__((noinline)) void steal_region(int t, size_t n, size_t pieces, size_t grain,
                                                   fconv_task_range task, const void *ctx) {
    struct steal_share shares[STEAL_MAX_THREADS];
    for (int w = 0; w < t; w++) {
        const size_t begin = (size_t)w * pieces / (size_t)t * grain, end = ((size_t)w + 1) * pieces / (size_t)t * grain;
        atomic_init(&shares[w].next, begin);
        shares[w].end = end < n ? end : n;
    }
    /* Fewer threads than asked for (OMP_THREAD_LIMIT) leave shares without an owner: the
     * others take them. */
    struct fconv_run *run = current_run;
#pragma omp parallel num_threads(t)
    {
        struct fconv_run *own = hand_run(run);
        steal_worker(shares, (size_t)t, grain, (size_t)omp_get_thread_num(), task, ctx);
        hand_run(own);
    }
}
#endif

void fconv_parallel_steal(int threads, size_t n, size_t grain, fconv_task_range task, const void *ctx) {
    if (grain == 0) grain = 1;
    const size_t pieces = (n + grain - 1) / grain;
    int t = effective_threads(threads, pieces);
    if (t > STEAL_MAX_THREADS) t = STEAL_MAX_THREADS;
    if (t == 1) {
        for (size_t begin = 0; begin < n; begin += grain) task(ctx, begin, begin + grain < n ? begin + grain : n, 0);
        return;
    }
#ifdef FCONV_HAVE_OPENMP
    steal_region(t, n, pieces, grain, task, ctx);
#endif
}

/* An item task (1d, or 2d over nj columns) as a range task for fconv_parallel_steal. */
struct item_tasks {
    fconv_task_1d task_1d;
    fconv_task_2d task_2d;
    size_t nj;
    const void *ctx;
};

static void item_range(const void *vctx, size_t begin, size_t end, size_t worker) {
    (void)worker;
    const struct item_tasks *it = vctx;
    for (size_t i = begin; i < end; i++) {
        if (it->task_1d) it->task_1d(it->ctx, i);
        else it->task_2d(it->ctx, i / it->nj, i % it->nj);
    }
}

void fconv_parallel_1d_steal(int threads, size_t n, fconv_task_1d task, const void *ctx) {
    const struct item_tasks it = {task, NULL, 1, ctx};
    fconv_parallel_steal(threads, n, 1, item_range, &it);
}

void fconv_parallel_2d_steal(int threads, size_t ni, size_t nj, fconv_task_2d task, const void *ctx) {
    const struct item_tasks it = {NULL, task, nj, ctx};
    fconv_parallel_steal(threads, ni * nj, 1, item_range, &it);
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
    struct fconv_run *run = current_run;
#pragma omp parallel num_threads(t)
    {
        struct fconv_run *own = hand_run(run);
#pragma omp for schedule(static) nowait /* the region ends with a barrier */
        for (long long ij = 0; ij < count; ij++) task(ctx, (size_t)ij / nj, (size_t)ij % nj);
        hand_run(own);
    }
#endif
}
