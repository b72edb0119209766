/*
 * gpu-algorithms.c - the GPU algorithms' table entries (registered in src/algo/registry.c):
 * each runs only on FCONV_DEVICE_OPENCL / FCONV_DEVICE_CUDA, needs no host workspace, and
 * dispatches by problem kind to gpu-conv1d.c, gpu-filter2d.c or gpu-conv2d.c.
 * Error bounds are direct's (float32 accumulation in the definition's order), except
 * gpu-winograd-2x2's, which is CPU winograd-2x2's.
 */
#include <math.h>
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

/* AUTO on a device: times in seconds fitted to kernel times measured on an NVIDIA H100
 * (docs/gpu.md, bench/gpu_compare.py over the whole suite; each fit within about +-25% of
 * what it was fitted to, except gpu-naive on conv2d). On another GPU the scale differs; the
 * order, which is all AUTO uses, mostly holds.
 *
 * filter2d and conv1d: launch + per multiply-add + per output (the write, the border). */
typedef struct gpu_rates {
    double launch, per_mac, per_output;
} gpu_rates;

static double cost_linear(const fconv_plan *p, gpu_rates r) {
    return r.launch + fconv_plan_macs(p) * r.per_mac +
           (double)fconv_plan_output_elements(p) * r.per_output;
}

static double cost_rates(const fconv_plan *p, gpu_rates filter2d, gpu_rates conv1d) {
    return cost_linear(p, p->kind == FCONV_KIND_FILTER2D ? filter2d : conv1d);
}

/* conv2d's one-output-per-thread kernel runs blocks of 256 threads, each looping over the
 * reduction depth, so a small layer leaves SMs idle and its time goes by waves of resident
 * blocks (8 per SM on the H100's and H200's 132 SMs); the GEMMs and Winograds go by their
 * walk's model (fconv_gpu_gemm_tiles). */
#define GPU_SM_COUNT 132.0

static double waves(double blocks, double per_sm) {
    return ceil(blocks / (GPU_SM_COUNT * per_sm));
}

static double conv2d_depth(const fconv_conv2d_desc *d) {
    return (double)(d->c / d->groups) * (double)d->r * (double)d->s;
}

static double cost_naive(const fconv_plan *p) {
    if (p->kind == FCONV_KIND_CONV2D)
        return 83e-6 + waves(ceil((double)fconv_plan_output_elements(p) / 256.0), 8.0) *
                           conv2d_depth(&p->conv2d) * 0.27e-6;
    return cost_rates(p, (gpu_rates){12.6e-6, 2.26e-12, 9.7e-12},
                      (gpu_rates){8.8e-6, 0.244e-12, 5.3e-12});
}
static double cost_constant(const fconv_plan *p) {
    return cost_rates(p, (gpu_rates){18.9e-6, 1.98e-12, 10.0e-12},
                      (gpu_rates){14.5e-6, 0.248e-12, 5.6e-12});
}
/* conv1d's tiled kernel makes 4096 outputs per block, each thread stepping through m + 3
 * input offsets in turn: up to ~10^6 samples one wave of blocks (4 resident per SM) does it
 * all, so its time goes with m, not with m x n. */
static double cost_tiled_halo(const fconv_plan *p) {
    if (p->kind == FCONV_KIND_CONV1D) {
        double out = (double)fconv_plan_output_elements(p);
        return 7.9e-6 + waves(ceil(out / 4096.0), 4.0) * ((double)p->conv1d.m + 3.0) * 0.116e-6 +
               out * 3.25e-12;
    }
    return cost_linear(p, (gpu_rates){24.3e-6, 0.096e-12, 5.2e-12});
}
/* gpu-tiled-global serves conv1d only. */
static double cost_tiled_global(const fconv_plan *p) {
    return cost_linear(p, (gpu_rates){15.1e-6, 0.611e-12, 5.1e-12});
}

/* Seconds per output a conv2d GEMM writes (bias, ReLU, the store): from gpu-im2col-gemm's H200
 * fit. */
#define GPU_OUTPUT_WRITE 6.1e-12

/* Seconds per float of split-K's partial sums (written, then read by the reduction). */
#define GPU_PARTIAL_FLOAT 15.8e-12

/* gpu-implicit-gemm and gpu-im2col-gemm (fconv_gpu_gemm_geometry_of, whose modelled GEMM
 * time picks the tile), fitted to H200 kernel times of the ResNet-50 / VGG-16 / 16x16 layers
 * (docs/gpu.md): per pass over a chunk a launch (two with im2col), the GEMM, the column
 * buffer written and read, split-K's partial sums, and the outputs. */
static double cost_gemm_walk(const fconv_plan *p, int gather) {
    fconv_gpu_gemm_geometry g = fconv_gpu_gemm_geometry_of(p, (int64_t)GPU_SM_COUNT, gather);
    const fconv_conv2d_desc *d = &p->conv2d;
    int im2col = !g.direct && !g.gather;
    double cols = im2col ? (double)g.kd * (double)d->groups * (double)g.nc : 0.0;
    double part = g.splits > 1 ? (double)g.splits * (double)d->k * (double)g.nc : 0.0;
    return (double)g.passes * (1.2e-6 + (im2col ? 8.4e-6 : 0.0)) + g.gemm_seconds +
           cols * 2.13e-12 + part * GPU_PARTIAL_FLOAT +
           (double)fconv_plan_output_elements(p) * GPU_OUTPUT_WRITE;
}

