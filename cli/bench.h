/*
 * bench.h — what `fastconv bench` (cmd-bench.c) shares with `bench suite` and `tune`
 * (cmd-bench-suite.c, cmd-tune.c): the problem options, one timed result, the parser and
 * the runner, and the suite's shape table (bench-shapes.c).
 */
#ifndef FCONV_CLI_BENCH_H
#define FCONV_CLI_BENCH_H

#include <stddef.h>

#include "fastconv.h"

enum kernel_values { KERNEL_RANDOM = 0, KERNEL_GAUSSIAN, KERNEL_BOX };

/* The most algorithms one `--algo A,B,...` list times in alternation. */
#define BENCH_MAX_INTERLEAVED 8

struct bench_args {
    int kind;                 /* FCONV_KIND_* */
    enum kernel_values kernel_values;
    fconv_conv2d_desc conv2d;
    fconv_filter2d_desc filter;
    fconv_conv1d_desc conv1d;
    int all;
    fconv_algo algo;
    int n_interleaved;        /* --algo A,B,...: 2 or more plans timed in alternation, else 0 */
    fconv_algo interleaved[BENCH_MAX_INTERLEAVED];
    int threads;
    int reps;
    int json;
    fconv_options limits;     /* the workspace budget (--max-workspace) */
    fconv_device device;      /* --device */
};

struct bench_result {
    fconv_algo algo;
    double median_ms, min_ms, max_ms, plan_ms, gflops, error;
    size_t workspace;
    long long peak_rss;
    int threads;
    int on_device;            /* a GPU plan: kernel_ms / transfer_ms / device_bytes are set */
    double kernel_ms, transfer_ms;
    size_t device_bytes;      /* device memory the plan holds (fconv_plan_device_bytes) */
    double vs_first;          /* interleaved: the median over rounds of the first plan's time
                                 over this one's in the same round (> 1: this one is faster);
                                 0 when not interleaved */
};

/* Parse `bench` arguments (argv[0] is ignored, argv[1] the problem kind). CLI_EXIT_OK, -1
 * after --help was printed, or CLI_EXIT_USAGE with the message printed. Uses getopt: the
 * caller must reset optind to 0 before a second call. */
int bench_parse_args(int argc, char **argv, struct bench_args *a);

/* The plan options a's arguments ask for (threads, device, workspace limit, flags), with algo. */
fconv_options bench_options(const struct bench_args *a, fconv_algo algo);

/* Plan a's problem with options o and the given weights (or NULL). */
fconv_status bench_make_plan(const struct bench_args *a, const fconv_options *o, const float *w,
                             const float *bias, fconv_plan **plan);

/* Plan and time one algorithm on x / w (y receives the output). 0 on success; 1 if it
 * declined (reason in why). */
int bench_one(const struct bench_args *a, fconv_algo algo, const float *x, const float *w,
              float *y, struct bench_result *r, char *why, size_t why_len);

/* Validate a's problem and generate its data (seeded uniform [-1, 1), weights shaped by
 * --kernel-values): *x and *w malloc'd, *y from fconv_alloc_aligned (the caller frees them:
 * free, free, fconv_free_aligned), *macs its multiply-adds.
 * CLI_EXIT_OK, or CLI_EXIT_FAILURE with the message printed. */
int bench_make_data(const struct bench_args *a, float **x, float **w, float **y, double *macs);

/* The weights bench_make_data would make for a's problem, alone (into *w, malloc'd; the
 * caller frees it): what a plan-time choice needs. CLI_EXIT_OK, or CLI_EXIT_FAILURE with the
 * message printed. */
int bench_make_weights(const struct bench_args *a, float **w);

/* One line naming the problem ("filter 512x512x1, kernel 3x3, ..."). */
void bench_describe_problem(const struct bench_args *a, char *buf, size_t n);

/* Print one result as a table row / a JSON object (first: no leading comma). */
void bench_print_table_row(const struct bench_result *r, const char *requested);
void bench_print_json_row(const struct bench_result *r, const char *requested, int first);

/* ---- the suite (bench-shapes.c) ---------------------------------------------------------- */

struct bench_shape {
    const char *group;        /* "image", "rgb", "1d", "cnn-16x16", "resnet50", "vgg16", "seed-004" */
    const char *args;         /* `fastconv bench` arguments, e.g. "filter --size 512x512 --kernel 3x3" */
    int quick;                /* also in --quick */
};

/* The suite's shapes (the seed shapes of issue 4), NULL-args-terminated. */
extern const struct bench_shape bench_suite_shapes[];

/* A shape's args parsed as `fastconv bench` would parse them: CLI_EXIT_OK, or what
 * bench_parse_args returned (resets optind first). */
int bench_shape_parse(const char *args, struct bench_args *a);

#endif
