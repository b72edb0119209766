/*
 * dispatch.h — the SIMD kernels and how a plan finds them. Every kernel family is compiled
 * once per ISA (cmake/isa-kernels.cmake, names ending __scalar / __avx2 / __avx512); one
 * const table per ISA holds their pointers, and fconv_kernels_for() picks the table for the
 * best ISA that is compiled in, supported by the CPU and OS (cpuid + XGETBV), and allowed by
 * both the FCONV_ISA environment variable and the plan's max_isa. Contracts: docs/kernels.md.
 */
#ifndef FCONV_DISPATCH_H
#define FCONV_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "fastconv.h"

/* Flags of the direct kernels' last argument. STREAM overwrites y with non-temporal stores
 * where they are aligned (no read-for-ownership of lines nobody will read soon: for outputs
 * far larger than the caches) and does not fence: the calling thread orders them
 * (fconv_stream_fence) before anyone reads y, once per task rather than once per call (a
 * fence per call of four rows of 224 columns cost a 3 -> 64 channel layer ~12%). It is
 * ignored with ACCUMULATE, and where a y row's alignment differs from the first one's.
 * Neither changes a bit of the result. */
#define FCONV_ROWS_ACCUMULATE 1
#define FCONV_ROWS_STREAM 2
#define FCONV_ROWS_RELU 4 /* fconv_direct_rows_fn only: max(0, .) of each output as it is stored */

/*
 * The direct algorithm's inner kernel. For k < nk (1..4) and e < n:
 *   s = (flags & ACCUMULATE ? y[k][e] : 0)
 *       + sum_{a < kh} sum_{b < kw} tap_rows[a][b*tap_step + k*k_stride] * x_rows[a][e + b*dist]
 *   y[k][e] = s (+ bias[k] where bias is not NULL; then max(0, .) with RELU, NaN staying NaN)
 * summed in the order (a, b) with multiply-adds (fused on SIMD ISAs). Reads x_rows[a][0 ..
 * n-1 + (kw-1)*dist] only; y rows must not overlap the inputs. No alignment required.
 */
typedef void (*fconv_direct_rows_fn)(float *const *y, size_t nk, size_t n, const float *const *x_rows,
                                     const float *const *tap_rows, ptrdiff_t tap_step,
                                     ptrdiff_t k_stride, size_t kh, size_t kw, size_t dist,
                                     const float *bias, int flags);

/*
 * The direct algorithm's filter2d kernel: nr (1..FCONV_FILTER_ROWS_MAX) consecutive output
 * rows of one kernel, each input row loaded once for every output row it feeds (more than
 * four rows of one channel slide down column strips where the ISA holds kh rows of
 * accumulators, see below, else go four at a time), summed over `channels` (>= 1) input
 * channels in registers. For r < nr and e < n:
 *   y[r][e] = (flags & ACCUMULATE ? y[r][e] : 0)
 *             + sum_{c < channels} sum_{a < kh} sum_{b < kw}
 *                 tap_rows[c*kh + a][b*tap_step] * x_rows[c*(kh + nr - 1) + r + a][e + b*dist]
 * summed in the order (c, a, b) with multiply-adds (fused on SIMD ISAs): the same bits as
 * fconv_direct_rows_fn called per row with each channel's rows from row r, channel after
 * channel, the later calls accumulating (which read y back and store it again per channel:
 * one call with all of them saves that). x_rows holds channels x (kh + nr - 1) rows; reads
 * x_rows[i][0 .. n-1 + (kw-1)*dist] only; y rows must not overlap the inputs.
 */
#define FCONV_FILTER_ROWS_MAX 64
/* The kernels it slides (fconv_kernels.direct_filter_slide_kh_max per ISA): kh from
 * FCONV_FILTER_SLIDE_KH_MIN, at most FCONV_FILTER_SLIDE_TAPS_MAX taps in all. */
#define FCONV_FILTER_SLIDE_KH_MIN 4
#define FCONV_FILTER_SLIDE_TAPS_MAX 512
#define FCONV_FILTER_SLIDE_KH_MAX_AVX2 6
#define FCONV_FILTER_SLIDE_KH_MAX_AVX512 8
typedef void (*fconv_direct_filter_rows_fn)(float *const *y, size_t nr, size_t n,
                                            const float *const *x_rows, const float *const *tap_rows,
                                            ptrdiff_t tap_step, size_t channels, size_t kh, size_t kw,
                                            size_t dist, int flags);

/*
 * The GEMM micro-kernel: for i < mr, j < nr (mr <= gemm_mr, nr <= gemm_nr of its table),
 *   c[i*ldc + j] = (store == FCONV_GEMM_ACCUMULATE ? c[i*ldc + j] : 0) + sum_{p < k} a[p*MR + i] * b[p*ldb + j]
 * with a a packed panel of exactly MR x k (zero-padded past mr) and b k rows of NR floats,
 * ldb apart (a packed sliver: ldb = NR; or B itself, read in place), all NR read (zero past
 * nr, or anything finite); ldb a multiple of the ISA's vector, b of any alignment. Summation: p in order into a zeroed register, then added
 * to c. FCONV_GEMM_STREAM stores as FCONV_GEMM_STORE, but a whole tile whose rows all start
 * on a vector boundary (c and ldc) leaves through non-temporal stores, which the calling
 * thread orders (fconv_stream_fence) before anyone reads C. Epilogue, where bias (mr floats,
 * row i's bias[i]) or relu is given: each stored value v (after the accumulation) becomes
 * act(v + bias[i]), fconv_bias_relu_rows' bits (bias NULL: none; relu: max(0, .)).
 */
#define FCONV_GEMM_MR_MAX 8 /* the largest gemm_mr of any table */
#define FCONV_GEMM_STORE 0
#define FCONV_GEMM_ACCUMULATE 1
#define FCONV_GEMM_STREAM 2
typedef void (*fconv_gemm_ukernel_fn)(size_t k, const float *a, const float *b, size_t ldb, float *c,
                                      size_t ldc, int store, size_t mr, size_t nr, const float *bias, int relu);
