/*
 * gpu-kernels.h - every GPU kernel of fastconv, written once in plain C with the macros of
 * gpu-macros-opencl.h / gpu-macros-cuda.h (KERNEL, GLOBAL, SHARED_ARRAY, BARRIER, LID, ...).
 * CUDA compiles it through gpu-cuda.cu; OpenCL gets it as a string embedded at build time.
 * Every kernel loops over its groups with stride NGROUPS (grid limits), keeps barriers in
 * group-uniform control flow, and takes sizes as 64-bit integers (no size caps).
 */

/* ---- helpers ---------------------------------------------------------------------------- */

DEVICE_FN i64 fc_mod(i64 i, i64 n) {
    i64 r = i % n;
    return r < 0 ? r + n : r;
}

/* src/core/border.h in device code: the index sample i of a length-n axis reads, -1 for the
 * constant border. border: 0 zero, 1 constant, 2 replicate, 3 reflect, 4 mirror, 5 wrap. */
DEVICE_FN i64 fc_border_index(i64 border, i64 i, i64 n) {
    if (i >= 0 && i < n) return i;
    if (border <= 1) return -1;
    if (border == 2) return i < 0 ? 0 : n - 1;
    if (border == 3) {
        i64 r = fc_mod(i, 2 * n);
        return r < n ? r : 2 * n - 1 - r;
    }
    if (border == 4) {
        if (n == 1) return 0;
        i64 r = fc_mod(i, 2 * n - 2);
        return r < n ? r : 2 * n - 2 - r;
    }
    return fc_mod(i, n);
}

DEVICE_FN i64 fc_max(i64 a, i64 b) { return a > b ? a : b; }
DEVICE_FN i64 fc_min(i64 a, i64 b) { return a < b ? a : b; }

/* conv2d's epilogue on output channel ko: + bias[ko] when there is a bias, then ReLU when
 * asked (NaN < 0 is false: NaN stays NaN). */
DEVICE_FN float fc_bias_relu(float v, GLOBAL const float *RESTRICT bias, i64 ko, i64 relu) {
    if (bias) v += bias[ko];
    if (relu && v < 0.0f) v = 0.0f;
    return v;
}

/* Four multiply-adds of one tap (or input) into row m of a thread's 4 x 4 accumulators
 * (the register-blocked tiled kernels: inputs i0..i3 of the 4 column groups). */
#define FC_FT_FMA4(m, kk)                                                                      \
    do {                                                                                       \
        acc[m][0] += (kk) * i0;                                                                \
        acc[m][1] += (kk) * i1;                                                                \
        acc[m][2] += (kk) * i2;                                                                \
        acc[m][3] += (kk) * i3;                                                                \
    } while (0)

/* ---- conv1d: y[j] = sum_t kk[t] x[j + off - t], kk = k (convolve) or k reversed ---------- */
/* One group of LSIZE(0) threads makes LSIZE(0) consecutive outputs. */

/* Variant 1: one thread per output, mask in global memory; any kernel length. */
KERNEL void conv1d_naive(GLOBAL const float *RESTRICT x, GLOBAL const float *RESTRICT k,
                         GLOBAL float *RESTRICT y, i64 n, i64 m, i64 out_n, i64 off,
                         i64 correlate) {
    i64 T = LSIZE(0);
    for (i64 g = GROUP(0); g * T < out_n; g += NGROUPS(0)) {
        i64 j = g * T + LID(0);
        if (j >= out_n) continue;
        i64 c = j + off; /* x index of tap 0 */
        i64 t0 = fc_max(0, c - n + 1), t1 = fc_min(m - 1, c);
        float acc = 0.0f;
        for (i64 t = t0; t <= t1; t++) acc += k[correlate ? m - 1 - t : t] * x[c - t];
        y[j] = acc;
    }
}

/* Variant 2: as naive, the mask in constant memory (broadcast to the warp: every thread
 * reads the same tap at the same time). m <= FCONV_GPU_CONSTANT_FLOATS. */
KERNEL void conv1d_constant(GLOBAL const float *RESTRICT x, GLOBAL float *RESTRICT y, i64 n,
                            i64 m, i64 out_n, i64 off, i64 correlate CMASK_PARAM) {
    i64 T = LSIZE(0);
    for (i64 g = GROUP(0); g * T < out_n; g += NGROUPS(0)) {
        i64 j = g * T + LID(0);
        if (j >= out_n) continue;
        i64 c = j + off;
        i64 t0 = fc_max(0, c - n + 1), t1 = fc_min(m - 1, c);
        float acc = 0.0f;
        for (i64 t = t0; t <= t1; t++) acc += CMASK(correlate ? m - 1 - t : t) * x[c - t];
        y[j] = acc;
    }
}

/* Variant 3, register-blocked like filter2d_tiled_halo: a block of 256 threads makes
 * FC_T1_OUT consecutive outputs, each thread 4 consecutive ones (r) in each of 4 groups 1024
 * apart (c), so one shared load of an input feeds 4 FMAs and one broadcast tap load feeds 4.
 * The block's FC_T1_OUT + m - 1 inputs sit in shared memory phase-major (input e at
 * (e mod 4) * ps + e / 4): a thread's 4 consecutive outputs are then 4 lanes apart in no
 * bank, and every warp-wide load reads 32 consecutive floats of one phase. The taps follow,
 * ks[s] = the tap of tile offset s. Input offset e serves row r with tap e - r: for the
 * middle e all four rows take it, at both ends a warp-uniform test skips the rest. */
#define FC_T1_OUT (256 * 16)
KERNEL void conv1d_tiled_halo(GLOBAL const float *RESTRICT x, GLOBAL const float *RESTRICT k,
                              GLOBAL float *RESTRICT y, i64 n, i64 m, i64 out_n, i64 off,
                              i64 correlate, i64 ps DYN_LOCAL_PARAM) {
    DYN_LOCAL_DECL
    int tid = (int)LID(0), mm = (int)m, p = (int)ps, len = FC_T1_OUT + (int)m - 1;
    SHARED_PTR float *tile = dyn_local;
    SHARED_PTR float *mask = dyn_local + 4 * p;
    for (int e = tid; e < mm; e += 256) mask[e] = correlate ? k[e] : k[mm - 1 - e];
    for (i64 g = GROUP(0); g * FC_T1_OUT < out_n; g += NGROUPS(0)) {
        i64 base = g * FC_T1_OUT + off - (m - 1); /* x index of tile input 0 */
        for (int e = tid; e < len; e += 256) {
            i64 xi = base + e;
            tile[(e & 3) * p + (e >> 2)] = (xi >= 0 && xi < n) ? x[xi] : 0.0f;
        }
        BARRIER();
        float acc[4][4];
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) acc[r][c] = 0.0f;
        for (int e = 0; e < mm + 3; e++) {
            SHARED_PTR const float *in = tile + (e & 3) * p + (e >> 2) + tid;
            float i0 = in[0], i1 = in[256], i2 = in[512], i3 = in[768];
            if (e >= 3 && e < mm) {
                for (int r = 0; r < 4; r++) FC_FT_FMA4(r, mask[e - r]);
            } else {
                for (int r = 0; r < 4; r++)
                    if (e - r >= 0 && e - r < mm) FC_FT_FMA4(r, mask[e - r]);
            }
        }
        for (int c = 0; c < 4; c++)
            for (int r = 0; r < 4; r++) {
                i64 j = g * FC_T1_OUT + 4 * (tid + 256 * c) + r;
                if (j < out_n) y[j] = acc[r][c];
            }
        BARRIER(); /* the tile is reused by the next group of this block */
    }
}

