// The plan comparison of core/analysis/verify/artifact_checks.h on hand-built
// ModelArtifacts: a Hugging Face folder's artifact against one built the
// way a GGUF reader fills it (settings with GGUF keys such as
// "llama.rope.freq_base", llama3 scaling baked into a rope_freqs tensor), so
// the GGUF-vs-folder logic is tested before the GGUF reader lands. Expected
// factors are hand-derived from the llama3 rule (transformers
// _compute_llama3_parameters): wavelength 2π/ω below original/high_freq_factor
// keeps ω (factor 1), above original/low_freq_factor divides it by `factor`.
#include "core/analysis/verify/artifact_checks.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/spec/plan_switches.h"

namespace pe {
namespace {

SchemeSpec Rope(double base, std::int64_t head_dim, const std::string& layout = "half") {
  SchemeSpec s;
  s.scheme = "rope";
  s.d_model = head_dim;
  s.base = base;
  s.layout = layout;
  s.max_len = 1;
  return s;
}

SchemeSpec Llama3(SchemeSpec s) {
  s.rope_scaling = "llama3";
  s.factor = 8;
  s.low_freq_factor = 1;
  s.high_freq_factor = 4;
  s.original_max_position_embeddings = 8192;
  return s;
}

PePlan OneGroup(const SchemeSpec& s, int layers = 4) {
  PePlan p;
  p.source = "test";
  for (int i = 0; i < layers; ++i) {
    PlanLayer l;
    l.layer_type = "full_attention";
    l.group = AddPlanGroup(&p, "full_attention", s);
    p.layers.push_back(l);
  }
  return p;
}

ModelArtifact Folder(const SchemeSpec& s) {
  ModelArtifact a;
  a.path = "Llama-3.1-8B";
  a.kind = "hf-folder";
  a.architecture = "llama";
  a.plan = OneGroup(s);
  a.context_length = 131072;
  a.settings = {{"rope_theta", fmt::format("{}", s.base), "config.json rope_theta"},
                {"context_length", "131072", "config.json max_position_embeddings"}};
  return a;
}

// A tensor in memory, float32.
ArtifactTensor Tensor(const std::string& name, const std::string& role, const std::vector<float>& v) {
  ArtifactTensor t;
  t.name = name;
  t.role = role;
  t.info.name = name;
  t.info.rows = static_cast<std::int64_t>(v.size());
  t.info.cols = 1;
  t.info.shape = {t.info.rows};
  t.info.dtype = DType::kFloat32;
  const TableInfo info = t.info;
  t.open = [info, v] {
    std::vector<std::byte> bytes(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return std::unique_ptr<RowSource>(new MemoryRowSource(info, std::move(bytes)));
  };
  return t;
}

// What a GGUF reader makes of llama.cpp's llama-3.1 file: theta from
// llama.rope.freq_base, rope type NORM (interleaved) for architecture llama,
// no scaling key, the llama3 factors as rope_freqs.weight.
ModelArtifact Gguf(double freq_base, const std::vector<float>& rope_freqs) {
  ModelArtifact a;
  a.path = "llama-3.1-8b.gguf";
  a.kind = "gguf";
  a.architecture = "llama";
  a.plan = OneGroup(Rope(freq_base, 128, "interleaved"));
  a.context_length = 131072;
  a.settings = {{"rope_theta", fmt::format("{}", freq_base), "llama.rope.freq_base"},
                {"layout", "interleaved", "architecture llama (llama_model_rope_type: NORM)"},
                {"context_length", "131072", "llama.context_length"}};
  if (!rope_freqs.empty()) a.tensors.push_back(Tensor("rope_freqs.weight", "rope_freqs", rope_freqs));
  return a;
}

// The llama3 factors of theta 500000, dim 128, by the rule (float32, as
// convert_hf_to_gguf.py stores them).
std::vector<float> Llama3Factors() {
  std::vector<float> out;
  const double lo = 8192.0 / 1, hi = 8192.0 / 4;
  for (int i = 0; i < 64; ++i) {
    const double w = 2 * M_PI / std::pow(500000.0, -2.0 * i / 128);
    double f;
    if (w < hi) f = 1;
    else if (w > lo) f = 8;
    else {
      const double smooth = (8192.0 / w - 1) / (4 - 1);
      f = 1 / ((1 - smooth) / 8 + smooth);
    }
    out.push_back(static_cast<float>(f));
  }
  return out;
}

const Check* Find(const std::vector<Check>& cs, const std::string& name) {
  for (const auto& c : cs)
    if (c.name == name) return &c;
  return nullptr;
}

TEST(ModelCompare, FolderAgainstItsGgufPasses) {
  const auto checks = ComparePlans(Folder(Llama3(Rope(500000, 128))), Gguf(500000, Llama3Factors()));
  for (const auto& c : checks) EXPECT_TRUE(c.passed || c.skipped) << c.name << ": " << c.summary;
  const Check* f = Find(checks, "llama-3.1-8b.gguf rope_freqs.weight");
  ASSERT_NE(f, nullptr);
  EXPECT_LE(f->measured, 0x1p-22);
  // HF rotate_half against a llama GGUF's NORM: the converter permuted q/k.
  ASSERT_NE(Find(checks, "layout"), nullptr);
  EXPECT_TRUE(Find(checks, "layout")->passed);
}

TEST(ModelCompare, LostFreqBaseIsNamedWithBothKeys) {
  const auto checks = ComparePlans(Folder(Llama3(Rope(500000, 128))), Gguf(10000, Llama3Factors()));
  const Check* c = Find(checks, "rope_theta");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->passed);
  EXPECT_EQ(c->summary,
            "rope_theta: Llama-3.1-8B/config.json rope_theta = 500000, llama-3.1-8b.gguf llama.rope.freq_base = 10000");
  EXPECT_NEAR(c->measured, (500000.0 - 10000) / 500000, 1e-12);
}

TEST(ModelCompare, InvertedLlama3FactorsFail) {
  std::vector<float> inv = Llama3Factors();
  for (float& f : inv) f = 1 / f;
  const auto checks = ComparePlans(Folder(Llama3(Rope(500000, 128))), Gguf(500000, inv));
  const Check* c = Find(checks, "llama-3.1-8b.gguf rope_freqs.weight");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->passed);
  EXPECT_NE(c->summary.find("inverted"), std::string::npos) << c->summary;
}

TEST(ModelCompare, WrongRopeTypeForArchitecture) {
  // qwen2 is NEOX in llama.cpp (no q/k permutation): a NORM GGUF is wrong.
  ModelArtifact f = Folder(Rope(1e6, 128));
  f.architecture = "qwen2";
  ModelArtifact g = Gguf(1e6, {});
  g.architecture = "qwen2";
  const auto checks = ComparePlans(f, g);
  const Check* c = Find(checks, "layout");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->passed) << c->summary;
  // The same GGUF with NEOX passes.
  g.plan->groups[0].spec.layout = "half";
  EXPECT_TRUE(Find(ComparePlans(f, g), "layout")->passed);
}

