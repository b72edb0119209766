// onednn_bench.cpp — time one conv2d forward-inference layer through oneDNN's own C++ API
// (direct or Winograd primitive, f32, NCHW user memory, reorders outside the timed loop) and
// print one JSON object. Used by bench/compare.py; threads come from OMP_NUM_THREADS.
// direct and winograd let oneDNN lay out the tensors as it prefers (format `any`: channel-blocked
// on AVX-512) and leave the reorders to and from it out of the timing, as a framework that keeps
// blocked tensors between layers runs it; direct-nchw and direct-nhwc give the direct primitive
// the input and output in that plain layout (the weights still its own), as a caller holding
// NCHW or channels-last tensors runs it without reorders — what fastconv reads and writes.
// With a layout argument (nchw or nhwc) and fastconv.h on the include path, fastconv's AUTO plan
// of the same layer (that layout, OMP_NUM_THREADS threads, its workspace allocated once, as
// `fastconv bench` runs it) is timed in the same process, the two executes alternated rep by rep
// (which goes first swapping every rep): on a VM whose speed moves by 1.5-2x from one minute to
// the next, two programs run a moment apart measured the moment as often as the code (the same
// layer's fastconv time 22.5 and 41.3 ms in two rows of one compare run), one process does not.
// FCONV_BENCH_ALGO=NAME (e.g. im2col) runs that fastconv algorithm instead of AUTO's choice.
// Build: g++ -O2 -std=c++17 bench/onednn_bench.cpp -ldnnl -o build/onednn_bench
//    or: g++ -O2 -std=c++17 -Iinclude bench/onednn_bench.cpp -ldnnl -Lbuild -lfastconv
//            -Wl,-rpath,$PWD/build -o build/onednn_bench
// Usage: onednn_bench N C H W K R S STRIDE PAD direct|winograd|direct-nchw|direct-nhwc REPS [nchw|nhwc]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#if __has_include("fastconv.h")
#include "fastconv.h"
#define WITH_FASTCONV 1
#endif

static double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The one-line answer when the layer cannot be timed; compare.py reads "unavailable".
static void print_unavailable(const char *algo, const char *why) {
    std::printf("{\"algo\": \"%s\", \"unavailable\": \"%s\"}\n", algo, why);
}

