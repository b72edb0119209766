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

#define FCONV_VEC_PASTE_(a, b) a##b
#define FCONV_VEC_PASTE(a, b) FCONV_VEC_PASTE_(a, b)
/* fconv_filter_rows -> fconv_filter_rows__avx2 in the AVX2 compilation. */
#define FCONV_ISA_SUFFIX(name) FCONV_VEC_PASTE(name, FCONV_VEC_TAG)

#endif
