/*
 * test_reliability_threads.c — one plan executed from many threads at once (16 pthreads,
 * each on its own output, with library-allocated and caller-given workspaces) gives exactly
 * the serial results; calls from inside the caller's OpenMP parallel region run serially
 * (no nested team) and do not deadlock; results are bit-identical across runs and across
 * 1, 2, 3, 4 and 8 threads for every algorithm and every kind of problem; the stealing
 * split (fconv_parallel_steal) runs every item once and moves a held-up worker's rest; a
 * thread with a small stack runs every algorithm.
 * FCONV_TEST_PLAN_THREADS=1 (the ThreadSanitizer run: libgomp is not instrumented) keeps
 * every plan serial so only the caller's pthreads run concurrently.
 */
#include <pthread.h>

#include "reliability-problems.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/parallel.h"

#define N_PTHREADS 16
#define RUNS_PER_THREAD 3

static int plan_threads(int wanted) {
    const char *s = getenv("FCONV_TEST_PLAN_THREADS");
    return s && *s ? atoi(s) : wanted;
}

struct worker {
    const fconv_plan *plan;
    const rel_buffers *b;
    const float *expected;
    int use_own_workspace;
    int mismatches, errors;
};

static void *worker_main(void *arg) {
    struct worker *wk = arg;
    const rel_buffers *b = wk->b;
    float *y = malloc((size_t)b->yn * sizeof *y);
    size_t ws = fconv_plan_workspace_size(wk->plan);
    void *space = wk->use_own_workspace && ws ? malloc(ws) : NULL;
    if (!y || (wk->use_own_workspace && ws && !space)) {
        wk->errors++;
    } else {
        for (int r = 0; r < RUNS_PER_THREAD; r++) {
            memset(y, 0xFF, (size_t)b->yn * sizeof *y); /* NaN: stale data cannot pass */
            fconv_status st = wk->use_own_workspace
                                  ? fconv_execute_with_workspace(wk->plan, b->x, b->w, b->bias, y, space, ws)
                                  : fconv_execute(wk->plan, b->x, b->w, b->bias, y);
            if (st != FCONV_OK) wk->errors++;
            else if (memcmp(y, wk->expected, (size_t)b->yn * sizeof *y) != 0) wk->mismatches++;
        }
    }
    free(space);
    free(y);
    return NULL;
}

/* For every algorithm serving each fixed problem: N_PTHREADS threads run the one plan at
 * once, half with their own workspace; every result must equal the serial one bit for bit. */
static void test_one_plan_many_pthreads(void) {
    int plans = 0;
    for (int which = 0; which < 3; which++) {
        rel_problem p = rel_fixed(which);
        for (int a = 1; a < FCONV_ALGO_COUNT_; a++) {
            fconv_options o = {.algo = (fconv_algo)a, .threads = plan_threads(2)};
            fconv_plan *probe = NULL;
            if (rel_plan(&p, &o, NULL, NULL, &probe) != FCONV_OK) continue;
            rel_buffers b;
            CHECK(rel_alloc(&p, probe, &b) == 0);
            fconv_plan_destroy(probe);
            /* The weights go into the plan (pre-transformed where the algorithm does that),
             * so separable runs too when the kernel is rank-1. */
            fconv_plan *plan = NULL;
            if (rel_plan(&p, &o, b.w, b.bias, &plan) != FCONV_OK) {
                rel_free(&b);
                continue;
            }
            plans++;
            float *expected = malloc((size_t)b.yn * sizeof *expected);
            CHECK(expected != NULL);
            rel_buffers bp = b; /* the plan holds w and bias: pass NULL */
            bp.w = NULL;
            bp.bias = NULL;
            CHECK_EQ_INT(fconv_execute(plan, b.x, NULL, NULL, expected), FCONV_OK);
            pthread_t th[N_PTHREADS];
            struct worker wk[N_PTHREADS];
            for (int t = 0; t < N_PTHREADS; t++) {
                wk[t] = (struct worker){plan, &bp, expected, t % 2, 0, 0};
                CHECK(pthread_create(&th[t], NULL, worker_main, &wk[t]) == 0);
            }
            for (int t = 0; t < N_PTHREADS; t++) {
                pthread_join(th[t], NULL);
                CHECKF(wk[t].errors == 0 && wk[t].mismatches == 0,
                       "%s, problem %d, thread %d: %d errors, %d mismatches",
                       fconv_algo_name((fconv_algo)a), which, t, wk[t].errors, wk[t].mismatches);
            }
            free(expected);
            fconv_plan_destroy(plan);
            rel_free(&b);
        }
    }
    CHECKF(plans >= 8, "only %d plans exercised", plans);
}