/* gemm_ukernel_pack: the whole-width tile (nr = NR) from B rows anywhere (any alignment,
 * any ldb >= NR), storing those k x NR floats to packed_b (64-byte aligned, packed_b[p*NR +
 * j] = b[p*ldb + j]) as it reads them: a sliver packed by its first use. */
typedef void (*fconv_gemm_ukernel_pack_fn)(size_t k, const float *a, const float *b, size_t ldb, float *packed_b,
                                           float *c, size_t ldc, int store, size_t mr, const float *bias, int relu);
/* gemm_ukernel_half of a table is the same contract for a tile and b rows gemm_nr / 2 wide
 * (nr <= gemm_nr / 2, ldb >= NR/2), with the same A panels. */
/* gemm_ukernel_half_rows: the half-width tiles of `slivers` consecutive A panels at once, every
 * row of each live (mr = MR), panel s at a + s*MR*k (packed back to back): for i < slivers*MR
 * and j < NR/2, c[i*ldc + j] = sum_{p < k} A(i, p) * b[p*ldb + j], summed as gemm_ukernel_half
 * sums (the same bits), stored; no epilogue. gemm_ukernel_half_rows_shuffled (AVX-512 only, else
 * NULL) is the same contract and bits, some broadcasts by permutes instead of loads: for cores
 * that issue 512-bit loads one a cycle (fconv_cpu_info.wide_loads_slow). */
typedef void (*fconv_gemm_ukernel_half_rows_fn)(size_t k, const float *a, size_t slivers, const float *b, size_t ldb,
                                                float *c, size_t ldc);
/* gemm_ukernel_wide (AVX-512 only, else NULL; for the cores of fconv_cpu_info.gemm_wide_tile):
 * gemm_ukernel's contract and bits for MR/2 rows of a panel
 * (a at its row 0 or MR/2, still MR floats a k step; mr <= MR/2) by 2·NR columns, all whole:
 * columns j < NR from b[p*ldb + j], the next NR from b[b_next + p*ldb + j] (B in place: b_next
 * = NR; packed slivers: ldb = NR, b_next = NR·k). Where packed_b is not NULL it also stores
 * the two slivers as it reads them, at packed_b and packed_b + NR·k (as gemm_ukernel_pack). */
typedef void (*fconv_gemm_ukernel_wide_fn)(size_t k, const float *a, const float *b, size_t ldb, size_t b_next,
                                           float *packed_b, float *c, size_t ldc, int store, size_t mr,
                                           const float *bias, int relu);

/*
 * Its few-column twin, for the last columns of a product where a whole (half-width) tile
 * would mostly multiply padding: for i < mr (<= MR) and j < nr,
 *   c[i*ldc + j] = j < nc ? sum_{p < k} a[p*MR + i] * b[p*ldb + j] : 0
 * with the same packed A panel and any row stride ldb of b; nc <= 8, nc <= nr.
 */
typedef void (*fconv_gemm_ukernel_cols_fn)(size_t k, const float *a, const float *b, size_t ldb, float *c,
                                           size_t ldc, size_t mr, size_t nc, size_t nr);

/* gemm_ukernel_ahead: gemm_ukernel's whole-width tile that also asks for `rows` rows of NR
 * floats at `next` (rows next_ld floats apart: the next B sliver's share, unpacked) into L2,
 * two lines every two of its k steps, as many as its steps allow. Only a hint: C as
 * gemm_ukernel computes it. */
typedef void (*fconv_gemm_ukernel_ahead_fn)(size_t k, const float *a, const float *b, size_t ldb, float *c,
                                            size_t ldc, int store, size_t mr, size_t nr, const float *bias, int relu,
                                            const float *next, size_t next_ld, size_t rows);

/*
 * Packing B for it: rows [0, kc) x columns [0, cols) of a row-major b (leading dimension
 * ldb) into ceil(cols / NR) slivers, sliver s at dst + s*kc*NR holding b[p][s*NR + j] at
 * [p*NR + j], zero for columns past cols. dst 64-byte aligned; cols >= 1.
 */
typedef void (*fconv_gemm_pack_b_fn)(size_t kc, size_t cols, const float *b, size_t ldb, float *dst);

/* dst[i] = src[2 i] for i < n, reading src[0 .. 2n - 2] only (kernels/im2col/im2col-stride2.c):
 * im2col's lowering of a stride-2 row. */
typedef void (*fconv_copy_stride2_fn)(float *dst, const float *src, size_t n);

/*
 * The Winograd input gather of F(m x m) tiles, one patch row of a run of tiles along an image
 * row: m = 2 or 4 for F(2x2, 3x3) and F(4x4, 3x3) (tiles m columns apart, alpha = m + 2 patch
 * columns adjacent), m = 3 for F(3x3, 4x4) on a stride-2 phase (tiles 6 columns apart, alpha =
 * 6 of the phase's columns 2 apart): for r < run and j < alpha, dst[j*dst_step + r] =
 * xr[col0 + step*r + s*j] (step, s = m, 1 or 6, 2), or 0 where that column is outside [0, w).
 * Reads xr[0 .. w-1] only; dst_step >= run.
 */
typedef void (*fconv_wino_gather_fn)(const float *xr, int64_t col0, int64_t w, size_t m, size_t run, float *dst,
                                     size_t dst_step);
/*
 * F(4x4)'s for a map four tiles wide (14x14, 16x16 outputs), whole tile rows at a time: tile
 * t < ntiles (a multiple of 4) is column t % 4 of tile row t / 4, and for i, j < 6
 * dst[(i*6 + j)*dst_step + t] = rows[(t/4)*6 + i][col0 + 4*(t%4) + j], or 0 where rows[...]
 * is NULL (a padding row) or that column is outside [0, w). Reads rows[.][0 .. w-1] only;
 * dst_step >= ntiles. One vector holds up to four tile rows, where the run gather spends a
 * call and a partial vector on each 4-tile run.
 */
typedef void (*fconv_wino_f4_gather_grid_fn)(const float *const *rows, int64_t col0, int64_t w, size_t ntiles,
                                             float *dst, size_t dst_step);

