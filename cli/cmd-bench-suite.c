/*
 * cmd-bench-suite.c — `fastconv bench suite [--quick]`: every shape of the suite
 * (bench-shapes.c) x every CPU algorithm and AUTO x 1 and all threads. A progress line per
 * problem on stderr; on stdout a table (best algorithm, AUTO's choice and how far it is from
 * the best, with a summary), or one CSV/JSON row per (shape, threads, algorithm). With
 * --plan-only nothing runs: a line per (shape, threads) with AUTO's choice and why, as
 * `bench` would plan it (plan-time weights), to review a cost-model change shape by shape.
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

/* AUTO counts as a good choice within this factor of the best algorithm (issue 4: 10%). */
#define AUTO_GOOD_RATIO 1.10

static const char suite_help[] =
    "usage: fastconv bench suite [--quick] [--group G] [--threads N,...] [--reps R]\n"
    "                            [--layout nchw|nhwc] [--csv | --json | --list | --plan-only]\n"
    "Time every CPU algorithm and AUTO on the suite's shapes (images 512^2..4096^2 x kernels\n"
    "3..31, RGB, 1D 10^3..10^8, CNN 16x16 layers, ResNet-50 and VGG-16 at batch 1 and 8,\n"
    "few-channel layers, the seed-004 filter), with 1 and all threads.\n"
    "  --quick        a small subset with 3 reps (a couple of minutes on 2 cores)\n"
    "  --group G      only shapes of group G (image, rgb, 1d, cnn-16x16, resnet50, vgg16,\n"
    "                 few-channel, seed-004)\n"
    "  --threads L    comma-separated thread counts (default 1,0; 0 = all cores)\n"
    "  --reps R       timed executions per algorithm after a 0.3 s warm-up (default 7; 3 with --quick)\n"
    "  --layout L     the conv2d shapes' layout (default nchw); nhwc runs the conv2d shapes only\n"
    "  --csv, --json  one row per shape, thread count and algorithm instead of the table\n"
    "  --list         print the shapes (group, then `fastconv bench` arguments) and exit\n"
    "  --plan-only    time nothing: per shape and thread count, AUTO's choice and its reason\n"
    "                 (group, arguments, threads, algorithm, reason; tab-separated)\n"
    "Progress goes to stderr. The reference is not timed (it is the oracle).\n";

enum format { FORMAT_TABLE, FORMAT_CSV, FORMAT_JSON };

struct suite_opts {
    int quick, reps, list, plan_only;
    enum format format;
    const char *group;
    int threads[8], nthreads;
    fconv_layout layout;
};

static int parse_suite_args(int argc, char **argv, struct suite_opts *o) {
    enum { OPT_QUICK = 256, OPT_GROUP, OPT_THREADS, OPT_REPS, OPT_CSV, OPT_JSON, OPT_LIST, OPT_PLAN_ONLY, OPT_LAYOUT };
    static const struct option longopts[] = {
        {"quick", no_argument, NULL, OPT_QUICK},   {"group", required_argument, NULL, OPT_GROUP},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"reps", required_argument, NULL, OPT_REPS}, {"csv", no_argument, NULL, OPT_CSV},
        {"json", no_argument, NULL, OPT_JSON},     {"list", no_argument, NULL, OPT_LIST},
        {"plan-only", no_argument, NULL, OPT_PLAN_ONLY}, {"layout", required_argument, NULL, OPT_LAYOUT},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    o->threads[0] = 1;
    o->threads[1] = 0;
    o->nthreads = 2;
    int c;
    int64_t v[8];
    optind = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_QUICK: o->quick = 1; break;
        case OPT_GROUP: o->group = optarg; break;
        case OPT_THREADS: {
            int n;
            if (cli_parse_int_list("--threads", optarg, 0, v, 8, &n)) return CLI_EXIT_USAGE;
            for (int i = 0; i < n; i++) {
                if (v[i] > 4096) return cli_usage_error("--threads: %lld is out of range [0, 4096]", (long long)v[i]);
                o->threads[i] = (int)v[i];
            }
            o->nthreads = n;
            break;
        }
        case OPT_REPS:
            if (cli_parse_int("--reps", optarg, 1, 100000, v)) return CLI_EXIT_USAGE;
            o->reps = (int)v[0];
            break;
        case OPT_CSV: o->format = FORMAT_CSV; break;
        case OPT_JSON: o->format = FORMAT_JSON; break;
        case OPT_LIST: o->list = 1; break;
        case OPT_PLAN_ONLY: o->plan_only = 1; break;
        case OPT_LAYOUT:
            if (cli_parse_layout(optarg, &o->layout)) return CLI_EXIT_USAGE;
            break;
        case 'h': fputs(suite_help, stdout); return -1;
        default: return cli_report_getopt_error("bench suite", argv, c);
        }
    }
    if (optind < argc) return cli_usage_error("bench suite: unexpected argument '%s'", argv[optind]);
    if (!o->reps) o->reps = o->quick ? 3 : 7;
    if (o->group) {
        int known = 0;
        for (const struct bench_shape *s = bench_suite_shapes; s->args; s++)
            known |= strcmp(s->group, o->group) == 0;
        if (!known)
            return cli_usage_error("--group: unknown group '%s' (use image, rgb, 1d, cnn-16x16, "
                                   "resnet50, vgg16, few-channel or seed-004)", o->group);
    }
    return CLI_EXIT_OK;
}