/* Every algorithm serving each fixed problem and a few-channel layer wide enough for direct's
 * in-place rows and edge blocks, one thread a plan, executed on a pthread with a 512 KiB
 * stack: the same bits as on this thread. Static thread-local buffers (1.4 MiB of them until
 * 2026-11-30, now core/scratch.h) made such a thread fail to start (EINVAL), and 32 KiB
 * stack strips deepened direct's calls. */
#if defined(__SANITIZE_ADDRESS__)
/* AddressSanitizer's redzones around the kernels' spilled register arrays: one direct-rows
 * frame alone ~470 KiB */
#define SMALL_STACK_BYTES ((size_t)4 << 20)
#else
#define SMALL_STACK_BYTES ((size_t)512 << 10)
#endif
static void test_small_stack_threads(void) {
    int plans = 0;
    for (int which = 0; which < 4; which++) {
        rel_problem p = rel_fixed(which);
        if (which == 3)
            p.c2 = (fconv_conv2d_desc){.n = 1, .c = 3, .h = 9, .w = 400, .k = 1, .r = 3, .s = 3, .pad_top = 1,
                                       .pad_left = 1, .pad_bottom = 1, .pad_right = 1};
        for (int a = 1; a < FCONV_ALGO_COUNT_; a++) {
            fconv_options o = {.algo = (fconv_algo)a, .threads = 1};
            fconv_plan *plan = NULL;
            if (rel_plan(&p, &o, NULL, NULL, &plan) != FCONV_OK) continue;
            rel_buffers b;
            CHECK(rel_alloc(&p, plan, &b) == 0);
            float *expected = malloc((size_t)b.yn * sizeof *expected);
            CHECK(expected != NULL);
            if (fconv_execute(plan, b.x, b.w, b.bias, expected) == FCONV_OK) { /* separable: rank-1 only */
                plans++;
                pthread_attr_t attr;
                pthread_t th;
                struct worker wk = {plan, &b, expected, 0, 0, 0};
                CHECK(pthread_attr_init(&attr) == 0);
                CHECK(pthread_attr_setstacksize(&attr, SMALL_STACK_BYTES) == 0);
                int started = pthread_create(&th, &attr, worker_main, &wk);
                CHECKF(started == 0, "%s, problem %d: a thread with a %zu KiB stack did not start (%d)",
                       fconv_algo_name((fconv_algo)a), which, SMALL_STACK_BYTES >> 10, started);
                if (started == 0) pthread_join(th, NULL);
                pthread_attr_destroy(&attr);
                CHECKF(wk.errors == 0 && wk.mismatches == 0, "%s, problem %d: %d errors, %d mismatches",
                       fconv_algo_name((fconv_algo)a), which, wk.errors, wk.mismatches);
            }
            free(expected);
            fconv_plan_destroy(plan);
            rel_free(&b);
        }
    }
    CHECKF(plans >= 10, "only %d plans exercised", plans);
}

/* Plans made and destroyed concurrently (FFTW's planner is not thread-safe: the library
 * serializes it) while others execute. */
static void *plan_churn(void *arg) {
    int *failures = arg;
    for (int i = 0; i < 20; i++) {
        rel_problem p = rel_fixed(i);
        fconv_options o = {.algo = i % 2 ? FCONV_ALGO_FFT : FCONV_ALGO_AUTO, .threads = 1};
        fconv_plan *plan = NULL;
        fconv_status st = rel_plan(&p, &o, NULL, NULL, &plan);
        if (st != FCONV_OK && st != FCONV_EUNSUPPORTED) (*failures)++;
        fconv_plan_destroy(plan);
    }
    return NULL;
}

static void test_concurrent_planning(void) {
    pthread_t th[8];
    int failures[8] = {0};
    for (int t = 0; t < 8; t++) CHECK(pthread_create(&th[t], NULL, plan_churn, &failures[t]) == 0);
    for (int t = 0; t < 8; t++) {
        pthread_join(th[t], NULL);
        CHECK_EQ_INT(failures[t], 0);
    }
}

#ifdef _OPENMP
struct level_probe {
    int *levels; /* omp_get_level() seen by each task */
};

static void record_level(const void *ctx, size_t i) {
    const struct level_probe *c = ctx;
    c->levels[i] = omp_get_level();
}

