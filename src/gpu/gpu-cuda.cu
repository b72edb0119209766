/*
 * gpu-cuda.cu - the CUDA host layer: the same kernels (gpu-kernels.h through
 * gpu-macros-cuda.h) compiled by nvcc, launched by name through a table, on one stream with
 * event timing. Linked against the static CUDA runtime, which loads the driver lazily: on
 * a machine without one the library still loads and every call reports FCONV_ENODEVICE.
 */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "core/internal.h"
#include "gpu/gpu.h"
}

#include "gpu/gpu-macros-cuda.h"
#include "gpu/gpu-kernels.h"

struct fconv_gpu {
    cudaStream_t stream;
    cudaEvent_t start, stop;
    fconv_gpu_limits limits;
    pthread_mutex_t mutex;
};

struct fconv_gpu_buf {
    void *ptr;
};

#define KERNEL_ENTRY(name) {#name, (const void *)name},
static const struct {
    const char *name;
    const void *fn;
} kernel_table[] = {FCONV_GPU_KERNEL_NAMES(KERNEL_ENTRY)};

static pthread_once_t open_once = PTHREAD_ONCE_INIT;
static fconv_gpu the_gpu;
static fconv_status open_status = FCONV_ENODEVICE;
static char open_error[256];

static fconv_status cuda_fail(cudaError_t err, const char *what) {
    fconv_status st = err == cudaErrorMemoryAllocation ? FCONV_ENOMEM : FCONV_EINTERNAL;
    return fconv_fail(st, "cuda: %s failed: %s", what, cudaGetErrorString(err));
}

static int cu_count(void) {
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0) {
        fconv_fail(FCONV_ENODEVICE, "cuda: no NVIDIA GPU (cudaGetDeviceCount: %s)",
                   err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
        return 0;
    }
    return n;
}

