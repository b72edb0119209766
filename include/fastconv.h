/*
 * fastconv.h — the whole public API of fastconv, and its manual.
 *
 * fastconv computes three kinds of convolution on float32 data in C (row-major) order:
 *
 *   conv2d    the deep-learning layer, exactly torch.nn.functional.conv2d:
 *             x[N][C][H][W] (*) w[K][C/groups][R][S] (+ bias[K]) -> y[N][K][P][Q]
 *   filter2d  image filtering, the signal-processing convention of scipy.signal.convolve2d:
 *             x[H][W][CH] (*) k[KH][KW] -> y[OH][OW][CH], the same kernel on every channel
 *   conv1d    numpy.convolve / numpy.correlate: x[n] (*) k[m] -> y[out_n]
 *
 * Usage follows FFTW: describe the problem, make a plan once (it validates everything and
 * chooses an algorithm), execute it as often as needed, destroy it.
 *
 *     fconv_conv2d_desc d = { .n = 1, .c = 64, .h = 56, .w = 56, .k = 64, .r = 3, .s = 3,
 *                             .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1 };
 *     fconv_plan *plan;
 *     if (fconv_plan_conv2d(&d, NULL, NULL, NULL, &plan) != FCONV_OK)
 *         fprintf(stderr, "%s\n", fconv_last_error());
 *     fconv_execute(plan, x, w, NULL, y);
 *     fconv_plan_destroy(plan);
 *
 * Conventions that hold for every function below:
 *  - Every function that can fail returns an fconv_status. On failure fconv_last_error()
 *    (thread-local) names exactly what was wrong, and no output argument is written.
 *  - The caller owns every tensor. A plan owns the copies of weights/bias given to it at
 *    plan time (and whatever it derived from them). No function keeps a pointer to caller
 *    memory after it returns.
 *  - The library never prints, never exits and never aborts on bad input.
 *  - Tensors and workspaces need no particular alignment (the workspace size a plan reports
 *    includes 63 bytes of slack, which the library uses to align the pointer itself). An
 *    output y aligned to 64 bytes is faster where it is large: rows then leave through
 *    non-temporal stores, which skip reading y's lines before writing them. On Intel cores,
 *    where a vector load across two cache lines costs about two, an input x aligned to 64
 *    bytes also spares 1x1 layers with up to 64 input channels a copy (GEMM's packing), and
 *    layers with few input and output channels on wide images (3 -> 1), which read x's rows
 *    in place, about 8% of their time (3 -> 1 3x3 on 1024^2, Emerald Rapids).
 *  - Sizes are int64_t. Every dimension must lie in [1, FCONV_MAX_DIM] and every tensor
 *    must hold at most FCONV_MAX_ELEMENTS elements; every product is overflow-checked.
 *  - Structs and enums only grow at their end within one major version.
 *  - Threads: one call uses the plan's thread count (options.threads; 0 = all cores, the
 *    OpenMP default) through OpenMP. Called from inside the caller's own OpenMP parallel
 *    region, it runs serially on the calling thread (no nested oversubscription). OpenBLAS
 *    is set to one thread process-wide at the first plan, since fastconv shares the work out
 *    around it, and its idle thread pool is shut down then (its spinning workers slowed every
 *    fresh process; OpenBLAS restarts it if asked for threads later). Results are
 *    bit-identical for every thread count on a given ISA.
 *  - Concurrency rule: one plan may be executed from many caller threads at once (pthreads,
 *    a thread pool, an OpenMP region), each on its own output and workspace (or NULL), with
 *    results identical to serial runs. Outside an OpenMP region each call starts its own team
 *    of fconv_plan_threads() threads, so a caller running T calls at once should plan with
 *    threads = 1 (or cores / T) to keep from oversubscribing. Planning and destroying are
 *    thread-safe too (FFTW's planner is serialized inside). docs/reliability.md has the tests.
 *  - SIMD: CPU kernels are compiled for scalar, AVX2+FMA and AVX-512 and chosen at run time
 *    (cpuid + XGETBV); the environment variable FCONV_ISA=scalar|avx2|avx512 caps the choice
 *    for the whole process and options.max_isa for one plan. Different ISAs agree within each
 *    algorithm's error bound, not bit for bit.
 */
#ifndef FASTCONV_H
#define FASTCONV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(FCONV_BUILDING_LIBRARY) && defined(__GNUC__)
#define FCONV_API __attribute__((visibility("default")))
#else
#define FCONV_API
#endif

#define FCONV_VERSION_MAJOR 0
#define FCONV_VERSION_MINOR 1
#define FCONV_VERSION_PATCH 0

/** Largest accepted value of any single dimension (height, channels, kernel size, ...). */
#define FCONV_MAX_DIM ((int64_t)1 << 31)
/** Largest accepted number of elements in any one tensor (input, weights, output): 2^40. */
#define FCONV_MAX_ELEMENTS ((int64_t)1 << 40)

/* ---------------------------------------------------------------------------------------- */
/* Status codes                                                                             */
/* ---------------------------------------------------------------------------------------- */

