/*
 * cmd-tune.c — `fastconv tune filter|conv2d|conv1d ...` and `fastconv tune suite [--quick]`:
 * plan each problem with FCONV_PLAN_MEASURE, which times the eligible algorithms and records
 * the winner in the wisdom file, so that later AUTO plans (in any program) use it.
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "bench.h"
#include "commands.h"
#include "core/internal.h"

static const char tune_help[] =
    "usage: fastconv tune filter|conv2d|conv1d PROBLEM-OPTIONS [--threads N] [--max-workspace S]\n"
    "       fastconv tune suite [--quick] [--group G] [--threads N,...]\n"
    "       fastconv tune --show\n"
    "Measure which algorithm is fastest for a problem (the options of `fastconv bench`) or for\n"
    "each shape of the benchmark suite (default threads: 1 and all cores) and record it in the\n"
    "wisdom file, which AUTO then follows: $FASTCONV_WISDOM, else $XDG_CACHE_HOME/fastconv/wisdom,\n"
    "else ~/.cache/fastconv/wisdom. --show describes the wisdom file.\n";

/* Plan a's problem with MEASURE and report what it found. 0 or CLI_EXIT_FAILURE. The weights
 * are given at plan time, as the filter, conv2d and conv1d commands and `bench` give them:
 * their plans look up the key this records. */
static int tune_one(const struct bench_args *a, const char *label) {
    fconv_options o = bench_options(a, FCONV_ALGO_AUTO);
    o.flags |= FCONV_PLAN_MEASURE;
    o.device = FCONV_DEVICE_CPU; /* wisdom holds CPU choices only */
    float *w;
    if (bench_make_weights(a, &w) != CLI_EXIT_OK) return CLI_EXIT_FAILURE;
    fconv_plan *plan;
    fconv_status st = bench_make_plan(a, &o, w, NULL, &plan);
    free(w);
    if (st != FCONV_OK) return cli_library_error("tune", st);
    printf("%s (threads %d): %s\n", label, fconv_plan_threads(plan), fconv_plan_explain(plan));
    fflush(stdout);
    fconv_plan_destroy(plan);
    return CLI_EXIT_OK;
}

static int tune_suite(int argc, char **argv) {
    enum { OPT_QUICK = 256, OPT_GROUP, OPT_THREADS };
    static const struct option longopts[] = {{"quick", no_argument, NULL, OPT_QUICK},
                                             {"group", required_argument, NULL, OPT_GROUP},
                                             {"threads", required_argument, NULL, OPT_THREADS},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int quick = 0, threads[8] = {1, 0}, nthreads = 2, c;
    const char *group = NULL;
    int64_t v[8];
    optind = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_QUICK: quick = 1; break;
        case OPT_GROUP: group = optarg; break;
        case OPT_THREADS:
            if (cli_parse_int_list("--threads", optarg, 0, v, 8, &nthreads)) return CLI_EXIT_USAGE;
            for (int i = 0; i < nthreads; i++) {
                if (v[i] > 4096) return cli_usage_error("--threads: %lld is out of range [0, 4096]", (long long)v[i]);
                threads[i] = (int)v[i];
            }
            break;
        case 'h': fputs(tune_help, stdout); return CLI_EXIT_OK;
        default: return cli_report_getopt_error("tune suite", argv, c);
        }
    }
    if (optind < argc) return cli_usage_error("tune suite: unexpected argument '%s'", argv[optind]);
    int total = 0, done = 0, failures = 0;
    for (const struct bench_shape *s = bench_suite_shapes; s->args; s++)
        total += (!quick || s->quick) && (!group || strcmp(group, s->group) == 0);
    if (!total) return cli_usage_error("--group: no shape in group '%s'", group ? group : "");
    total *= nthreads;
    for (const struct bench_shape *s = bench_suite_shapes; s->args; s++) {
        if ((quick && !s->quick) || (group && strcmp(group, s->group) != 0)) continue;
        for (int t = 0; t < nthreads; t++) {
            struct bench_args a;
            if (bench_shape_parse(s->args, &a) != CLI_EXIT_OK) return cli_fail("tune suite: bad shape '%s'", s->args);
            a.threads = threads[t];
            fprintf(stderr, "[%d/%d] %s: %s ...\n", ++done, total, s->group, s->args);
            failures += tune_one(&a, s->args) != CLI_EXIT_OK;
        }
    }
    char desc[600];
    fconv_wisdom_describe(desc, sizeof desc);
    printf("%s\n", desc);
    if (failures) return cli_fail("tune suite: %d problem%s failed", failures, failures == 1 ? "" : "s");
    return CLI_EXIT_OK;
}

int cmd_tune(int argc, char **argv) {
    if (argc < 2) return cli_usage_error("tune: which problem? (filter, conv2d, conv1d or suite; see fastconv tune --help)");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(tune_help, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--show") == 0) {
        if (argc > 2) return cli_usage_error("tune --show: unexpected argument '%s'", argv[2]);
        char desc[600];
        fconv_wisdom_describe(desc, sizeof desc);
        printf("%s\n", desc);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "suite") == 0) return tune_suite(argc - 1, argv + 1);
    struct bench_args a;
    optind = 0;
    int rc = bench_parse_args(argc, argv, &a);
    if (rc != CLI_EXIT_OK) return rc < 0 ? CLI_EXIT_OK : rc;
    if (a.all || a.algo != FCONV_ALGO_AUTO)
        return cli_usage_error("tune: --algo does not apply (tune measures every eligible algorithm)");
    char problem[512];
    bench_describe_problem(&a, problem, sizeof problem);
    return tune_one(&a, problem);
}
