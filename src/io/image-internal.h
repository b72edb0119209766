/*
 * image-internal.h — private glue between image.c (dispatch, limits, atomic writes) and the
 * per-format codecs image-png.c, image-jpeg.c, image-pnm.c. Decoders fill a zeroed
 * fconv_io_image or return -1 with a one-line "name: ..." message and free everything.
 * Writers stream into an already open FILE (the atomic temporary); image.c has validated
 * h, w, channels and bit_depth against the format and the limits before calling them.
 */
#ifndef FCONV_IO_IMAGE_INTERNAL_H
#define FCONV_IO_IMAGE_INTERNAL_H

#include "io/image.h"
#include "io/io-common.h"

#include <stdio.h>

/* 0 if a w x h image is within FCONV_IO_MAX_IMAGE_PIXELS / _SIDE and non-empty, else -1
 * with "name: image WxH exceeds the limit of 2^30 pixels" (or the per-side / empty message). */
int fconv_io_check_dims(const char *name, int64_t w, int64_t h, char *err, size_t errlen);

/* Round to nearest, clamp to [0, maxv]; NaN and negatives give 0. */
static inline unsigned fconv_io_quantize(float v, unsigned maxv) {
    if (!(v > 0.0f)) return 0;
    if (v >= (float)maxv) return maxv;
    return (unsigned)((double)v + 0.5); /* double: v + 0.5f can round up at x.4999999 */
}

int fconv_io_png_decode(const unsigned char *bytes, size_t size, const char *name,
                        fconv_io_image *img, char *err, size_t errlen);
int fconv_io_jpeg_decode(const unsigned char *bytes, size_t size, const char *name,
                         fconv_io_image *img, char *err, size_t errlen);
int fconv_io_pnm_decode(const unsigned char *bytes, size_t size, const char *name,
                        fconv_io_image *img, char *err, size_t errlen);

int fconv_io_png_write(FILE *fp, const char *name, const float *data, int64_t h, int64_t w,
                       int channels, int bit_depth, char *err, size_t errlen);
int fconv_io_jpeg_write(FILE *fp, const char *name, const float *data, int64_t h, int64_t w,
                        int channels, char *err, size_t errlen);
int fconv_io_pnm_write(FILE *fp, const char *name, const float *data, int64_t h, int64_t w,
                       int channels, int bit_depth, char *err, size_t errlen);

#endif
