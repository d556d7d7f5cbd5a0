// The public `pe dot` request (include/pe/dot.h): the curve of a float64
// sinusoid against its closed form Σ_i cos(k·ω_i), ω_i = base^(-2i/d),
// summed here in long double (every p gives the same value, so min = mean =
// max); the heatmap's numbers on the diagonal, |PE(p)|² = d/2 (each sin/cos
// pair has norm 1); the scheme flags' series and its name; where the data
// goes (a file, or DotOutput::data); the observer's calls; and the errors
// a caller meets, naming the flags as `pe dot` does.
#include <gtest/gtest.h>

#include <pe/dot.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string Scratch(const std::string& name) { return ::testing::TempDir() + "pe_dot_api_" + name; }

std::vector<std::vector<std::string>> CsvRows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream l(line);
    while (std::getline(l, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

std::string ErrorOf(const pe::DotRequest& r) {
  try {
    pe::RunDot(r);
  } catch (const pe::Error& e) {
    return std::string(pe::ErrorKindName(e.kind())) + ": " + e.what();
  }
  return "no error";
}

TEST(DotApi, SinusoidCurveIsTheClosedForm) {
  pe::DotRequest r;
  r.inputs = {"sinusoidal:d-model=8,max-len=64,base=100,dtype=float64"};
  r.labels = {"s"};  // the spec as written holds commas: CSV would quote it
  const pe::DotOutput out = pe::RunDot(r);  // no -o, stdout not a terminal: the CSV is the data
  EXPECT_TRUE(out.chart.empty());
  EXPECT_TRUE(out.hint.empty());
  const auto rows = CsvRows(out.data);
  ASSERT_EQ(rows.size(), 65u);
  EXPECT_EQ(rows[0][0], "series");
  EXPECT_EQ(rows[0][3], "mean");
  for (std::size_t k = 0; k < 64; ++k) {
    long double cf = 0;
    for (int i = 0; i < 4; ++i) cf += std::cos(static_cast<long double>(k) * std::pow(100.0L, -2.0L * i / 8));
    const auto& row = rows[k + 1];
    EXPECT_EQ(row[0], "s");
    EXPECT_EQ(std::stoll(row[2]), static_cast<long long>(64 - k));  // pairs
    for (int c : {3, 4, 5}) EXPECT_NEAR(std::stod(row[c]), static_cast<double>(cf), 1e-12) << "k=" << k << " col " << c;
  }
}

TEST(DotApi, FilesWrittenAndTheFlagsSeries) {
  pe::DotRequest r;
  r.flags = pe::Spec("");
  r.flags.Set("d-model", "8").Set("max-len", "32");
  r.output = Scratch("curve.json");
  r.plot = Scratch("curve.svg");
  r.matrix = {Scratch("matrix.csv")};
  r.matrix_size = 16;
  std::remove(r.output.c_str());
  const pe::DotOutput out = pe::RunDot(r);
  EXPECT_TRUE(out.data.empty());  // -o names a file
  const std::string json = Slurp(r.output);
  EXPECT_NE(json.find("\"schema\": \"pe.dot/1\""), std::string::npos);
  EXPECT_NE(json.find("\"name\": \"sinusoidal d=8 L=32\""), std::string::npos);  // the flags' series
  EXPECT_NE(Slurp(r.plot).find("<svg"), std::string::npos);
  const auto m = CsvRows(Slurp(r.matrix[0]));
  ASSERT_EQ(m.size(), 1u + 16 * 16);
  EXPECT_EQ(m[0], (std::vector<std::string>{"p", "q", "value"}));
  for (std::size_t i = 1; i < m.size(); ++i)
    if (m[i][0] == m[i][1]) EXPECT_NEAR(std::stod(m[i][2]), 4.0, 1e-6) << m[i][0];  // |PE(p)|² = d/2
}

TEST(DotApi, ObserverSeesEachCurve) {
  struct Count : pe::DotObserver {
    std::vector<std::string> begun;
    int ended = 0;
    std::int64_t last_done = -1, last_total = -1;
    void Begin(const std::string& name) override { begun.push_back(name); }
    void Update(std::int64_t done, std::int64_t total) override { last_done = done, last_total = total; }
    void End(const std::string& timing, const std::vector<std::string>& warnings) override {
      ++ended;
      EXPECT_TRUE(timing.empty());
      EXPECT_TRUE(warnings.empty());
    }
  } count;
  pe::DotRequest r;
  r.inputs = {"sinusoidal:d-model=4,max-len=20", "sinusoidal:d-model=4,max-len=20"};
  r.labels = {"a", "a"};
  r.output = "/dev/null";
  r.observer = &count;
  pe::RunDot(r);
  EXPECT_EQ(count.begun, (std::vector<std::string>{"a", "a #2"}));  // a repeated name is numbered
  EXPECT_EQ(count.ended, 2);
  EXPECT_EQ(count.last_done, count.last_total);
}

TEST(DotApi, ViewsAndTheTerminal) {
  pe::DotRequest r;
  r.inputs = {"rope:head-dim=16,max-len=64"};
  r.stdout_is_terminal = true;
  const pe::DotOutput view = pe::RunDot(r);  // a RoPE spec: the qk view, nothing asked for
  EXPECT_TRUE(view.data.empty());
  EXPECT_EQ(view.hint, "--view qk: add --plot view.png, or -o view.csv (or .json)");
  r.inputs = {"sinusoidal:d-model=4,max-len=20"};
  const pe::DotOutput curve = pe::RunDot(r);
  EXPECT_TRUE(curve.data.empty());
  EXPECT_TRUE(curve.chart_on_stdout);
  EXPECT_NE(curve.chart.find("mean dot product of positions p and p+k"), std::string::npos);
  r.json = true;  // a format asked for: the data on stdout; --term: the chart beside it, on stderr
  EXPECT_TRUE(pe::RunDot(r).chart.empty());
  r.term = true;
  const pe::DotOutput both = pe::RunDot(r);
  EXPECT_NE(both.data.find("\"schema\": \"pe.dot/1\""), std::string::npos);
  EXPECT_FALSE(both.chart_on_stdout);
  EXPECT_FALSE(both.chart.empty());
}

TEST(DotApi, Errors) {
  pe::DotRequest r;
  EXPECT_EQ(ErrorOf(r), "usage: pe dot: needs an input: a table file, an inline spec, or --d-model and --max-len");
  r.inputs = {"sinusoidal:d-model=4,max-len=20"};
  r.labels = {"a", "b"};
  EXPECT_EQ(ErrorOf(r), "usage: --label: give it once per input, in input order (1 inputs, 2 --label)");
  r.labels.clear();
  r.json = true;
  r.format = "csv";
  EXPECT_EQ(ErrorOf(r), "usage: --json: conflicts with --output-format csv");
  r = {};
  r.flags.Set("d-model", "8").Set("max-len", "8").Set("heads", "4");
  EXPECT_NE(ErrorOf(r).find("usage: --heads: applies to"), std::string::npos) << ErrorOf(r);
  r = {};
  r.inputs = {"sinusoidal:d-model=4,max-len=20"};
  r.resize_rule = "hf-vit";  // no resize_flag named: the rule asks for the resize all the same
  r.flags.Set("grid", "4x4");
  EXPECT_EQ(ErrorOf(r),
            "usage: input 'sinusoidal:d-model=4,max-len=20': is a spec; --resize-rule resizes a learned table (a file)");
  r.inputs = {"vit.npy"};
  EXPECT_NE(ErrorOf(r).find("read_learned"), std::string::npos);
}

}  // namespace
