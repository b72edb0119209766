/*
 * image-png.c — PNG through libpng. Errors longjmp back to the setjmp in each function (all
 * state touched after setjmp is volatile or in a context struct reached by pointer); the
 * error and warning callbacks never print. Reading expands palette, low-bit gray and tRNS,
 * keeps 16-bit samples (big-endian in PNG) and handles interlacing through png_read_image.
 */
#include "io/image-internal.h"

#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const unsigned char *bytes;
    size_t size, pos;
    FILE *fp;
    char msg[200];
    char warning[200];
} png_ctx;

static void on_error(png_structp png, png_const_charp msg) {
    png_ctx *c = png_get_error_ptr(png);
    snprintf(c->msg, sizeof c->msg, "%s", msg ? msg : "unknown error");
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) {
    png_ctx *c = png_get_error_ptr(png);
    snprintf(c->warning, sizeof c->warning, "%s", msg ? msg : "");
}

static void read_mem(png_structp png, png_bytep out, size_t len) {
    png_ctx *c = png_get_io_ptr(png);
    if (len > c->size - c->pos) png_error(png, "file is truncated");
    memcpy(out, c->bytes + c->pos, len);
    c->pos += len;
}

/* The message after a longjmp: the error, plus the last warning when it explains the error
 * (libpng reports IHDR limit violations as a warning followed by "Invalid IHDR data"). */
static void report(const png_ctx *c, const char *name, const char *what, char *err,
                   size_t errlen) {
    if (c->warning[0] && strstr(c->msg, "IHDR"))
        fconv_io_errf(err, errlen, "%s: %s: %s (%s)", name, what, c->msg, c->warning);
    else
        fconv_io_errf(err, errlen, "%s: %s: %s", name, what, c->msg);
}

int fconv_io_png_decode(const unsigned char *bytes, size_t size, const char *name,
                        fconv_io_image *img, char *err, size_t errlen) {
    memset(img, 0, sizeof *img);
    if (size < 8 || png_sig_cmp(bytes, 0, 8) != 0) {
        fconv_io_errf(err, errlen, "%s: not a PNG file (bad signature)", name);
        return -1;
    }
    png_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.bytes = bytes;
    ctx.size = size;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, on_error, on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
        fconv_io_errf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    unsigned char *volatile pix = NULL;
    png_bytep *volatile rows = NULL;
    float *volatile data = NULL;
    if (setjmp(png_jmpbuf(png))) {
        report(&ctx, name, "corrupt PNG", err, errlen);
        png_destroy_read_struct(&png, &info, NULL);
        free(pix);
        free(rows);
        free(data);
        return -1;
    }
    png_set_read_fn(png, &ctx, read_mem);
    png_set_user_limits(png, (png_uint_32)FCONV_IO_MAX_IMAGE_SIDE,
                        (png_uint_32)FCONV_IO_MAX_IMAGE_SIDE);
    png_read_info(png, info);

    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    if (fconv_io_check_dims(name, w, h, err, errlen) != 0) {
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    int color = png_get_color_type(png, info);
    int depth = png_get_bit_depth(png, info);
    /* Deflate expands at most 1032:1, so the pixels must fit in ~1032x the whole file:
     * refuses small files claiming huge images before allocating for them. */
    uint64_t file_bits = (uint64_t)w * h * png_get_channels(png, info) * (uint64_t)depth;
    if (file_bits / 8 > (uint64_t)size * 1040 + 4096) {
        fconv_io_errf(err, errlen, "%s: corrupt PNG: a %lux%lu image cannot fit in %zu bytes "
                      "(truncated?)", name, (unsigned long)w, (unsigned long)h, size);
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    (void)png_set_interlace_handling(png);
    png_read_update_info(png, info);

    int channels = png_get_channels(png, info);
    int out_depth = png_get_bit_depth(png, info);
    size_t rowbytes = png_get_rowbytes(png, info);
    if (channels < 1 || channels > 4 || (out_depth != 8 && out_depth != 16) ||
        rowbytes != (size_t)w * (size_t)channels * (size_t)(out_depth / 8)) {
        fconv_io_errf(err, errlen, "%s: unsupported PNG layout (%d channels, %d bits)", name,
                      channels, out_depth);
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    pix = malloc(rowbytes * h);
    rows = malloc(sizeof(png_bytep) * h);
    data = malloc(sizeof(float) * (size_t)w * h * (size_t)channels);
    if (!pix || !rows || !data) {
        snprintf(ctx.msg, sizeof ctx.msg, "out of memory for a %lux%lu image",
                 (unsigned long)w, (unsigned long)h);
        png_destroy_read_struct(&png, &info, NULL);
        fconv_io_errf(err, errlen, "%s: %s", name, ctx.msg);
        free(pix);
        free(rows);
        free(data);
        return -1;
    }
    for (png_uint_32 y = 0; y < h; y++) rows[y] = pix + (size_t)y * rowbytes;
    png_read_image(png, rows);
    png_read_end(png, NULL);

    size_t n = (size_t)w * h * (size_t)channels;
    float *d = data;
    const unsigned char *p = pix;
    if (out_depth == 8)
        for (size_t i = 0; i < n; i++) d[i] = (float)p[i];
    else
        for (size_t i = 0; i < n; i++) d[i] = (float)((unsigned)p[2 * i] << 8 | p[2 * i + 1]);
    png_destroy_read_struct(&png, &info, NULL);
    free(pix);
    free(rows);
    img->data = d;
    img->h = h;
    img->w = w;
    img->channels = channels;
    img->bit_depth = out_depth;
    return 0;
}

static void write_file(png_structp png, png_bytep buf, size_t len) {
    png_ctx *c = png_get_io_ptr(png);
    if (fwrite(buf, 1, len, c->fp) != len) png_error(png, "write failed");
}

static void flush_file(png_structp png) {
    png_ctx *c = png_get_io_ptr(png);
    if (fflush(c->fp) != 0) png_error(png, "write failed");
}

int fconv_io_png_write(FILE *fp, const char *name, const float *data, int64_t h, int64_t w,
                       int channels, int bit_depth, char *err, size_t errlen) {
    static const int types[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                 PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
    png_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.fp = fp;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &ctx, on_error, on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(png ? &png : NULL, NULL);
        fconv_io_errf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    size_t samples = (size_t)w * (size_t)channels;
    unsigned char *volatile row = malloc(samples * (size_t)(bit_depth / 8));
    if (!row) {
        png_destroy_write_struct(&png, &info);
        fconv_io_errf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        report(&ctx, name, "cannot write PNG", err, errlen);
        png_destroy_write_struct(&png, &info);
        free(row);
        return -1;
    }
    png_set_write_fn(png, &ctx, write_file, flush_file);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, bit_depth, types[channels],
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    unsigned maxv = bit_depth == 16 ? 65535u : 255u;
    for (int64_t y = 0; y < h; y++) {
        const float *src = data + (size_t)y * samples;
        unsigned char *r = row;
        if (bit_depth == 8) {
            for (size_t i = 0; i < samples; i++) r[i] = (unsigned char)fconv_io_quantize(src[i], maxv);
        } else {
            for (size_t i = 0; i < samples; i++) {
                unsigned v = fconv_io_quantize(src[i], maxv);
                r[2 * i] = (unsigned char)(v >> 8);
                r[2 * i + 1] = (unsigned char)v;
            }
        }
        png_write_row(png, r);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    return 0;
}
