/*
 * umi-plan.c — validate a UMI descriptor and make the plan. Every read is checked here:
 * for each view and axis, the exact range of coordinates the parallel and accumulation
 * extents can produce is computed with overflow-checked arithmetic and compared with the
 * tensor, so a plan without a border rule can never read outside its tensor.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/parallel.h"
#include "kernels/gemm/gemm.h"
#include "umi/umi-internal.h"

static const char *const strategy_names[] = {"dot", "dot-relu", "dot-leaky-relu", "dot-sigmoid",
                                             "dot-tanh", "sad", "ssd", "bilateral", "callback",
                                             "absdiff"};

/* a + b without overflow (|a|, |b| < 2^63 by construction); 0 or -1. */
static int add_checked(int64_t a, int64_t b, int64_t *out) {
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return -1;
    *out = a + b;
    return 0;
}

/* Add one component's contribution k*stride + offset, k in [0, extent), to [lo, hi]. The
 * limits (|stride|, |offset|, extent <= 2^31) keep every product below 2^62. */
static int widen(const fconv_umi_component *c, int64_t extent, int64_t *lo, int64_t *hi) {
    int64_t far = c->stride * (extent - 1);
    int64_t mn = far < 0 ? far : 0, mx = far > 0 ? far : 0;
    if (add_checked(*lo, mn + c->offset, lo) || add_checked(*hi, mx + c->offset, hi)) return -1;
    return 0;
}

static fconv_status check_component(const char *name, const char *kind, int j,
                                    const fconv_umi_component *c, int ndim) {
    if (c->axis < 0 || c->axis >= ndim)
        return fconv_fail(FCONV_EINVAL, "umi: view %s %s component %d walks axis %d, the tensor has %d axes",
                          name, kind, j, c->axis, ndim);
    if (c->stride > FCONV_MAX_DIM || c->stride < -FCONV_MAX_DIM)
        return fconv_fail(FCONV_EOVERFLOW, "umi: view %s %s component %d: |stride| %lld exceeds %lld",
                          name, kind, j, (long long)c->stride, (long long)FCONV_MAX_DIM);
    if (c->offset > FCONV_MAX_DIM || c->offset < -FCONV_MAX_DIM)
        return fconv_fail(FCONV_EOVERFLOW, "umi: view %s %s component %d: |offset| %lld exceeds %lld",
                          name, kind, j, (long long)c->offset, (long long)FCONV_MAX_DIM);
    return FCONV_OK;
}

/* Validate view v (named name) of desc and resolve it into r. with_acc: the view walks the
 * accumulation components (the init view does not). */
static fconv_status resolve_view(const fconv_umi_desc *d, const fconv_umi_view *v, const char *name,
                                 int with_acc, struct fconv_umi_resolved_view *r) {
    memset(r, 0, sizeof *r);
    if (v->ndim < 1 || v->ndim > FCONV_UMI_MAX_AXES)
        return fconv_fail(FCONV_EINVAL, "umi: view %s: ndim %d is not in [1, %d]", name, v->ndim,
                          FCONV_UMI_MAX_AXES);
    int64_t elems = 1;
    for (int i = 0; i < v->ndim; i++) {
        if (v->shape[i] < 1)
            return fconv_fail(FCONV_EINVAL, "umi: view %s: shape[%d] = %lld must be >= 1", name, i,
                              (long long)v->shape[i]);
        if (v->shape[i] > FCONV_MAX_DIM)
            return fconv_fail(FCONV_EOVERFLOW, "umi: view %s: shape[%d] = %lld exceeds %lld", name, i,
                              (long long)v->shape[i], (long long)FCONV_MAX_DIM);
        if (fconv_mul_i64(elems, v->shape[i], &elems) || elems > FCONV_MAX_ELEMENTS)
            return fconv_fail(FCONV_EOVERFLOW, "umi: view %s: the tensor has more than %lld elements",
                              name, (long long)FCONV_MAX_ELEMENTS);
    }
    if ((unsigned)v->border > FCONV_UMI_BORDER_SKIP)
        return fconv_fail(FCONV_EINVAL, "umi: view %s: unknown border rule %d", name, (int)v->border);
    fconv_status st;
    for (int j = 0; j < d->n_par; j++)
        if ((st = check_component(name, "parallel", j, &v->par[j], v->ndim)) != FCONV_OK) return st;
    for (int j = 0; with_acc && j < d->n_acc; j++)
        if ((st = check_component(name, "accumulation", j, &v->acc[j], v->ndim)) != FCONV_OK) return st;

    r->used = 1;
    r->ndim = v->ndim;
    r->border = v->border;
    int64_t t = 1;
    for (int i = v->ndim - 1; i >= 0; i--) {
        r->shape[i] = v->shape[i];
        r->tstride[i] = t;
        t *= v->shape[i];
    }
    for (int j = 0; j < d->n_par; j++) r->par[j] = v->par[j];
    for (int j = 0; with_acc && j < d->n_acc; j++) r->acc[j] = v->acc[j];

    /* The exact coordinate range on each axis (Eq. 5 summed over the components). */
    for (int i = 0; i < v->ndim; i++) {
        int64_t lo = 0, hi = 0;
        int bad = 0;
        for (int j = 0; j < d->n_par; j++)
            if (r->par[j].axis == i) bad |= widen(&r->par[j], d->par_extent[j], &lo, &hi);
        for (int j = 0; with_acc && j < d->n_acc; j++)
            if (r->acc[j].axis == i) bad |= widen(&r->acc[j], d->acc_extent[j], &lo, &hi);
        if (bad)
            return fconv_fail(FCONV_EOVERFLOW, "umi: view %s axis %d: coordinates overflow int64", name, i);
        if (lo < 0 || hi >= v->shape[i]) {
            if (v->border == FCONV_UMI_BORDER_NONE)
                return fconv_fail(FCONV_EINVAL,
                                  "umi: view %s axis %d reads indices %lld..%lld outside [0, %lld) "
                                  "and has no border rule",
                                  name, i, (long long)lo, (long long)hi, (long long)v->shape[i]);
            r->may_leave = 1;
        }
    }
    return FCONV_OK;
}

