/*
 * cmd-bench.c — `fastconv bench filter|conv2d|conv1d`: time algorithms on one generated
 * problem. For each algorithm: plan time, then R timed executions after a warm-up
 * (median/min/max), effective GFLOP/s (2 x the direct multiply-add count / time),
 * workspace, peak resident memory while it planned and ran, and the max normalized error
 * against the float64 reference (on a sample of outputs when the whole would take long).
 * With `--algo A,B,...` the listed plans are made together and timed in alternating rounds
 * (time_plans), each with its speed against the first's, round by round.
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "args.h"
#include "bench.h"
#include "commands.h"
#include "core/internal.h"
#include "ref/conv-ref.h"

/* Reference multiply-adds spent on the error check, at most; beyond it outputs are sampled. */
#define ERROR_CHECK_MACS 3e8
/* `--algo all` runs the reference only below this many multiply-adds. */
#define ALL_REFERENCE_MACS 2e9
#define WARMUP_MS 300.0

static const char bench_help[] =
    "usage: fastconv bench filter --size HxW[xC] --kernel RxS [--mode M] [--border B] [--correlate]\n"
    "       fastconv bench conv2d --input NxCxHxW --filters KxRxS [--stride S|SH,SW]\n"
    "                             [--pad P|PH,PW|T,L,B,R] [--dilation D|DH,DW] [--groups G] [--relu]\n"
    "                             [--layout nchw|nhwc]   (--input gives the sizes in either layout)\n"
    "       fastconv bench conv1d --size N --kernel M [--mode M] [--correlate]\n"
    "       fastconv bench suite [--quick] ...   the whole suite (see fastconv bench suite --help)\n"
    "common options:\n"
    "  --algo NAME|all   one algorithm, or every one that serves the problem (default auto)\n"
    "  --algo A,B,...    2-8 algorithms (auto and repeats allowed) planned together and run in\n"
    "                    alternating rounds, the order reversed every other round; then each\n"
    "                    one's speed against the first: the median over rounds of the first's\n"
    "                    time / its own (> 1: faster); peak RSS is every plan's together\n"
    "  --threads N       threads (default 0 = all cores)\n"
    "  --device D        cpu (default), opencl or cuda; GPU rows add kernel and transfer\n"
    "                    time (device events, medians)\n"
    "  --reps R          timed executions after a 0.3 s warm-up (default 7)\n"
    "  --json            one JSON array of objects instead of a table\n"
    "  --max-workspace S most scratch memory per algorithm (e.g. 64M; 0: none)\n"
    "  --kernel-values V random (default), gaussian (sigma = size/6) or box: the weights' values\n"
    "Data is generated (seeded uniform [-1, 1)). Planning is timed separately.\n";

/* "AxBxC..." with exactly n positive values (or n - 1, the last defaulting to 1, when
 * optional_last); form names the expected spelling for the message. */
static int parse_dims(const char *option, const char *s, int64_t *out, int n, int optional_last,
                      const char *form) {
    int count = 0;
    for (const char *p = s;;) {
        const char *end = strchr(p, 'x');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char token[32];
        if (len == 0 || len >= sizeof token || count == n)
            return cli_usage_error("%s: '%s' is not of the form %s", option, s, form);
        memcpy(token, p, len);
        token[len] = '\0';
        if (cli_parse_int(option, token, 1, FCONV_MAX_DIM, &out[count++])) return CLI_EXIT_USAGE;
        if (!end) break;
        p = end + 1;
    }
    if (optional_last && count == n - 1) out[n - 1] = 1;
    else if (count != n) return cli_usage_error("%s: '%s' is not of the form %s", option, s, form);
    return 0;
}

static int parse_pair(const char *option, const char *s, int64_t min, int64_t *a, int64_t *b) {
    int64_t v[2];
    int n;
    if (cli_parse_int_list(option, s, min, v, 2, &n)) return -1;
    *a = v[0];
    *b = n == 2 ? v[1] : v[0];
    return 0;
}

