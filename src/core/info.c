/*
 * info.c — version, build options and algorithm names: what `fastconv info` and the CLI's
 * --algo parsing need. Names are the CLI spellings, one per fconv_algo value.
 */
#include <string.h>

#include "core/internal.h"
#include "core/parallel.h"

#ifndef FCONV_VERSION_STRING
#define FCONV_VERSION_STRING "unknown"
#endif
#ifndef FCONV_BUILD_OPTIONS
#define FCONV_BUILD_OPTIONS ""
#endif

static const char *const algo_names[FCONV_ALGO_COUNT_] = {
    [FCONV_ALGO_AUTO] = "auto",
    [FCONV_ALGO_REFERENCE] = "reference",
    [FCONV_ALGO_DIRECT] = "direct",
    [FCONV_ALGO_IM2COL] = "im2col",
    [FCONV_ALGO_MEC] = "mec",
    [FCONV_ALGO_WINOGRAD_2X2] = "winograd-2x2",
    [FCONV_ALGO_WINOGRAD_4X4] = "winograd-4x4",
    [FCONV_ALGO_WINOGRAD_6X6] = "winograd-6x6",
    [FCONV_ALGO_WINOGRAD_STRIDE2] = "winograd-stride2",
    [FCONV_ALGO_WINOGRAD_ROWS] = "winograd-rows",
    [FCONV_ALGO_WINOGRAD_COLS] = "winograd-cols",
    [FCONV_ALGO_FFT] = "fft",
    [FCONV_ALGO_FFT_TILED] = "fft-tiled",
    [FCONV_ALGO_FFT_ROWS] = "fft-rows",
    [FCONV_ALGO_FFT_COLS] = "fft-cols",
    [FCONV_ALGO_IMPLICIT_GEMM] = "implicit-gemm",
    [FCONV_ALGO_SEPARABLE] = "separable",
    [FCONV_ALGO_INDIRECT] = "indirect",
    [FCONV_ALGO_GPU_NAIVE] = "gpu-naive",
    [FCONV_ALGO_GPU_CONSTANT] = "gpu-constant",
    [FCONV_ALGO_GPU_TILED_HALO] = "gpu-tiled-halo",
    [FCONV_ALGO_GPU_TILED_GLOBAL] = "gpu-tiled-global",
    [FCONV_ALGO_GPU_IMPLICIT_GEMM] = "gpu-implicit-gemm",
    [FCONV_ALGO_GPU_WINOGRAD_2X2] = "gpu-winograd-2x2",
    [FCONV_ALGO_GPU_IM2COL_GEMM] = "gpu-im2col-gemm",
    [FCONV_ALGO_GPU_WINOGRAD_4X4] = "gpu-winograd-4x4",
};

const char *fconv_version(void) { return FCONV_VERSION_STRING; }

const char *fconv_build_options(void) { return FCONV_BUILD_OPTIONS; }

int fconv_default_threads(void) { return fconv_parallel_default_threads(); }

const char *fconv_algo_name(fconv_algo algo) {
    if ((unsigned)algo < FCONV_ALGO_COUNT_ && algo_names[algo]) return algo_names[algo];
    return "unknown";
}

fconv_status fconv_algo_from_name(const char *name, fconv_algo *algo) {
    if (!name || !algo) return fconv_fail(FCONV_EINVAL, "fconv_algo_from_name: NULL argument");
    for (unsigned i = 0; i < FCONV_ALGO_COUNT_; i++) {
        if (algo_names[i] && strcmp(algo_names[i], name) == 0) {
            *algo = (fconv_algo)i;
            fconv_clear_error();
            return FCONV_OK;
        }
    }
    return fconv_fail(FCONV_EINVAL, "unknown algorithm '%s'", name);
}

fconv_status fconv_algo_get_info(fconv_algo algo, fconv_algo_info *info) {
    if (!info) return fconv_fail(FCONV_EINVAL, "fconv_algo_get_info: NULL info");
    if ((unsigned)algo >= FCONV_ALGO_COUNT_ || algo == FCONV_ALGO_AUTO)
        return fconv_fail(FCONV_EINVAL, "fconv_algo_get_info: %d is not an algorithm", (int)algo);
    const struct fconv_algorithm *a = fconv_algorithm_find(algo);
    if (!a)
        return fconv_fail(FCONV_EUNSUPPORTED, "algorithm '%s' is not built into this library",
                          fconv_algo_name(algo));
    info->algo = a->id;
    info->name = a->name;
    info->summary = a->summary;
    info->serves = a->serves;
    info->error_bound = a->error_bound;
    info->devices = a->devices ? a->devices : 1u << FCONV_DEVICE_CPU;
    fconv_clear_error();
    return FCONV_OK;
}

const char *fconv_kind_name(fconv_kind kind) {
    switch (kind) {
    case FCONV_KIND_CONV2D: return "conv2d";
    case FCONV_KIND_FILTER2D: return "filter2d";
    case FCONV_KIND_CONV1D: return "conv1d";
    }
    return "?";
}
