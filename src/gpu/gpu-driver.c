/*
 * gpu-driver.c - the part of every GPU algorithm that is not a kernel: plan-time weights
 * uploaded once (prepare/release) and the execute skeleton (serialize on the device, copy
 * the host operands in, let the driver launch, copy y out, record kernel/transfer times).
 */
#include <stdlib.h>

#include "gpu/gpu-driver.h"

struct gpu_state {
    const fconv_gpu_ops *ops;
    fconv_gpu *gpu;
    fconv_gpu_buf *w, *bias; /* plan-time weights on the device, or NULL */
    fconv_gpu_conv2d_state conv2d; /* conv2d's plan-time buffers and walk */
};

static int64_t bias_elems(const fconv_plan *plan) {
    return plan->kind == FCONV_KIND_CONV2D && plan->conv2d.has_bias ? plan->conv2d.k : 0;
}

static fconv_status upload_new(const fconv_gpu_ops *ops, fconv_gpu *gpu, const float *src,
                               int64_t n, fconv_gpu_buf **out, fconv_gpu_timing *t) {
    fconv_status st = ops->alloc(gpu, (size_t)n * sizeof(float), out);
    if (st == FCONV_OK && src) st = ops->upload(gpu, *out, src, (size_t)n * sizeof(float), t);
    return st;
}

fconv_status fconv_gpu_prepare(fconv_plan *plan) {
    struct gpu_state *s = calloc(1, sizeof *s);
    if (!s) return fconv_fail(FCONV_ENOMEM, "%s: out of memory", plan->algo->name);
    plan->algo_state = s;
    s->ops = fconv_gpu_backend(plan->options.device);
    if (!s->ops) return fconv_gpu_check_device(plan->options.device);
    fconv_status st = s->ops->open(&s->gpu);
    if (st != FCONV_OK) return st;
    s->ops->lock(s->gpu);
    if (plan->weights) st = upload_new(s->ops, s->gpu, plan->weights, plan->w_elems, &s->w, NULL);
    if (st == FCONV_OK && plan->bias)
        st = upload_new(s->ops, s->gpu, plan->bias, bias_elems(plan), &s->bias, NULL);
    if (st == FCONV_OK && plan->kind == FCONV_KIND_CONV2D) {
        fconv_gpu_io io = {.ops = s->ops, .gpu = s->gpu, .w = s->w, .bias = s->bias};
        s->ops->limits(s->gpu, &io.limits);
        st = fconv_gpu_conv2d_prepare(plan, &io, &s->conv2d);
        if (st == FCONV_OK) st = s->ops->finish(s->gpu, NULL);
    }
    s->ops->unlock(s->gpu);
    return st;
}

size_t fconv_gpu_plan_device_bytes(const fconv_plan *plan) {
    const struct gpu_state *s = plan->algo_state;
    if (!s) return 0;
    size_t floats = (s->w ? (size_t)plan->w_elems : 0) + (s->bias ? (size_t)bias_elems(plan) : 0);
    return floats * sizeof(float) + (s->conv2d.work ? s->conv2d.work_bytes : 0) +
           (s->conv2d.scratch ? s->conv2d.scratch_bytes : 0);
}

void fconv_gpu_release(fconv_plan *plan) {
    struct gpu_state *s = plan->algo_state;
    if (!s) return;
    if (s->ops && s->gpu) {
        s->ops->lock(s->gpu);
        s->ops->free(s->w);
        s->ops->free(s->bias);
        s->ops->free(s->conv2d.work);
        s->ops->free(s->conv2d.scratch);
        s->ops->unlock(s->gpu);
    }
    free(s);
    plan->algo_state = NULL;
}

fconv_status fconv_gpu_execute(const fconv_plan *plan, const float *x, const float *w,
                               const float *bias, float *y, fconv_gpu_run_fn run) {
    const struct gpu_state *s = plan->algo_state;
    fconv_gpu_timing timing = {0.0, 0.0};
    fconv_gpu_io io = {.ops = s->ops, .gpu = s->gpu, .timing = &timing, .work = s->conv2d.work,
                       .scratch = s->conv2d.scratch,
                       .gemm = s->conv2d.has_gemm ? &s->conv2d.gemm : NULL};
    s->ops->limits(s->gpu, &io.limits);
    fconv_gpu_buf *own_w = NULL, *own_bias = NULL;
    s->ops->lock(s->gpu);
    /* w / bias: the plan's device copy when the caller passed the plan's own host copy. */
    fconv_status st = upload_new(s->ops, s->gpu, x, plan->x_elems, &io.x, &timing);
    if (st == FCONV_OK) {
        if (s->w && w == plan->weights) io.w = s->w;
        else st = upload_new(s->ops, s->gpu, w, plan->w_elems, &own_w, &timing), io.w = own_w;
    }
    if (st == FCONV_OK && bias) {
        if (s->bias && bias == plan->bias) io.bias = s->bias;
        else st = upload_new(s->ops, s->gpu, bias, bias_elems(plan), &own_bias, &timing), io.bias = own_bias;
    }
    io.work_ready = s->conv2d.work_ready && io.w == s->w;
    if (st == FCONV_OK) st = s->ops->alloc(s->gpu, (size_t)plan->y_elems * sizeof(float), &io.y);
    if (st == FCONV_OK) st = run(plan, &io);
    if (st == FCONV_OK)
        st = s->ops->download(s->gpu, y, io.y, (size_t)plan->y_elems * sizeof(float), &timing);
    if (st == FCONV_OK) st = s->ops->finish(s->gpu, &timing);
    s->ops->free(io.x);
    s->ops->free(own_w);
    s->ops->free(own_bias);
    s->ops->free(io.y);
    s->ops->unlock(s->gpu);
    if (st == FCONV_OK) fconv_gpu_timing_set(&timing);
    return st;
}
