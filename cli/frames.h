/*
 * frames.h — what the UMI subcommands (match, stereo, bilateral) share: reading a frame as
 * one gray plane, picture outputs for --viz, and running one UMI plan with CLI messages.
 */
#ifndef FCONV_CLI_FRAMES_H
#define FCONV_CLI_FRAMES_H

#include <stdint.h>

#include "fastconv.h"

/* A gray frame: h x w floats (malloc'ed, owned). */
struct cli_frame {
    float *data;
    int64_t h, w;
};

/* Read an image (colour converted to BT.601 luma 0.299 R + 0.587 G + 0.114 B, alpha
 * ignored) or a 2D .npy, for `command` (named in messages). 0, or -1 with a one-line message printed. */
int cli_read_gray_frame(const char *command, const char *path, struct cli_frame *f);

/* The --viz output must be an image format we write (.png/.ppm/.pgm/.jpg); checked before
 * any work. 0 or an exit code with a message printed. */
int cli_check_picture_path(const char *option, const char *path);

/* Write h x w x channels 8-bit pixels (values 0..255) atomically. 0, or -1 with a message. */
int cli_write_picture(const char *path, const float *rgb, int64_t h, int64_t w, int channels);

/* HSV (h in [0, 360), s, v in [0, 1]) to RGB in [0, 255]. */
void cli_hsv_to_rgb(float h, float s, float v, float rgb[3]);

/* Plan and run one UMI operator, y = UMI(a, b, init); prints the library's message and
 * returns -1 on failure, else 0. */
int cli_run_umi(const char *command, const fconv_umi_desc *desc, int threads, const float *a,
                const float *b, const float *init, float *y);

#endif
