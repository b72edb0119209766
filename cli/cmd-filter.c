/*
 * cmd-filter.c — `fastconv filter`: filter an image or a 2D/3D .npy with one or more
 * kernels, one output per kernel, the input read once. Alpha channels pass through
 * unfiltered (moved by the same mode and border as the colour channels, so they stay
 * aligned in full and valid modes too). Every output's format is checked before any work.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "io/image.h"
#include "kernels.h"

#define MAX_PAIRS 64

static const char filter_help[] =
    "usage: fastconv filter INPUT -k KERNEL -o OUTPUT [-k KERNEL -o OUTPUT ...] [options]\n"
    "\n"
    "Filter an image or array with 2D kernels (scipy.signal.convolve2d semantics).\n"
    "INPUT   .npy (2D HxW or 3D HxWxC, float32/float64) or an image (PNG, JPEG, PGM/PPM;\n"
    "        gray, gray+alpha, RGB, RGBA; alpha passes through unfiltered)\n"
    "-k, --kernel K   a built-in kernel or a 2D .npy file; built-in:\n"
    "                 %s\n"
    "-o, --output F   .npy (float32 results) or .png/.jpg/.jpeg/.pgm/.ppm (clamped to the\n"
    "                 format's range); -k and -o come in pairs, one output per kernel\n"
    "--mode M         same (default), full or valid\n"
    "--border B       zero (default), constant=V, replicate, reflect, mirror, wrap\n"
    "--correlate      correlate (as cv2.filter2D) instead of convolving\n"
    "--normalize      image outputs: stretch min..max to the full range instead of clamping\n"
    "--bit-depth D    image outputs: 8 or 16 (PNG/PGM/PPM); default: the input image's (JPEG: 8),\n"
    "                 else 8; an image input is rescaled when the depths differ\n"
    "--algo NAME      algorithm (default auto; see `fastconv info`)\n"
    "--threads N      threads (default 0 = all cores)\n"
    "--device D       cpu (default), opencl or cuda (see `fastconv info`)\n"
    "--max-workspace S  most scratch memory (e.g. 64M; 0: none); AUTO picks within it\n";

struct filter_args {
    const char *input;
    const char *kernels[MAX_PAIRS];
    const char *outputs[MAX_PAIRS];
    int n_kernels, n_outputs;
    fconv_filter2d_desc desc;
    fconv_options options;
    int normalize;
    int bit_depth; /* 0: default */
};

