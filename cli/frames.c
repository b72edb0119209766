/*
 * frames.c — input and output helpers of the UMI subcommands: a gray frame from an image
 * (luma) or a 2D .npy, 8-bit pictures for --viz, the HSV colour wheel, and one-call UMI
 * planning + execution with the CLI's error messages.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "frames.h"
#include "io/image.h"

int cli_read_gray_frame(const char *command, const char *path, struct cli_frame *f) {
    memset(f, 0, sizeof *f);
    struct cli_raster img;
    if (cli_read_raster(command, path, 2, &img)) return -1;
    int64_t n = img.h * img.w;
    if (img.channels >= 3) {
        /* In place: pixel i's luma lands at i, which no later pixel still needs. */
        for (int64_t i = 0; i < n; i++) {
            const float *p = img.data + i * img.channels;
            img.data[i] = 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2];
        }
    } else if (img.channels == 2) {
        for (int64_t i = 0; i < n; i++) img.data[i] = img.data[2 * i];
    }
    f->data = img.data;
    f->h = img.h;
    f->w = img.w;
    return 0;
}

int cli_check_picture_path(const char *option, const char *path) {
    fconv_io_format fmt = fconv_io_format_from_path(path);
    if (fmt == FCONV_IO_FORMAT_UNKNOWN || fmt == FCONV_IO_FORMAT_NPY)
        return cli_usage_error("%s %s: a picture must be .png, .ppm, .jpg or .jpeg", option, path);
    if (cli_has_extension(path, ".pgm"))
        return cli_usage_error("%s %s: the picture is in colour; use .png, .ppm or .jpg", option, path);
    return cli_check_output_path(path);
}

int cli_write_picture(const char *path, const float *rgb, int64_t h, int64_t w, int channels) {
    char err[512];
    if (fconv_io_image_write(path, rgb, h, w, channels, 8, err, sizeof err)) return cli_fail("%s", err), -1;
    return 0;
}

void cli_hsv_to_rgb(float h, float s, float v, float rgb[3]) {
    float c = v * s, hp = h / 60.0f;
    float x = c * (1.0f - fabsf(fmodf(hp, 2.0f) - 1.0f));
    float r = 0, g = 0, b = 0;
    if (hp < 1) r = c, g = x;
    else if (hp < 2) r = x, g = c;
    else if (hp < 3) g = c, b = x;
    else if (hp < 4) g = x, b = c;
    else if (hp < 5) r = x, b = c;
    else r = c, b = x;
    float m = v - c;
    rgb[0] = 255.0f * (r + m);
    rgb[1] = 255.0f * (g + m);
    rgb[2] = 255.0f * (b + m);
}

int cli_run_umi(const char *command, const fconv_umi_desc *desc, int threads, const float *a,
                const float *b, const float *init, float *y) {
    fconv_options o = {.threads = threads};
    fconv_umi_plan *plan = NULL;
    fconv_status st = fconv_umi_plan_create(desc, &o, &plan);
    if (st != FCONV_OK) return cli_library_error(command, st), -1;
    st = fconv_umi_execute(plan, a, b, init, y);
    fconv_umi_plan_destroy(plan);
    if (st != FCONV_OK) return cli_library_error(command, st), -1;
    return 0;
}
