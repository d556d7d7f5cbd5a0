// Parameter domains (docs/schemes.md, "Parameter domains"): every numeric
// parameter, fed 0, -1, NaN, ±inf and its domain's edges (and one step
// beyond each), through every way in that a unit test reaches — the API
// keys (pe::Spec, as Python's keyword arguments), inline specs, and the
// CLI's flags (the built binary, PE_BIN) — is refused naming its flag
// exactly when the value is outside the declared domain. The expected
// verdict is computed here from the declared bounds, independently of
// CheckParamDomains; the list of values that were once silently
// replaced by a default is checked value by value through the CLI.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <pe/table.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <string>
#include <vector>

#include "core/spec/params.h"
#include "core/base/error.h"
#include "core/schemes/inline_spec.h"
#include "core/schemes/registry.h"

namespace pe {
namespace {

struct Probe {
  std::string text;
  double value;  // NaN for "nan"
};

std::string Num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

// The values each parameter is fed: the four, the domain's edges,
// a step beyond each, and -inf.
std::vector<Probe> Probes(const SpecParamDomain& d) {
  std::vector<double> v = {0, -1, NAN, HUGE_VAL, -HUGE_VAL};
  const double step = d.integer ? 1 : 0;
  auto beyond = [&](double x, double dir) { return d.integer ? x + dir * step : std::nextafter(x, dir * HUGE_VAL); };
  if (std::isfinite(d.lo)) {
    v.push_back(d.lo);
    v.push_back(beyond(d.lo, -1));
    v.push_back(beyond(d.lo, +1));
  }
  if (std::isfinite(d.hi)) {
    v.push_back(d.hi);
    v.push_back(beyond(d.hi, +1));
    v.push_back(beyond(d.hi, -1));
  }
  std::vector<Probe> out;
  for (double x : v) {
    if (d.integer && !std::isfinite(x)) continue;  // not an integer: the parser's refusal, tested below
    std::string t = d.integer ? fmt::format("{}", static_cast<long long>(x)) : Num(x);
    if (!d.integer && std::isfinite(x)) t = fmt::format("{:.17g}", x);
    out.push_back({t, x});
  }
  return out;
}

// The declared domain, read literally.
bool Inside(const SpecParamDomain& d, double v) {
  if (!std::isfinite(v)) return false;
  if (d.lo_open ? !(v > d.lo) : !(v >= d.lo)) return false;
  return d.hi_open ? v < d.hi : v <= d.hi;
}

std::string FlagOf(const std::string& key) {
  std::string f = "--" + key;
  for (char& c : f)
    if (c == '_') c = '-';
  return f;
}

// A spec that passes the common checks, so that the domain is what decides.
SchemeSpec Minimal() {
  SchemeSpec s;
  s.scheme = "sinusoidal";
  s.d_model = 8;
  s.max_len = 4;
  return s;
}

TEST(ParamDomain, EveryNumericParameterHasADomainAndAFlag) {
  const auto domains = SpecParamDomains();
  EXPECT_GE(domains.size(), 45u);
  for (const auto& d : domains) {
    EXPECT_FALSE(d.rule.empty()) << d.key;
    EXPECT_EQ(CanonicalSpecKey(d.key), d.key);
  }
}

// The API's keys (pe::Spec::Set, which Python's keyword arguments become).
TEST(ParamDomain, ApiKeysRefuseExactlyOutsideTheDomain) {
  int checked = 0;
  for (const auto& d : SpecParamDomains()) {
    for (const Probe& p : Probes(d)) {
      SchemeSpec s = Minimal();
      SetSpecParam(s, d.key, p.text);
      const bool inside = Inside(d, p.value);
      std::string err;
      try {
        CheckParamDomains(s);
      } catch (const Error& e) {
        err = e.what();
      }
      EXPECT_EQ(err.empty(), inside) << d.key << "=" << p.text << ": " << err;
      if (!inside) {
        EXPECT_EQ(err.rfind(FlagOf(d.key) + ": ", 0), 0u) << err;
        EXPECT_NE(err.find(d.rule), std::string::npos) << err;
        // The whole way in: GenerateTable refuses too, naming the flag.
        Spec api("sinusoidal");
        api.Set("d_model", "8").Set("max_len", "4").Set(d.key, p.text);
        try {
          (void)GenerateTable(api);
          ADD_FAILURE() << "GenerateTable accepted " << d.key << "=" << p.text;
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find(FlagOf(d.key)), std::string::npos) << e.what();
          EXPECT_EQ(e.kind(), ErrorKind::kUsage) << e.what();
        }
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 300);
}

TEST(ParamDomain, IntegerKeysRefuseNonIntegers) {
  for (const auto& d : SpecParamDomains()) {
    if (!d.integer) continue;
    for (const char* v : {"nan", "inf", "1.5"}) {
      SchemeSpec s = Minimal();
      try {
        SetSpecParam(s, d.key, v);
        ADD_FAILURE() << d.key << "=" << v;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(FlagOf(d.key)), std::string::npos) << e.what();
      }
    }
  }
}

// Inline specs: "SCHEME:key=value,..." on a scheme that takes the key.
TEST(ParamDomain, InlineSpecsRefuseOutsideTheDomain) {
  int checked = 0;
  for (const auto& d : SpecParamDomains()) {
    const SchemeInfo* scheme = nullptr;
    for (const auto& info : Schemes())
      if (SchemeTakesFlag(info, FlagOf(d.key))) {
        scheme = &info;
        break;
      }
    if (!scheme) continue;  // a key no scheme lists (an alias): the API test covers it
    for (const Probe& p : Probes(d)) {
      const std::string text = fmt::format("{}:{}={}", scheme->name, d.key, p.text);
      std::string err;
      try {
        auto parsed = ParseInlineSpecText(text);
        ASSERT_TRUE(parsed.has_value()) << text;
        CheckParamDomains(parsed->spec);
      } catch (const Error& e) {
        err = e.what();
      }
      EXPECT_EQ(err.empty(), Inside(d, p.value)) << text << ": " << err;
      if (!err.empty()) EXPECT_NE(err.find(FlagOf(d.key)), std::string::npos) << err;
      ++checked;
    }
  }
  EXPECT_GE(checked, 300);
}

// The CLI, through the built binary: exit 2 and "--flag: value: rule" when
// outside; never that line when inside (other rules of the scheme may still
// refuse the combination).
// Where the CLI cases write (the tables of accepted values are small).
std::string Out() {
  static const std::string dir = [] {
    char t[] = "/tmp/pe-param-domain-XXXXXX";
    return std::string(::mkdtemp(t));
  }();
  return dir + "/t.safetensors";
}

struct PeRun {
  int code;
  std::string err;
};
PeRun RunPe(const std::string& args) {
  const char* bin = std::getenv("PE_BIN");
  const std::string cmd = fmt::format("'{}' {} 2>&1 >/dev/null", bin, args);
  FILE* f = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, f)) out += buf;
  const int st = ::pclose(f);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

TEST(ParamDomain, CliFlagsRefuseOutsideTheDomain) {
  if (!std::getenv("PE_BIN")) GTEST_SKIP() << "PE_BIN unset (ctest sets it)";
  int checked = 0;
  for (const auto& d : SpecParamDomains()) {
    const SchemeInfo* scheme = nullptr;
    for (const auto& info : Schemes())
      if (SchemeTakesFlag(info, FlagOf(d.key))) {
        scheme = &info;
        break;
      }
    if (!scheme) continue;
    // The other common flags the scheme takes, at valid values (the domain is checked first).
    std::string common;
    for (const char* f : {"--d-model", "--max-len"})
      if (FlagOf(d.key) != f && SchemeTakesFlag(*scheme, f)) common += fmt::format(" {} 8", f);
    for (const Probe& p : Probes(d)) {
      const PeRun r = RunPe(fmt::format("generate --scheme {}{} '{}={}' -o {}", scheme->name, common, FlagOf(d.key),
                                        p.text, Out()));
      const std::string line = fmt::format("{}: {}", FlagOf(d.key), p.text);
      if (Inside(d, p.value)) {
        EXPECT_EQ(r.err.find(d.rule), std::string::npos) << line << ": " << r.err;
      } else {
        EXPECT_EQ(r.code, 2) << line << ": " << r.err;
        EXPECT_NE(r.err.find("pe: error: " + FlagOf(d.key)), std::string::npos) << line << ": " << r.err;
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 200);
}

// The list: each once produced exit 0 with the default's table.
TEST(ParamDomain, ValuesOnceSilentlyDroppedAreRefused) {
  if (!std::getenv("PE_BIN")) GTEST_SKIP() << "PE_BIN unset (ctest sets it)";
  const std::string rope = "generate --scheme rope --head-dim 8 --max-len 16 -o " + Out() + " ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {rope + "--attention-factor 0", "--attention-factor"},
      {rope + "--attention-factor -1", "--attention-factor"},
      {rope + "--attention-factor nan", "--attention-factor"},
      {rope + "--rope-ratio -1", "--rope-ratio"},
      {rope + "--rotary-dim 0", "--rotary-dim"},
      {rope + "--rotary-dim -2", "--rotary-dim"},
      {rope + "--rope-scaling llama3 --factor 0", "--factor"},
      {rope + "--rope-scaling llama3 --factor -2", "--factor"},
      {rope + "--rope-scaling llama3 --factor nan", "--factor"},
      {rope + "--rope-scaling llama3 --original-max-position-embeddings 0", "--original-max-position-embeddings"},
      {rope + "--rope-scaling llama3 --original-max-position-embeddings -8192", "--original-max-position-embeddings"},
      {rope + "--rope-scaling yarn --factor 4 --max-position-embeddings 64 --mscale -1", "--mscale"},
      {rope + "--rope-scaling yarn --factor 4 --max-position-embeddings 64 --mscale-all-dim -1", "--mscale-all-dim"},
      {rope + "--rope-scaling yarn --factor 4 --max-position-embeddings -5", "--max-position-embeddings"},
      {rope + "--rope-scaling yarn --factor 4 --max-position-embeddings 64 --attention-factor -2", "--attention-factor"},
      {rope + "--rope-scaling yarn --factor 4 --max-position-embeddings 64 --semantics vllm --attn-factor -1",
       "--attn-factor"},
      {rope + "--rope-scaling dynamic --factor 2 --max-position-embeddings 8 --seq-len 0", "--seq-len"},
      {rope + "--rope-scaling dynamic --factor 2 --max-position-embeddings 8 --seq-len -5", "--seq-len"},
      {rope + "--rope-scaling longrope --short-factor 1,1 --long-factor 2,2 --original-max-position-embeddings 8 "
              "--seq-len 0",
       "--seq-len"},
      {rope + "--rope-scaling longrope --short-factor 1,1 --long-factor 2,2 --original-max-position-embeddings 8 "
              "--attention-factor -1",
       "--attention-factor"},
      {rope + "--rope-scaling longrope --short-factor 1,1 --long-factor 2,2 --original-max-position-embeddings 8 "
              "--max-position-embeddings 32 --semantics vllm --short-mscale -1",
       "--short-mscale"},
      {rope + "--rope-scaling longrope --short-factor 1,1 --long-factor 2,2 --original-max-position-embeddings 8 "
              "--max-position-embeddings 32 --semantics vllm --long-mscale -1",
       "--long-mscale"},
      {rope + "--rope-scaling longrope --short-factor 1,1 --long-factor 2,2 --original-max-position-embeddings 8 "
              "--max-position-embeddings 32 --semantics vllm --max-model-len -1",
       "--max-model-len"},
      {rope + "--rope-scaling ntk --factor 2 --semantics vllm --mixed-b -1", "--mixed-b"},
      {rope + "--rope-scaling proportional --factor 0", "--factor"},
      {rope + "--rope-scaling proportional --factor -1", "--factor"},
      {"generate --scheme rope-plan --head-dim 8 --max-len 4 --num-layers 2 --global-every 2 --local-base -1 -o " +
           Out(),
       "--local-base"},
      {"generate --scheme rope-plan --head-dim 8 --max-len 4 --num-layers 2 --global-every -1 -o " + Out(),
       "--global-every"},
      {"generate --scheme relative-index --max-len 4 --max-position-embeddings -5 -o " + Out(),
       "--max-position-embeddings"},
      {"generate --scheme relative-index --max-len 4 --key-len -2 -o " + Out(), "--key-len"},
      {"generate --scheme sandwich --d-model 8 --max-len 4 --heads 0 -o " + Out(), "--heads"},
      {"generate --scheme kerple --r1 1 --r2 1 --max-len 4 --heads 0 -o " + Out(), "--heads"},
      {"generate --scheme sandwich --d-model 8 --max-len 4 --key-len -1 -o " + Out(), "--key-len"},
      // The same zero that other flags refused: now one rule for all.
      {rope + "--rope-scaling yarn --factor 4 --max-position-embeddings 64 --semantics vllm --attn-factor 0",
       "--attn-factor"},
      {rope + "--rope-scaling ntk --factor 2 --semantics vllm --mixed-b 0", "--mixed-b"},
      {rope + "--rope-scaling linear --factor 0", "--factor"},
  };
  for (const auto& [args, flag] : cases) {
    const PeRun r = RunPe(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find("pe: error: " + flag + ":"), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
}

}  // namespace
}  // namespace pe