/* Does the suite (with these options) include shape s? */
static int selected(const struct suite_opts *o, const struct bench_shape *s) {
    return (!o->quick || s->quick) && (!o->group || strcmp(o->group, s->group) == 0) &&
           (o->layout == FCONV_LAYOUT_NCHW || strncmp(s->args, "conv2d ", 7) == 0);
}

/* The shape's bench arguments, in the suite's layout. */
static int parse_shape(const struct suite_opts *o, const struct bench_shape *s, struct bench_args *a) {
    if (bench_shape_parse(s->args, a) != CLI_EXIT_OK) return cli_fail("bench suite: bad shape '%s'", s->args);
    a->conv2d.layout = o->layout;
    return CLI_EXIT_OK;
}

static void print_row(const struct suite_opts *o, const struct bench_shape *s, const struct bench_result *r,
                      int is_auto, int *first) {
    if (o->format == FORMAT_CSV) {
        printf("%s,%s,%d,%s,%s,%.6f,%.6f,%.6f,%.4f,%zu,%.3e\n", s->group, s->args, r->threads,
               is_auto ? "auto" : fconv_algo_name(r->algo), fconv_algo_name(r->algo), r->median_ms,
               r->min_ms, r->plan_ms, r->gflops, r->workspace, r->error);
    } else if (o->format == FORMAT_JSON) {
        printf("%s\n  {\"group\": \"%s\", \"args\": \"%s\", \"threads\": %d, \"requested\": \"%s\", "
               "\"algo\": \"%s\", \"median_ms\": %.6f, \"min_ms\": %.6f, \"plan_ms\": %.6f, "
               "\"gflops\": %.4f, \"workspace_bytes\": %zu, \"error\": %.3e}",
               *first ? "" : ",", s->group, s->args, r->threads, is_auto ? "auto" : fconv_algo_name(r->algo),
               fconv_algo_name(r->algo), r->median_ms, r->min_ms, r->plan_ms, r->gflops, r->workspace,
               r->error);
    }
    *first = 0;
}

/* --plan-only: AUTO's plan for every selected shape and thread count, nothing executed. */
static int plan_only(const struct suite_opts *o) {
    int failures = 0;
    for (const struct bench_shape *s = bench_suite_shapes; s->args; s++) {
        if (!selected(o, s)) continue;
        for (int t = 0; t < o->nthreads; t++) {
            struct bench_args a;
            if (parse_shape(o, s, &a) != CLI_EXIT_OK) return CLI_EXIT_FAILURE;
            a.threads = o->threads[t];
            float *w;
            if (bench_make_weights(&a, &w) != CLI_EXIT_OK) {
                failures++;
                continue;
            }
            const fconv_options opts = bench_options(&a, FCONV_ALGO_AUTO);
            fconv_plan *plan;
            fconv_status st = bench_make_plan(&a, &opts, w, NULL, &plan);
            free(w);
            if (st != FCONV_OK) {
                failures++;
                cli_library_error("bench suite", st);
                continue;
            }
            printf("%s\t%s\t%d\t%s\t%s\n", s->group, s->args, a.threads ? a.threads : fconv_default_threads(),
                   fconv_algo_name(fconv_plan_algo(plan)), fconv_plan_explain(plan));
            fconv_plan_destroy(plan);
        }
    }
    if (failures) return cli_fail("bench suite: %d problem%s could not be planned", failures, failures == 1 ? "" : "s");
    return CLI_EXIT_OK;
}

