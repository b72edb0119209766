/*
 * plan.c — the plan's life: create (validate the descriptor and options, copy constant
 * weights, choose an algorithm, let it prepare), query, execute, destroy. All argument
 * checking happens here or in validate.c; algorithm drivers never see a bad argument.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/dispatch.h"
#include "core/internal.h"
#include "core/parallel.h"
#include "kernels/gemm/gemm.h"

#define KNOWN_PLAN_FLAGS (FCONV_PLAN_NO_WORKSPACE | FCONV_PLAN_MEASURE)

static fconv_status resolve_options(const fconv_options *options, fconv_plan *plan) {
    fconv_options o = options ? *options : (fconv_options){0};
    if ((unsigned)o.algo >= FCONV_ALGO_COUNT_)
        return fconv_fail(FCONV_EINVAL, "options: unknown algorithm %d", (int)o.algo);
    if (o.threads < 0)
        return fconv_fail(FCONV_EINVAL, "options: threads must be >= 0 (0 = all cores), got %d",
                          o.threads);
    if (!(o.tolerance >= 0.0) || isinf(o.tolerance))
        return fconv_fail(FCONV_EINVAL, "options: tolerance must be a finite number >= 0");
    if (o.flags & ~KNOWN_PLAN_FLAGS)
        return fconv_fail(FCONV_EINVAL, "options: unknown flag bits 0x%x",
                          o.flags & ~KNOWN_PLAN_FLAGS);
    if (o.device != FCONV_DEVICE_CPU) {
        fconv_status dst = fconv_gpu_check_device(o.device); /* never a silent CPU fallback */
        if (dst != FCONV_OK) return dst;
    }
    if ((unsigned)o.max_isa > FCONV_ISA_AVX512)
        return fconv_fail(FCONV_EINVAL, "options: unknown max_isa %d", (int)o.max_isa);
    plan->kernels = fconv_kernels_for(o.max_isa);
    if (o.tolerance == 0.0) o.tolerance = FCONV_DEFAULT_TOLERANCE;
    plan->options = o;
    plan->threads = o.threads ? o.threads : fconv_parallel_default_threads();
    return FCONV_OK;
}

/* Copy n floats into a new plan-owned buffer. */
static fconv_status copy_floats(const float *src, int64_t n, float **dst, const char *what) {
    *dst = malloc((size_t)n * sizeof(float));
    if (!*dst)
        return fconv_fail(FCONV_ENOMEM, "out of memory copying %lld %s values", (long long)n,
                          what);
    memcpy(*dst, src, (size_t)n * sizeof(float));
    return FCONV_OK;
}

void fconv_plan_destroy(fconv_plan *plan) {
    if (!plan) return;
    if (plan->algo && plan->algo->release) plan->algo->release(plan);
    free(plan->weights);
    free(plan->bias);
    free(plan);
}

/* The steps after validation, shared by the three kinds. Takes ownership of plan. */
static fconv_status finish_plan(fconv_plan *plan, const fconv_options *options,
                                const float *weights, const float *bias, fconv_plan **out) {
    fconv_gemm_init(); /* before any of our threads run: see gemm-blas.c */
    fconv_status st = resolve_options(options, plan);
    if (st == FCONV_OK && weights) st = copy_floats(weights, plan->w_elems, &plan->weights, "weight");
    if (st == FCONV_OK && bias) st = copy_floats(bias, plan->conv2d.k, &plan->bias, "bias");
    if (st == FCONV_OK) st = fconv_select_algorithm(plan);
    if (st == FCONV_OK && plan->algo->prepare) st = plan->algo->prepare(plan);
    if (st != FCONV_OK) {
        fconv_plan_destroy(plan);
        return st;
    }
    *out = plan;
    fconv_clear_error();
    return FCONV_OK;
}

static fconv_status new_plan(const void *desc, fconv_plan **out, const char *fn,
                             fconv_plan **plan) {
    if (!out) return fconv_fail(FCONV_EINVAL, "%s: plan pointer is NULL", fn);
    *out = NULL;
    if (!desc) return fconv_fail(FCONV_EINVAL, "%s: descriptor is NULL", fn);
    *plan = calloc(1, sizeof **plan);
    if (!*plan) return fconv_fail(FCONV_ENOMEM, "%s: out of memory for the plan", fn);
    return FCONV_OK;
}

