/*
 * umi-gpu.c — a UMI plan on a GPU device (FCONV_DEVICE_OPENCL / FCONV_DEVICE_CUDA): copy a,
 * b and init to the device with the plan written as a small i64 array, launch umi_generic
 * (src/gpu/gpu-kernels.h: one thread per output point, the CPU executor's walk and border
 * rules, the built-in strategies), copy y back. Serialized per device like the other GPU
 * plans; the kernel and transfer times go to fconv_last_execute_timing.
 */
#include <string.h>

#include "gpu/gpu-driver.h"
#include "umi/umi-internal.h"

#define UMI_GPU_BLOCK 256
#define UMI_GPU_DESC 116 /* UMI_D_SIZE of gpu-kernels.h: 11 + 3 views x 35 */
#define UMI_GPU_VIEW 35

/* One view's block of the descriptor array (the layout is documented at umi_generic). */
static void put_view(int64_t *d, const struct fconv_umi_resolved_view *v) {
    memset(d, 0, UMI_GPU_VIEW * sizeof *d);
    d[0] = v->used;
    if (!v->used) return;
    d[1] = v->ndim;
    d[2] = (int64_t)v->border;
    for (int i = 0; i < v->ndim; i++) {
        d[3 + i] = v->shape[i];
        d[7 + i] = v->tstride[i];
    }
    for (int j = 0; j < FCONV_UMI_MAX_COMPONENTS; j++) {
        d[11 + 3 * j] = v->par[j].axis;
        d[12 + 3 * j] = v->par[j].stride;
        d[13 + 3 * j] = v->par[j].offset;
        d[23 + 3 * j] = v->acc[j].axis;
        d[24 + 3 * j] = v->acc[j].stride;
        d[25 + 3 * j] = v->acc[j].offset;
    }
}

static int64_t view_elems(const struct fconv_umi_resolved_view *v) {
    return v->used ? v->shape[0] * v->tstride[0] : 0;
}

static fconv_status upload_new(const fconv_gpu_ops *ops, fconv_gpu *gpu, const void *src,
                               size_t bytes, fconv_gpu_buf **out, fconv_gpu_timing *t) {
    fconv_status st = ops->alloc(gpu, bytes, out);
    if (st == FCONV_OK) st = ops->upload(gpu, *out, src, bytes, t);
    return st;
}

fconv_status fconv_umi_gpu_execute(const fconv_umi_plan *p, const float *a, const float *b,
                                   const float *init, float *y) {
    const fconv_gpu_ops *ops = fconv_gpu_backend(p->device);
    if (!ops) return fconv_gpu_check_device(p->device);
    fconv_gpu *gpu;
    fconv_status st = ops->open(&gpu);
    if (st != FCONV_OK) return st;
    int64_t d[UMI_GPU_DESC];
    memset(d, 0, sizeof d);
    d[0] = p->n_par;
    d[1] = p->n_acc;
    d[2] = (int64_t)p->strategy;
    for (int j = 0; j < p->n_par; j++) d[3 + j] = p->par_extent[j];
    for (int j = 0; j < p->n_acc; j++) d[7 + j] = p->acc_extent[j];
    put_view(d + 11, &p->a);
    put_view(d + 11 + UMI_GPU_VIEW, &p->b);
    put_view(d + 11 + 2 * UMI_GPU_VIEW, &p->init);

    fconv_gpu_limits lim;
    ops->limits(gpu, &lim);
    int64_t T = (int64_t)lim.max_group_size < UMI_GPU_BLOCK ? (int64_t)lim.max_group_size : UMI_GPU_BLOCK;
    if (T < 1) T = 1;
    int64_t groups[3] = {fconv_gpu_div_up(p->out_elems, T), 1, 1}, local[3] = {T, 1, 1};
    fconv_gpu_timing timing = {0.0, 0.0};
    fconv_gpu_buf *da = NULL, *db = NULL, *di = NULL, *dd = NULL, *dy = NULL;
    ops->lock(gpu);
    st = upload_new(ops, gpu, a, (size_t)view_elems(&p->a) * sizeof(float), &da, &timing);
    if (st == FCONV_OK && p->b.used)
        st = upload_new(ops, gpu, b, (size_t)view_elems(&p->b) * sizeof(float), &db, &timing);
    if (st == FCONV_OK && p->init.used)
        st = upload_new(ops, gpu, init, (size_t)view_elems(&p->init) * sizeof(float), &di, &timing);
    if (st == FCONV_OK) st = upload_new(ops, gpu, d, sizeof d, &dd, &timing);
    if (st == FCONV_OK) st = ops->alloc(gpu, (size_t)p->out_elems * sizeof(float), &dy);
    if (st == FCONV_OK) {
        /* An unused b / init passes a in its place (never read): no NULL buffer arguments. */
        fconv_gpu_arg args[7] = {fconv_gpu_buf_arg(da), fconv_gpu_buf_arg(db ? db : da),
                                 fconv_gpu_buf_arg(di ? di : da), fconv_gpu_buf_arg(dy),
                                 fconv_gpu_buf_arg(dd), fconv_gpu_i64_arg(p->out_elems),
                                 fconv_gpu_f32_arg(p->param[0])};
        st = ops->launch(gpu, "umi_generic", groups, local, args, 7, &timing);
    }
    if (st == FCONV_OK) st = ops->download(gpu, y, dy, (size_t)p->out_elems * sizeof(float), &timing);
    if (st == FCONV_OK) st = ops->finish(gpu, &timing);
    ops->free(da);
    ops->free(db);
    ops->free(di);
    ops->free(dd);
    ops->free(dy);
    ops->unlock(gpu);
    if (st != FCONV_OK) return st;
    fconv_gpu_timing_set(&timing);
    fconv_clear_error();
    return FCONV_OK;
}
