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

/* Variant 3: the block loads its T inputs and the m - 1 halo inputs into shared memory
 * (T + m - 1 floats of dynamic local memory), then every tap reads shared memory. */
KERNEL void conv1d_tiled_halo(GLOBAL const float *RESTRICT x, GLOBAL float *RESTRICT y, i64 n,
                              i64 m, i64 out_n, i64 off, i64 correlate DYN_LOCAL_PARAM
                              CMASK_PARAM) {
    DYN_LOCAL_DECL
    i64 T = LSIZE(0), tid = LID(0);
    for (i64 g = GROUP(0); g * T < out_n; g += NGROUPS(0)) {
        i64 j0 = g * T;
        i64 base = j0 + off - (m - 1); /* x index of tile[0] */
        for (i64 i = tid; i < T + m - 1; i += T) {
            i64 xi = base + i;
            dyn_local[i] = (xi >= 0 && xi < n) ? x[xi] : 0.0f;
        }
        BARRIER();
        i64 j = j0 + tid;
        if (j < out_n) {
            float acc = 0.0f;
            for (i64 t = 0; t < m; t++)
                acc += CMASK(correlate ? m - 1 - t : t) * dyn_local[tid + m - 1 - t];
            y[j] = acc;
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

/* Shared-memory tile with halo: the block loads (TY + KH - 1) x (TX + KW - 1) border-remapped
 * samples, rows `ts` floats apart; the host picks ts = 16 (mod 32) so the two half-warps of
 * a 16-wide block read disjoint banks (padding, no conflicts). Mask in constant memory. */
KERNEL void filter2d_tiled_halo(GLOBAL const float *RESTRICT x, GLOBAL float *RESTRICT y, i64 H,
                                i64 W, i64 CH, i64 KH, i64 KW, i64 OH, i64 OW, i64 offh,
                                i64 offw, i64 border, float bval, i64 correlate,
                                i64 ts DYN_LOCAL_PARAM CMASK_PARAM) {
    DYN_LOCAL_DECL
    i64 TX = LSIZE(0), TY = LSIZE(1);
    i64 tid = LID(1) * TX + LID(0), nthreads = TX * TY;
    i64 rows = TY + KH - 1, cols = TX + KW - 1;
    for (i64 ch = GROUP(2); ch < CH; ch += NGROUPS(2))
        for (i64 gy = GROUP(1); gy * TY < OH; gy += NGROUPS(1))
            for (i64 gx = GROUP(0); gx * TX < OW; gx += NGROUPS(0)) {
                /* tile[u][v] = xe[i0 + offh - (KH-1) + u][j0 + offw - (KW-1) + v] */
                i64 r0 = gy * TY + offh - (KH - 1), c0 = gx * TX + offw - (KW - 1);
                for (i64 e = tid; e < rows * cols; e += nthreads) {
                    i64 u = e / cols, v = e - u * cols;
                    dyn_local[u * ts + v] = fc_sample(x, r0 + u, c0 + v, ch, H, W, CH, border, bval);
                }
                BARRIER();
                i64 i = gy * TY + LID(1), j = gx * TX + LID(0);
                if (i < OH && j < OW) {
                    float acc = 0.0f;
                    for (i64 a = 0; a < KH; a++) {
                        i64 row = (LID(1) + KH - 1 - a) * ts + LID(0) + KW - 1;
                        for (i64 b = 0; b < KW; b++) {
                            i64 kidx = correlate ? (KH - 1 - a) * KW + (KW - 1 - b) : a * KW + b;
                            acc += CMASK(kidx) * dyn_local[row - b];
                        }
                    }
                    y[(i * OW + j) * CH + ch] = acc;
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
        if (bias) acc += bias[ko];
        if (relu && acc < 0.0f) acc = 0.0f; /* NaN < 0 is false: NaN stays NaN */
        y[e] = acc;
    }
}

/* Implicit GEMM, per group: Y[m][n] = sum_kk W[m][kk] * X[kk][n] with m an output channel of
 * the group, n = (b, p, q) and kk = (c, r, s); X is never formed: each BK x BN tile is
 * gathered from x with stride, padding and dilation. Blocks of 16 x 16 threads make a
 * 64 x 64 tile, each thread a 4 x 4 register block at rows ty + 16 i, columns tx + 16 j (so
 * a warp reads 32 consecutive floats of Bs and broadcasts As: no bank conflicts). As rows
 * are padded to 65 floats so the transposing stores of W hit distinct banks. */
#define IG_BM 64
#define IG_BN 64
#define IG_BK 16
KERNEL void conv2d_implicit_gemm(GLOBAL const float *RESTRICT x, GLOBAL const float *RESTRICT w,
                                 GLOBAL const float *RESTRICT bias, GLOBAL float *RESTRICT y,
                                 i64 N, i64 C, i64 H, i64 W, i64 K, i64 R, i64 S, i64 P, i64 Q,
                                 i64 sh, i64 sw, i64 pt, i64 pl, i64 dh, i64 dw, i64 G,
                                 i64 relu) {
    SHARED_ARRAY(float, As, IG_BK * (IG_BM + 1));
    SHARED_ARRAY(float, Bs, IG_BK * IG_BN);
    i64 Cg = C / G, Kg = K / G, RS = R * S, PQ = P * Q;
    i64 KD = Cg * RS, NC = N * PQ;
    i64 tx = LID(0), ty = LID(1), tid = ty * 16 + tx;
    for (i64 grp = GROUP(2); grp < G; grp += NGROUPS(2))
        for (i64 gm = GROUP(1); gm * IG_BM < Kg; gm += NGROUPS(1))
            for (i64 gn = GROUP(0); gn * IG_BN < NC; gn += NGROUPS(0)) {
                i64 m0 = gm * IG_BM, n0 = gn * IG_BN;
                float acc[4][4];
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
                for (i64 k0 = 0; k0 < KD; k0 += IG_BK) {
                    for (int l = 0; l < 4; l++) { /* A: 64 x 16 weights, kk fastest */
                        i64 e = tid + 256 * l, kk = e % IG_BK, mm = e / IG_BK;
                        i64 m = m0 + mm, kd = k0 + kk;
                        As[kk * (IG_BM + 1) + mm] =
                            (m < Kg && kd < KD) ? w[(grp * Kg + m) * KD + kd] : 0.0f;
                    }
                    for (int l = 0; l < 4; l++) { /* B: 16 x 64 gathered inputs, n fastest */
                        i64 e = tid + 256 * l, nn = e % IG_BN, kk = e / IG_BN;
                        i64 nidx = n0 + nn, kd = k0 + kk;
                        float v = 0.0f;
                        if (nidx < NC && kd < KD) {
                            i64 b = nidx / PQ, pq = nidx - b * PQ, p = pq / Q, q = pq - p * Q;
                            i64 c = kd / RS, rs = kd - c * RS, r = rs / S, s = rs - r * S;
                            i64 hi = p * sh - pt + r * dh, wi = q * sw - pl + s * dw;
                            if (hi >= 0 && hi < H && wi >= 0 && wi < W)
                                v = x[((b * C + grp * Cg + c) * H + hi) * W + wi];
                        }
                        Bs[kk * IG_BN + nn] = v;
                    }
                    BARRIER();
                    for (int kk = 0; kk < IG_BK; kk++) {
                        float a[4], bv[4];
                        for (int i = 0; i < 4; i++) a[i] = As[kk * (IG_BM + 1) + ty + 16 * i];
                        for (int j = 0; j < 4; j++) bv[j] = Bs[kk * IG_BN + tx + 16 * j];
                        for (int i = 0; i < 4; i++)
                            for (int j = 0; j < 4; j++) acc[i][j] += a[i] * bv[j];
                    }
                    BARRIER();
                }
                for (int i = 0; i < 4; i++) {
                    i64 m = m0 + ty + 16 * i;
                    if (m >= Kg) continue;
                    i64 ko = grp * Kg + m;
                    for (int j = 0; j < 4; j++) {
                        i64 nidx = n0 + tx + 16 * j;
                        if (nidx >= NC) continue;
                        i64 b = nidx / PQ, pq = nidx - b * PQ;
                        float v = acc[i][j];
                        if (bias) v += bias[ko];
                        if (relu && v < 0.0f) v = 0.0f;
                        y[(b * K + ko) * PQ + pq] = v;
                    }
                }
            }
}
