/*
 * cmd-conv1d.c — `fastconv conv1d`: numpy.convolve / numpy.correlate on 1D .npy files.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"

static const char conv1d_help[] =
    "usage: fastconv conv1d INPUT.npy KERNEL.npy -o OUTPUT.npy [options]\n"
    "\n"
    "1D convolution, as numpy.convolve (numpy.correlate with --correlate).\n"
    "--mode M       full (default, as numpy), same or valid\n"
    "--correlate    correlate instead of convolving\n"
    "--algo NAME    algorithm (default auto; see `fastconv info`)\n"
    "--threads N    threads (default 0 = all cores)\n"
    "--device D     cpu (default), opencl or cuda (see `fastconv info`)\n"
    "--max-workspace S  most scratch memory (e.g. 64M; 0: none); AUTO picks within it\n";

int cmd_conv1d(int argc, char **argv) {
    enum { OPT_MODE = 256, OPT_CORRELATE };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},  {"mode", required_argument, NULL, OPT_MODE},
        {"correlate", no_argument, NULL, OPT_CORRELATE},
        {"help", no_argument, NULL, 'h'},
        CLI_PLAN_LONGOPTS, {NULL, 0, NULL, 0}};
    fconv_conv1d_desc d = {.mode = FCONV_MODE_FULL};
    fconv_options options = {0};
    const char *output = NULL;
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case OPT_MODE:
            if (cli_parse_mode(optarg, &d.mode)) return CLI_EXIT_USAGE;
            break;
        case OPT_CORRELATE: d.correlate = 1; break;
        case 'h': fputs(conv1d_help, stdout); return CLI_EXIT_OK;
        default: {
            int shared = cli_parse_plan_option(c, optarg, &options);
            if (shared < 0) return CLI_EXIT_USAGE;
            if (shared == 0) return cli_report_getopt_error("conv1d", argv, c);
            break;
        }
        }
    }
    if (argc - optind < 2) return cli_usage_error("conv1d: needs INPUT.npy and KERNEL.npy (see fastconv conv1d --help)");
    if (argc - optind > 2) return cli_usage_error("conv1d: unexpected argument '%s'", argv[optind + 2]);
    if (!output) return cli_usage_error("conv1d: missing -o OUTPUT.npy");
    if (!cli_has_extension(output, ".npy")) return cli_usage_error("%s: conv1d writes .npy only", output);
    const char *input_path = argv[optind], *kernel_path = argv[optind + 1];

    fconv_io_array x = {0}, k = {0};
    fconv_plan *plan = NULL;
    float *y = NULL;
    int rc = CLI_EXIT_FAILURE;
    char shape[128];
    if (cli_check_output_path(output)) goto done;
    if (cli_read_npy(input_path, &x) || cli_read_npy(kernel_path, &k)) goto done;
    if (x.ndim != 1 || x.shape[0] == 0) {
        cli_fail("%s: conv1d needs a non-empty 1D array, got shape %s", input_path,
                 cli_shape_string(x.shape, x.ndim, shape, sizeof shape));
        goto done;
    }
    if (k.ndim != 1 || k.shape[0] == 0) {
        cli_fail("%s: the kernel must be a non-empty 1D array, got shape %s", kernel_path,
                 cli_shape_string(k.shape, k.ndim, shape, sizeof shape));
        goto done;
    }
    d.n = x.shape[0];
    d.m = k.shape[0];
    fconv_status st = fconv_plan_conv1d(&d, &options, k.data, &plan);
    if (st != FCONV_OK) {
        cli_library_error("conv1d", st);
        goto done;
    }
    cli_explain_plan(plan);
    y = malloc((size_t)fconv_plan_output_elements(plan) * sizeof *y);
    if (!y) {
        cli_fail("conv1d: out of memory for the output");
        goto done;
    }
    st = fconv_execute(plan, x.data, NULL, NULL, y);
    if (st != FCONV_OK) {
        cli_library_error("conv1d", st);
        goto done;
    }
    int64_t out_shape[4];
    fconv_plan_output_shape(plan, out_shape);
    if (cli_write_npy(output, y, 1, out_shape)) goto done;
    rc = CLI_EXIT_OK;
done:
    fconv_plan_destroy(plan);
    free(y);
    fconv_io_array_free(&x);
    fconv_io_array_free(&k);
    return rc;
}
