/*
 * image.h — read and write raster images as float32 pixels (internal to the CLI).
 * PNG (libpng) and JPEG (libjpeg-turbo) through their libraries; PGM/PPM (P2, P3, P5, P6,
 * maxval up to 65535) by a small strict parser. Gray, gray+alpha, RGB, RGBA; 8 or 16 bits.
 * Pixels are stored H x W x C interleaved, with values in [0, 2^bits - 1] (not normalized).
 */
#ifndef FCONV_IO_IMAGE_H
#define FCONV_IO_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* Largest image accepted, in pixels (width * height), and per side. */
#define FCONV_IO_MAX_IMAGE_PIXELS ((int64_t)1 << 30)
#define FCONV_IO_MAX_IMAGE_SIDE ((int64_t)1 << 20)

typedef enum fconv_io_format {
    FCONV_IO_FORMAT_UNKNOWN = 0,
    FCONV_IO_FORMAT_PNG,
    FCONV_IO_FORMAT_JPEG,
    FCONV_IO_FORMAT_PNM, /* PGM for 1 channel, PPM for 3 */
    FCONV_IO_FORMAT_NPY
} fconv_io_format;

typedef struct fconv_io_image {
    float *data;     /* h * w * channels floats, malloc'ed, owned */
    int64_t h, w;
    int channels;    /* 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA */
    int bit_depth;   /* 8 or 16: the range of the values is [0, 2^bit_depth - 1] */
} fconv_io_image;

void fconv_io_image_free(fconv_io_image *img);

/* Format from the file's extension (case-insensitive): .png .jpg .jpeg .pgm .ppm .pnm .npy. */
fconv_io_format fconv_io_format_from_path(const char *path);

/* Format from the first bytes (magic numbers); UNKNOWN if none matches. */
fconv_io_format fconv_io_format_sniff(const unsigned char *bytes, size_t n);

/*
 * Read an image, format detected from its content (not its name). 0 on success; -1 with a
 * one-line message ("photo.png: corrupt PNG: IHDR CRC error", "x.ppm: truncated pixel data")
 * and *img zeroed. Refuses sizes beyond the limits above before allocating. 16-bit PNG/PNM
 * gives bit_depth 16; palette and <8-bit PNGs are expanded to 8 bits; CMYK JPEG is refused.
 * Details: a PNG whose pixels could not come out of its bytes (deflate expands at most
 * ~1032:1) is refused before allocating. JPEG warnings that mean missing or corrupt pixel
 * data (premature end, bad Huffman code, lost restart sync) are errors; harmless ones are
 * ignored. PNM maxval other than 255/65535 is rescaled (unrounded) to the 8-bit range
 * (maxval <= 255) or the 16-bit range; samples above maxval are refused; bytes after the
 * first image (a multi-image PNM) are ignored. A JPEG's output buffer grows as rows are
 * decoded, but libjpeg itself may allocate a whole-image coefficient buffer for
 * progressive files within the pixel limit (up to ~6 GiB): fuzzers should cap RSS.
 */
int fconv_io_image_read(const char *path, fconv_io_image *img, char *err, size_t errlen);

/* The same from memory (for the fuzzer). name is for messages. */
int fconv_io_image_decode(const unsigned char *bytes, size_t size, const char *name,
                          fconv_io_image *img, char *err, size_t errlen);

/*
 * Write h x w x channels pixels to path in the format its extension names (PNG: 1-4
 * channels, 8 or 16 bits; JPEG: 1 or 3 channels, 8 bits, quality 95; PGM/PPM: 1 or 3
 * channels, 8 or 16 bits). Values are rounded to nearest and clamped to [0, 2^bit_depth - 1];
 * NaN is written as 0. Atomic as fconv_io_npy_write. JPEG with 2 or 4 channels or 16 bits
 * is refused (no silent alpha drop); JPEG is written 4:4:4 (no chroma subsampling). .pnm
 * picks PGM or PPM from the channel count. A new file gets the mode fopen would give
 * (0666 & ~umask); an overwritten file keeps its mode.
 */
int fconv_io_image_write(const char *path, const float *data, int64_t h, int64_t w,
                         int channels, int bit_depth, char *err, size_t errlen);

#endif
