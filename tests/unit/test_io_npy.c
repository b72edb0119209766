/*
 * test_io_npy.c — .npy reader/writer: round trips through files, hand-made headers of every
 * version, dtype/byte-order/Fortran conversions, 0-d and empty arrays, and each refusal
 * (with its message and without allocating for absurd shapes). Atomic-write failures leave
 * no file and keep an existing target intact.
 */
#define _POSIX_C_SOURCE 200809L

#include "io/npy.h"
#include "test.h"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
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

static int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
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

/* Build a .npy image: magic, version major.0, header length (2 or 4 bytes), header, data. */
static size_t mk(unsigned char *out, int major, const char *hdr, const void *data, size_t nd) {
    size_t hl = strlen(hdr), p = 0;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    p = 8;
    out[p++] = (unsigned char)hl;
    out[p++] = (unsigned char)(hl >> 8);
    if (major >= 2) {
        out[p++] = (unsigned char)(hl >> 16);
        out[p++] = (unsigned char)(hl >> 24);
    }
    memcpy(out + p, hdr, hl);
    p += hl;
    if (nd) memcpy(out + p, data, nd);
    return p + nd;
}

static unsigned char buf[1 << 16];

/* Parse buf[0..n) expecting failure; check message mentions the name and `word`. */
static void expect_fail(size_t n, const char *word) {
    fconv_io_array a;
    memset(&a, 0x55, sizeof a);
    int rc = fconv_io_npy_parse(buf, n, "x.npy", &a, err, sizeof err);
    CHECK_EQ_INT(rc, -1);
    CHECK(a.data == NULL && a.ndim == 0);
    CHECK_STR_CONTAINS(err, "x.npy: ");
    CHECK_STR_CONTAINS(err, word);
    CHECKF(strchr(err, '\n') == NULL, "message has a newline: %s", err);
    fconv_io_array_free(&a);
}

static void test_roundtrip(void) {
    int64_t shape[3] = {2, 3, 4};
    float x[24];
    test_fill_random(x, 24);
    x[5] = -0.0f;
    x[7] = INFINITY;
    CHECK_EQ_INT(fconv_io_npy_write(tpath("a.npy"), x, 3, shape, err, sizeof err), 0);
    fconv_io_array a;
    CHECK_EQ_INT(fconv_io_npy_read(tpath("a.npy"), &a, err, sizeof err), 0);
    CHECK_EQ_INT(a.ndim, 3);
    CHECK(a.shape[0] == 2 && a.shape[1] == 3 && a.shape[2] == 4);
    CHECK_EQ_INT(fconv_io_array_elements(&a), 24);
    CHECK(a.data && memcmp(a.data, x, sizeof x) == 0);
    fconv_io_array_free(&a);
    CHECK(a.data == NULL);
    fconv_io_array_free(&a); /* twice is fine */

    /* The file layout numpy writes: v1.0, '<f4', header padded to 64 with '\n'. */
    FILE *fp = fopen(tpath("a.npy"), "rb");
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    CHECK_EQ_INT(n, 128 + 24 * 4);
    CHECK(memcmp(buf, "\x93NUMPY\x01\x00", 8) == 0);
    CHECK_EQ_INT(buf[8] | buf[9] << 8, 118);
    CHECK_EQ_INT(buf[127], '\n');
    CHECK(memcmp(buf + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }",
                 62) == 0);
    CHECK(buf[128] == ((const unsigned char *)x)[0]); /* little-endian host */

    /* 1-d writes "(5,)", 0-d "()", empty arrays work too. */
    int64_t s1[1] = {5}, s0[2] = {0, 7};
    float y[5] = {1, 2, 3, 4, 5};
    CHECK_EQ_INT(fconv_io_npy_write(tpath("b.npy"), y, 1, s1, err, sizeof err), 0);
    fp = fopen(tpath("b.npy"), "rb");
    n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    CHECK_EQ_INT(n, 128 + 20);
    CHECK_EQ_INT(buf[127], '\n');
    buf[127] = 0;
    CHECK_STR_CONTAINS((char *)buf + 10, "'shape': (5,), }");
    CHECK_EQ_INT(fconv_io_npy_write(tpath("c.npy"), y, 0, NULL, err, sizeof err), 0);
    CHECK_EQ_INT(fconv_io_npy_read(tpath("c.npy"), &a, err, sizeof err), 0);
    CHECK(a.ndim == 0 && fconv_io_array_elements(&a) == 1 && a.data[0] == 1.0f);
    fconv_io_array_free(&a);
    CHECK_EQ_INT(fconv_io_npy_write(tpath("d.npy"), NULL, 2, s0, err, sizeof err), 0);
    CHECK_EQ_INT(fconv_io_npy_read(tpath("d.npy"), &a, err, sizeof err), 0);
    CHECK(a.ndim == 2 && a.shape[0] == 0 && a.shape[1] == 7 && a.data != NULL);
    CHECK_EQ_INT(fconv_io_array_elements(&a), 0);
    fconv_io_array_free(&a);

    /* Overwriting an existing file replaces it. */
    CHECK_EQ_INT(fconv_io_npy_write(tpath("a.npy"), y, 1, s1, err, sizeof err), 0);
    CHECK_EQ_INT(fconv_io_npy_read(tpath("a.npy"), &a, err, sizeof err), 0);
    CHECK(a.ndim == 1 && a.shape[0] == 5 && a.data[4] == 5.0f);
    fconv_io_array_free(&a);
    for (const char *f = "abcd"; *f; f++) {
        char nm[8] = {*f, '.', 'n', 'p', 'y', 0};
        unlink(tpath(nm));
    }
    CHECK_EQ_INT(count_dir_entries(), 0);
}

