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
 *    includes 63 bytes of slack, which the library uses to align the pointer itself).
 *  - Sizes are int64_t. Every dimension must lie in [1, FCONV_MAX_DIM] and every tensor
 *    must hold at most FCONV_MAX_ELEMENTS elements; every product is overflow-checked.
 *  - Structs and enums only grow at their end within one major version.
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
    FCONV_ALGO_COUNT_ = 12       /**< not an algorithm: one past the last value */
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

/** Where a plan runs. Only the CPU exists in this version. */
typedef enum fconv_device {
    FCONV_DEVICE_CPU = 0
} fconv_device;

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
    fconv_device device;          /**< FCONV_DEVICE_CPU (default) */
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
 * The output's shape: conv2d [N, K, P, Q] (ndim 4), filter2d [OH, OW, CH] (ndim 3),
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
 * workspace it needs and frees it before returning.
 * Returns FCONV_OK, FCONV_EINVAL (a NULL or misplaced pointer), FCONV_ENOMEM.
 * Thread-safe for concurrent calls on distinct outputs.
 */
FCONV_API fconv_status fconv_execute(const fconv_plan *plan, const float *x, const float *w,
                                     const float *bias, float *y);

/**
 * As fconv_execute, with the caller's workspace (workspace_bytes >= fconv_plan_workspace_size,
 * else FCONV_EWORKSPACE; workspace may be NULL when the plan needs none). Allocates nothing.
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

/** Threads a plan with threads == 0 uses (the OpenMP default; 1 without OpenMP). */
FCONV_API int fconv_default_threads(void);

#ifdef __cplusplus
}
#endif

#endif /* FASTCONV_H */