/** Result of every fallible call. Values are stable; new ones are only appended. */
typedef enum fconv_status {
    FCONV_OK = 0,
    FCONV_EINVAL = 1,        /**< an argument is invalid: a bad shape, a NULL pointer, ... */
    FCONV_EUNSUPPORTED = 2,  /**< valid, but the requested algorithm/device cannot serve it */
    FCONV_ENOMEM = 3,        /**< memory allocation failed */
    FCONV_EWORKSPACE = 4,    /**< the workspace given is smaller than the plan needs */
    FCONV_ENODEVICE = 5,     /**< the requested device is not present */
    FCONV_EOVERFLOW = 6,     /**< a size exceeds FCONV_MAX_DIM / FCONV_MAX_ELEMENTS or size_t */
    FCONV_EINTERNAL = 7      /**< a library bug; please report it with fconv_last_error() */
} fconv_status;

/** Short, static description of a status code ("invalid argument", ...). Never NULL. */
FCONV_API const char *fconv_strerror(fconv_status status);

/**
 * The precise reason for the last failure in this thread, e.g.
 * "conv2d: groups 3 does not divide input channels 64". Empty string when the last call succeeded.
 * The string lives in thread-local storage owned by the library; it stays valid until
 * the next fastconv call in the same thread.
 */
FCONV_API const char *fconv_last_error(void);

/* ---------------------------------------------------------------------------------------- */
/* Enumerations                                                                             */
/* ---------------------------------------------------------------------------------------- */

/**
 * Algorithms. FCONV_ALGO_AUTO lets the plan choose; any other value asks for that one and
 * planning fails with FCONV_EUNSUPPORTED (and the reason) if it cannot serve the problem.
 * fconv_algo_info() says which exist in this build and what each serves.
 */
typedef enum fconv_algo {
    FCONV_ALGO_AUTO = 0,
    FCONV_ALGO_REFERENCE = 1,    /**< plain loops, float64 accumulation: the oracle */
    FCONV_ALGO_DIRECT = 2,
    FCONV_ALGO_IM2COL = 3,
    FCONV_ALGO_MEC = 4,
    FCONV_ALGO_WINOGRAD_2X2 = 5,
    FCONV_ALGO_WINOGRAD_4X4 = 6,
    FCONV_ALGO_WINOGRAD_6X6 = 7,
    FCONV_ALGO_FFT = 8,
    FCONV_ALGO_FFT_TILED = 9,
    FCONV_ALGO_SEPARABLE = 10,
    FCONV_ALGO_INDIRECT = 11,
    /* GPU algorithms (src/gpu/, docs/gpu.md): only on FCONV_DEVICE_OPENCL / FCONV_DEVICE_CUDA. */
    FCONV_ALGO_GPU_NAIVE = 12,        /**< one thread per output, weights in global memory */
    FCONV_ALGO_GPU_CONSTANT = 13,     /**< one thread per output, mask in constant memory */
    FCONV_ALGO_GPU_TILED_HALO = 14,   /**< shared-memory tile, halo loaded by the block */
    FCONV_ALGO_GPU_TILED_GLOBAL = 15, /**< shared-memory tile, halo read from global memory */
    FCONV_ALGO_GPU_IMPLICIT_GEMM = 16,/**< conv2d: tiled, register-blocked implicit GEMM */
    FCONV_ALGO_GPU_WINOGRAD_2X2 = 17, /**< conv2d 3x3 stride 1: Winograd F(2x2,3x3) through the GEMM */
    FCONV_ALGO_GPU_IM2COL_GEMM = 18,  /**< conv2d: im2col into a device buffer + tiled GEMM */
    /* Algorithms added later (values never change). */
    FCONV_ALGO_FFT_ROWS = 19,         /**< filter2d, conv1d: row FFTs, kernel rows summed in the spectra */
    FCONV_ALGO_IMPLICIT_GEMM = 20,    /**< conv2d: im2col's GEMM reading the input in place, no column matrix */
    FCONV_ALGO_FFT_COLS = 21,         /**< filter2d: column FFTs, kernel columns summed in the spectra */
    FCONV_ALGO_WINOGRAD_STRIDE2 = 22, /**< conv2d, 5x5-8x8 kernels at stride 2: F(3x3,4x4) on the four phases */
    FCONV_ALGO_WINOGRAD_ROWS = 23,    /**< conv2d, kernels 3 wide at stride 1 along rows: F(4,3) along each row */
    FCONV_ALGO_GPU_WINOGRAD_4X4 = 24, /**< GPU conv2d 3x3 stride 1: Winograd F(4x4,3x3) through the GEMM */
    FCONV_ALGO_WINOGRAD_COLS = 25,    /**< conv2d, kernels 3 tall at stride 1: F(4,3) down each column */
    FCONV_ALGO_COUNT_ = 26       /**< not an algorithm: one past the last value */
} fconv_algo;

/** Which part of the full convolution filter2d / conv1d return (DESIGN.md §2). */
typedef enum fconv_mode {
    FCONV_MODE_FULL = 0,   /**< every output the kernel touches: n + m - 1 */
    FCONV_MODE_SAME = 1,   /**< full[(m-1)/2 + i], i in [0, n): as scipy.signal.convolve2d */
    FCONV_MODE_VALID = 2   /**< kernel entirely inside: n - m + 1 (m > n is FCONV_EINVAL) */
} fconv_mode;

/**
 * How filter2d extends the image beyond its edges (row "abcd", '|' marks the edge).
 * Where the kernel reaches farther than one image width, numpy.pad's rule applies
 * (reflections and wraps repeat).
 */
