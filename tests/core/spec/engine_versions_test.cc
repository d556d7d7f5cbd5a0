// The engine-version table (core/spec/engine_versions.h) against the lists
// that must agree with it: the parameter table's keys, the names
// --semantics accepts, and RopeSpecKey's fields.
#include "core/spec/engine_versions.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/base/error.h"
#include "core/spec/param_table.h"
#include "core/spec/pe_plan.h"

namespace pe {
namespace {

std::vector<std::string> Split(const char* list) {
  std::vector<std::string> out;
  std::string cur;
  for (const char* p = list; *p; ++p) {
    if (*p == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += *p;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

TEST(EngineVersions, EveryRuleNamesAKnownVersionAndParameterKeys) {
  std::set<std::string> names;
  for (const EngineVersion& v : EngineVersions()) EXPECT_TRUE(names.insert(v.name).second) << v.name;
  std::set<std::pair<std::string, std::string>> seen;
  for (const ScalingRule& r : ScalingRules()) {
    EXPECT_TRUE(names.count(r.version)) << r.version;
    EXPECT_TRUE(seen.insert({r.version, r.rope_type}).second) << r.version << " " << r.rope_type << " twice";
    // Every key a rule reads or drops is a parameter of the table (a flag,
    // an inline-spec key, a metadata key): one spelling everywhere.
    for (const char* list : {r.reads, r.ignores})
      for (const std::string& k : Split(list)) EXPECT_NE(FindParamRow(k), nullptr) << r.version << " " << r.rope_type << ": " << k;
  }
  for (const EngineOnlyType& t : EngineOnlyTypes()) {
    bool engine = false;
    for (const EngineVersion& v : EngineVersions()) engine = engine || std::string(v.engine) == t.engine;
    EXPECT_TRUE(engine) << t.engine;
  }
}

TEST(EngineVersions, NamesAndAliases) {
  EXPECT_STREQ(FindEngineVersion("vllm").name, "vllm@2026-09");  // the newest
  EXPECT_STREQ(FindEngineVersion("vllm@2026-05").name, "vllm@2026-05");
  EXPECT_STREQ(FindEngineVersion("llama.cpp@v0.4.0").name, "llama.cpp");
  EXPECT_STREQ(FindEngineVersion("").name, "hf");
  EXPECT_EQ(FindEngineVersion("mlx-lm").family, EngineFamily::kMlxLm);
  try {
    FindEngineVersion("vllm@2025-01");
    ADD_FAILURE() << "an unknown version accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--semantics"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("vllm@2026-09"), std::string::npos) << e.what();
  }
  // The --semantics help lists every canonical name.
  const ParamRow* row = FindParamRow("semantics");
  ASSERT_NE(row, nullptr);
  for (const EngineVersion& v : EngineVersions())
    EXPECT_NE(std::string(row->help).find(v.name), std::string::npos) << v.name << " missing from --semantics' help";
}

TEST(EngineVersions, RopeSpecKeyCoversEveryScalingField) {
  // The six fields RopeSpecKey once omitted, and the one this table added.
  SchemeSpec base;
  const std::string key = RopeSpecKey(base);
  const auto differs = [&](auto set, const char* what) {
    SchemeSpec s = base;
    set(s);
    EXPECT_NE(RopeSpecKey(s), key) << what;
  };
  differs([](SchemeSpec& s) { s.alpha = 1000; }, "alpha");
  differs([](SchemeSpec& s) { s.rope_ratio = 500; }, "rope_ratio");
  differs([](SchemeSpec& s) { s.mixed_b = 0.625; }, "mixed_b");
  differs([](SchemeSpec& s) { s.short_mscale = 1.5; }, "short_mscale");
  differs([](SchemeSpec& s) { s.long_mscale = 1.1; }, "long_mscale");
  differs([](SchemeSpec& s) { s.max_model_len = 4096; }, "max_model_len");
  differs([](SchemeSpec& s) { s.max_trained_positions = 4096; }, "max_trained_positions");
  differs([](SchemeSpec& s) { s.semantics = "vllm@2026-05"; }, "semantics");
  // A request's rows and file are not the encoding.
  SchemeSpec s = base;
  s.max_len = 77;
  s.start = 5;
  EXPECT_EQ(RopeSpecKey(s), key);
}

}  // namespace
}  // namespace pe
