// The public API (include/pe/): values against the MPFR oracle
// (tests/oracle), shapes and names of multi-tensor schemes, row-block
// access, files written and read back, the verify report's fields against
// its JSON, identification, dot curves against Σ cos(kω) computed here in
// long double, and errors (kind and message). Uses only <pe/...> headers
// plus the oracle: what a library user sees.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <pe/pe.h>

#include "oracle/mpfr_oracle.h"

namespace pe {
namespace {

std::string TempPath(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("pe_api_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

template <class F>
std::string ErrorOf(F&& f, ErrorKind* kind = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (kind) *kind = e.kind();
    return e.what();
  }
  return "(no error)";
}

TEST(ApiTest, SinusoidFloat32EqualsTheOracleBitForBit) {
  Spec spec;  // sinusoidal, interleaved: col 2i = sin(p b^(-2i/d)), 2i+1 = cos
  spec.Set("d_model", 16).Set("max_len", 64).Set("start", 1000);
  Table t = GenerateTable(spec);
  ASSERT_EQ(t.size(), 1u);
  RowStream& s = t.tensor(0);
  EXPECT_EQ(s.info().name, "pe");
  EXPECT_EQ(s.info().shape, (std::vector<std::int64_t>{64, 16}));
  EXPECT_EQ(s.info().dtype, DType::kFloat32);
  std::vector<float> v(64 * 16);
  s.ReadAll(v.data(), v.size() * sizeof(float));
  for (std::int64_t r = 0; r < 64; ++r)
    for (std::int64_t c = 0; c < 16; ++c)
      ASSERT_EQ(v[r * 16 + c], oracle::SinusoidF32(1000 + r, 10000.0, 2 * (c / 2), 16, c % 2 == 1))
          << "row " << r << " col " << c;
  const MetaValue* scheme = FindMeta(t.metadata(), "scheme");
  ASSERT_NE(scheme, nullptr);
  EXPECT_EQ(MetaText(*scheme), "sinusoidal");
}

TEST(ApiTest, RopeCosSinEqualTheOracleAndKeepTheirNames) {
  // HF's default rope: inv_freq[i] = base^(-2i/d), cos = cos(p·inv_freq[j mod d/2]).
  Spec spec("rope");
  spec.Set("head-dim", 8).Set("max_len", 32).Set("base", 500000.0).Set("dtype", "float64");
  Table t = GenerateTable(spec);
  EXPECT_EQ(t.names(), (std::vector<std::string>{"cos", "sin", "inv_freq"}));
  for (const char* name : {"cos", "sin"}) {
    RowStream& s = t.tensor(name);
    ASSERT_EQ(s.info().rows, 32);
    ASSERT_EQ(s.info().cols, 8);
    std::vector<double> v(32 * 8);
    s.ReadAll(v.data(), v.size() * sizeof(double));
    for (std::int64_t p = 0; p < 32; ++p)
      for (std::int64_t j = 0; j < 8; ++j)
        ASSERT_EQ(v[p * 8 + j], oracle::SinusoidF64(p, 500000.0, 2 * (j % 4), 8, name[0] == 'c'))
            << name << " " << p << " " << j;
  }
  EXPECT_EQ(t.tensor("inv_freq").info().shape, (std::vector<std::int64_t>{4}));
  // Only one tensor: the CLI's --tensor.
  Table one = GenerateTable(Spec("rope").Set("head_dim", 8).Set("max_len", 4).Set("tensor", "sin"));
  EXPECT_EQ(one.names(), (std::vector<std::string>{"sin"}));
}

TEST(ApiTest, RowBlocksReadRowsAndReadAllAgree) {
  Table t = GenerateTable(Spec().Set("d_model", 512).Set("max_len", 5000));
  RowStream& s = t.tensor(0);
  std::vector<std::byte> all(s.info().byte_size());
  s.ReadAll(all.data(), all.size());
  std::vector<std::byte> blocks;
  std::int64_t next = 0;
  s.ForEachBlock(
      [&](const RowBlock& b) {
        EXPECT_EQ(b.first, next);
        next += b.count;
        blocks.insert(blocks.end(), b.data, b.data + b.bytes);
      },
      777);
  EXPECT_EQ(next, 5000);
  EXPECT_EQ(blocks, all);
  std::vector<std::byte> some(3 * s.info().row_bytes());
  s.ReadRows(4997, 3, some.data(), some.size());
  EXPECT_EQ(0, std::memcmp(some.data(), all.data() + 4997 * s.info().row_bytes(), some.size()));
  ErrorKind kind{};
  EXPECT_EQ(ErrorOf([&] { s.ReadRows(4998, 3, some.data(), some.size()); }, &kind),
            "rows [4998, 4998+3): outside tensor 'pe' of 5000 rows");
  EXPECT_EQ(kind, ErrorKind::kUsage);
  EXPECT_EQ(ErrorOf([&] { s.ReadAll(all.data(), all.size() - 1); }),
            "buffer of 10239999 bytes: tensor 'pe' (5000 x 512 float32) needs 10240000 bytes");
}

TEST(ApiTest, SpecErrorsNameTheFlag) {
  ErrorKind kind{};
  EXPECT_EQ(ErrorOf([] { GenerateTable(Spec().Set("d_modle", 8)); }, &kind),
            "parameter 'd_modle': unknown; did you mean 'd_model'?");
  EXPECT_EQ(kind, ErrorKind::kUsage);
  EXPECT_EQ(ErrorOf([] { GenerateTable(Spec().Set("d_model", "eight")); }), "--d-model 'eight': expected an integer");
  EXPECT_EQ(ErrorOf([] { GenerateTable(Spec().Set("d_model", "99999999999999999999")); }),
            "--d-model '99999999999999999999': beyond the 64-bit integer range");
  EXPECT_EQ(ErrorOf([] { GenerateTable(Spec().Set("d_model", 8).Set("max_len", 4).Set("base", "x")); }),
            "--base 'x': expected a number");
  EXPECT_EQ(ErrorOf([] { GenerateTable(Spec().Set("d_model", 8).Set("max_len", 4).Set("dtype", "int8")); }),
            "--dtype 'int8': unknown type (known: float16, bfloat16, float32, float64)");
  // Range errors come from the scheme, as for the CLI.
  const std::string zero = ErrorOf([] { GenerateTable(Spec().Set("d_model", 0).Set("max_len", 4)); });
  EXPECT_EQ(zero.rfind("--d-model", 0), 0u) << zero;
  EXPECT_NE(ErrorOf([] { GenerateTable(Spec("ropee").Set("d_model", 8)); }).find("did you mean 'rope'"),
            std::string::npos);
  EXPECT_STREQ(ErrorKindName(ErrorKind::kInput), "input");
}

TEST(ApiTest, EveryRegistryFlagIsASpecKey) {
  // A scheme parameter added to the registry without a line in
  // src/core/spec/params.cc would be unreachable from the API.
  const std::vector<std::string> keys = SpecKeys();
  auto known = [&](std::string k) {
    return k == "head_dim" || std::find(keys.begin(), keys.end(), k) != keys.end();
  };
  for (const SchemeDescription& s : ListSchemes()) {
    for (const SchemeParamInfo& p : s.params) {
      // "beta_fast, beta_slow": two flags in one row.
      std::string text = p.key;
      std::size_t from = 0;
      while (from <= text.size()) {
        std::size_t to = text.find(", ", from);
        if (to == std::string::npos) to = text.size();
        const std::string k = text.substr(from, to - from);
        EXPECT_TRUE(!k.empty() && known(k)) << s.name << ": " << p.key;
        from = to + 2;
      }
    }
  }
}

TEST(ApiTest, WriteThenOpenGivesTheSameBytesAndMetadata) {
  Table t = GenerateTable(Spec("rope").Set("head_dim", 8).Set("max_len", 16));
  for (const char* ext : {".safetensors", ".h5", ".json"}) {
    const std::string path = TempPath(std::string("rope") + ext);
    WriteTableFile(t, path);
    Table back = OpenTableFile(path);
    ASSERT_EQ(back.size(), 3u) << ext;
    for (const char* name : {"cos", "sin", "inv_freq"}) {
      RowStream& a = t.tensor(name);
      RowStream& b = back.tensor(name);
      EXPECT_EQ(b.info().shape, a.info().shape) << ext << " " << name;
      std::vector<std::byte> x(a.info().byte_size()), y(b.info().byte_size());
      a.ReadAll(x.data(), x.size());
      b.ReadAll(y.data(), y.size());
      EXPECT_EQ(x, y) << ext << " " << name;
    }
    const MetaValue* scheme = FindMeta(back.metadata(), "scheme");
    ASSERT_NE(scheme, nullptr) << ext;
    EXPECT_EQ(MetaText(*scheme), "rope");
    Table cos = OpenTableFile(path, ReadOptions{"", "cos"});
    EXPECT_EQ(cos.names(), (std::vector<std::string>{"cos"}));
  }
  // NPY holds one tensor.
  EXPECT_NE(ErrorOf([&] { WriteTableFile(t, TempPath("rope.npy")); }).find("choose one with --tensor"),
            std::string::npos);
  ErrorKind kind{};
  EXPECT_EQ(ErrorOf([] { OpenTableFile(TempPath("missing.npy")); }, &kind).rfind("cannot read", 0), 0u);
  EXPECT_EQ(kind, ErrorKind::kInput);
}

TEST(ApiTest, WrappedMemoryIsWrittenWithoutChange) {
  // Hand-made values, including the float32 just above 1 and a subnormal.
  const std::vector<float> v = {1.0f, std::nextafter(1.0f, 2.0f), -0.5f, 1e-45f, 3.0f, -7.25f};
  Table t = WrapTensors({TensorView{"pe", {3, 2}, DType::kFloat32, v.data()}}, {{"note", MetaValue{std::string("x")}}});
  const std::string path = TempPath("wrapped.npy");
  WriteTableFile(t, path);
  Table back = OpenTableFile(path);
  std::vector<float> w(6);
  back.tensor(0).ReadAll(w.data(), w.size() * sizeof(float));
  EXPECT_EQ(0, std::memcmp(v.data(), w.data(), 6 * sizeof(float)));
  EXPECT_EQ(back.tensor(0).info().shape, (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(ErrorOf([&] { WrapTensors({TensorView{"pe", {3, 0}, DType::kFloat32, v.data()}}); }),
            "tensor 'pe': axis 1 has extent 0; every extent must be >= 1");
  EXPECT_EQ(ErrorOf([&] { WrapTensors({TensorView{"pe", {}, DType::kFloat32, v.data()}}); }),
            "tensor 'pe': a 0-D (scalar) tensor is not a table; give it at least one axis");
}

TEST(ApiTest, VerifyReportFieldsMatchItsJson) {
  Table t = GenerateTable(Spec().Set("d_model", 64).Set("max_len", 256));
  VerifyResult ok = VerifyTable(t.tensor(0));
  EXPECT_TRUE(ok.passed);
  auto j = nlohmann::json::parse(ok.json);
  EXPECT_EQ(j["schema"], "pe.verify/1");
  EXPECT_EQ(j["passed"], true);
  ASSERT_EQ(j["checks"].size(), ok.checks.size());
  for (std::size_t i = 0; i < ok.checks.size(); ++i) {
    EXPECT_EQ(j["checks"][i]["name"], ok.checks[i].name);
    EXPECT_EQ(j["checks"][i]["status"], ok.checks[i].status);
  }
  EXPECT_TRUE(std::any_of(ok.checks.begin(), ok.checks.end(),
                          [](const CheckResult& c) { return c.name == "reference" && c.status == "pass"; }));

  // The same numbers in the caller's memory, without metadata, one entry
  // changed by 2^-10 (far beyond 1 ulp + the angle term at position 100).
  std::vector<float> v(256 * 64);
  t.tensor(0).ReadAll(v.data(), v.size() * sizeof(float));
  v[100 * 64 + 3] += 0x1p-10f;
  Table mem = WrapTensors({TensorView{"pe", {256, 64}, DType::kFloat32, v.data()}});
  ErrorKind kind{};
  EXPECT_NE(ErrorOf([&] { VerifyTable(mem.tensor(0)); }, &kind).find("nothing to verify against"), std::string::npos);
  EXPECT_EQ(kind, ErrorKind::kUsage);
  VerifyRequest req;
  req.spec = Spec("sinusoidal").Set("d_model", 64);
  req.checks = std::vector<std::string>{};
  const VerifyResult bad = VerifyTable(mem.tensor(0), req);
  EXPECT_FALSE(bad.passed);
  std::size_t at = bad.checks.size();
  for (std::size_t i = 0; i < bad.checks.size(); ++i)
    if (bad.checks[i].name == "reference") at = i;
  ASSERT_LT(at, bad.checks.size());
  EXPECT_EQ(bad.checks[at].status, "fail");
  auto b = nlohmann::json::parse(bad.json);
  EXPECT_EQ(b["passed"], false);
  EXPECT_EQ(b["file"], "<memory>");
  // The worst entry is the one changed: row 100, column 3, error 2^-10
  // from the exact value, give or take the entry's own rounding (half an
  // ulp of float32 at |cos| < 1: 2^-25); the sum is exact (ulp 2^-24).
  const auto& worst = b["checks"][at]["details"];
  ASSERT_TRUE(worst.contains("worst")) << worst.dump();
  EXPECT_EQ(worst["worst"]["row"], 100);
  EXPECT_EQ(worst["worst"]["col"], 3);
  EXPECT_NEAR(worst["worst"]["error"].get<double>(), 0x1p-10, 0x1p-25);
}

// A verification whose checks compared nothing is not a pass: here the
// only check asked for (rotation) is skipped, as the table (a ramp, no
// sin/cos pairs) has too few rows (8) to fit a linear map between rows.
// allow_empty passes it.
TEST(ApiTest, VerifyThatComparedNothingFailsUnlessAllowed) {
  std::vector<float> v(8 * 8);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  Table mem = WrapTensors({TensorView{"pe", {8, 8}, DType::kFloat32, v.data()}});
  VerifyRequest req;
  req.checks = std::vector<std::string>{"rotation"};
  const VerifyResult empty = VerifyTable(mem.tensor(0), req);
  ASSERT_EQ(empty.checks.size(), 1u);
  EXPECT_EQ(empty.checks[0].status, "skip");
  EXPECT_FALSE(empty.passed);
  EXPECT_NE(empty.nothing_compared.find("rotation skipped"), std::string::npos) << empty.nothing_compared;
  auto j = nlohmann::json::parse(empty.json);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["nothing_compared"], empty.nothing_compared);
  EXPECT_EQ(j["compared"]["entries"], 0);
  EXPECT_EQ(j["compared"]["properties"], 0);
  req.allow_empty = true;
  const VerifyResult allowed = VerifyTable(mem.tensor(0), req);
  EXPECT_TRUE(allowed.passed);
  EXPECT_EQ(allowed.nothing_compared, empty.nothing_compared);
  EXPECT_EQ(nlohmann::json::parse(allowed.json)["allow_empty"], true);
  // A comparison with the reference counts its entries.
  Table t = GenerateTable(Spec().Set("d_model", 16).Set("max_len", 32));
  const VerifyResult ok = VerifyTable(t.tensor(0));
  EXPECT_TRUE(ok.passed);
  EXPECT_TRUE(ok.nothing_compared.empty());
  auto k = nlohmann::json::parse(ok.json);
  EXPECT_EQ(k["compared"]["tensors"], 1);
  EXPECT_EQ(k["compared"]["entries"], 16 * 32);
  EXPECT_TRUE(k["nothing_compared"].is_null());
}

TEST(ApiTest, IdentifyFindsTheBaseOfABareTable) {
  Table t = GenerateTable(Spec().Set("d_model", 32).Set("max_len", 128).Set("base", 500000.0));
  std::vector<float> v(128 * 32);
  t.tensor(0).ReadAll(v.data(), v.size() * sizeof(float));
  Table mem = WrapTensors({TensorView{"pe", {128, 32}, DType::kFloat32, v.data()}});
  const IdentifyResult id = IdentifyTable(mem.tensor(0));
  EXPECT_TRUE(id.matched) << id.verdict;
  EXPECT_EQ(id.precision, "exact");
  auto j = nlohmann::json::parse(id.json);
  EXPECT_EQ(j["matched"], true);
  EXPECT_EQ(j["variant"]["base"].get<double>(), 500000.0) << id.json;
}

TEST(ApiTest, DotCurveOfASinusoidIsTheSumOfCosines) {
  // PE(p)·PE(p+k) = Σ_i cos(k ω_i) for the paired sinusoid, ω_i = 10^4^(-2i/d).
  const int d = 16, L = 200;
  Table t = GenerateTable(Spec().Set("d_model", d).Set("max_len", L).Set("dtype", "float64"));
  const DotCurve c = ComputeDot(t.tensor(0), DotOptions{false, 50, false});
  ASSERT_EQ(c.offset.size(), 51u);
  ASSERT_EQ(c.closed_form.size(), 51u);
  for (int k = 0; k <= 50; ++k) {
    long double want = 0;
    for (int i = 0; i < d / 2; ++i) want += std::cos(k * std::pow(10000.0L, -2.0L * i / d));
    EXPECT_NEAR(c.mean[k], static_cast<double>(want), 1e-12) << k;
    EXPECT_NEAR(c.closed_form[k], static_cast<double>(want), 1e-14) << k;
    EXPECT_NEAR(c.min[k], static_cast<double>(want), 1e-12) << k;
    EXPECT_EQ(c.pairs[k], L - k);
  }
  EXPECT_NE(ErrorOf([&] { ComputeDot(t.tensor(0), DotOptions{false, L, false}); }).find("200"), std::string::npos);
}

}  // namespace
}  // namespace pe
