/*
 * test_io_image.c — image I/O: exact PNG/PNM round trips for every channel count and depth,
 * PNG variants written here with libpng (interlaced, palette, 1-bit gray, tRNS), ASCII PNM
 * with comments, JPEG within a tolerance, rounding and clamping on write, and refusals
 * (empty, garbage, truncated/CRC-damaged PNG, truncated or CMYK JPEG, bad PNM headers,
 * absurd sizes, unsupported channel counts and extensions) with their messages.
 */
#define _POSIX_C_SOURCE 200809L

#include "io/image.h"
#include "test.h"

#include <dirent.h>
#include <jpeglib.h>
#include <png.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];
static char err[512];

static const char *tpath(const char *name) {
    static char buf[2][512];
    static int k;
    k ^= 1;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static int count_dir_entries(void) {
    DIR *d = opendir(tmpdir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* Whole file into a malloc'ed buffer. */
static unsigned char *slurp(const char *path, size_t *n) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long sz = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)sz + 1);
    *n = fread(b, 1, (size_t)sz, fp);
    fclose(fp);
    return b;
}

static void spit(const char *path, const void *b, size_t n) {
    FILE *fp = fopen(path, "wb");
    if (n) fwrite(b, 1, n, fp);
    fclose(fp);
}

/* Decode from memory expecting failure; message has the name, `word`, and one line. */
static void expect_decode_fail(const void *b, size_t n, const char *name, const char *word) {
    fconv_io_image img;
    memset(&img, 0x55, sizeof img);
    CHECK_EQ_INT(fconv_io_image_decode(b, n, name, &img, err, sizeof err), -1);
    CHECK(img.data == NULL && img.w == 0 && img.h == 0);
    char prefix[300];
    snprintf(prefix, sizeof prefix, "%s: ", name);
    CHECK_STR_CONTAINS(err, prefix);
    CHECK_STR_CONTAINS(err, word);
    CHECKF(strchr(err, '\n') == NULL, "message has a newline: %s", err);
}

static void fill_levels(float *p, size_t n, unsigned maxv) {
    for (size_t i = 0; i < n; i++) p[i] = (float)test_rand_int(0, maxv);
    p[0] = 0;
    p[n - 1] = (float)maxv;
}

static void roundtrip_exact(const char *name, int64_t h, int64_t w, int c, int bits) {
    size_t n = (size_t)(h * w * c);
    float *x = malloc(n * sizeof(float));
    fill_levels(x, n, (1u << bits) - 1);
    CHECKF(fconv_io_image_write(tpath(name), x, h, w, c, bits, err, sizeof err) == 0, "%s: %s",
           name, err);
    fconv_io_image img;
    CHECKF(fconv_io_image_read(tpath(name), &img, err, sizeof err) == 0, "%s: %s", name, err);
    CHECKF(img.h == h && img.w == w && img.channels == c && img.bit_depth == bits,
           "%s: got %lldx%lldx%d/%d", name, (long long)img.h, (long long)img.w, img.channels,
           img.bit_depth);
    if (img.data && img.h == h && img.w == w && img.channels == c)
        CHECKF(memcmp(img.data, x, n * sizeof(float)) == 0, "%s: pixels differ", name);
    fconv_io_image_free(&img);
    CHECK(img.data == NULL);
    fconv_io_image_free(&img);
    unlink(tpath(name));
    free(x);
}

static void test_png_roundtrip(void) {
    char name[64];
    for (int bits = 8; bits <= 16; bits += 8)
        for (int c = 1; c <= 4; c++) {
            snprintf(name, sizeof name, "rt-%d-%d.png", c, bits);
            roundtrip_exact(name, 37, 53, c, bits);
        }
    roundtrip_exact("one.PNG", 1, 1, 3, 8);
}