/* Inside the caller's parallel region (nesting even allowed), the library runs its loops
 * in the calling thread — no nested team, so no oversubscription — and every thread of the
 * region gets the serial result (no deadlock: the test finishes). */
static void test_inside_caller_openmp_region(void) {
    int saved_levels = omp_get_max_active_levels();
    omp_set_max_active_levels(4); /* the worst case: the caller enabled nesting */
    enum { TEAM = 4, TASKS = 64 };
    int levels[TEAM][TASKS];
    memset(levels, 0, sizeof levels);
#pragma omp parallel num_threads(TEAM)
    {
        struct level_probe c = {levels[omp_get_thread_num()]};
        fconv_parallel_1d(8, TASKS, record_level, &c);
    }
    int nested = 0;
    for (int t = 0; t < TEAM; t++)
        for (int i = 0; i < TASKS; i++) nested += levels[t][i] != 1; /* 2 would be a nested team */
    CHECKF(nested == 0, "%d tasks ran in a nested team", nested);

    rel_problem p = rel_fixed(0);
    fconv_options o = {.threads = 8};
    fconv_plan *plan = NULL;
    CHECK_EQ_INT(rel_plan(&p, &o, NULL, NULL, &plan), FCONV_OK);
    if (plan) {
        rel_buffers b;
        CHECK(rel_alloc(&p, plan, &b) == 0);
        float *expected = malloc((size_t)b.yn * sizeof *expected);
        float *ys = malloc((size_t)TEAM * (size_t)b.yn * sizeof *ys);
        CHECK(expected && ys);
        CHECK_EQ_INT(fconv_execute(plan, b.x, b.w, b.bias, expected), FCONV_OK);
        int errors = 0;
#pragma omp parallel num_threads(TEAM) reduction(+ : errors)
        {
            float *y = ys + (size_t)omp_get_thread_num() * (size_t)b.yn;
            for (int r = 0; r < 3; r++)
                errors += fconv_execute(plan, b.x, b.w, b.bias, y) != FCONV_OK;
        }
        CHECK_EQ_INT(errors, 0);
        for (int t = 0; t < TEAM; t++)
            CHECKF(memcmp(ys + (size_t)t * (size_t)b.yn, expected, (size_t)b.yn * sizeof *ys) == 0,
                   "OpenMP thread %d got a different result", t);
        free(expected);
        free(ys);
        rel_free(&b);
        fconv_plan_destroy(plan);
    }
    omp_set_max_active_levels(saved_levels);
}
#endif

/* fconv_parallel_steal: every item in exactly one piece, pieces of at most `grain` items
 * starting at multiples of it, workers numbered below the thread count; and a worker held up
 * on its first piece has the rest of its share taken by the other. */
struct steal_probe {
    int *hits;            /* per item, atomically */
    size_t n, grain, threads;
    int bad_pieces;       /* atomically */
    int *done_by;         /* per item, the worker */
    volatile int release; /* worker 1 waits for it on its first piece (the held-up test) */
};

static void record_piece(const void *ctx, size_t begin, size_t end, size_t worker) {
    const struct steal_probe *c = ctx;
    struct steal_probe *m = (struct steal_probe *)c;
    if (begin % c->grain != 0 || end <= begin || end - begin > c->grain || end > c->n || worker >= c->threads)
        __atomic_fetch_add(&m->bad_pieces, 1, __ATOMIC_RELAXED);
    for (size_t i = begin; i < end && i < c->n; i++) {
        __atomic_fetch_add(&c->hits[i], 1, __ATOMIC_RELAXED);
        if (c->done_by) c->done_by[i] = (int)worker;
    }
#ifdef _OPENMP
    const double give_up = omp_get_wtime() + 5.0; /* without stealing, fail rather than hang */
    /* Worker 0 holds its first piece until worker 1 has begun its own: a worker 1 that
     * started late (a loaded machine, the sanitizer build beside another test) would otherwise
     * find worker 0 already in share 1 and take some of it, and the test below would measure
     * the start-up, not the stealing. */
    if (c->done_by && worker == 0 && begin == 0)
        while (!__atomic_load_n(&c->hits[c->n / 2], __ATOMIC_ACQUIRE) && omp_get_wtime() < give_up) {
        }
    if (c->done_by && worker == 1 && begin == c->n / 2)
        while (!__atomic_load_n(&m->release, __ATOMIC_ACQUIRE) && omp_get_wtime() < give_up) {
            int taken = 0; /* released once worker 0 has taken the rest of share 1 */
            for (size_t i = c->n / 2 + c->grain; i < c->n; i++) taken += __atomic_load_n(&c->hits[i], __ATOMIC_RELAXED);
            if (taken == (int)(c->n - c->n / 2 - c->grain)) m->release = 1;
        }
#endif
}