int bench_parse_args(int argc, char **argv, struct bench_args *a) {
    enum { OPT_SIZE = 256, OPT_KERNEL, OPT_INPUT, OPT_FILTERS, OPT_MODE, OPT_BORDER, OPT_CORRELATE,
           OPT_STRIDE, OPT_PAD, OPT_DILATION, OPT_GROUPS, OPT_RELU, OPT_ALGO, OPT_THREADS, OPT_REPS,
           OPT_JSON, OPT_KERNEL_VALUES, OPT_MAX_WORKSPACE, OPT_DEVICE, OPT_LAYOUT };
    static const struct option longopts[] = {
        {"size", required_argument, NULL, OPT_SIZE},       {"kernel", required_argument, NULL, OPT_KERNEL},
        {"input", required_argument, NULL, OPT_INPUT},     {"filters", required_argument, NULL, OPT_FILTERS},
        {"mode", required_argument, NULL, OPT_MODE},       {"border", required_argument, NULL, OPT_BORDER},
        {"correlate", no_argument, NULL, OPT_CORRELATE},   {"stride", required_argument, NULL, OPT_STRIDE},
        {"pad", required_argument, NULL, OPT_PAD},         {"dilation", required_argument, NULL, OPT_DILATION},
        {"groups", required_argument, NULL, OPT_GROUPS},   {"relu", no_argument, NULL, OPT_RELU},
        {"layout", required_argument, NULL, OPT_LAYOUT},
        {"algo", required_argument, NULL, OPT_ALGO},       {"threads", required_argument, NULL, OPT_THREADS}, {"device", required_argument, NULL, OPT_DEVICE},
        {"reps", required_argument, NULL, OPT_REPS},       {"json", no_argument, NULL, OPT_JSON},
        {"kernel-values", required_argument, NULL, OPT_KERNEL_VALUES},
        {"max-workspace", required_argument, NULL, OPT_MAX_WORKSPACE},
        {"help", no_argument, NULL, 'h'},                  {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    a->reps = 7;
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (argc < 2) return cli_usage_error("bench: which problem? (filter, conv2d or conv1d; see fastconv bench --help)");
        fputs(bench_help, stdout);
        return -1;
    }
    const char *what = argv[1];
    if (strcmp(what, "filter") == 0) a->kind = FCONV_KIND_FILTER2D;
    else if (strcmp(what, "conv2d") == 0) a->kind = FCONV_KIND_CONV2D;
    else if (strcmp(what, "conv1d") == 0) a->kind = FCONV_KIND_CONV1D;
    else return cli_usage_error("bench: unknown problem '%s' (use filter, conv2d, conv1d or suite)", what);
    argc--;
    argv++;

    int have_size = 0, have_kernel = 0;
    a->filter.mode = FCONV_MODE_SAME;
    a->conv1d.mode = FCONV_MODE_FULL;
    int64_t v[4], pads[4];
    int n, c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        int k = a->kind;
        switch (c) {
        case OPT_SIZE:
            if (k == FCONV_KIND_CONV2D) return cli_usage_error("bench conv2d: use --input NxCxHxW");
            if (k == FCONV_KIND_FILTER2D) {
                if (parse_dims("--size", optarg, v, 3, 1, "HxW[xC]")) return CLI_EXIT_USAGE;
                a->filter.h = v[0]; a->filter.w = v[1]; a->filter.channels = v[2];
            } else if (cli_parse_int("--size", optarg, 1, FCONV_MAX_DIM, &a->conv1d.n)) {
                return CLI_EXIT_USAGE;
            }
            have_size = 1;
            break;
        case OPT_KERNEL:
            if (k == FCONV_KIND_CONV2D) return cli_usage_error("bench conv2d: use --filters KxRxS");
            if (k == FCONV_KIND_FILTER2D) {
                if (parse_dims("--kernel", optarg, v, 2, 0, "RxS")) return CLI_EXIT_USAGE;
                a->filter.kh = v[0]; a->filter.kw = v[1];
            } else if (cli_parse_int("--kernel", optarg, 1, FCONV_MAX_DIM, &a->conv1d.m)) {
                return CLI_EXIT_USAGE;
            }
            have_kernel = 1;
            break;
        case OPT_INPUT:
            if (k != FCONV_KIND_CONV2D) return cli_usage_error("bench %s: use --size", what);
            if (parse_dims("--input", optarg, v, 4, 0, "NxCxHxW")) return CLI_EXIT_USAGE;
            a->conv2d.n = v[0]; a->conv2d.c = v[1]; a->conv2d.h = v[2]; a->conv2d.w = v[3];
            have_size = 1;
            break;
        case OPT_FILTERS:
            if (k != FCONV_KIND_CONV2D) return cli_usage_error("bench %s: use --kernel", what);
            if (parse_dims("--filters", optarg, v, 3, 0, "KxRxS")) return CLI_EXIT_USAGE;
            a->conv2d.k = v[0]; a->conv2d.r = v[1]; a->conv2d.s = v[2];
            have_kernel = 1;
            break;
        case OPT_MODE:
            if (k == FCONV_KIND_CONV2D) return cli_usage_error("bench conv2d: --mode does not apply");
            if (cli_parse_mode(optarg, k == FCONV_KIND_FILTER2D ? &a->filter.mode : &a->conv1d.mode))
                return CLI_EXIT_USAGE;
            break;
        case OPT_BORDER:
            if (k != FCONV_KIND_FILTER2D) return cli_usage_error("bench %s: --border applies to filter only", what);
            if (cli_parse_border(optarg, &a->filter.border, &a->filter.border_value)) return CLI_EXIT_USAGE;
            break;
        case OPT_CORRELATE:
            if (k == FCONV_KIND_CONV2D) return cli_usage_error("bench conv2d: already a correlation");
            a->filter.correlate = a->conv1d.correlate = 1;
            break;
        case OPT_STRIDE:
        case OPT_DILATION:
        case OPT_PAD:
        case OPT_GROUPS:
        case OPT_RELU:
        case OPT_LAYOUT:
            if (k != FCONV_KIND_CONV2D) return cli_usage_error("bench %s: '%s' applies to conv2d only", what, argv[optind - 1]);
            if (c == OPT_STRIDE && parse_pair("--stride", optarg, 1, &a->conv2d.stride_h, &a->conv2d.stride_w))
                return CLI_EXIT_USAGE;
            if (c == OPT_DILATION &&
                parse_pair("--dilation", optarg, 1, &a->conv2d.dilation_h, &a->conv2d.dilation_w))
                return CLI_EXIT_USAGE;
            if (c == OPT_PAD) {
                if (cli_parse_int_list("--pad", optarg, 0, pads, 4, &n)) return CLI_EXIT_USAGE;
                if (n == 3) return cli_usage_error("--pad: give 1, 2 or 4 values, not 3");
                if (n == 1) pads[1] = pads[2] = pads[3] = pads[0];
                if (n == 2) { pads[2] = pads[0]; pads[3] = pads[1]; }
                a->conv2d.pad_top = pads[0]; a->conv2d.pad_left = pads[1];
                a->conv2d.pad_bottom = pads[2]; a->conv2d.pad_right = pads[3];
            }
            if (c == OPT_GROUPS && cli_parse_int("--groups", optarg, 1, FCONV_MAX_DIM, &a->conv2d.groups))
                return CLI_EXIT_USAGE;
            if (c == OPT_RELU) a->conv2d.activation = FCONV_ACTIVATION_RELU;
            if (c == OPT_LAYOUT && cli_parse_layout(optarg, &a->conv2d.layout)) return CLI_EXIT_USAGE;
            break;
        case OPT_ALGO:
            a->all = a->n_interleaved = 0;
            if (strcmp(optarg, "all") == 0) a->all = 1;
            else if (strchr(optarg, ',')) {
                if (cli_parse_algo_list(optarg, a->interleaved, BENCH_MAX_INTERLEAVED, &a->n_interleaved))
                    return CLI_EXIT_USAGE;
            } else if (cli_parse_algo(optarg, &a->algo)) {
                return CLI_EXIT_USAGE;
            }
            break;
        case OPT_THREADS:
            if (cli_parse_threads(optarg, &a->threads)) return CLI_EXIT_USAGE;
            break;
        case OPT_DEVICE:
            if (cli_parse_device(optarg, &a->device)) return CLI_EXIT_USAGE;
            break;
        case OPT_REPS: {
            int64_t r;
            if (cli_parse_int("--reps", optarg, 1, 100000, &r)) return CLI_EXIT_USAGE;
            a->reps = (int)r;
            break;
        }
        case OPT_JSON: a->json = 1; break;
        case OPT_KERNEL_VALUES:
            if (strcmp(optarg, "random") == 0) a->kernel_values = KERNEL_RANDOM;
            else if (strcmp(optarg, "gaussian") == 0) a->kernel_values = KERNEL_GAUSSIAN;
            else if (strcmp(optarg, "box") == 0) a->kernel_values = KERNEL_BOX;
            else return cli_usage_error("--kernel-values: unknown '%s' (use random, gaussian or box)", optarg);
            break;
        case OPT_MAX_WORKSPACE:
            if (cli_parse_workspace_limit(optarg, &a->limits)) return CLI_EXIT_USAGE;
            break;
        case 'h': fputs(bench_help, stdout); return -1;
        default: return cli_report_getopt_error("bench", argv, c);
        }
    }
    if (optind < argc) return cli_usage_error("bench: unexpected argument '%s'", argv[optind]);
    if (!have_size || !have_kernel)
        return cli_usage_error("bench %s: needs %s", what,
                               a->kind == FCONV_KIND_CONV2D ? "--input NxCxHxW and --filters KxRxS"
                                                             : "--size and --kernel");
    return CLI_EXIT_OK;
}