static void test_pnm_roundtrip(void) {
    roundtrip_exact("g8.pgm", 31, 17, 1, 8);
    roundtrip_exact("g16.pgm", 31, 17, 1, 16);
    roundtrip_exact("c8.ppm", 12, 40, 3, 8);
    roundtrip_exact("c16.ppm", 12, 40, 3, 16);
    roundtrip_exact("g8.pnm", 5, 5, 1, 8);
    roundtrip_exact("c16.pnm", 5, 5, 3, 16);
    /* The 16-bit binary file is big-endian with maxval 65535. */
    float px[2] = {258.0f, 65535.0f};
    CHECK_EQ_INT(fconv_io_image_write(tpath("be.pgm"), px, 1, 2, 1, 16, err, sizeof err), 0);
    size_t n;
    unsigned char *b = slurp(tpath("be.pgm"), &n);
    CHECK(n == 17 && memcmp(b, "P5\n2 1\n65535\n\x01\x02\xff\xff", 17) == 0);
    free(b);
    unlink(tpath("be.pgm"));
}

static void test_pnm_ascii(void) {
    fconv_io_image img;
    const char *p2 = "P2\n# a comment\n3 # width\n2\n# maxval next\n255\n0 1 2\n3   4\t255\n";
    CHECKF(fconv_io_image_decode((const unsigned char *)p2, strlen(p2), "a.pgm", &img, err,
                                 sizeof err) == 0, "%s", err);
    CHECK(img.w == 3 && img.h == 2 && img.channels == 1 && img.bit_depth == 8);
    const float want2[6] = {0, 1, 2, 3, 4, 255};
    CHECK(img.data && memcmp(img.data, want2, sizeof want2) == 0);
    fconv_io_image_free(&img);
    /* P3 with maxval 15: scaled to the 8-bit range (x 17). */
    const char *p3 = "P3 2 1 15 0 1 2\n 13 14 15";
    CHECKF(fconv_io_image_decode((const unsigned char *)p3, strlen(p3), "a.ppm", &img, err,
                                 sizeof err) == 0, "%s", err);
    CHECK(img.w == 2 && img.h == 1 && img.channels == 3 && img.bit_depth == 8);
    const float want3[6] = {0, 17, 34, 221, 238, 255};
    CHECK(img.data && memcmp(img.data, want3, sizeof want3) == 0);
    fconv_io_image_free(&img);
    /* ASCII 16-bit. */
    const char *p2b = "P2\n2 1\n65535\n65535 1\n";
    CHECK_EQ_INT(fconv_io_image_decode((const unsigned char *)p2b, strlen(p2b), "b.pgm", &img,
                                       err, sizeof err), 0);
    CHECK(img.bit_depth == 16 && img.data && img.data[0] == 65535.0f && img.data[1] == 1.0f);
    fconv_io_image_free(&img);
    /* Binary with maxval 1000: 16-bit samples scaled to 65535. */
    const unsigned char p5[] = "P5\n2 1\n1000\n\x03\xe8\x00\x00";
    CHECK_EQ_INT(fconv_io_image_decode(p5, sizeof p5 - 1, "c.pgm", &img, err, sizeof err), 0);
    CHECK(img.bit_depth == 16 && img.data && img.data[0] == 65535.0f && img.data[1] == 0.0f);
    fconv_io_image_free(&img);

    const char *bad[][2] = {
        {"P2\n2 1\n255\n1", "truncated"},
        {"P2\n2 1\n255\n1 x", "bad pixel data"},
        {"P2\n2 1\n255\n1 256", "sample value 256 exceeds maxval 255"},
        {"P2\n2 1\n255\n1 2x", "bad pixel data"},
        {"P2\n2 1 255", "no whitespace after maxval"},
        {"P2\n2\n", "expected height"},
        {"P2\n2 1\n", "expected maxval"},
        {"P2 -2 1 255\n1 2", "expected width"},
        {"P22 1 255\n1 2", "expected width"},
        {"P5\n2 1\n0\n\x01\x02", "maxval 0 is out of range 1..65535"},
        {"P5\n2 1\n70000\n\x01\x02\x03\x04", "maxval 70000 is out of range 1..65535"},
        {"P5\n4 4\n255\n\x01\x02", "truncated pixel data: expected 16 bytes, file has 2"},
        {"P6\n2 2\n65535\n\x01\x02", "truncated pixel data"},
        {"P5\n0 4\n255\n", "empty"},
        {"P5\n100000000 100000000\n255\n\x01",
         "image 100000000x100000000 exceeds the limit of 2^30 pixels"},
        {"P2\n100000000 100000000\n255\n1", "exceeds the limit of 2^30 pixels"},
        {"P6\n2000000 1\n255\n\x01", "exceeds the limit of 2^20 pixels per side"},
        {"P5\n99999999999999999999999 1\n255\n\x01", "exceeds the limit"},
        {"P4\n8 1\n\xff", "PBM"},
        {"P1\n1 1\n1", "PBM"},
        {"P7\nWIDTH 1\n", "PAM"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_decode_fail(bad[i][0], strlen(bad[i][0]), "x.ppm", bad[i][1]);
    /* A mid-file NUL must not be mistaken for the end of a binary header check. */
    expect_decode_fail("P5\n2 2\n255\n\0", 12, "x.pgm", "truncated");
}

static double max_abs_diff(const float *a, const float *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i] - b[i]));
    return m;
}

