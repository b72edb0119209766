/*
 * tuned.c — AUTO's second opinion after the cost model: with FCONV_PLAN_MEASURE, time the
 * eligible candidates on generated data (the two fastest again in alternated rounds where
 * they came close) and take (and record) the fastest; otherwise take
 * the wisdom entry for this problem if it names an eligible candidate. The candidates come
 * from select.c, already filtered by the plan's tolerance and workspace budget.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/wisdom.h"

#define MAX_CANDIDATES 32
/* Candidates the cost model rates this many times slower than its pick are not timed:
 * it keeps measuring bounded (a direct 31x31 filter on a 4096^2 image takes seconds). */
#define MEASURE_COST_RATIO 30.0
/* Seconds of timed executions per candidate after its warm-up, and the rep bounds. */
#define MEASURE_SECONDS 0.2
#define MEASURE_MIN_REPS 2
#define MEASURE_MAX_REPS 9
/* A candidate whose warm-up is this many times slower than the best so far is not
 * repeated: it has lost. */
#define MEASURE_LOSER_RATIO 3.0
/* A runner-up this close to the fastest is timed again against it in alternation (final()),
 * for about this many seconds in FINAL_MIN_ROUNDS to FINAL_MAX_ROUNDS rounds. */
#define MEASURE_CLOSE_RATIO 1.25
#define MEASURE_FINAL_SECONDS 0.3
#define FINAL_MIN_ROUNDS 4
#define FINAL_MAX_ROUNDS 16

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Uniform [-1, 1) from a fixed-seed LCG: what the data is does not change the time. */
static float *generated(int64_t n, uint64_t seed) {
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (!p) return NULL;
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (float)((double)(seed >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
    }
    return p;
}

/* A candidate's operands: x, y, and the weights and bias given where the measured plan
 * takes them, at plan time or at execute time (a plan given its weights later pays at every
 * execute what another does once at plan time: Winograd's weight transform, a GEMM's
 * packing; timed the other way, the winner would be the other mode's: the wisdom key tells
 * the two apart, fconv_wisdom_key). */
struct operands {
    const float *x, *plan_w, *plan_bias, *exec_w, *exec_bias;
    float *y;
};

/* A plan for exactly this problem with the named algorithm (no MEASURE, no AUTO). */
static fconv_status sub_plan(const fconv_plan *plan, fconv_algo algo, const struct operands *in,
                             fconv_plan **out) {
    fconv_options o = plan->options;
    o.algo = algo;
    o.threads = plan->threads;
    o.flags &= ~FCONV_PLAN_MEASURE;
    const float *w = in->plan_w;
    if (plan->kind == FCONV_KIND_CONV2D) return fconv_plan_conv2d(&plan->conv2d, &o, w, in->plan_bias, out);
    if (plan->kind == FCONV_KIND_FILTER2D) return fconv_plan_filter2d(&plan->filter, &o, w, out);
    return fconv_plan_conv1d(&plan->conv1d, &o, w, out);
}

/* A candidate ready to run: its plan and workspace. */
struct candidate {
    fconv_plan *plan;
    void *ws;
    size_t ws_bytes;
};

/* Plan algo for this problem and allocate its workspace: 0, or -1 (nothing left to free). */
static int set_up(const fconv_plan *plan, fconv_algo algo, const struct operands *in, struct candidate *c) {
    *c = (struct candidate){NULL, NULL, 0};
    if (sub_plan(plan, algo, in, &c->plan) != FCONV_OK) return -1;
    c->ws_bytes = fconv_plan_workspace_size(c->plan);
    c->ws = c->ws_bytes ? fconv_alloc_aligned(c->ws_bytes) : NULL;
    if (c->ws_bytes && !c->ws) {
        fconv_plan_destroy(c->plan);
        c->plan = NULL;
        return -1;
    }
    return 0;
}

static void tear_down(struct candidate *c) {
    fconv_free_aligned(c->ws);
    fconv_plan_destroy(c->plan);
}

static fconv_status run(const struct candidate *c, const struct operands *in) {
    return fconv_execute_with_workspace(c->plan, in->x, in->exec_w, in->exec_bias, in->y, c->ws, c->ws_bytes);
}

/* Best of a few timed executions in milliseconds (after a warm-up), or a negative value if
 * the candidate could not be planned, its workspace allocated or its warm-up run. best_ms
 * (< 0: none yet) lets a clear loser stop after its warm-up. */
static double time_candidate(const fconv_plan *plan, fconv_algo algo, const struct operands *in, double best_ms) {
    struct candidate c;
    if (set_up(plan, algo, in, &c) != 0) return -1.0;
    double t0 = now_seconds();
    const int ran = run(&c, in) == FCONV_OK;
    double warm = now_seconds() - t0, best = warm;
    if (ran && (best_ms < 0 || warm * 1e3 < MEASURE_LOSER_RATIO * best_ms)) {
        int reps = warm > 0 ? (int)(MEASURE_SECONDS / warm) : MEASURE_MAX_REPS;
        if (reps < MEASURE_MIN_REPS) reps = MEASURE_MIN_REPS;
        if (reps > MEASURE_MAX_REPS) reps = MEASURE_MAX_REPS;
        /* The minimum: on a shared machine noise only ever adds time. */
        for (int i = 0; i < reps; i++) {
            double s = now_seconds();
            run(&c, in);
            double t = now_seconds() - s;
            if (t < best) best = t;
        }
    }
    tear_down(&c);
    return ran ? best * 1e3 : -1.0;
}

/* The screening's winner (a) against its close runner-up (b), timed again in alternation:
 * each round runs both, the order reversed every other round, and b wins where the median
 * over rounds of a's time over b's exceeds 1. Timed one after the other, each candidate had
 * its own stretch of the machine, and a shared VM's speed moves 10-40% from one stretch to
 * the next: the thirty-fourth session's harness measured the same plan twice, alternated
 * only one way (ABAB), 1.19x apart in one sitting, and 0.99-1.02x with the order reversed
 * every other round. Both plans are alive at once, so their workspaces must fit the budget
 * together. On input *a_ms and *b_ms are the screening's times; where the final ran they
 * become each one's fastest round, *ratio the median (0: no final) and *rounds its count. 1
 * if b won. */
static int final(const fconv_plan *plan, fconv_algo a, fconv_algo b, size_t workspace_a, size_t workspace_b,
                 const struct operands *in, double *a_ms, double *b_ms, double *ratio_out, int *rounds_out) {
    const size_t budget = plan->options.max_workspace_bytes;
    if (budget && (workspace_a > budget || workspace_b > budget - workspace_a)) return 0;
    struct candidate c[2] = {{NULL, NULL, 0}, {NULL, NULL, 0}};
    int b_won = 0;
    for (int j = 0; j < 2; j++)
        if (set_up(plan, j ? b : a, in, &c[j]) != 0) goto done;
    int rounds = (int)(MEASURE_FINAL_SECONDS / ((*a_ms + *b_ms) * 1e-3));
    if (rounds < FINAL_MIN_ROUNDS) rounds = FINAL_MIN_ROUNDS;
    if (rounds > FINAL_MAX_ROUNDS) rounds = FINAL_MAX_ROUNDS;
    double ratio[FINAL_MAX_ROUNDS], best[2] = {-1.0, -1.0};
    for (int j = 0; j < 2; j++)
        if (run(&c[j], in) != FCONV_OK) goto done;
    for (int i = 0; i < rounds; i++) {
        double t[2];
        for (int k = 0; k < 2; k++) {
            const int j = i % 2 ? 1 - k : k;
            const double s = now_seconds();
            run(&c[j], in);
            t[j] = now_seconds() - s;
            if (best[j] < 0 || t[j] < best[j]) best[j] = t[j];
        }
        ratio[i] = t[1] > 0 ? t[0] / t[1] : 1.0;
    }
    const double median = fconv_median(ratio, (size_t)rounds);
    b_won = median > 1.0;
    *ratio_out = median;
    *rounds_out = rounds;
    *a_ms = best[0] * 1e3;
    *b_ms = best[1] * 1e3;
done:
    for (int j = 0; j < 2; j++) tear_down(&c[j]);
    return b_won;
}

static void take(fconv_plan *plan, const struct fconv_algorithm *a, size_t workspace) {
    plan->algo = a;
    plan->algo_workspace_bytes = workspace;
    plan->workspace_bytes = fconv_caller_workspace_bytes(workspace);
}

/* FCONV_PLAN_MEASURE: time the candidates, take the fastest, record it. */
static void measure(fconv_plan *plan, const struct fconv_algorithm *const *eligible,
                    const size_t *workspace, int n) {
    const struct fconv_algorithm *model_pick = plan->algo;
    double model_cost = fconv_algorithm_cost(plan, model_pick);
    float *x = generated(plan->x_elems, 1);
    float *y = malloc((size_t)plan->y_elems * sizeof *y);
    float *w = plan->weights ? NULL : generated(plan->w_elems, 2);
    int has_bias = plan->kind == FCONV_KIND_CONV2D && plan->conv2d.has_bias;
    float *bias = has_bias && !plan->bias ? generated(plan->conv2d.k, 3) : NULL;
    if (!x || !y || (!plan->weights && !w) || (has_bias && !plan->bias && !bias)) {
        size_t used = strlen(plan->explain);
        snprintf(plan->explain + used, sizeof plan->explain - used,
                 "; not measured: out of memory for the test data");
        goto done;
    }
    const float *wp = plan->weights ? plan->weights : w;
    const float *bp = has_bias ? (plan->bias ? plan->bias : bias) : NULL;
    const struct operands in = {x, plan->weights ? wp : NULL, plan->bias ? bp : NULL,
                                plan->weights ? NULL : wp, plan->bias ? NULL : bp, y};

    /* Cheapest estimate first, so that losers can stop after their warm-up. */
    int order[MAX_CANDIDATES];
    double cost[MAX_CANDIDATES];
    for (int i = 0; i < n; i++) {
        order[i] = i;
        cost[i] = fconv_algorithm_cost(plan, eligible[i]);
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && cost[order[j]] < cost[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int best = -1, second = -1, timed = 0, skipped = 0;
    double best_ms = -1.0, second_ms = -1.0, model_ms = -1.0;
    for (int k = 0; k < n; k++) {
        int i = order[k];
        /* The reference is the oracle, never a contender. */
        if (eligible[i]->id == FCONV_ALGO_REFERENCE || cost[i] > MEASURE_COST_RATIO * model_cost) {
            skipped++;
            continue;
        }
        double ms = time_candidate(plan, eligible[i]->id, &in, best_ms);
        if (ms < 0) continue;
        timed++;
        if (eligible[i] == model_pick) model_ms = ms;
        if (best < 0 || ms < best_ms) {
            second = best, second_ms = best_ms;
            best = i;
            best_ms = ms;
        } else if (second < 0 || ms < second_ms) {
            second = i, second_ms = ms;
        }
    }
    char alternated[100] = "";
    if (best >= 0 && second >= 0 && second_ms <= MEASURE_CLOSE_RATIO * best_ms) {
        double a_ms = best_ms, b_ms = second_ms, ratio = 0.0; /* ratio: a's time over b's */
        int rounds = 0;
        const int b_won = final(plan, eligible[best]->id, eligible[second]->id, workspace[best],
                                workspace[second], &in, &a_ms, &b_ms, &ratio, &rounds);
        if (ratio > 0.0) {
            const int a = best, b = second;
            best = b_won ? b : a, second = b_won ? a : b;
            best_ms = b_won ? b_ms : a_ms, second_ms = b_won ? a_ms : b_ms;
            snprintf(alternated, sizeof alternated, ", then %.3gx %s's speed in %d alternated rounds",
                     b_won ? ratio : 1.0 / ratio, eligible[second]->name, rounds);
            if (eligible[best] == model_pick) model_ms = best_ms;
            else if (eligible[second] == model_pick) model_ms = second_ms;
        }
    }
    if (best < 0) {
        size_t used = strlen(plan->explain);
        snprintf(plan->explain + used, sizeof plan->explain - used,
                 "; not measured: no candidate could be timed");
        goto done;
    }
    take(plan, eligible[best], workspace[best]);
    char note[300];
    fconv_wisdom_record(plan, eligible[best]->id, best_ms, note, sizeof note);
    char model[100] = "";
    if (eligible[best] != model_pick)
        snprintf(model, sizeof model, "; the cost model's pick %s took %.3g ms", model_pick->name,
                 model_ms);
    snprintf(plan->explain, sizeof plan->explain,
             "auto: measured: %s fastest (%.3g ms) of %d timed candidate%s (%d not timed)%s%s; %.160s",
             eligible[best]->name, best_ms, timed, timed == 1 ? "" : "s", skipped, alternated, model, note);
done:
    free(x);
    free(y);
    free(w);
    free(bias);
}

void fconv_select_tuned(fconv_plan *plan, const struct fconv_algorithm *const *eligible,
                        const size_t *workspace, int n) {
    if (n <= 0 || n > MAX_CANDIDATES) return;
    if (plan->options.flags & FCONV_PLAN_MEASURE) {
        measure(plan, eligible, workspace, n);
        return;
    }
    fconv_algo algo;
    double ms;
    int64_t when;
    char note[400];
    size_t used = strlen(plan->explain);
    if (!fconv_wisdom_lookup(plan, &algo, &ms, &when, note, sizeof note)) {
        /* Say why only when a file was ignored; "no wisdom" is the common case. */
        if (strstr(note, "ignored"))
            snprintf(plan->explain + used, sizeof plan->explain - used, "; %.250s", note);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (eligible[i]->id != algo) continue;
        const struct fconv_algorithm *model_pick = plan->algo;
        take(plan, eligible[i], workspace[i]);
        char stamp[32] = "?";
        time_t t = (time_t)when;
        struct tm tm;
        if (gmtime_r(&t, &tm)) strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M UTC", &tm);
        snprintf(plan->explain, sizeof plan->explain,
                 "auto: wisdom: %s measured fastest (%.3g ms, tuned %s)%s%s", eligible[i]->name,
                 ms, stamp, model_pick != eligible[i] ? "; the cost model would pick " : "",
                 model_pick != eligible[i] ? model_pick->name : "");
        return;
    }
    snprintf(plan->explain + used, sizeof plan->explain - used,
             "; wisdom's %s not used: not eligible under this plan's options", fconv_algo_name(algo));
}