/*
 * The output scatter of F(m x m) tiles, m = 2, 3 or 4, one output row of a run of tiles: for
 * r < run and j < m with q = q0 + m*r + j < out_w, yrow[q] = src[j*src_step + r] (+ *bias
 * when bias is not NULL), then max(0, .) if relu (NaN stays NaN). q0 >= 0; src_step >= run.
 * With stream, the vector-aligned whole vectors of y go out through non-temporal stores,
 * which the calling thread orders (fconv_stream_fence) before anyone reads y.
 */
typedef void (*fconv_wino_scatter_fn)(const float *src, size_t src_step, size_t m, size_t run, float *yrow,
                                      int64_t q0, int64_t out_w, const float *bias, int relu, int stream);
/*
 * F(4x4)'s twin for maps four tiles wide (out_w <= 16), whole tile rows at a time: for tile
 * t < ntiles (a multiple of 4), i, j < 4 and q = 4*(t%4) + j < out_w, where
 * yrows[(t/4)*4 + i] is not NULL (an output row past the map's end is),
 * yrows[(t/4)*4 + i][q] = src[(i*4 + j)*src_step + t] (+ *bias), then max(0, .) if relu.
 */
typedef void (*fconv_wino_f4_scatter_grid_fn)(const float *src, size_t src_step, size_t ntiles,
                                              float *const *yrows, int64_t out_w, const float *bias, int relu);

/*
 * The Winograd tile transforms (kernels/winograd/winograd-tiles.c), many tiles at once in the
 * tile-minor layout of algo/winograd.h, ncols (a multiple of 16, <= ld) tiles computed.
 * Input: v(ξ, ν) = (B^T d B)[ξ][ν] for one channel; d: element (i, j) at d + i*d_row + j*d_col
 * (the NCHW driver's gathered tiles, alpha*ld and ld; in NHWC a patch of x as it lies, a row
 * of pixels and a pixel apart); v(ξ, ν) at v + (ξ*alpha + ν)*v_step.
 * Output: out = A^T M A for one output channel; M(ξ, ν) at mm + (ξ*alpha + ν)*m_step;
 * out: element (i, j) at out + i*out_row + j*out_col, bias[lane] added where bias is not NULL
 * (NHWC: the lanes are output channels) and max(0, .) taken where relu; with stream, through
 * non-temporal stores (out and both steps whole vectors apart and aligned; the calling thread
 * fences, fconv_stream_fence, before anyone reads out).
 * wino_input is indexed by alpha/2 - 2 (alpha = 4, 6, 8), wino_output by m/2 - 1 for
 * F(m x m, 3 x 3), m = 2, 4, 6, and 3 for F(3x3, 4x4): the matrix set's input_slot and
 * output_slot (algo/winograd.h).
 */
typedef void (*fconv_wino_input_fn)(const float *d, size_t d_row, size_t d_col, float *v, size_t v_step,
                                    size_t ncols);
typedef void (*fconv_wino_output_fn)(const float *mm, size_t m_step, float *out, size_t out_row, size_t out_col,
                                     const float *bias, int relu, int stream, size_t ncols);

/*
 * winograd-rows (kernels/winograd/winograd-rows.c): F(4,3) along image rows.
 * Input: a row's transform in place. On entry u[j*u_step + t] (t < ntiles, j < 6) is patch
 * column j of tile t, as fconv_wino_gather_fn (m = 4) lays it; on return (B^T d)[j] of the
 * tile, and lanes ntiles .. (ntiles rounded up to VF_LANES) - 1 of each row hold 0. u 64-byte
 * aligned; u_step a multiple of VF_LANES, at least that rounded count.
 * Product: output columns q < out_w of channels k < nk, row y + k*y_kstride:
 * y[q] = max(floor, (A^T m)[q % 4] + bias[k]) for tile t = q / 4, where
 * m[j] = sum over c < nc, b < nr of g[k*g_kstride + c*g_cstep + 6b + j] *
 * u[c*u_cstep + b*u_rstep + j*u_step + t] (transformed rows as the input transform leaves them
 * and their transformed taps; nc*nr may be 0), bias NULL for none, floor 0 with relu and none
 * without. u, u_step, u_cstep, u_rstep as the input transform's (every row holds the tiles of
 * out_w rounded up to VF_LANES). With stream the whole vectors 4*VF_LANES apart go out through
 * non-temporal stores (each row then 64-byte aligned; the calling thread fences,
 * fconv_stream_fence, before anyone reads y). A table's wino_rows_product_shuffled (AVX-512
 * only, else NULL) is the same contract and bits, taps broadcast partly by shuffles, for cores
 * whose 512-bit loads issue one a cycle (fconv_cpu_info.wide_loads_slow).
 */
typedef void (*fconv_wino_rows_input_fn)(float *u, size_t u_step, size_t ntiles);
typedef void (*fconv_wino_rows_product_fn)(float *y, size_t y_kstride, size_t nk, size_t out_w, const float *u,
                                           size_t u_step, ptrdiff_t u_cstep, ptrdiff_t u_rstep, size_t nc,
                                           size_t nr, const float *g, size_t g_kstride, size_t g_cstep,
                                           const float *bias, int relu, int stream);

/*
 * winograd-cols (kernels/winograd/winograd-cols.c): F(4,3) down image columns, 4 output rows a
 * tile, VF_LANES neighbouring columns a vector. A pair's transformed rows lie vector by
 * vector, the 6 components of each together: component j of columns [q, q + VF_LANES) (q a
 * multiple of VF_LANES) at v + 6q + j*VF_LANES.
 * Input: for q < ncols rounded up to VF_LANES, component j of column q = (B^T d)[j], where
 * d[i] = rows[i][col0 + q], 0 where col0 + q lies outside [0, in_w) or rows[i] is NULL (a row
 * outside the image); v 64-byte aligned. In the product's layout above, or with planes in the
 * NHWC product's: component j of column q at v + j*FCONV_WINO_COLS_PLANE + q (there a "column"
 * is one of a row's pixels' channels, w*C + c flattened).
 * Product: for output channels k < nk, tile rows i < nrows (1-4) and columns q < out_w,
 * y[k*y_kstride + i*y_rstride + q] = max(floor, (A^T m)[i] + bias[k]), where m[j] = sum over
 * pairs p < npairs of g[(k/2)*g_kpstride + 12p + 6(k%2) + j] * (component j of column q of
 * pair p's transformed rows, at v + p*v_pstep; every pair holds out_w rounded up to VF_LANES
 * columns): the taps of channels k and k+1 (k even) side by side per pair. bias NULL for
 * none, floor 0 with relu and none without. With stream the whole vectors go out through
 * non-temporal stores where a vector is a whole 64-byte line (AVX-512; elsewhere stream is
 * ignored), y, y_kstride and y_rstride then whole lines; the calling thread fences,
 * fconv_stream_fence, before anyone reads y.
 */