fconv_status fconv_plan_conv2d(const fconv_conv2d_desc *desc, const fconv_options *options,
                               const float *weights, const float *bias, fconv_plan **out) {
    fconv_plan *plan;
    fconv_status st = new_plan(desc, out, "fconv_plan_conv2d", &plan);
    if (st != FCONV_OK) return st;
    st = fconv_validate_conv2d(desc, plan);
    if (st == FCONV_OK && bias && !plan->conv2d.has_bias)
        st = fconv_fail(FCONV_EINVAL, "conv2d: a bias was given but has_bias is 0");
    if (st != FCONV_OK) {
        fconv_plan_destroy(plan);
        return st;
    }
    return finish_plan(plan, options, weights, bias, out);
}

fconv_status fconv_plan_filter2d(const fconv_filter2d_desc *desc, const fconv_options *options,
                                 const float *kernel, fconv_plan **out) {
    fconv_plan *plan;
    fconv_status st = new_plan(desc, out, "fconv_plan_filter2d", &plan);
    if (st != FCONV_OK) return st;
    st = fconv_validate_filter2d(desc, plan);
    if (st != FCONV_OK) {
        fconv_plan_destroy(plan);
        return st;
    }
    return finish_plan(plan, options, kernel, NULL, out);
}

fconv_status fconv_plan_conv1d(const fconv_conv1d_desc *desc, const fconv_options *options,
                               const float *kernel, fconv_plan **out) {
    fconv_plan *plan;
    fconv_status st = new_plan(desc, out, "fconv_plan_conv1d", &plan);
    if (st != FCONV_OK) return st;
    st = fconv_validate_conv1d(desc, plan);
    if (st != FCONV_OK) {
        fconv_plan_destroy(plan);
        return st;
    }
    return finish_plan(plan, options, kernel, NULL, out);
}

int fconv_plan_output_shape(const fconv_plan *plan, int64_t shape[4]) {
    if (!plan || !shape) return 0;
    switch (plan->kind) {
    case FCONV_KIND_CONV2D:
        shape[0] = plan->conv2d.n;
        if (plan->conv2d.layout == FCONV_LAYOUT_NHWC) {
            shape[1] = plan->out_h;
            shape[2] = plan->out_w;
            shape[3] = plan->conv2d.k;
        } else {
            shape[1] = plan->conv2d.k;
            shape[2] = plan->out_h;
            shape[3] = plan->out_w;
        }
        return 4;
    case FCONV_KIND_FILTER2D:
        shape[0] = plan->out_h;
        shape[1] = plan->out_w;
        shape[2] = plan->filter.channels;
        return 3;
    case FCONV_KIND_CONV1D:
        shape[0] = plan->out_w;
        return 1;
    }
    return 0;
}

int64_t fconv_plan_input_elements(const fconv_plan *plan) { return plan ? plan->x_elems : 0; }
int64_t fconv_plan_weight_elements(const fconv_plan *plan) { return plan ? plan->w_elems : 0; }
int64_t fconv_plan_output_elements(const fconv_plan *plan) { return plan ? plan->y_elems : 0; }
size_t fconv_plan_workspace_size(const fconv_plan *plan) { return plan ? plan->workspace_bytes : 0; }
size_t fconv_plan_device_bytes(const fconv_plan *plan) {
    return plan && plan->options.device != FCONV_DEVICE_CPU ? fconv_gpu_plan_device_bytes(plan) : 0;
}
fconv_algo fconv_plan_algo(const fconv_plan *plan) { return plan ? plan->algo->id : FCONV_ALGO_AUTO; }
const char *fconv_plan_explain(const fconv_plan *plan) { return plan ? plan->explain : ""; }
int fconv_plan_threads(const fconv_plan *plan) { return plan ? plan->threads : 0; }

/* Do [a, a + an) and [b, b + bn) floats overlap? Compared as integers: pointers into
 * different objects cannot be compared with < in C. */
static int overlaps(const float *a, int64_t an, const float *b, int64_t bn) {
    uintptr_t a0 = (uintptr_t)a, a1 = a0 + (uintptr_t)an * sizeof(float);
    uintptr_t b0 = (uintptr_t)b, b1 = b0 + (uintptr_t)bn * sizeof(float);
    return a0 < b1 && b0 < a1;
}

