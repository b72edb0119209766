/*
 * test_reliability_budget.c — the memory budget: options.max_workspace_bytes and
 * FCONV_PLAN_NO_WORKSPACE. AUTO must pick an algorithm within the budget (the unbudgeted
 * choice when that fits, down to zero-workspace algorithms), results must stay correct,
 * and a named algorithm over the budget must fail with a message naming both.
 */
#include "reliability-problems.h"

static double max_abs_diff(const float *a, const float *b, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i] - (double)b[i]));
    return m;
}

/* Run plan on b and compare with the reference on the same data. */
static void check_against_reference(const rel_problem *p, const fconv_plan *plan, rel_buffers *b) {
    fconv_options ro = {.algo = FCONV_ALGO_REFERENCE, .threads = 1};
    fconv_plan *ref = NULL;
    CHECK_EQ_INT(rel_plan(p, &ro, NULL, NULL, &ref), FCONV_OK);
    float *yref = malloc((size_t)b->yn * sizeof *yref);
    CHECK(yref != NULL);
    if (!ref || !yref) goto out;
    CHECK_EQ_INT(fconv_execute(ref, b->x, b->w, b->bias, yref), FCONV_OK);
    CHECK_EQ_INT(fconv_execute(plan, b->x, b->w, b->bias, b->y), FCONV_OK);
    /* Random data in [-1, 1): sums of at most a few hundred products. */
    CHECKF(max_abs_diff(b->y, yref, b->yn) < 1e-3, "%s differs from the reference by %g",
           fconv_algo_name(fconv_plan_algo(plan)), max_abs_diff(b->y, yref, b->yn));
out:
    free(yref);
    fconv_plan_destroy(ref);
}

/* Walk the budget down from the unbudgeted choice's workspace to zero: each step AUTO stays
 * within the budget, keeps the previous choice while it fits, and is correct. */
static void test_auto_respects_budget(void) {
    int fallbacks = 0;
    for (int which = 0; which < 3; which++) {
        rel_problem p = rel_fixed(which);
        fconv_options o = {.threads = 1};
        fconv_plan *plan = NULL;
        CHECK_EQ_INT(rel_plan(&p, &o, NULL, NULL, &plan), FCONV_OK);
        if (!plan) continue;
        rel_buffers b;
        CHECK(rel_alloc(&p, plan, &b) == 0);
        size_t budget = fconv_plan_workspace_size(plan);
        fconv_algo unbudgeted = fconv_plan_algo(plan);
        fconv_plan_destroy(plan);
        int steps = 0;
        while (budget > 0 && steps < 16) {
            fconv_options ob = {.threads = 1, .max_workspace_bytes = budget};
            CHECK_EQ_INT(rel_plan(&p, &ob, NULL, NULL, &plan), FCONV_OK);
            if (!plan) break;
            size_t ws = fconv_plan_workspace_size(plan);
            CHECKF(ws <= budget, "budget %zu: %s needs %zu", budget,
                   fconv_algo_name(fconv_plan_algo(plan)), ws);
            if (steps == 0) CHECK_EQ_INT(fconv_plan_algo(plan), unbudgeted);
            check_against_reference(&p, plan, &b);
            fconv_plan_destroy(plan);
            budget = ws ? ws - 1 : 0; /* just below: AUTO must move to a smaller one */
            steps++;
        }
        if (steps >= 2) fallbacks++;
        /* Nothing allowed: a zero-workspace algorithm, still correct. */
        fconv_options on = {.threads = 1, .flags = FCONV_PLAN_NO_WORKSPACE};
        CHECK_EQ_INT(rel_plan(&p, &on, NULL, NULL, &plan), FCONV_OK);
        if (plan) {
            CHECK_EQ_INT(fconv_plan_workspace_size(plan), 0);
            check_against_reference(&p, plan, &b);
            /* No workspace needed: execute_with_workspace takes NULL, 0. */
            CHECK_EQ_INT(fconv_execute_with_workspace(plan, b.x, b.w, b.bias, b.y, NULL, 0), FCONV_OK);
            fconv_plan_destroy(plan);
        }
        /* A 1-byte budget admits only zero-workspace algorithms too. */
        fconv_options o1 = {.threads = 1, .max_workspace_bytes = 1};
        CHECK_EQ_INT(rel_plan(&p, &o1, NULL, NULL, &plan), FCONV_OK);
        if (plan) CHECK_EQ_INT(fconv_plan_workspace_size(plan), 0);
        fconv_plan_destroy(plan);
        rel_free(&b);
    }
    /* The fixed problems are chosen so that AUTO prefers a workspace-using algorithm. */
    CHECKF(fallbacks >= 1, "no problem made AUTO fall back under a budget");
}