/* Variant 4: shared memory holds only the block's own T inputs (centred on its outputs);
 * taps that fall outside read global memory, relying on the cache for the halo. */
KERNEL void conv1d_tiled_global(GLOBAL const float *RESTRICT x, GLOBAL float *RESTRICT y, i64 n,
                                i64 m, i64 out_n, i64 off, i64 correlate DYN_LOCAL_PARAM
                                CMASK_PARAM) {
    DYN_LOCAL_DECL
    i64 T = LSIZE(0), tid = LID(0);
    for (i64 g = GROUP(0); g * T < out_n; g += NGROUPS(0)) {
        i64 j0 = g * T;
        i64 b0 = j0 + off - (m - 1) / 2; /* x index of tile[0] */
        i64 xi = b0 + tid;
        dyn_local[tid] = (xi >= 0 && xi < n) ? x[xi] : 0.0f;
        BARRIER();
        i64 j = j0 + tid;
        if (j < out_n) {
            i64 c = j + off;
            float acc = 0.0f;
            for (i64 t = 0; t < m; t++) {
                i64 idx = c - t;
                float v;
                if (idx >= b0 && idx < b0 + T) v = dyn_local[idx - b0];
                else v = (idx >= 0 && idx < n) ? x[idx] : 0.0f;
                acc += CMASK(correlate ? m - 1 - t : t) * v;
            }
            y[j] = acc;
        }
        BARRIER();
    }
}

/* ---- filter2d: y[i][j][ch] = sum_{a,b} kk[a][b] xe[i + offh - a][j + offw - b][ch] ------- */
/* x[H][W][CH] interleaved; xe extends x by the border rule (value bval for constant/zero).
 * Launch: dim 0 over output columns, dim 1 over output rows, dim 2 over channels. */

DEVICE_FN float fc_sample(GLOBAL const float *x, i64 r, i64 c, i64 ch, i64 H, i64 W, i64 CH,
                          i64 border, float bval) {
    i64 rr = fc_border_index(border, r, H), cc = fc_border_index(border, c, W);
    if (rr < 0 || cc < 0) return bval;
    return x[(rr * W + cc) * CH + ch];
}

/* Generic: one thread per output, mask in global memory; any kernel size. */
KERNEL void filter2d_naive(GLOBAL const float *RESTRICT x, GLOBAL const float *RESTRICT k,
                           GLOBAL float *RESTRICT y, i64 H, i64 W, i64 CH, i64 KH, i64 KW,
                           i64 OH, i64 OW, i64 offh, i64 offw, i64 border, float bval,
                           i64 correlate) {
    i64 TX = LSIZE(0), TY = LSIZE(1);
    for (i64 ch = GROUP(2); ch < CH; ch += NGROUPS(2))
        for (i64 gy = GROUP(1); gy * TY < OH; gy += NGROUPS(1))
            for (i64 gx = GROUP(0); gx * TX < OW; gx += NGROUPS(0)) {
                i64 i = gy * TY + LID(1), j = gx * TX + LID(0);
                if (i >= OH || j >= OW) continue;
                float acc = 0.0f;
                for (i64 a = 0; a < KH; a++)
                    for (i64 b = 0; b < KW; b++) {
                        i64 kidx = correlate ? (KH - 1 - a) * KW + (KW - 1 - b) : a * KW + b;
                        acc += k[kidx] * fc_sample(x, i + offh - a, j + offw - b, ch, H, W, CH,
                                                   border, bval);
                    }
                y[(i * OW + j) * CH + ch] = acc;
            }
}

/* Mask in constant memory (KH * KW <= FCONV_GPU_CONSTANT_FLOATS). */
KERNEL void filter2d_constant(GLOBAL const float *RESTRICT x, GLOBAL float *RESTRICT y, i64 H,
                              i64 W, i64 CH, i64 KH, i64 KW, i64 OH, i64 OW, i64 offh, i64 offw,
                              i64 border, float bval, i64 correlate CMASK_PARAM) {
    i64 TX = LSIZE(0), TY = LSIZE(1);
    for (i64 ch = GROUP(2); ch < CH; ch += NGROUPS(2))
        for (i64 gy = GROUP(1); gy * TY < OH; gy += NGROUPS(1))
            for (i64 gx = GROUP(0); gx * TX < OW; gx += NGROUPS(0)) {
                i64 i = gy * TY + LID(1), j = gx * TX + LID(0);
                if (i >= OH || j >= OW) continue;
                float acc = 0.0f;
                for (i64 a = 0; a < KH; a++)
                    for (i64 b = 0; b < KW; b++) {
                        i64 kidx = correlate ? (KH - 1 - a) * KW + (KW - 1 - b) : a * KW + b;
                        acc += CMASK(kidx) * fc_sample(x, i + offh - a, j + offw - b, ch, H, W,
                                                       CH, border, bval);
                    }
                y[(i * OW + j) * CH + ch] = acc;
            }
}

/* Shared-memory tile with halo, register-blocked. A block of 16 x 16 threads makes a
 * FC_FT_TILE x FC_FT_TILE output tile; each thread 4 consecutive rows x 4 columns 16 apart,
 * so one shared load of an input feeds 4 FMAs and one (broadcast) load of a tap feeds 4:
 * 0.5 loads per FMA instead of 2, which is what lets large masks approach the FMA rate
 * (shared memory serves a quarter of the FMA rate). The tile, (64 + KH - 1) rows `ts`
 * floats apart, holds border-remapped samples; the host picks ts = 4 (mod 8) so the two
 * half-warps (rows 4 apart) read disjoint banks. The mask follows the tile, flipped for
 * convolution. Tile row t serves a thread's row m with tap row t - m: for the middle t all
 * four rows take it, at the first and last three some skip it (a warp-uniform test; no zero
 * taps, which would turn a neighbour's inf into NaN). Indices inside the block are 32-bit. */