static fconv_status check_extents(const char *kind, int n, const int64_t *ext, int64_t *total) {
    *total = 1;
    for (int j = 0; j < n; j++) {
        if (ext[j] < 1)
            return fconv_fail(FCONV_EINVAL, "umi: %s extent %d is %lld, must be >= 1", kind, j, (long long)ext[j]);
        if (ext[j] > FCONV_MAX_DIM)
            return fconv_fail(FCONV_EOVERFLOW, "umi: %s extent %d is %lld, exceeds %lld", kind, j,
                              (long long)ext[j], (long long)FCONV_MAX_DIM);
        if (fconv_mul_i64(*total, ext[j], total) || *total > FCONV_MAX_ELEMENTS)
            return fconv_fail(FCONV_EOVERFLOW, "umi: %s extents multiply to more than %lld", kind,
                              (long long)FCONV_MAX_ELEMENTS);
    }
    return FCONV_OK;
}

/* Which views a strategy needs: 1 required, 0 optional, -1 refused. */
static void strategy_views(fconv_umi_strategy s, int *need_b, int *need_init) {
    switch (s) {
    case FCONV_UMI_SAD:
    case FCONV_UMI_SSD:
    case FCONV_UMI_ABSDIFF: *need_b = 1; *need_init = -1; break;
    case FCONV_UMI_BILATERAL: *need_b = 1; *need_init = 1; break;
    case FCONV_UMI_CALLBACK: *need_b = 0; *need_init = 0; break;
    default: *need_b = 1; *need_init = 0; break; /* the DOT family: init is a bias */
    }
}