typedef enum fconv_border {
    FCONV_BORDER_ZERO = 0,      /**< 000|abcd      numpy 'constant' 0, OpenCV BORDER_CONSTANT */
    FCONV_BORDER_CONSTANT = 1,  /**< VVV|abcd      border_value V */
    FCONV_BORDER_REPLICATE = 2, /**< aaa|abcd      numpy 'edge', OpenCV BORDER_REPLICATE */
    FCONV_BORDER_REFLECT = 3,   /**< cba|abcd      numpy 'symmetric', scipy 'symm' */
    FCONV_BORDER_MIRROR = 4,    /**< dcb|abcd      numpy 'reflect', OpenCV BORDER_REFLECT_101 */
    FCONV_BORDER_WRAP = 5       /**< bcd|abcd      numpy 'wrap', scipy 'wrap' */
} fconv_border;

/** Activation fused into conv2d after the bias. */
typedef enum fconv_activation {
    FCONV_ACTIVATION_NONE = 0,
    FCONV_ACTIVATION_RELU = 1   /**< y = max(y, 0); NaN stays NaN */
} fconv_activation;

/** Where a plan runs. A device that is absent (or not built in) makes planning fail with
 *  FCONV_ENODEVICE; the library never falls back to the CPU silently. */
typedef enum fconv_device {
    FCONV_DEVICE_CPU = 0,
    FCONV_DEVICE_OPENCL = 1,  /**< the first OpenCL GPU, else the first OpenCL device (PoCL) */
    FCONV_DEVICE_CUDA = 2     /**< CUDA device 0 */
} fconv_device;

/**
 * SIMD instruction sets the CPU kernels are compiled for (see fconv_options.max_isa and
 * fconv_isa_report()). Ordered: a larger value is a wider ISA.
 */
typedef enum fconv_isa {
    FCONV_ISA_AUTO = 0,     /**< the best one this CPU and OS support (and FCONV_ISA allows) */
    FCONV_ISA_SCALAR = 1,   /**< portable C, one float at a time */
    FCONV_ISA_AVX2 = 2,     /**< AVX2 + FMA, 8 floats */
    FCONV_ISA_AVX512 = 3    /**< AVX-512 F/BW/VL/DQ, 16 floats */
} fconv_isa;

/**
 * How conv2d's input and output lie in memory. The weights are w[K][C/G][R][S] in both.
 */
typedef enum fconv_layout {
    FCONV_LAYOUT_NCHW = 0, /**< x[N][C][H][W], y[N][K][P][Q] (PyTorch's default) */
    FCONV_LAYOUT_NHWC = 1  /**< x[N][H][W][C], y[N][P][Q][K] (channels_last, TensorFlow,
                                XNNPACK): implicit-gemm and the reference run it as it lies,
                                winograd-2x2/4x4/6x6 too where C and K are multiples of 16
                                and groups = 1; every other algorithm through an NCHW copy of
                                x and y in the workspace (fconv_plan_explain says so) */
} fconv_layout;

/* ---------------------------------------------------------------------------------------- */
/* Problem descriptors. Zero-initialize, then set fields (C99 designated initializers).     */
/* Fields documented "0 means 1" may be left at zero.                                      */
/* ---------------------------------------------------------------------------------------- */

/**
 * conv2d, exactly torch.nn.functional.conv2d (cross-correlation):
 *   y[n][k][p][q] = act( bias[k] + sum_{c,r,s} x[n][g*C/G + c][p*sh - pt + r*dh][q*sw - pl + s*dw]
 *                                              * w[k][c][r][s] )
 * with g = k / (K/G), zero outside the input, and
 *   P = (H + pad_top + pad_bottom - dilation_h*(R-1) - 1) / stride_h + 1   (floor)
 *   Q = (W + pad_left + pad_right - dilation_w*(S-1) - 1) / stride_w + 1
 * Requirements: P, Q >= 1; groups divides C and K; padding >= 0 (any size).
 * The same sums with layout FCONV_LAYOUT_NHWC, x and y indexed [n][h][w][c] and [n][p][q][k].
 */
typedef struct fconv_conv2d_desc {
    int64_t n, c, h, w;          /**< input x[N][C][H][W]; n == 0 means 1 */
    int64_t k, r, s;             /**< weights w[K][C/groups][R][S] */
    int64_t stride_h, stride_w;  /**< 0 means 1 */
    int64_t pad_top, pad_left, pad_bottom, pad_right; /**< zero padding, >= 0 */
    int64_t dilation_h, dilation_w; /**< 0 means 1 */
    int64_t groups;              /**< 0 means 1; groups == C (and K multiple of C) is depthwise */
    int has_bias;                /**< nonzero: bias[K] is added */
    fconv_activation activation; /**< fused after the bias */
    fconv_layout layout;         /**< of x and y; 0 (zero-initialized) is NCHW */
} fconv_conv2d_desc;

/**
 * filter2d, the signal-processing convention (scipy.signal.convolve2d):
 *   full[i][j] = sum_{a,b} k[a][b] * xe[i - a][j - b]   (true convolution, kernel flipped)
 * where xe is x extended by the border rule; the mode picks a window of full along each
 * axis (see fconv_mode); correlate = convolve with the kernel flipped along both axes
 * (cv2.filter2D, scipy.ndimage.correlate). The image is x[H][W][CH], channels interleaved;
 * each channel is filtered independently with the same kernel.
 * Output: OH x OW x CH with OH = H + KH - 1 (full), H (same), H - KH + 1 (valid); same for W.
 */
typedef struct fconv_filter2d_desc {
    int64_t h, w;            /**< image height and width */
    int64_t channels;        /**< interleaved channels; 0 means 1 */
    int64_t kh, kw;          /**< kernel k[KH][KW] */
    fconv_mode mode;
    fconv_border border;
    float border_value;      /**< the V of FCONV_BORDER_CONSTANT */
    int correlate;           /**< nonzero: correlation instead of convolution */
} fconv_filter2d_desc;