#define FC_FT_TILE 64
KERNEL void filter2d_tiled_halo(GLOBAL const float *RESTRICT x, GLOBAL const float *RESTRICT k,
                                GLOBAL float *RESTRICT y, i64 H, i64 W, i64 CH, i64 KH, i64 KW,
                                i64 OH, i64 OW, i64 offh, i64 offw, i64 border, float bval,
                                i64 correlate, i64 ts DYN_LOCAL_PARAM) {
    DYN_LOCAL_DECL
    int tx = (int)LID(0), ty = (int)LID(1), tid = ty * 16 + tx;
    int kh = (int)KH, kw = (int)KW, s = (int)ts;
    int rows = FC_FT_TILE + kh - 1, cols = FC_FT_TILE + kw - 1;
    SHARED_PTR float *tile = dyn_local;
    SHARED_PTR float *mask = dyn_local + rows * s; /* kh x kw, tap of tile offset (u, v) */
    for (int e = tid; e < kh * kw; e += 256) {
        int u = e / kw, v = e - u * kw;
        mask[e] = correlate ? k[e] : k[(kh - 1 - u) * kw + (kw - 1 - v)];
    }
    for (i64 ch = GROUP(2); ch < CH; ch += NGROUPS(2))
        for (i64 gy = GROUP(1); gy * FC_FT_TILE < OH; gy += NGROUPS(1))
            for (i64 gx = GROUP(0); gx * FC_FT_TILE < OW; gx += NGROUPS(0)) {
                /* tile[u][v] = x[r0 + u][c0 + v], remapped at the borders */
                i64 r0 = gy * FC_FT_TILE + offh - (KH - 1), c0 = gx * FC_FT_TILE + offw - (KW - 1);
                int inside = r0 >= 0 && c0 >= 0 && r0 + rows <= H && c0 + cols <= W;
                for (int u = ty; u < rows; u += 16) {
                    GLOBAL const float *xr = x + ((r0 + u) * W + c0) * CH + ch;
                    for (int v = tx; v < cols; v += 16)
                        tile[u * s + v] = inside ? xr[(i64)v * CH]
                                                 : fc_sample(x, r0 + u, c0 + v, ch, H, W, CH,
                                                             border, bval);
                }
                BARRIER();
                float acc[4][4];
                for (int m = 0; m < 4; m++)
                    for (int c = 0; c < 4; c++) acc[m][c] = 0.0f;
                for (int t = 0; t < kh + 3; t++) {
                    SHARED_PTR const float *in = tile + (4 * ty + t) * s + tx;
                    if (t >= 3 && t < kh) {
                        SHARED_PTR const float *tap = mask + t * kw; /* row m: tap - m kw */
                        for (int v = 0; v < kw; v++) {
                            float i0 = in[v], i1 = in[v + 16], i2 = in[v + 32], i3 = in[v + 48];
                            for (int m = 0; m < 4; m++) FC_FT_FMA4(m, tap[v - m * kw]);
                        }
                    } else {
                        for (int v = 0; v < kw; v++) {
                            float i0 = in[v], i1 = in[v + 16], i2 = in[v + 32], i3 = in[v + 48];
                            for (int m = 0; m < 4; m++)
                                if (t - m >= 0 && t - m < kh) FC_FT_FMA4(m, mask[(t - m) * kw + v]);
                        }
                    }
                }
                for (int m = 0; m < 4; m++) {
                    i64 i = gy * FC_FT_TILE + 4 * ty + m;
                    for (int c = 0; c < 4; c++) {
                        i64 j = gx * FC_FT_TILE + tx + 16 * c;
                        if (i < OH && j < OW) y[(i * OW + j) * CH + ch] = acc[m][c];
                    }
                }
                BARRIER();
            }
}

/* ---- conv2d (torch.nn.functional.conv2d: cross-correlation, NCHW) ---------------------- */

/* Generic: one thread per output element y[b][ko][p][q]; any shape. */
KERNEL void conv2d_naive(GLOBAL const float *RESTRICT x, GLOBAL const float *RESTRICT w,
                         GLOBAL const float *RESTRICT bias, GLOBAL float *RESTRICT y, i64 N,
                         i64 C, i64 H, i64 W, i64 K, i64 R, i64 S, i64 P, i64 Q, i64 sh, i64 sw,
                         i64 pt, i64 pl, i64 dh, i64 dw, i64 G, i64 relu) {
    i64 T = LSIZE(0), total = N * K * P * Q;
    i64 Cg = C / G, Kg = K / G;
    for (i64 g = GROUP(0); g * T < total; g += NGROUPS(0)) {
        i64 e = g * T + LID(0);
        if (e >= total) continue;
        i64 q = e % Q, p = (e / Q) % P, ko = (e / (P * Q)) % K, b = e / (P * Q * K);
        i64 cbase = (ko / Kg) * Cg;
        float acc = 0.0f;
        for (i64 c = 0; c < Cg; c++)
            for (i64 r = 0; r < R; r++) {
                i64 hi = p * sh - pt + r * dh;
                if (hi < 0 || hi >= H) continue;
                for (i64 s = 0; s < S; s++) {
                    i64 wi = q * sw - pl + s * dw;
                    if (wi < 0 || wi >= W) continue;
                    acc += w[((ko * Cg + c) * R + r) * S + s] *
                           x[((b * C + cbase + c) * H + hi) * W + wi];
                }
            }
        y[e] = fc_bias_relu(acc, bias, ko, relu);
    }
}

/* ---- conv2d: Winograd F(2x2,3x3) and F(4x4,3x3) through the GEMM kernels ------------------
 * (gpu-winograd-2x2, gpu-winograd-4x4.) The matrices of src/algo/winograd-transforms.c,
 * F(2,3) on the points 0, +-1, inf and F(4,3) on 0, +-1, +-2, inf (Lavin & Gray), written
 * out below as straight-line code. A tile is m x m outputs from an alpha x alpha input patch
 * (alpha = m + 2), e = alpha xi + nu indexes its E = alpha^2 transformed values. Three
 * steps per chunk of ntc output tiles (tile t0 + t = (image, th, tw), TH x TW per image):
 *   1. V[e][c][t] = (B^T d B)[e] of input channel c's patch of tile t;
 *   2. M[e][ko][t] = sum_c U[e][ko][c] V[e][grp c][t]: E G GEMMs (Kg x Cg times Cg x ntc)
 *      by conv2d_gemm_* with the groups numbered e G + grp;
 *   3. y = A^T M A per (ko, tile), bias and ReLU, its valid part written.
 * The products of step 2 are E per m^2 outputs against 9 m^2 for the direct sum (2.25x
 * fewer for F(2x2), 4x for F(4x4)), at the price of V and M in memory (E / m^2 times the
 * input and the output per chunk). */

