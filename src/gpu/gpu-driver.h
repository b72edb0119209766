/*
 * gpu-driver.h - what the device-agnostic GPU drivers share (gpu-driver.c): the plan's
 * device state (plan-time weights kept on the device) and one execute skeleton (lock,
 * copy in, run, copy out, record the timing) around each driver's launch function.
 */
#ifndef FCONV_GPU_DRIVER_H
#define FCONV_GPU_DRIVER_H

#include "core/internal.h"
#include "gpu/gpu.h"

struct fconv_gpu_gemm_geometry;

/* The operands of one execute, on the device. bias is NULL without has_bias. work and
 * scratch are the plan's device buffers (fconv_gpu_conv2d_prepare), NULL for most
 * algorithms; work_ready says work already holds what prepare derived from w
 * (the Winograds' transformed filters: true when w is the plan's weights). gemm is the
 * walk prepare chose for a conv2d GEMM or Winograd (NULL otherwise, or where the tiled
 * kernels cannot run). */
typedef struct fconv_gpu_io {
    const fconv_gpu_ops *ops;
    fconv_gpu *gpu;
    fconv_gpu_limits limits;
    fconv_gpu_buf *x, *w, *bias, *y;
    fconv_gpu_timing *timing;
    fconv_gpu_buf *work, *scratch;
    int work_ready;
    const struct fconv_gpu_gemm_geometry *gemm;
} fconv_gpu_io;

typedef fconv_status (*fconv_gpu_run_fn)(const fconv_plan *plan, const fconv_gpu_io *io);

/* prepare/release of every GPU algorithm: upload the plan's weights and bias once. */
fconv_status fconv_gpu_prepare(fconv_plan *plan);
void fconv_gpu_release(fconv_plan *plan);

/* How gpu-implicit-gemm and gpu-im2col-gemm walk a problem on a device of `compute_units`
 * (gpu-conv2d.c; AUTO's cost model asks too). B, the GEMM's right operand (depth x columns),
 * is gathered from x by the kernel (gather: gpu-implicit-gemm), or a column buffer that
 * conv2d_im2col fills (gpu-im2col-gemm), or, for a 1x1 stride-1 unpadded convolution, x as
 * it lies (direct: rows PQ apart, images C PQ apart; either algorithm).
 *
 * The block tile is the one of FCONV_GPU_GEMM_TILES whose modelled time is least (or the
 * one FCONV_GPU_GEMM_TILE names: 64x64, 64x128 or 128x128). Split-K cuts the depth into
 * ranges when the tiles give fewer than 0.4 x (resident blocks per SM) x compute units
 * blocks, aiming at 0.8 x and keeping at least 8 steps of 16 per range (H200, 64 x 64:
 * 8 x 256 x 56^2 -> 64 1x1, 392 tiles, ran 0.060 ms whole and 0.092 ms in 2 ranges;
 * 512 x 7^2 3x3, 8 tiles, 0.345 ms whole and 0.051 ms in 36 ranges). */
#define FCONV_GPU_GEMM_STEP 16
#define FCONV_GPU_GEMM_TILES 3
typedef struct fconv_gpu_gemm_tile {
    const char *name;        /* "64x64": rows (output channels) x columns */
    int rows, cols, threads; /* block tile and threads per block */
    int resident[2];         /* blocks per SM on the H200 (registers), matrix / gathered B */
    double step_seconds[2];  /* the model's time of one depth element over one wave */
} fconv_gpu_gemm_tile;
extern const fconv_gpu_gemm_tile fconv_gpu_gemm_tiles[FCONV_GPU_GEMM_TILES];

typedef struct fconv_gpu_gemm_geometry {
    int64_t kd, nc;          /* GEMM depth Cg R S, columns N P Q */
    int64_t gchunk, ncc;     /* groups and columns per pass */
    int direct, gather;      /* B is x itself / gathered from x: no column buffer */
    int tile;                /* index into fconv_gpu_gemm_tiles */
    int64_t passes;          /* chunks of groups and columns, each its own launches */
    int64_t splits, kchunk;  /* depth ranges per output tile and the depth of each */
    int64_t cols_floats;     /* the plan's device buffer: columns, then */
    int64_t part_floats;     /* split-K's partial sums */
    double gemm_seconds;     /* the model's time of the GEMM kernels (H200 figures) */
} fconv_gpu_gemm_geometry;
fconv_gpu_gemm_geometry fconv_gpu_gemm_geometry_of(const fconv_plan *plan, int64_t compute_units,
                                                   int gather);

/* gpu-winograd-2x2's (m = 2) or -4x4's (m = 4) walk: the output tiles (m x m outputs each)
 * in chunks of ncc of the nc, the E G GEMMs of a chunk (E = (m + 2)^2, kd = Cg deep;
 * gchunk = E G) as one launch in the tile of the model's choice. cols_floats is the chunk's
 * transformed inputs and products, E (C + K) ncc floats. */
fconv_gpu_gemm_geometry fconv_gpu_winograd_geometry_of(const fconv_plan *plan,
                                                       int64_t compute_units, int m);

/* conv2d's plan-time device state (gpu-conv2d.c): work holds gpu-winograd-2x2's transformed
 * filters (work_ready: derived from the plan's weights) or the GEMMs' column buffer and
 * split-K's partial sums; scratch holds gpu-winograd-2x2's transformed inputs, products
 * and partial sums; gemm is the GEMM walk (has_gemm where the tiled kernels can run). */
typedef struct fconv_gpu_conv2d_state {
    fconv_gpu_buf *work, *scratch;
    size_t work_bytes, scratch_bytes; /* as allocated */
    int work_ready, has_gemm;
    fconv_gpu_gemm_geometry gemm;
} fconv_gpu_conv2d_state;

/* Called by fconv_gpu_prepare with io's ops/gpu/limits set and io->w the plan's weights on
 * the device (or NULL): sets up *st (zeroed first) for the plan's algorithm, allocating what
 * it needs on the device; on failure what it allocated is in *st for the caller to free. */
fconv_status fconv_gpu_conv2d_prepare(const fconv_plan *plan, const fconv_gpu_io *io,
                                      fconv_gpu_conv2d_state *st);

/* The execute skeleton: host pointers in and out, run() launches the kernels. */
fconv_status fconv_gpu_execute(const fconv_plan *plan, const float *x, const float *w,
                               const float *bias, float *y, fconv_gpu_run_fn run);

/* Record this thread's timing of the last GPU execute (gpu-device.c). */
void fconv_gpu_timing_set(const fconv_gpu_timing *t);

/* ceil(a / b) for positive b. */
static inline int64_t fconv_gpu_div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

#endif