int cmd_bench_suite(int argc, char **argv) {
    struct suite_opts o;
    int rc = parse_suite_args(argc, argv, &o);
    if (rc != CLI_EXIT_OK) return rc < 0 ? CLI_EXIT_OK : rc;
    int total = 0;
    for (const struct bench_shape *s = bench_suite_shapes; s->args; s++) {
        if (!selected(&o, s)) continue;
        if (o.list) printf("%s\t%s\n", s->group, s->args);
        total++;
    }
    if (o.list) return CLI_EXIT_OK;
    if (o.plan_only) return plan_only(&o);
    total *= o.nthreads;

    if (o.format == FORMAT_CSV)
        printf("group,args,threads,requested,algo,median_ms,min_ms,plan_ms,gflops,workspace_bytes,error\n");
    else if (o.format == FORMAT_JSON)
        printf("[");
    else
        printf("%-10s %-62s %3s %-14s %10s %-14s %10s %6s\n", "group", "problem", "thr", "best",
               "best ms", "auto", "auto ms", "ratio");
    int done = 0, good = 0, compared = 0, first = 1, failures = 0;
    for (const struct bench_shape *s = bench_suite_shapes; s->args; s++) {
        if (!selected(&o, s)) continue;
        for (int t = 0; t < o.nthreads; t++) {
            struct bench_args a;
            if (parse_shape(&o, s, &a) != CLI_EXIT_OK) return CLI_EXIT_FAILURE;
            a.threads = o.threads[t];
            a.reps = o.reps;
            done++;
            fprintf(stderr, "[%d/%d] %s: %s, threads %d ...\n", done, total, s->group, s->args,
                    a.threads ? a.threads : fconv_default_threads());
            float *x, *w, *y;
            double macs;
            if (bench_make_data(&a, &x, &w, &y, &macs) != CLI_EXIT_OK) {
                failures++;
                continue;
            }
            struct bench_result best = {0}, autor = {0}, r;
            int have_best = 0, have_auto = 0;
            double named_ms[FCONV_ALGO_COUNT_] = {0}; /* each named algorithm's time */
            char why[512];
            for (int i = 1; i <= FCONV_ALGO_COUNT_; i++) {
                fconv_algo algo = i == FCONV_ALGO_COUNT_ ? FCONV_ALGO_AUTO : (fconv_algo)i;
                fconv_algo_info info;
                if (algo == FCONV_ALGO_REFERENCE) continue;
                if (algo != FCONV_ALGO_AUTO &&
                    (fconv_algo_get_info(algo, &info) != FCONV_OK || !(info.serves & fconv_kind_bit(a.kind))))
                    continue;
                if (bench_one(&a, algo, x, w, y, &r, why, sizeof why) != 0) continue;
                print_row(&o, s, &r, algo == FCONV_ALGO_AUTO, &first);
                if (algo == FCONV_ALGO_AUTO) {
                    autor = r;
                    have_auto = 1;
                    continue;
                }
                named_ms[algo] = r.median_ms;
                /* The bar is the best algorithm AUTO may pick: within the default tolerance. */
                if (info.error_bound <= FCONV_DEFAULT_TOLERANCE && (!have_best || r.median_ms < best.median_ms)) {
                    best = r;
                    have_best = 1;
                }
            }
            free(x);
            free(w);
            fconv_free_aligned(y);
            if (!have_best || !have_auto) {
                failures++;
                fprintf(stderr, "fastconv: bench suite: %s: no algorithm ran\n", s->args);
                continue;
            }
            /* AUTO's choice ran twice (as AUTO and by name): the same code, so its better time
             * counts, as the best's does (a minimum over single timings). */
            double auto_ms = autor.median_ms;
            if (autor.algo > 0 && autor.algo < FCONV_ALGO_COUNT_ && named_ms[autor.algo] > 0.0 &&
                named_ms[autor.algo] < auto_ms)
                auto_ms = named_ms[autor.algo];
            double ratio = auto_ms / best.median_ms;
            compared++;
            good += ratio <= AUTO_GOOD_RATIO;
            fprintf(stderr, "    best %s %.3f ms, auto chose %s %.3f ms (x%.2f)\n", fconv_algo_name(best.algo),
                    best.median_ms, fconv_algo_name(autor.algo), auto_ms, ratio);
            if (o.format == FORMAT_TABLE)
                printf("%-10s %-62s %3d %-14s %10.3f %-14s %10.3f %6.2f\n", s->group, s->args, autor.threads,
                       fconv_algo_name(best.algo), best.median_ms, fconv_algo_name(autor.algo), auto_ms,
                       ratio);
            fflush(stdout);
        }
    }
    if (o.format == FORMAT_JSON) printf("\n]\n");
    char summary[200];
    snprintf(summary, sizeof summary, "AUTO within %.0f%% of the best algorithm on %d of %d problems (%.0f%%)",
             (AUTO_GOOD_RATIO - 1) * 100, good, compared, compared ? 100.0 * good / compared : 0.0);
    if (o.format == FORMAT_TABLE) printf("%s\n", summary);
    else fprintf(stderr, "%s\n", summary);
    if (failures) return cli_fail("bench suite: %d problem%s could not run", failures, failures == 1 ? "" : "s");
    return CLI_EXIT_OK;
}
