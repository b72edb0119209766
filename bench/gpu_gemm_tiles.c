/*
 * gpu_gemm_tiles.c — the conv2d GEMMs' block tiles on a GPU, for fitting the tile model of
 * src/gpu/gpu-conv2d.c (fconv_gpu_gemm_tiles): every conv2d line of `fastconv bench suite
 * --list` on stdin, gpu-im2col-gemm, gpu-implicit-gemm and gpu-winograd-2x2 / -4x4 (where
 * they serve) with each tile FCONV_GPU_GEMM_TILE forces and with the model's choice (tile
 * "auto"); per row the median and least kernel time (device events) of 7 executes after 2,
 * one JSON object per line. The plans of a shape are
 * timed in turns, so a drifting clock falls on all of them alike. Build against a build tree:
 *
 *   gcc -O2 -Iinclude bench/gpu_gemm_tiles.c -Lbuild -lfastconv -Wl,-rpath,$PWD/build \
 *       -o /tmp/gpu_gemm_tiles
 *   build/fastconv bench suite --list | /tmp/gpu_gemm_tiles cuda > tiles.jsonl
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fastconv.h"

#define REPS 7
#define WARM 2

static const char *const tiles[] = {"auto", "64x64", "64x128", "128x128"};
static const fconv_algo algos[] = {FCONV_ALGO_GPU_IM2COL_GEMM, FCONV_ALGO_GPU_IMPLICIT_GEMM,
                                   FCONV_ALGO_GPU_WINOGRAD_2X2, FCONV_ALGO_GPU_WINOGRAD_4X4};
enum { NTILES = sizeof tiles / sizeof tiles[0], NALGOS = sizeof algos / sizeof algos[0] };

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A suite line's conv2d (--input NxCxHxW --filters KxRxS [--stride S] [--pad P]), or 0. */
static int parse(char *line, fconv_conv2d_desc *d) {
    memset(d, 0, sizeof *d);
    d->stride_h = d->stride_w = 1;
    if (!strstr(line, "conv2d ")) return 0;
    for (char *tok = strtok(line, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
        char *val = strtok(NULL, " \t\n");
        if (!val) break;
        long long a, b, c, e;
        if (strcmp(tok, "--input") == 0 && sscanf(val, "%lldx%lldx%lldx%lld", &a, &b, &c, &e) == 4)
            d->n = a, d->c = b, d->h = c, d->w = e;
        else if (strcmp(tok, "--filters") == 0 && sscanf(val, "%lldx%lldx%lld", &a, &b, &c) == 3)
            d->k = a, d->r = b, d->s = c;
        else if (strcmp(tok, "--stride") == 0) d->stride_h = d->stride_w = atoll(val);
        else if (strcmp(tok, "--pad") == 0)
            d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = atoll(val);
        else if (strncmp(tok, "--", 2) != 0 && strcmp(val, "conv2d") != 0)
            return 0; /* the line starts "group conv2d": that pair is the only other one */
    }
    return d->n > 0 && d->k > 0;
}

int main(int argc, char **argv) {
    fconv_device dev = argc > 1 && strcmp(argv[1], "opencl") == 0 ? FCONV_DEVICE_OPENCL
                                                                   : FCONV_DEVICE_CUDA;
    char line[1024], shape[1024];
    while (fgets(line, sizeof line, stdin)) {
        fconv_conv2d_desc d;
        snprintf(shape, sizeof shape, "%s", line);
        shape[strcspn(shape, "\n")] = 0;
        if (!parse(line, &d)) continue;
        fconv_plan *plans[NTILES][NALGOS] = {{NULL}};
        int64_t nw = d.k * d.c * d.r * d.s, nx = d.n * d.c * d.h * d.w;
        float *w = malloc((size_t)nw * 4), *x = malloc((size_t)nx * 4), *y = NULL;
        for (int64_t i = 0; i < nw; i++) w[i] = (float)(i % 7) * 0.1f - 0.3f;
        for (int64_t i = 0; i < nx; i++) x[i] = (float)(i % 5) * 0.2f - 0.4f;
        for (int t = 0; t < NTILES; t++) {
            if (t == 0) unsetenv("FCONV_GPU_GEMM_TILE");
            else setenv("FCONV_GPU_GEMM_TILE", tiles[t], 1);
            for (int a = 0; a < NALGOS; a++) {
                fconv_options o = {.algo = algos[a], .device = dev};
                fconv_status st = fconv_plan_conv2d(&d, &o, w, NULL, &plans[t][a]);
                if (st != FCONV_OK) { /* Winograd declines what is not 3x3 stride 1 */
                    if (st != FCONV_EUNSUPPORTED) fprintf(stderr, "%s: %s\n", shape, fconv_last_error());
                    plans[t][a] = NULL;
                }
            }
        }
        unsetenv("FCONV_GPU_GEMM_TILE");
        for (int t = 0; t < NTILES; t++)
            for (int a = 0; a < NALGOS && !y; a++)
                if (plans[t][a]) y = malloc((size_t)fconv_plan_output_elements(plans[t][a]) * 4);
        double ms[NTILES][NALGOS][REPS] = {{{0}}};
        for (int rep = 0; y && rep < WARM + REPS; rep++)
            for (int t = 0; t < NTILES; t++)
                for (int a = 0; a < NALGOS; a++) {
                    double k_ms = -1, t_ms = -1;
                    if (!plans[t][a]) continue;
                    if (fconv_execute(plans[t][a], x, NULL, NULL, y) != FCONV_OK ||
                        fconv_last_execute_timing(&k_ms, &t_ms) != FCONV_OK) {
                        fprintf(stderr, "%s: %s\n", shape, fconv_last_error());
                        fconv_plan_destroy(plans[t][a]);
                        plans[t][a] = NULL;
                        continue;
                    }
                    if (rep >= WARM) ms[t][a][rep - WARM] = k_ms;
                }
        for (int t = 0; t < NTILES; t++)
            for (int a = 0; a < NALGOS; a++) {
                if (!plans[t][a] || !y) {
                    fconv_plan_destroy(plans[t][a]);
                    continue;
                }
                qsort(ms[t][a], REPS, sizeof(double), cmp_double);
                printf("{\"shape\": \"%s\", \"algo\": \"%s\", \"tile\": \"%s\", \"median_ms\": %.6f, "
                       "\"min_ms\": %.6f}\n",
                       shape, fconv_algo_name(algos[a]), tiles[t], ms[t][a][REPS / 2], ms[t][a][0]);
                fconv_plan_destroy(plans[t][a]);
            }
        fflush(stdout);
        free(w);
        free(x);
        free(y);
    }
    return 0;
}