/* Gaussian or box weights: each filter (or the kernel) of size R x S gets the same values,
 * normalized to sum 1 — the rank-1 kernels real image filtering uses. */
static void fill_structured_weights(const struct bench_args *a, float *w, int64_t nw) {
    int64_t r = a->kind == FCONV_KIND_CONV2D ? a->conv2d.r : a->kind == FCONV_KIND_FILTER2D ? a->filter.kh : 1;
    int64_t s = a->kind == FCONV_KIND_CONV2D ? a->conv2d.s : a->kind == FCONV_KIND_FILTER2D ? a->filter.kw
                                                                                               : a->conv1d.m;
    double sr = r / 6.0 > 0.5 ? r / 6.0 : 0.5, ss = s / 6.0 > 0.5 ? s / 6.0 : 0.5, sum = 0.0;
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < s; j++) {
            double di = i - (r - 1) / 2.0, dj = j - (s - 1) / 2.0;
            double v = a->kernel_values == KERNEL_BOX ? 1.0
                                                      : exp(-0.5 * (di * di / (sr * sr) + dj * dj / (ss * ss)));
            w[i * s + j] = (float)v;
            sum += v;
        }
    for (int64_t i = 0; i < r * s; i++) w[i] = (float)(w[i] / sum);
    for (int64_t i = r * s; i < nw; i++) w[i] = w[i % (r * s)];
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Peak RSS: reset the kernel's high-water mark, read it back after the run (Linux);
 * elsewhere getrusage's process-wide maximum. */