static fconv_status validate(const fconv_umi_desc *d, fconv_umi_plan *p) {
    if (d->n_par < 1 || d->n_par > FCONV_UMI_MAX_COMPONENTS)
        return fconv_fail(FCONV_EINVAL, "umi: n_par %d is not in [1, %d]", d->n_par, FCONV_UMI_MAX_COMPONENTS);
    if (d->n_acc < 0 || d->n_acc > FCONV_UMI_MAX_COMPONENTS)
        return fconv_fail(FCONV_EINVAL, "umi: n_acc %d is not in [0, %d]", d->n_acc, FCONV_UMI_MAX_COMPONENTS);
    fconv_status st;
    if ((st = check_extents("parallel", d->n_par, d->par_extent, &p->out_elems)) != FCONV_OK) return st;
    if ((st = check_extents("accumulation", d->n_acc, d->acc_extent, &p->acc_elems)) != FCONV_OK) return st;
    if ((unsigned)d->strategy > FCONV_UMI_ABSDIFF)
        return fconv_fail(FCONV_EINVAL, "umi: unknown strategy %d", (int)d->strategy);
    const char *sname = strategy_names[d->strategy];
    int need_b, need_init;
    strategy_views(d->strategy, &need_b, &need_init);
    if (need_b == 1 && !d->has_b)
        return fconv_fail(FCONV_EINVAL, "umi: strategy %s needs view b (has_b is 0)", sname);
    if (need_init == 1 && !d->has_init)
        return fconv_fail(FCONV_EINVAL, "umi: strategy %s needs an init view (has_init is 0)", sname);
    if (need_init == -1 && d->has_init)
        return fconv_fail(FCONV_EINVAL, "umi: strategy %s takes no init view (has_init is set)", sname);
    if (d->strategy == FCONV_UMI_ABSDIFF && d->n_acc != 0)
        return fconv_fail(FCONV_EINVAL, "umi: strategy absdiff is elementwise: n_acc must be 0, got %d",
                          d->n_acc);
    if (d->strategy == FCONV_UMI_CALLBACK) {
        if (!d->callbacks) return fconv_fail(FCONV_EINVAL, "umi: strategy callback needs callbacks");
        if (!d->callbacks->step || !d->callbacks->post)
            return fconv_fail(FCONV_EINVAL, "umi: callbacks: step and post are required");
        p->callbacks = *d->callbacks;
    } else if (d->callbacks) {
        return fconv_fail(FCONV_EINVAL, "umi: callbacks given but the strategy is %s, not callback", sname);
    }
    if (d->strategy == FCONV_UMI_BILATERAL && !(d->param[0] >= 0 && isfinite(d->param[0])))
        return fconv_fail(FCONV_EINVAL, "umi: bilateral param[0] (1 / (2 sigma_range^2)) must be finite "
                                        "and >= 0, got %g", (double)d->param[0]);
    if (d->strategy == FCONV_UMI_DOT_LEAKY_RELU && !isfinite(d->param[0]))
        return fconv_fail(FCONV_EINVAL, "umi: leaky-relu slope param[0] must be finite");

    p->n_par = d->n_par;
    p->n_acc = d->n_acc;
    for (int j = 0; j < d->n_par; j++) p->par_extent[j] = d->par_extent[j];
    for (int j = 0; j < d->n_acc; j++) p->acc_extent[j] = d->acc_extent[j];
    p->strategy = d->strategy;
    memcpy(p->param, d->param, sizeof p->param);
    if ((st = resolve_view(d, &d->a, "a", 1, &p->a)) != FCONV_OK) return st;
    if (d->has_b && (st = resolve_view(d, &d->b, "b", 1, &p->b)) != FCONV_OK) return st;
    if (d->has_init && (st = resolve_view(d, &d->init, "init", 0, &p->init)) != FCONV_OK) return st;
    return FCONV_OK;
}

fconv_status fconv_umi_plan_create(const fconv_umi_desc *desc, const fconv_options *options,
                                   fconv_umi_plan **plan) {
    if (!desc || !plan) return fconv_fail(FCONV_EINVAL, "umi: desc and plan must not be NULL");
    fconv_options o = {0};
    if (options) o = *options;
    if (o.threads < 0)
        return fconv_fail(FCONV_EINVAL, "umi: options.threads must be >= 0 (0 = all cores), got %d", o.threads);
    if (o.algo != FCONV_ALGO_AUTO)
        return fconv_fail(FCONV_EINVAL, "umi: options.algo must be auto (the UMI operator has one executor)");
    fconv_gemm_init(); /* before any of our threads run: see gemm-blas.c */
    fconv_umi_plan *p = calloc(1, sizeof *p);
    if (!p) return fconv_fail(FCONV_ENOMEM, "umi: out of memory for the plan");
    fconv_status st = validate(desc, p);
    if (st != FCONV_OK) {
        free(p);
        return st;
    }
    if (o.device != FCONV_DEVICE_CPU) {
        /* The GPU kernel (umi_generic, src/gpu/gpu-kernels.h) runs the built-in strategies;
         * it cannot call the caller's host functions. */
        if (p->strategy == FCONV_UMI_CALLBACK) {
            free(p);
            return fconv_fail(FCONV_EUNSUPPORTED,
                              "umi: strategy callback runs only on the CPU device (a GPU kernel "
                              "cannot call host functions); use a built-in strategy or FCONV_DEVICE_CPU");
        }
        if ((st = fconv_gpu_check_device(o.device)) != FCONV_OK) { /* ENODEVICE with the reason */
            free(p);
            return st;
        }
    }
    p->device = o.device;
    p->threads = o.threads ? o.threads : fconv_parallel_default_threads();
    *plan = p;
    fconv_clear_error();
    return FCONV_OK;
}

int64_t fconv_umi_plan_output_elements(const fconv_umi_plan *plan) { return plan ? plan->out_elems : 0; }

void fconv_umi_plan_destroy(fconv_umi_plan *plan) { free(plan); }
