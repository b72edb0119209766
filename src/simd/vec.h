/*
 * vec.h — the one vector vocabulary every kernel in src/kernels/ is written against. A kernel
 * source is compiled once per ISA (cmake/isa-kernels.cmake) with FCONV_SIMD_AVX512,
 * FCONV_SIMD_AVX2 or neither defined; this header picks the matching implementation, and
 * FCONV_ISA_SUFFIX(name) gives each compilation its own symbol (name__scalar, name__avx2, ...).
 */
#ifndef FCONV_SIMD_VEC_H
#define FCONV_SIMD_VEC_H

#include <stddef.h>

#if defined(FCONV_SIMD_AVX512)
#include "simd/vec-avx512.h"
#elif defined(FCONV_SIMD_AVX2)
#include "simd/vec-avx2.h"
#else
#include "simd/vec-scalar.h"
#endif

#include <stdint.h>

/* Kernels are templates over constant shapes: their helpers must inline into each instance. */
#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* A loop over a constant count (register tiles) unrolled whole, so that arrays of vectors
 * indexed by it stay in registers: left rolled, GCC keeps such an array on the stack (the
 * GEMM micro-kernel stored and reloaded its 16 accumulators on every call, 5% of a 1x1
 * layer's product at k = 64). */
#if defined(__GNUC__) && !defined(__clang__)
#define UNROLLED _Pragma("GCC unroll 16") for
#else
#define UNROLLED for
#endif

/* Keep a loaded vector in a register for all the multiply-adds it feeds: without this GCC
 * folds the load into each of them as a memory operand, and the loads, not the FMAs, set
 * the pace (2174 memory-operand FMAs in the AVX-512 direct filter kernel). */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define IN_REGISTER(x) __asm__("" : "+v"(x))
#else
#define IN_REGISTER(x) (void)0
#endif

/* Floats (fewer than VF_LANES) before y reaches a whole vector's alignment, where
 * non-temporal stores can start; n when they cannot start within n floats (a short run, or
 * y not even float-aligned). */
static inline size_t vf_head_to_alignment(const float *y, size_t n) {
    size_t bytes = (size_t)(-(uintptr_t)y) % (VF_LANES * sizeof(float));
    size_t head = bytes % sizeof(float) ? n : bytes / sizeof(float);
    return head < n ? head : n;
}

/* The inverse of vf_deinterleave4: p[4t + j] = in[j][t] for 4*VF_LANES floats, through each
 * ISA's vf_interleave4_regs. */
static inline void vf_interleave4(const vf in[4], float *p) {
    vf out[4];
    vf_interleave4_regs(in, out);
    for (int v = 0; v < 4; v++) vf_storeu(p + (size_t)v * VF_LANES, out[v]);
}

#define FCONV_VEC_PASTE_(a, b) a##b
#define FCONV_VEC_PASTE(a, b) FCONV_VEC_PASTE_(a, b)
/* fconv_filter_rows -> fconv_filter_rows__avx2 in the AVX2 compilation. */
#define FCONV_ISA_SUFFIX(name) FCONV_VEC_PASTE(name, FCONV_VEC_TAG)

#endif
