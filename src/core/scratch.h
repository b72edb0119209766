/*
 * scratch.h — each thread's scratch buffers: what a task keeps on its thread from one call to
 * the next (the packed GEMM's panels, direct's strips, winograd-rows' transformed rows),
 * allocated on the thread's first request and freed when the thread exits.
 */
#ifndef FCONV_SCRATCH_H
#define FCONV_SCRATCH_H

#include <stddef.h>

enum fconv_scratch_slot {
    FCONV_SCRATCH_GEMM_A,      /* gemm-packed.c: A's packed block */
    FCONV_SCRATCH_GEMM_B,      /* gemm-packed.c: B's packed block */
    FCONV_SCRATCH_DIRECT_ROWS, /* direct-conv2d.c: the strip of zero-padded input rows */
    FCONV_SCRATCH_DIRECT_FLAT, /* direct-conv2d.c: the long rows' sums */
    FCONV_SCRATCH_WINO_ROWS,   /* winograd-rows.c: the transformed input rows */
    FCONV_SCRATCH_EDGE,        /* direct-conv2d.c, direct-filter.c: an edge's columns */
    FCONV_SCRATCH_SLOTS
};

/* The calling thread's buffer for `slot`, at least `floats` floats, 64-byte aligned, its
 * contents left from the thread's last use of the slot (or undefined after a larger request).
 * The thread owns it until it exits; the caller must not free it. NULL where it could not
 * be allocated: the task then does nothing, and the execute running it returns FCONV_ENOMEM
 * (fconv_run_fail, core/parallel.h). */
float *fconv_thread_scratch(enum fconv_scratch_slot slot, size_t floats);

#endif
