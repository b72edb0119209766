// onednn_bench.cpp — time one conv2d forward-inference layer through oneDNN's own C++ API
// (direct or Winograd primitive, f32, NCHW user memory, reorders outside the timed loop) and
// print one JSON object. Used by bench/compare.py; threads come from OMP_NUM_THREADS.
// Build: g++ -O2 -std=c++17 bench/onednn_bench.cpp -ldnnl -o build/onednn_bench
// Usage: onednn_bench N C H W K R S STRIDE PAD direct|winograd REPS
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

int main(int argc, char **argv) {
    if (argc != 12) {
        std::fprintf(stderr, "usage: %s N C H W K R S STRIDE PAD direct|winograd REPS\n", argv[0]);
        return 2;
    }
    long v[9];
    for (int i = 0; i < 9; i++) v[i] = std::atol(argv[i + 1]);
    const long n = v[0], c = v[1], h = v[2], w = v[3], k = v[4], r = v[5], s = v[6], st = v[7], pad = v[8];
    const bool wino = std::strcmp(argv[10], "winograd") == 0;
    const int reps = std::max(1, std::atoi(argv[11]));
    const long p = (h + 2 * pad - r) / st + 1, q = (w + 2 * pad - s) / st + 1;
    using namespace dnnl;
    using tag = memory::format_tag;
    using dt = memory::data_type;
    try {
        engine eng(engine::kind::cpu, 0);
        stream strm(eng);
        memory::dims src_d = {n, c, h, w}, wei_d = {k, c, r, s}, dst_d = {n, k, p, q};
        auto src_any = memory::desc(src_d, dt::f32, tag::any);
        auto wei_any = memory::desc(wei_d, dt::f32, tag::any);
        auto dst_any = memory::desc(dst_d, dt::f32, tag::any);
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
        std::vector<double> t;
        for (int i = 0; i <= reps; i++) {
            auto t0 = std::chrono::steady_clock::now();
            conv.execute(strm, {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, wei_m}, {DNNL_ARG_DST, dst_m}});
            strm.wait();
            auto t1 = std::chrono::steady_clock::now();
            if (i) t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count()); // i == 0: warm-up
        }
        std::sort(t.begin(), t.end());
        std::printf("{\"algo\": \"%s\", \"impl\": \"%s\", \"median_ms\": %.6f, \"min_ms\": %.6f}\n",
                    wino ? "winograd" : "direct", pd.impl_info_str(), t[t.size() / 2], t[0]);
    } catch (const dnnl::error &e) {
        std::printf("{\"algo\": \"%s\", \"unavailable\": \"%s\"}\n", wino ? "winograd" : "direct", e.what());
    }
    return 0;
}