typedef void (*fconv_wino_cols_input_fn)(float *v, int planes, const float *const rows[6], ptrdiff_t col0,
                                         size_t in_w, size_t ncols);
typedef void (*fconv_wino_cols_product_fn)(float *y, size_t y_kstride, size_t y_rstride, size_t nrows, size_t nk,
                                           size_t out_w, const float *v, size_t v_pstep, size_t npairs,
                                           const float *g, size_t g_kpstride, const float *bias, int relu,
                                           int stream);
/* NHWC product, the lanes output channels: for tile rows i < nrows (1-4), pixels q < out_w and
 * channels kk < k (a multiple of VF_LANES), y[(i*out_w + q)*k + kk] = max(floor, (A^T m)[i] +
 * bias[kk]), where m[j] = sum over kernel columns s' < s and channels cc < c of
 * v[j*FCONV_WINO_COLS_PLANE + q*c + s'*s_step + cc] * g[(kk/32)*32*s*c*6 + (s'*c + cc)*6*32 +
 * j*32 + kk%32] (the transformed input rows, component j's plane holding the row's pixels'
 * channels from the first column the outputs read; the taps in blocks of 32 channels, the last
 * block's past k unread).
 * v and g 64-byte aligned; stream: non-temporal stores (y and k*4 bytes whole 64-byte lines;
 * the calling thread fences). */
#define FCONV_WINO_COLS_PLANE 4096
typedef void (*fconv_wino_cols_product_nhwc_fn)(float *y, size_t nrows, size_t out_w, size_t k, const float *v,
                                                size_t c, size_t s, size_t s_step, const float *g,
                                                const float *bias, int relu, int stream);

/*
 * The fft-rows transforms (kernels/fft/fft-rows.c), n in {16, 32, 64, 128}, VF_LANES
 * segments per call, segment l being n samples starting at l*hop (1 <= hop <= n).
 * Forward: the real DFT of each segment into spec (64-byte aligned, n*VF_LANES floats):
 * slot k < n/2 holds its VF_LANES real parts at spec + 2k*VF_LANES and imaginary parts at
 * spec + (2k+1)*VF_LANES, with X[k] doubled for k > 0 and slot 0 holding X[0] and X[n/2].
 * Reads ext[0 .. (VF_LANES-1)*hop + n - 1].
 * Inverse: Y = sum_{a < kh} taps[a] * spec[a] per slot (taps[a] is n floats, 2 per slot:
 * (re, im) of a complex factor, or for slot 0 the real factors of its two bins), then the
 * unnormalized inverse real DFT y[t] = sum_{q < n} Y[q] e^{+2 pi i q t / n} of the Hermitian
 * spectrum with Y[0], Y[n/2] from slot 0 and Y[n-q] = conj(Y[q]); sample t < hop of segment
 * l is written to y[l*hop + t] where that is below count (y from count on is untouched).
 */
#define FCONV_FFT_ROWS_MAX_N 128
typedef void (*fconv_fft_rows_forward_fn)(size_t n, const float *ext, size_t hop, float *spec);
typedef void (*fconv_fft_rows_inverse_fn)(size_t n, const float *const *spec, const float *taps, size_t kh,
                                          size_t hop, float *y, size_t count);
/* y[e] = src[e] for e < n, the aligned whole vectors of y with non-temporal stores (no read
 * for ownership), fenced before returning; y and src must not overlap. */
typedef void (*fconv_fft_rows_stream_row_fn)(float *y, const float *src, size_t n);

/*
 * The fft-cols transforms (kernels/fft/fft-cols.c), n in {16, 32, 64, 128}, VF_LANES
 * adjacent columns per call, each transformed down its n rows; spectra laid out as
 * fft-rows' with planes ps floats apart (plane 2k: slot k's real parts, 2k+1: imaginary).
 * Forward: rows[t] (t < n) points at sample t of every lane (VF_LANES floats, any
 * alignment); spec 64-byte aligned, ps a multiple of VF_LANES; the real DFT of each lane.
 * Inverse: per slot, Y = sum_{b < kw} taps[b] * X_b, X_b's planes at spec + b*dist (any
 * alignment, planes ps apart; taps as fft-rows'), then the unnormalized inverse real DFT of
 * each lane; sample t < rows of lane l is written to y[t*y_stride + l] for l < len (1 <= len
 * <= VF_LANES). stream: whole vectors leave through non-temporal stores (y and y_stride
 * then vector-aligned; the caller fences before its region ends).
 */
#define FCONV_FFT_COLS_MAX_TAPS 128
typedef void (*fconv_fft_cols_forward_fn)(size_t n, const float *const *rows, float *spec, size_t ps);
typedef void (*fconv_fft_cols_inverse_fn)(size_t n, const float *spec, size_t ps, size_t dist, const float *taps,
                                          size_t kw, float *y, size_t y_stride, size_t rows, size_t len,
                                          int stream);

