/*
 * gpu.h - the internal interface between the device-agnostic GPU drivers (gpu-conv1d.c,
 * gpu-filter2d.c, gpu-conv2d.c) and the two thin host layers (gpu-opencl.c, gpu-cuda.cu):
 * open a device, buffers, copies, launches by kernel name with typed arguments, timing.
 * Every call returns an fconv_status and records the driver's message with fconv_fail.
 */
#ifndef FCONV_GPU_H
#define FCONV_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "fastconv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest mask (floats) a kernel may take through constant memory: 32 KiB, half of the 64
 * KiB both CUDA and every OpenCL device guarantee, and the size of the CUDA symbol. */
#define FCONV_GPU_CONSTANT_FLOATS 8192

/* One opened backend (process-wide, opened once, never closed). Opaque to drivers. */
typedef struct fconv_gpu fconv_gpu;
typedef struct fconv_gpu_buf fconv_gpu_buf;

/* What a driver may ask about the device. */
typedef struct fconv_gpu_limits {
    size_t local_mem_bytes;     /* shared/local memory per block */
    size_t max_group_size;      /* threads per block */
    int64_t max_groups[3];      /* grid limits per dimension (kernels loop over the rest) */
    int64_t compute_units;      /* multiprocessors (CUDA) or compute units (OpenCL), >= 1 */
} fconv_gpu_limits;

/* A kernel argument. LOCAL and CONSTANT must come last, in that order of the kernel's
 * parameter list (CUDA has no parameter for them: dynamic shared memory and a __constant__
 * symbol; OpenCL gets a __local and a __constant parameter). */
typedef enum fconv_gpu_arg_kind {
    FCONV_GPU_ARG_BUF = 0,      /* a device buffer (GLOBAL pointer), may be NULL buffer */
    FCONV_GPU_ARG_I64 = 1,      /* a 64-bit integer */
    FCONV_GPU_ARG_F32 = 2,      /* a float */
    FCONV_GPU_ARG_CONSTANT = 3, /* a buffer of at most FCONV_GPU_CONSTANT_FLOATS floats */
    FCONV_GPU_ARG_LOCAL = 4     /* bytes of dynamic local/shared memory */
} fconv_gpu_arg_kind;

typedef struct fconv_gpu_arg {
    fconv_gpu_arg_kind kind;
    fconv_gpu_buf *buf;
    int64_t i64;                /* I64 value; LOCAL/CONSTANT: bytes */
    float f32;
} fconv_gpu_arg;

static inline fconv_gpu_arg fconv_gpu_buf_arg(fconv_gpu_buf *b) {
    fconv_gpu_arg a = {FCONV_GPU_ARG_BUF, b, 0, 0.0f};
    return a;
}
static inline fconv_gpu_arg fconv_gpu_i64_arg(int64_t v) {
    fconv_gpu_arg a = {FCONV_GPU_ARG_I64, NULL, v, 0.0f};
    return a;
}
static inline fconv_gpu_arg fconv_gpu_f32_arg(float v) {
    fconv_gpu_arg a = {FCONV_GPU_ARG_F32, NULL, 0, v};
    return a;
}
static inline fconv_gpu_arg fconv_gpu_constant_arg(fconv_gpu_buf *b, int64_t bytes) {
    fconv_gpu_arg a = {FCONV_GPU_ARG_CONSTANT, b, bytes, 0.0f};
    return a;
}
static inline fconv_gpu_arg fconv_gpu_local_arg(int64_t bytes) {
    fconv_gpu_arg a = {FCONV_GPU_ARG_LOCAL, NULL, bytes, 0.0f};
    return a;
}

/* Accumulated device-event times of the current execute (milliseconds). */
typedef struct fconv_gpu_timing {
    double kernel_ms, transfer_ms;
} fconv_gpu_timing;

/* A host layer: the same table for OpenCL and CUDA. */
typedef struct fconv_gpu_ops {
    /* Open the device once per process (compiling the kernels once); later calls return the
     * same handle or the same failure. FCONV_ENODEVICE with the reason when absent. */
    fconv_status (*open)(fconv_gpu **gpu);
    int (*count)(void);
    fconv_status (*name)(int index, char *name, size_t len);
    void (*limits)(const fconv_gpu *gpu, fconv_gpu_limits *limits);
    fconv_status (*alloc)(fconv_gpu *gpu, size_t bytes, fconv_gpu_buf **buf);
    void (*free)(fconv_gpu_buf *buf);   /* NULL is fine */
    fconv_status (*upload)(fconv_gpu *gpu, fconv_gpu_buf *dst, const void *src, size_t bytes,
                           fconv_gpu_timing *t);
    fconv_status (*download)(fconv_gpu *gpu, void *dst, fconv_gpu_buf *src, size_t bytes,
                             fconv_gpu_timing *t);
    /* Launch kernel `name` on groups[d] x local[d] threads (dims 3; a group count beyond the
     * device limit is clamped: kernels loop over their groups with stride NGROUPS). */
    fconv_status (*launch)(fconv_gpu *gpu, const char *name, const int64_t groups[3],
                           const int64_t local[3], const fconv_gpu_arg *args, int nargs,
                           fconv_gpu_timing *t);
    /* Wait for everything queued; then the timing is complete. */
    fconv_status (*finish)(fconv_gpu *gpu, fconv_gpu_timing *t);
    void (*lock)(fconv_gpu *gpu);       /* one execute at a time per device */
    void (*unlock)(fconv_gpu *gpu);
} fconv_gpu_ops;

/* The host layer of a device, or NULL when it is not built in (then *why says so). */
const fconv_gpu_ops *fconv_gpu_backend(fconv_device device);

extern const fconv_gpu_ops fconv_gpu_opencl_ops;
extern const fconv_gpu_ops fconv_gpu_cuda_ops;

/* The names of every kernel in gpu-kernels.h, for the CUDA launch table. */
#define FCONV_GPU_KERNEL_NAMES(X)                                                              \
    X(conv1d_naive) X(conv1d_constant) X(conv1d_tiled_halo) X(conv1d_tiled_global)             \
    X(filter2d_naive) X(filter2d_constant) X(filter2d_tiled_halo)                              \
    X(conv2d_naive) X(conv2d_winograd_2x2_filter) X(conv2d_winograd_2x2_input)                 \
    X(conv2d_winograd_2x2_output) X(conv2d_winograd_4x4_filter) X(conv2d_winograd_4x4_input)   \
    X(conv2d_winograd_4x4_output) X(conv2d_im2col)                                             \
    X(conv2d_gemm_64x64) X(conv2d_gemm_64x128) X(conv2d_gemm_128x128) X(conv2d_igemm_64x64)    \
    X(conv2d_igemm_64x128) X(conv2d_igemm_128x128) X(conv2d_gemm_reduce) X(umi_generic)

#ifdef __cplusplus
}
#endif

#endif /* FCONV_GPU_H */
