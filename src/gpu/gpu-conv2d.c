/*
 * gpu-conv2d.c - conv2d on the GPU (stride, padding, dilation, groups, bias, ReLU): the
 * tiled, register-blocked implicit GEMM (64 x 64 tiles of 16 x 16 threads), or one thread
 * per output (gpu-naive, and the fallback where a device cannot run 256-thread blocks).
 */
#include "gpu/gpu-driver.h"

fconv_status fconv_gpu_conv2d_run(const fconv_plan *plan, const fconv_gpu_io *io);

fconv_status fconv_gpu_conv2d_run(const fconv_plan *plan, const fconv_gpu_io *io) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    fconv_gpu_arg args[24];
    int n = 0;
    args[n++] = fconv_gpu_buf_arg(io->x);
    args[n++] = fconv_gpu_buf_arg(io->w);
    args[n++] = fconv_gpu_buf_arg(io->bias); /* NULL buffer: no bias */
    args[n++] = fconv_gpu_buf_arg(io->y);
    int64_t ints[] = {d->n, d->c, d->h, d->w, d->k, d->r, d->s, plan->out_h, plan->out_w,
                      d->stride_h, d->stride_w, d->pad_top, d->pad_left, d->dilation_h,
                      d->dilation_w, d->groups, d->activation == FCONV_ACTIVATION_RELU};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) args[n++] = fconv_gpu_i64_arg(ints[i]);
    if (plan->algo->id == FCONV_ALGO_GPU_IMPLICIT_GEMM && io->limits.max_group_size >= 256) {
        int64_t groups[3] = {fconv_gpu_div_up(d->n * plan->out_h * plan->out_w, 64),
                             fconv_gpu_div_up(d->k / d->groups, 64), d->groups};
        int64_t local[3] = {16, 16, 1};
        return io->ops->launch(io->gpu, "conv2d_implicit_gemm", groups, local, args, n, io->timing);
    }
    int64_t T = io->limits.max_group_size < 256 ? (int64_t)io->limits.max_group_size : 256;
    int64_t groups[3] = {fconv_gpu_div_up(plan->y_elems, T), 1, 1}, local[3] = {T, 1, 1};
    return io->ops->launch(io->gpu, "conv2d_naive", groups, local, args, n, io->timing);
}
