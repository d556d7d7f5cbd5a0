// pe/model.h: the public reads of model artifacts. Expected values come from
// the published configs in tests/data/models (SOURCES.md): Llama 3.1 8B
// (32 layers, 32 heads x 128 = 4096, rope_theta 500000, llama3 factor 8 /
// original 8192, context 131072), Gemma 3 4B (34 layers, sliding window
// pattern 6 and local base 10000 as Gemma3TextConfig's defaults, global
// theta 1e6 with linear factor 8), BLOOM 560m (16 heads; ALiBi slopes
// 2^(-8 i / 16), Press et al.).
#include <gtest/gtest.h>
#include <pe/model.h>

#include <cmath>
#include <string>

namespace {

std::string Model(const std::string& name) { return std::string(PE_SOURCE_DIR) + "/tests/data/models/" + name; }

TEST(ModelApi, LlamaPlanFromItsConfig) {
  ASSERT_TRUE(pe::IsModelArtifact(Model("llama-3.1-8b")));
  const pe::ModelInspection m = pe::InspectModel(Model("llama-3.1-8b"));
  EXPECT_EQ(m.kind, "hf-folder");
  EXPECT_EQ(m.architecture, "llama");
  EXPECT_EQ(m.context_length, 131072);
  ASSERT_TRUE(m.plan.has_value());
  EXPECT_EQ(m.plan->num_layers, 32);
  EXPECT_TRUE(m.plan->nope_layers.empty());
  ASSERT_EQ(m.plan->groups.size(), 1u);
  const pe::ModelRopeGroup& g = m.plan->groups[0];
  EXPECT_EQ(g.layers.size(), 32u);
  EXPECT_EQ(g.rope_theta, 500000.0);
  EXPECT_EQ(g.head_dim, 128);
  EXPECT_EQ(g.rotary_dim, 128);
  EXPECT_EQ(g.scaling, "llama3");
  EXPECT_NE(g.scaling_text.find("factor 8"), std::string::npos) << g.scaling_text;
  EXPECT_NE(g.scaling_text.find("original 8192"), std::string::npos) << g.scaling_text;
  EXPECT_TRUE(m.tensors.empty());  // a config alone stores no tensor
  EXPECT_NE(m.json.find("\"schema\": \"pe.inspect-model/1\""), std::string::npos);
  const std::string text = pe::ModelInspectText(m);
  EXPECT_EQ(text.rfind("model " + Model("llama-3.1-8b") + ": hf-folder, architecture llama\n", 0), 0u) << text;
}

TEST(ModelApi, GemmaSlidingAndGlobalGroups) {
  const pe::ModelInspection m = pe::InspectModel(Model("gemma-3-4b"));
  ASSERT_TRUE(m.plan.has_value());
  EXPECT_EQ(m.plan->num_layers, 34);
  ASSERT_EQ(m.plan->groups.size(), 2u);
  const pe::ModelRopeGroup& local = m.plan->groups[0];   // layer 0 is a sliding layer
  const pe::ModelRopeGroup& global = m.plan->groups[1];
  EXPECT_EQ(local.rope_theta, 10000.0);
  EXPECT_EQ(local.scaling, "none");
  EXPECT_EQ(global.rope_theta, 1e6);
  EXPECT_EQ(global.scaling, "linear");
  EXPECT_EQ(global.layers, (std::vector<std::int64_t>{5, 11, 17, 23, 29}));  // every 6th layer
  EXPECT_EQ(local.layers.size(), 29u);
  EXPECT_EQ(local.head_dim, 256);
}

TEST(ModelApi, BloomAlibiSlopes) {
  const pe::ModelInspection m = pe::InspectModel(Model("bloom-560m"));
  EXPECT_FALSE(m.plan.has_value());
  ASSERT_EQ(m.alibi_slopes.size(), 16u);
  // pow(2^(-1/2), i + 1) as BLOOM computes it: within a few ulps of 2^(-(i + 1)/2).
  for (int i = 0; i < 16; ++i) EXPECT_NEAR(m.alibi_slopes[i], std::exp2(-0.5 * (i + 1)), 1e-14 * std::exp2(-0.5 * (i + 1))) << i;
}

TEST(ModelApi, VerifyOneConfigComparesNothing) {
  pe::ModelVerifyResult v = pe::VerifyModels({{Model("llama-3.1-8b")}});
  EXPECT_FALSE(v.report.passed);  // no tensor stored, no second plan
  EXPECT_FALSE(v.report.nothing_compared.empty());
  ASSERT_EQ(v.models.size(), 1u);
  EXPECT_EQ(v.models[0], Model("llama-3.1-8b") + " (hf-folder, llama)");
  const std::string text = pe::ModelVerifyText(v);
  EXPECT_EQ(text.rfind("verify model " + v.models[0] + "\n", 0), 0u) << text;
  EXPECT_NE(text.find("result: FAIL (nothing was compared"), std::string::npos) << text;
  EXPECT_TRUE(pe::VerifyModels({{Model("llama-3.1-8b")}, true, true}).report.passed);  // allow_empty
}

TEST(ModelApi, TwoPlansCompared) {
  // The same config twice: every value both state agrees.
  const pe::ModelVerifyResult v = pe::VerifyModels({{Model("llama-3.1-8b"), Model("llama-3.1-8b")}});
  EXPECT_TRUE(v.report.passed);
  bool theta = false;
  for (const pe::CheckResult& c : v.report.checks) theta |= c.name.find("rope_theta") != std::string::npos;
  EXPECT_TRUE(theta);
  // Mistral states theta 10000: the comparison fails on it.
  const pe::ModelVerifyResult w = pe::VerifyModels({{Model("llama-3.1-8b"), Model("mistral-7b")}});
  EXPECT_FALSE(w.report.passed);
}

TEST(ModelApi, Errors) {
  try {
    pe::VerifyModels({{Model("llama-3.1-8b"), Model("mistral-7b"), Model("qwen2.5-7b")}});
    FAIL() << "three models accepted";
  } catch (const pe::Error& e) {
    EXPECT_EQ(e.kind(), pe::ErrorKind::kUsage);
    EXPECT_EQ(std::string(e.what()), "--model: given 3 times; compare two artifacts at a time");
  }
  EXPECT_THROW(pe::VerifyModels({}), pe::Error);
  EXPECT_THROW(pe::InspectModel(Model("no-such-model.gguf")), pe::Error);
  EXPECT_FALSE(pe::IsModelArtifact(Model("no-such-model.npy")));
}

}  // namespace