static void test_jpeg_roundtrip(void) {
    const int64_t h = 48, w = 64;
    for (int c = 1; c <= 3; c += 2) {
        float *x = malloc(sizeof(float) * (size_t)(h * w * c));
        for (int64_t y = 0; y < h; y++)
            for (int64_t xx = 0; xx < w; xx++)
                for (int k = 0; k < c; k++)
                    x[(y * w + xx) * c + k] =
                        (float)(128 + 100 * sin(0.07 * (double)xx + 0.05 * (double)y + k));
        const char *name = c == 1 ? "g.jpg" : "c.JPEG";
        CHECKF(fconv_io_image_write(tpath(name), x, h, w, c, 8, err, sizeof err) == 0, "%s", err);
        fconv_io_image img;
        CHECKF(fconv_io_image_read(tpath(name), &img, err, sizeof err) == 0, "%s", err);
        CHECK(img.h == h && img.w == w && img.channels == c && img.bit_depth == 8);
        if (img.data) {
            double d = max_abs_diff(img.data, x, (size_t)(h * w * c));
            CHECKF(d <= 8.0, "%s: max error %g", name, d);
        }
        fconv_io_image_free(&img);
        unlink(tpath(name));
        free(x);
    }
}

static void test_clamp_round(void) {
    const float in[10] = {-3.0f, 300.0f, 1.5f, 2.49f, NAN, 254.5f, INFINITY, -INFINITY,
                          0.49999997f, 7.5f};
    const float want8[10] = {0, 255, 2, 2, 0, 255, 255, 0, 0, 8};
    const char *names[2] = {"cl.png", "cl.pgm"};
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(fconv_io_image_write(tpath(names[i]), in, 2, 5, 1, 8, err, sizeof err), 0);
        fconv_io_image img;
        CHECK_EQ_INT(fconv_io_image_read(tpath(names[i]), &img, err, sizeof err), 0);
        for (int k = 0; k < 10 && img.data; k++)
            CHECKF(img.data[k] == want8[k], "%s[%d]: %g -> %g, want %g", names[i], k,
                   (double)in[k], (double)img.data[k], (double)want8[k]);
        fconv_io_image_free(&img);
        unlink(tpath(names[i]));
    }
    const float in16[4] = {70000.0f, -1.0f, 65534.5f, 1000.25f};
    const float want16[4] = {65535, 0, 65535, 1000};
    CHECK_EQ_INT(fconv_io_image_write(tpath("cl16.png"), in16, 1, 4, 1, 16, err, sizeof err), 0);
    fconv_io_image img;
    CHECK_EQ_INT(fconv_io_image_read(tpath("cl16.png"), &img, err, sizeof err), 0);
    CHECK(img.data && memcmp(img.data, want16, sizeof want16) == 0);
    fconv_io_image_free(&img);
    unlink(tpath("cl16.png"));
}

/* ---- PNG variants written directly with libpng --------------------------------------- */

struct memw {
    unsigned char *b;
    size_t n, cap;
};

static void memw_write(png_structp png, png_bytep d, size_t len) {
    struct memw *m = png_get_io_ptr(png);
    if (m->n + len > m->cap) {
        m->cap = (m->n + len) * 2;
        m->b = realloc(m->b, m->cap);
    }
    memcpy(m->b + m->n, d, len);
    m->n += len;
}

static void memw_flush(png_structp png) { (void)png; }

