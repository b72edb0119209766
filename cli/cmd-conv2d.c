/*
 * cmd-conv2d.c — `fastconv conv2d`: one CNN convolution layer on .npy files, exactly
 * torch.nn.functional.conv2d. A 3D C x H x W input means N = 1 and gives a 3D output;
 * with --layout nhwc the arrays are N x H x W x C and N x P x Q x K (channels last).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"

static const char conv2d_help[] =
    "usage: fastconv conv2d INPUT.npy WEIGHTS.npy -o OUTPUT.npy [options]\n"
    "\n"
    "One convolution layer, exactly torch.nn.functional.conv2d (cross-correlation).\n"
    "INPUT    N x C x H x W (or C x H x W: N = 1, output 3D)\n"
    "         N x H x W x C (or H x W x C) with --layout nhwc, the output N x P x Q x K\n"
    "WEIGHTS  K x C/groups x R x S\n"
    "--bias B.npy            K values added to each output channel\n"
    "--stride S|SH,SW        default 1\n"
    "--pad P|PH,PW|T,L,B,R   zero padding, default 0\n"
    "--dilation D|DH,DW      default 1\n"
    "--groups G              default 1 (G = C: depthwise)\n"
    "--relu                  fused ReLU after the bias\n"
    "--layout nchw|nhwc      of INPUT and OUTPUT (default nchw; nhwc: channels last)\n"
    "--algo NAME             algorithm (default auto; see `fastconv info`)\n"
    "--threads N             threads (default 0 = all cores)\n"
    "--device D              cpu (default), opencl or cuda (see `fastconv info`)\n"
    "--max-workspace S       most scratch memory (e.g. 64M; 0: none); AUTO picks within it\n";

struct conv2d_args {
    const char *input, *weights, *output, *bias;
    fconv_conv2d_desc desc;
    fconv_options options;
};

/* "S" or "SH,SW" into two values. */
static int parse_pair(const char *option, const char *s, int64_t min, int64_t *a, int64_t *b) {
    int64_t v[2];
    int n;
    if (cli_parse_int_list(option, s, min, v, 2, &n)) return -1;
    *a = v[0];
    *b = n == 2 ? v[1] : v[0];
    return 0;
}

static int parse_pad(const char *s, fconv_conv2d_desc *d) {
    int64_t v[4];
    int n;
    if (cli_parse_int_list("--pad", s, 0, v, 4, &n)) return -1;
    if (n == 3) {
        cli_usage_error("--pad: give 1 (P), 2 (PH,PW) or 4 (T,L,B,R) values, not 3");
        return -1;
    }
    if (n == 1) v[1] = v[2] = v[3] = v[0];
    if (n == 2) { v[2] = v[0]; v[3] = v[1]; }
    d->pad_top = v[0];
    d->pad_left = v[1];
    d->pad_bottom = v[2];
    d->pad_right = v[3];
    return 0;
}

static int parse_conv2d_args(int argc, char **argv, struct conv2d_args *a) {
    enum { OPT_BIAS = 256, OPT_STRIDE, OPT_PAD, OPT_DILATION, OPT_GROUPS, OPT_RELU, OPT_LAYOUT };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},      {"bias", required_argument, NULL, OPT_BIAS},
        {"stride", required_argument, NULL, OPT_STRIDE}, {"pad", required_argument, NULL, OPT_PAD},
        {"dilation", required_argument, NULL, OPT_DILATION},
        {"groups", required_argument, NULL, OPT_GROUPS}, {"relu", no_argument, NULL, OPT_RELU},
        {"layout", required_argument, NULL, OPT_LAYOUT},
        {"help", no_argument, NULL, 'h'},              CLI_PLAN_LONGOPTS, {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': a->output = optarg; break;
        case OPT_BIAS: a->bias = optarg; break;
        case OPT_STRIDE:
            if (parse_pair("--stride", optarg, 1, &a->desc.stride_h, &a->desc.stride_w)) return CLI_EXIT_USAGE;
            break;
        case OPT_PAD:
            if (parse_pad(optarg, &a->desc)) return CLI_EXIT_USAGE;
            break;
        case OPT_DILATION:
            if (parse_pair("--dilation", optarg, 1, &a->desc.dilation_h, &a->desc.dilation_w))
                return CLI_EXIT_USAGE;
            break;
        case OPT_GROUPS:
            if (cli_parse_int("--groups", optarg, 1, FCONV_MAX_DIM, &a->desc.groups)) return CLI_EXIT_USAGE;
            break;
        case OPT_RELU: a->desc.activation = FCONV_ACTIVATION_RELU; break;
        case OPT_LAYOUT:
            if (cli_parse_layout(optarg, &a->desc.layout)) return CLI_EXIT_USAGE;
            break;
        case 'h': fputs(conv2d_help, stdout); return -1;
        default: {
            int shared = cli_parse_plan_option(c, optarg, &a->options);
            if (shared < 0) return CLI_EXIT_USAGE;
            if (shared == 0) return cli_report_getopt_error("conv2d", argv, c);
            break;
        }
        }
    }
    if (argc - optind < 2) return cli_usage_error("conv2d: needs INPUT.npy and WEIGHTS.npy (see fastconv conv2d --help)");
    if (argc - optind > 2) return cli_usage_error("conv2d: unexpected argument '%s'", argv[optind + 2]);
    if (!a->output) return cli_usage_error("conv2d: missing -o OUTPUT.npy");
    a->input = argv[optind];
    a->weights = argv[optind + 1];
    if (!cli_has_extension(a->output, ".npy"))
        return cli_usage_error("%s: conv2d writes .npy only", a->output);
    return CLI_EXIT_OK;
}