static void test_versions(void) {
    const float v[3] = {1.5f, -2.0f, 3.25f};
    const char *h = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }          \n";
    for (int major = 1; major <= 3; major++) {
        size_t n = mk(buf, major, h, v, sizeof v);
        fconv_io_array a;
        CHECKF(fconv_io_npy_parse(buf, n, "v.npy", &a, err, sizeof err) == 0, "v%d: %s", major,
               err);
        CHECK(a.ndim == 1 && a.shape[0] == 3 && a.data && memcmp(a.data, v, sizeof v) == 0);
        fconv_io_array_free(&a);
    }
    /* Robust dict parsing: any key order, double quotes, odd whitespace, no trailing comma,
     * python-2 long suffixes. */
    const char *hs[] = {
        "{'shape':(3,),'fortran_order':False,'descr':'<f4'}",
        "{ \"descr\" : \"<f4\" ,\n 'shape' : ( 3 , ) , 'fortran_order' : False , }\n",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3L,), }",
        "{'descr': '<f4', 'fortran_order': True, 'shape': (3,)}   ",
    };
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++) {
        size_t n = mk(buf, 1, hs[i], v, sizeof v);
        fconv_io_array a;
        CHECKF(fconv_io_npy_parse(buf, n, "v.npy", &a, err, sizeof err) == 0, "%s: %s", hs[i],
               err);
        CHECK(a.ndim == 1 && a.shape[0] == 3 && a.data && memcmp(a.data, v, sizeof v) == 0);
        fconv_io_array_free(&a);
    }
}

static void test_conversions(void) {
    fconv_io_array a;
    /* '<f8' */
    double d[4] = {0.1, -1e30, 65504.25, 1e-3};
    size_t n = mk(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", d,
                  sizeof d);
    CHECK_EQ_INT(fconv_io_npy_parse(buf, n, "d.npy", &a, err, sizeof err), 0);
    CHECK(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 2);
    for (int i = 0; i < 4; i++) CHECK(a.data[i] == (float)d[i]);
    fconv_io_array_free(&a);
    /* '>f4' and '>f8': byte-swapped by hand. */
    float f[3] = {1.0f, -7.5f, 3.0e-5f};
    unsigned char be[24];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) be[4 * i + j] = ((unsigned char *)&f[i])[3 - j];
    n = mk(buf, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }", be, 12);
    CHECK_EQ_INT(fconv_io_npy_parse(buf, n, "b.npy", &a, err, sizeof err), 0);
    CHECK(a.data && memcmp(a.data, f, sizeof f) == 0);
    fconv_io_array_free(&a);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 8; j++) be[8 * i + j] = ((unsigned char *)&d[i])[7 - j];
    n = mk(buf, 1, "{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }", be, 24);
    CHECK_EQ_INT(fconv_io_npy_parse(buf, n, "b.npy", &a, err, sizeof err), 0);
    for (int i = 0; i < 3; i++) CHECK(a.data[i] == (float)d[i]);
    fconv_io_array_free(&a);
    /* '=f4' is native order. */
    n = mk(buf, 1, "{'descr': '=f4', 'fortran_order': False, 'shape': (3,), }", f, 12);
    CHECK_EQ_INT(fconv_io_npy_parse(buf, n, "n.npy", &a, err, sizeof err), 0);
    CHECK(a.data && memcmp(a.data, f, sizeof f) == 0);
    fconv_io_array_free(&a);
}

