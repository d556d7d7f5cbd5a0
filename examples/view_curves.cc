// view_curves: the pictures of `pe dot --view` from the library
// (docs/library.md, include/pe/view.h).
//
// Computes RoPE's q·k decay for Llama 3 with and without its scaling, writes
// the curve as CSV and draws it (the same bytes and picture as
// `pe dot SPEC1 SPEC2 --view qk -o qk.csv --plot qk.png`), then ALiBi's
// per-head bias as an SVG heatmap, and checks the first values against the
// closed forms: q·k(0) = 1 and the bias of head 0 at distance 1, -1/2.
//
//   cmake -S examples -B build-ex -DCMAKE_PREFIX_PATH=/path/to/prefix
//   cmake --build build-ex && ./build-ex/view_curves [OUT_DIR]
#include <cmath>
#include <cstdio>
#include <string>

#include <pe/pe.h>

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? std::string(argv[1]) + "/" : "";
  try {
    pe::ViewRequest request;
    request.max_offset = 8191;
    pe::View qk = pe::ComputeView(
        "qk",
        {"rope:head-dim=128,max-len=8192,base=500000",
         "rope:head-dim=128,max-len=8192,base=500000,rope-scaling=llama3,factor=8,original-max-position-embeddings=2048"},
        request);
    pe::WriteViewFile(qk, dir + "qk.csv");
    pe::PlotOptions plot;
    plot.log_x = true;
    plot.train_len = 2048;  // shade what the unscaled model never saw
    pe::PlotView(qk, dir + "qk.png", plot);

    pe::View heads = pe::ComputeView("", {"alibi:heads=8,max-len=64"});  // the default view: heads
    pe::PlotView(heads, dir + "alibi_heads.svg");

    const double qk0 = qk.series[0].columns[0].values[0];
    const double bias01 = heads.panels[0].values[1];
    std::printf("%s: %zu series, q·k(0) = %g; %s: bias(head 0, k=1) = %g\n", qk.name.c_str(), qk.series.size(), qk0,
                heads.name.c_str(), bias01);
    return std::fabs(qk0 - 1) < 1e-12 && bias01 == -0.5 ? 0 : 1;
  } catch (const pe::Error& e) {
    std::fprintf(stderr, "view_curves: error: %s\n", e.what());
    return 2;
  }
}
