/*
 * gpu-conv1d.c - conv1d on the GPU: the four classic variants (one thread per output with
 * the mask in global or constant memory; shared-memory tiles with the halo loaded by the
 * block, 16 outputs per thread, or read from global memory). A tile beyond local memory
 * runs the constant-memory kernel, a mask beyond constant memory the generic naive kernel:
 * no size is an error.
 */
#include "gpu/gpu-driver.h"

#define BLOCK 256
#define HALO_OUTPUTS (256 * 16) /* per block of conv1d_tiled_halo (FC_T1_OUT) */

fconv_status fconv_gpu_conv1d_run(const fconv_plan *plan, const fconv_gpu_io *io);

fconv_status fconv_gpu_conv1d_run(const fconv_plan *plan, const fconv_gpu_io *io) {
    const fconv_conv1d_desc *d = &plan->conv1d;
    int64_t T = (int64_t)io->limits.max_group_size < BLOCK ? (int64_t)io->limits.max_group_size : BLOCK;
    int64_t out_n = plan->out_w;
    int64_t local[3] = {T, 1, 1};
    int64_t mask_bytes = d->m * (int64_t)sizeof(float);
    /* conv1d_tiled_halo's 4 phases of ps floats, ps = 8 (mod 32) so that the 32 stores of
     * a warp (8 per phase) hit distinct banks, then the taps. */
    int64_t phase = fconv_gpu_div_up(HALO_OUTPUTS + d->m - 1, 4);
    int64_t ps = phase + ((8 - phase % 32) + 32) % 32;
    double halo_bytes = ((double)(4 * ps) + (double)d->m) * sizeof(float);
    fconv_algo v = plan->algo->id;
    if (v == FCONV_ALGO_GPU_TILED_HALO &&
        (halo_bytes > (double)io->limits.local_mem_bytes || T < 256))
        v = FCONV_ALGO_GPU_CONSTANT;
    if (v != FCONV_ALGO_GPU_NAIVE && v != FCONV_ALGO_GPU_TILED_HALO &&
        d->m > FCONV_GPU_CONSTANT_FLOATS)
        v = FCONV_ALGO_GPU_NAIVE;
    int64_t groups[3] = {fconv_gpu_div_up(out_n, v == FCONV_ALGO_GPU_TILED_HALO ? HALO_OUTPUTS : T),
                         1, 1};

    fconv_gpu_arg args[12];
    int n = 0;
    const char *kernel;
    args[n++] = fconv_gpu_buf_arg(io->x);
    if (v == FCONV_ALGO_GPU_NAIVE || v == FCONV_ALGO_GPU_TILED_HALO)
        args[n++] = fconv_gpu_buf_arg(io->w);
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
        args[n++] = fconv_gpu_i64_arg(ps);
        args[n++] = fconv_gpu_local_arg((int64_t)halo_bytes);
        break;
    case FCONV_ALGO_GPU_TILED_GLOBAL:
        kernel = "conv1d_tiled_global";
        args[n++] = fconv_gpu_local_arg(T * (int64_t)sizeof(float));
        break;
    default:
        kernel = "conv1d_naive";
        break;
    }
    if (v == FCONV_ALGO_GPU_CONSTANT || v == FCONV_ALGO_GPU_TILED_GLOBAL)
        args[n++] = fconv_gpu_constant_arg(io->w, mask_bytes);
    return io->ops->launch(io->gpu, kernel, groups, local, args, n, io->timing);
}
