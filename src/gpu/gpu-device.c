/*
 * gpu-device.c - which host layers are built in, the public device queries
 * (fconv_device_count / fconv_device_name) and the per-thread timing of the last GPU
 * execute (fconv_last_execute_timing). Per thread, so plans stay immutable when shared.
 */
#include <stdio.h>

#include "core/internal.h"
#include "gpu/gpu-driver.h"

static _Thread_local fconv_gpu_timing last_timing;
static _Thread_local int last_timing_valid;

const char *fconv_device_kind_name(fconv_device d) {
    switch (d) {
    case FCONV_DEVICE_CPU: return "cpu";
    case FCONV_DEVICE_OPENCL: return "opencl";
    case FCONV_DEVICE_CUDA: return "cuda";
    }
    return "unknown";
}

const fconv_gpu_ops *fconv_gpu_backend(fconv_device device) {
#ifdef FCONV_HAVE_OPENCL
    if (device == FCONV_DEVICE_OPENCL) return &fconv_gpu_opencl_ops;
#endif
#ifdef FCONV_HAVE_CUDA
    if (device == FCONV_DEVICE_CUDA) return &fconv_gpu_cuda_ops;
#endif
    (void)device;
    return NULL;
}

static fconv_status not_built(fconv_device d) {
    return fconv_fail(FCONV_ENODEVICE,
                      d == FCONV_DEVICE_CUDA
                          ? "cuda: not built into this library (configure with -DFCONV_CUDA=ON where nvcc exists)"
                          : "opencl: not built into this library (configure with -DFCONV_OPENCL=ON)");
}

fconv_status fconv_gpu_check_device(fconv_device d) {
    if (d == FCONV_DEVICE_CPU) return FCONV_OK;
    if (d != FCONV_DEVICE_OPENCL && d != FCONV_DEVICE_CUDA)
        return fconv_fail(FCONV_ENODEVICE, "options: unknown device %d", (int)d);
    const fconv_gpu_ops *ops = fconv_gpu_backend(d);
    if (!ops) return not_built(d);
    fconv_gpu *gpu;
    return ops->open(&gpu); /* FCONV_ENODEVICE with the driver's reason when absent */
}

int fconv_device_count(fconv_device d) {
    if (d == FCONV_DEVICE_CPU) {
        fconv_clear_error();
        return 1;
    }
    if (d != FCONV_DEVICE_OPENCL && d != FCONV_DEVICE_CUDA) {
        fconv_fail(FCONV_EINVAL, "fconv_device_count: unknown device %d", (int)d);
        return 0;
    }
    const fconv_gpu_ops *ops = fconv_gpu_backend(d);
    if (!ops) {
        not_built(d);
        return 0;
    }
    int n = ops->count();
    if (n > 0) fconv_clear_error();
    return n;
}

fconv_status fconv_device_name(fconv_device d, int index, char *name, size_t len) {
    if (!name || len == 0) return fconv_fail(FCONV_EINVAL, "fconv_device_name: NULL or empty buffer");
    if (d == FCONV_DEVICE_CPU) {
        if (index != 0) return fconv_fail(FCONV_EINVAL, "cpu: device index %d out of range [0, 1)", index);
        snprintf(name, len, "cpu: %s", fconv_cpu_features());
        fconv_clear_error();
        return FCONV_OK;
    }
    if (d != FCONV_DEVICE_OPENCL && d != FCONV_DEVICE_CUDA)
        return fconv_fail(FCONV_EINVAL, "fconv_device_name: unknown device %d", (int)d);
    const fconv_gpu_ops *ops = fconv_gpu_backend(d);
    if (!ops) return not_built(d);
    fconv_status st = ops->name(index, name, len);
    if (st == FCONV_OK) fconv_clear_error();
    return st;
}

void fconv_gpu_timing_clear(void) { last_timing_valid = 0; }

void fconv_gpu_timing_set(const fconv_gpu_timing *t) {
    last_timing = *t;
    last_timing_valid = 1;
}

fconv_status fconv_last_execute_timing(double *kernel_ms, double *transfer_ms) {
    if (!kernel_ms || !transfer_ms)
        return fconv_fail(FCONV_EINVAL, "fconv_last_execute_timing: NULL pointer");
    if (!last_timing_valid)
        return fconv_fail(FCONV_EUNSUPPORTED,
                          "fconv_last_execute_timing: this thread's last execute was not on a GPU");
    *kernel_ms = last_timing.kernel_ms;
    *transfer_ms = last_timing.transfer_ms;
    fconv_clear_error();
    return FCONV_OK;
}
