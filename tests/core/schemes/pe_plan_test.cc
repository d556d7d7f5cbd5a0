// The plan builders of core/spec/pe_plan.h: layer maps written out by hand
// from the models' rules (Gemma 3's (i+1) % 6, Llama 4 / SmolLM3's
// (i+1) % 4 NoPE, Cohere2's NoPE full layers) and the sharing of tensors by
// layers with the same spec. The tables themselves are checked against the
// models' code in tests/clients/test_rope_plan.py.
#include "core/schemes/rope_plan.h"

#include <gtest/gtest.h>

#include "core/base/error.h"

namespace pe {
namespace {

SchemeSpec Flags() {
  SchemeSpec s;
  s.scheme = "rope-plan";
  s.d_model = 64;
  s.max_len = 8;
  return s;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
  return out;
}

TEST(PePlan, GlobalEverySixIsGemma3) {
  SchemeSpec s = Flags();
  s.num_layers = 12;
  s.global_every = 6;
  s.base = 1e6;
  s.local_base = 1e4;
  s.rope_scaling = "linear";
  s.factor = 8;
  const PePlan p = PlanFromFlags(s);
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.groups[0].name, "sliding_attention");
  EXPECT_EQ(p.groups[0].spec.base, 1e4);
  EXPECT_EQ(p.groups[0].spec.rope_scaling, "none");
  EXPECT_EQ(p.groups[1].name, "full_attention");
  EXPECT_EQ(p.groups[1].spec.base, 1e6);
  EXPECT_EQ(p.groups[1].spec.rope_scaling, "linear");
  // Layers 5 and 11 ((i+1) % 6 == 0) are full.
  EXPECT_EQ(Join(p.LayerPlanNames()),
            "sliding_attention,sliding_attention,sliding_attention,sliding_attention,sliding_attention,full_attention,"
            "sliding_attention,sliding_attention,sliding_attention,sliding_attention,sliding_attention,full_attention");
}

TEST(PePlan, LayersWithTheSameSpecShareOneGroup) {
  SchemeSpec s = Flags();
  s.num_layers = 4;
  s.global_every = 2;
  s.local_base = s.base;  // the same base and no scaling: one group for both types
  const PePlan p = PlanFromFlags(s);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].name, "sliding_attention");  // named after the first layer type using it
  EXPECT_EQ(Join(p.LayerPlanNames()), "sliding_attention,sliding_attention,sliding_attention,sliding_attention");
  const TableSet set = PlanTableSet(p, s);
  EXPECT_EQ(set.Names(), "sliding_attention/cos, sliding_attention/sin, sliding_attention/inv_freq");
}

TEST(PePlan, NoRopeIntervalFourWithTemperatureIsLlama4) {
  SchemeSpec s = Flags();
  s.num_layers = 8;
  s.no_rope_interval = 4;
  s.attn_temperature = true;
  const PePlan p = PlanFromFlags(s);
  EXPECT_EQ(Join(p.LayerPlanNames()),
            "full_attention,full_attention,full_attention,nope,full_attention,full_attention,full_attention,nope");
  for (std::size_t i = 0; i < p.layers.size(); ++i) EXPECT_EQ(p.layers[i].temperature, (i + 1) % 4 == 0) << i;
  const TableSet set = PlanTableSet(p, s);
  EXPECT_EQ(set.Names(), "full_attention/cos, full_attention/sin, full_attention/inv_freq, nope/attn_scale");
}

TEST(PePlan, NoRopeLayersListAndNopeTypes) {
  SchemeSpec s = Flags();
  s.layer_types = "sliding_attention,sliding_attention,sliding_attention,full_attention";
  s.nope_types = "full_attention";  // Cohere2
  EXPECT_EQ(Join(PlanFromFlags(s).LayerPlanNames()), "sliding_attention,sliding_attention,sliding_attention,nope");
  SchemeSpec t = Flags();
  t.num_layers = 3;
  t.no_rope_layers = "1,0,1";  // HF's naming: 1 = RoPE
  EXPECT_EQ(Join(PlanFromFlags(t).LayerPlanNames()), "full_attention,nope,full_attention");
}

TEST(PePlan, ErrorsNameTheFlag) {
  SchemeSpec s = Flags();
  s.layer_types = "full_attention,global_attention";
  try {
    PlanFromFlags(s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("unknown layer type 'global_attention'"), std::string::npos) << e.what();
  }
  SchemeSpec t = Flags();
  t.num_layers = 2;
  t.no_rope_layers = "1,0,1";
  EXPECT_THROW(PlanFromFlags(t), Error);
  SchemeSpec u = Flags();
  u.num_layers = 2;
  u.no_rope_layers = "0,0";  // every layer NoPE, no temperature: no tensor
  EXPECT_THROW(PlanTableSet(PlanFromFlags(u), u), Error);
}

}  // namespace
}  // namespace pe
