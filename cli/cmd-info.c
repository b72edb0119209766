/*
 * cmd-info.c — `fastconv info`: version, build options, CPU features, threads, devices and
 * the algorithms built in with what each serves.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"

static void print_serves(unsigned serves) {
    const char *sep = "";
    if (serves & FCONV_SERVES_CONV2D) { printf("%sconv2d", sep); sep = ", "; }
    if (serves & FCONV_SERVES_FILTER2D) { printf("%sfilter2d", sep); sep = ", "; }
    if (serves & FCONV_SERVES_CONV1D) printf("%sconv1d", sep);
}

int cmd_info(int argc, char **argv) {
    if (argc > 1) {
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
            puts("usage: fastconv info\n\nPrint the version, build options, CPU features, threads, "
                 "devices and algorithms.");
            return CLI_EXIT_OK;
        }
        return cli_usage_error("info: unexpected argument '%s'", argv[1]);
    }
    printf("fastconv %s\n", fconv_version());
    printf("build:      %s\n", fconv_build_options());
    printf("cpu:        %s\n", fconv_cpu_features());
    printf("isa:        %s\n", fconv_isa_report());
    printf("gemm:       %s\n", fconv_gemm_report());
    printf("threads:    %d (default)\n", fconv_default_threads());
    printf("devices:    cpu\n");
    for (int d = FCONV_DEVICE_OPENCL; d <= FCONV_DEVICE_CUDA; d++) {
        const char *kind = d == FCONV_DEVICE_OPENCL ? "opencl" : "cuda";
        int n = fconv_device_count((fconv_device)d);
        if (n == 0) printf("            %s: none (%s)\n", kind, fconv_last_error());
        for (int i = 0; i < n; i++) {
            char name[256];
            if (fconv_device_name((fconv_device)d, i, name, sizeof name) == FCONV_OK)
                printf("            [%d] %s%s\n", i, name, i == 0 ? " (used by --device)" : "");
        }
    }
    printf("algorithms:\n");
    for (int a = 1; a < FCONV_ALGO_COUNT_; a++) {
        fconv_algo_info info;
        if (fconv_algo_get_info((fconv_algo)a, &info) != FCONV_OK) continue;
        printf("  %-14s serves ", info.name);
        print_serves(info.serves);
        printf("; error <= %.0e; %s\n", info.error_bound, info.summary);
    }
    return CLI_EXIT_OK;
}