static void test_fortran(void) {
    fconv_io_array a;
    /* 2x3 [[1,2,3],[4,5,6]] stored column-major. */
    const float fo[6] = {1, 4, 2, 5, 3, 6};
    size_t n = mk(buf, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", fo,
                  sizeof fo);
    CHECK_EQ_INT(fconv_io_npy_parse(buf, n, "f.npy", &a, err, sizeof err), 0);
    CHECK(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3);
    for (int i = 0; i < 6; i++) CHECKF(a.data[i] == (float)(i + 1), "a[%d] = %g", i, a.data[i]);
    fconv_io_array_free(&a);
    /* 3-d: element (i,j,k) of shape (2,3,4) holds 100i+10j+k. */
    float f3[24];
    for (int k = 0, p = 0; k < 4; k++)
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 2; i++) f3[p++] = (float)(100 * i + 10 * j + k);
    n = mk(buf, 2, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4), }", f3,
           sizeof f3);
    CHECK_EQ_INT(fconv_io_npy_parse(buf, n, "f.npy", &a, err, sizeof err), 0);
    for (int i = 0, p = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++, p++) CHECK(a.data[p] == (float)(100 * i + 10 * j + k));
    fconv_io_array_free(&a);
}

static void test_zero_d_and_empty(void) {
    fconv_io_array a;
    float v = 42.0f;
    size_t n = mk(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", &v, 4);
    CHECK_EQ_INT(fconv_io_npy_parse(buf, n, "z.npy", &a, err, sizeof err), 0);
    CHECK(a.ndim == 0 && fconv_io_array_elements(&a) == 1 && a.data && a.data[0] == 42.0f);
    fconv_io_array_free(&a);
    n = mk(buf, 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 0, 2), }", NULL, 0);
    CHECK_EQ_INT(fconv_io_npy_parse(buf, n, "e.npy", &a, err, sizeof err), 0);
    CHECK(a.ndim == 3 && a.shape[1] == 0 && fconv_io_array_elements(&a) == 0 && a.data);
    fconv_io_array_free(&a);
    /* Zero-size with otherwise huge dims: 0 elements, nothing to overflow. */
    n = mk(buf, 1,
           "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 0, "
           "1099511627776), }", NULL, 0);
    CHECK_EQ_INT(fconv_io_npy_parse(buf, n, "e.npy", &a, err, sizeof err), 0);
    CHECK_EQ_INT(fconv_io_array_elements(&a), 0);
    fconv_io_array_free(&a);
}

