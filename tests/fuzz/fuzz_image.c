/*
 * fuzz_image.c — libFuzzer harness for image decoding through our I/O layer
 * (fconv_io_image_decode: PNG via libpng, JPEG via libjpeg-turbo, PGM/PPM by our parser).
 * A decoded image must be consistent (h, w, channels, bit depth in range, every pixel
 * readable and within [0, 2^bits - 1]); a failure must come with a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libjpeg may allocate a whole-image coefficient buffer for a progressive JPEG within the
 * library's pixel limit (gigabytes, see image.h), which is legitimate but would trip the
 * fuzzer's memory limit. Skip JPEGs whose frame header claims more than 2^24 pixels; every
 * other input, and every JPEG byte before the frame header, is still decoded. */
static int jpeg_too_large(const uint8_t *d, size_t n) {
    if (n < 4 || d[0] != 0xFF || d[1] != 0xD8) return 0;
    /* Any frame header anywhere counts: walking the markers by their lengths misses a frame
     * behind a marker without one (e.g. FF 01), which libjpeg skips over. */
    for (size_t i = 2; i + 9 < n; i++) {
        uint8_t m = d[i + 1];
        if (d[i] == 0xFF && m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
            uint64_t h = ((uint64_t)d[i + 5] << 8) | d[i + 6];
            uint64_t w = ((uint64_t)d[i + 7] << 8) | d[i + 8];
            if (h * w > (1u << 24)) return 1;
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (jpeg_too_large(data, size)) return 0;
    fconv_io_image img;
    char err[256];
    err[0] = '\0';
    if (fconv_io_image_decode(data, size, "fuzz.img", &img, err, sizeof err) != 0) {
        if (err[0] == '\0' || img.data != NULL) abort();
        return 0;
    }
    if (img.h < 1 || img.w < 1 || img.h > FCONV_IO_MAX_IMAGE_SIDE || img.w > FCONV_IO_MAX_IMAGE_SIDE ||
        img.h * img.w > FCONV_IO_MAX_IMAGE_PIXELS || img.channels < 1 || img.channels > 4 ||
        (img.bit_depth != 8 && img.bit_depth != 16) || !img.data)
        abort();
    float top = (float)((1 << img.bit_depth) - 1);
    size_t n = (size_t)(img.h * img.w) * (size_t)img.channels;
    for (size_t i = 0; i < n; i++)
        if (!(img.data[i] >= 0.0f && img.data[i] <= top)) abort();
    fconv_io_image_free(&img);
    return 0;
}