/* Pick w/bias from the call or the plan; exactly one of the two must provide each. */
static fconv_status resolve_operands(const fconv_plan *plan, const float **x, const float **w,
                                     const float **bias, float *y) {
    if (!*x) return fconv_fail(FCONV_EINVAL, "fconv_execute: input x is NULL");
    if (!y) return fconv_fail(FCONV_EINVAL, "fconv_execute: output y is NULL");
    if (plan->weights && *w)
        return fconv_fail(FCONV_EINVAL,
                          "fconv_execute: the plan holds its weights; pass w = NULL");
    if (!plan->weights && !*w)
        return fconv_fail(FCONV_EINVAL,
                          "fconv_execute: weights w are NULL and the plan was made without them");
    if (!*w) *w = plan->weights;
    int has_bias = plan->kind == FCONV_KIND_CONV2D && plan->conv2d.has_bias;
    if (!has_bias && *bias)
        return fconv_fail(FCONV_EINVAL, "fconv_execute: a bias was given but the plan has none");
    if (has_bias) {
        if (plan->bias && *bias)
            return fconv_fail(FCONV_EINVAL,
                              "fconv_execute: the plan holds its bias; pass bias = NULL");
        if (!plan->bias && !*bias)
            return fconv_fail(FCONV_EINVAL,
                              "fconv_execute: bias is NULL and the plan was made without one");
        if (!*bias) *bias = plan->bias;
    }
    if (overlaps(*x, plan->x_elems, y, plan->y_elems))
        return fconv_fail(FCONV_EINVAL, "fconv_execute: input and output overlap");
    if (overlaps(*w, plan->w_elems, y, plan->y_elems))
        return fconv_fail(FCONV_EINVAL, "fconv_execute: weights and output overlap");
    if (*bias && overlaps(*bias, plan->conv2d.k, y, plan->y_elems))
        return fconv_fail(FCONV_EINVAL, "fconv_execute: bias and output overlap");
    return FCONV_OK;
}

fconv_status fconv_execute_with_workspace(const fconv_plan *plan, const float *x, const float *w,
                                          const float *bias, float *y, void *workspace,
                                          size_t workspace_bytes) {
    if (!plan) return fconv_fail(FCONV_EINVAL, "fconv_execute: plan is NULL");
    fconv_status st = resolve_operands(plan, &x, &w, &bias, y);
    if (st != FCONV_OK) return st;
    if (workspace_bytes < plan->workspace_bytes)
        return fconv_fail(FCONV_EWORKSPACE,
                          "fconv_execute: workspace of %zu bytes is smaller than the %zu bytes "
                          "algorithm '%s' needs",
                          workspace_bytes, plan->workspace_bytes, plan->algo->name);
    if (plan->workspace_bytes > 0 && !workspace)
        return fconv_fail(FCONV_EINVAL, "fconv_execute: workspace is NULL but %zu bytes are needed",
                          plan->workspace_bytes);
    /* Algorithms index their workspace as float arrays from a 64-byte boundary. */
    void *aligned = NULL;
    if (workspace && plan->algo_workspace_bytes > 0)
        aligned = (void *)(((uintptr_t)workspace + 63) & ~(uintptr_t)63);
    /* NHWC with an algorithm that reads NCHW only: it runs between copies (layout.c) */
    const int copies = fconv_layout_copies(plan, plan->algo);
    const float *xa = x;
    float *ya = y;
    if (copies) fconv_layout_to_nchw(plan, x, y, aligned, &xa, &ya);
    if (plan->algo->execute_device) {
        st = plan->algo->execute_device(plan, xa, w, bias, ya); /* GPU: records its timing */
        if (st != FCONV_OK) return st;                          /* y untouched */
    } else {
        fconv_gpu_timing_clear();
        struct fconv_run run;
        fconv_run_begin(&run);
        plan->algo->execute(plan, xa, w, bias, ya, aligned);
        if (fconv_run_end(&run)) /* a thread's scratch (core/scratch.h) */
            return fconv_fail(FCONV_ENOMEM, "fconv_execute: cannot allocate a thread's scratch buffers for "
                                            "algorithm '%s'; y is incomplete",
                              plan->algo->name);
    }
    if (copies) fconv_layout_to_nhwc(plan, ya, y);
    fconv_clear_error();
    return FCONV_OK;
}

fconv_status fconv_execute(const fconv_plan *plan, const float *x, const float *w,
                           const float *bias, float *y) {
    if (!plan) return fconv_fail(FCONV_EINVAL, "fconv_execute: plan is NULL");
    void *workspace = NULL;
    if (plan->workspace_bytes > 0) {
        /* Already aligned, so the 63 spare bytes are never touched; allocating them keeps
         * one code path. */
        workspace = fconv_alloc_aligned(plan->workspace_bytes);
        if (!workspace)
            return fconv_fail(FCONV_ENOMEM, "fconv_execute: cannot allocate a %zu-byte workspace",
                              plan->workspace_bytes);
    }
    fconv_status st =
        fconv_execute_with_workspace(plan, x, w, bias, y, workspace, plan->workspace_bytes);
    fconv_free_aligned(workspace);
    return st;
}
