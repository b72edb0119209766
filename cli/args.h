/*
 * args.h — what every subcommand shares: error reporting (one line on stderr, prefixed
 * "fastconv: "), number and list parsing with exact messages, and the exit codes.
 */
#ifndef FCONV_CLI_ARGS_H
#define FCONV_CLI_ARGS_H

#include <stdint.h>

#include "fastconv.h"
#include "io/npy.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILURE 1 /* bad input data, I/O error, library error */
#define CLI_EXIT_USAGE 2   /* bad command line */

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* Print "fastconv: <message>" on stderr. Returns CLI_EXIT_FAILURE / CLI_EXIT_USAGE. */
CLI_PRINTF(1, 2) int cli_fail(const char *fmt, ...);
CLI_PRINTF(1, 2) int cli_usage_error(const char *fmt, ...);

/* Parse a whole string as an integer in [min, max]; 0 on success, else an error printed
 * naming the option. */
int cli_parse_int(const char *option, const char *s, int64_t min, int64_t max, int64_t *out);

/* Parse "A" or "A,B" or ... up to max comma-separated integers >= min; *count gets how many. */
int cli_parse_int_list(const char *option, const char *s, int64_t min, int64_t *out, int max,
                       int *count);

/* Parse --mode / --border / --algo / --threads values. */
int cli_parse_mode(const char *s, fconv_mode *mode);
int cli_parse_border(const char *s, fconv_border *border, float *value);
int cli_parse_algo(const char *s, fconv_algo *algo);
/* "A,B,..." (--algo's list form): 2 to max algorithm names, auto included, repeats allowed
 * ("all" is not one), into out[0..*count). 0, or -1 with the message printed. */
int cli_parse_algo_list(const char *s, fconv_algo *out, int max, int *count);
int cli_parse_threads(const char *s, int *threads);
/* --layout nchw|nhwc (conv2d's x and y). */
int cli_parse_layout(const char *s, fconv_layout *layout);
/* --device cpu|opencl|cuda. */
int cli_parse_device(const char *s, fconv_device *device);

/* --max-workspace SIZE (bytes, or with a K/M/G/T suffix, binary): the most workspace AUTO
 * may choose, and an error for a named algorithm that needs more; 0 allows none. */
int cli_parse_workspace_limit(const char *s, fconv_options *options);

/* The options every planning subcommand (filter, conv2d, conv1d) shares: --algo, --threads,
 * --device, --max-workspace. Their getopt ids, their long-option entries (put
 * CLI_PLAN_LONGOPTS in the command's struct option array; needs <getopt.h>) and one handler. */
enum { CLI_OPT_ALGO = 1000, CLI_OPT_THREADS, CLI_OPT_DEVICE, CLI_OPT_MAX_WORKSPACE };
#define CLI_PLAN_LONGOPTS                                                                     \
    {"algo", required_argument, NULL, CLI_OPT_ALGO},                                          \
        {"threads", required_argument, NULL, CLI_OPT_THREADS},                                \
        {"device", required_argument, NULL, CLI_OPT_DEVICE},                                  \
        {"max-workspace", required_argument, NULL, CLI_OPT_MAX_WORKSPACE}

/* If getopt's result c is a shared option, apply arg to *options: 1 done, -1 invalid (message
 * printed); 0 if c is not one of them. */
int cli_parse_plan_option(int c, const char *arg, fconv_options *options);

/* Read a .npy file; on failure print the reader's message. 0 / -1. */
int cli_read_npy(const char *path, fconv_io_array *out);

/* An input raster H x W x C, interleaved floats (malloc'ed, owned), and what it was. */
struct cli_raster {
    float *data;
    int64_t h, w, channels;
    int ndim;      /* 2 or 3: the rank an .npy output of it gets */
    int alpha;     /* an image whose last channel is alpha (2 or 4 channels) */
    int bit_depth; /* 8 or 16 for images, 0 for .npy */
};

/* Read a non-empty .npy of 2 dimensions (HxW) — or 2 or 3 (HxWxC) when max_ndim is 3 — or
 * an image of any channel count, into *r. 0, or -1 with a one-line message naming the file
 * and the command ("filter needs a 2D ..."). */
int cli_read_raster(const char *command, const char *path, int max_ndim, struct cli_raster *r);

/* Write a float32 .npy atomically; on failure print the message. 0 / -1. */
int cli_write_npy(const char *path, const float *data, int ndim, const int64_t *shape);

/* "(2, 3, 4)" — a shape for messages (static buffer per call site is not needed: writes buf). */
const char *cli_shape_string(const int64_t *shape, int ndim, char *buf, size_t len);

/* Can an output be created at path (its directory exists and is writable, and path is not a
 * directory or another non-regular file such as a FIFO or a device)? Checked before any work so a run fails before writing anything. 0, or
 * CLI_EXIT_FAILURE with a message printed. */
int cli_check_output_path(const char *path);

/* With FASTCONV_VERBOSE=1 in the environment, print which algorithm the plan runs and why
 * (fconv_plan_explain), its threads and workspace, on stderr. */
void cli_explain_plan(const fconv_plan *plan);

/* Does path end with ext (case-insensitive)? */
int cli_has_extension(const char *path, const char *ext);

/* Print the library's message for a failed call (fconv_last_error(), which names the
 * problem kind), or "<what>: <status string>" when it has none. Returns CLI_EXIT_FAILURE. */
int cli_library_error(const char *what, fconv_status status);

#endif
