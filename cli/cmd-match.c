/*
 * cmd-match.c — `fastconv match`: block-matching motion estimation. Each B x B block of
 * FRAME0 is compared (SAD, exhaustive search within +-R) with every displaced block of
 * FRAME1 that lies wholly inside it; the SAD costs and their arg-min come from cli/umi-sad.c
 * (UMI operators per row of blocks, memory bounded).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "frames.h"
#include "umi-sad.h"

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
    float *vec = NULL, *pic = NULL;
    rc = CLI_EXIT_FAILURE;
    if (cli_read_gray_frame("match", argv[optind], &f0) || cli_read_gray_frame("match", argv[optind + 1], &f1)) goto done;
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
    const int64_t h = f0.h, w = f0.w, nby = h / block, nbx = w / block;
    vec = malloc((size_t)(nby * nbx * 2) * sizeof *vec);
    if (!vec) {
        cli_fail("match: out of memory");
        goto done;
    }
    /* The box-sum path where it is bit-identical to the direct UMI SAD (integer-valued
     * inputs, e.g. 8-bit images), else the direct one (cli/umi-sad.h, docs/umi.md). */
    int box = cli_sad_box_exact(f0.data, f1.data, h * w, block * block);
    fconv_status st = cli_match_vectors(f0.data, f1.data, h, w, block, search, threads, box, vec, NULL);
    if (st == FCONV_ENOMEM) {
        cli_fail("match: out of memory");
        goto done;
    }
    if (st != FCONV_OK) {
        cli_library_error("match", st);
        goto done;
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
    free(vec);
    free(pic);
    return rc;
}