/*
 * The implicit-GEMM conv2d tile (kernels/implicit-gemm/implicit-gemm-tile.c): implicit_gemm_px
 * output pixels by nv (1 .. implicit_gemm_nv) vectors of output channels. For i < npix
 * (<= px) and j < nch (<= nv*lanes):
 *   y[j*y_stride + i] = act(bias[j] + sum_{t < taps} x[i][off[t]] * w[t*nv*lanes + j])
 * summed in the order t with multiply-adds (fused on SIMD ISAs) into a zeroed register, then
 * the bias added (bias NULL: none) and max(0, .) taken if relu (NaN stays NaN).
 * x: px pixel bases (any pointers, repeats allowed), each read at its offsets off[t] only;
 * w: taps rows of nv*lanes floats, 64-byte aligned, read whole. streams: hints, a set of
 * FCONV_IG_*_STREAMS: x comes from memory, not the caches (the tile then prefetches further
 * ahead; not with channels_last, whose pixels' channels the tile prefetches line by line); y
 * goes to memory (the tile asks for its output lines before its taps); w comes from beyond
 * L2 (channels_last tiles without edges then ask for w's rows WEIGHT_PREFETCH_TAPS ahead;
 * the others and fconv_implicit_gemm_tiles_fn ignore it). FCONV_IG_OUTPUT_NONTEMPORAL, no
 * hint: channels_last whole tiles (npix = px, nch = nv*lanes) store y by non-temporal stores
 * (without asking for its lines first), the same values; y and y_stride must then put every
 * pixel's first channel on a 64-byte line, and the caller orders the stores
 * (fconv_stream_fence) before anyone reads y.
 * A tile's taps may come in chunks, one call each, in order: acc_in (NULL: a zeroed register)
 * holds the sums the chunk before left in its acc_out, and a call with acc_out (NULL: the
 * tile's last chunk, stored to y as above) leaves its sums there instead of storing y, so
 * the sums are those of one call over all the taps, bit for bit. Both hold px*nv_max*lanes
 * floats (pixel i's vector v at (i*nv_max + v)*lanes, nv_max = implicit_gemm_nv), 64-byte
 * aligned.
 * channels_last: y[i*y_stride + j] instead (an NHWC output: a pixel's channels side by side).
 * edges (NULL: every pixel sums every tap): the taps come in groups of edges->group (the
 * first one entered at edges->phase), and the sum of pixel 0 leaves out the first
 * edges->first taps of each group, that of pixel npix-1 the last edges->last: the kernel
 * columns a row's first and last windows have in the padding, so that the image is read in
 * place with no zero-padded copy. With edges, npix < px needs nv = implicit_gemm_nv.
 * ahead (NULL: nothing): tap t asks for the 64-byte line at ahead + 16t into L2, for t below
 * ahead_lines and taps: the weights the caller's next tiles read, fetched while this one
 * multiplies; the ahead_lines lines from ahead lie in one object (the caller's weights).
 */
#define FCONV_IMPLICIT_GEMM_PX_MAX 8 /* the largest implicit_gemm_px of any table */
enum {
    FCONV_IG_INPUT_STREAMS = 1,
    FCONV_IG_OUTPUT_STREAMS = 2,
    FCONV_IG_WEIGHT_STREAMS = 4,
    FCONV_IG_OUTPUT_NONTEMPORAL = 8
};
struct fconv_implicit_gemm_edges {
    size_t group, first, last;
    size_t phase; /* the call's first tap is tap `phase` of its group (a chunk may start inside one) */
};
typedef void (*fconv_implicit_gemm_tile_fn)(size_t taps, const float *const *x, const int32_t *off,
                                            const float *w, size_t nv, float *y, size_t y_stride, int channels_last,
                                            size_t npix, size_t nch, const float *bias, int relu, unsigned streams,
                                            const struct fconv_implicit_gemm_edges *edges, const float *acc_in,
                                            float *acc_out, const float *ahead, size_t ahead_lines);

/* A run of `tiles` tiles of px pixels each (implicit_gemm_px, or implicit_gemm_px_registers
 * with nv = implicit_gemm_nv), each over all `taps` with no edges and no chunks: pixel e of
 * tile j reads at x + pixel_bases[j*px + e] and its sums go to y + j*y_tile_step, laid out as
 * the tile's y (y_stride, channels_last, nch channels). The same sums as one tile call per
 * tile, without the driver's work per tile (a 1x1 layer's tile of 64 taps is ~1000 cycles).
 * ahead, ahead_lines: as the tile's, shared out evenly among the run's tiles. */
typedef void (*fconv_implicit_gemm_tiles_fn)(size_t tiles, size_t taps, const float *x, const int32_t *pixel_bases,
                                             const int32_t *off, const float *w, size_t nv, float *y,
                                             size_t y_tile_step, size_t y_stride, int channels_last, size_t nch,
                                             const float *bias, int relu, unsigned streams, size_t px,
                                             const float *ahead, size_t ahead_lines);

/* How a caller shares out `lines` lines of its next weights (`ahead`) among the `later` tiles
 * after its first (which waits on its own weights and asks for nothing): tile u > 0 asks for
 * lines [(u-1)·lines/later, u·lines/later). For a call of tiles first..last (at most later):
 * their lines from *from, the count returned. */
static inline size_t fconv_implicit_gemm_ahead_share(size_t first, size_t last, size_t later, size_t lines,
                                                     size_t *from) {
    *from = first ? (first - 1) * lines / later : 0;
    return (last ? last * lines / later : 0) - *from;
}

/* Transpose (kernels/layout/transpose.c): dst[j*ld_dst + i] = src[i*ld_src + j] for i < rows,
 * j < cols (conv2d's NHWC tensors to NCHW and back: a pixel's channels, a row of src, become
 * a column of dst). No alignment needed; src and dst must not overlap. */
typedef void (*fconv_transpose_fn)(const float *src, size_t ld_src, size_t rows, size_t cols, float *dst,
                                   size_t ld_dst);

