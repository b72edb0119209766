/*
 * internal.h — what the core, the algorithms and the reference share: the plan's layout,
 * the algorithm table entry, error reporting and checked arithmetic. Nothing here is public.
 * Invariant: a plan that exists has passed validation, so drivers trust every field.
 */
#ifndef FCONV_INTERNAL_H
#define FCONV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fastconv.h"

/* ---- error reporting (status.c) -------------------------------------------------------- */

/* Record the thread's last error message (printf-style) and return status, so that
 * validation code reads `return fconv_fail(FCONV_EINVAL, "conv2d: groups %lld ...", ...)`. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
fconv_status fconv_fail(fconv_status status, const char *fmt, ...);

/* Clear the thread's last error (every public entry point does this on success). */
void fconv_clear_error(void);

/* ---- checked arithmetic ------------------------------------------------------------------ */

/* *out = a * b; returns 0 on success, -1 on overflow (or a negative operand). */
static inline int fconv_mul_i64(int64_t a, int64_t b, int64_t *out) {
    if (a < 0 || b < 0) return -1;
    if (a != 0 && b > INT64_MAX / a) return -1;
    *out = a * b;
    return 0;
}

/* ---- problem kinds and the plan ---------------------------------------------------------- */

typedef enum fconv_kind {
    FCONV_KIND_CONV2D = 0,
    FCONV_KIND_FILTER2D = 1,
    FCONV_KIND_CONV1D = 2
} fconv_kind;

/* Bit of fconv_algo_info.serves for a kind. */
static inline unsigned fconv_kind_bit(fconv_kind kind) { return 1u << (unsigned)kind; }

/* The name used in messages: "conv2d", "filter2d", "conv1d". */
const char *fconv_kind_name(fconv_kind kind);

/*
 * A conv1d problem is also stored as the filter2d problem it equals (H = 1, one channel,
 * zero border), so every filter2d algorithm serves conv1d without extra code; drivers that
 * specialize for 1D look at plan->kind.
 */
struct fconv_plan {
    fconv_kind kind;
    fconv_conv2d_desc conv2d;     /* kind == CONV2D; defaults (0 means 1) resolved */
    fconv_filter2d_desc filter;   /* kind == FILTER2D or CONV1D; defaults resolved */
    fconv_conv1d_desc conv1d;     /* kind == CONV1D */

    /* Output extents: conv2d P, Q; filter2d OH, OW; conv1d 1, out_n. */
    int64_t out_h, out_w;
    /* Where the output window starts inside the full convolution (filter/conv1d):
     * y[i][j] = full[i + off_h][j + off_w]. */
    int64_t off_h, off_w;
    int64_t x_elems, w_elems, y_elems;

    fconv_options options;        /* as given, with threads resolved */
    int threads;
    const struct fconv_algorithm *algo;
    size_t algo_workspace_bytes;  /* what the algorithm uses, from a 64-byte-aligned start */
    size_t workspace_bytes;       /* what callers must give: + 63 to align any pointer */
    char explain[512];

    float *weights;               /* plan-owned copy of the weights, or NULL */
    float *bias;                  /* plan-owned copy of the bias, or NULL */
    void *algo_state;             /* the algorithm's own data (pre-transformed weights) */
    /* The SIMD kernels this plan runs (core/dispatch.h): set with the options, from
     * options.max_isa and FCONV_ISA, before the algorithm is chosen. */
    const struct fconv_kernels *kernels;
};

/*
 * An algorithm: one table entry (src/algo/registry.c), one file in src/algo/.
 * supports() says yes (FCONV_OK) or why not (FCONV_EUNSUPPORTED with a reason written to
 * why, which starts with the algorithm's name). workspace() is exact bytes. cost() is a
 * relative time estimate for AUTO (smaller is faster; same units for every algorithm).
 * prepare() (optional) runs at plan time once the plan is complete, e.g. to pre-transform
 * weights held by the plan into plan->algo_state; release() frees that state.
 * execute() cannot fail: everything was validated at plan time and the workspace is given.
 * w and bias are never NULL (bias: when has_bias).
 */