/* Encode rows (already packed in PNG's byte layout) with the given IHDR and extras. */
static struct memw make_png(int w, int h, int depth, int color, int interlace,
                            const unsigned char *pix, size_t rowbytes, int palette,
                            int trns_gray) {
    struct memw m = {NULL, 0, 0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        m.n = 0;
        return m;
    }
    png_set_write_fn(png, &m, memw_write, memw_flush);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, color, interlace,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (palette) {
        png_color pal[4] = {{0, 0, 0}, {255, 0, 0}, {0, 255, 0}, {10, 20, 30}};
        png_byte alpha[2] = {255, 128};
        png_set_PLTE(png, info, pal, 4);
        png_set_tRNS(png, info, alpha, 2, NULL);
    }
    if (trns_gray >= 0) {
        png_color_16 t = {0, 0, 0, 0, (png_uint_16)trns_gray};
        png_set_tRNS(png, info, NULL, 0, &t);
    }
    png_write_info(png, info);
    int passes = png_set_interlace_handling(png);
    for (int p = 0; p < passes; p++)
        for (int y = 0; y < h; y++) png_write_row(png, pix + (size_t)y * rowbytes);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return m;
}

static void test_png_variants(void) {
    fconv_io_image img;
    /* Interlaced 8-bit RGB and 16-bit gray. */
    enum { W = 13, H = 11 };
    unsigned char rgb[H][W * 3], g16[H][W * 2];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            for (int k = 0; k < 3; k++) rgb[y][x * 3 + k] = (unsigned char)(y * 20 + x * 3 + k);
            unsigned v = (unsigned)(y * 5000 + x * 7 + 1);
            g16[y][2 * x] = (unsigned char)(v >> 8);
            g16[y][2 * x + 1] = (unsigned char)v;
        }
    struct memw m = make_png(W, H, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_ADAM7, &rgb[0][0],
                             W * 3, 0, -1);
    CHECK(m.n > 0);
    CHECKF(fconv_io_image_decode(m.b, m.n, "i.png", &img, err, sizeof err) == 0, "%s", err);
    CHECK(img.w == W && img.h == H && img.channels == 3 && img.bit_depth == 8);
    for (int y = 0; y < H && img.data; y++)
        for (int i = 0; i < W * 3; i++) CHECK(img.data[y * W * 3 + i] == (float)rgb[y][i]);
    fconv_io_image_free(&img);
    free(m.b);
    m = make_png(W, H, 16, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_ADAM7, &g16[0][0], W * 2, 0, -1);
    CHECKF(fconv_io_image_decode(m.b, m.n, "i16.png", &img, err, sizeof err) == 0, "%s", err);
    CHECK(img.channels == 1 && img.bit_depth == 16);
    for (int y = 0; y < H && img.data; y++)
        for (int x = 0; x < W; x++)
            CHECK(img.data[y * W + x] == (float)(y * 5000 + x * 7 + 1));
    fconv_io_image_free(&img);
    free(m.b);

    /* Palette with tRNS -> RGBA. Indices 0..3 in 2 bits: row "0 1 2 3". */
    unsigned char pal_row[1] = {0x1B};
    m = make_png(4, 1, 2, PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE, pal_row, 1, 1, -1);
    CHECKF(fconv_io_image_decode(m.b, m.n, "p.png", &img, err, sizeof err) == 0, "%s", err);
    CHECK(img.channels == 4 && img.bit_depth == 8 && img.w == 4);
    const float wantp[16] = {0, 0, 0, 255, 255, 0, 0, 128, 0, 255, 0, 255, 10, 20, 30, 255};
    CHECK(img.data && memcmp(img.data, wantp, sizeof wantp) == 0);
    fconv_io_image_free(&img);
    free(m.b);

    /* 1-bit gray expanded to 0/255; gray tRNS (value 1 transparent) -> gray+alpha. */
    unsigned char bits_row[1] = {0xA0}; /* 1 0 1 0 */
    m = make_png(4, 1, 1, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, bits_row, 1, 0, -1);
    CHECKF(fconv_io_image_decode(m.b, m.n, "b.png", &img, err, sizeof err) == 0, "%s", err);
    const float wantb[4] = {255, 0, 255, 0};
    CHECK(img.channels == 1 && img.bit_depth == 8 && img.data &&
          memcmp(img.data, wantb, sizeof wantb) == 0);
    fconv_io_image_free(&img);
    free(m.b);
    m = make_png(4, 1, 1, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, bits_row, 1, 0, 1);
    CHECKF(fconv_io_image_decode(m.b, m.n, "t.png", &img, err, sizeof err) == 0, "%s", err);
    const float wantt[8] = {255, 0, 0, 255, 255, 0, 0, 255};
    CHECK(img.channels == 2 && img.data && memcmp(img.data, wantt, sizeof wantt) == 0);
    fconv_io_image_free(&img);
    free(m.b);
}