/**
 * conv1d, numpy.convolve (correlate == 0) / numpy.correlate (correlate != 0):
 *   full[j] = sum_t k[t] * x[j - t], zero outside x; modes as fconv_mode.
 * Output length: n + m - 1 (full), n (same), n - m + 1 (valid).
 * For m > n, 'same' still returns n values (as scipy.signal.convolve; numpy returns m).
 */
typedef struct fconv_conv1d_desc {
    int64_t n;               /**< signal length */
    int64_t m;               /**< kernel length */
    fconv_mode mode;
    int correlate;
} fconv_conv1d_desc;

/** Plan flags (fconv_options.flags). */
#define FCONV_PLAN_NO_WORKSPACE 0x1u /**< accept only algorithms that need no workspace */
/** With FCONV_ALGO_AUTO: time every eligible candidate at plan time on generated data of
 *  the problem's shape (the weights given, if any; else generated ones passed to every
 *  execute, as the plan will take them), choose the fastest and record it as
 *  wisdom (see "Wisdom" below); where the runner-up came within 25% of it, the two are timed
 *  again in alternated rounds (both planned at once, so both workspaces must fit
 *  max_workspace_bytes together) and the faster there wins. Planning then takes about as
 *  long as a few executions of each candidate. Ignored for a named algorithm. */
#define FCONV_PLAN_MEASURE 0x2u

/**
 * How to plan. Pass NULL for all defaults; a zero-initialized struct is the defaults too.
 */
typedef struct fconv_options {
    fconv_algo algo;              /**< FCONV_ALGO_AUTO (default) or a named algorithm */
    int threads;                  /**< 0: all cores (OpenMP default); 1: serial; N: N threads */
    size_t max_workspace_bytes;   /**< 0: no limit; else AUTO only picks algorithms within it
                                       and a named algorithm beyond it is FCONV_EUNSUPPORTED */
    double tolerance;             /**< max normalized error accepted from an algorithm
                                       (DESIGN.md §4); 0: FCONV_DEFAULT_TOLERANCE */
    unsigned flags;               /**< FCONV_PLAN_* bits */
    fconv_device device;          /**< FCONV_DEVICE_CPU (default); on a GPU device only the
                                       GPU algorithms run (AUTO picks among them) and
                                       fconv_execute takes HOST pointers (see below) */
    fconv_isa max_isa;            /**< FCONV_ISA_AUTO (default): the best available; else the
                                       widest CPU ISA the plan may use (a wider one than this
                                       machine runs caps nothing; fconv_plan_isa() tells) */
} fconv_options;

/** The accuracy AUTO demands unless told otherwise: no algorithm whose documented
 *  normalized error bound exceeds this is chosen silently. */
#define FCONV_DEFAULT_TOLERANCE 1e-5

/* ---------------------------------------------------------------------------------------- */
/* Plans                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/** Opaque plan. Immutable after creation: one plan may be executed from many threads at
 *  once, on distinct outputs (each call with its own workspace, or NULL). */
typedef struct fconv_plan fconv_plan;

/**
 * Plan a conv2d. weights (w[K][C/groups][R][S]) and bias (bias[K], only with has_bias) may
 * be given now — the plan copies them and may pre-transform them once — or NULL to be
 * given to every fconv_execute instead.
 * Returns FCONV_OK and *plan, or FCONV_EINVAL (bad descriptor or options, NULL desc/plan),
 * FCONV_EOVERFLOW (sizes beyond the limits), FCONV_EUNSUPPORTED (the algorithm asked for
 * cannot serve this problem, or none fits the workspace budget / tolerance),
 * FCONV_ENODEVICE, FCONV_ENOMEM. The caller destroys *plan with fconv_plan_destroy.
 */
FCONV_API fconv_status fconv_plan_conv2d(const fconv_conv2d_desc *desc, const fconv_options *options,
                                         const float *weights, const float *bias, fconv_plan **plan);

/** Plan a filter2d; kernel (k[KH][KW]) now or NULL for later. Statuses as fconv_plan_conv2d. */
FCONV_API fconv_status fconv_plan_filter2d(const fconv_filter2d_desc *desc, const fconv_options *options,
                                           const float *kernel, fconv_plan **plan);

/** Plan a conv1d; kernel (k[m]) now or NULL for later. Statuses as fconv_plan_conv2d. */
FCONV_API fconv_status fconv_plan_conv1d(const fconv_conv1d_desc *desc, const fconv_options *options,
                                         const float *kernel, fconv_plan **plan);

/** Free a plan and all it owns. NULL is allowed and does nothing. */
FCONV_API void fconv_plan_destroy(fconv_plan *plan);

/**
 * The output's shape: conv2d [N, K, P, Q] (ndim 4; [N, P, Q, K] with FCONV_LAYOUT_NHWC),
 * filter2d [OH, OW, CH] (ndim 3),
 * conv1d [out_n] (ndim 1). shape must hold 4 values. Returns the number of dimensions,
 * or 0 if plan or shape is NULL.
 */
FCONV_API int fconv_plan_output_shape(const fconv_plan *plan, int64_t shape[4]);

/** Number of float elements of the plan's input, weights (kernel) and output tensors;
 *  0 for a NULL plan. */