struct fconv_algorithm {
    fconv_algo id;
    const char *name;
    const char *summary;
    unsigned serves;              /* FCONV_SERVES_* bits */
    double error_bound;           /* documented max normalized error */
    fconv_status (*supports)(const fconv_plan *plan, char *why, size_t why_len);
    size_t (*workspace)(const fconv_plan *plan);
    double (*cost)(const fconv_plan *plan);
    fconv_status (*prepare)(fconv_plan *plan);
    void (*release)(fconv_plan *plan);
    void (*execute)(const fconv_plan *plan, const float *x, const float *w, const float *bias,
                    float *y, void *workspace);
    /* GPU algorithms (src/gpu/): devices is a mask of (1u << FCONV_DEVICE_*), 0 meaning the
     * CPU only. A device execute can fail (device memory, launches), so GPU entries set
     * execute_device instead of execute; it takes host pointers and needs no workspace. */
    unsigned devices;
    fconv_status (*execute_device)(const fconv_plan *plan, const float *x, const float *w,
                                   const float *bias, float *y);
    /* Nonzero for an NHWC conv2d plan it runs as it lies (reads plan->conv2d.layout); NULL or
     * zero: it never sees the layout and runs on NCHW copies (layout.c). */
    int (*runs_nhwc)(const fconv_plan *plan);
};

/* fconv_algorithm.runs_nhwc of an algorithm that runs every NHWC plan as it lies. */
static inline int fconv_runs_nhwc_always(const fconv_plan *plan) {
    (void)plan;
    return 1;
}

/* Does algorithm a run on device d? (CPU algorithms leave devices at 0.) */
static inline int fconv_algorithm_runs_on(const struct fconv_algorithm *a, fconv_device d) {
    unsigned mask = a->devices ? a->devices : 1u << FCONV_DEVICE_CPU;
    return (mask >> (unsigned)d) & 1u;
}

/* ---- GPU devices (src/gpu/gpu-device.c) --------------------------------------------------- */

/* FCONV_OK if device d is present (CPU always), else FCONV_ENODEVICE with the reason. */
fconv_status fconv_gpu_check_device(fconv_device d);
/* Bytes of device memory a GPU plan holds (gpu-driver.c; fconv_plan_device_bytes). */
size_t fconv_gpu_plan_device_bytes(const fconv_plan *plan);
/* Forget this thread's last GPU timing (every CPU execute calls it). */
void fconv_gpu_timing_clear(void);
/* "cpu", "opencl", "cuda". */
const char *fconv_device_kind_name(fconv_device d);

/* The table (registry.c): every algorithm built in, indexed by nothing; NULL-terminated. */
extern const struct fconv_algorithm *const fconv_algorithms[];

/* Entry for an id, or NULL if not built in. */
const struct fconv_algorithm *fconv_algorithm_find(fconv_algo id);

/* Multiply-adds of the direct definition: conv2d N*K*P*Q*(C/G)*R*S, filter2d
 * OH*OW*CH*KH*KW, conv1d out_n*m. A double: it feeds cost models and GFLOP/s. */
double fconv_plan_macs(const fconv_plan *plan);

/* Choose (select.c): fill plan->algo, the workspace sizes and plan->explain, honouring
 * options.algo, the workspace budget and the tolerance. */
fconv_status fconv_select_algorithm(fconv_plan *plan);

/* ---- conv2d's NHWC through NCHW copies (layout.c) ----------------------------------------- */

/* Does plan run algorithm a on NCHW copies of x and y (an NHWC conv2d, a not NHWC-native)?
 * A one-channel x or y needs none (NHWC and NCHW lie alike): not where neither needs one. */
