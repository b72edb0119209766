/*
 * gpu-filter2d.c - filter2d on the GPU, every mode and border: one thread per output with
 * the kernel in global (generic) or constant memory, or shared-memory tiles with the halo
 * (border remapped while loading). Kernels too large for constant or local memory run
 * the next simpler kernel: no size is an error.
 */
#include "gpu/gpu-driver.h"

#define TILE 16

fconv_status fconv_gpu_filter2d_run(const fconv_plan *plan, const fconv_gpu_io *io);

fconv_status fconv_gpu_filter2d_run(const fconv_plan *plan, const fconv_gpu_io *io) {
    const fconv_filter2d_desc *f = &plan->filter;
    int64_t groups[3] = {fconv_gpu_div_up(plan->out_w, TILE), fconv_gpu_div_up(plan->out_h, TILE),
                         f->channels};
    int64_t local[3] = {TILE, TILE, 1};
    int64_t taps = f->kh * f->kw;
    /* Tile rows padded to 16 (mod 32) floats: the two 16-thread rows of a warp then read
     * disjoint halves of the 32 banks. */
    int64_t rows = TILE + f->kh - 1, cols = TILE + f->kw - 1;
    int64_t ts = cols + ((16 - cols % 32) + 32) % 32;
    fconv_algo v = plan->algo->id;
    if (v == FCONV_ALGO_GPU_TILED_HALO &&
        (double)rows * (double)ts * sizeof(float) > (double)io->limits.local_mem_bytes)
        v = FCONV_ALGO_GPU_CONSTANT;
    if (v != FCONV_ALGO_GPU_NAIVE && taps > FCONV_GPU_CONSTANT_FLOATS) v = FCONV_ALGO_GPU_NAIVE;

    fconv_gpu_arg args[20];
    int n = 0;
    args[n++] = fconv_gpu_buf_arg(io->x);
    if (v == FCONV_ALGO_GPU_NAIVE) args[n++] = fconv_gpu_buf_arg(io->w);
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
        args[n++] = fconv_gpu_local_arg(rows * ts * (int64_t)sizeof(float));
    } else if (v == FCONV_ALGO_GPU_CONSTANT) {
        kernel = "filter2d_constant";
    }
    if (v != FCONV_ALGO_GPU_NAIVE)
        args[n++] = fconv_gpu_constant_arg(io->w, taps * (int64_t)sizeof(float));
    return io->ops->launch(io->gpu, kernel, groups, local, args, n, io->timing);
}
