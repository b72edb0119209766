/*
 * gpu-filter2d.c - filter2d on the GPU, every mode and border: one thread per output with
 * the kernel in global (generic) or constant memory, or shared-memory tiles with the halo
 * (border remapped while loading) and 4 x 4 outputs per thread. Kernels too large for local
 * or constant memory run the next simpler kernel: no size is an error.
 */
#include "gpu/gpu-driver.h"

#define TILE 16       /* outputs per block side of the one-per-thread kernels */
#define HALO_TILE 64  /* of filter2d_tiled_halo (FC_FT_TILE): 4 x 4 outputs per thread */

fconv_status fconv_gpu_filter2d_run(const fconv_plan *plan, const fconv_gpu_io *io);

fconv_status fconv_gpu_filter2d_run(const fconv_plan *plan, const fconv_gpu_io *io) {
    const fconv_filter2d_desc *f = &plan->filter;
    int64_t local[3] = {TILE, TILE, 1};
    int64_t taps = f->kh * f->kw;
    /* Tile rows padded to 4 (mod 8) floats: the two 16-thread halves of a warp work on rows
     * 4 apart, which then start 16 banks apart. The mask follows the tile. */
    int64_t rows = HALO_TILE + f->kh - 1, cols = HALO_TILE + f->kw - 1;
    int64_t ts = cols + ((4 - cols % 8) + 8) % 8;
    double halo_bytes = ((double)rows * (double)ts + (double)taps) * sizeof(float);
    fconv_algo v = plan->algo->id;
    if (v == FCONV_ALGO_GPU_TILED_HALO &&
        (halo_bytes > (double)io->limits.local_mem_bytes || io->limits.max_group_size < 256))
        v = FCONV_ALGO_GPU_CONSTANT;
    if (v == FCONV_ALGO_GPU_CONSTANT && taps > FCONV_GPU_CONSTANT_FLOATS) v = FCONV_ALGO_GPU_NAIVE;
    int64_t side = v == FCONV_ALGO_GPU_TILED_HALO ? HALO_TILE : TILE;
    int64_t groups[3] = {fconv_gpu_div_up(plan->out_w, side), fconv_gpu_div_up(plan->out_h, side),
                         f->channels};

    fconv_gpu_arg args[20];
    int n = 0;
    args[n++] = fconv_gpu_buf_arg(io->x);
    if (v == FCONV_ALGO_GPU_NAIVE || v == FCONV_ALGO_GPU_TILED_HALO)
        args[n++] = fconv_gpu_buf_arg(io->w);
    args[n++] = fconv_gpu_buf_arg(io->y);
    int64_t ints[] = {f->h, f->w, f->channels, f->kh, f->kw, plan->out_h, plan->out_w,
                      plan->off_h, plan->off_w, (int64_t)f->border};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) args[n++] = fconv_gpu_i64_arg(ints[i]);
    /* zero border is the constant border with value 0 */
    args[n++] = fconv_gpu_f32_arg(f->border == FCONV_BORDER_CONSTANT ? f->border_value : 0.0f);
    args[n++] = fconv_gpu_i64_arg(f->correlate ? 1 : 0);
    const char *kernel = "filter2d_naive";
    if (v == FCONV_ALGO_GPU_TILED_HALO) {
        kernel = "filter2d_tiled_halo";
        args[n++] = fconv_gpu_i64_arg(ts);
        args[n++] = fconv_gpu_local_arg((int64_t)halo_bytes);
    } else if (v == FCONV_ALGO_GPU_CONSTANT) {
        kernel = "filter2d_constant";
        args[n++] = fconv_gpu_constant_arg(io->w, taps * (int64_t)sizeof(float));
    }
    return io->ops->launch(io->gpu, kernel, groups, local, args, n, io->timing);
}
