/*
 * image-jpeg.c — JPEG through libjpeg-turbo's libjpeg API. The error manager longjmps
 * instead of exiting and prints nothing. Warnings that mean pixel data is missing or corrupt
 * (premature end of file, bad Huffman code, lost restart sync) are errors; harmless ones
 * (e.g. extraneous bytes before a marker) are ignored. Gray and RGB only; CMYK is refused.
 * Writing uses quality 95 without chroma subsampling (4:4:4).
 */
#include "io/image-internal.h"

#include <jpeglib.h>
#include <jerror.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
} jerr_ctx;

static void on_error_exit(j_common_ptr cinfo) {
    jerr_ctx *e = (jerr_ctx *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, e->msg);
    longjmp(e->jb, 1);
}

static void on_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void on_emit_message(j_common_ptr cinfo, int level) {
    if (level >= 0) return; /* trace messages */
    int code = cinfo->err->msg_code;
    if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER || code == JWRN_HUFF_BAD_CODE ||
        code == JWRN_MUST_RESYNC)
        on_error_exit(cinfo);
    cinfo->err->num_warnings++;
}

static void init_err(jerr_ctx *e) {
    memset(e, 0, sizeof *e);
    jpeg_std_error(&e->pub);
    e->pub.error_exit = on_error_exit;
    e->pub.output_message = on_output_message;
    e->pub.emit_message = on_emit_message;
}

int fconv_io_jpeg_decode(const unsigned char *bytes, size_t size, const char *name,
                         fconv_io_image *img, char *err, size_t errlen) {
    memset(img, 0, sizeof *img);
    struct jpeg_decompress_struct cinfo;
    jerr_ctx jerr;
    init_err(&jerr);
    cinfo.err = &jerr.pub;
    JSAMPLE *volatile row = NULL;
    float *volatile data = NULL;
    if (setjmp(jerr.jb)) {
        fconv_io_errf(err, errlen, "%s: corrupt JPEG: %s", name, jerr.msg);
        jpeg_destroy_decompress(&cinfo);
        free(row);
        free(data);
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, bytes, (unsigned long)size);
    if (jpeg_read_header(&cinfo, TRUE) != JPEG_HEADER_OK) {
        fconv_io_errf(err, errlen, "%s: corrupt JPEG: no image in the file", name);
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
        fconv_io_errf(err, errlen, "%s: CMYK JPEG is not supported (only gray and RGB)", name);
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    if (cinfo.num_components == 1) {
        cinfo.out_color_space = JCS_GRAYSCALE;
    } else if (cinfo.num_components == 3) {
        cinfo.out_color_space = JCS_RGB;
    } else {
        fconv_io_errf(err, errlen, "%s: JPEG with %d components is not supported (only gray and "
                      "RGB)", name, cinfo.num_components);
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    if (fconv_io_check_dims(name, cinfo.image_width, cinfo.image_height, err, errlen) != 0) {
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    /* A short file cannot hold a huge image. Huffman coding spends at least 2 bits on each
     * 8x8 block of each component (a DC and an end-of-block code), so at most 256 pixels per
     * byte; 1024 leaves room. Arithmetic coding has no such floor (and libjpeg decodes
     * missing arithmetic-coded data as zeros without a warning), so its bound is a
     * heuristic: 2^17 pixels per byte is far beyond any real image. */
    uint64_t pixels = (uint64_t)cinfo.image_width * cinfo.image_height;
    uint64_t per_byte = cinfo.arith_code ? (uint64_t)1 << 17 : 1024;
    if (pixels > (uint64_t)size * per_byte + 65536) {
        fconv_io_errf(err, errlen, "%s: corrupt JPEG: a %ux%u image cannot fit in %zu bytes "
                      "(truncated?)", name, (unsigned)cinfo.image_width,
                      (unsigned)cinfo.image_height, size);
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    jpeg_start_decompress(&cinfo);
    size_t w = cinfo.output_width, h = cinfo.output_height;
    size_t c = (size_t)cinfo.output_components;
    /* The output grows (doubling) as rows are decoded, so a small truncated file that
     * claims a huge image fails at its end instead of after a huge allocation. */
    size_t cap_rows = h < 64 ? h : 64;
    row = malloc(w * c);
    data = malloc(sizeof(float) * w * cap_rows * c);
    if (!row || !data) goto oom;
    while (cinfo.output_scanline < cinfo.output_height) {
        size_t y = cinfo.output_scanline;
        if (y == cap_rows) {
            size_t ncap = cap_rows * 2 < h ? cap_rows * 2 : h;
            float *nd = realloc(data, sizeof(float) * w * ncap * c);
            if (!nd) goto oom;
            data = nd;
            cap_rows = ncap;
        }
        JSAMPROW rp = row;
        if (jpeg_read_scanlines(&cinfo, &rp, 1) != 1) {
            fconv_io_errf(err, errlen, "%s: corrupt JPEG: cannot read row %zu", name, y);
            jpeg_destroy_decompress(&cinfo);
            free(row);
            free(data);
            return -1;
        }
        float *d = data + y * w * c;
        for (size_t i = 0; i < w * c; i++) d[i] = (float)rp[i];
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    free(row);
    img->data = data;
    img->h = (int64_t)h;
    img->w = (int64_t)w;
    img->channels = (int)c;
    img->bit_depth = 8;
    return 0;
oom:
    fconv_io_errf(err, errlen, "%s: out of memory for a %zux%zu image", name, w, h);
    jpeg_destroy_decompress(&cinfo);
    free(row);
    free(data);
    return -1;
}

int fconv_io_jpeg_write(FILE *fp, const char *name, const float *data, int64_t h, int64_t w,
                        int channels, char *err, size_t errlen) {
    struct jpeg_compress_struct cinfo;
    jerr_ctx jerr;
    init_err(&jerr);
    cinfo.err = &jerr.pub;
    size_t samples = (size_t)w * (size_t)channels;
    JSAMPLE *volatile row = malloc(samples);
    if (!row) {
        fconv_io_errf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    if (setjmp(jerr.jb)) {
        fconv_io_errf(err, errlen, "%s: cannot write JPEG: %s", name, jerr.msg);
        jpeg_destroy_compress(&cinfo);
        free(row);
        return -1;
    }
    jpeg_create_compress(&cinfo);
    jpeg_stdio_dest(&cinfo, fp);
    cinfo.image_width = (JDIMENSION)w;
    cinfo.image_height = (JDIMENSION)h;
    cinfo.input_components = channels;
    cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, 95, TRUE);
    /* 4:4:4: no chroma subsampling, so filtered colour edges survive. */
    for (int i = 0; i < cinfo.num_components; i++) {
        cinfo.comp_info[i].h_samp_factor = 1;
        cinfo.comp_info[i].v_samp_factor = 1;
    }
    jpeg_start_compress(&cinfo, TRUE);
    for (int64_t y = 0; y < h; y++) {
        const float *src = data + (size_t)y * samples;
        JSAMPROW rp = row;
        for (size_t i = 0; i < samples; i++) rp[i] = (JSAMPLE)fconv_io_quantize(src[i], 255);
        jpeg_write_scanlines(&cinfo, &rp, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    free(row);
    return 0;
}