static void test_steal_covers_every_item(void) {
    static const size_t ns[] = {0, 1, 7, 64, 1000}, grains[] = {1, 3, 8};
    static const int threads[] = {1, 2, 3, 5};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof grains / sizeof *grains; b++)
            for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
                int *hits = calloc(ns[a] + 1, sizeof *hits);
                struct steal_probe c = {hits, ns[a], grains[b], (size_t)threads[t], 0, NULL, 0};
                fconv_parallel_steal(threads[t], ns[a], grains[b], record_piece, &c);
                int wrong = 0;
                for (size_t i = 0; i < ns[a]; i++) wrong += hits[i] != 1;
                CHECKF(wrong == 0 && c.bad_pieces == 0, "n %zu grain %zu threads %d: %d items not run once, %d bad pieces",
                       ns[a], grains[b], threads[t], wrong, c.bad_pieces);
                free(hits);
            }
#ifdef _OPENMP
    if (getenv("FCONV_TEST_PLAN_THREADS")) return; /* one thread: nothing to steal */
    enum { N = 64, GRAIN = 4 };
    int hits[N] = {0}, done_by[N];
    struct steal_probe c = {hits, N, GRAIN, 2, 0, done_by, 0};
    fconv_parallel_steal(2, N, GRAIN, record_piece, &c);
    int stolen = 0;
    for (size_t i = N / 2 + GRAIN; i < N; i++) stolen += done_by[i] == 0;
    CHECKF(stolen == N / 2 - GRAIN, "worker 0 took %d of the %d items worker 1 had not begun", stolen, N / 2 - GRAIN);
#endif
}

/* Determinism: for every algorithm, on every fixed problem and 10 random ones, the result
 * is bit-identical across two runs and across 1, 2, 3, 4 and 8 threads. */
static void test_bit_identical_across_threads(void) {
    static const int counts[] = {1, 2, 3, 4, 8};
    int compared = 0;
    for (int which = 0; which < 3 + 10; which++) {
        rel_problem p = which < 3 ? rel_fixed(which) : rel_random();
        for (int a = 1; a < FCONV_ALGO_COUNT_; a++) {
            fconv_options o = {.algo = (fconv_algo)a, .threads = 1};
            fconv_plan *plan = NULL;
            if (rel_plan(&p, &o, NULL, NULL, &plan) != FCONV_OK) continue;
            rel_buffers b;
            CHECK(rel_alloc(&p, plan, &b) == 0);
            fconv_plan_destroy(plan);
            float *first = malloc((size_t)b.yn * sizeof *first);
            CHECK(first != NULL);
            int have_first = 0;
            for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
                o.threads = plan_threads(counts[c]);
                /* Weights at plan time: separable needs them, and pre-transformed weights
                 * must be deterministic too. */
                if (rel_plan(&p, &o, b.w, b.bias, &plan) != FCONV_OK) break;
                for (int run = 0; run < 2; run++) {
                    memset(b.y, 0xFF, (size_t)b.yn * sizeof *b.y);
                    CHECK_EQ_INT(fconv_execute(plan, b.x, NULL, NULL, b.y), FCONV_OK);
                    if (!have_first) {
                        memcpy(first, b.y, (size_t)b.yn * sizeof *first);
                        have_first = 1;
                        continue;
                    }
                    compared++;
                    CHECKF(memcmp(first, b.y, (size_t)b.yn * sizeof *first) == 0,
                           "%s, problem %d: %d threads, run %d differs from 1 thread",
                           fconv_algo_name((fconv_algo)a), which, counts[c], run);
                }
                fconv_plan_destroy(plan);
            }
            free(first);
            rel_free(&b);
        }
    }
    CHECKF(compared >= 100, "only %d comparisons", compared);
}

int main(void) {
    test_init();
    TEST(test_one_plan_many_pthreads);
    TEST(test_concurrent_planning);
    TEST(test_small_stack_threads);
#ifdef _OPENMP
    if (!getenv("FCONV_TEST_PLAN_THREADS")) TEST(test_inside_caller_openmp_region);
#endif
    TEST(test_steal_covers_every_item);
    TEST(test_bit_identical_across_threads);
    return test_finish();
}
