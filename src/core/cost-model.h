/*
 * cost-model.h — the machine figures algorithms' cost() functions share, so that their
 * estimates are in the same units (seconds) and calibrated once. Fitted on the 2-core Zen 5
 * VM; FFTW- or GEMM-specific figures live with those backends.
 */
#ifndef FCONV_COST_MODEL_H
#define FCONV_COST_MODEL_H

#include "core/internal.h"
#include "fastconv.h"

/* Seconds one thread takes to stream `bytes` through a copy-like pass: 24 GB/s while the
 * buffer fits in L2 (1 MB), 12 GB/s in L3 (32 MB), 8 GB/s from DRAM. */
static inline double fconv_stream_seconds(double bytes) {
    double rate = bytes <= 1048576.0 ? 24e9 : bytes <= 33554432.0 ? 12e9 : 8e9;
    return bytes / rate;
}

/* Seconds a parallel region of several threads adds to a serial run: waking the other
 * threads and the barrier at its end (~3 us on the 2-core VM). Charged by every cost()
 * whose work splits between threads, so that tiny problems stay on one. */
#define FCONV_PARALLEL_REGION_SECONDS 3e-6

/* Flops a second implicit-gemm's register tile runs at on one thread, as 2 per multiply-add
 * (fitted on the 2-core Zen 4 VM on ResNet-50's strided layers and stem: AVX-512 7 x 64 tile
 * 104-111 GFLOP/s, AVX2 6 x 16 94-101, scalar 7; two threads scale by 1.95-2.05). Winograd's
 * channels-last products run on the same tile. */
static inline double fconv_implicit_gemm_tile_flops_per_second(fconv_isa isa) {
    return isa >= FCONV_ISA_AVX512 ? 107e9 : isa >= FCONV_ISA_AVX2 ? 95e9 : 7e9;
}

/* Bytes of weights a second that tile reads on one thread where it has px pixels: each weight
 * feeds px multiply-adds (AVX-512's 7 pixels: ~31 GB/s, past what Intel's cores read from the
 * shared cache, within AMD's; fconv_cpu_info.shared_read_bytes_per_s). */
static inline double fconv_implicit_gemm_tile_weight_bytes_per_second(fconv_isa isa, double px) {
    return fconv_implicit_gemm_tile_flops_per_second(isa) * sizeof(float) / (2.0 * px);
}

/* That rate over what this core reads from the shared cache: past 1 (Intel's cores, not Zen's)
 * the tile outruns the shared cache, and a block's weights read from there keep it waiting. */
static inline double fconv_implicit_gemm_tile_read_ratio(fconv_isa isa, double px) {
    return fconv_implicit_gemm_tile_weight_bytes_per_second(isa, px) / fconv_cpu()->shared_read_bytes_per_s;
}

#endif