/* Every named algorithm that needs workspace: within the budget it plans, one byte under it
 * fails with EUNSUPPORTED and a message naming the algorithm and the budget; with
 * NO_WORKSPACE it fails saying none is allowed. */
static void test_named_algorithm_over_budget(void) {
    int tried = 0;
    for (int which = 0; which < 3; which++) {
        rel_problem p = rel_fixed(which);
        for (int a = 1; a < FCONV_ALGO_COUNT_; a++) {
            fconv_options o = {.algo = (fconv_algo)a, .threads = 1};
            fconv_plan *plan = NULL;
            if (rel_plan(&p, &o, NULL, NULL, &plan) != FCONV_OK) continue; /* does not serve */
            size_t ws = fconv_plan_workspace_size(plan);
            fconv_plan_destroy(plan);
            if (ws == 0) continue;
            tried++;
            o.max_workspace_bytes = ws;
            CHECK_EQ_INT(rel_plan(&p, &o, NULL, NULL, &plan), FCONV_OK);
            fconv_plan_destroy(plan);
            o.max_workspace_bytes = ws - 1;
            CHECK_EQ_INT(rel_plan(&p, &o, NULL, NULL, &plan), FCONV_EUNSUPPORTED);
            CHECK(plan == NULL);
            CHECK_STR_CONTAINS(fconv_last_error(), fconv_algo_name((fconv_algo)a));
            CHECK_STR_CONTAINS(fconv_last_error(), "budget");
            o.max_workspace_bytes = 0;
            o.flags = FCONV_PLAN_NO_WORKSPACE;
            CHECK_EQ_INT(rel_plan(&p, &o, NULL, NULL, &plan), FCONV_EUNSUPPORTED);
            CHECK_STR_CONTAINS(fconv_last_error(), "none is allowed");
        }
    }
    CHECKF(tried >= 3, "only %d workspace-using algorithms found", tried);
}

/* The caller's workspace: exactly the size asked for works at any alignment, one byte less
 * is FCONV_EWORKSPACE, and execute never writes outside it (guard bytes). */
static void test_caller_workspace_bounds(void) {
    rel_problem p = rel_fixed(0);
    for (int a = 1; a < FCONV_ALGO_COUNT_; a++) {
        fconv_options o = {.algo = (fconv_algo)a, .threads = 1};
        fconv_plan *plan = NULL;
        if (rel_plan(&p, &o, NULL, NULL, &plan) != FCONV_OK) continue;
        size_t ws = fconv_plan_workspace_size(plan);
        rel_buffers b;
        CHECK(rel_alloc(&p, plan, &b) == 0);
        unsigned char *space = malloc(ws + 64 + 3);
        CHECK(space != NULL);
        if (space) {
            memset(space, 0xA5, ws + 64 + 3);
            unsigned char *mine = space + 32 + 3; /* odd address, 32 guard bytes each side */
            CHECK_EQ_INT(fconv_execute_with_workspace(plan, b.x, b.w, b.bias, b.y, ws ? mine : NULL, ws),
                         FCONV_OK);
            int guards_ok = 1;
            for (size_t i = 0; i < 32 + 3; i++) guards_ok &= space[i] == 0xA5;
            for (size_t i = 0; i < 32; i++) guards_ok &= mine[ws + i] == 0xA5;
            CHECKF(guards_ok, "%s wrote outside its workspace", fconv_algo_name((fconv_algo)a));
            if (ws)
                CHECK_EQ_INT(fconv_execute_with_workspace(plan, b.x, b.w, b.bias, b.y, mine, ws - 1),
                             FCONV_EWORKSPACE);
            free(space);
        }
        rel_free(&b);
        fconv_plan_destroy(plan);
    }
}

int main(void) {
    test_init();
    TEST(test_auto_respects_budget);
    TEST(test_named_algorithm_over_budget);
    TEST(test_caller_workspace_bounds);
    return test_finish();
}