FCONV_API int64_t fconv_plan_input_elements(const fconv_plan *plan);
FCONV_API int64_t fconv_plan_weight_elements(const fconv_plan *plan);
FCONV_API int64_t fconv_plan_output_elements(const fconv_plan *plan);

/** Bytes of scratch memory fconv_execute_with_workspace needs (0 for some algorithms). */
FCONV_API size_t fconv_plan_workspace_size(const fconv_plan *plan);

/** Bytes of device memory a GPU plan holds for its life (the library's, freed by
 *  fconv_plan_destroy): plan-time weights and bias, transformed filters, column buffers,
 *  scratch and partial sums. Each execute also allocates its operands (x, y, and w / bias
 *  when they differ from the plan's) and frees them before returning; those are not counted.
 *  0 for a CPU plan or a NULL plan. */
FCONV_API size_t fconv_plan_device_bytes(const fconv_plan *plan);

/** The algorithm the plan runs (what AUTO chose), FCONV_ALGO_AUTO for a NULL plan. */
FCONV_API fconv_algo fconv_plan_algo(const fconv_plan *plan);

/** Why that algorithm: e.g. "auto: direct has the lowest estimated cost (...)".
 *  Owned by the plan; valid until it is destroyed. */
FCONV_API const char *fconv_plan_explain(const fconv_plan *plan);

/** Threads the plan will use (after resolving 0 to the OpenMP default). */
FCONV_API int fconv_plan_threads(const fconv_plan *plan);

/**
 * Run a plan: y = conv(x, w) (+ bias, activation). x, y: the plan's input and output
 * tensors (fconv_plan_*_elements floats each), which must not overlap. w and bias: NULL
 * when the plan was given them, else required (bias only with has_bias). Allocates the
 * workspace it needs and frees it before returning. A thread that runs fastconv's work for
 * the first time (the caller's, or one of OpenMP's) also allocates its scratch buffers, up to
 * ~1.4 MiB, which the library keeps until that thread exits.
 * Returns FCONV_OK, FCONV_EINVAL (a NULL or misplaced pointer), FCONV_ENOMEM (the workspace,
 * or a thread's scratch: y is then incomplete).
 * Thread-safe for concurrent calls on distinct outputs.
 */
FCONV_API fconv_status fconv_execute(const fconv_plan *plan, const float *x, const float *w,
                                     const float *bias, float *y);

/**
 * As fconv_execute, with the caller's workspace (workspace_bytes >= fconv_plan_workspace_size,
 * else FCONV_EWORKSPACE; workspace may be NULL when the plan needs none). Allocates nothing
 * but a thread's scratch on its first run, as fconv_execute (FCONV_ENOMEM).
 */
FCONV_API fconv_status fconv_execute_with_workspace(const fconv_plan *plan, const float *x,
                                                    const float *w, const float *bias, float *y,
                                                    void *workspace, size_t workspace_bytes);

/* ---------------------------------------------------------------------------------------- */
/* Names and introspection                                                                  */
/* ---------------------------------------------------------------------------------------- */

/** Problem kinds, as bits of fconv_algo_info.serves. */
#define FCONV_SERVES_CONV2D   0x1u
#define FCONV_SERVES_FILTER2D 0x2u
#define FCONV_SERVES_CONV1D   0x4u

/** What an algorithm is, for tools and documentation. */
typedef struct fconv_algo_info {
    fconv_algo algo;
    const char *name;        /**< the CLI spelling: "reference", "direct", "winograd-4x4", ... */
    const char *summary;     /**< one line */
    unsigned serves;         /**< FCONV_SERVES_* bits */
    double error_bound;      /**< documented max normalized error */
    unsigned devices;        /**< bit (1u << d) for each fconv_device d it runs on */
} fconv_algo_info;

/**
 * Fill *info for algo. Returns FCONV_OK, or FCONV_EUNSUPPORTED if the algorithm is not built
 * into this library (or not a valid value; then FCONV_EINVAL). Strings are static.
 */
FCONV_API fconv_status fconv_algo_get_info(fconv_algo algo, fconv_algo_info *info);

/** CLI name of an algorithm ("auto", "reference", ...); "unknown" for an invalid value. */
FCONV_API const char *fconv_algo_name(fconv_algo algo);

/** Parse a CLI name ("auto", "direct", ...) into *algo. FCONV_EINVAL for an unknown name. */
FCONV_API fconv_status fconv_algo_from_name(const char *name, fconv_algo *algo);

/** Library version as "MAJOR.MINOR.PATCH" (static string). */
FCONV_API const char *fconv_version(void);

/** Build options compiled in, one line, e.g. "openmp=on blas=openblas fftw=on". Static. */
FCONV_API const char *fconv_build_options(void);

/** CPU features detected at run time, e.g. "x86-64 avx2 fma avx512f", and whether the OS
 *  enables them (XGETBV). Static string. */
FCONV_API const char *fconv_cpu_features(void);

/** Which GEMM the GEMM-based algorithms (im2col, MEC, the Winograd products' NCHW driver)
 *  run, one line for `fastconv info`: OpenBLAS for narrow products and fastconv's packed
 *  micro-kernel from a column count on, or the packed micro-kernel alone and why
 *  (FCONV_GEMM=packed, or an OpenBLAS that runs kernels without AVX2 on this CPU, naming the
 *  core it chose). Decided once per process, at the first plan or query. Static string. */
FCONV_API const char *fconv_gemm_report(void);

/** Threads a plan with threads == 0 uses (the OpenMP default; 1 without OpenMP). */
FCONV_API int fconv_default_threads(void);