static void test_refusals(void) {
    const float v[4] = {1, 2, 3, 4};
    size_t n;
    memcpy(buf, "\x89PNG\r\n\x1a\n\0\0\0\0", 12);
    expect_fail(12, "magic");
    expect_fail(0, "magic");
    n = mk(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", v, 16);
    buf[6] = 4;
    expect_fail(n, "version 4.0");
    buf[6] = 1;
    buf[7] = 1;
    expect_fail(n, "version 1.1");
    buf[7] = 0;
    expect_fail(7, "truncated header");
    expect_fail(9, "truncated header");
    expect_fail(40, "truncated header");
    expect_fail(n - 4, "truncated: header promises 16 bytes of data, file has 12");
    expect_fail(n - 1, "truncated");
    n = mk(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", v, 16);
    expect_fail(n, "4 bytes of trailing data after the array");

    static const struct {
        const char *hdr, *word;
    } bad[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), ", "bad header"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,) } x", "bad header"},
        {"['descr', '<f4']", "bad header"},
        {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
        {"{'descr': '<f4', 'shape': (4,)}", "missing key 'fortran_order'"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': (4,)}", "bad header"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}", "unexpected key 'x'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}", "duplicate"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,,)}", "bad header"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (a,)}", "bad header"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }",
         "dtype '<i4' is not float32 or float64"},
        {"{'descr': '|O', 'fortran_order': False, 'shape': (4,), }", "dtype '|O' is not"},
        {"{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }", "dtype '|b1'"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", "dtype '<c8'"},
        {"{'descr': '<U1', 'fortran_order': False, 'shape': (4,), }", "dtype '<U1'"},
        {"{'descr': '|f4', 'fortran_order': False, 'shape': (4,), }", "dtype '|f4'"},
        {"{'descr': '<f2', 'fortran_order': False, 'shape': (8,), }", "dtype '<f2'"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }",
         "dtype [('a', '<f4')] is not"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,4), }",
         "more than 8 dimensions"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }", "negative"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }",
         "too large"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
         "too large"},
        /* Huge but not overflowing: refused by the size check, not by malloc. */
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }",
         "truncated: header promises 4398046511104 bytes of data, file has 16"},
        {"{'descr': '<f8', 'fortran_order': True, 'shape': (65536, 65536, 1024), }",
         "truncated"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = mk(buf, 1, bad[i].hdr, v, 16);
        expect_fail(n, bad[i].word);
    }
    /* A valid 8-d array is fine. */
    n = mk(buf, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,1,1,1,1,1,2,2), }", v,
           16);
    fconv_io_array a;
    CHECK_EQ_INT(fconv_io_npy_parse(buf, n, "x.npy", &a, err, sizeof err), 0);
    CHECK(a.ndim == 8 && a.data[1] == 3.0f && a.data[2] == 2.0f);
    fconv_io_array_free(&a);
}

static void test_file_errors(void) {
    fconv_io_array a;
    float x[4] = {1, 2, 3, 4};
    int64_t s[1] = {4};
    CHECK_EQ_INT(fconv_io_npy_read(tpath("missing.npy"), &a, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "missing.npy: cannot open");
    CHECK_EQ_INT(fconv_io_npy_read(tmpdir, &a, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "directory");

    /* Into a missing directory. */
    CHECK_EQ_INT(fconv_io_npy_write(tpath("nodir/x.npy"), x, 1, s, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "nodir/x.npy: cannot create file in '");
    CHECK_STR_CONTAINS(err, "No such file or directory");
    CHECK(!file_exists(tpath("nodir")));
    /* Onto a directory. */
    mkdir(tpath("sub"), 0755);
    CHECK_EQ_INT(fconv_io_npy_write(tpath("sub"), x, 1, s, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "sub: is a directory");
    CHECK_EQ_INT(fconv_io_npy_write(tpath("sub/"), x, 1, s, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "directory");
    rmdir(tpath("sub"));
    /* Bad arguments. */
    int64_t neg[1] = {-1};
    CHECK_EQ_INT(fconv_io_npy_write(tpath("n.npy"), x, 1, neg, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "negative");
    CHECK_EQ_INT(fconv_io_npy_write(tpath("n.npy"), x, 9, s, err, sizeof err), -1);
    CHECK_EQ_INT(count_dir_entries(), 0);

    /* A write that fails midway (file size limit) leaves the old target as it was and no
     * temporary behind. */
    FILE *fp = fopen(tpath("keep.npy"), "wb");
    fputs("hello", fp);
    fclose(fp);
    size_t big = 1 << 18;
    float *y = calloc(big, sizeof(float));
    int64_t sb[1] = {(int64_t)big};
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 4096;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &lim);
    int rc = fconv_io_npy_write(tpath("keep.npy"), y, 1, sb, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    free(y);
    CHECK_EQ_INT(rc, -1);
    CHECK_STR_CONTAINS(err, "keep.npy: ");
    CHECK_STR_CONTAINS(err, "fail");
    fp = fopen(tpath("keep.npy"), "rb");
    char back[16] = {0};
    CHECK(fp && fread(back, 1, sizeof back, fp) == 5 && strcmp(back, "hello") == 0);
    if (fp) fclose(fp);
    CHECK_EQ_INT(count_dir_entries(), 1);
    unlink(tpath("keep.npy"));
}

int main(void) {
    test_init();
    snprintf(tmpdir, sizeof tmpdir, "/tmp/fconv-test-npy-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    TEST(test_roundtrip);
    TEST(test_versions);
    TEST(test_conversions);
    TEST(test_fortran);
    TEST(test_zero_d_and_empty);
    TEST(test_refusals);
    TEST(test_file_errors);
    rmdir(tmpdir);
    return test_finish();
}
