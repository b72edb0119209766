/*
 * gpu-opencl.c - the OpenCL host layer: picks a device (the first GPU of any platform, else
 * the first device, e.g. PoCL's CPU device), builds gpu-kernels.h (embedded at build time)
 * once per process, and runs buffers, copies and launches in one in-order profiling queue.
 * Every operation waits for its event, so timings are exact and errors surface at once.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "gpu/gpu.h"
#include "gpu-kernels-opencl-source.h" /* generated: fconv_gpu_opencl_source[] */

#define MAX_DEVICES 16

struct fconv_gpu {
    cl_context ctx;
    cl_command_queue queue;
    cl_program program;
    cl_device_id device;
    fconv_gpu_limits limits;
    pthread_mutex_t mutex;
    struct { const char *name; cl_kernel kernel; } kernels[32]; /* >= the kernels in gpu.h */
    int nkernels;
};

struct fconv_gpu_buf {
    cl_mem mem;
};

static pthread_once_t open_once = PTHREAD_ONCE_INIT;
static fconv_gpu the_gpu;
static fconv_status open_status = FCONV_ENODEVICE;
static char open_error[512];

static cl_device_id devices[MAX_DEVICES];
static int ndevices = -1; /* -1: not enumerated yet */
static char enum_error[256];
static pthread_once_t enum_once = PTHREAD_ONCE_INIT;

/* Enumerate every device of every platform, GPUs first (index 0 is the one plans use). */
static void enumerate(void) {
    cl_platform_id platforms[8];
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(8, platforms, &np);
    ndevices = 0;
    if (err != CL_SUCCESS || np == 0) {
        snprintf(enum_error, sizeof enum_error,
                 "opencl: no OpenCL platform found (clGetPlatformIDs: %d); install an ICD, e.g. "
                 "pocl-opencl-icd", (int)err);
        return;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (cl_uint p = 0; p < np && p < 8; p++) {
            cl_device_id ids[MAX_DEVICES];
            cl_uint nd = 0;
            cl_device_type type = pass == 0 ? CL_DEVICE_TYPE_GPU : (CL_DEVICE_TYPE_ALL & ~CL_DEVICE_TYPE_GPU);
            if (clGetDeviceIDs(platforms[p], type, MAX_DEVICES, ids, &nd) != CL_SUCCESS) continue;
            for (cl_uint d = 0; d < nd && ndevices < MAX_DEVICES; d++) devices[ndevices++] = ids[d];
        }
    }
    if (ndevices == 0)
        snprintf(enum_error, sizeof enum_error, "opencl: %u platform(s) but no device", (unsigned)np);
}

static int ocl_count(void) {
    pthread_once(&enum_once, enumerate);
    if (ndevices == 0) fconv_fail(FCONV_ENODEVICE, "%s", enum_error);
    return ndevices;
}

static fconv_status ocl_name(int index, char *name, size_t len) {
    int n = ocl_count();
    if (n == 0) return FCONV_ENODEVICE;
    if (index < 0 || index >= n)
        return fconv_fail(FCONV_EINVAL, "opencl: device index %d out of range [0, %d)", index, n);
    char dev[256] = "", plat[256] = "";
    cl_platform_id p;
    clGetDeviceInfo(devices[index], CL_DEVICE_NAME, sizeof dev, dev, NULL);
    if (clGetDeviceInfo(devices[index], CL_DEVICE_PLATFORM, sizeof p, &p, NULL) == CL_SUCCESS)
        clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof plat, plat, NULL);
    snprintf(name, len, "opencl: %s / %s", plat, dev);
    return FCONV_OK;
}

static fconv_status cl_status(cl_int err) {
    return (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
            err == CL_OUT_OF_HOST_MEMORY)
               ? FCONV_ENOMEM
               : FCONV_EINTERNAL;
}

static fconv_status cl_fail(const char *what, cl_int err) {
    return fconv_fail(cl_status(err), "opencl: %s failed (error %d)", what, (int)err);
}