/* B^T d for one column d[0..alpha) of a patch (stride ds), into r[0..alpha). */
DEVICE_FN void fc_wino_bt(const int m, const float *d, int ds, float *r) {
    if (m == 2) {
        r[0] = d[0] - d[2 * ds];
        r[1] = d[ds] + d[2 * ds];
        r[2] = d[2 * ds] - d[ds];
        r[3] = d[ds] - d[3 * ds];
    } else {
        float d0 = d[0], d1 = d[ds], d2 = d[2 * ds], d3 = d[3 * ds], d4 = d[4 * ds], d5 = d[5 * ds];
        r[0] = 4.0f * d0 - 5.0f * d2 + d4;
        r[1] = d3 + d4 - 4.0f * (d1 + d2);
        r[2] = d4 - d3 + 4.0f * (d1 - d2);
        r[3] = d4 - d2 + 2.0f * (d3 - d1);
        r[4] = d4 - d2 + 2.0f * (d1 - d3);
        r[5] = 4.0f * d1 - 5.0f * d3 + d5;
    }
}

/* A^T v for one column v[0..alpha) (stride vs), into o[0..m). */
DEVICE_FN void fc_wino_at(const int m, const float *v, int vs, float *o) {
    if (m == 2) {
        o[0] = v[0] + v[vs] + v[2 * vs];
        o[1] = v[vs] - v[2 * vs] - v[3 * vs];
    } else {
        float v0 = v[0], v1 = v[vs], v2 = v[2 * vs], v3 = v[3 * vs], v4 = v[4 * vs], v5 = v[5 * vs];
        float sp = v1 + v2, sm = v1 - v2, tp = v3 + v4, tm = v3 - v4;
        o[0] = v0 + sp + tp;
        o[1] = sm + 2.0f * tm;
        o[2] = sp + 4.0f * tp;
        o[3] = sm + 8.0f * tm + v5;
    }
}

/* G g for one column (g0, g1, g2) of a 3 x 3 filter, into u[0..alpha). */
DEVICE_FN void fc_wino_g(const int m, float g0, float g1, float g2, float *u) {
    if (m == 2) {
        u[0] = g0;
        u[1] = 0.5f * (g0 + g1 + g2);
        u[2] = 0.5f * (g0 - g1 + g2);
        u[3] = g2;
    } else {
        u[0] = 0.25f * g0;
        u[1] = -(g0 + g1 + g2) / 6.0f;
        u[2] = -(g0 - g1 + g2) / 6.0f;
        u[3] = g0 / 24.0f + g1 / 12.0f + g2 / 6.0f;
        u[4] = g0 / 24.0f - g1 / 12.0f + g2 / 6.0f;
        u[5] = g2;
    }
}

/* Tile tg of the problem as (image, tile row, tile column), TH x TW tiles per image. */
DEVICE_FN void fc_wino_tile(i64 tg, i64 TH, i64 TW, i64 *img, i64 *th, i64 *tw) {
    i64 r = tg % (TH * TW);
    *img = tg / (TH * TW);
    *th = r / TW;
    *tw = r - *th * TW;
}

/* U[e][ko][c] = (G g G^T)[e] for every (output channel ko, input channel c of its group):
 * one thread each. */
DEVICE_FN void fc_wino_filter(const int m, GLOBAL const float *RESTRICT w, GLOBAL float *RESTRICT u,
                              i64 K, i64 Cg) {
    const int alpha = m + 2;
    i64 T = LSIZE(0), total = K * Cg;
    for (i64 g = GROUP(0); g * T < total; g += NGROUPS(0)) {
        i64 e = g * T + LID(0);
        if (e >= total) continue;
        GLOBAL const float *gw = w + e * 9;
        float t[3][6], col[6]; /* t = (G g)^T: column b of G g is G times filter column b */
        for (int b = 0; b < 3; b++) fc_wino_g(m, gw[b], gw[3 + b], gw[6 + b], t[b]);
        for (int i = 0; i < alpha; i++) { /* row i of (G g) G^T = G times row i of G g */
            fc_wino_g(m, t[0][i], t[1][i], t[2][i], col);
            for (int j = 0; j < alpha; j++) u[(i * alpha + j) * total + e] = col[j];
        }
    }
}

/* Step 1 (V at v + v_off): one thread per (input channel, tile of the chunk), consecutive
 * threads on consecutive tiles (coalesced stores; neighbouring patches overlap in cache).
 * Zeros outside the image: padding and the partial tiles at the bottom and right. */
DEVICE_FN void fc_wino_input(const int m, GLOBAL const float *RESTRICT x, GLOBAL float *RESTRICT v,
                             i64 v_off, i64 C, i64 H, i64 W, i64 pt, i64 pl, i64 TH, i64 TW,
                             i64 t0, i64 ntc) {
    const int alpha = m + 2;
    i64 T = LSIZE(0), total = C * ntc;
    for (i64 g = GROUP(0); g * T < total; g += NGROUPS(0)) {
        i64 idx = g * T + LID(0);
        if (idx >= total) continue;
        i64 c = idx / ntc, t = idx - c * ntc, img, th, tw;
        fc_wino_tile(t0 + t, TH, TW, &img, &th, &tw);
        i64 h0 = m * th - pt, w0 = m * tw - pl;
        GLOBAL const float *xc = x + (img * C + c) * H * W;
        float d[6][6], b[6][6], row[6];
        for (int a = 0; a < alpha; a++)
            for (int s = 0; s < alpha; s++) {
                i64 hi = h0 + a, wi = w0 + s;
                d[a][s] = (hi >= 0 && hi < H && wi >= 0 && wi < W) ? xc[hi * W + wi] : 0.0f;
            }
        for (int s = 0; s < alpha; s++) { /* column s of B^T d */
            float col[6];
            fc_wino_bt(m, &d[0][s], 6, col);
            for (int a = 0; a < alpha; a++) b[a][s] = col[a];
        }
        GLOBAL float *out = v + v_off + c * ntc + t;
        for (int a = 0; a < alpha; a++) { /* row a of (B^T d) B = B^T times row a of B^T d */
            fc_wino_bt(m, b[a], 1, row);
            for (int s = 0; s < alpha; s++) out[(a * alpha + s) * total] = row[s];
        }
    }
}

/* Step 3: one thread per (output channel, tile of the chunk). */
DEVICE_FN void fc_wino_output(const int m, GLOBAL const float *RESTRICT mm,
                              GLOBAL const float *RESTRICT bias, GLOBAL float *RESTRICT y, i64 K,
                              i64 P, i64 Q, i64 TH, i64 TW, i64 t0, i64 ntc, i64 relu) {
    const int alpha = m + 2;
    i64 T = LSIZE(0), total = K * ntc;
    for (i64 g = GROUP(0); g * T < total; g += NGROUPS(0)) {
        i64 idx = g * T + LID(0);
        if (idx >= total) continue;
        i64 ko = idx / ntc, t = idx - ko * ntc, img, th, tw;
        fc_wino_tile(t0 + t, TH, TW, &img, &th, &tw);
        float in[36], o[4][6], res[4];
        for (int e = 0; e < alpha * alpha; e++) in[e] = mm[e * total + idx];
        for (int s = 0; s < alpha; s++) { /* column s of A^T M */
            float col[4];
            fc_wino_at(m, &in[s], alpha, col);
            for (int a = 0; a < m; a++) o[a][s] = col[a];
        }
        float bv = bias ? bias[ko] : 0.0f;
        i64 oh = m * th, ow = m * tw;
        GLOBAL float *out = y + ((img * K + ko) * P + oh) * Q + ow;
        for (int a = 0; a < m; a++) { /* row a of (A^T M) A */
            fc_wino_at(m, o[a], 1, res);
            for (int s = 0; s < m; s++) {
                if (oh + a >= P || ow + s >= Q) continue;
                float val = res[s] + bv;
                if (relu && val < 0.0f) val = 0.0f; /* NaN < 0 is false: NaN stays NaN */
                out[a * Q + s] = val;
            }
        }
    }
}