/* CRC-32 as PNG uses it, to forge chunks. */
static uint32_t crc32_png(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
    }
    return c ^ 0xFFFFFFFFu;
}

static size_t put_chunk(unsigned char *out, const char *type, const unsigned char *d, size_t n) {
    out[0] = (unsigned char)(n >> 24);
    out[1] = (unsigned char)(n >> 16);
    out[2] = (unsigned char)(n >> 8);
    out[3] = (unsigned char)n;
    memcpy(out + 4, type, 4);
    if (n) memcpy(out + 8, d, n);
    uint32_t c = crc32_png(out + 4, n + 4);
    out[8 + n] = (unsigned char)(c >> 24);
    out[9 + n] = (unsigned char)(c >> 16);
    out[10 + n] = (unsigned char)(c >> 8);
    out[11 + n] = (unsigned char)c;
    return 12 + n;
}

static size_t forge_png(unsigned char *out, uint32_t w, uint32_t h) {
    memcpy(out, "\x89PNG\r\n\x1a\n", 8);
    unsigned char ihdr[13] = {(unsigned char)(w >> 24), (unsigned char)(w >> 16),
                              (unsigned char)(w >> 8), (unsigned char)w,
                              (unsigned char)(h >> 24), (unsigned char)(h >> 16),
                              (unsigned char)(h >> 8), (unsigned char)h,
                              8, 0, 0, 0, 0};
    size_t n = 8 + put_chunk(out + 8, "IHDR", ihdr, 13);
    n += put_chunk(out + n, "IDAT", (const unsigned char *)"\x78\x9c\x03\x00\x00\x00\x00\x01", 8);
    n += put_chunk(out + n, "IEND", NULL, 0);
    return n;
}

static void test_png_refusals(void) {
    /* A valid PNG to damage. */
    float x[64 * 64];
    fill_levels(x, 64 * 64, 255);
    CHECK_EQ_INT(fconv_io_image_write(tpath("v.png"), x, 64, 64, 1, 8, err, sizeof err), 0);
    size_t n;
    unsigned char *b = slurp(tpath("v.png"), &n);
    unlink(tpath("v.png"));
    expect_decode_fail(b, n / 2, "half.png", "corrupt PNG");
    expect_decode_fail(b, 20, "head.png", "corrupt PNG");
    expect_decode_fail(b, n - 1, "end.png", "corrupt PNG"); /* IEND's CRC cut */
    b[30] ^= 0x40; /* inside IHDR's CRC (bytes 29..32) */
    expect_decode_fail(b, n, "crc.png", "CRC");
    b[30] ^= 0x40;
    b[45] ^= 0x01; /* inside IDAT */
    expect_decode_fail(b, n, "idat.png", "corrupt PNG");
    free(b);

    unsigned char forged[128];
    size_t fn = forge_png(forged, 1u << 20, 1u << 20);
    expect_decode_fail(forged, fn, "big.png", "exceeds the limit of 2^30 pixels");
    fn = forge_png(forged, (1u << 20) + 1, 1);
    expect_decode_fail(forged, fn, "wide.png", "exceeds user limit");
    /* Within the limits, but 900 MB of pixels cannot come out of a 100-byte file. */
    fn = forge_png(forged, 30000, 30000);
    expect_decode_fail(forged, fn, "bomb.png", "cannot fit in");
    fn = forge_png(forged, 0x7fffffffu, 0x7fffffffu);
    expect_decode_fail(forged, fn, "huge.png", "corrupt PNG");
    fn = forge_png(forged, 0, 5);
    expect_decode_fail(forged, fn, "zero.png", "corrupt PNG");
}

