/*
 * gemm-tile.h — the micro-kernel's register tile for the ISA being compiled (simd/vec.h
 * first): MR rows of C by NR = NV vectors of columns. The micro-kernel (gemm-ukernel.c) and
 * the B packing (gemm-pack.c), compiled per ISA, both take it from here, so a packed sliver
 * is always as wide as the kernel reads.
 */
#ifndef FCONV_GEMM_TILE_H
#define FCONV_GEMM_TILE_H

#if VF_LANES == 1
#define MR 4
#define NV 4
#elif VF_LANES == 16
/* 8 x 32: channel counts are multiples of 8 (6 rows left 64 as 11 slivers, 3% padding),
 * and on Zen 4 it ran the 1x1 layers' products 3-4% faster than 6 x 32 (docs/kernels.md) */
#define MR 8
#define NV 2
#else
#define MR 6
#define NV 2
#endif
#define NR (NV * VF_LANES)

#endif