#define WINO_KERNELS(M)                                                                        \
    KERNEL void conv2d_winograd_##M##x##M##_filter(GLOBAL const float *RESTRICT w,            \
                                                   GLOBAL float *RESTRICT u, i64 K, i64 Cg) {  \
        fc_wino_filter(M, w, u, K, Cg);                                                        \
    }                                                                                          \
    KERNEL void conv2d_winograd_##M##x##M##_input(                                             \
        GLOBAL const float *RESTRICT x, GLOBAL float *RESTRICT v, i64 v_off, i64 C, i64 H,     \
        i64 W, i64 pt, i64 pl, i64 TH, i64 TW, i64 t0, i64 ntc) {                              \
        fc_wino_input(M, x, v, v_off, C, H, W, pt, pl, TH, TW, t0, ntc);                       \
    }                                                                                          \
    KERNEL void conv2d_winograd_##M##x##M##_output(                                            \
        GLOBAL const float *RESTRICT m, GLOBAL const float *RESTRICT bias,                     \
        GLOBAL float *RESTRICT y, i64 K, i64 P, i64 Q, i64 TH, i64 TW, i64 t0, i64 ntc,        \
        i64 relu) {                                                                            \
        fc_wino_output(M, m, bias, y, K, P, Q, TH, TW, t0, ntc, relu);                         \
    }
WINO_KERNELS(2)
WINO_KERNELS(4)

/* ---- conv2d: im2col into a device buffer + tiled GEMM (gpu-im2col-gemm) -----------------
 * The buffer holds gcount groups x KD rows (kd = (c, r, s)) x ncc columns (n = n0 + nn,
 * n = (b, p, q)); the host sizes it at plan time and walks the groups and columns in
 * chunks of that size. One thread per column (its divisions done once) walks `rows`
 * consecutive rows with counters for (c, r, s): a thread per element spent six 64-bit
 * divisions on each. Grid: x over columns (consecutive threads write consecutive columns),
 * y over blocks of rows x groups of the chunk. */
KERNEL void conv2d_im2col(GLOBAL const float *RESTRICT x, GLOBAL float *RESTRICT cols, i64 C,
                          i64 H, i64 W, i64 R, i64 S, i64 P, i64 Q, i64 sh, i64 sw, i64 pt,
                          i64 pl, i64 dh, i64 dw, i64 G, i64 g0, i64 gcount, i64 n0, i64 ncc,
                          i64 rows) {
    i64 T = LSIZE(0), Cg = C / G, RS = R * S, KD = Cg * RS, PQ = P * Q;
    i64 rblocks = (KD + rows - 1) / rows;
    for (i64 gy = GROUP(1); gy < gcount * rblocks; gy += NGROUPS(1))
        for (i64 gx = GROUP(0); gx * T < ncc; gx += NGROUPS(0)) {
            i64 nn = gx * T + LID(0);
            if (nn >= ncc) continue;
            i64 gl = gy / rblocks, kd0 = (gy - gl * rblocks) * rows;
            i64 kd1 = KD < kd0 + rows ? KD : kd0 + rows;
            i64 nidx = n0 + nn, b = nidx / PQ, pq = nidx - b * PQ, p = pq / Q, q = pq - p * Q;
            i64 c = kd0 / RS, rs = kd0 - c * RS, r = rs / S, s = rs - r * S;
            i64 h0 = p * sh - pt, w0 = q * sw - pl;
            GLOBAL const float *xg = x + (b * C + (g0 + gl) * Cg) * H * W;
            GLOBAL float *out = cols + (gl * KD + kd0) * ncc + nn;
            for (i64 kd = kd0; kd < kd1; kd++, out += ncc) {
                i64 hi = h0 + r * dh, wi = w0 + s * dw;
                *out = (hi >= 0 && hi < H && wi >= 0 && wi < W) ? xg[(c * H + hi) * W + wi] : 0.0f;
                if (++s == S) {
                    s = 0;
                    if (++r == R) {
                        r = 0;
                        c++;
                    }
                }
            }
        }
}

/* ---- conv2d as a GEMM per group (gpu-implicit-gemm, gpu-im2col-gemm) -----------------------
 * Y[m][n] = sum_kd W[m][kd] B[kd][n]: m an output channel of the group, n = (b, p, q) a
 * column, kd = (c, r, s). B is either
 *   - gathered from x on the fly (gpu-implicit-gemm; stride, padding, dilation), or
 *   - a matrix in memory (gpu-im2col-gemm's column buffer, or x itself for a 1x1 stride-1
 *     unpadded layer: B[c][n] = x[b][c][pq] for n = (b, pq)): element (kd, n) at
 *     b_base + kd ldb + ((b_col0 + n) / b_cols) b_imgstride + (b_col0 + n) % b_cols, b_base
 *     being b_off + (group of the chunk) b_gstride.
 * The chunk is groups g0 .. g0 + gcount and columns n0 .. n0 + ncc (the whole problem but for
 * a column buffer walked in chunks).
 *
 * Block tiles of BM = 8 TY rows x BN = 8 TX columns, TX x TY threads, each an 8 x 8 register
 * tile at rows 4 ty + i and 4 TY + 4 ty + i, columns 4 tx + j and 4 TX + 4 tx + j: a k step
 * reads four 16-byte words of shared memory for 64 multiply-adds, and a warp's reads are few
 * distinct words (broadcasts). Three shapes: 64 x 64 (64 threads, for small layers: more
 * blocks), 64 x 128 (128 threads: 64-channel layers with many columns) and 128 x 128 (256
 * threads: half the loads per multiply-add of 64 x 64). K goes in steps of 16; each thread
 * loads the next step into registers while it multiplies the current one. Loads are
 * coalesced: W's tile as 16 consecutive kd x 2 rows per warp (each thread at depth a_kk of
 * rows a_m + (T / 16) l), B's as one column per thread, 128 / TY consecutive depths (a
 * gathered column's image and position divided out once per tile, its (c, r, s) once per
 * step, then walked with counters). As is W's tile transposed, rows BM + 4 floats apart
 * (16-byte aligned; a warp's stores, 16 kd x 2 rows, meet at most 2 to a bank).
 *
 * Split-K: where the chunk's tiles are too few to fill the device, the depth is cut into
 * `splits` ranges of kchunk (grid z = split x group); each writes its raw sums to
 * part[part_off + ((split gcount + gl) Kg + m) ncc + n] and conv2d_gemm_reduce adds them in
 * split order (deterministic), then bias and ReLU. With one split the epilogue does that. */
