// ComputeView (core/analysis/views/view_compute.h), the one path from inputs to a
// view shared by `pe dot --view` and the library: the qk view of a RoPE
// spec against the closed form mean_i cos(k·θ_i), θ_i = base^(-2i/d)
// (HF inv_freq), and the usage error for a view that does not apply.
#include <gtest/gtest.h>

#include <cmath>

#include "core/analysis/views/view_compute.h"
#include "core/base/error.h"

namespace pe {
namespace {

TEST(ViewCompute, QkOfRopeSpecIsMeanCos) {
  SchemeSpec s;
  s.scheme = "rope";
  s.d_model = 64;
  s.max_len = 128;
  ViewOptions o;
  o.max_offset = 20;
  const ViewData v = ComputeView(ViewKind::kQk, o, {ViewInput{"r", s, "", false}});
  ASSERT_EQ(v.series.size(), 1u);
  const ViewSeries& r = v.series[0];
  ASSERT_FALSE(r.columns.empty());
  ASSERT_EQ(r.columns[0].name, "qk");
  ASSERT_EQ(r.x.size(), r.columns[0].values.size());
  for (std::size_t j = 0; j < r.x.size(); ++j) {
    double sum = 0;
    for (int i = 0; i < 32; ++i) sum += std::cos(r.x[j] * std::pow(10000.0, -2.0 * i / 64.0));
    EXPECT_NEAR(r.columns[0].values[j], sum / 32, 1e-12) << "k=" << r.x[j];
  }
  EXPECT_EQ(r.x.back(), 20);
}

TEST(ViewCompute, QkOfNonRotaryIsUsageError) {
  SchemeSpec s;
  s.scheme = "sinusoidal";
  s.d_model = 16;
  s.max_len = 8;
  try {
    ComputeView(ViewKind::kQk, {}, {ViewInput{"sin", s, "", false}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("needs a rotary input"), std::string::npos);
  }
}

}  // namespace
}  // namespace pe
