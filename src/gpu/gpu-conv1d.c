/*
 * gpu-conv1d.c - conv1d on the GPU: the four classic variants (one thread per output with
 * the mask in global or constant memory; shared-memory tiles with the halo loaded by the
 * block or read from global memory). A mask beyond constant memory, or a tile beyond local
 * memory, runs the generic naive kernel instead: no size is an error.
 */
#include "gpu/gpu-driver.h"

#define BLOCK 256

fconv_status fconv_gpu_conv1d_run(const fconv_plan *plan, const fconv_gpu_io *io);

fconv_status fconv_gpu_conv1d_run(const fconv_plan *plan, const fconv_gpu_io *io) {
    const fconv_conv1d_desc *d = &plan->conv1d;
    int64_t T = (int64_t)io->limits.max_group_size < BLOCK ? (int64_t)io->limits.max_group_size : BLOCK;
    int64_t out_n = plan->out_w;
    int64_t groups[3] = {fconv_gpu_div_up(out_n, T), 1, 1}, local[3] = {T, 1, 1};
    int64_t mask_bytes = d->m * (int64_t)sizeof(float);
    int fits_constant = d->m <= FCONV_GPU_CONSTANT_FLOATS;
    fconv_algo v = plan->algo->id;
    if (v == FCONV_ALGO_GPU_TILED_HALO &&
        (size_t)(T + d->m - 1) * sizeof(float) > io->limits.local_mem_bytes)
        v = FCONV_ALGO_GPU_NAIVE;
    if (v != FCONV_ALGO_GPU_NAIVE && !fits_constant) v = FCONV_ALGO_GPU_NAIVE;

    fconv_gpu_arg args[10];
    int n = 0;
    const char *kernel;
    args[n++] = fconv_gpu_buf_arg(io->x);
    if (v == FCONV_ALGO_GPU_NAIVE) args[n++] = fconv_gpu_buf_arg(io->w);
    args[n++] = fconv_gpu_buf_arg(io->y);
    args[n++] = fconv_gpu_i64_arg(d->n);
    args[n++] = fconv_gpu_i64_arg(d->m);
    args[n++] = fconv_gpu_i64_arg(out_n);
    args[n++] = fconv_gpu_i64_arg(plan->off_w);
    args[n++] = fconv_gpu_i64_arg(d->correlate ? 1 : 0);
    switch (v) {
    case FCONV_ALGO_GPU_CONSTANT:
        kernel = "conv1d_constant";
        break;
    case FCONV_ALGO_GPU_TILED_HALO:
        kernel = "conv1d_tiled_halo";
        args[n++] = fconv_gpu_local_arg((T + d->m - 1) * (int64_t)sizeof(float));
        break;
    case FCONV_ALGO_GPU_TILED_GLOBAL:
        kernel = "conv1d_tiled_global";
        args[n++] = fconv_gpu_local_arg(T * (int64_t)sizeof(float));
        break;
    default:
        kernel = "conv1d_naive";
        break;
    }
    if (v != FCONV_ALGO_GPU_NAIVE) args[n++] = fconv_gpu_constant_arg(io->w, mask_bytes);
    return io->ops->launch(io->gpu, kernel, groups, local, args, n, io->timing);
}
