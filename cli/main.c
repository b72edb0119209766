/*
 * main.c — the fastconv command-line tool: dispatch to one subcommand per file.
 * Exit codes: 0 success, 1 bad input or failure, 2 bad command line.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"

static const char main_help[] =
    "usage: fastconv COMMAND [ARGS]\n"
    "\n"
    "Fast convolutions: image filtering, CNN layers and 1D signals.\n"
    "\n"
    "commands:\n"
    "  filter   filter an image or 2D/3D .npy with built-in or .npy kernels\n"
    "  conv2d   a CNN convolution layer on .npy files (torch.nn.functional.conv2d)\n"
    "  conv1d   1D convolution of .npy signals (numpy.convolve / numpy.correlate)\n"
    "  bench    time algorithms on a generated problem (time, GFLOP/s, memory, error);\n"
    "           `bench suite [--quick]` runs the whole benchmark suite\n"
    "  tune     measure the fastest algorithm per problem and record it as wisdom for AUTO\n"
    "  info     version, build options, CPU features and algorithms\n"
    "  match    block-matching motion estimation between two frames (SAD)\n"
    "  stereo   block-matching disparity of a rectified stereo pair (SAD)\n"
    "  bilateral  edge-preserving bilateral filter of an image or .npy\n"
    "\n"
    "`fastconv COMMAND --help` describes each; `fastconv --version` prints the version.\n";

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
    {"filter", cmd_filter},
    {"conv2d", cmd_conv2d},
    {"conv1d", cmd_conv1d},
    {"bench", cmd_bench},
    {"info", cmd_info},
    {"match", cmd_match},
    {"stereo", cmd_stereo},
    {"bilateral", cmd_bilateral},
    {"tune", cmd_tune},
};

int cli_report_getopt_error(const char *command, char **argv, int c) {
    /* getopt_long sets optopt for a short option; for a long one the culprit is the last
     * argument it consumed. */
    char short_name[3] = {'-', (char)optopt, '\0'};
    const char *name = optopt ? short_name : argv[optind - 1];
    if (c == ':')
        return cli_usage_error("%s: option '%s' needs a value", command, name);
    return cli_usage_error("%s: unknown option '%s' (see fastconv %s --help)", command, name, command);
}

int main(int argc, char **argv) {
    opterr = 0; /* we print our own one-line messages */
    if (argc < 2) {
        fputs(main_help, stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        fputs(main_help, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        printf("fastconv %s\n", fconv_version());
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0) return commands[i].run(argc - 1, argv + 1);
    return cli_usage_error("unknown command '%s' (use filter, conv2d, conv1d, bench, tune, info, match, stereo or bilateral; see fastconv --help)", name);
}