/* One ISA's kernels. */
struct fconv_kernels {
    fconv_isa isa;
    const char *name;                 /* "scalar", "avx2", "avx512" */
    fconv_direct_rows_fn direct_rows;
    fconv_direct_filter_rows_fn direct_filter_rows;
    size_t direct_filter_slide_kh_max; /* the tallest kernel it slides (0: none) */
    fconv_gemm_ukernel_fn gemm_ukernel, gemm_ukernel_half;
    fconv_gemm_ukernel_pack_fn gemm_ukernel_pack;
    fconv_gemm_ukernel_cols_fn gemm_ukernel_cols;
    fconv_gemm_ukernel_ahead_fn gemm_ukernel_ahead;
    fconv_gemm_ukernel_half_rows_fn gemm_ukernel_half_rows, gemm_ukernel_half_rows_shuffled;
    fconv_gemm_ukernel_wide_fn gemm_ukernel_wide;
    size_t gemm_mr, gemm_nr;          /* the micro-kernel's register tile */
    fconv_gemm_pack_b_fn gemm_pack_b;
    fconv_copy_stride2_fn im2col_copy_stride2;
    fconv_wino_gather_fn wino_gather;
    fconv_wino_f4_gather_grid_fn wino_f4_gather_grid;
    fconv_wino_scatter_fn wino_scatter;
    fconv_wino_f4_scatter_grid_fn wino_f4_scatter_grid;
    fconv_wino_input_fn wino_input[3];
    fconv_wino_output_fn wino_output[4];
    fconv_wino_rows_input_fn wino_rows_input;
    fconv_wino_rows_product_fn wino_rows_product, wino_rows_product_shuffled;
    fconv_wino_cols_input_fn wino_cols_input;
    fconv_wino_cols_product_fn wino_cols_product;
    fconv_wino_cols_product_nhwc_fn wino_cols_product_nhwc;
    fconv_fft_rows_forward_fn fft_rows_forward;
    fconv_fft_rows_inverse_fn fft_rows_inverse;
    fconv_fft_rows_stream_row_fn fft_rows_stream_row;
    fconv_fft_cols_forward_fn fft_cols_forward;
    fconv_fft_cols_inverse_fn fft_cols_inverse;
    fconv_implicit_gemm_tile_fn implicit_gemm_tile;
    fconv_implicit_gemm_tiles_fn implicit_gemm_tiles;
    size_t implicit_gemm_px, implicit_gemm_nv; /* its register tile */
    size_t implicit_gemm_px_registers;         /* the widest tile with every weight vector in a
                                                  register (<= implicit_gemm_px) */
    fconv_transpose_fn transpose;
    /* transpose's sums, each of dst's rows written by non-temporal stores of whole 64-byte
     * lines: rows a multiple of 16, dst 64-byte aligned and ld_dst a multiple of 16; the caller
     * orders the stores (fconv_stream_fence) before anyone reads dst */
    fconv_transpose_fn transpose_streamed;
    size_t lanes;                     /* VF_LANES: segments per fft-rows call */
};

/* The table for the best usable ISA not above cap (FCONV_ISA_AUTO: no cap). Never NULL:
 * the scalar table is always there. Thread-safe; detection runs once. */
const struct fconv_kernels *fconv_kernels_for(fconv_isa cap);

/* The table of exactly this ISA, or NULL if it is not compiled in or this CPU/OS cannot run
 * it (tests use it to compare every runnable ISA against scalar; FCONV_ISA is ignored). */
const struct fconv_kernels *fconv_kernels_exact(fconv_isa isa);

/* The per-ISA kernels (kernels/direct/direct-rows.c compiled once per ISA). */
void fconv_direct_rows_kernel__scalar(float *const *y, size_t nk, size_t n, const float *const *x_rows,
                                    const float *const *tap_rows, ptrdiff_t tap_step, ptrdiff_t k_stride,
                                    size_t kh, size_t kw, size_t dist, const float *bias, int flags);
void fconv_direct_rows_kernel__avx2(float *const *y, size_t nk, size_t n, const float *const *x_rows,
                                    const float *const *tap_rows, ptrdiff_t tap_step, ptrdiff_t k_stride,
                                    size_t kh, size_t kw, size_t dist, const float *bias, int flags);
void fconv_direct_rows_kernel__avx512(float *const *y, size_t nk, size_t n, const float *const *x_rows,
                                    const float *const *tap_rows, ptrdiff_t tap_step, ptrdiff_t k_stride,
                                    size_t kh, size_t kw, size_t dist, const float *bias, int flags);
void fconv_direct_filter_rows_kernel__scalar(float *const *y, size_t nr, size_t n,
                                    const float *const *x_rows, const float *const *tap_rows,
                                    ptrdiff_t tap_step, size_t channels, size_t kh, size_t kw, size_t dist,
                                    int flags);
void fconv_direct_filter_rows_kernel__avx2(float *const *y, size_t nr, size_t n,
                                    const float *const *x_rows, const float *const *tap_rows,
                                    ptrdiff_t tap_step, size_t channels, size_t kh, size_t kw, size_t dist,
                                    int flags);
void fconv_direct_filter_rows_kernel__avx512(float *const *y, size_t nr, size_t n,
                                    const float *const *x_rows, const float *const *tap_rows,
                                    ptrdiff_t tap_step, size_t channels, size_t kh, size_t kw, size_t dist,
                                    int flags);

/* The per-ISA Winograd gathers and scatters (kernels/winograd/winograd-gather.c). */
#define FCONV_DECLARE_WINO_GATHER_GRID(isa)                                                             \
    void fconv_wino_f4_gather_grid_kernel__##isa(const float *const *rows, int64_t col0, int64_t w, size_t ntiles, \
                                                 float *dst, size_t dst_step);                                    \
    void fconv_wino_f4_scatter_grid_kernel__##isa(const float *src, size_t src_step, size_t ntiles,               \
                                                  float *const *yrows, int64_t out_w, const float *bias, int relu);
FCONV_DECLARE_WINO_GATHER_GRID(scalar)
FCONV_DECLARE_WINO_GATHER_GRID(avx2)
FCONV_DECLARE_WINO_GATHER_GRID(avx512)
#undef FCONV_DECLARE_WINO_GATHER_GRID

#define FCONV_DECLARE_WINO_GATHER_SCATTER(isa)                                                          \
    void fconv_wino_gather_kernel__##isa(const float *xr, int64_t col0, int64_t w, size_t m, size_t run, float *dst,  \
                                         size_t dst_step);                                                       \
    void fconv_wino_scatter_kernel__##isa(const float *src, size_t src_step, size_t m, size_t run, float *yrow,    \
                                          int64_t q0, int64_t out_w, const float *bias, int relu, int stream);
FCONV_DECLARE_WINO_GATHER_SCATTER(scalar)
FCONV_DECLARE_WINO_GATHER_SCATTER(avx2)
FCONV_DECLARE_WINO_GATHER_SCATTER(avx512)
#undef FCONV_DECLARE_WINO_GATHER_SCATTER

/* The per-ISA Winograd tile transforms (kernels/winograd/winograd-tiles.c), fconv_wino_input_f4__avx2
 * and so on: the two functions of F(m x m) for one ISA, then all three m for each ISA, and
 * F(3x3, 4x4)'s output transform. */
