/*
 * fuzz_cli_args.c — libFuzzer harness for the command line's value parsers (cli/args.c:
 * integers, integer lists, --mode, --border, --algo and its lists, --threads,
 * --max-workspace) and the kernel-name parser (cli/kernels.c). The input is split at NUL
 * bytes into strings; each string goes through every parser. Parsers print their one-line
 * errors on stderr, which the harness sends to /dev/null (libFuzzer's and the sanitizers'
 * reports still appear).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "kernels.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    /* glibc's stderr is an assignable FILE*: the CLI's fputs(stderr) now goes nowhere, while
     * libFuzzer (which captured the original FILE* at start-up) and the sanitizers (which
     * write to fd 2) still report. */
    FILE *null = fopen("/dev/null", "w");
    if (null) stderr = null;
    return 0;
}

static void parse_all(const char *s) {
    int64_t v, list[8];
    int count = 0, threads = 0;
    fconv_mode mode;
    fconv_border border;
    float value = 0;
    fconv_algo algo;
    fconv_options o;
    memset(&o, 0, sizeof o);
    if (cli_parse_int("--n", s, -5, INT64_MAX, &v) == 0 && v < -5) abort();
    if (cli_parse_int_list("--pad", s, 0, list, 4, &count) == 0) {
        if (count < 1 || count > 4) abort();
        for (int i = 0; i < count; i++)
            if (list[i] < 0) abort();
    }
    (void)cli_parse_mode(s, &mode);
    (void)cli_parse_border(s, &border, &value);
    if (cli_parse_algo(s, &algo) == 0 && (unsigned)algo >= FCONV_ALGO_COUNT_) abort();
    fconv_algo algos[4];
    if (cli_parse_algo_list(s, algos, 4, &count) == 0) {
        if (count < 2 || count > 4) abort();
        for (int i = 0; i < count; i++)
            if ((unsigned)algos[i] >= FCONV_ALGO_COUNT_) abort();
    }
    if (cli_parse_threads(s, &threads) == 0 && threads < 0) abort();
    (void)cli_parse_workspace_limit(s, &o);
    /* A .npy kernel would be read from disk: the .npy reader has its own harness. */
    if (!cli_has_extension(s, ".npy")) {
        cli_kernel k;
        if (cli_kernel_load(s, &k) == 0) {
            if (k.kh < 1 || k.kw < 1 || !k.k) abort();
            cli_kernel_free(&k);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    for (size_t i = 0; i <= size;) {
        parse_all(buf + i);
        i += strlen(buf + i) + 1;
    }
    free(buf);
    return 0;
}