/* ---------------------------------------------------------------------------------------- */
/* GPU devices (FCONV_DEVICE_OPENCL, FCONV_DEVICE_CUDA; docs/gpu.md)                         */
/*                                                                                          */
/* A plan on a GPU device takes the same HOST pointers as a CPU plan: fconv_execute copies  */
/* x (and w / bias when not given at plan time) to the device, runs the kernels, copies y   */
/* back and returns when y is complete. Weights given at plan time stay on the device for   */
/* the plan's life. Executes of one device are serialized inside the library (still         */
/* thread-safe to call from many threads). The workspace size of a GPU plan is 0 (device    */
/* memory is the library's). A device failure during execute (out of device memory, a      */
/* failed launch) returns FCONV_ENOMEM or FCONV_EINTERNAL with the driver's message.        */
/* ---------------------------------------------------------------------------------------- */

/**
 * Number of devices of this kind the library can use (FCONV_DEVICE_CPU: 1). 0 when there is
 * none or the backend is not built in; fconv_last_error() then says why, e.g.
 * "cuda: no NVIDIA GPU (cudaGetDeviceCount: ...)". Never negative.
 */
FCONV_API int fconv_device_count(fconv_device device);

/**
 * Name of device index (0 <= index < fconv_device_count) written into name (len bytes, always
 * NUL-terminated, truncated if needed), e.g. "opencl: Portable Computing Language / pthread-...".
 * Index 0 is the one plans use. Returns FCONV_OK, FCONV_EINVAL (NULL name, len 0, bad index or
 * device value) or FCONV_ENODEVICE (none present; the reason in fconv_last_error()).
 */
FCONV_API fconv_status fconv_device_name(fconv_device device, int index, char *name, size_t len);

/**
 * Time of the last successful fconv_execute* of a GPU plan in the calling thread, measured
 * with device events: *kernel_ms (kernels only) and *transfer_ms (host<->device copies).
 * Per thread, like fconv_last_error(), so plans shared across threads stay immutable.
 * Returns FCONV_OK, FCONV_EINVAL (a NULL pointer) or FCONV_EUNSUPPORTED (this thread's last
 * successful execute was not on a GPU, or there was none).
 */
FCONV_API fconv_status fconv_last_execute_timing(double *kernel_ms, double *transfer_ms);

/* ---------------------------------------------------------------------------------------- */
/* Wisdom: measured algorithm choices that AUTO reuses (FFTW-style)                         */
/* ---------------------------------------------------------------------------------------- */
/*
 * A plan made with FCONV_PLAN_MEASURE (or by `fastconv tune`) records which algorithm ran
 * fastest, keyed by library version, CPU (vendor, family/model, brand string, features and
 * any FCONV_ISA cap), thread count, the complete problem descriptor and whether the weights
 * came at plan time or come at execute time (each mode timed as its plans run). Every later AUTO
 * plan with the same key takes that algorithm instead of the cost model's estimate — but
 * only if it is eligible under that plan's own tolerance and workspace budget; otherwise the
 * cost model decides. fconv_plan_explain() says which happened ("auto: wisdom: ...").
 *
 * The wisdom file is a text file, by default $FASTCONV_WISDOM, else
 * $XDG_CACHE_HOME/fastconv/wisdom, else $HOME/.cache/fastconv/wisdom (FASTCONV_WISDOM=off,
 * or an empty value, disables the file). It is read on the first AUTO plan and re-read
 * whenever its modification time or size changes; a corrupt, truncated or foreign file is
 * ignored as a whole (the reason: fconv_wisdom_describe). Measurements are merged into it
 * atomically (temporary file + rename). All functions here are thread-safe.
 */

/**
 * Use the wisdom file at path instead of the default location: NULL returns to the default
 * location, "" uses no file (wisdom then lives in memory only). Entries in memory are
 * dropped; the new file is read on the next AUTO plan. Returns FCONV_OK, or FCONV_EINVAL if
 * path is longer than 4095 bytes. The string is copied.
 */
FCONV_API fconv_status fconv_wisdom_use_file(const char *path);

/** Drop every entry held in memory (the file is not touched; it is read again only when it
 *  changes or fconv_wisdom_use_file is called). */
FCONV_API void fconv_wisdom_forget(void);

/**
 * Merge the entries of the wisdom file at path into memory (same-key entries are replaced).
 * Returns FCONV_OK, FCONV_EINVAL (NULL path; or the file is unreadable, corrupt or of
 * another format version: nothing is merged and fconv_last_error() says why), FCONV_ENOMEM.
 */
FCONV_API fconv_status fconv_wisdom_import(const char *path);

/**
 * Write every entry in memory to path, atomically (a temporary file beside it, then rename).
 * Returns FCONV_OK or FCONV_EINVAL (NULL path, or the file cannot be written: the reason is
 * in fconv_last_error()).
 */
FCONV_API fconv_status fconv_wisdom_export(const char *path);

/** Number of wisdom entries in memory (all machines and versions; after reading the file
 *  if it changed). */
FCONV_API int64_t fconv_wisdom_count(void);

/**
 * One line about the wisdom in use, e.g. "wisdom file /home/u/.cache/fastconv/wisdom: 12
 * entries" or "... ignored: line 3: unknown algorithm 'foo'", written to buf (always
 * NUL-terminated, truncated to len). Returns FCONV_OK, or FCONV_EINVAL for a NULL buf or a
 * len of 0.
 */
FCONV_API fconv_status fconv_wisdom_describe(char *buf, size_t len);