#define FCONV_DECLARE_WINO_TILES(isa, m)                                                               \
    void fconv_wino_input_f##m##__##isa(const float *d, size_t d_row, size_t d_col, float *v, size_t v_step,   \
                                        size_t ncols);                                                       \
    void fconv_wino_output_f##m##__##isa(const float *mm, size_t m_step, float *out, size_t out_row,          \
                                         size_t out_col, const float *bias, int relu, int stream, size_t ncols);
#define FCONV_DECLARE_WINO_TILES_ALL(isa) \
    FCONV_DECLARE_WINO_TILES(isa, 2) FCONV_DECLARE_WINO_TILES(isa, 4) FCONV_DECLARE_WINO_TILES(isa, 6) \
    void fconv_wino_output_f3__##isa(const float *mm, size_t m_step, float *out, size_t out_row, size_t out_col, \
                                     const float *bias, int relu, int stream, size_t ncols);
FCONV_DECLARE_WINO_TILES_ALL(scalar)
FCONV_DECLARE_WINO_TILES_ALL(avx2)
FCONV_DECLARE_WINO_TILES_ALL(avx512)
#undef FCONV_DECLARE_WINO_TILES_ALL
#undef FCONV_DECLARE_WINO_TILES

/* The per-ISA winograd-rows kernels (kernels/winograd/winograd-rows.c). */
#define FCONV_DECLARE_WINO_ROWS(isa)                                                                    \
    void fconv_wino_rows_input_kernel__##isa(float *u, size_t u_step, size_t ntiles);                   \
    void fconv_wino_rows_product_kernel__##isa(float *y, size_t y_kstride, size_t nk, size_t out_w,      \
                                               const float *u, size_t u_step, ptrdiff_t u_cstep,         \
                                               ptrdiff_t u_rstep, size_t nc, size_t nr, const float *g,  \
                                               size_t g_kstride, size_t g_cstep, const float *bias,      \
                                               int relu, int stream);
FCONV_DECLARE_WINO_ROWS(scalar)
FCONV_DECLARE_WINO_ROWS(avx2)
FCONV_DECLARE_WINO_ROWS(avx512)
#undef FCONV_DECLARE_WINO_ROWS
void fconv_wino_rows_product_shuffled_kernel__avx512(float *y, size_t y_kstride, size_t nk, size_t out_w,
                                                     const float *u, size_t u_step, ptrdiff_t u_cstep,
                                                     ptrdiff_t u_rstep, size_t nc, size_t nr, const float *g,
                                                     size_t g_kstride, size_t g_cstep, const float *bias, int relu,
                                                     int stream);

/* The per-ISA winograd-cols kernels (kernels/winograd/winograd-cols.c). */
#define FCONV_DECLARE_WINO_COLS(isa)                                                                       \
    void fconv_wino_cols_input_kernel__##isa(float *v, int planes, const float *const rows[6],            \
                                             ptrdiff_t col0, size_t in_w, size_t ncols);                  \
    void fconv_wino_cols_product_nhwc_kernel__##isa(float *y, size_t nrows, size_t out_w, size_t k,       \
                                                    const float *v, size_t c, size_t s, size_t s_step,    \
                                                    const float *g, const float *bias, int relu,          \
                                                    int stream);                                          \
    void fconv_wino_cols_product_kernel__##isa(float *y, size_t y_kstride, size_t y_rstride, size_t nrows, \
                                               size_t nk, size_t out_w, const float *v, size_t v_pstep,    \
                                               size_t npairs, const float *g, size_t g_kpstride,           \
                                               const float *bias, int relu, int stream);
FCONV_DECLARE_WINO_COLS(scalar)
FCONV_DECLARE_WINO_COLS(avx2)
FCONV_DECLARE_WINO_COLS(avx512)
#undef FCONV_DECLARE_WINO_COLS

/* The per-ISA implicit-GEMM tiles (kernels/implicit-gemm/implicit-gemm-tile.c) and their shapes. */
#define FCONV_DECLARE_IMPLICIT_GEMM(isa)                                                                      \
    void fconv_implicit_gemm_tile__##isa(size_t taps, const float *const *x, const int32_t *off, const float *w, \
                                         size_t nv, float *y, size_t y_stride, int channels_last, size_t npix, \
                                         size_t nch,                                                          \
                                         const float *bias, int relu, unsigned streams,                       \
                                         const struct fconv_implicit_gemm_edges *edges, const float *acc_in,  \
                                         float *acc_out, const float *ahead, size_t ahead_lines);             \
    void fconv_implicit_gemm_tiles__##isa(size_t tiles, size_t taps, const float *x, const int32_t *pixel_bases, \
                                          const int32_t *off, const float *w, size_t nv, float *y,            \
                                          size_t y_tile_step, size_t y_stride, int channels_last, size_t nch, \
                                          const float *bias, int relu, unsigned streams, size_t px,           \
                                          const float *ahead, size_t ahead_lines);                            \
    size_t fconv_implicit_gemm_px__##isa(void);                                                               \
    size_t fconv_implicit_gemm_px_registers__##isa(void);                                                     \
    size_t fconv_implicit_gemm_nv__##isa(void);
FCONV_DECLARE_IMPLICIT_GEMM(scalar)
FCONV_DECLARE_IMPLICIT_GEMM(avx2)
FCONV_DECLARE_IMPLICIT_GEMM(avx512)
#undef FCONV_DECLARE_IMPLICIT_GEMM

/* The per-ISA GEMM micro-kernels (kernels/gemm/gemm-ukernel.c) and their tile shapes. */
void fconv_gemm_ukernel__scalar(size_t k, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                              int store, size_t mr, size_t nr, const float *bias, int relu);
void fconv_gemm_ukernel_half__scalar(size_t k, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                                   int store, size_t mr, size_t nr, const float *bias, int relu);
void fconv_gemm_ukernel_half_rows__scalar(size_t k, const float *a, size_t slivers, const float *b, size_t ldb,
                                        float *c, size_t ldc);
void fconv_gemm_ukernel_cols__scalar(size_t k, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                                   size_t mr, size_t nc, size_t nr);
void fconv_gemm_ukernel_ahead__scalar(size_t k, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                                      int store, size_t mr, size_t nr, const float *bias, int relu, const float *next,
                                      size_t next_ld, size_t rows);
