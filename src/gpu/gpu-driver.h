/*
 * gpu-driver.h - what the device-agnostic GPU drivers share (gpu-driver.c): the plan's
 * device state (plan-time weights kept on the device) and one execute skeleton (lock,
 * copy in, run, copy out, record the timing) around each driver's launch function.
 */
#ifndef FCONV_GPU_DRIVER_H
#define FCONV_GPU_DRIVER_H

#include "core/internal.h"
#include "gpu/gpu.h"

/* The operands of one execute, on the device. bias is NULL without has_bias. work is the
 * plan's device scratch (fconv_gpu_conv2d_prepare), NULL for most algorithms; work_ready
 * says it already holds what prepare derived from w (gpu-winograd-2x2's transformed
 * filters: true when w is the plan's weights). */
typedef struct fconv_gpu_io {
    const fconv_gpu_ops *ops;
    fconv_gpu *gpu;
    fconv_gpu_limits limits;
    fconv_gpu_buf *x, *w, *bias, *y;
    fconv_gpu_timing *timing;
    fconv_gpu_buf *work;
    int work_ready;
} fconv_gpu_io;

typedef fconv_status (*fconv_gpu_run_fn)(const fconv_plan *plan, const fconv_gpu_io *io);

/* prepare/release of every GPU algorithm: upload the plan's weights and bias once. */
fconv_status fconv_gpu_prepare(fconv_plan *plan);
void fconv_gpu_release(fconv_plan *plan);

/* conv2d's plan-time device buffer (gpu-conv2d.c), called by fconv_gpu_prepare with io's
 * ops/gpu/limits set and io->w the plan's weights on the device (or NULL): allocates *work
 * when the algorithm needs one (gpu-winograd-2x2: transformed filters, filled from io->w when
 * given, then *ready = 1; gpu-im2col-gemm: the column buffer), else leaves it NULL. */
fconv_status fconv_gpu_conv2d_prepare(const fconv_plan *plan, const fconv_gpu_io *io,
                                      fconv_gpu_buf **work, int *ready);

/* How gpu-im2col-gemm walks a problem on a device of `compute_units` (gpu-conv2d.c; AUTO's
 * cost model asks too). A 1x1 stride-1 unpadded convolution needs no columns: the GEMM
 * reads x as it lies (rows PQ apart, images C PQ apart). Split-K cuts the depth into
 * ranges when a chunk's 64 x 64 tiles give fewer than 2 blocks per compute unit (a block is
 * 2 warps: 2 blocks just give a multiprocessor's 4 schedulers one warp each), aiming at 4
 * blocks per unit and keeping at least 8 steps of 16 per range (H200: 8 x 256 x 56^2 -> 64
 * 1x1, 392 tiles, ran 0.060 ms whole and 0.092 ms in 2 ranges; 512 x 7^2 3x3, 8 tiles,
 * 0.345 ms whole and 0.051 ms in 36 ranges). */
#define FCONV_GPU_GEMM_TILE 64
#define FCONV_GPU_GEMM_STEP 16
typedef struct fconv_gpu_gemm_geometry {
    int64_t kd, nc;          /* GEMM depth Cg R S, columns N P Q */
    int64_t gchunk, ncc;     /* groups and columns per pass */
    int direct;              /* B is x itself: no column buffer, no im2col launch */
    int64_t splits, kchunk;  /* depth ranges per output tile and the depth of each */
    int64_t cols_floats;     /* the plan's device buffer: columns, then */
    int64_t part_floats;     /* split-K's partial sums */
} fconv_gpu_gemm_geometry;
fconv_gpu_gemm_geometry fconv_gpu_gemm_geometry_of(const fconv_plan *plan, int64_t compute_units);

/* The execute skeleton: host pointers in and out, run() launches the kernels. */
fconv_status fconv_gpu_execute(const fconv_plan *plan, const float *x, const float *w,
                               const float *bias, float *y, fconv_gpu_run_fn run);

/* Record this thread's timing of the last GPU execute (gpu-device.c). */
void fconv_gpu_timing_set(const fconv_gpu_timing *t);

/* ceil(a / b) for positive b. */
static inline int64_t fconv_gpu_div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

#endif