static void open_device(void) {
    fconv_gpu *g = &the_gpu;
    cl_int err;
    if (ocl_count() == 0) {
        snprintf(open_error, sizeof open_error, "%s", enum_error);
        return;
    }
    g->device = devices[0];
    g->ctx = clCreateContext(NULL, 1, &g->device, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        snprintf(open_error, sizeof open_error, "opencl: clCreateContext failed (%d)", (int)err);
        return;
    }
    g->queue = clCreateCommandQueue(g->ctx, g->device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) {
        snprintf(open_error, sizeof open_error, "opencl: clCreateCommandQueue failed (%d)", (int)err);
        return;
    }
    const char *src = fconv_gpu_opencl_source;
    size_t src_len = sizeof fconv_gpu_opencl_source;
    g->program = clCreateProgramWithSource(g->ctx, 1, &src, &src_len, &err);
    if (err == CL_SUCCESS) err = clBuildProgram(g->program, 1, &g->device, "-cl-std=CL1.2", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[256] = "";
        if (g->program)
            clGetProgramBuildInfo(g->program, g->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        for (char *c = log; *c; c++)
            if (*c == '\n') *c = ' ';
        snprintf(open_error, sizeof open_error, "opencl: building the kernels failed (%d): %s",
                 (int)err, log);
        return;
    }
    cl_ulong local_mem = 0;
    size_t max_group = 0;
    clGetDeviceInfo(g->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local_mem, &local_mem, NULL);
    cl_uint units = 0;
    clGetDeviceInfo(g->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_group, &max_group, NULL);
    clGetDeviceInfo(g->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
    g->limits.local_mem_bytes = (size_t)local_mem;
    g->limits.max_group_size = max_group;
    g->limits.compute_units = units > 0 ? (int64_t)units : 1;
    /* OpenCL has no per-dimension group limit; 2^31 keeps global sizes far from overflow. */
    for (int d = 0; d < 3; d++) g->limits.max_groups[d] = (int64_t)1 << 31;
    pthread_mutex_init(&g->mutex, NULL);
    open_status = FCONV_OK;
}

static fconv_status ocl_open(fconv_gpu **gpu) {
    pthread_once(&open_once, open_device);
    if (open_status != FCONV_OK) return fconv_fail(open_status, "%s", open_error);
    *gpu = &the_gpu;
    return FCONV_OK;
}

static void ocl_limits(const fconv_gpu *gpu, fconv_gpu_limits *limits) { *limits = gpu->limits; }

static fconv_status ocl_alloc(fconv_gpu *gpu, size_t bytes, fconv_gpu_buf **out) {
    fconv_gpu_buf *b = malloc(sizeof *b);
    if (!b) return fconv_fail(FCONV_ENOMEM, "opencl: out of host memory");
    cl_int err;
    b->mem = clCreateBuffer(gpu->ctx, CL_MEM_READ_WRITE, bytes ? bytes : 4, NULL, &err);
    if (err != CL_SUCCESS) {
        free(b);
        return fconv_fail(cl_status(err), "opencl: cannot allocate %zu bytes on the device (%d)",
                          bytes, (int)err);
    }
    *out = b;
    return FCONV_OK;
}

static void ocl_free(fconv_gpu_buf *b) {
    if (!b) return;
    clReleaseMemObject(b->mem);
    free(b);
}

/* Wait for ev, add its duration to *ms, release it. */
static fconv_status account(cl_event ev, double *ms, const char *what) {
    cl_int err = clWaitForEvents(1, &ev);
    cl_ulong t0 = 0, t1 = 0;
    if (err == CL_SUCCESS) {
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
        if (ms && t1 > t0) *ms += (double)(t1 - t0) * 1e-6;
    }
    clReleaseEvent(ev);
    return err == CL_SUCCESS ? FCONV_OK : cl_fail(what, err);
}

static fconv_status ocl_upload(fconv_gpu *gpu, fconv_gpu_buf *dst, const void *src, size_t bytes,
                               fconv_gpu_timing *t) {
    if (bytes == 0) return FCONV_OK;
    cl_event ev;
    cl_int err = clEnqueueWriteBuffer(gpu->queue, dst->mem, CL_FALSE, 0, bytes, src, 0, NULL, &ev);
    if (err != CL_SUCCESS) return cl_fail("clEnqueueWriteBuffer", err);
    return account(ev, t ? &t->transfer_ms : NULL, "host-to-device copy");
}

static fconv_status ocl_download(fconv_gpu *gpu, void *dst, fconv_gpu_buf *src, size_t bytes,
                                 fconv_gpu_timing *t) {
    if (bytes == 0) return FCONV_OK;
    cl_event ev;
    cl_int err = clEnqueueReadBuffer(gpu->queue, src->mem, CL_FALSE, 0, bytes, dst, 0, NULL, &ev);
    if (err != CL_SUCCESS) return cl_fail("clEnqueueReadBuffer", err);
    return account(ev, t ? &t->transfer_ms : NULL, "device-to-host copy");
}

/* The cached kernel object for name (created on first use; the caller holds the lock). */
static fconv_status get_kernel(fconv_gpu *gpu, const char *name, cl_kernel *out) {
    for (int i = 0; i < gpu->nkernels; i++)
        if (strcmp(gpu->kernels[i].name, name) == 0) {
            *out = gpu->kernels[i].kernel;
            return FCONV_OK;
        }
    if (gpu->nkernels == (int)(sizeof gpu->kernels / sizeof gpu->kernels[0]))
        return fconv_fail(FCONV_EINTERNAL, "opencl: kernel table full");
    cl_int err;
    cl_kernel k = clCreateKernel(gpu->program, name, &err);
    if (err != CL_SUCCESS)
        return fconv_fail(FCONV_EINTERNAL, "opencl: no kernel '%s' (%d)", name, (int)err);
    gpu->kernels[gpu->nkernels].name = name;
    gpu->kernels[gpu->nkernels++].kernel = k;
    *out = k;
    return FCONV_OK;
}

static fconv_status ocl_launch(fconv_gpu *gpu, const char *name, const int64_t groups[3],
                               const int64_t local[3], const fconv_gpu_arg *args, int nargs,
                               fconv_gpu_timing *t) {
    cl_kernel k = NULL;
    fconv_status st = get_kernel(gpu, name, &k);
    if (st != FCONV_OK) return st;
    for (int i = 0; i < nargs; i++) {
        const fconv_gpu_arg *a = &args[i];
        cl_int err = CL_SUCCESS;
        cl_long l;
        cl_mem m;
        switch (a->kind) {
        case FCONV_GPU_ARG_BUF:
        case FCONV_GPU_ARG_CONSTANT:
            m = a->buf ? a->buf->mem : NULL;
            err = clSetKernelArg(k, (cl_uint)i, sizeof m, &m);
            break;
        case FCONV_GPU_ARG_I64:
            l = (cl_long)a->i64;
            err = clSetKernelArg(k, (cl_uint)i, sizeof l, &l);
            break;
        case FCONV_GPU_ARG_F32:
            err = clSetKernelArg(k, (cl_uint)i, sizeof a->f32, &a->f32);
            break;
        case FCONV_GPU_ARG_LOCAL:
            err = clSetKernelArg(k, (cl_uint)i, (size_t)a->i64, NULL);
            break;
        }
        if (err != CL_SUCCESS)
            return fconv_fail(FCONV_EINTERNAL, "opencl: %s: setting argument %d failed (%d)", name,
                              i, (int)err);
    }
    size_t global[3], loc[3];
    for (int d = 0; d < 3; d++) {
        int64_t gr = groups[d] < gpu->limits.max_groups[d] ? groups[d] : gpu->limits.max_groups[d];
        if (gr < 1) gr = 1;
        loc[d] = (size_t)local[d];
        global[d] = (size_t)gr * loc[d];
    }
    cl_event ev;
    cl_int err = clEnqueueNDRangeKernel(gpu->queue, k, 3, NULL, global, loc, 0, NULL, &ev);
    if (err != CL_SUCCESS)
        return fconv_fail(cl_status(err), "opencl: launching %s failed (%d)", name, (int)err);
    return account(ev, t ? &t->kernel_ms : NULL, name);
}

static fconv_status ocl_finish(fconv_gpu *gpu, fconv_gpu_timing *t) {
    (void)t;
    cl_int err = clFinish(gpu->queue);
    return err == CL_SUCCESS ? FCONV_OK : cl_fail("clFinish", err);
}

static void ocl_lock(fconv_gpu *gpu) { pthread_mutex_lock(&gpu->mutex); }
static void ocl_unlock(fconv_gpu *gpu) { pthread_mutex_unlock(&gpu->mutex); }

const fconv_gpu_ops fconv_gpu_opencl_ops = {
    .open = ocl_open, .count = ocl_count, .name = ocl_name, .limits = ocl_limits,
    .alloc = ocl_alloc, .free = ocl_free, .upload = ocl_upload, .download = ocl_download,
    .launch = ocl_launch, .finish = ocl_finish, .lock = ocl_lock, .unlock = ocl_unlock,
};