static int parse_filter_args(int argc, char **argv, struct filter_args *a) {
    enum { OPT_MODE = 256, OPT_BORDER, OPT_CORRELATE, OPT_NORMALIZE, OPT_DEPTH };
    static const struct option longopts[] = {
        {"kernel", required_argument, NULL, 'k'},   {"output", required_argument, NULL, 'o'},
        {"mode", required_argument, NULL, OPT_MODE}, {"border", required_argument, NULL, OPT_BORDER},
        {"correlate", no_argument, NULL, OPT_CORRELATE},
        {"normalize", no_argument, NULL, OPT_NORMALIZE},
        {"bit-depth", required_argument, NULL, OPT_DEPTH},
        {"help", no_argument, NULL, 'h'},
        CLI_PLAN_LONGOPTS, {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    a->desc.mode = FCONV_MODE_SAME;
    int c;
    int64_t v;
    while ((c = getopt_long(argc, argv, ":k:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'k':
            if (a->n_kernels == MAX_PAIRS) return cli_usage_error("filter: at most %d kernels", MAX_PAIRS);
            a->kernels[a->n_kernels++] = optarg;
            break;
        case 'o':
            if (a->n_outputs == MAX_PAIRS) return cli_usage_error("filter: at most %d outputs", MAX_PAIRS);
            a->outputs[a->n_outputs++] = optarg;
            break;
        case OPT_MODE:
            if (cli_parse_mode(optarg, &a->desc.mode)) return CLI_EXIT_USAGE;
            break;
        case OPT_BORDER:
            if (cli_parse_border(optarg, &a->desc.border, &a->desc.border_value)) return CLI_EXIT_USAGE;
            break;
        case OPT_CORRELATE: a->desc.correlate = 1; break;
        case OPT_NORMALIZE: a->normalize = 1; break;
        case OPT_DEPTH:
            if (cli_parse_int("--bit-depth", optarg, 8, 16, &v)) return CLI_EXIT_USAGE;
            if (v != 8 && v != 16) return cli_usage_error("--bit-depth: must be 8 or 16, got %lld", (long long)v);
            a->bit_depth = (int)v;
            break;
        case 'h': printf(filter_help, cli_kernel_names()); return -1;
        default: {
            int shared = cli_parse_plan_option(c, optarg, &a->options);
            if (shared < 0) return CLI_EXIT_USAGE;
            if (shared == 0) return cli_report_getopt_error("filter", argv, c);
            break;
        }
        }
    }
    if (optind == argc) return cli_usage_error("filter: missing INPUT (see fastconv filter --help)");
    if (argc - optind > 1) return cli_usage_error("filter: unexpected argument '%s'", argv[optind + 1]);
    a->input = argv[optind];
    if (a->n_kernels == 0) return cli_usage_error("filter: missing -k KERNEL");
    if (a->n_kernels != a->n_outputs)
        return cli_usage_error("filter: %d kernels but %d outputs: give -k and -o in pairs",
                               a->n_kernels, a->n_outputs);
    return CLI_EXIT_OK;
}

/* The bit depth an image output gets: --bit-depth, else the input image's (JPEG holds 8). */
static int output_bit_depth(const struct filter_args *a, const struct cli_raster *in, const char *path) {
    if (a->bit_depth) return a->bit_depth;
    if (fconv_io_format_from_path(path) == FCONV_IO_FORMAT_JPEG) return 8;
    return in->bit_depth ? in->bit_depth : 8;
}

/* Refuse outputs that cannot be written before doing any work, so a failing run writes nothing. */
static int check_output(const struct filter_args *a, const char *path, const struct cli_raster *in) {
    fconv_io_format f = fconv_io_format_from_path(path);
    if (f == FCONV_IO_FORMAT_UNKNOWN)
        return cli_usage_error("%s: unknown output format (use .npy, .png, .jpg, .jpeg, .pgm, .ppm)", path);
    if (cli_check_output_path(path)) return CLI_EXIT_FAILURE;
    if (f == FCONV_IO_FORMAT_NPY) return 0;
    int64_t ch = in->channels;
    if (ch > 4) return cli_fail("%s: cannot write %lld channels as an image; use .npy", path, (long long)ch);
    if ((f == FCONV_IO_FORMAT_JPEG || f == FCONV_IO_FORMAT_PNM) && (ch == 2 || ch == 4))
        return cli_fail("%s: %s cannot hold an alpha channel; use .png", path,
                        f == FCONV_IO_FORMAT_JPEG ? "JPEG" : "PGM/PPM");
    if (cli_has_extension(path, ".pgm") && ch != 1)
        return cli_fail("%s: PGM holds 1 channel (gray), the result has %lld; use .ppm or .png", path, (long long)ch);
    if (cli_has_extension(path, ".ppm") && ch != 3)
        return cli_fail("%s: PPM holds 3 channels (RGB), the result has %lld; use .pgm or .png", path, (long long)ch);
    if (f == FCONV_IO_FORMAT_JPEG && output_bit_depth(a, in, path) == 16)
        return cli_fail("%s: JPEG holds 8 bits per sample; use .png for 16", path);
    return 0;
}

/* Run one filter2d plan over an interleaved image with `channels` channels. */
static int run_filter(const fconv_filter2d_desc *base, const fconv_options *options, int64_t h,
                      int64_t w, int64_t channels, const float *kernel, int64_t kh, int64_t kw,
                      const float *x, float **y_out, int64_t *oh, int64_t *ow) {
    fconv_filter2d_desc d = *base;
    d.h = h;
    d.w = w;
    d.channels = channels;
    d.kh = kh;
    d.kw = kw;
    fconv_plan *plan;
    fconv_status st = fconv_plan_filter2d(&d, options, kernel, &plan);
    if (st != FCONV_OK) return cli_library_error("filter", st), -1;
    cli_explain_plan(plan);
    float *y = malloc((size_t)fconv_plan_output_elements(plan) * sizeof *y);
    if (!y) {
        fconv_plan_destroy(plan);
        return cli_fail("filter: out of memory for the output"), -1;
    }
    st = fconv_execute(plan, x, NULL, NULL, y);
    int64_t shape[4];
    fconv_plan_output_shape(plan, shape);
    fconv_plan_destroy(plan);
    if (st != FCONV_OK) {
        free(y);
        return cli_library_error("filter", st), -1;
    }
    *y_out = y;
    *oh = shape[0];
    *ow = shape[1];
    return 0;
}

/* Copy channels [c0, c0 + nc) of an interleaved image into a new buffer. */
static float *extract_channels(const float *x, int64_t pixels, int64_t channels, int64_t c0, int64_t nc) {
    float *out = malloc((size_t)(pixels * nc) * sizeof *out);
    if (!out) return NULL;
    for (int64_t p = 0; p < pixels; p++)
        for (int64_t c = 0; c < nc; c++) out[p * nc + c] = x[p * channels + c0 + c];
    return out;
}

/* Stretch the colour channels' min..max to [0, max_value]; alpha untouched. */
static void normalize_range(float *y, int64_t pixels, int64_t channels, int64_t colour, float max_value) {
    float lo = INFINITY, hi = -INFINITY;
    for (int64_t p = 0; p < pixels; p++)
        for (int64_t c = 0; c < colour; c++) {
            float v = y[p * channels + c];
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
    float scale = hi > lo ? max_value / (hi - lo) : 0.0f;
    for (int64_t p = 0; p < pixels; p++)
        for (int64_t c = 0; c < colour; c++) y[p * channels + c] = (y[p * channels + c] - lo) * scale;
}

/* Filter the colour channels with one kernel (or a magnitude pair); alpha moves along. */
static int filter_one(const struct filter_args *a, const struct cli_raster *in, const float *colour,
                      const float *alpha, const cli_kernel *k, float **out, int64_t *oh, int64_t *ow) {
    int64_t colour_ch = in->channels - (in->alpha ? 1 : 0);
    float *y = NULL, *y2 = NULL, *ya = NULL, *delta = NULL;
    int rc = -1;
    int64_t h, w;
    if (run_filter(&a->desc, &a->options, in->h, in->w, colour_ch, k->k, k->kh, k->kw, colour, &y, &h, &w))
        goto done;
    if (k->k_second && run_filter(&a->desc, &a->options, in->h, in->w, colour_ch, k->k_second, k->kh,
                                  k->kw, colour, &y2, &h, &w))
        goto done;
    int64_t pixels = h * w;
    if (y2)
        for (int64_t i = 0; i < pixels * colour_ch; i++) y[i] = sqrtf(y[i] * y[i] + y2[i] * y2[i]);
    if (in->alpha) {
        /* A unit impulse at the kernel's anchor reproduces alpha, shifted like the colours. */
        delta = calloc((size_t)(k->kh * k->kw), sizeof *delta);
        if (!delta) {
            cli_fail("filter: out of memory");
            goto done;
        }
        delta[((k->kh - 1) / 2) * k->kw + (k->kw - 1) / 2] = 1.0f;
        fconv_filter2d_desc d = a->desc;
        d.correlate = 0;
        /* direct adds only exact zeros to the impulse's one sample: alpha comes out bit-exact
         * (FFT or Winograd would round it). */
        fconv_options alpha_options = a->options;
        alpha_options.algo = FCONV_ALGO_DIRECT;
        if (run_filter(&d, &alpha_options, in->h, in->w, 1, delta, k->kh, k->kw, alpha, &ya, &h, &w))
            goto done;
        float *merged = malloc((size_t)(pixels * in->channels) * sizeof *merged);
        if (!merged) {
            cli_fail("filter: out of memory");
            goto done;
        }
        for (int64_t p = 0; p < pixels; p++) {
            memcpy(merged + p * in->channels, y + p * colour_ch, (size_t)colour_ch * sizeof *y);
            merged[p * in->channels + colour_ch] = ya[p];
        }
        free(y);
        y = merged;
    }
    *out = y;
    y = NULL;
    *oh = h;
    *ow = w;
    rc = 0;
done:
    free(y);
    free(y2);
    free(ya);
    free(delta);
    return rc;
}

static int write_output(const struct filter_args *a, const struct cli_raster *in, const char *path,
                        float *y, int64_t oh, int64_t ow) {
    char err[512];
    if (fconv_io_format_from_path(path) == FCONV_IO_FORMAT_NPY) {
        int64_t shape[3] = {oh, ow, in->channels};
        return cli_write_npy(path, y, in->ndim, shape);
    }
    int depth = output_bit_depth(a, in, path);
    float max_value = depth == 16 ? 65535.0f : 255.0f;
    if (a->normalize) {
        normalize_range(y, oh * ow, in->channels, in->channels - (in->alpha ? 1 : 0), max_value);
    } else if (in->bit_depth && in->bit_depth != depth) {
        /* An image keeps its look at another depth: 16-bit 65535 is 8-bit 255. */
        float scale = max_value / (in->bit_depth == 16 ? 65535.0f : 255.0f);
        for (int64_t i = 0; i < oh * ow * in->channels; i++) y[i] *= scale;
    }
    if (fconv_io_image_write(path, y, oh, ow, (int)in->channels, depth, err, sizeof err))
        return cli_fail("%s", err), -1;
    return 0;
}

int cmd_filter(int argc, char **argv) {
    struct filter_args a;
    int rc = parse_filter_args(argc, argv, &a);
    if (rc != CLI_EXIT_OK) return rc < 0 ? CLI_EXIT_OK : rc;

    cli_kernel kernels[MAX_PAIRS];
    memset(kernels, 0, sizeof kernels);
    struct cli_raster in;
    memset(&in, 0, sizeof in);
    float *colour = NULL, *alpha = NULL;
    rc = CLI_EXIT_FAILURE;

    for (int i = 0; i < a.n_kernels; i++)
        if ((rc = cli_kernel_load(a.kernels[i], &kernels[i])) != 0) goto done;
    rc = CLI_EXIT_FAILURE;
    if (cli_read_raster("filter", a.input, 3, &in)) goto done;
    for (int i = 0; i < a.n_outputs; i++) {
        int bad = check_output(&a, a.outputs[i], &in);
        if (bad) {
            rc = bad;
            goto done;
        }
    }
    if (in.alpha) {
        int64_t pixels = in.h * in.w;
        colour = extract_channels(in.data, pixels, in.channels, 0, in.channels - 1);
        alpha = extract_channels(in.data, pixels, in.channels, in.channels - 1, 1);
        if (!colour || !alpha) {
            cli_fail("filter: out of memory");
            goto done;
        }
    }
    for (int i = 0; i < a.n_kernels; i++) {
        float *y = NULL;
        int64_t oh = 0, ow = 0;
        if (filter_one(&a, &in, colour ? colour : in.data, alpha, &kernels[i], &y, &oh, &ow)) goto done;
        int bad = write_output(&a, &in, a.outputs[i], y, oh, ow);
        free(y);
        if (bad) goto done;
    }
    rc = CLI_EXIT_OK;
done:
    for (int i = 0; i < a.n_kernels; i++) cli_kernel_free(&kernels[i]);
    free(in.data);
    free(colour);
    free(alpha);
    return rc;
}