/* ---------------------------------------------------------------------------------------- */
/* UMI                                                                                      */
/* The unrolled-memory inner-product operator (Lin, Chen & Chien): for every point p of a   */
/* parallel index space, combine two unrolled views U(A)[p][a] and U(B)[p][a] element by    */
/* element over an accumulation index space a, and reduce with a strategy:                  */
/*     state = pre(init[p]);  for a: state = step(state, U(A)[p][a], U(B)[p][a]);           */
/*     y[p] = post(state)                                                                   */
/* The unrolled matrices are never built: every element is read from the original tensor   */
/* through the view's (axis, stride, offset) per index component (the paper's Eq. 5):       */
/*     x_i = sum over components j with axis_j == i of (k_j * stride_j + offset_j)          */
/* docs/umi.md explains it with examples (convolution, SAD block matching, bilateral).      */
/* ---------------------------------------------------------------------------------------- */

/** Most parallel / accumulation index components, and most axes of a viewed tensor. */
#define FCONV_UMI_MAX_COMPONENTS 4
#define FCONV_UMI_MAX_AXES 4

/** How one index component k_j moves through the tensor: along `axis` by `stride` per
 *  step, starting `offset` away. A zeroed component moves nothing (axis 0, stride 0). */
typedef struct fconv_umi_component {
    int axis;                /**< tensor axis walked, in [0, ndim) */
    int64_t stride;          /**< elements of that axis per index step (may be 0 or < 0);
                                  |stride| <= FCONV_MAX_DIM */
    int64_t offset;          /**< added once; |offset| <= FCONV_MAX_DIM */
} fconv_umi_component;

/** What a view reads where its coordinates fall outside the tensor. */
typedef enum fconv_umi_border {
    FCONV_UMI_BORDER_NONE = 0,      /**< default: the plan is refused if any read could fall
                                         outside (checked exactly at plan time) */
    FCONV_UMI_BORDER_ZERO = 1,      /**< outside reads 0 */
    FCONV_UMI_BORDER_REPLICATE = 2, /**< clamp to the nearest edge (aaa|abcd) */
    FCONV_UMI_BORDER_MIRROR = 3,    /**< reflect without repeating the edge (dcb|abcd),
                                         OpenCV's BORDER_REFLECT_101 / default */
    FCONV_UMI_BORDER_SKIP = 4       /**< the element pair is left out of the reduction (the
                                         strategy's step is not called for it) */
} fconv_umi_border;

/**
 * An unrolled view of one tensor t[shape[0]]...[shape[ndim-1]] (C order, float32):
 * par[j] describes parallel component j (j < desc.n_par), acc[j] accumulation component j
 * (j < desc.n_acc); components beyond those counts are ignored.
 */
typedef struct fconv_umi_view {
    int ndim;                                       /**< 1..FCONV_UMI_MAX_AXES */
    int64_t shape[FCONV_UMI_MAX_AXES];              /**< each in [1, FCONV_MAX_DIM] */
    fconv_umi_component par[FCONV_UMI_MAX_COMPONENTS];
    fconv_umi_component acc[FCONV_UMI_MAX_COMPONENTS];
    fconv_umi_border border;
} fconv_umi_view;

/**
 * Strategies (pre / step / post). init is the init view's value at p (0 without one);
 * s, w, n are the running state; a and b the elements of U(A) and U(B).
 */
typedef enum fconv_umi_strategy {
    FCONV_UMI_DOT = 0,             /**< s = init; s += a*b; y = s  (convolution, bias as init) */
    FCONV_UMI_DOT_RELU = 1,        /**< as DOT, y = max(s, 0) (NaN stays NaN) */
    FCONV_UMI_DOT_LEAKY_RELU = 2,  /**< as DOT, y = s >= 0 ? s : param[0] * s */
    FCONV_UMI_DOT_SIGMOID = 3,     /**< as DOT, y = 1 / (1 + exp(-s)) */
    FCONV_UMI_DOT_TANH = 4,        /**< as DOT, y = tanh(s) */
    FCONV_UMI_SAD = 5,             /**< s = 0; s += |a - b|; y = s  (block matching) */
    FCONV_UMI_SSD = 6,             /**< s = 0; s += (a - b)^2; y = s */
    FCONV_UMI_BILATERAL = 7,       /**< c = init (centre); w = b * exp(-(a - c)^2 * param[0]);
                                        n += w * a; s += w; y = s > 0 ? n / s : c.
                                        A: neighbours, B: spatial weights, init: centre;
                                        param[0] = 1 / (2 sigma_range^2) */
    FCONV_UMI_CALLBACK = 8,        /**< the caller's functions (fconv_umi_callbacks) */
    FCONV_UMI_ABSDIFF = 9          /**< elementwise, n_acc must be 0: y = |a - b| with a, b read
                                        at p (a SKIP border outside gives 0). The first step
                                        of a separable SAD: box-sum its planes (docs/umi.md) */
} fconv_umi_strategy;

/** Size of the state a callback strategy works on. */
#define FCONV_UMI_STATE_SIZE 8

/**
 * A user strategy in C. Called once per parallel point (pre, post) and once per element
 * pair (step), through function pointers: much slower than the built-in strategies, which
 * are inlined and vectorized. Called concurrently from several threads, each on its own
 * state: the functions must be thread-safe; user is shared and read-only.
 */
