/*
 * umi-internal.h — the UMI plan's layout and what validation, the executor and the
 * strategies share. Invariant: a plan that exists has every read bounds-checked (or a
 * border rule), so the executor trusts every field.
 */
#ifndef FCONV_UMI_INTERNAL_H
#define FCONV_UMI_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "fastconv.h"

/* A view resolved for execution: per component, the axis walked and the step in elements
 * of the flat tensor; per axis, the tensor's C-order stride. */
struct fconv_umi_resolved_view {
    int used;
    int ndim;
    int64_t shape[FCONV_UMI_MAX_AXES];
    int64_t tstride[FCONV_UMI_MAX_AXES];           /* elements between neighbours on axis i */
    fconv_umi_component par[FCONV_UMI_MAX_COMPONENTS];
    fconv_umi_component acc[FCONV_UMI_MAX_COMPONENTS];
    fconv_umi_border border;
    int may_leave;                                  /* some read can fall outside the tensor */
};

struct fconv_umi_plan {
    int n_par, n_acc;
    int64_t par_extent[FCONV_UMI_MAX_COMPONENTS];
    int64_t acc_extent[FCONV_UMI_MAX_COMPONENTS];
    int64_t out_elems, acc_elems;
    struct fconv_umi_resolved_view a, b, init;
    fconv_umi_strategy strategy;
    float param[4];
    fconv_umi_callbacks callbacks;
    int threads;
    fconv_device device; /* FCONV_DEVICE_CPU, or a GPU device (umi-gpu.c) */
};

/* The running state of one parallel point. Built-in strategies use s (sum), n (weighted
 * sum) and c (centre); the callback strategy its own array. */
typedef struct fconv_umi_state {
    float s, n, c;
    double user[FCONV_UMI_STATE_SIZE];
} fconv_umi_state;

/* Strategy (umi-strategy.c, umi-callback.c). pre() starts a point, run() feeds it n element
 * pairs a[i*sa], b[i*sb] (b NULL: zeros; valid NULL: all valid, else only valid[i] != 0),
 * post() finishes it. */
void fconv_umi_pre(const fconv_umi_plan *plan, fconv_umi_state *st, float init);
void fconv_umi_run(const fconv_umi_plan *plan, fconv_umi_state *st, const float *a, ptrdiff_t sa,
                   const float *b, ptrdiff_t sb, const unsigned char *valid, size_t n);
float fconv_umi_post(const fconv_umi_plan *plan, const fconv_umi_state *st);

void fconv_umi_callback_pre(const fconv_umi_plan *plan, fconv_umi_state *st, float init);
void fconv_umi_callback_run(const fconv_umi_plan *plan, fconv_umi_state *st, const float *a,
                            ptrdiff_t sa, const float *b, ptrdiff_t sb, const unsigned char *valid,
                            size_t n);
float fconv_umi_callback_post(const fconv_umi_plan *plan, const fconv_umi_state *st);

/* Run a plan on its GPU device (umi-gpu.c): host pointers in and out, as fconv_umi_execute. */
fconv_status fconv_umi_gpu_execute(const fconv_umi_plan *plan, const float *a, const float *b,
                                   const float *init, float *y);

#endif