int fconv_layout_copies(const fconv_plan *plan, const struct fconv_algorithm *a);
/* Which of them such a plan copies: "x and y", "x" or "y". */
const char *fconv_layout_copies_named(const fconv_plan *plan);
/* The copies' bytes, at the end of such an algorithm's workspace (algo_workspace_bytes). */
size_t fconv_layout_copy_bytes(const fconv_plan *plan);
/* Their estimated time in seconds, in the cost models' units. */
double fconv_layout_copy_seconds(const fconv_plan *plan);
/* a->cost(plan), plus the copies' time where plan runs a on them: what AUTO compares. */
double fconv_algorithm_cost(const fconv_plan *plan, const struct fconv_algorithm *a);
/* For a plan whose algorithm runs on copies: x transposed into its NCHW copy at the end of
 * the aligned workspace (of algo_workspace_bytes), *x_nchw that copy and *y_nchw where the
 * algorithm writes its NCHW output (x and y themselves where they have one channel); then,
 * once it has, that output transposed into y. */
void fconv_layout_to_nchw(const fconv_plan *plan, const float *x, float *y, void *workspace, const float **x_nchw,
                          float **y_nchw);
void fconv_layout_to_nhwc(const fconv_plan *plan, const float *y_nchw, float *y);

/* ---- validation (validate.c) ------------------------------------------------------------- */

/* Check a descriptor, resolve its defaults into the plan, compute output extents and
 * element counts. */
fconv_status fconv_validate_conv2d(const fconv_conv2d_desc *desc, fconv_plan *plan);
fconv_status fconv_validate_filter2d(const fconv_filter2d_desc *desc, fconv_plan *plan);
fconv_status fconv_validate_conv1d(const fconv_conv1d_desc *desc, fconv_plan *plan);

/* ---- memory (alloc.c) -------------------------------------------------------------------- */

/* 64-byte aligned allocation; NULL on failure or size 0. Free with fconv_free_aligned. */
void *fconv_alloc_aligned(size_t bytes);
void fconv_free_aligned(void *p);

/* The workspace a caller must pass for an algorithm using algo_bytes from a 64-byte
 * boundary: 63 bytes more, so execute can align any pointer (the header promises that no
 * alignment is required). */
static inline size_t fconv_caller_workspace_bytes(size_t algo_bytes) {
    return algo_bytes ? algo_bytes + 63 : 0;
}

/* Round up to a multiple of 64 (workspace sub-buffers start on cache lines). */
static inline size_t fconv_round_up_64(size_t n) { return (n + 63) & ~(size_t)63; }

