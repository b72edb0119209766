/*
 * gpu-algorithms.c - the GPU algorithms' table entries (registered in src/algo/registry.c):
 * each runs only on FCONV_DEVICE_OPENCL / FCONV_DEVICE_CUDA, needs no host workspace, and
 * dispatches by problem kind to gpu-conv1d.c, gpu-filter2d.c or gpu-conv2d.c.
 * Error bounds are direct's (float32 accumulation in the definition's order), except
 * gpu-winograd-2x2's, which is CPU winograd-2x2's.
 */
#include <stdio.h>

#include "gpu/gpu-driver.h"

fconv_status fconv_gpu_conv1d_run(const fconv_plan *plan, const fconv_gpu_io *io);
fconv_status fconv_gpu_filter2d_run(const fconv_plan *plan, const fconv_gpu_io *io);
fconv_status fconv_gpu_conv2d_run(const fconv_plan *plan, const fconv_gpu_io *io);

#define GPU_DEVICES ((1u << FCONV_DEVICE_OPENCL) | (1u << FCONV_DEVICE_CUDA))

static fconv_status run(const fconv_plan *plan, const fconv_gpu_io *io) {
    switch (plan->kind) {
    case FCONV_KIND_CONV1D: return fconv_gpu_conv1d_run(plan, io);
    case FCONV_KIND_FILTER2D: return fconv_gpu_filter2d_run(plan, io);
    case FCONV_KIND_CONV2D: return fconv_gpu_conv2d_run(plan, io);
    }
    return fconv_fail(FCONV_EINTERNAL, "gpu: unknown problem kind");
}

static fconv_status execute(const fconv_plan *plan, const float *x, const float *w,
                            const float *bias, float *y) {
    return fconv_gpu_execute(plan, x, w, bias, y, run);
}

static fconv_status supports_all(const fconv_plan *plan, char *why, size_t why_len) {
    (void)plan, (void)why, (void)why_len;
    return FCONV_OK; /* every shape: too-large masks and tiles fall back inside the driver */
}

static size_t no_workspace(const fconv_plan *plan) {
    (void)plan;
    return 0;
}

/* Relative costs for AUTO on a device (seconds at nominal rates; only the order matters):
 * tiles beat constant memory beat global memory; implicit GEMM beats one thread per output. */
static double cost_scaled(const fconv_plan *plan, double ns_per_mac) {
    return 1e-5 + fconv_plan_macs(plan) * ns_per_mac * 1e-9;
}
static double cost_naive(const fconv_plan *p) { return cost_scaled(p, 0.004); }
static double cost_constant(const fconv_plan *p) { return cost_scaled(p, 0.002); }
static double cost_tiled_halo(const fconv_plan *p) { return cost_scaled(p, 0.001); }
static double cost_tiled_global(const fconv_plan *p) { return cost_scaled(p, 0.0015); }
static double cost_gemm(const fconv_plan *p) { return cost_scaled(p, 0.0005); }

/* gpu-winograd-2x2 (not measured on a GPU; the order follows the work): the 16 products per
 * 2x2 tile run at the implicit GEMM's rate over the padded block (16 output channels x 8
 * input channels), the input transform is redone per 16-channel output block, the output
 * transform once per output, plus the filter transform when the weights come at execute
 * time. For C, K >= 16 that is about 2x cheaper than implicit GEMM; depthwise is dearer. */
static double cost_winograd(const fconv_plan *p) {
    const fconv_conv2d_desc *d = &p->conv2d;
    double cg = (double)(d->c / d->groups);
    double cgp = 8.0 * (double)((d->c / d->groups + 7) / 8);
    double kblocks = (double)((d->k / d->groups + 15) / 16);
    double tiles = (double)d->n * (double)((p->out_h + 3) / 4) * 2.0 *
                   (double)((p->out_w + 31) / 32) * 16.0; /* padded to 2 x 16 tile blocks */
    double t = 1e-5 + tiles * (double)d->groups * kblocks * 16.0 * cgp * 16.0 * 0.0005e-9;
    t += tiles * (double)d->c * kblocks * 16.0 * 0.002e-9; /* B^T d B */
    t += tiles * (double)d->k * 16.0 * 0.001e-9;            /* A^T m A */
    if (!p->weights) t += 1e-5 + (double)d->k * cg * 16.0 * 0.01e-9;
    return t;
}

/* gpu-im2col-gemm: the GEMM streams contiguous columns (no index arithmetic in its loads,
 * unlike implicit GEMM's gather, which is redone for every 64-channel block), plus writing
 * and reading the column buffer once at ~400 GB/s and two launches per chunk. */