#define GM_BK 16

/* The arguments every GEMM kernel takes (those of the other B form are ignored). */
#define GM_PARAMS                                                                              \
    GLOBAL const float *RESTRICT bsrc, GLOBAL const float *RESTRICT w,                         \
        GLOBAL const float *RESTRICT bias, GLOBAL float *RESTRICT y, GLOBAL float *RESTRICT part, \
        i64 part_off, i64 K, i64 KD, i64 PQ, i64 G, i64 g0, i64 gcount, i64 n0, i64 ncc,        \
        i64 b_off, i64 b_gstride, i64 ldb, i64 b_col0, i64 b_cols, i64 b_imgstride, i64 C,      \
        i64 H, i64 W, i64 R, i64 S, i64 Q, i64 sh, i64 sw, i64 pt, i64 pl, i64 dh, i64 dw,      \
        i64 splits, i64 kchunk, i64 relu
#define GM_ARGS                                                                                \
    bsrc, w, bias, y, part, part_off, K, KD, PQ, G, g0, gcount, n0, ncc, b_off, b_gstride, ldb, \
        b_col0, b_cols, b_imgstride, C, H, W, R, S, Q, sh, sw, pt, pl, dh, dw, splits, kchunk, relu

/* W's part of the next K step into ra: rows a_m + astep l (the first na of them exist) at
 * the depth a points to (which exists when a_ok). Sizes inside the loop are 32-bit (the host
 * checks they fit): 64-bit compares and offsets per load cost ~70 registers. */
DEVICE_FN void gm_load_a(const int na_max, const int astep, float ra[16],
                         GLOBAL const float *RESTRICT a, int KD, int na, int a_ok) {
    UNROLL for (int l = 0; l < na_max; l++, a += astep * KD) ra[l] = (a_ok && l < na) ? *a : 0.0f;
}

/* B's part of the next K step from a matrix: the thread's column from where b points, its
 * first `left` depths (zeros past them, or everywhere unless b_valid). */
DEVICE_FN void gm_load_b_matrix(const int nb, float rb[16], GLOBAL const float *RESTRICT b,
                                int ldb, int b_valid, int left) {
    UNROLL for (int l = 0; l < nb; l++, b += ldb) rb[l] = (b_valid && l < left) ? *b : 0.0f;
}

/* B's part of the next K step gathered from x: the thread's column, whose image's group
 * channels start at xg and whose window's top-left input is (h0, w0), at depths kd .. kd +
 * nb - 1 = (c, r, s), the first `left` of them (zeros past them, outside the image, or
 * everywhere unless b_valid); (c, r, s) divided out once, then walked with counters. */
DEVICE_FN void gm_load_b_gather(const int nb, float rb[16], GLOBAL const float *RESTRICT xg,
                                int b_valid, int h0, int w0, int H, int W, int R, int S, int dh,
                                int dw, int kd, int left) {
    int RS = R * S, c = kd / RS, rs = kd - c * RS, r = rs / S, s = rs - r * S;
    int hi = h0 + r * dh, wi = w0 + s * dw;
    GLOBAL const float *xc = xg + (i64)c * H * W;
    UNROLL for (int l = 0; l < nb; l++) {
        int ok = b_valid && l < left && (unsigned)hi < (unsigned)H && (unsigned)wi < (unsigned)W;
        rb[l] = ok ? xc[hi * W + wi] : 0.0f;
        wi += dw;
        if (++s == S) {
            s = 0;
            wi = w0;
            hi += dh;
            if (++r == R) {
                r = 0;
                hi = h0;
                xc += (i64)H * W;
            }
        }
    }
}

