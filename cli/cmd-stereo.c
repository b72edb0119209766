/*
 * cmd-stereo.c — `fastconv stereo`: SAD block-matching disparity for a rectified pair.
 * For each LEFT pixel the B x B window around it is compared with the windows of RIGHT
 * shifted left by d = 0..D (the convention of cv2.StereoBM); window reads beyond the image
 * replicate its edge. The costs and their arg-min come from cli/umi-sad.c (UMI operators
 * per strip of rows: box sums of ABSDIFF planes, or one SAD operator).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "frames.h"
#include "umi-sad.h"

static const char stereo_help[] =
    "usage: fastconv stereo LEFT RIGHT -o DISPARITY.npy [options]\n"
    "\n"
    "Block-matching disparity (sum of absolute differences) of a rectified stereo pair.\n"
    "LEFT, RIGHT         images (colour is converted to luma) or 2D .npy, of the same size\n"
    "-o, --output F      .npy of shape (H, W): per left pixel (x, y) the disparity d such\n"
    "                    that it matches right pixel (x - d, y); d <= x; ties go to the smaller d\n"
    "--block B           odd window side (default 9, 1..255); reads beyond the image replicate\n"
    "                    its edge\n"
    "--max-disparity D   largest disparity searched (default 32, 1..4096, below the width)\n"
    "--viz F             also write a picture (.png/.ppm/.jpg): disparity as gray, 0..D -> 0..255\n"
    "--threads N         threads (default 0 = all cores)\n";

int cmd_stereo(int argc, char **argv) {
    enum { OPT_BLOCK = 256, OPT_MAXD, OPT_VIZ, OPT_THREADS };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"block", required_argument, NULL, OPT_BLOCK},
        {"max-disparity", required_argument, NULL, OPT_MAXD}, {"viz", required_argument, NULL, OPT_VIZ},
        {"threads", required_argument, NULL, OPT_THREADS}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *output = NULL, *viz = NULL;
    int64_t block = 9, maxd = 32;
    int threads = 0, c;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case OPT_BLOCK:
            if (cli_parse_int("--block", optarg, 1, 255, &block)) return CLI_EXIT_USAGE;
            if (block % 2 == 0) return cli_usage_error("--block: must be odd (the window is centred), got %lld", (long long)block);
            break;
        case OPT_MAXD:
            if (cli_parse_int("--max-disparity", optarg, 1, 4096, &maxd)) return CLI_EXIT_USAGE;
            break;
        case OPT_VIZ: viz = optarg; break;
        case OPT_THREADS:
            if (cli_parse_threads(optarg, &threads)) return CLI_EXIT_USAGE;
            break;
        case 'h': fputs(stereo_help, stdout); return CLI_EXIT_OK;
        default: return cli_report_getopt_error("stereo", argv, c);
        }
    }
    if (argc - optind < 2) return cli_usage_error("stereo: needs LEFT and RIGHT (see fastconv stereo --help)");
    if (argc - optind > 2) return cli_usage_error("stereo: unexpected argument '%s'", argv[optind + 2]);
    if (!output) return cli_usage_error("stereo: missing -o DISPARITY.npy");
    if (!cli_has_extension(output, ".npy")) return cli_usage_error("%s: stereo writes .npy disparities; use --viz for a picture", output);
    if (cli_check_output_path(output)) return CLI_EXIT_FAILURE;
    int rc;
    if (viz && (rc = cli_check_picture_path("--viz", viz)) != 0) return rc;

    struct cli_frame left = {0}, right = {0};
    float *disp = NULL, *pic = NULL;
    rc = CLI_EXIT_FAILURE;
    if (cli_read_gray_frame("stereo", argv[optind], &left) || cli_read_gray_frame("stereo", argv[optind + 1], &right)) goto done;
    if (left.h != right.h || left.w != right.w) {
        cli_fail("stereo: images differ in size: %s is %lldx%lld, %s is %lldx%lld (W x H)", argv[optind],
                 (long long)left.w, (long long)left.h, argv[optind + 1], (long long)right.w, (long long)right.h);
        goto done;
    }
    const int64_t h = left.h, w = left.w;
    if (maxd >= w) {
        cli_fail("stereo: --max-disparity %lld must be below the image width %lld", (long long)maxd, (long long)w);
        goto done;
    }
    disp = malloc((size_t)(h * w) * sizeof *disp);
    if (!disp) {
        cli_fail("stereo: out of memory");
        goto done;
    }
    /* The box-sum path where it is bit-identical to the direct UMI SAD (integer-valued
     * inputs, e.g. 8-bit images), else the direct one (cli/umi-sad.h, docs/umi.md). */
    int box = cli_sad_box_exact(left.data, right.data, h * w, block * block);
    fconv_status st = cli_stereo_disparity(left.data, right.data, h, w, block, maxd, threads, box, disp, NULL);
    if (st == FCONV_ENOMEM) {
        cli_fail("stereo: out of memory");
        goto done;
    }
    if (st != FCONV_OK) {
        cli_library_error("stereo", st);
        goto done;
    }
    if (viz) {
        pic = malloc((size_t)(h * w * 3) * sizeof *pic);
        if (!pic) {
            cli_fail("stereo: out of memory");
            goto done;
        }
        for (int64_t i = 0; i < h * w; i++)
            pic[3 * i] = pic[3 * i + 1] = pic[3 * i + 2] = disp[i] * 255.0f / (float)maxd;
    }
    const int64_t shape[2] = {h, w};
    if (cli_write_npy(output, disp, 2, shape)) goto done;
    if (viz && cli_write_picture(viz, pic, h, w, 3)) goto done;
    rc = CLI_EXIT_OK;
done:
    free(left.data);
    free(right.data);
    free(disp);
    free(pic);
    return rc;
}
