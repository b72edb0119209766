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
#else
#define MR 6
#define NV 2
#endif
#define NR (NV * VF_LANES)

#endif