static fconv_status cu_name(int index, char *name, size_t len) {
    int n = cu_count();
    if (n == 0) return FCONV_ENODEVICE;
    if (index < 0 || index >= n)
        return fconv_fail(FCONV_EINVAL, "cuda: device index %d out of range [0, %d)", index, n);
    cudaDeviceProp p;
    cudaError_t err = cudaGetDeviceProperties(&p, index);
    if (err != cudaSuccess) return cuda_fail(err, "cudaGetDeviceProperties");
    snprintf(name, len, "cuda: %s (sm_%d%d, %.1f GiB)", p.name, p.major, p.minor,
             (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    return FCONV_OK;
}

static void open_device(void) {
    fconv_gpu *g = &the_gpu;
    if (cu_count() == 0) {
        snprintf(open_error, sizeof open_error, "%s", fconv_last_error());
        return;
    }
    cudaDeviceProp p;
    cudaError_t err = cudaSetDevice(0);
    if (err == cudaSuccess) err = cudaGetDeviceProperties(&p, 0);
    if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking);
    if (err == cudaSuccess) err = cudaEventCreate(&g->start);
    if (err == cudaSuccess) err = cudaEventCreate(&g->stop);
    if (err != cudaSuccess) {
        snprintf(open_error, sizeof open_error, "cuda: opening device 0 failed: %s",
                 cudaGetErrorString(err));
        return;
    }
    g->limits.local_mem_bytes = p.sharedMemPerBlock;
    g->limits.max_group_size = (size_t)p.maxThreadsPerBlock;
    for (int d = 0; d < 3; d++) g->limits.max_groups[d] = p.maxGridSize[d];
    g->limits.compute_units = p.multiProcessorCount > 0 ? p.multiProcessorCount : 1;
    pthread_mutex_init(&g->mutex, NULL);
    open_status = FCONV_OK;
}

static fconv_status cu_open(fconv_gpu **gpu) {
    pthread_once(&open_once, open_device);
    if (open_status != FCONV_OK) return fconv_fail(open_status, "%s", open_error);
    *gpu = &the_gpu;
    return FCONV_OK;
}

static void cu_limits(const fconv_gpu *gpu, fconv_gpu_limits *limits) { *limits = gpu->limits; }

static fconv_status cu_alloc(fconv_gpu *gpu, size_t bytes, fconv_gpu_buf **out) {
    (void)gpu;
    fconv_gpu_buf *b = (fconv_gpu_buf *)malloc(sizeof *b);
    if (!b) return fconv_fail(FCONV_ENOMEM, "cuda: out of host memory");
    cudaError_t err = cudaMalloc(&b->ptr, bytes ? bytes : 4);
    if (err != cudaSuccess) {
        free(b);
        return fconv_fail(FCONV_ENOMEM, "cuda: cannot allocate %zu bytes on the device: %s", bytes,
                          cudaGetErrorString(err));
    }
    *out = b;
    return FCONV_OK;
}

static void cu_free(fconv_gpu_buf *b) {
    if (!b) return;
    cudaFree(b->ptr);
    free(b);
}

/* Wait for the stop event and add start..stop to *ms. */
static fconv_status account(fconv_gpu *g, double *ms, const char *what) {
    cudaError_t err = cudaEventRecord(g->stop, g->stream);
    if (err == cudaSuccess) err = cudaEventSynchronize(g->stop);
    float t = 0.0f;
    if (err == cudaSuccess) err = cudaEventElapsedTime(&t, g->start, g->stop);
    if (err != cudaSuccess) return cuda_fail(err, what);
    if (ms) *ms += t;
    return FCONV_OK;
}

static fconv_status copy(fconv_gpu *g, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                         fconv_gpu_timing *t) {
    if (bytes == 0) return FCONV_OK;
    cudaError_t err = cudaEventRecord(g->start, g->stream);
    if (err == cudaSuccess) err = cudaMemcpyAsync(dst, src, bytes, kind, g->stream);
    if (err != cudaSuccess) return cuda_fail(err, "cudaMemcpyAsync");
    return account(g, t ? &t->transfer_ms : NULL, "copy");
}

static fconv_status cu_upload(fconv_gpu *g, fconv_gpu_buf *dst, const void *src, size_t bytes,
                              fconv_gpu_timing *t) {
    return copy(g, dst->ptr, src, bytes, cudaMemcpyHostToDevice, t);
}

static fconv_status cu_download(fconv_gpu *g, void *dst, fconv_gpu_buf *src, size_t bytes,
                                fconv_gpu_timing *t) {
    return copy(g, dst, src->ptr, bytes, cudaMemcpyDeviceToHost, t);
}

static fconv_status cu_launch(fconv_gpu *g, const char *name, const int64_t groups[3],
                              const int64_t local[3], const fconv_gpu_arg *args, int nargs,
                              fconv_gpu_timing *t) {
    const void *fn = NULL;
    for (size_t i = 0; i < sizeof kernel_table / sizeof kernel_table[0]; i++)
        if (strcmp(kernel_table[i].name, name) == 0) fn = kernel_table[i].fn;
    if (!fn) return fconv_fail(FCONV_EINTERNAL, "cuda: no kernel '%s'", name);
    enum { MAX_ARGS = 40 };
    if (nargs > MAX_ARGS) return fconv_fail(FCONV_EINTERNAL, "cuda: %s: too many arguments", name);
    void *ptrs[MAX_ARGS];
    long long ints[MAX_ARGS];
    float floats[MAX_ARGS];
    void *params[MAX_ARGS];
    int np = 0;
    size_t shmem = 0;
    cudaError_t err = cudaEventRecord(g->start, g->stream);
    for (int i = 0; i < nargs && err == cudaSuccess; i++) {
        const fconv_gpu_arg *a = &args[i];
        switch (a->kind) {
        case FCONV_GPU_ARG_BUF:
            ptrs[i] = a->buf ? a->buf->ptr : NULL;
            params[np++] = &ptrs[i];
            break;
        case FCONV_GPU_ARG_I64:
            ints[i] = (long long)a->i64;
            params[np++] = &ints[i];
            break;
        case FCONV_GPU_ARG_F32:
            floats[i] = a->f32;
            params[np++] = &floats[i];
            break;
        case FCONV_GPU_ARG_CONSTANT: /* the mask goes to the __constant__ symbol */
            err = cudaMemcpyToSymbolAsync(fconv_cmask, a->buf->ptr, (size_t)a->i64, 0,
                                          cudaMemcpyDeviceToDevice, g->stream);
            break;
        case FCONV_GPU_ARG_LOCAL:
            shmem = (size_t)a->i64;
            break;
        }
    }
    if (err != cudaSuccess) return cuda_fail(err, "cudaMemcpyToSymbolAsync");
    dim3 grid, block((unsigned)local[0], (unsigned)local[1], (unsigned)local[2]);
    unsigned *gd[3] = {&grid.x, &grid.y, &grid.z};
    for (int d = 0; d < 3; d++) {
        int64_t gr = groups[d] < g->limits.max_groups[d] ? groups[d] : g->limits.max_groups[d];
        *gd[d] = (unsigned)(gr < 1 ? 1 : gr);
    }
    err = cudaLaunchKernel(fn, grid, block, params, shmem, g->stream);
    if (err != cudaSuccess) return cuda_fail(err, name);
    return account(g, t ? &t->kernel_ms : NULL, name);
}

static fconv_status cu_finish(fconv_gpu *g, fconv_gpu_timing *t) {
    (void)t;
    cudaError_t err = cudaStreamSynchronize(g->stream);
    return err == cudaSuccess ? FCONV_OK : cuda_fail(err, "cudaStreamSynchronize");
}

static void cu_lock(fconv_gpu *g) { pthread_mutex_lock(&g->mutex); }
static void cu_unlock(fconv_gpu *g) { pthread_mutex_unlock(&g->mutex); }

extern "C" const fconv_gpu_ops fconv_gpu_cuda_ops = {
    cu_open, cu_count, cu_name, cu_limits, cu_alloc, cu_free, cu_upload,
    cu_download, cu_launch, cu_finish, cu_lock, cu_unlock,
};
