/*
 * cmd-match.c — `fastconv match`: block-matching motion estimation. Each B x B block of
 * FRAME0 is compared (SAD, exhaustive search within +-R) with every displaced block of
 * FRAME1 that lies wholly inside it; the SAD cost volume is one UMI operator per strip of
 * block rows (so its memory stays bounded), the arg-min is taken here.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "frames.h"

static const char match_help[] =
    "usage: fastconv match FRAME0 FRAME1 -o VECTORS.npy [options]\n"
    "\n"
    "Block-matching motion estimation (sum of absolute differences, exhaustive search).\n"
    "FRAME0, FRAME1  images (colour is converted to luma) or 2D .npy, of the same size\n"
    "-o, --output F  .npy of shape (H/B, W/B, 2): per block (dx, dy), the block of FRAME0 at\n"
    "                (x, y) is found in FRAME1 at (x + dx, y + dy); leftover edge pixels are\n"
    "                not covered\n"
    "--block B       block side (default 8, 1..256)\n"
    "--search R      search radius in pixels (default 7, 0..256): |dx|, |dy| <= R; candidate\n"
    "                blocks must lie inside FRAME1; ties go to the smallest motion\n"
    "--viz F         also write a picture (.png/.ppm/.jpg): hue = direction, saturation =\n"
    "                length (full at R*sqrt(2)), one block of colour per vector\n"
    "--threads N     threads (default 0 = all cores)\n";

/* Cost volume floats per strip: bounds memory on big frames and search ranges. */
#define MATCH_STRIP_FLOATS ((int64_t)1 << 22)