static double median(std::vector<double> t) {
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

#ifdef WITH_FASTCONV
// fastconv's AUTO plan of the layer and what its execute needs; run() returns false on failure.
struct fastconv_layer {
    fconv_plan *plan = nullptr;
    std::vector<float> x;
    float *y = nullptr; // 64-byte aligned, as `fastconv bench` and fastconv.h's advice have it
                        // (from std::vector's 16 bytes, the GEMM's whole tiles did not stream
                        // until 2026-11-30: 8 x 64 x 56^2 -> 256 1x1 6.5 ms against 3.8)
    void *workspace = nullptr;
    size_t workspace_bytes = 0;
    std::string error;

    bool init(const long v[9], bool nhwc, const std::vector<float> &w) {
        fconv_conv2d_desc d;
        std::memset(&d, 0, sizeof d);
        d.n = v[0], d.c = v[1], d.h = v[2], d.w = v[3], d.k = v[4], d.r = v[5], d.s = v[6];
        d.stride_h = d.stride_w = v[7];
        d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = v[8];
        d.layout = nhwc ? FCONV_LAYOUT_NHWC : FCONV_LAYOUT_NCHW;
        fconv_options o;
        std::memset(&o, 0, sizeof o);
        const char *threads = std::getenv("OMP_NUM_THREADS");
        o.threads = threads ? std::atoi(threads) : 0;
        /* FCONV_BENCH_ALGO names the algorithm fastconv runs instead of AUTO's choice */
        const char *forced = std::getenv("FCONV_BENCH_ALGO");
        if (forced && fconv_algo_from_name(forced, &o.algo) != FCONV_OK) {
            error = fconv_last_error();
            return false;
        }
        if (fconv_plan_conv2d(&d, &o, w.data(), nullptr, &plan) != FCONV_OK) {
            error = fconv_last_error();
            return false;
        }
        x.assign((size_t)fconv_plan_input_elements(plan), 0.5f);
        const size_t y_bytes = (size_t)fconv_plan_output_elements(plan) * sizeof(float);
        y = static_cast<float *>(std::aligned_alloc(64, (y_bytes + 63) / 64 * 64));
        if (!y) {
            error = "cannot allocate the output";
            return false;
        }
        workspace_bytes = fconv_plan_workspace_size(plan);
        workspace = workspace_bytes ? std::malloc(workspace_bytes) : nullptr;
        if (workspace_bytes && !workspace) {
            error = "cannot allocate the workspace";
            return false;
        }
        return true;
    }
    bool run() {
        return fconv_execute_with_workspace(plan, x.data(), nullptr, nullptr, y, workspace,
                                            workspace_bytes) == FCONV_OK;
    }
    ~fastconv_layer() {
        fconv_plan_destroy(plan);
        std::free(y);
        std::free(workspace);
    }
};
#endif

int main(int argc, char **argv) {
    if (argc != 12 && argc != 13) {
        std::fprintf(stderr, "usage: %s N C H W K R S STRIDE PAD direct|winograd|direct-nchw|direct-nhwc REPS [nchw|nhwc]\n",
                     argv[0]);
        return 2;
    }
    long v[9];
    for (int i = 0; i < 9; i++) v[i] = std::atol(argv[i + 1]);
    const long n = v[0], c = v[1], h = v[2], w = v[3], k = v[4], r = v[5], s = v[6], st = v[7], pad = v[8];
    const char *algo = argv[10];
    const bool wino = std::strcmp(algo, "winograd") == 0, plain_nchw = std::strcmp(algo, "direct-nchw") == 0,
               plain_nhwc = std::strcmp(algo, "direct-nhwc") == 0, plain = plain_nchw || plain_nhwc;
    if (!wino && !plain && std::strcmp(algo, "direct") != 0) {
        std::fprintf(stderr, "%s: the primitive must be direct, winograd, direct-nchw or direct-nhwc, not '%s'\n",
                     argv[0], algo);
        return 2;
    }
    const int reps = std::max(1, std::atoi(argv[11]));
    const char *layout = argc == 13 ? argv[12] : nullptr;
    if (layout && std::strcmp(layout, "nchw") != 0 && std::strcmp(layout, "nhwc") != 0) {
        std::fprintf(stderr, "%s: layout must be nchw or nhwc, not '%s'\n", argv[0], layout);
        return 2;
    }
#ifndef WITH_FASTCONV
    if (layout) {
        std::fprintf(stderr, "%s: built without fastconv.h, cannot time fastconv beside oneDNN\n", argv[0]);
        return 2;
    }
#endif
    const long p = (h + 2 * pad - r) / st + 1, q = (w + 2 * pad - s) / st + 1;
    using namespace dnnl;
    using tag = memory::format_tag;
    using dt = memory::data_type;
    try {
        engine eng(engine::kind::cpu, 0);
        stream strm(eng);
        memory::dims src_d = {n, c, h, w}, wei_d = {k, c, r, s}, dst_d = {n, k, p, q};
        const tag data = plain_nchw ? tag::nchw : plain_nhwc ? tag::nhwc : tag::any;
        auto src_any = memory::desc(src_d, dt::f32, data);
        auto wei_any = memory::desc(wei_d, dt::f32, tag::any);
        auto dst_any = memory::desc(dst_d, dt::f32, data);
        auto desc = convolution_forward::desc(prop_kind::forward_inference,
                                              wino ? algorithm::convolution_winograd : algorithm::convolution_direct,
                                              src_any, wei_any, dst_any, {st, st}, {pad, pad}, {pad, pad});
        auto pd = convolution_forward::primitive_desc(desc, eng);
        std::vector<float> xs(n * c * h * w, 0.5f), ws(k * c * r * s, 0.25f), ys(n * k * p * q);
        memory src_u({src_d, dt::f32, tag::nchw}, eng, xs.data());
        memory wei_u({wei_d, dt::f32, tag::oihw}, eng, ws.data());
        memory dst_u({dst_d, dt::f32, tag::nchw}, eng, ys.data());
        memory src_m(pd.src_desc(), eng), wei_m(pd.weights_desc(), eng), dst_m(pd.dst_desc(), eng);
        reorder(src_u, src_m).execute(strm, src_u, src_m);
        reorder(wei_u, wei_m).execute(strm, wei_u, wei_m);
        convolution_forward conv(pd);
        auto run_onednn = [&] {
            conv.execute(strm, {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, wei_m}, {DNNL_ARG_DST, dst_m}});
            strm.wait();
        };
#ifdef WITH_FASTCONV
        fastconv_layer fc;
        if (layout && !fc.init(v, std::strcmp(layout, "nhwc") == 0, ws)) {
            print_unavailable(algo, ("fastconv: " + fc.error).c_str());
            return 0;
        }
#endif
        std::vector<double> t, tf;
        for (int i = 0; i <= reps; i++) { // i == 0: warm-up
            const bool fastconv_first = layout && i % 2 == 1;
            for (int turn = 0; turn < (layout ? 2 : 1); turn++) {
                const bool is_fastconv = (turn == 0) == fastconv_first;
                const double t0 = now_ms();
#ifdef WITH_FASTCONV
                if (is_fastconv) {
                    if (!fc.run()) {
                        print_unavailable(algo, (std::string("fastconv: ") + fconv_last_error()).c_str());
                        return 0;
                    }
                } else
#endif
                    run_onednn();
                const double ms = now_ms() - t0;
                if (i) (is_fastconv ? tf : t).push_back(ms);
            }
        }
        std::printf("{\"algo\": \"%s\", \"impl\": \"%s\", \"median_ms\": %.6f, \"min_ms\": %.6f", algo,
                    pd.impl_info_str(), median(t), *std::min_element(t.begin(), t.end()));
#ifdef WITH_FASTCONV
        if (layout)
            std::printf(", \"fastconv_median_ms\": %.6f, \"fastconv_algo\": \"%s\"", median(tf),
                        fconv_algo_name(fconv_plan_algo(fc.plan)));
#endif
        std::printf("}\n");
    } catch (const dnnl::error &e) {
        print_unavailable(algo, e.what());
    }
    return 0;
}