static void reset_peak_rss(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

static long long peak_rss_bytes(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        long long kb = -1;
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "VmHWM:", 6) == 0) kb = atoll(line + 6);
        fclose(f);
        if (kb >= 0) return kb * 1024;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (long long)ru.ru_maxrss * 1024;
}

fconv_options bench_options(const struct bench_args *a, fconv_algo algo) {
    return (fconv_options){.algo = algo, .threads = a->threads, .device = a->device,
                           .max_workspace_bytes = a->limits.max_workspace_bytes, .flags = a->limits.flags};
}

fconv_status bench_make_plan(const struct bench_args *a, const fconv_options *o, const float *w,
                              const float *bias, fconv_plan **plan) {
    if (a->kind == FCONV_KIND_CONV2D) return fconv_plan_conv2d(&a->conv2d, o, w, bias, plan);
    if (a->kind == FCONV_KIND_FILTER2D) return fconv_plan_filter2d(&a->filter, o, w, plan);
    return fconv_plan_conv1d(&a->conv1d, o, w, plan);
}

/* Max normalized error over all outputs, or an evenly spread sample of them. */
static double measure_error(const fconv_plan *plan, const float *x, const float *w, const float *y) {
    int64_t ny = fconv_plan_output_elements(plan);
    double macs_per_output = fconv_plan_macs(plan) / (double)ny;
    int64_t samples = (int64_t)(ERROR_CHECK_MACS / (macs_per_output > 1 ? macs_per_output : 1));
    if (samples < 1000) samples = 1000;
    int64_t step = samples >= ny ? 1 : ny / samples;
    double max_err = 0.0, max_mag = 0.0;
    for (int64_t e = 0; e < ny; e += step) {
        double mag, ref = fconv_ref_output_at(plan, x, w, NULL, e, &mag);
        double err = fabs((double)y[e] - ref);
        if (!(err <= max_err)) max_err = err;
        if (mag > max_mag) max_mag = mag;
    }
    return max_mag > 0 ? max_err / max_mag : max_err;
}