int cmd_match(int argc, char **argv) {
    enum { OPT_BLOCK = 256, OPT_SEARCH, OPT_VIZ, OPT_THREADS };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"block", required_argument, NULL, OPT_BLOCK},
        {"search", required_argument, NULL, OPT_SEARCH}, {"viz", required_argument, NULL, OPT_VIZ},
        {"threads", required_argument, NULL, OPT_THREADS}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *output = NULL, *viz = NULL;
    int64_t block = 8, search = 7;
    int threads = 0, c;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case OPT_BLOCK:
            if (cli_parse_int("--block", optarg, 1, 256, &block)) return CLI_EXIT_USAGE;
            break;
        case OPT_SEARCH:
            if (cli_parse_int("--search", optarg, 0, 256, &search)) return CLI_EXIT_USAGE;
            break;
        case OPT_VIZ: viz = optarg; break;
        case OPT_THREADS:
            if (cli_parse_threads(optarg, &threads)) return CLI_EXIT_USAGE;
            break;
        case 'h': fputs(match_help, stdout); return CLI_EXIT_OK;
        default: return cli_report_getopt_error("match", argv, c);
        }
    }
    if (argc - optind < 2) return cli_usage_error("match: needs FRAME0 and FRAME1 (see fastconv match --help)");
    if (argc - optind > 2) return cli_usage_error("match: unexpected argument '%s'", argv[optind + 2]);
    if (!output) return cli_usage_error("match: missing -o VECTORS.npy");
    if (!cli_has_extension(output, ".npy")) return cli_usage_error("%s: match writes .npy vectors; use --viz for a picture", output);
    if (cli_check_output_path(output)) return CLI_EXIT_FAILURE;
    int rc;
    if (viz && (rc = cli_check_picture_path("--viz", viz)) != 0) return rc;

    struct cli_frame f0 = {0}, f1 = {0};
    float *cost = NULL, *vec = NULL, *pic = NULL;
    rc = CLI_EXIT_FAILURE;
    if (cli_read_gray_frame(argv[optind], &f0) || cli_read_gray_frame(argv[optind + 1], &f1)) goto done;
    if (f0.h != f1.h || f0.w != f1.w) {
        cli_fail("match: frames differ in size: %s is %lldx%lld, %s is %lldx%lld (W x H)", argv[optind],
                 (long long)f0.w, (long long)f0.h, argv[optind + 1], (long long)f1.w, (long long)f1.h);
        goto done;
    }
    if (f0.h < block || f0.w < block) {
        cli_fail("match: --block %lld is larger than the frames (%lldx%lld)", (long long)block,
                 (long long)f0.w, (long long)f0.h);
        goto done;
    }
    const int64_t h = f0.h, w = f0.w, nby = h / block, nbx = w / block, side = 2 * search + 1;
    const int64_t per_row = nbx * side * side;
    int64_t strip = MATCH_STRIP_FLOATS / per_row;
    if (strip < 1) strip = 1;
    if (strip > nby) strip = nby;
    cost = malloc((size_t)(strip * per_row) * sizeof *cost);
    vec = malloc((size_t)(nby * nbx * 2) * sizeof *vec);
    if (!cost || !vec) {
        cli_fail("match: out of memory");
        goto done;
    }
    for (int64_t by0 = 0; by0 < nby; by0 += strip) {
        int64_t rows = nby - by0 < strip ? nby - by0 : strip;
        /* U(FRAME1)[by][bx][sy][sx][i][j] = f1[(by0+by)B + sy - R + i][bx B + sx - R + j];
         * U(FRAME0) is the same block without displacement (stride 0 on sy, sx). Candidates
         * that leave FRAME1 read replicated edges and are discarded below. */
        fconv_umi_desc d = {
            .n_par = 4, .par_extent = {rows, nbx, side, side},
            .n_acc = 2, .acc_extent = {block, block},
            .a = {.ndim = 2, .shape = {h, w},
                  .par = {{0, block, by0 * block}, {1, block, 0}, {0, 1, -search}, {1, 1, -search}},
                  .acc = {{0, 1, 0}, {1, 1, 0}}, .border = FCONV_UMI_BORDER_REPLICATE},
            .b = {.ndim = 2, .shape = {h, w},
                  .par = {{0, block, by0 * block}, {1, block, 0}, {0, 0, 0}, {0, 0, 0}},
                  .acc = {{0, 1, 0}, {1, 1, 0}}},
            .has_b = 1, .strategy = FCONV_UMI_SAD};
        if (cli_run_umi("match", &d, threads, f1.data, f0.data, NULL, cost)) goto done;
        for (int64_t by = 0; by < rows; by++)
            for (int64_t bx = 0; bx < nbx; bx++) {
                const float *cv = cost + (by * nbx + bx) * side * side;
                const int64_t y0 = (by0 + by) * block, x0 = bx * block;
                float best = INFINITY;
                int64_t bdx = 0, bdy = 0, bnorm = INT64_MAX;
                for (int64_t sy = 0; sy < side; sy++)
                    for (int64_t sx = 0; sx < side; sx++) {
                        int64_t dy = sy - search, dx = sx - search;
                        if (y0 + dy < 0 || y0 + dy + block > h || x0 + dx < 0 || x0 + dx + block > w) continue;
                        float v = cv[sy * side + sx];
                        int64_t norm = dx * dx + dy * dy;
                        if (v < best || (v == best && norm < bnorm)) best = v, bdx = dx, bdy = dy, bnorm = norm;
                    }
                float *o = vec + ((by0 + by) * nbx + bx) * 2;
                o[0] = (float)bdx;
                o[1] = (float)bdy;
            }
    }
    const int64_t shape[3] = {nby, nbx, 2};
    if (viz) {
        pic = malloc((size_t)(nby * block * nbx * block * 3) * sizeof *pic);
        if (!pic) {
            cli_fail("match: out of memory");
            goto done;
        }
        const float full = (float)search * sqrtf(2.0f);
        for (int64_t y = 0; y < nby * block; y++)
            for (int64_t x = 0; x < nbx * block; x++) {
                const float *v = vec + ((y / block) * nbx + x / block) * 2;
                float hue = atan2f(v[1], v[0]) * (180.0f / 3.14159265f);
                if (hue < 0) hue += 360.0f;
                float sat = full > 0 ? hypotf(v[0], v[1]) / full : 0.0f;
                cli_hsv_to_rgb(hue, sat > 1 ? 1 : sat, 1.0f, pic + (y * nbx * block + x) * 3);
            }
    }
    if (cli_write_npy(output, vec, 3, shape)) goto done;
    if (viz && cli_write_picture(viz, pic, nby * block, nbx * block, 3)) goto done;
    rc = CLI_EXIT_OK;
done:
    free(f0.data);
    free(f1.data);
    free(cost);
    free(vec);
    free(pic);
    return rc;
}