DEVICE_FN void gm_conv2d_tiles(const int TX, const int TY, const int gather,
                               SHARED_PTR float4 *As4, SHARED_PTR float4 *Bs4, GM_PARAMS) {
    const int T = TX * TY, BM = 8 * TY, BN = 8 * TX, AS = BM + 4;
    const int NA = 128 / TX, ASTEP = T / 16, NB = 128 / TY;
    SHARED_PTR float *As = (SHARED_PTR float *)As4;
    SHARED_PTR float *Bs = (SHARED_PTR float *)Bs4;
    i64 Kg = K / G, Cg = C / G;
    int t = (int)LID(0), tx = t % TX, ty = t / TX, a_kk = t % 16, a_m = t / 16;
    int b_n = t % BN, b_k = (t / BN) * NB;
    int kd32 = (int)KD, ldb32 = (int)ldb, H32 = (int)H, W32 = (int)W, R32 = (int)R, S32 = (int)S;
    int dh32 = (int)dh, dw32 = (int)dw;
    for (i64 z = GROUP(2); z < gcount * splits; z += NGROUPS(2))
        for (i64 gm = GROUP(1); gm * BM < Kg; gm += NGROUPS(1))
            for (i64 gn = GROUP(0); gn * BN < ncc; gn += NGROUPS(0)) {
                i64 gl = z % gcount, split = z / gcount, grp = g0 + gl;
                i64 m0 = gm * BM, nb = gn * BN, mrows = Kg - m0;
                int kbeg = (int)(split * kchunk);
                int kend = (int)(KD < kbeg + kchunk ? KD : kbeg + kchunk);
                /* Rows of this thread's A loads that exist. */
                int na = mrows >= BM ? NA : (int)((mrows - a_m + ASTEP - 1) / ASTEP);
                GLOBAL const float *a = w + (grp * Kg + m0 + a_m) * KD + a_kk + kbeg;
                int b_valid = nb + b_n < ncc;
                /* The thread's column of B: where it starts at depth kbeg + b_k (a matrix), or
                 * its image and window (gathered); one division each per tile. */
                GLOBAL const float *b = bsrc;
                int h0 = 0, w0 = 0;
                if (gather) {
                    i64 nidx = n0 + nb + b_n, img = nidx / PQ, pq = nidx - img * PQ, p = pq / Q;
                    h0 = (int)(p * sh - pt);
                    w0 = (int)((pq - p * Q) * sw - pl);
                    if (b_valid) b = bsrc + (img * C + grp * Cg) * H * W;
                } else {
                    i64 cn = b_col0 + nb + b_n;
                    b = bsrc + b_off + gl * b_gstride + (cn / b_cols) * b_imgstride + cn % b_cols +
                        (i64)(kbeg + b_k) * ldb;
                }
                float acc[8][8], ra[16], rb[16];
                UNROLL for (int i = 0; i < 8; i++)
                    UNROLL for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;
                /* The first step; each later one is loaded during the one before. */
                gm_load_a(NA, ASTEP, ra, a, kd32, na, a_kk < kend - kbeg);
                if (gather)
                    gm_load_b_gather(NB, rb, b, b_valid, h0, w0, H32, W32, R32, S32, dh32, dw32,
                                     kbeg + b_k, kend - kbeg - b_k);
                else
                    gm_load_b_matrix(NB, rb, b, ldb32, b_valid, kend - kbeg - b_k);
                for (int k0 = kbeg; k0 < kend; k0 += GM_BK) {
                    UNROLL for (int l = 0; l < NA; l++) As[a_kk * AS + a_m + ASTEP * l] = ra[l];
                    UNROLL for (int l = 0; l < NB; l++) Bs[(b_k + l) * BN + b_n] = rb[l];
                    BARRIER();
                    int k1 = k0 + GM_BK;
                    if (k1 < kend) {
                        a += GM_BK;
                        gm_load_a(NA, ASTEP, ra, a, kd32, na, a_kk < kend - k1);
                        if (gather)
                            gm_load_b_gather(NB, rb, b, b_valid, h0, w0, H32, W32, R32, S32, dh32,
                                             dw32, k1 + b_k, kend - k1 - b_k);
                        else {
                            b += (i64)GM_BK * ldb;
                            gm_load_b_matrix(NB, rb, b, ldb32, b_valid, kend - k1 - b_k);
                        }
                    }
                    UNROLL for (int kk = 0; kk < GM_BK; kk++) {
                        float4 a0 = As4[kk * (AS / 4) + ty];
                        float4 a1 = As4[kk * (AS / 4) + TY + ty];
                        float4 b0 = Bs4[kk * (BN / 4) + tx];
                        float4 b1 = Bs4[kk * (BN / 4) + TX + tx];
                        float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
                        float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
                        UNROLL for (int i = 0; i < 8; i++)
                            UNROLL for (int j = 0; j < 8; j++) acc[i][j] += av[i] * bv[j];
                    }
                    BARRIER();
                }
                /* Four columns at a time: where they lie side by side on a 16-byte boundary
                 * (in one row of an image, or of the partial sums), one vector store per
                 * row; else column by column, one division each for its image. */
                GLOBAL float *base = splits > 1 ? part : y;
                i64 rstride = splits > 1 ? ncc : PQ;
                i64 pbase = part_off + (split * gcount + gl) * Kg * ncc;
                UNROLL for (int h = 0; h < 2; h++) {
                    i64 nn0 = nb + 4 * tx + 4 * TX * h, nidx0 = n0 + nn0, img0 = nidx0 / PQ;
                    i64 pq0 = nidx0 - img0 * PQ;
                    i64 off0 = splits > 1 ? pbase + nn0 : img0 * K * PQ + pq0 + grp * Kg * PQ;
                    int vec = nn0 + 3 < ncc && (splits > 1 || pq0 + 3 < PQ) && off0 % 4 == 0 &&
                              rstride % 4 == 0;
                    UNROLL for (int i = 0; i < 8; i++) {
                        i64 m = m0 + (i < 4 ? 4 * ty + i : 4 * TY + 4 * ty + i - 4);
                        if (m >= Kg) continue;
                        float v[4];
                        UNROLL for (int jj = 0; jj < 4; jj++) {
                            v[jj] = acc[i][4 * h + jj];
                            if (splits == 1) v[jj] = fc_bias_relu(v[jj], bias, grp * Kg + m, relu);
                        }
                        if (vec) {
                            STORE4(base + off0 + m * rstride, v[0], v[1], v[2], v[3]);
                            continue;
                        }
                        UNROLL for (int jj = 0; jj < 4; jj++) {
                            i64 nn = nn0 + jj, nidx = n0 + nn, img = nidx / PQ;
                            if (nn >= ncc) continue;
                            i64 off = splits > 1 ? pbase + nn
                                                 : img * K * PQ + (nidx - img * PQ) + grp * Kg * PQ;
                            base[off + m * rstride] = v[jj];
                        }
                    }
                }
            }
}

/* The kernels: conv2d_gemm_<BM>x<BN> reads B from a matrix, conv2d_igemm_<BM>x<BN> gathers
 * it; each launched with TX TY threads in x. Shared memory: As 16 (BM + 4), Bs 16 BN floats
 * (float4 arrays: 16-byte aligned, read a word at a time, written a float at a time). The
 * register caps keep 128-thread blocks at 3 and 256-thread blocks at 2 per SM. */
#define GM_KERNEL(NAME, TX, TY, GATHER, BOUNDS)                                                 \
    KERNEL BOUNDS void NAME(GM_PARAMS) {                                                       \
        SHARED_ARRAY(float4, As4, GM_BK * (8 * (TY) + 4) / 4);                                 \
        SHARED_ARRAY(float4, Bs4, GM_BK * 8 * (TX) / 4);                                       \
        gm_conv2d_tiles(TX, TY, GATHER, As4, Bs4, GM_ARGS);                                    \
    }
GM_KERNEL(conv2d_gemm_64x64, 8, 8, 0, MAX_REGS(200))
GM_KERNEL(conv2d_gemm_64x128, 16, 8, 0, LAUNCH_BOUNDS(128, 2))
GM_KERNEL(conv2d_gemm_128x128, 16, 16, 0, LAUNCH_BOUNDS(256, 1))
GM_KERNEL(conv2d_igemm_64x64, 8, 8, 1, )
GM_KERNEL(conv2d_igemm_64x128, 16, 8, 1, LAUNCH_BOUNDS(128, 2))
GM_KERNEL(conv2d_igemm_128x128, 16, 16, 1, LAUNCH_BOUNDS(256, 1))

/* Split-K's second pass: one thread per output of the chunk, the splits' partial sums added
 * in order, then bias and ReLU into y. */
KERNEL void conv2d_gemm_reduce(GLOBAL const float *RESTRICT part, GLOBAL const float *RESTRICT bias,
                               GLOBAL float *RESTRICT y, i64 part_off, i64 K, i64 PQ, i64 G,
                               i64 g0, i64 gcount, i64 n0, i64 ncc, i64 splits, i64 relu) {
    i64 T = LSIZE(0), Kg = K / G, total = gcount * Kg * ncc;
    for (i64 g = GROUP(0); g * T < total; g += NGROUPS(0)) {
        i64 e = g * T + LID(0);
        if (e >= total) continue;
        float v = 0.0f;
        for (i64 s = 0; s < splits; s++) v += part[part_off + s * total + e];
        i64 nn = e % ncc, row = e / ncc, gl = row / Kg, ko = (g0 + gl) * Kg + (row - gl * Kg);
        i64 nidx = n0 + nn, b = nidx / PQ, pq = nidx - b * PQ;
        y[(b * K + ko) * PQ + pq] = fc_bias_relu(v, bias, ko, relu);
    }
}