/* CMYK JPEG written with libjpeg directly. */
static void test_jpeg_refusals(void) {
    struct jpeg_compress_struct ci;
    struct jpeg_error_mgr je;
    ci.err = jpeg_std_error(&je);
    jpeg_create_compress(&ci);
    unsigned char *out = NULL;
    unsigned long outn = 0;
    jpeg_mem_dest(&ci, &out, &outn);
    ci.image_width = 8;
    ci.image_height = 8;
    ci.input_components = 4;
    ci.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&ci);
    jpeg_start_compress(&ci, TRUE);
    unsigned char row[32] = {0};
    JSAMPROW rp = row;
    for (int y = 0; y < 8; y++) jpeg_write_scanlines(&ci, &rp, 1);
    jpeg_finish_compress(&ci);
    jpeg_destroy_compress(&ci);
    expect_decode_fail(out, outn, "cmyk.jpg", "CMYK");
    free(out);

    float x[32 * 32 * 3];
    for (int i = 0; i < 32 * 32 * 3; i++) x[i] = (float)((i * 7) % 256);
    CHECK_EQ_INT(fconv_io_image_write(tpath("v.jpg"), x, 32, 32, 3, 8, err, sizeof err), 0);
    size_t n;
    unsigned char *b = slurp(tpath("v.jpg"), &n);
    unlink(tpath("v.jpg"));
    expect_decode_fail(b, n / 2, "half.jpg", "corrupt JPEG");
    expect_decode_fail(b, 40, "head.jpg", "corrupt JPEG");
    expect_decode_fail(b, 3, "tiny.jpg", "corrupt JPEG");
    /* Claim 30000x30000 in SOF0: the data ends after a few rows, and the decoder must fail
     * there (the output grows with the rows decoded, malloc_limit-friendly for fuzzers). */
    for (size_t i = 0; i + 9 < n; i++)
        if (b[i] == 0xFF && b[i + 1] == 0xC0) {
            b[i + 5] = 30000 >> 8;
            b[i + 6] = 30000 & 0xFF;
            b[i + 7] = 30000 >> 8;
            b[i + 8] = 30000 & 0xFF;
            break;
        }
    expect_decode_fail(b, n, "bomb.jpg", "corrupt JPEG");
    /* Beyond 2^30 pixels: refused from the header alone. */
    for (size_t i = 0; i + 9 < n; i++)
        if (b[i] == 0xFF && b[i + 1] == 0xC0) {
            b[i + 5] = b[i + 7] = 60000 >> 8;
            b[i + 6] = b[i + 8] = 60000 & 0xFF;
            break;
        }
    expect_decode_fail(b, n, "big.jpg", "exceeds the limit of 2^30 pixels");
    free(b);
}