/* Plan algos[0..n) together and time them: each round runs every plan once, in list order on
 * even rounds and in reverse on odd ones, so that with several neither a place in the round
 * nor a drift of the machine's speed favours one (on a shared VM the same plan's time can move
 * 10-40% from one stretch of seconds to the next, so plans timed one after the other compare
 * their stretches as much as themselves). r[j] gets plan j's row; with several, its vs_first
 * is the median over rounds of plan 0's time over plan j's in that round, and peak_rss is
 * every plan's together. 0 on success; 1 if one declined or could not be set up (reason in
 * why, led by its name where there are several). */
static int time_plans(const struct bench_args *a, const fconv_algo *algos, int n, const float *x, const float *w,
                      float *y, struct bench_result *r, char *why, size_t why_len) {
    const int reps = a->reps;
    fconv_plan *plans[BENCH_MAX_INTERLEAVED] = {NULL};
    void *ws[BENCH_MAX_INTERLEAVED] = {NULL};
    size_t ws_bytes[BENCH_MAX_INTERLEAVED] = {0};
    double *times = NULL;
    int rc = 1;
    reset_peak_rss();
    for (int j = 0; j < n; j++) {
        const char *name = n > 1 ? fconv_algo_name(algos[j]) : "", *colon = n > 1 ? ": " : "";
        const fconv_options o = bench_options(a, algos[j]);
        memset(&r[j], 0, sizeof r[j]);
        double t0 = now_ms();
        if (bench_make_plan(a, &o, w, NULL, &plans[j]) != FCONV_OK) {
            snprintf(why, why_len, "%s%s%s", name, colon, fconv_last_error());
            plans[j] = NULL;
            goto done;
        }
        r[j].plan_ms = now_ms() - t0;
        if (algos[j] == FCONV_ALGO_AUTO) cli_explain_plan(plans[j]); /* FASTCONV_VERBOSE: what AUTO chose, why */
        ws_bytes[j] = fconv_plan_workspace_size(plans[j]);
        ws[j] = ws_bytes[j] ? fconv_alloc_aligned(ws_bytes[j]) : NULL;
        if (ws_bytes[j] && !ws[j]) {
            snprintf(why, why_len, "%s%scannot allocate its %zu-byte workspace", name, colon, ws_bytes[j]);
            goto done;
        }
    }
    /* per plan: reps times, then kernel and transfer times (GPU: device events); then one
     * round's ratios */
    times = malloc(((size_t)n * 3 + 1) * (size_t)reps * sizeof *times);
    if (!times) {
        snprintf(why, why_len, "cannot allocate the timing table for %d plan(s) x %d reps", n, reps);
        goto done;
    }
    double *ratio = times + (size_t)n * 3 * (size_t)reps;
    /* Warm up for at least WARMUP_MS, not one run: in the first ~0.1 s of a process the
     * threads are still settling (the OpenMP worker can start on the main thread's core and
     * OpenBLAS's pool spins before it sleeps), which made short 2-thread problems measure
     * 10x slow in one process out of three. */
    double warm_start = now_ms();
    for (int i = 0; i < 1 || (i < 10000 && now_ms() - warm_start < WARMUP_MS); i++)
        for (int j = 0; j < n; j++) fconv_execute_with_workspace(plans[j], x, NULL, NULL, y, ws[j], ws_bytes[j]);
    const int on_device = a->device != FCONV_DEVICE_CPU;
    for (int i = 0; i < reps; i++)
        for (int k = 0; k < n; k++) {
            const int j = i % 2 ? n - 1 - k : k;
            double *t = times + (size_t)j * 3 * (size_t)reps;
            double s = now_ms();
            fconv_execute_with_workspace(plans[j], x, NULL, NULL, y, ws[j], ws_bytes[j]);
            t[i] = now_ms() - s;
            if (on_device && fconv_last_execute_timing(&t[reps + i], &t[2 * reps + i]) != FCONV_OK)
                t[reps + i] = t[2 * reps + i] = 0.0;
        }
    const long long peak = peak_rss_bytes();
    for (int j = 0; j < n && n > 1; j++) { /* every ratio before any times are sorted */
        const double *t = times + (size_t)j * 3 * (size_t)reps;
        for (int i = 0; i < reps; i++) ratio[i] = times[i] / t[i];
        r[j].vs_first = fconv_median(ratio, (size_t)reps);
    }
    const int ran_last = (reps - 1) % 2 ? 0 : n - 1; /* y holds its output */
    for (int j = 0; j < n; j++) {
        double *t = times + (size_t)j * 3 * (size_t)reps, *kernel = t + reps, *transfer = t + 2 * reps;
        r[j].on_device = on_device;
        if (on_device) {
            qsort(kernel, (size_t)reps, sizeof *kernel, fconv_compare_double);
            qsort(transfer, (size_t)reps, sizeof *transfer, fconv_compare_double);
            r[j].kernel_ms = kernel[reps / 2];
            r[j].transfer_ms = transfer[reps / 2];
        }
        r[j].median_ms = fconv_median(t, (size_t)reps);
        r[j].min_ms = t[0];
        r[j].max_ms = t[reps - 1];
        r[j].algo = fconv_plan_algo(plans[j]);
        r[j].gflops = 2.0 * fconv_plan_macs(plans[j]) / (r[j].median_ms * 1e6);
        r[j].workspace = ws_bytes[j];
        r[j].device_bytes = fconv_plan_device_bytes(plans[j]);
        r[j].threads = fconv_plan_threads(plans[j]);
        r[j].peak_rss = peak;
    }
    /* y's output first, while it is there; then each of the others into y again */
    r[ran_last].error = measure_error(plans[ran_last], x, w, y);
    for (int j = 0; j < n; j++) {
        if (j == ran_last) continue;
        fconv_execute_with_workspace(plans[j], x, NULL, NULL, y, ws[j], ws_bytes[j]);
        r[j].error = measure_error(plans[j], x, w, y);
    }
    rc = 0;
done:
    free(times);
    for (int j = 0; j < n; j++) {
        fconv_free_aligned(ws[j]);
        fconv_plan_destroy(plans[j]);
    }
    return rc;
}