/* ---- UMI (src/umi, docs/umi.md): the generic unrolled-memory inner product ---------------- */
/* One thread per output point; it walks the accumulation components exactly like the CPU
 * executor (src/umi/umi-execute.c) with the built-in strategies of umi-strategy.c. The plan
 * comes as an i64 array (src/umi/umi-gpu.c writes it; the UMI_D_* offsets below):
 *   [0] n_par [1] n_acc [2] strategy [3..6] par_extent [7..10] acc_extent, then three view
 *   blocks (a, b, init) of UMI_D_VIEW values: used, ndim, border, shape[4], tstride[4],
 *   par[4] x (axis, stride, offset), acc[4] x (axis, stride, offset).
 * Strategy numbers and border rules are fastconv.h's fconv_umi_strategy / fconv_umi_border. */
#define UMI_D_PAR_EXT 3
#define UMI_D_ACC_EXT 7
#define UMI_D_VIEWS 11
#define UMI_D_VIEW 35
#define UMI_D_SIZE (UMI_D_VIEWS + 3 * UMI_D_VIEW)
#ifdef __CUDACC__
#define UMI_EXP(x) expf(x)
#define UMI_FABS(x) fabsf(x)
#define UMI_TANH(x) tanhf(x)
#else
#define UMI_EXP(x) exp(x)
#define UMI_FABS(x) fabs(x)
#define UMI_TANH(x) tanh(x)
#endif

/* umi-execute.c's map_coord: the index coordinate x reads on a length-n axis, -1 for none
 * (border 1 zero, 2 replicate, 3 mirror, 4 skip; 0 never leaves the tensor). */
DEVICE_FN i64 umi_map(i64 x, i64 n, i64 border) {
    if (x >= 0 && x < n) return x;
    if (border == 2) return x < 0 ? 0 : n - 1;
    if (border == 3) {
        if (n == 1) return 0;
        i64 period = 2 * (n - 1), m = fc_mod(x, period);
        return m < n ? m : period - m;
    }
    return -1;
}

/* Coordinates of view v (its block in d) at parallel index k (and accumulation index ka). */
DEVICE_FN void umi_coords(GLOBAL const i64 *v, int n_par, int n_acc, const i64 *k, const i64 *ka,
                          i64 *c) {
    for (int i = 0; i < 4; i++) c[i] = 0;
    for (int j = 0; j < n_par; j++) c[v[11 + 3 * j]] += k[j] * v[12 + 3 * j] + v[13 + 3 * j];
    for (int j = 0; j < n_acc; j++) c[v[23 + 3 * j]] += ka[j] * v[24 + 3 * j] + v[25 + 3 * j];
}

/* umi-execute.c's read_mapped: the element at c through the border rule; *ok = 0 skipped. */
DEVICE_FN float umi_read(GLOBAL const i64 *v, GLOBAL const float *t, const i64 *c, int *ok) {
    i64 off = 0, ndim = v[1], border = v[2];
    *ok = 1;
    for (i64 i = 0; i < ndim; i++) {
        i64 x = umi_map(c[i], v[3 + i], border);
        if (x < 0) {
            *ok = border != 4;
            return 0.0f;
        }
        off += x * v[7 + i];
    }
    return t[off];
}

KERNEL void umi_generic(GLOBAL const float *RESTRICT a, GLOBAL const float *RESTRICT b,
                        GLOBAL const float *RESTRICT init, GLOBAL float *RESTRICT y,
                        GLOBAL const i64 *RESTRICT d, i64 out_elems, float param0) {
    const int n_par = (int)d[0], n_acc = (int)d[1], strategy = (int)d[2];
    GLOBAL const i64 *va = d + UMI_D_VIEWS, *vb = va + UMI_D_VIEW, *vi = vb + UMI_D_VIEW;
    const int has_b = vb[0] != 0, has_init = vi[0] != 0;
    i64 T = LSIZE(0);
    for (i64 g = GROUP(0); g * T < out_elems; g += NGROUPS(0)) {
        i64 p = g * T + LID(0);
        if (p >= out_elems) continue;
        i64 k[4] = {0, 0, 0, 0}, ka[4] = {0, 0, 0, 0}, ca[4], cb[4];
        i64 rest = p;
        for (int j = n_par - 1; j >= 0; j--) {
            i64 e = d[UMI_D_PAR_EXT + j];
            k[j] = rest % e;
            rest /= e;
        }
        int ok, okb;
        if (strategy == 9) { /* ABSDIFF: elementwise, a skipped pair gives 0 */
            umi_coords(va, n_par, 0, k, ka, ca);
            umi_coords(vb, n_par, 0, k, ka, cb);
            float xa = umi_read(va, a, ca, &ok), xb = umi_read(vb, b, cb, &okb);
            y[p] = ok && okb ? UMI_FABS(xa - xb) : 0.0f;
            continue;
        }
        float iv = 0.0f;
        if (has_init) {
            umi_coords(vi, n_par, 0, k, ka, ca);
            iv = umi_read(vi, init, ca, &ok); /* a skipped init reads 0 */
        }
        float s = strategy == 7 ? 0.0f : iv, n = 0.0f, c = iv;
        i64 acc_elems = 1;
        for (int j = 0; j < n_acc; j++) acc_elems *= d[UMI_D_ACC_EXT + j];
        for (i64 t = 0; n_acc > 0 && t < acc_elems; t++) {
            umi_coords(va, n_par, n_acc, k, ka, ca);
            float xa = umi_read(va, a, ca, &ok), xb = 0.0f;
            okb = 1;
            if (has_b) {
                umi_coords(vb, n_par, n_acc, k, ka, cb);
                xb = umi_read(vb, b, cb, &okb);
            }
            if (ok && okb) {
                if (strategy == 5) s += UMI_FABS(xa - xb);
                else if (strategy == 6) s += (xa - xb) * (xa - xb);
                else if (strategy == 7) {
                    if (xb != 0.0f) { /* outside the window's disc: skip the exp */
                        float dd = xa - c, w = xb * UMI_EXP(-dd * dd * param0);
                        s += w;
                        n += w * xa;
                    }
                } else s += xa * xb;
            }
            /* odometer over the accumulation components, last fastest */
            for (int j = n_acc - 1; j >= 0; j--) {
                if (++ka[j] < d[UMI_D_ACC_EXT + j]) break;
                ka[j] = 0;
            }
        }
        float out = s;
        if (strategy == 1) out = s < 0.0f ? 0.0f : s;
        else if (strategy == 2) out = s < 0.0f ? param0 * s : s;
        else if (strategy == 3) out = 1.0f / (1.0f + UMI_EXP(-s));
        else if (strategy == 4) out = UMI_TANH(s);
        else if (strategy == 7) out = s > 0.0f ? n / s : c;
        y[p] = out;
    }
}