static void test_misc_refusals(void) {
    fconv_io_image img;
    /* Empty and garbage files, through the file reader. */
    spit(tpath("empty.png"), "", 0);
    CHECK_EQ_INT(fconv_io_image_read(tpath("empty.png"), &img, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "empty.png: empty file");
    unlink(tpath("empty.png"));
    unsigned char junk[256];
    for (int i = 0; i < 256; i++) junk[i] = (unsigned char)test_rand_int(0, 255);
    junk[0] = 'x';
    spit(tpath("junk.jpg"), junk, sizeof junk);
    CHECK_EQ_INT(fconv_io_image_read(tpath("junk.jpg"), &img, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "junk.jpg: unknown image format");
    unlink(tpath("junk.jpg"));
    CHECK_EQ_INT(fconv_io_image_read(tpath("nope.png"), &img, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "nope.png: cannot open");
    CHECK_EQ_INT(fconv_io_image_read(tmpdir, &img, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "directory");
    expect_decode_fail("\x93NUMPY\x01\x00", 8, "a.npy", "not an image");
    expect_decode_fail("", 0, "e.png", "empty");

    /* Writes refused before anything is created. */
    float x[4 * 4 * 4] = {0};
    CHECK_EQ_INT(fconv_io_image_write(tpath("x.bmp"), x, 4, 4, 3, 8, err, sizeof err), -1);
    CHECK(strstr(err, "x.bmp: unknown image format (use .png, .jpg, .jpeg, .pgm, .ppm)"));
    CHECK_EQ_INT(fconv_io_image_write(tpath("noext"), x, 4, 4, 3, 8, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "unknown image format");
    CHECK_EQ_INT(fconv_io_image_write(tpath("x.npy"), x, 4, 4, 1, 8, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "unknown image format");
    CHECK_EQ_INT(fconv_io_image_write(tpath("x.jpg"), x, 4, 4, 4, 8, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "x.jpg: JPEG cannot store 4 channels");
    CHECK_EQ_INT(fconv_io_image_write(tpath("x.jpg"), x, 4, 4, 2, 8, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "2 channels");
    CHECK_EQ_INT(fconv_io_image_write(tpath("x.jpg"), x, 4, 4, 3, 16, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "8 bits");
    CHECK_EQ_INT(fconv_io_image_write(tpath("x.pgm"), x, 4, 4, 3, 8, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "x.pgm: PGM stores 1 channel");
    CHECK_EQ_INT(fconv_io_image_write(tpath("x.ppm"), x, 4, 4, 1, 8, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "x.ppm: PPM stores 3 channels");
    CHECK_EQ_INT(fconv_io_image_write(tpath("x.pnm"), x, 4, 4, 2, 8, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "1 or 3 channels");
    CHECK_EQ_INT(fconv_io_image_write(tpath("x.png"), x, 4, 4, 5, 8, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "5 channels");
    CHECK_EQ_INT(fconv_io_image_write(tpath("x.png"), x, 4, 4, 1, 12, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "bit depth 12");
    CHECK_EQ_INT(fconv_io_image_write(tpath("x.png"), x, 0, 4, 1, 8, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "empty");
    CHECK_EQ_INT(fconv_io_image_write(tpath("x.png"), x, 1 << 16, 1 << 15, 1, 8, err, sizeof err),
                 -1);
    CHECK_STR_CONTAINS(err, "exceeds the limit");
    CHECK_EQ_INT(fconv_io_image_write(tpath("x.png"), NULL, 4, 4, 1, 8, err, sizeof err), -1);
    CHECK_EQ_INT(fconv_io_image_write(tpath("nodir/x.png"), x, 4, 4, 1, 8, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "nodir/x.png: cannot create file in");
    mkdir(tpath("d.png"), 0755);
    CHECK_EQ_INT(fconv_io_image_write(tpath("d.png"), x, 4, 4, 1, 8, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "d.png: is a directory");
    rmdir(tpath("d.png"));
    /* JPEG's own limit (65500 per side) fails inside libjpeg: nothing may be left behind. */
    float *wide = calloc(70000, sizeof(float));
    CHECK_EQ_INT(fconv_io_image_write(tpath("wide.jpg"), wide, 1, 70000, 1, 8, err, sizeof err),
                 -1);
    CHECK_STR_CONTAINS(err, "wide.jpg: cannot write JPEG");
    free(wide);
    CHECK_EQ_INT(count_dir_entries(), 0);
}

static void test_formats(void) {
    CHECK_EQ_INT(fconv_io_format_from_path("a/b.PNG"), FCONV_IO_FORMAT_PNG);
    CHECK_EQ_INT(fconv_io_format_from_path("b.jpg"), FCONV_IO_FORMAT_JPEG);
    CHECK_EQ_INT(fconv_io_format_from_path("b.JpEg"), FCONV_IO_FORMAT_JPEG);
    CHECK_EQ_INT(fconv_io_format_from_path("b.pgm"), FCONV_IO_FORMAT_PNM);
    CHECK_EQ_INT(fconv_io_format_from_path("b.ppm"), FCONV_IO_FORMAT_PNM);
    CHECK_EQ_INT(fconv_io_format_from_path("b.pnm"), FCONV_IO_FORMAT_PNM);
    CHECK_EQ_INT(fconv_io_format_from_path("b.npy"), FCONV_IO_FORMAT_NPY);
    CHECK_EQ_INT(fconv_io_format_from_path("b.png.bak"), FCONV_IO_FORMAT_UNKNOWN);
    CHECK_EQ_INT(fconv_io_format_from_path("dir.png/b"), FCONV_IO_FORMAT_UNKNOWN);
    CHECK_EQ_INT(fconv_io_format_from_path("b.pngx"), FCONV_IO_FORMAT_UNKNOWN);
    CHECK_EQ_INT(fconv_io_format_sniff((const unsigned char *)"\x89PNG\r\n\x1a\n", 8),
                 FCONV_IO_FORMAT_PNG);
    CHECK_EQ_INT(fconv_io_format_sniff((const unsigned char *)"\x89PNG", 4),
                 FCONV_IO_FORMAT_UNKNOWN);
    CHECK_EQ_INT(fconv_io_format_sniff((const unsigned char *)"\xff\xd8\xff\xe0", 4),
                 FCONV_IO_FORMAT_JPEG);
    CHECK_EQ_INT(fconv_io_format_sniff((const unsigned char *)"P6", 2), FCONV_IO_FORMAT_PNM);
    CHECK_EQ_INT(fconv_io_format_sniff((const unsigned char *)"P8", 2), FCONV_IO_FORMAT_UNKNOWN);
    CHECK_EQ_INT(fconv_io_format_sniff((const unsigned char *)"\x93NUMPY", 6),
                 FCONV_IO_FORMAT_NPY);
    CHECK_EQ_INT(fconv_io_format_sniff(NULL, 0), FCONV_IO_FORMAT_UNKNOWN);
}

/* Found by fuzzing: 114 bytes of arithmetic-coded JPEG claiming 17110x16399 pixels. libjpeg
 * decodes missing arithmetic-coded data as zeros, so without the size-plausibility bound
 * this allocated over 1 GiB; it must be refused before decoding. */
static void test_jpeg_implausible_size(void) {
    static const unsigned char bytes[] = {
        0xff, 0xd8, 0xff, 0x01, 0x00, 0x01, 0xff, 0xdb, 0x00, 0x43, 0x00, 0x02,
        0x01, 0x01, 0x01, 0x01, 0x21, 0x02, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
        0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x50,
        0x31, 0x0a, 0x52, 0x1e, 0x0a, 0xc2, 0xc2, 0xc2, 0xc2, 0xc2, 0xc2, 0x60,
        0xc2, 0xc2, 0xc2, 0xc2, 0xc2, 0xc2, 0xff, 0xc2, 0xc2, 0xc2, 0xc2, 0xc2,
        0xc2, 0xc2, 0xc2, 0xc2, 0xc3, 0xc2, 0xc2, 0xc2, 0xc2, 0xc2, 0xc2, 0xc2,
        0xc2, 0xc2, 0x0a, 0xff, 0xc9, 0x00, 0x0b, 0x08, 0x42, 0xd6, 0x40, 0x0f,
        0x01, 0x01, 0x11, 0x00, 0x01, 0x01, 0x00, 0x40, 0xea, 0xf1, 0xf2, 0xf3,
        0xf4, 0xf8, 0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x45, 0x96, 0x96, 0x96,
        0x96, 0x0a, 0xff, 0x0a, 0x0a, 0xd9,
    };
    fconv_io_image img;
    char msg[256];
    CHECK(fconv_io_image_decode(bytes, sizeof bytes, "arith.jpg", &img, msg, sizeof msg) == -1);
    CHECK_STR_CONTAINS(msg, "cannot fit in 114 bytes");
    CHECK(img.data == NULL);
}

int main(void) {
    test_init();
    snprintf(tmpdir, sizeof tmpdir, "/tmp/fconv-test-image-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    TEST(test_formats);
    TEST(test_png_roundtrip);
    TEST(test_pnm_roundtrip);
    TEST(test_pnm_ascii);
    TEST(test_jpeg_roundtrip);
    TEST(test_clamp_round);
    TEST(test_png_variants);
    TEST(test_png_refusals);
    TEST(test_jpeg_refusals);
    TEST(test_jpeg_implausible_size);
    TEST(test_misc_refusals);
    CHECK_EQ_INT(count_dir_entries(), 0);
    rmdir(tmpdir);
    return test_finish();
}
