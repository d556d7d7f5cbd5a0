// The public views (include/pe/view.h) and the core inline-spec parser
// (core/schemes/inline_spec.h) they read: the qk view against the closed form
// mean_i cos(k·θ_i), θ_i = base^(-2i/d) (HF inv_freq); ALiBi heads against
// -m_h·k with m_h = 2^(-8h/H) (Press et al., H a power of two); the CSV
// text equal to the file WriteViewFile writes; an SVG with <text>; the
// errors a library user meets.
#include <gtest/gtest.h>

#include <pe/view.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/schemes/inline_spec.h"

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string Scratch(const std::string& name) {
  return ::testing::TempDir() + "pe_view_api_" + name;
}

TEST(ViewApi, QkMatchesClosedForm) {
  pe::ViewRequest r;
  r.max_offset = 100;
  const pe::View v = pe::ComputeView("qk", {"rope:head-dim=32,max-len=256,base=500000"}, r);
  EXPECT_EQ(v.name, "qk");
  ASSERT_EQ(v.series.size(), 1u);
  const pe::View::Series& s = v.series[0];
  EXPECT_EQ(s.name, "rope:head-dim=32,max-len=256,base=500000");
  ASSERT_EQ(s.x.size(), 101u);
  ASSERT_EQ(s.columns[0].name, "qk");
  for (std::size_t j = 0; j < s.x.size(); ++j) {
    long double sum = 0;
    for (int i = 0; i < 16; ++i) sum += std::cos(static_cast<long double>(s.x[j]) * std::pow(500000.0L, -2.0L * i / 32));
    EXPECT_NEAR(s.columns[0].values[j], static_cast<double>(sum / 16), 1e-13) << "k=" << s.x[j];
  }
}

TEST(ViewApi, AlibiHeadsMatchSlopes) {
  const pe::View v = pe::ComputeView("", {"alibi:heads=8,max-len=16"});
  EXPECT_EQ(v.name, "heads");  // the default view of ALiBi
  ASSERT_EQ(v.panels.size(), 1u);
  const pe::View::Panel& p = v.panels[0];
  ASSERT_EQ(p.rows, 8);
  ASSERT_EQ(p.cols, 16);
  for (int h = 0; h < 8; ++h)
    for (int k = 0; k < 16; ++k) EXPECT_DOUBLE_EQ(p.values[h * 16 + k], -std::ldexp(1.0, -(h + 1)) * k) << h << "," << k;
}

TEST(ViewApi, CsvTextEqualsTheFileAndJsonHasSchema) {
  const pe::View v = pe::ComputeView("spectrum", {"rope:head-dim=16,max-len=64"});
  const std::string csv = pe::ViewCsv(v);
  EXPECT_EQ(csv.rfind("series,pair,wavelength,", 0), 0u) << csv.substr(0, 60);
  const std::string path = Scratch("spectrum.csv");
  pe::WriteViewFile(v, path);
  EXPECT_EQ(Slurp(path), csv);
  const std::string jpath = Scratch("spectrum.json");
  pe::WriteViewFile(v, jpath);
  EXPECT_EQ(Slurp(jpath), pe::ViewJson(v));
  EXPECT_NE(pe::ViewJson(v).find("\"schema\": \"pe.view/1\""), std::string::npos);
  std::remove(path.c_str());
  std::remove(jpath.c_str());
  EXPECT_THROW(pe::WriteViewFile(v, Scratch("x.npy")), pe::Error);
}

TEST(ViewApi, SvgHasText) {
  const pe::View v = pe::ComputeView("bound", {"rope:head-dim=16,max-len=64"});
  const std::string path = Scratch("bound.svg");
  pe::PlotOptions o;
  o.title = "RoFormer bound";
  pe::PlotView(v, path, o);
  const std::string svg = Slurp(path);
  EXPECT_NE(svg.find("<text"), std::string::npos);
  EXPECT_NE(svg.find("RoFormer bound"), std::string::npos);
  std::remove(path.c_str());
  o.vmin = 1;
  o.vmax = 0;
  EXPECT_THROW(pe::PlotView(v, path, o), pe::Error);
}

TEST(ViewApi, Errors) {
  auto kind_of = [](auto&& f) {
    try {
      f();
    } catch (const pe::Error& e) {
      return std::string(pe::ErrorKindName(e.kind())) + ": " + e.what();
    }
    return std::string("no error");
  };
  EXPECT_NE(kind_of([] { pe::ComputeView("grid", {"rope:head-dim=8,max-len=8"}); })
                .find("usage: --view grid: needs a 2-D encoding"),
            std::string::npos);
  EXPECT_NE(kind_of([] { pe::ComputeView("qk", {"rope:head-dim=8,scalling=yarn"}); })
                .find("input 'rope:head-dim=8,scalling=yarn': unknown key 'scalling'"),
            std::string::npos);
  EXPECT_NE(kind_of([] { pe::ComputeView("decay", {"sinusoidal:d-model=8,max-len=8"}); })
                .find("the decay curve of table rows is not a view: draw it with pe dot's picture"),
            std::string::npos);
  EXPECT_NE(kind_of([] { pe::ComputeView("qk", {}); }).find("needs an input"), std::string::npos);
}

TEST(InlineSpec, ParsesKeysSwitchesAndLists) {
  const auto p = pe::ParseInlineSpecText("RoPE:d=64,len=512,rope_theta=5e5,rope-scaling=longrope,short-factor=[1,2]");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->spec.scheme, "rope");
  EXPECT_EQ(p->spec.d_model, 64);
  EXPECT_EQ(p->spec.max_len, 512);
  EXPECT_EQ(p->spec.base, 5e5);
  EXPECT_EQ(p->spec.short_factor, "1,2");
  EXPECT_EQ(p->given.count("base"), 1u);
  EXPECT_EQ(p->given.count("d-model"), 1u);
  const auto c = pe::ParseInlineSpecText("sincos-2d:d-model=16,grid=4x6,cls-token");
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->spec.cls_token);
  EXPECT_EQ(c->spec.grid_h, 4);
  EXPECT_EQ(c->spec.grid_w, 6);
  EXPECT_FALSE(pe::ParseInlineSpecText("notascheme:x=1").has_value());  // a file name
  EXPECT_FALSE(pe::ParseInlineSpecText("plain.h5").has_value());
  EXPECT_THROW(pe::ParseInlineSpecText("rope:factor"), pe::Error);             // needs a value
  EXPECT_THROW(pe::ParseInlineSpecText("sincos-2d:cls-token=maybe"), pe::Error);
  EXPECT_THROW(pe::ParseInlineSpecText("sinusoidal:heads=4"), pe::Error);      // alibi's key
  EXPECT_THROW(pe::ParseInlineSpecText("rope:base=abc"), pe::Error);
}

}  // namespace