static double cost_implicit(const fconv_plan *p) { return cost_gemm_walk(p, 1); }
static double cost_im2col(const fconv_plan *p) { return cost_gemm_walk(p, 0); }

/* gpu-winograd-2x2 / -4x4 (fconv_gpu_winograd_geometry_of), fitted to the same H200 runs
 * (93 tile and layer pairs each; median errors 8% / 16%): per chunk of output tiles the two
 * transforms' launches, the GEMMs (a share of the column buffer's GEMM time: V's rows are
 * whole channels, M needs no bias), the transformed inputs and products written and read
 * ((m + 2)^2 (C + K) floats per tile), split-K's partial sums, the outputs; plus the filter
 * transform when the weights come at execute time (estimated from its work). */
static double cost_winograd(const fconv_plan *p, int m) {
    static const struct {
        double launches, gemm_share, per_float;
    } fit[2] = {{21e-6, 0.8, 3.5e-12}, {25e-6, 1.1, 2.0e-12}};
    fconv_gpu_gemm_geometry g = fconv_gpu_winograd_geometry_of(p, (int64_t)GPU_SM_COUNT, m);
    const fconv_conv2d_desc *d = &p->conv2d;
    double e = (double)((m + 2) * (m + 2));
    double vm = e * (double)(d->c + d->k) * (double)g.nc;
    double part = g.splits > 1 ? (double)g.splits * e * (double)d->k * (double)g.nc : 0.0;
    int f = m == 4;
    double t = (double)g.passes * fit[f].launches + fit[f].gemm_share * g.gemm_seconds +
               vm * fit[f].per_float + part * GPU_PARTIAL_FLOAT +
               (double)fconv_plan_output_elements(p) * GPU_OUTPUT_WRITE;
    if (!p->weights) t += 1e-5 + (double)d->k * (double)(d->c / d->groups) * e * 0.01e-9;
    return t;
}

static double cost_winograd_2x2(const fconv_plan *p) { return cost_winograd(p, 2); }
static double cost_winograd_4x4(const fconv_plan *p) { return cost_winograd(p, 4); }

/* gpu-winograd-2x2 and -4x4 serve 3x3 kernels at stride 1 and dilation 1 only. */
static fconv_status supports_winograd(const char *name, const fconv_plan *plan, char *why,
                                      size_t why_len) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    if (d->r != 3 || d->s != 3) {
        snprintf(why, why_len, "%s needs a 3x3 kernel, got %lldx%lld", name, (long long)d->r,
                 (long long)d->s);
        return FCONV_EUNSUPPORTED;
    }
    if (d->stride_h != 1 || d->stride_w != 1) {
        snprintf(why, why_len, "%s needs stride 1, got %lldx%lld", name,
                 (long long)d->stride_h, (long long)d->stride_w);
        return FCONV_EUNSUPPORTED;
    }
    if (d->dilation_h != 1 || d->dilation_w != 1) {
        snprintf(why, why_len, "%s needs dilation 1, got %lldx%lld", name,
                 (long long)d->dilation_h, (long long)d->dilation_w);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

static fconv_status supports_winograd_2x2(const fconv_plan *plan, char *why, size_t why_len) {
    return supports_winograd("gpu-winograd-2x2", plan, why, why_len);
}
static fconv_status supports_winograd_4x4(const fconv_plan *plan, char *why, size_t why_len) {
    return supports_winograd("gpu-winograd-4x4", plan, why, why_len);
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
    "GPU: implicit GEMM, its operand gathered from x on the fly (64x64..128x128 tiles, 8x8 per "
    "thread, split-K where tiles are few)",
    FCONV_SERVES_CONV2D, cost_implicit);
const struct fconv_algorithm fconv_algorithm_gpu_winograd_2x2 = GPU_ENTRY_EX(
    FCONV_ALGO_GPU_WINOGRAD_2X2, "gpu-winograd-2x2",
    "GPU: Winograd F(2x2,3x3) through the tiled GEMM (16 products per 2x2 tile), filters "
    "transformed once per plan; 3x3 stride-1 only",
    FCONV_SERVES_CONV2D, cost_winograd_2x2, supports_winograd_2x2, 1e-6);
const struct fconv_algorithm fconv_algorithm_gpu_winograd_4x4 = GPU_ENTRY_EX(
    FCONV_ALGO_GPU_WINOGRAD_4X4, "gpu-winograd-4x4",
    "GPU: Winograd F(4x4,3x3) through the tiled GEMM (36 products per 4x4 tile), filters "
    "transformed once per plan; 3x3 stride-1 only",
    FCONV_SERVES_CONV2D, cost_winograd_4x4, supports_winograd_4x4, 1e-5);
const struct fconv_algorithm fconv_algorithm_gpu_im2col_gemm = GPU_ENTRY(
    FCONV_ALGO_GPU_IM2COL_GEMM, "gpu-im2col-gemm",
    "GPU: im2col into a plan-time device buffer (none for 1x1 stride 1) + tiled GEMM "
    "(64x64..128x128 tiles, 8x8 per thread, split-K where tiles are few)",
    FCONV_SERVES_CONV2D, cost_im2col);
