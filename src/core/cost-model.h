/*
 * cost-model.h — the machine figures algorithms' cost() functions share, so that their
 * estimates are in the same units (seconds) and calibrated once. Fitted on the 2-core Zen 5
 * VM; FFTW- or GEMM-specific figures live with those backends.
 */
#ifndef FCONV_COST_MODEL_H
#define FCONV_COST_MODEL_H

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

#endif