/* The input's C, H and W (its last three axes: C x H x W, NHWC H x W x C). */
static void input_chw(const fconv_io_array *x, fconv_layout layout, int64_t chw[3]) {
    const int64_t *last3 = x->shape + x->ndim - 3;
    const int nhwc = layout == FCONV_LAYOUT_NHWC;
    chw[0] = last3[nhwc ? 2 : 0];
    chw[1] = last3[nhwc ? 0 : 1];
    chw[2] = last3[nhwc ? 1 : 2];
}

/* Check the arrays' ranks and agreement, naming the file and the shapes. */
static int check_shapes(const struct conv2d_args *a, const fconv_io_array *x, const fconv_io_array *w,
                        const fconv_io_array *b) {
    char s1[128], s2[128];
    const int nhwc = a->desc.layout == FCONV_LAYOUT_NHWC;
    if (x->ndim != 3 && x->ndim != 4)
        return cli_fail("%s: conv2d input must be %s, got shape %s", a->input,
                        nhwc ? "N x H x W x C or H x W x C (--layout nhwc)" : "N x C x H x W or C x H x W",
                        cli_shape_string(x->shape, x->ndim, s1, sizeof s1));
    if (w->ndim != 4)
        return cli_fail("%s: weights must be K x C/groups x R x S, got shape %s", a->weights,
                        cli_shape_string(w->shape, w->ndim, s1, sizeof s1));
    if (fconv_io_array_elements(x) == 0 || fconv_io_array_elements(w) == 0)
        return cli_fail("%s: empty array (input %s, weights %s)", fconv_io_array_elements(x) == 0 ? a->input : a->weights,
                        cli_shape_string(x->shape, x->ndim, s1, sizeof s1),
                        cli_shape_string(w->shape, w->ndim, s2, sizeof s2));
    int64_t chw[3];
    input_chw(x, a->desc.layout, chw);
    int64_t c = chw[0], groups = a->desc.groups ? a->desc.groups : 1;
    if (c % groups != 0)
        return cli_fail("conv2d: groups %lld does not divide the input's %lld channels", (long long)groups,
                        (long long)c);
    if (w->shape[1] * groups != c)
        return cli_fail("%s: weights of shape %s have %lld input channels per group, but the input %s "
                        "with groups %lld needs %lld",
                        a->weights, cli_shape_string(w->shape, 4, s1, sizeof s1), (long long)w->shape[1],
                        cli_shape_string(x->shape, x->ndim, s2, sizeof s2), (long long)groups,
                        (long long)(c / groups));
    if (b && (b->ndim != 1 || b->shape[0] != w->shape[0]))
        return cli_fail("%s: bias must be 1D with K = %lld values, got shape %s", a->bias,
                        (long long)w->shape[0], cli_shape_string(b->shape, b->ndim, s1, sizeof s1));
    return 0;
}

int cmd_conv2d(int argc, char **argv) {
    struct conv2d_args a;
    int rc = parse_conv2d_args(argc, argv, &a);
    if (rc != CLI_EXIT_OK) return rc < 0 ? CLI_EXIT_OK : rc;

    fconv_io_array x = {0}, w = {0}, b = {0};
    fconv_plan *plan = NULL;
    float *y = NULL;
    rc = CLI_EXIT_FAILURE;
    if (cli_check_output_path(a.output)) goto done;
    if (cli_read_npy(a.input, &x) || cli_read_npy(a.weights, &w) || (a.bias && cli_read_npy(a.bias, &b)))
        goto done;
    if (check_shapes(&a, &x, &w, a.bias ? &b : NULL)) goto done;

    fconv_conv2d_desc d = a.desc;
    int batched = x.ndim == 4;
    d.n = batched ? x.shape[0] : 1;
    int64_t chw[3];
    input_chw(&x, d.layout, chw);
    d.c = chw[0];
    d.h = chw[1];
    d.w = chw[2];
    d.k = w.shape[0];
    d.r = w.shape[2];
    d.s = w.shape[3];
    d.has_bias = a.bias != NULL;
    fconv_status st = fconv_plan_conv2d(&d, &a.options, w.data, a.bias ? b.data : NULL, &plan);
    if (st != FCONV_OK) {
        cli_library_error("conv2d", st);
        goto done;
    }
    cli_explain_plan(plan);
    y = malloc((size_t)fconv_plan_output_elements(plan) * sizeof *y);
    if (!y) {
        cli_fail("conv2d: out of memory for the output");
        goto done;
    }
    st = fconv_execute(plan, x.data, NULL, NULL, y);
    if (st != FCONV_OK) {
        cli_library_error("conv2d", st);
        goto done;
    }
    int64_t shape[4];
    fconv_plan_output_shape(plan, shape);
    if (cli_write_npy(a.output, y, batched ? 4 : 3, batched ? shape : shape + 1)) goto done;
    rc = CLI_EXIT_OK;
done:
    fconv_plan_destroy(plan);
    free(y);
    fconv_io_array_free(&x);
    fconv_io_array_free(&w);
    fconv_io_array_free(&b);
    return rc;
}
