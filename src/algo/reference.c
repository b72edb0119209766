/*
 * reference.c — the reference (src/ref/) as an algorithm table entry: serves everything,
 * needs no workspace, and is never fast, so AUTO takes it only when nothing else serves.
 */
#include "core/internal.h"
#include "ref/conv-ref.h"

static fconv_status reference_supports(const fconv_plan *plan, char *why, size_t why_len) {
    (void)plan;
    (void)why;
    (void)why_len;
    return FCONV_OK;
}

static size_t reference_workspace(const fconv_plan *plan) {
    (void)plan;
    return 0;
}

/* About 0.3 ns per multiply-add per thread, and a large constant factor so any real
 * algorithm estimated in the same units wins. */
static double reference_cost(const fconv_plan *plan) {
    return 3e-9 * fconv_plan_macs(plan) / plan->threads;
}

static void reference_execute(const fconv_plan *plan, const float *x, const float *w,
                              const float *bias, float *y, void *workspace) {
    (void)workspace;
    fconv_ref_execute(plan, x, w, bias, y);
}

const struct fconv_algorithm fconv_algorithm_reference = {
    .id = FCONV_ALGO_REFERENCE,
    .name = "reference",
    .summary = "plain loops with float64 accumulation: the oracle, never fast",
    .serves = FCONV_SERVES_CONV2D | FCONV_SERVES_FILTER2D | FCONV_SERVES_CONV1D,
    .error_bound = 1e-6,
    .supports = reference_supports,
    .workspace = reference_workspace,
    .cost = reference_cost,
    .execute = reference_execute,
    .runs_nhwc = fconv_runs_nhwc_always,
};