/* qsort's comparison of doubles, ascending. */
static inline int fconv_compare_double(const void *pa, const void *pb) {
    const double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Sorts v[0..n) (n > 0) and returns its median, the mean of the middle two for even n: what
 * measured timings are judged by (MEASURE's alternated final, `fastconv bench`). */
static inline double fconv_median(double *v, size_t n) {
    qsort(v, n, sizeof *v, fconv_compare_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* c[r*ld + i] = act(c[r*ld + i] + bias[r]) for r < rows, i < n, bias NULL: none, relu:
 * max(0, .), a row per pass. Without a bias it adds -0.0, the identity (x + -0.0 is x, -0.0
 * included: +0.0 would turn -0.0 into +0.0, which the SIMD kernels' epilogues do not); NaN
 * stays NaN. Inline, so that each caller's loop vectorizes (conv2d drivers, the packed GEMM's
 * epilogue). */
static inline void fconv_bias_relu_rows(float *c, size_t ld, size_t rows, int64_t n, const float *bias, int relu) {
    for (size_t r = 0; r < rows && (bias || relu); r++) {
        float *row = c + r * ld;
        const float b = bias ? bias[r] : -0.0f;
        if (relu) {
            for (int64_t i = 0; i < n; i++) {
                const float v = row[i] + b;
                row[i] = v < 0.0f ? 0.0f : v; /* NaN < 0 is false: NaN stays */
            }
        } else {
            for (int64_t i = 0; i < n; i++) row[i] += b;
        }
    }
}

/* dst[0 .. n-1] = 0. A padding's few floats are stored one by one: a memset call per side of
 * a row cost more than the row's copy (a 512-channel 14x14 layer pads 7680 rows of 15 floats;
 * 4.8 -> 3.0 ns a row, standalone). The asm hides the zero so that the compiler does not turn
 * the loop back into a memset call. */
static inline void fconv_zero_floats(float *dst, int64_t n) {
    if (n > 16) {
        memset(dst, 0, (size_t)n * sizeof *dst);
        return;
    }
    float zero = 0.0f;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __asm__("" : "+x"(zero));
#endif
    for (int64_t e = 0; e < n; e++) dst[e] = zero;
}

/* dst[e] = src[first + e] where 0 <= first + e < w, else 0, for e < width: a zero-padded
 * copy of part of an input row of w floats (first < 0: padding on the left), as the direct
 * and implicit-GEMM conv2d strips read it. */
static inline void fconv_copy_padded_row(float *dst, int64_t width, const float *src, int64_t w, int64_t first) {
    int64_t lo = first < 0 ? -first : 0, hi = w - first;
    if (lo > width) lo = width;
    if (hi > width) hi = width;
    if (hi < lo) hi = lo;
    fconv_zero_floats(dst, lo);
    if (hi > lo) memcpy(dst + lo, src + first + lo, (size_t)(hi - lo) * sizeof *dst);
    fconv_zero_floats(dst + hi, width - hi);
}

/* Outputs at least this large leave through non-temporal stores where an algorithm can write
 * them so (fft-rows, fft-cols, Winograd, the conv2d GEMMs): a smaller one stays cached for
 * whoever reads it next; a larger one goes to memory anyway, plain stores reading every line
 * in first and pushing the algorithm's own data out of the caches. */
#define FCONV_STREAM_OUTPUT_BYTES (8.0 * 1024 * 1024)

/* Beyond this many bytes of input and output, a batch no longer stays in the caches from one
 * run to the next: its input comes from memory (Zen 4 VM, 2 threads, 64 -> 64 1x1 on 56^2: 4
 * images ran at batch 1's speed per image, 8 took 1.2-2.2 ms against 8 x 0.13). */
#define FCONV_CACHED_BYTES (8.0 * 1024 * 1024)

/* The last-level cache (a Zen 4 or Zen 5 CCD's L3): data larger than this comes from memory on
 * every run of an algorithm, data smaller may stay cached between runs. */
#define FCONV_LLC_BYTES (32.0 * 1024 * 1024)

/* Orders this thread's non-temporal (streaming) stores before its later stores, such as the
 * barrier that ends a parallel region: a worker that streamed output calls it before it
 * returns, or another thread may read what is still in its write-combining buffers. */
static inline void fconv_stream_fence(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_sfence();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* ---- CPU features (cpu-x86.c) ------------------------------------------------------------ */

typedef struct fconv_cpu_info {
    int sse2, avx, avx2, fma, avx512f, avx512bw, avx512vl, avx512dq;
    int os_avx, os_avx512;        /* XGETBV says the OS saves the registers */
    /* A vector load that straddles two cache lines costs about two loads' time (Intel's cores:
     * on an Ice Lake VM, 0.5 such 64-byte loads per cycle against 2 aligned ones; AMD's Zen 4
     * and 5 take them at little cost), so a kernel reading many of them is better off copying
     * its operand to aligned memory first, and direct's filter2d slides bands of rows (fewer
     * loads a multiply-add) only where they are slow. */
    int split_loads_slow;
    /* A 512-bit load (a broadcast too) issues one a cycle where 256-bit ones issue two, so a
     * kernel with more than one such load per 512-bit multiply-add waits on its loads. On the
     * Ice Lake VM (family 6 model 106): 0.75-1.05 cycles per zmm load or broadcast against
     * 0.43-0.55 per ymm one and 0.5-0.75 per register-only FMA. From the CPU model: Intel's Ice
     * Lake cores (server 106 and 108, client 125 and 126; measured on 106 only, the others share
     * its core and are taken to behave alike; other Intel cores unmeasured, unset). The GEMM's
     * half-width tile over several panels (gemm-ukernel.c) and winograd-rows' product then take
     * some of their broadcasts by shuffles of a narrower load (on an Emerald Rapids VM, model
     * 207, which issues two a cycle, those shuffles made Winograd's F(4x4) products 0.82-0.91x
     * as fast: unset there). */
    int wide_loads_slow;
    /* The packed GEMM runs pairs of B slivers on its wide tile (gemm-packed.c's wide_tile(); the
     * pointwise cost counts it): half an A panel against 64 columns. Where measured it ran the
     * NCHW 1x1 layers faster than 8 x 32 whether or not the loads set the pace (2 threads,
     * alternated rounds in one process, im2col): the Ice Lake VM 1.03-1.30x; an Emerald Rapids
     * VM (model 207, two 512-bit loads a cycle) 1 x 64 x 56^2 -> 64 1.09x, -> 256 1.14x, 256 ->
     * 64 1.07x, 128 -> 512 on 28^2 1.08x, 8 x 64 x 56^2 -> 64 1.15x, 8 x 256 x 56^2 -> 64 1.22x,
     * 8 x 128 x 28^2 -> 512 1.17x; its 3x3 im2col layers and 1x1 of depth 512-2048 0.92-1.07x.
     * Three later sittings there found the depth-256 rows the other way round (8 x 32 1.03-1.11x
     * faster): on such cores only k steps below 128 take the wide tile (gemm-packed.c).
     * From the CPU model: the Ice Lake models of wide_loads_slow, Emerald Rapids (207), and
     * Sapphire Rapids (143, the same core, taken alike); other cores unmeasured, unset. */
    int gemm_wide_tile;
    /* The packed GEMM reads shallow B in place (gemm-packed.c's b_in_place) only from a vector
     * boundary, packing it otherwise. Intel: split loads (above). A Zen 4 VM (AMD family 25
     * model 17) takes them at little cost from its caches, but B off a line (malloc's 16-byte
     * alignment, as the CLI and most callers hand it over) coming from memory, each 32-float
     * sliver row spanning three lines, ran slower than packed: 2 threads, im2col, 25 alternated
     * rounds, input 16 bytes off a line, the caches flushed before each run: 8 x 64 x 56^2 -> 64
     * 1x1 2.02 -> 1.41 ms, 1 x 64 x 56^2 -> 64 0.284 -> 0.217, -> 256 0.714 -> 0.657, 8 x 64 ->
     * 256 5.43 -> 4.81; from the caches 1.20 -> 1.08, 0.134 -> 0.136, 0.535 -> 0.517, 5.21 ->
     * 4.65. From the vendor and family: Intel's and AMD's family 25 (measured on Zen 4 only). */
    int gemm_b_in_place_aligned_only;
    /* Bytes a second one core reads of a stream from beyond its L2 (the shared cache, or
     * memory) while the others do the same: what a product reading Winograd's transformed
     * weights once per run is held to. AMD's Zen 5 VM served 37.7 MB of them on 2 threads in
     * ~0.4 ms (~47 GB/s a core, its L3 holding most); Intel's server cores read their mesh's
     * cache far slower: ~10 GB/s a core on a Sapphire Rapids VM, 11-16 on an Ice Lake VM (a
     * 38 MB buffer re-read by 2 threads, 21-33 GB/s). From the vendor, as split_loads_slow
     * (an Intel client core reads its ring's L3 faster, and AUTO then undervalues the larger
     * Winograd tiles there; `fastconv tune` records what runs faster). */
    double shared_read_bytes_per_s;
    /* The same, of a stream larger than the last-level cache holds, so from memory. The Zen 5
     * VM read Winograd's 37.7 MB of 512 -> 512 F(4x4) weights at the rate above (its memory
     * keeps up); a Zen 4 VM (AMD family 25 model 17, 32 MiB of L3) reads 24-27 GB/s on 2
     * threads past 38 MB against 150 GB/s for 16 MB (a summing loop, best of 15), and there
     * 1 x 512 x 7^2 ran F(4x4) 1.30 ms, F(2x2) 0.79 ms, while AUTO, taking the Zen 5 rate, chose
     * F(4x4). From the vendor and family: AMD's family 25 (Zen 3 and 4; measured on Zen 4 only),
     * else shared_read_bytes_per_s. */
    double memory_read_bytes_per_s;
    /* Outputs of the conv2d GEMMs (conv2d-pointwise.c, im2col) at least this large leave
     * through non-temporal stores. Zen 5's caches keep outputs up to FCONV_STREAM_OUTPUT_BYTES
     * for their next reader; an Intel server core's plain stores each read their line in
     * first from its mesh's cache or memory (above), the GEMM's tiles 8 rows at a time: on the
     * Ice Lake VM (2 threads, alternated rounds, plain against streamed) 64 -> 64 1x1 on 56^2
     * (0.8 MB) 0.174 -> 0.151 ms, 256 -> 64 0.618 -> 0.569, 64 -> 256 (3.2 MB) 0.765 -> 0.630,
     * 128 -> 128 0.576 -> 0.514, 8 x 64 -> 64 (6.4 MB) 1.52 -> 1.19; 64 -> 128 on 28^2 (0.4 MB)
     * level; the next layer reading it back (a 1x1 or Winograd 3x3) no slower: each pair
     * 1.02-1.07x faster. A Zen 4 VM (AMD family 25 model 17; 2 threads, 25-31 alternated
     * rounds, im2col, plain against streamed from 512 KiB) the same: 64 -> 64 1x1 on 56^2 0.150
     * -> 0.130 ms (0.256 -> 0.193 with the caches flushed before each run), 64 -> 256 0.614 ->
     * 0.535 (0.760 -> 0.562), 8 x 64 -> 64 1.37 -> 1.14 (1.75 -> 1.33), 128 -> 512 on 28^2 level
     * (0.609 -> 0.536); followed by the next layer reading the output (its AUTO plan, the pair
     * timed): 64 -> 64 then 3x3 0.676 -> 0.629 ms, 64 -> 256 then 256 -> 64 1.21-1.37 ->
     * 1.03-1.05, 8 x 64 -> 64 then 3x3 5.41-5.83 -> 5.29-5.43, 128 -> 512 then 512 -> 128
     * 1.04-1.19 -> 0.98-1.00. From the vendor and family: Intel's and AMD's family 25 (Zen 3
     * and 4, measured on Zen 4 only) from 512 KiB, others (Zen 5) from
     * FCONV_STREAM_OUTPUT_BYTES. */
    double gemm_stream_output_bytes;
} fconv_cpu_info;

/* fconv_cpu_info.shared_read_bytes_per_s by vendor (above): Intel's, and everyone else's
 * (Zen 5's). */
#define FCONV_SHARED_READ_BYTES_PER_S_INTEL 12e9
#define FCONV_SHARED_READ_BYTES_PER_S_DEFAULT 47e9
/* fconv_cpu_info.memory_read_bytes_per_s of AMD's family 25 (above). */
#define FCONV_MEMORY_READ_BYTES_PER_S_AMD_FAMILY_25 13e9
/* fconv_cpu_info.gemm_stream_output_bytes (above): Intel's and AMD family 25's, and everyone
 * else's (Zen 5's). */
#define FCONV_GEMM_STREAM_OUTPUT_BYTES_EARLY (512.0 * 1024)
#define FCONV_GEMM_STREAM_OUTPUT_BYTES_DEFAULT FCONV_STREAM_OUTPUT_BYTES

const fconv_cpu_info *fconv_cpu(void);

#endif /* FCONV_INTERNAL_H */
