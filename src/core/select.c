/*
 * select.c — which algorithm a plan runs. A named algorithm is taken if it can serve the
 * problem within the workspace budget, else planning fails with the reason. AUTO takes the
 * lowest estimated cost among the algorithms that serve the problem, fit the budget and
 * whose documented error bound is within the tolerance: it never trades accuracy silently.
 */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "core/wisdom.h"

double fconv_plan_macs(const fconv_plan *plan) {
    if (plan->kind == FCONV_KIND_CONV2D) {
        const fconv_conv2d_desc *d = &plan->conv2d;
        return (double)d->n * (double)d->k * (double)plan->out_h * (double)plan->out_w *
               (double)(d->c / d->groups) * (double)d->r * (double)d->s;
    }
    const fconv_filter2d_desc *f = &plan->filter;
    return (double)plan->out_h * (double)plan->out_w * (double)f->channels * (double)f->kh *
           (double)f->kw;
}

/* Can algorithm a run this plan within its budget? FCONV_OK, or EUNSUPPORTED (or ENOMEM) and why. */
static fconv_status check_candidate(const fconv_plan *plan, const struct fconv_algorithm *a,
                                    size_t *workspace, char *why, size_t why_len) {
    if (!(a->serves & fconv_kind_bit(plan->kind))) {
        snprintf(why, why_len, "%s does not serve %s", a->name, fconv_kind_name(plan->kind));
        return FCONV_EUNSUPPORTED;
    }
    /* ENOMEM (a supports() that ran out of memory deciding) passes through: a named
     * algorithm then fails with ENOMEM rather than a misleading EUNSUPPORTED. */
    fconv_status supported = a->supports(plan, why, why_len);
    if (supported != FCONV_OK) return supported == FCONV_ENOMEM ? FCONV_ENOMEM : FCONV_EUNSUPPORTED;
    *workspace = a->workspace(plan);
    if (fconv_layout_copies(plan, a)) *workspace = fconv_round_up_64(*workspace) + fconv_layout_copy_bytes(plan);
    size_t caller_bytes = fconv_caller_workspace_bytes(*workspace);
    const fconv_options *o = &plan->options;
    if ((o->flags & FCONV_PLAN_NO_WORKSPACE) && caller_bytes > 0) {
        snprintf(why, why_len, "%s needs a %zu-byte workspace and none is allowed", a->name,
                 caller_bytes);
        return FCONV_EUNSUPPORTED;
    }
    if (o->max_workspace_bytes && caller_bytes > o->max_workspace_bytes) {
        snprintf(why, why_len, "%s needs a %zu-byte workspace, over the budget of %zu", a->name,
                 caller_bytes, o->max_workspace_bytes);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

/* An NHWC plan whose algorithm runs on NCHW copies says so. */
static void explain_layout(fconv_plan *plan) {
    if (!fconv_layout_copies(plan, plan->algo)) return;
    size_t used = strlen(plan->explain);
    snprintf(plan->explain + used, sizeof plan->explain - used, "; NHWC through NCHW copies of %s in the workspace",
             fconv_layout_copies_named(plan));
}

fconv_status fconv_select_algorithm(fconv_plan *plan) {
    char why[200];
    size_t workspace = 0;
    fconv_algo wanted = plan->options.algo;
    const char *kind = fconv_kind_name(plan->kind);

    if (wanted != FCONV_ALGO_AUTO) {
        const struct fconv_algorithm *a = fconv_algorithm_find(wanted);
        if (!a)
            return fconv_fail(FCONV_EUNSUPPORTED, "%s: algorithm '%s' is not built into this library",
                              kind, fconv_algo_name(wanted));
        if (!fconv_algorithm_runs_on(a, plan->options.device))
            return fconv_fail(FCONV_EUNSUPPORTED, "%s: algorithm '%s' does not run on device %s",
                              kind, a->name, fconv_device_kind_name(plan->options.device));
        fconv_status fits = check_candidate(plan, a, &workspace, why, sizeof why);
        if (fits != FCONV_OK) return fconv_fail(fits, "%s: %s", kind, why);
        plan->algo = a;
        plan->algo_workspace_bytes = workspace;
        plan->workspace_bytes = fconv_caller_workspace_bytes(workspace);
        snprintf(plan->explain, sizeof plan->explain, "%s: requested by the caller", a->name);
        explain_layout(plan);
        return FCONV_OK;
    }

    const struct fconv_algorithm *best = NULL;
    double best_cost = 0.0;
    size_t best_workspace = 0;
    int candidates = 0;
    char rejected[200] = "";
    /* The eligible ones, for the wisdom / measurement step (tuned.c). */
    const struct fconv_algorithm *eligible[32];
    size_t eligible_workspace[32];
    for (size_t i = 0; fconv_algorithms[i]; i++) {
        const struct fconv_algorithm *a = fconv_algorithms[i];
        if (!fconv_algorithm_runs_on(a, plan->options.device)) continue; /* AUTO stays on the device */
        if (check_candidate(plan, a, &workspace, why, sizeof why) != FCONV_OK) {
            if (!rejected[0] && (a->serves & fconv_kind_bit(plan->kind)))
                snprintf(rejected, sizeof rejected, "%s", why);
            continue;
        }
        if (a->error_bound > plan->options.tolerance) {
            if (!rejected[0])
                snprintf(rejected, sizeof rejected, "%s's error bound %.1e exceeds the tolerance %.1e",
                         a->name, a->error_bound, plan->options.tolerance);
            continue;
        }
        double cost = fconv_algorithm_cost(plan, a);
        if (candidates < 32) {
            eligible[candidates] = a;
            eligible_workspace[candidates] = workspace;
        }
        candidates++;
        if (!best || cost < best_cost) {
            best = a;
            best_cost = cost;
            best_workspace = workspace;
        }
    }
    if (!best)
        return fconv_fail(FCONV_EUNSUPPORTED, "%s: no algorithm fits the options%s%s", kind,
                          rejected[0] ? "; e.g. " : "", rejected);
    plan->algo = best;
    plan->algo_workspace_bytes = best_workspace;
    plan->workspace_bytes = fconv_caller_workspace_bytes(best_workspace);
    snprintf(plan->explain, sizeof plan->explain,
             "auto: %s has the lowest estimated time (%.3g ms) of %d candidate%s%s%s", best->name,
             best_cost * 1e3, candidates, candidates == 1 ? "" : "s",
             rejected[0] ? "; not eligible: " : "", rejected);
    fconv_select_tuned(plan, eligible, eligible_workspace, candidates);
    explain_layout(plan);
    return FCONV_OK;
}