void fconv_gemm_ukernel_pack__scalar(size_t k, const float *a, const float *b, size_t ldb, float *packed_b,
                                   float *c, size_t ldc, int store, size_t mr, const float *bias, int relu);
size_t fconv_gemm_mr__scalar(void);
size_t fconv_gemm_nr__scalar(void);
void fconv_gemm_ukernel__avx2(size_t k, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                              int store, size_t mr, size_t nr, const float *bias, int relu);
void fconv_gemm_ukernel_half__avx2(size_t k, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                                   int store, size_t mr, size_t nr, const float *bias, int relu);
void fconv_gemm_ukernel_half_rows__avx2(size_t k, const float *a, size_t slivers, const float *b, size_t ldb,
                                        float *c, size_t ldc);
void fconv_gemm_ukernel_cols__avx2(size_t k, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                                   size_t mr, size_t nc, size_t nr);
void fconv_gemm_ukernel_ahead__avx2(size_t k, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                                    int store, size_t mr, size_t nr, const float *bias, int relu, const float *next,
                                    size_t next_ld, size_t rows);
void fconv_gemm_ukernel_pack__avx2(size_t k, const float *a, const float *b, size_t ldb, float *packed_b,
                                   float *c, size_t ldc, int store, size_t mr, const float *bias, int relu);
size_t fconv_gemm_mr__avx2(void);
size_t fconv_gemm_nr__avx2(void);
void fconv_gemm_ukernel__avx512(size_t k, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                              int store, size_t mr, size_t nr, const float *bias, int relu);
void fconv_gemm_ukernel_half__avx512(size_t k, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                                   int store, size_t mr, size_t nr, const float *bias, int relu);
void fconv_gemm_ukernel_half_rows__avx512(size_t k, const float *a, size_t slivers, const float *b, size_t ldb,
                                        float *c, size_t ldc);
void fconv_gemm_ukernel_half_rows_shuffled__avx512(size_t k, const float *a, size_t slivers, const float *b,
                                                 size_t ldb, float *c, size_t ldc);
void fconv_gemm_ukernel_cols__avx512(size_t k, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                                   size_t mr, size_t nc, size_t nr);
void fconv_gemm_ukernel_ahead__avx512(size_t k, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                                      int store, size_t mr, size_t nr, const float *bias, int relu, const float *next,
                                      size_t next_ld, size_t rows);
void fconv_gemm_ukernel_pack__avx512(size_t k, const float *a, const float *b, size_t ldb, float *packed_b,
                                   float *c, size_t ldc, int store, size_t mr, const float *bias, int relu);
void fconv_gemm_ukernel_wide__avx512(size_t k, const float *a, const float *b, size_t ldb, size_t b_next,
                                   float *packed_b, float *c, size_t ldc, int store, size_t mr, const float *bias,
                                   int relu);
size_t fconv_gemm_mr__avx512(void);
size_t fconv_gemm_nr__avx512(void);
/* Their B packing (kernels/gemm/gemm-pack.c). */
void fconv_gemm_pack_b__scalar(size_t kc, size_t cols, const float *b, size_t ldb, float *dst);
void fconv_gemm_pack_b__avx2(size_t kc, size_t cols, const float *b, size_t ldb, float *dst);
void fconv_gemm_pack_b__avx512(size_t kc, size_t cols, const float *b, size_t ldb, float *dst);
void fconv_im2col_copy_stride2__scalar(float *dst, const float *src, size_t n);
void fconv_im2col_copy_stride2__avx2(float *dst, const float *src, size_t n);
void fconv_im2col_copy_stride2__avx512(float *dst, const float *src, size_t n);


/* The per-ISA transposes (kernels/layout/transpose.c). */
void fconv_transpose__scalar(const float *src, size_t ld_src, size_t rows, size_t cols, float *dst, size_t ld_dst);
void fconv_transpose__avx2(const float *src, size_t ld_src, size_t rows, size_t cols, float *dst, size_t ld_dst);
void fconv_transpose__avx512(const float *src, size_t ld_src, size_t rows, size_t cols, float *dst, size_t ld_dst);
void fconv_transpose_streamed__scalar(const float *src, size_t ld_src, size_t rows, size_t cols, float *dst,
                                      size_t ld_dst);
void fconv_transpose_streamed__avx2(const float *src, size_t ld_src, size_t rows, size_t cols, float *dst,
                                    size_t ld_dst);
void fconv_transpose_streamed__avx512(const float *src, size_t ld_src, size_t rows, size_t cols, float *dst,
                                      size_t ld_dst);

/* The per-ISA fft-rows transforms (kernels/fft/fft-rows.c). */
#define FCONV_DECLARE_FFT_ROWS(isa)                                                                   \
    void fconv_fft_rows_forward_kernel__##isa(size_t n, const float *ext, size_t hop, float *spec); \
    void fconv_fft_rows_inverse_kernel__##isa(size_t n, const float *const *spec, const float *taps, \
                                              size_t kh, size_t hop, float *y, size_t count); \
    void fconv_fft_rows_stream_row_kernel__##isa(float *y, const float *src, size_t n);
FCONV_DECLARE_FFT_ROWS(scalar)
FCONV_DECLARE_FFT_ROWS(avx2)
FCONV_DECLARE_FFT_ROWS(avx512)
#undef FCONV_DECLARE_FFT_ROWS

/* The per-ISA fft-cols transforms (kernels/fft/fft-cols.c). */
#define FCONV_DECLARE_FFT_COLS(isa)                                                                      \
    void fconv_fft_cols_forward_kernel__##isa(size_t n, const float *const *rows, float *spec, size_t ps); \
    void fconv_fft_cols_inverse_kernel__##isa(size_t n, const float *spec, size_t ps, size_t dist,         \
                                              const float *taps, size_t kw, float *y, size_t y_stride,    \
                                              size_t rows, size_t len, int stream);
FCONV_DECLARE_FFT_COLS(scalar)
FCONV_DECLARE_FFT_COLS(avx2)
FCONV_DECLARE_FFT_COLS(avx512)
#undef FCONV_DECLARE_FFT_COLS

#endif
