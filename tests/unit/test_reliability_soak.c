/*
 * test_reliability_soak.c — plan, execute and destroy a few thousand random problems (every
 * kind; AUTO, named algorithms and the budget options; weights at plan or execute time;
 * library or caller workspace), each checked against the reference. Run under ASan/LSan
 * (scripts/test.sh) it proves that no path leaks; FCONV_SOAK_PROBLEMS changes the count.
 */
#include "reliability-problems.h"

static void test_soak(void) {
    const char *env = getenv("FCONV_SOAK_PROBLEMS");
    long problems = env ? atol(env) : 3000;
    long executed = 0, refused = 0;
    for (long i = 0; i < problems; i++) {
        rel_problem p = rel_random();
        fconv_options o = {.threads = (int)test_rand_int(1, 2)};
        int64_t pick = test_rand_int(0, 2 * FCONV_ALGO_COUNT_);
        if (pick < FCONV_ALGO_COUNT_) o.algo = (fconv_algo)pick; /* else AUTO */
        int64_t budget = test_rand_int(0, 5);
        if (budget == 1) o.flags = FCONV_PLAN_NO_WORKSPACE;
        if (budget == 2) o.max_workspace_bytes = (size_t)test_rand_int(1, 1 << 16);
        fconv_options ro = {.algo = FCONV_ALGO_REFERENCE, .threads = 1};
        fconv_plan *ref = NULL;
        CHECK_EQ_INT(rel_plan(&p, &ro, NULL, NULL, &ref), FCONV_OK);
        if (!ref) continue;
        rel_buffers b;
        CHECK(rel_alloc(&p, ref, &b) == 0);
        int wplan = (int)test_rand_int(0, 1);
        fconv_plan *plan = NULL;
        fconv_status st = rel_plan(&p, &o, wplan ? b.w : NULL, wplan ? b.bias : NULL, &plan);
        if (st != FCONV_OK) {
            /* A named algorithm that cannot serve, or no room in the budget. */
            CHECKF(st == FCONV_EUNSUPPORTED && (o.algo != FCONV_ALGO_AUTO || budget > 0),
                   "problem %ld: status %d: %s", i, (int)st, fconv_last_error());
            refused++;
        } else {
            float *yref = malloc((size_t)b.yn * sizeof *yref);
            CHECK(yref != NULL);
            CHECK_EQ_INT(fconv_execute(ref, b.x, b.w, b.bias, yref), FCONV_OK);
            const float *w = wplan ? NULL : b.w, *bias = wplan ? NULL : b.bias;
            if (test_rand_int(0, 1)) {
                size_t ws = fconv_plan_workspace_size(plan);
                void *space = ws ? malloc(ws) : NULL;
                CHECK_EQ_INT(fconv_execute_with_workspace(plan, b.x, w, bias, b.y, space, ws), FCONV_OK);
                free(space);
            } else {
                CHECK_EQ_INT(fconv_execute(plan, b.x, w, bias, b.y), FCONV_OK);
            }
            double err = 0;
            for (int64_t j = 0; j < b.yn; j++) err = fmax(err, fabs((double)b.y[j] - yref[j]));
            fconv_algo_info info;
            CHECK_EQ_INT(fconv_algo_get_info(fconv_plan_algo(plan), &info), FCONV_OK);
            /* Data in [-1, 1) and at most ~250 terms: |sum| < 250. */
            CHECKF(err <= 250.0 * (4.0 * info.error_bound) + 1e-4, "problem %ld (%s): error %g",
                   i, fconv_algo_name(fconv_plan_algo(plan)), err);
            free(yref);
            executed++;
        }
        fconv_plan_destroy(plan);
        fconv_plan_destroy(ref);
        rel_free(&b);
    }
    CHECKF(executed > problems / 3, "only %ld of %ld problems ran (%ld refused)", executed,
           problems, refused);
    if (getenv("FCONV_SOAK_REPORT"))
        printf("soak: %ld problems, %ld executed, %ld refused by plan\n", problems, executed, refused);
}

int main(void) {
    test_init();
    TEST(test_soak);
    return test_finish();
}