static double cost_im2col(const fconv_plan *p) {
    const fconv_conv2d_desc *d = &p->conv2d;
    double cols = (double)d->c * (double)d->r * (double)d->s * (double)d->n * (double)p->out_h *
                  (double)p->out_w;
    return 2e-5 + fconv_plan_macs(p) * 0.0004e-9 + cols * 8.0 / 400e9;
}

static fconv_status supports_winograd(const fconv_plan *plan, char *why, size_t why_len) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    if (d->r != 3 || d->s != 3) {
        snprintf(why, why_len, "gpu-winograd-2x2 needs a 3x3 kernel, got %lldx%lld",
                 (long long)d->r, (long long)d->s);
        return FCONV_EUNSUPPORTED;
    }
    if (d->stride_h != 1 || d->stride_w != 1) {
        snprintf(why, why_len, "gpu-winograd-2x2 needs stride 1, got %lldx%lld",
                 (long long)d->stride_h, (long long)d->stride_w);
        return FCONV_EUNSUPPORTED;
    }
    if (d->dilation_h != 1 || d->dilation_w != 1) {
        snprintf(why, why_len, "gpu-winograd-2x2 needs dilation 1, got %lldx%lld",
                 (long long)d->dilation_h, (long long)d->dilation_w);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

#define GPU_ENTRY(ID, NAME, SUMMARY, SERVES, COST)                                              \
    GPU_ENTRY_EX(ID, NAME, SUMMARY, SERVES, COST, supports_all, 2e-6)
#define GPU_ENTRY_EX(ID, NAME, SUMMARY, SERVES, COST, SUPPORTS, BOUND)                          \
    {.id = ID, .name = NAME, .summary = SUMMARY, .serves = SERVES, .error_bound = BOUND,      \
     .supports = SUPPORTS, .workspace = no_workspace, .cost = COST,                          \
     .prepare = fconv_gpu_prepare, .release = fconv_gpu_release, .execute = NULL,            \
     .devices = GPU_DEVICES, .execute_device = execute}

const struct fconv_algorithm fconv_algorithm_gpu_naive = GPU_ENTRY(
    FCONV_ALGO_GPU_NAIVE, "gpu-naive", "GPU: one thread per output, weights in global memory",
    FCONV_SERVES_CONV2D | FCONV_SERVES_FILTER2D | FCONV_SERVES_CONV1D, cost_naive);
const struct fconv_algorithm fconv_algorithm_gpu_constant = GPU_ENTRY(
    FCONV_ALGO_GPU_CONSTANT, "gpu-constant", "GPU: one thread per output, mask in constant memory",
    FCONV_SERVES_FILTER2D | FCONV_SERVES_CONV1D, cost_constant);
const struct fconv_algorithm fconv_algorithm_gpu_tiled_halo = GPU_ENTRY(
    FCONV_ALGO_GPU_TILED_HALO, "gpu-tiled-halo", "GPU: shared-memory tiles, halo loaded by the block",
    FCONV_SERVES_FILTER2D | FCONV_SERVES_CONV1D, cost_tiled_halo);
const struct fconv_algorithm fconv_algorithm_gpu_tiled_global = GPU_ENTRY(
    FCONV_ALGO_GPU_TILED_GLOBAL, "gpu-tiled-global",
    "GPU: shared-memory tiles, halo read from global memory", FCONV_SERVES_CONV1D,
    cost_tiled_global);
const struct fconv_algorithm fconv_algorithm_gpu_implicit_gemm = GPU_ENTRY(
    FCONV_ALGO_GPU_IMPLICIT_GEMM, "gpu-implicit-gemm",
    "GPU: tiled, register-blocked implicit GEMM (64x64 tiles, 4x4 per thread)",
    FCONV_SERVES_CONV2D, cost_gemm);
const struct fconv_algorithm fconv_algorithm_gpu_winograd_2x2 = GPU_ENTRY_EX(
    FCONV_ALGO_GPU_WINOGRAD_2X2, "gpu-winograd-2x2",
    "GPU: fused Winograd F(2x2,3x3), filters transformed once per plan; 3x3 stride-1 only",
    FCONV_SERVES_CONV2D, cost_winograd, supports_winograd, 1e-6);
const struct fconv_algorithm fconv_algorithm_gpu_im2col_gemm = GPU_ENTRY(
    FCONV_ALGO_GPU_IM2COL_GEMM, "gpu-im2col-gemm",
    "GPU: im2col into a plan-time device buffer + tiled GEMM (64x64 tiles, 4x4 per thread)",
    FCONV_SERVES_CONV2D, cost_im2col);