TEST(ModelCompare, GlobalLayersMissingTheirFactor) {
  // Gemma 3: sliding layers base 10000 unscaled, full layers base 1e6 linear x8.
  auto gemma = [](bool scaled) {
    ModelArtifact a;
    a.path = scaled ? "gemma-3-4b" : "gemma-3-4b.gguf";
    a.kind = scaled ? "hf-folder" : "gguf";
    a.architecture = "gemma3";
    PePlan p;
    SchemeSpec full = Rope(1e6, 256), local = Rope(10000, 256);
    if (scaled) full.rope_scaling = "linear", full.factor = 8;
    for (int i = 0; i < 12; ++i) {
      PlanLayer l;
      l.layer_type = (i + 1) % 6 ? "sliding_attention" : "full_attention";
      l.group = AddPlanGroup(&p, l.layer_type, l.layer_type == "full_attention" ? full : local);
      p.layers.push_back(l);
    }
    a.plan = p;
    return a;
  };
  const auto checks = ComparePlans(gemma(true), gemma(false));
  const Check* c = Find(checks, "full_attention: rope_scaling.type");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->passed);
  EXPECT_TRUE(Find(checks, "sliding_attention: rope_scaling.type")->passed);
  EXPECT_TRUE(Find(checks, "sliding_attention: rope_theta")->passed);
}

TEST(ModelCompare, NopeLayersAndContextLength) {
  ModelArtifact a = Folder(Rope(500000, 128)), b = Folder(Rope(500000, 128));
  b.path = "other";
  b.plan->layers[3].group = PlanLayer::kNoPE;
  b.context_length = 8192;
  const auto checks = ComparePlans(a, b);
  EXPECT_FALSE(Find(checks, "nope_layers")->passed);
  EXPECT_FALSE(Find(checks, "context_length")->passed);
  EXPECT_EQ(Find(checks, "nope_layers")->measured, 1);
}

TEST(ModelCompare, TensorChecksUseTheExactTables) {
  // inv_freq of theta 10000, dim 8 in float32 (correctly rounded: exact values
  // 1, 0.1, 0.01, 0.001): passes; the same frequencies for dim 16 fail.
  ModelArtifact a = Folder(Rope(10000, 8));
  a.tensors.push_back(Tensor("model.rotary_emb.inv_freq", "inv_freq", {1.0f, 0.1f, 0.01f, 0.001f}));
  auto checks = CheckArtifactTensors(a);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_TRUE(checks[0].passed) << checks[0].summary;
  a.plan = OneGroup(Rope(10000, 16));
  checks = CheckArtifactTensors(a);
  EXPECT_FALSE(checks[0].passed) << checks[0].summary;
}

TEST(ModelCompare, Switches) {
  SchemeSpec s = Rope(10000, 96);
  s.rope_scaling = "yarn";
  s.factor = 4;
  s.original_max_position_embeddings = 32768;
  s.max_position_embeddings = 32768;
  const auto sw = PlanSwitches(OneGroup(s));
  ASSERT_EQ(sw.size(), 2u);  // hf (factor 4) and hf-4.45 (factor 32768/32768 = 1) differ
  EXPECT_EQ(sw[0].semantics, "hf");
  EXPECT_EQ(sw[1].semantics, "hf-4.45");
  EXPECT_EQ(sw[1].length, 32768);
}

}  // namespace
}  // namespace pe
