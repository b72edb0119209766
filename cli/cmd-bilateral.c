/*
 * cmd-bilateral.c — `fastconv bilateral`: the bilateral filter as one UMI operator
 * (BILATERAL strategy): A = the neighbours (mirrored at the edges, cv2's default border),
 * B = the spatial Gaussian on a disc of radius K, init = the centre pixel. Every channel is
 * filtered on its own; an alpha channel passes through unchanged.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "frames.h"
#include "io/image.h"

static const char bilateral_help[] =
    "usage: fastconv bilateral INPUT -o OUTPUT [options]\n"
    "\n"
    "Edge-preserving bilateral filter: y = sum w x / sum w over a disc of radius K, with\n"
    "w = exp(-(i^2 + j^2) / (2 S^2)) * exp(-(x - centre)^2 / (2 R^2)); borders mirror\n"
    "(dcb|abcd, cv2.BORDER_REFLECT_101); each channel separately, alpha unchanged.\n"
    "INPUT               image (gray, RGB, with or without alpha; 8 or 16 bits) or .npy (HxW or HxWxC)\n"
    "-o, --output F      .npy (float32) or an image (rounded, clamped; the input's bit depth)\n"
    "--sigma-space S     spatial sigma in pixels (default 3)\n"
    "--sigma-range R     range sigma in the input's units (default 30)\n"
    "--radius K          window radius (default round(1.5 S), as cv2 with d <= 0; 1..64)\n"
    "--threads N         threads (default 0 = all cores)\n";

static int parse_positive(const char *option, const char *s, double *out) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v <= 0 || v > 1e6)
        return cli_usage_error("%s: expected a number in (0, 1e6], got '%s'", option, s);
    *out = v;
    return 0;
}

int cmd_bilateral(int argc, char **argv) {
    enum { OPT_SS = 256, OPT_SR, OPT_RADIUS, OPT_THREADS };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"sigma-space", required_argument, NULL, OPT_SS},
        {"sigma-range", required_argument, NULL, OPT_SR}, {"radius", required_argument, NULL, OPT_RADIUS},
        {"threads", required_argument, NULL, OPT_THREADS}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *output = NULL;
    double ss = 3, sr = 30;
    int64_t radius = -1;
    int threads = 0, c;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case OPT_SS:
            if (parse_positive("--sigma-space", optarg, &ss)) return CLI_EXIT_USAGE;
            break;
        case OPT_SR:
            if (parse_positive("--sigma-range", optarg, &sr)) return CLI_EXIT_USAGE;
            break;
        case OPT_RADIUS:
            if (cli_parse_int("--radius", optarg, 1, 64, &radius)) return CLI_EXIT_USAGE;
            break;
        case OPT_THREADS:
            if (cli_parse_threads(optarg, &threads)) return CLI_EXIT_USAGE;
            break;
        case 'h': fputs(bilateral_help, stdout); return CLI_EXIT_OK;
        default: return cli_report_getopt_error("bilateral", argv, c);
        }
    }
    if (argc - optind < 1) return cli_usage_error("bilateral: missing INPUT (see fastconv bilateral --help)");
    if (argc - optind > 1) return cli_usage_error("bilateral: unexpected argument '%s'", argv[optind + 1]);
    if (!output) return cli_usage_error("bilateral: missing -o OUTPUT");
    if (radius < 0) {
        radius = (int64_t)floor(1.5 * ss + 0.5);
        if (radius < 1) radius = 1;
        if (radius > 64) return cli_usage_error("bilateral: --sigma-space %g gives radius %lld > 64; give --radius", ss, (long long)radius);
    }
    fconv_io_format ofmt = fconv_io_format_from_path(output);
    if (ofmt == FCONV_IO_FORMAT_UNKNOWN)
        return cli_usage_error("%s: unknown output format (use .npy, .png, .jpg, .jpeg, .pgm, .ppm)", output);
    if (cli_check_output_path(output)) return CLI_EXIT_FAILURE;

    const char *input = argv[optind];
    float *x = NULL, *y = NULL, *spatial = NULL;
    int64_t h, w, ch;
    int ndim, alpha, depth, rc = CLI_EXIT_FAILURE;
    char err[512];
    struct cli_raster in;
    if (cli_read_raster("bilateral", input, 3, &in)) return CLI_EXIT_FAILURE;
    x = in.data, h = in.h, w = in.w, ch = in.channels, ndim = in.ndim, alpha = in.alpha;
    depth = in.bit_depth ? in.bit_depth : 8;
    if (ofmt != FCONV_IO_FORMAT_NPY) {
        if (ch > 4 || ((ofmt == FCONV_IO_FORMAT_JPEG || ofmt == FCONV_IO_FORMAT_PNM) && (ch == 2 || ch == 4)) ||
            (cli_has_extension(output, ".pgm") && ch != 1) || (cli_has_extension(output, ".ppm") && ch != 3)) {
            cli_fail("%s: cannot hold %lld channels%s; use .png or .npy", output, (long long)ch, alpha ? " with alpha" : "");
            goto done;
        }
        if (ofmt == FCONV_IO_FORMAT_JPEG) depth = 8;
    }
    const int64_t k = 2 * radius + 1;
    y = malloc((size_t)(h * w * ch) * sizeof *y);
    spatial = malloc((size_t)(k * k) * sizeof *spatial);
    if (!y || !spatial) {
        cli_fail("bilateral: out of memory");
        goto done;
    }
    /* The spatial weights on the disc i^2 + j^2 <= K^2 (as cv2.bilateralFilter), 0 outside. */
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < k; j++) {
            double di = (double)(i - radius), dj = (double)(j - radius), r2 = di * di + dj * dj;
            spatial[i * k + j] = r2 <= (double)(radius * radius) ? (float)exp(-r2 / (2 * ss * ss)) : 0.0f;
        }
    fconv_umi_desc d = {
        .n_par = 3, .par_extent = {h, w, ch},
        .n_acc = 2, .acc_extent = {k, k},
        .a = {.ndim = 3, .shape = {h, w, ch},
              .par = {{0, 1, 0}, {1, 1, 0}, {2, 1, 0}},
              .acc = {{0, 1, -radius}, {1, 1, -radius}}, .border = FCONV_UMI_BORDER_MIRROR},
        .b = {.ndim = 2, .shape = {k, k}, .acc = {{0, 1, 0}, {1, 1, 0}}},
        .init = {.ndim = 3, .shape = {h, w, ch}, .par = {{0, 1, 0}, {1, 1, 0}, {2, 1, 0}}},
        .has_b = 1, .has_init = 1, .strategy = FCONV_UMI_BILATERAL,
        .param = {(float)(1.0 / (2.0 * sr * sr))}};
    if (cli_run_umi("bilateral", &d, threads, x, spatial, x, y)) goto done;
    if (alpha)
        for (int64_t i = 0; i < h * w; i++) y[i * ch + ch - 1] = x[i * ch + ch - 1];
    if (ofmt == FCONV_IO_FORMAT_NPY) {
        const int64_t shape[3] = {h, w, ch};
        if (cli_write_npy(output, y, ndim, shape)) goto done;
    } else if (fconv_io_image_write(output, y, h, w, (int)ch, depth, err, sizeof err)) {
        cli_fail("%s", err);
        goto done;
    }
    rc = CLI_EXIT_OK;
done:
    free(x);
    free(y);
    free(spatial);
    return rc;
}
