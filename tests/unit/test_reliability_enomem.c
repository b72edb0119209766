/*
 * test_reliability_enomem.c — allocation failure anywhere in plan / execute / destroy gives
 * FCONV_ENOMEM (with a message) or, where the failing allocation was optional, FCONV_OK —
 * and leaks nothing. Needs tests/unit/fault-malloc.c preloaded (ctest sets LD_PRELOAD);
 * skips otherwise. For each problem and algorithm the whole sequence is run once to count
 * the library's allocations, then once per allocation with that one failing, each run on a
 * thread of its own (its scratch buffers counted too).
 * Allocations made inside FFTW, OpenBLAS and libgomp are not failed (they abort by design).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>

#include "reliability-problems.h"

typedef void (*arm_fn)(long nth, const void *module_addr);
typedef void (*disarm_fn)(long *allocs, long *frees, long *failed);
static arm_fn fm_arm;
static disarm_fn fm_disarm;
/* Any object of this executable: the shim counts allocations made from its module. */
static const char this_module = 0;

/* Plan (weights now or later), execute with the library's workspace, execute with none
 * (when the plan needs none), destroy. Returns the first non-OK status, or FCONV_OK. */
static fconv_status sequence(const rel_problem *p, const fconv_options *o, rel_buffers *b,
                             int weights_at_plan) {
    fconv_plan *plan = NULL;
    fconv_status st = rel_plan(p, o, weights_at_plan ? b->w : NULL, weights_at_plan ? b->bias : NULL,
                               &plan);
    if (st != FCONV_OK) {
        if (plan != NULL) return FCONV_EINTERNAL; /* a failed plan must not be returned */
        return st;
    }
    st = fconv_execute(plan, b->x, weights_at_plan ? NULL : b->w, weights_at_plan ? NULL : b->bias, b->y);
    fconv_plan_destroy(plan);
    return st;
}

/* sequence() on a thread of its own, so that the thread's scratch buffers (core/scratch.h:
 * allocated on its first execute, freed when it exits) are made, failed in turn and freed
 * within each counted run. */
struct sequence_call {
    const rel_problem *p;
    const fconv_options *o;
    rel_buffers *b;
    int weights_at_plan;
    fconv_status st;
    char error[512]; /* the thread's fconv_last_error */
};

static void *sequence_thread(void *arg) {
    struct sequence_call *c = arg;
    c->st = sequence(c->p, c->o, c->b, c->weights_at_plan);
    snprintf(c->error, sizeof c->error, "%s", fconv_last_error());
    return NULL;
}

static fconv_status sequence_on_a_thread(const rel_problem *p, const fconv_options *o, rel_buffers *b,
                                         int weights_at_plan, char *error, size_t error_len) {
    struct sequence_call c = {p, o, b, weights_at_plan, FCONV_EINTERNAL, ""};
    pthread_t t;
    if (pthread_create(&t, NULL, sequence_thread, &c) != 0) {
        snprintf(error, error_len, "pthread_create failed");
        return FCONV_EINTERNAL;
    }
    pthread_join(t, NULL);
    snprintf(error, error_len, "%s", c.error);
    return c.st;
}

static void test_every_allocation_fails_cleanly(void) {
    int runs = 0, algos = 0;
    for (int which = 0; which < 3; which++) {
        rel_problem p = rel_fixed(which);
        for (int a = 0; a < FCONV_ALGO_COUNT_; a++) {
            for (int wplan = 0; wplan < 2; wplan++) {
                fconv_options o = {.algo = (fconv_algo)a, .threads = 1};
                fconv_plan *probe = NULL;
                if (rel_plan(&p, &o, NULL, NULL, &probe) != FCONV_OK) {
                    if (a == FCONV_ALGO_SEPARABLE && wplan == 1) {
                        /* separable needs weights at plan time: probe with AUTO's sizes */
                        fconv_options oa = {.threads = 1};
                        if (rel_plan(&p, &oa, NULL, NULL, &probe) != FCONV_OK) continue;
                    } else {
                        continue;
                    }
                }
                rel_buffers b;
                CHECK(rel_alloc(&p, probe, &b) == 0);
                fconv_plan_destroy(probe);
                if (a == FCONV_ALGO_SEPARABLE && p.kind != 0) /* rank-1, so it serves */
                    for (int64_t i = 0; i < b.wn; i++) b.w[i] = 0.5f; /* a box */
                /* Count the allocations of a clean run. */
                long allocs, frees, failed;
                char error[512];
                fm_arm(0, &this_module);
                fconv_status clean = sequence_on_a_thread(&p, &o, &b, wplan, error, sizeof error);
                fm_disarm(&allocs, &frees, &failed);
                if (clean != FCONV_OK) {
                    rel_free(&b);
                    continue; /* e.g. separable on a kernel that is not rank-1 */
                }
                algos++;
                CHECKF(allocs == frees, "%s: a clean run leaks %ld of %ld allocations",
                       fconv_algo_name((fconv_algo)a), allocs - frees, allocs);
                for (long nth = 1; nth <= allocs; nth++) {
                    fm_arm(nth, &this_module);
                    fconv_status st = sequence_on_a_thread(&p, &o, &b, wplan, error, sizeof error);
                    long al, fr, fa;
                    fm_disarm(&al, &fr, &fa);
                    runs++;
                    CHECKF(fa == 1, "allocation %ld of %ld was not reached", nth, allocs);
                    CHECKF(st == FCONV_ENOMEM || st == FCONV_OK,
                           "%s, problem %d, weights %s, allocation %ld/%ld failing: status %d (%s)",
                           fconv_algo_name((fconv_algo)a), which, wplan ? "at plan" : "at execute",
                           nth, allocs, (int)st, error);
                    if (st == FCONV_ENOMEM) CHECK(error[0] != '\0');
                    CHECKF(al == fr, "%s, allocation %ld/%ld failing: %ld of %ld allocations leaked",
                           fconv_algo_name((fconv_algo)a), nth, allocs, al - fr, al);
                }
                rel_free(&b);
            }
        }
    }
    if (getenv("FCONV_TEST_VERBOSE")) printf("enomem: %d cases, %d failing runs\n", algos, runs);
    CHECKF(algos >= 10 && runs >= 30, "only %d algorithm cases, %d failing runs", algos, runs);
}

int main(void) {
    test_init();
    *(void **)&fm_arm = dlsym(RTLD_DEFAULT, "fault_malloc_arm");
    *(void **)&fm_disarm = dlsym(RTLD_DEFAULT, "fault_malloc_disarm");
    if (!fm_arm || !fm_disarm) {
        fprintf(stderr, "skipped: run with LD_PRELOAD=<fault-malloc.so> (ctest does)\n");
        return TEST_SKIP_CODE;
    }
    TEST(test_every_allocation_fails_cleanly);
    return test_finish();
}