typedef struct fconv_umi_callbacks {
    void (*pre)(double state[FCONV_UMI_STATE_SIZE], float init, const void *user); /**< may be NULL:
                                                              state zeroed, state[0] = init */
    void (*step)(double state[FCONV_UMI_STATE_SIZE], float a, float b, const void *user); /**< required */
    float (*post)(const double state[FCONV_UMI_STATE_SIZE], const void *user);  /**< required */
    const void *user;                                     /**< passed to every call */
} fconv_umi_callbacks;

/**
 * The operator. Output: y[par_extent[0]]...[par_extent[n_par-1]], dense, C order.
 * Which views are needed: DOT*: a, b, init optional (e.g. a bias); SAD/SSD/ABSDIFF: a, b, no init;
 * BILATERAL: a, b, init; CALLBACK: a, b and init optional (b missing reads 0 and init 0).
 * The init view is read at p only: its acc components are ignored.
 */
typedef struct fconv_umi_desc {
    int n_par;                                      /**< 1..FCONV_UMI_MAX_COMPONENTS */
    int64_t par_extent[FCONV_UMI_MAX_COMPONENTS];   /**< each in [1, FCONV_MAX_DIM] */
    int n_acc;                                      /**< 0..FCONV_UMI_MAX_COMPONENTS (0: y = post(pre)) */
    int64_t acc_extent[FCONV_UMI_MAX_COMPONENTS];
    fconv_umi_view a;
    fconv_umi_view b;
    fconv_umi_view init;
    int has_b, has_init;                            /**< nonzero: the view is used */
    fconv_umi_strategy strategy;
    float param[4];                                 /**< strategy parameters (see above) */
    const fconv_umi_callbacks *callbacks;           /**< FCONV_UMI_CALLBACK only; copied */
} fconv_umi_desc;

/** Opaque UMI plan; immutable, executable from many threads on distinct outputs. */
typedef struct fconv_umi_plan fconv_umi_plan;

/**
 * Validate desc and make a plan. options: NULL or as for the other plans (threads is used on
 * the CPU; algo must be FCONV_ALGO_AUTO). device: FCONV_DEVICE_CPU, or a GPU device, which
 * runs every built-in strategy (not CALLBACK) with host pointers (docs/umi.md). Every read
 * the plan will make is checked here: a view with FCONV_UMI_BORDER_NONE that could read
 * outside its tensor is refused, naming the view, the axis and the index range.
 * Returns FCONV_OK and *plan (destroy with fconv_umi_plan_destroy), or FCONV_EINVAL (bad
 * descriptor, NULL desc/plan, missing or superfluous view), FCONV_EOVERFLOW (sizes beyond
 * FCONV_MAX_DIM / FCONV_MAX_ELEMENTS), FCONV_EUNSUPPORTED (the CALLBACK strategy on a GPU
 * device), FCONV_ENODEVICE (the GPU device is absent; the reason in fconv_last_error()),
 * FCONV_ENOMEM. On failure *plan is not written.
 */
FCONV_API fconv_status fconv_umi_plan_create(const fconv_umi_desc *desc, const fconv_options *options,
                                             fconv_umi_plan **plan);

/**
 * Run the plan: y = UMI(a, b, init). a, b, init: the viewed tensors (b / init NULL when the
 * descriptor has none); y: fconv_umi_plan_output_elements floats, not overlapping the
 * inputs. On the CPU allocates nothing; on a GPU device copies the tensors to device memory
 * and y back (serialized per device; fconv_last_execute_timing has the times). Returns FCONV_OK
 * or FCONV_EINVAL (NULL plan or a required pointer NULL), on a GPU also a device error
 * (FCONV_ENOMEM for device memory). Thread-safe for concurrent calls on distinct outputs.
 */
FCONV_API fconv_status fconv_umi_execute(const fconv_umi_plan *plan, const float *a, const float *b,
                                         const float *init, float *y);

/** Number of output floats (product of par_extent); 0 for a NULL plan. */
FCONV_API int64_t fconv_umi_plan_output_elements(const fconv_umi_plan *plan);

/** Free a UMI plan. NULL is allowed. */
FCONV_API void fconv_umi_plan_destroy(fconv_umi_plan *plan);

/* ---------------------------------------------------------------------------------------- */
/* SIMD instruction sets of the CPU kernels (src/core/dispatch.c, docs/kernels.md)          */
/* ---------------------------------------------------------------------------------------- */

/** The ISA whose kernels the plan runs: the best one compiled in that the CPU and OS support,
 *  capped by the FCONV_ISA environment variable and by options.max_isa. FCONV_ISA_AUTO for a
 *  NULL plan. */
FCONV_API fconv_isa fconv_plan_isa(const fconv_plan *plan);

/** The ISA a plan with max_isa == FCONV_ISA_AUTO uses on this machine (after FCONV_ISA). */
FCONV_API fconv_isa fconv_isa_default(void);

/** Name of an ISA: "auto", "scalar", "avx2", "avx512"; "unknown" for an invalid value. Static. */
FCONV_API const char *fconv_isa_name(fconv_isa isa);

/** One line for `fastconv info`: the default ISA, the ISAs compiled in, those this machine can
 *  run, and what the FCONV_ISA environment variable did (e.g. "avx2 (compiled: scalar avx2
 *  avx512; runnable: scalar avx2; FCONV_ISA=avx512 cannot run here, using avx2)"). The
 *  variable is read once per process, at the first plan or query. Static string. */
FCONV_API const char *fconv_isa_report(void);

#ifdef __cplusplus
}
#endif

#endif /* FASTCONV_H */