/* Plan and time one algorithm. 0 on success; 1 if it declined (reason in *why). */
int bench_one(const struct bench_args *a, fconv_algo algo, const float *x, const float *w,
                     float *y, struct bench_result *r, char *why, size_t why_len) {
    return time_plans(a, &algo, 1, x, w, y, r, why, why_len);
}

void bench_describe_problem(const struct bench_args *a, char *buf, size_t n) {
    static const char *modes[] = {"full", "same", "valid"};
    static const char *borders[] = {"zero", "constant", "replicate", "reflect", "mirror", "wrap"};
    if (a->kind == FCONV_KIND_CONV2D) {
        const fconv_conv2d_desc *d = &a->conv2d;
        snprintf(buf, n,
                 "conv2d input %lldx%lldx%lldx%lld, filters %lldx%lldx%lld, stride %lld,%lld, pad "
                 "%lld,%lld,%lld,%lld, dilation %lld,%lld, groups %lld%s%s",
                 (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w, (long long)d->k,
                 (long long)d->r, (long long)d->s, (long long)(d->stride_h ? d->stride_h : 1),
                 (long long)(d->stride_w ? d->stride_w : 1), (long long)d->pad_top,
                 (long long)d->pad_left, (long long)d->pad_bottom, (long long)d->pad_right,
                 (long long)(d->dilation_h ? d->dilation_h : 1),
                 (long long)(d->dilation_w ? d->dilation_w : 1), (long long)(d->groups ? d->groups : 1),
                 d->activation ? ", relu" : "", d->layout == FCONV_LAYOUT_NHWC ? ", nhwc" : "");
    } else if (a->kind == FCONV_KIND_FILTER2D) {
        const fconv_filter2d_desc *d = &a->filter;
        snprintf(buf, n, "filter %lldx%lldx%lld, kernel %lldx%lld, mode %s, border %s, %s", (long long)d->h,
                 (long long)d->w, (long long)(d->channels ? d->channels : 1), (long long)d->kh,
                 (long long)d->kw, modes[d->mode], borders[d->border],
                 d->correlate ? "correlation" : "convolution");
    } else {
        snprintf(buf, n, "conv1d n %lld, kernel %lld, mode %s, %s", (long long)a->conv1d.n,
                 (long long)a->conv1d.m, modes[a->conv1d.mode], a->conv1d.correlate ? "correlation" : "convolution");
    }
}

static const char *human_bytes(double b, char *buf, size_t n) {
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", b, units[u]);
    return buf;
}

void bench_print_table_row(const struct bench_result *r, const char *requested) {
    char ws[32], rss[32], name[40];
    if (requested) snprintf(name, sizeof name, "%s (%s)", requested, fconv_algo_name(r->algo));
    else snprintf(name, sizeof name, "%s", fconv_algo_name(r->algo));
    printf("%-20s %10.3f %10.3f %10.3f %9.2f %9.2f %11s %11s %9.1e\n", name, r->median_ms, r->min_ms,
           r->max_ms, r->plan_ms, r->gflops, human_bytes((double)r->workspace, ws, sizeof ws),
           human_bytes((double)r->peak_rss, rss, sizeof rss), r->error);
    if (r->on_device)
        printf("%-20s kernel %.3f ms, transfers %.3f ms (device events, medians), device memory %s\n",
               "", r->kernel_ms, r->transfer_ms, human_bytes((double)r->device_bytes, ws, sizeof ws));
}

void bench_print_json_row(const struct bench_result *r, const char *requested, int first) {
    printf("%s\n  {\"algo\": \"%s\", \"requested\": \"%s\", \"median_ms\": %.6f, \"min_ms\": %.6f, "
           "\"max_ms\": %.6f, \"plan_ms\": %.6f, \"gflops\": %.4f, \"workspace_bytes\": %zu, "
           "\"peak_rss_bytes\": %lld, \"error\": %.6e, \"threads\": %d",
           first ? "" : ",", fconv_algo_name(r->algo), requested ? requested : fconv_algo_name(r->algo),
           r->median_ms, r->min_ms, r->max_ms, r->plan_ms, r->gflops, r->workspace, r->peak_rss,
           r->error, r->threads);
    if (r->on_device)
        printf(", \"kernel_ms\": %.6f, \"transfer_ms\": %.6f, \"device_bytes\": %zu", r->kernel_ms,
               r->transfer_ms, r->device_bytes);
    if (r->vs_first > 0) printf(", \"vs_first\": %.6f", r->vs_first);
    printf("}");
}

/* The problem's operand sizes, from an AUTO plan (which also validates it). */
static int problem_sizes(const struct bench_args *a, int64_t *nx, int64_t *nw, int64_t *ny, double *macs) {
    fconv_plan *probe;
    fconv_status st = bench_make_plan(a, &(fconv_options){.threads = a->threads}, NULL, NULL, &probe);
    if (st != FCONV_OK) return cli_library_error("bench", st);
    *nx = fconv_plan_input_elements(probe);
    *nw = fconv_plan_weight_elements(probe);
    *ny = fconv_plan_output_elements(probe);
    *macs = fconv_plan_macs(probe);
    fconv_plan_destroy(probe);
    return CLI_EXIT_OK;
}

/* n uniform [-1, 1) floats into p (NULL: only the generator's state advances). */
static void fill_uniform(uint64_t *state, float *p, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        *state = *state * 6364136223846793005ull + 1442695040888963407ull;
        if (p) p[i] = (float)((double)(*state >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
    }
}

/* x then w from one seeded generator (w shaped by --kernel-values), either may be NULL. */
static void fill_operands(const struct bench_args *a, float *x, int64_t nx, float *w, int64_t nw) {
    uint64_t state = 12345;
    fill_uniform(&state, x, nx);
    fill_uniform(&state, w, nw);
    if (w && a->kernel_values != KERNEL_RANDOM) fill_structured_weights(a, w, nw);
}

int bench_make_data(const struct bench_args *a, float **xp, float **wp, float **yp, double *macs) {
    int64_t nx = 0, nw = 0, ny = 0;
    int rc = problem_sizes(a, &nx, &nw, &ny, macs);
    if (rc != CLI_EXIT_OK) return rc;
    /* y 64-byte aligned, as fastconv.h asks of a caller after speed: rows of an aligned
     * output can leave through non-temporal stores */
    float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w),
          *y = fconv_alloc_aligned((size_t)(ny > 0 ? ny : 1) * sizeof *y);
    if (!x || !w || !y) {
        free(x); free(w); fconv_free_aligned(y);
        return cli_fail("bench: out of memory for the problem's %lld + %lld + %lld floats", (long long)nx,
                        (long long)nw, (long long)ny);
    }
    fill_operands(a, x, nx, w, nw);
    *xp = x;
    *wp = w;
    *yp = y;
    return CLI_EXIT_OK;
}

int bench_make_weights(const struct bench_args *a, float **wp) {
    int64_t nx = 0, nw = 0, ny = 0;
    double macs;
    int rc = problem_sizes(a, &nx, &nw, &ny, &macs);
    if (rc != CLI_EXIT_OK) return rc;
    float *w = malloc((size_t)(nw > 0 ? nw : 1) * sizeof *w);
    if (!w) return cli_fail("bench: out of memory for the problem's %lld weights", (long long)nw);
    fill_operands(a, NULL, nx, w, nw);
    *wp = w;
    return CLI_EXIT_OK;
}

int cmd_bench(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "suite") == 0) return cmd_bench_suite(argc - 1, argv + 1);
    struct bench_args a;
    int rc = bench_parse_args(argc, argv, &a);
    if (rc != CLI_EXIT_OK) return rc < 0 ? CLI_EXIT_OK : rc;

    float *x, *w, *y;
    double macs;
    rc = bench_make_data(&a, &x, &w, &y, &macs);
    if (rc != CLI_EXIT_OK) return rc;

    char problem[512];
    bench_describe_problem(&a, problem, sizeof problem);
    if (!a.json) {
        printf("problem: %s; %.3g multiply-adds; %d %s after a 0.3 s warm-up\n", problem, macs, a.reps,
               a.n_interleaved ? "alternated rounds" : "reps");
        printf("%-20s %10s %10s %10s %9s %9s %11s %11s %9s\n", "algo", "median ms", "min ms", "max ms",
               "plan ms", "GFLOP/s", "workspace", "peak RSS", "error");
    } else {
        printf("[");
    }
    int first = 1, ran = 0;
    char why[512];
    if (a.n_interleaved) {
        struct bench_result rows[BENCH_MAX_INTERLEAVED];
        const int failed = time_plans(&a, a.interleaved, a.n_interleaved, x, w, y, rows, why, sizeof why);
        for (int j = 0; !failed && j < a.n_interleaved; j++) {
            const char *requested = a.interleaved[j] == FCONV_ALGO_AUTO ? "auto" : NULL;
            if (a.json) bench_print_json_row(&rows[j], requested, j == 0);
            else bench_print_table_row(&rows[j], requested);
        }
        if (!failed && !a.json) {
            printf("speed against %s, the median over rounds of its time / each one's (> 1: faster):\n",
                   fconv_algo_name(rows[0].algo));
            for (int j = 1; j < a.n_interleaved; j++) {
                char name[40];
                if (a.interleaved[j] == FCONV_ALGO_AUTO) snprintf(name, sizeof name, "auto (%s)", fconv_algo_name(rows[j].algo));
                else snprintf(name, sizeof name, "%s", fconv_algo_name(rows[j].algo));
                printf("  %-20s x%.3f\n", name, rows[j].vs_first);
            }
        }
        if (a.json) printf("%s]\n", failed ? "" : "\n");
        free(x);
        free(w);
        fconv_free_aligned(y);
        return failed ? cli_fail("bench: %s", why) : CLI_EXIT_OK;
    }
    /* With all: every algorithm, then AUTO (index FCONV_ALGO_COUNT_) to show its choice. */
    for (int i = a.all ? 1 : 0; i < (a.all ? FCONV_ALGO_COUNT_ + 1 : 1); i++) {
        fconv_algo algo = !a.all ? a.algo : i == FCONV_ALGO_COUNT_ ? FCONV_ALGO_AUTO : (fconv_algo)i;
        fconv_algo_info info;
        if (a.all && algo != FCONV_ALGO_AUTO && fconv_algo_get_info(algo, &info) != FCONV_OK) continue;
        if (a.all && algo == FCONV_ALGO_REFERENCE && macs > ALL_REFERENCE_MACS) {
            if (!a.json)
                printf("%-20s skipped: %.2g multiply-adds would take long; ask with --algo reference\n",
                       "reference", macs);
            continue;
        }
        struct bench_result r;
        int declined = bench_one(&a, algo, x, w, y, &r, why, sizeof why);
        if (declined) {
            if (a.all) {
                if (!a.json) printf("%-20s declined: %s\n", fconv_algo_name(algo), why);
                continue;
            }
            free(x); free(w); fconv_free_aligned(y);
            if (a.json) printf("]\n");
            return cli_fail("bench: %s", why);
        }
        const char *requested = algo == FCONV_ALGO_AUTO ? "auto" : NULL;
        if (a.json) bench_print_json_row(&r, requested, first);
        else bench_print_table_row(&r, requested);
        first = 0;
        ran++;
    }
    if (a.json) printf("\n]\n");
    free(x);
    free(w);
    fconv_free_aligned(y);
    return ran ? CLI_EXIT_OK : cli_fail("bench: no algorithm could run this problem");
}
