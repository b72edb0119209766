/*
 * gpu-algorithms.c - the GPU algorithms' table entries (registered in src/algo/registry.c):
 * each runs only on FCONV_DEVICE_OPENCL / FCONV_DEVICE_CUDA, needs no host workspace, and
 * dispatches by problem kind to gpu-conv1d.c, gpu-filter2d.c or gpu-conv2d.c.
 * Error bounds are direct's: float32 accumulation in the definition's order.
 */
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

#define GPU_ENTRY(ID, NAME, SUMMARY, SERVES, COST)                                              \
    {.id = ID, .name = NAME, .summary = SUMMARY, .serves = SERVES, .error_bound = 2e-6,       \
     .supports = supports_all, .workspace = no_workspace, .cost = COST,                      \
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
