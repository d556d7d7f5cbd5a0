// The registry of schemes (core/schemes/registry.h).
#include "core/schemes/registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/spec/params.h"
#include "core/base/error.h"
#include "core/numerics/exact_sincos.h"
#include "core/spec/pe_plan.h"
#include "core/spec/param_table.h"
#include "core/base/closest_name.h"
#include "core/schemes/rope_plan.h"
#include "core/schemes/alibi.h"
#include "core/schemes/learned.h"
#include "core/schemes/sincos2d.h"
#include "core/schemes/t5_bucket.h"
#include "core/schemes/relative.h"
#include "core/schemes/mrope.h"
#include "core/schemes/vision_rope.h"
#include "core/schemes/rope.h"
#include "core/schemes/sinusoid_presets.h"
#include "core/schemes/sinusoidal.h"

namespace pe {

const std::vector<SchemeInfo>& Schemes() {
  static const std::vector<SchemeInfo> kSchemes = [] {
    std::vector<SchemeInfo> all = {
        SinusoidalSchemeInfo(),
        Tensor2TensorSchemeInfo(),
        FairseqSchemeInfo(),
        MarianSchemeInfo(),
        SinOnlySchemeInfo(),
        LearnedSchemeInfo(),
        RopeSchemeInfo(),
        RopePlanSchemeInfo(),
        XposSchemeInfo(),
        AlibiSchemeInfo(),
        SinCos2dSchemeInfo(),
        T5BucketSchemeInfo(),
        RelativeIndexSchemeInfo(),
        DebertaBucketSchemeInfo(),
        TransformerXlSchemeInfo(),
        KerpleSchemeInfo(),
        SandwichSchemeInfo(),
        MropeSchemeInfo(),
        VisionRopeSchemeInfo(),
    };
    // Each scheme's parameters, from the parameter table's rows.
    for (SchemeInfo& s : all) s.params = SchemeListing(s.name);
    return all;
  }();
  return kSchemes;
}

const SchemeInfo& FindScheme(std::string_view name) {
  std::vector<std::string_view> names;
  // Case-insensitive: --scheme RoPE is rope.
  auto same = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
  };
  for (const auto& s : Schemes()) {
    if (same(s.name, name)) return s;
    names.push_back(s.name);
  }
  std::string hint = ClosestName(name, names);
  std::string known;
  for (auto n : names) known += (known.empty() ? "" : ", ") + std::string(n);
  ThrowUsage(fmt::format("--scheme '{}'", name),
             hint.empty() ? fmt::format("unknown scheme (known: {})", known)
                          : fmt::format("unknown scheme; did you mean '{}'?", hint));
}

namespace {

// An error about a parameter that came from a file's metadata names the
// file and key, not a flag: "--sigma: why" becomes "'t.h5': metadata
// sigma=1e+308: why" (an input error).
[[noreturn]] void RethrowNamed(const SchemeSpec& spec, const Error& e) {
  const std::string msg = e.what();
  const std::size_t colon = msg.find(": ");
  if (colon != std::string::npos && e.kind() == ErrorKind::kUsage) {
    const std::string what = msg.substr(0, colon);
    const std::string flag = what.substr(0, what.find(' '));
    if (const auto it = spec.origin.find(flag); it != spec.origin.end())
      throw Error(ErrorKind::kInput, it->second + msg.substr(colon));
  }
  throw e;
}

// A table whose angles leave the proved domain (AngleDomainError from the
// sinusoid sources): named by the parameter that sets the frequencies.
[[noreturn]] void RethrowDomain(const SchemeSpec& spec, const AngleDomainError& e) {
  const bool t2t = spec.scheme == "tensor2tensor";
  const std::string flag = t2t ? "--min-timescale" : "--base";
  const double value = t2t ? spec.min_timescale : spec.base;
  const std::string why = fmt::format(
      "with positions up to {} makes angles up to {:.3g} rad; pe guarantees values for angles up to 2^50 "
      "(about 1.13e+15 rad; see docs/numerics.md, \"Domain\")",
      e.max_pos(), e.max_angle());
  if (const auto it = spec.origin.find(flag); it != spec.origin.end())
    throw Error(ErrorKind::kInput, fmt::format("{}: {}", it->second, why));
  throw Error(ErrorKind::kUsage, fmt::format("{}: {:.3g} {}", flag, value, why));
}

// The checks every scheme shares, then the scheme's own.
const SchemeInfo& ValidateSpec(const SchemeSpec& spec) {
  const SchemeInfo& info = FindScheme(spec.scheme);
  CheckParamDomains(spec);  // every numeric parameter against its declared domain
  // 0 is "not given" (the CLI refuses an explicit 0 as outside the flag's
  // domain): say what is missing, not that 0 is too small.
  if (info.needs_d_model && spec.d_model == 0)
    ThrowUsage("--d-model", fmt::format("not given: scheme '{}' needs the number of columns (e.g. --d-model 512)",
                                        spec.scheme));
  if (info.needs_max_len && spec.max_len == 0)
    ThrowUsage("--max-len", fmt::format("not given: scheme '{}' needs the number of rows, the positions 0..N-1 "
                                        "(e.g. --max-len 4096)",
                                        spec.scheme));
  if (spec.d_model < 0) ThrowUsage("--d-model", fmt::format("must be at least 1, got {}", spec.d_model));
  if (spec.max_len < 0) ThrowUsage("--max-len", fmt::format("must be at least 1, got {}", spec.max_len));
  if (info.needs_d_model && info.needs_max_len) CheckedTableBytes(spec.max_len, spec.d_model, spec.dtype);
  // After the size ceiling (a table too big to exist is reported as such).
  if (spec.d_model > kMaxWidth) {
    const bool head = spec.scheme == "rope" || spec.scheme == "xpos";
    ThrowUsage(ParamName(spec, head ? "--head-dim" : "--d-model"),
               fmt::format("{} columns is above pe's maximum width of {} (2^20; see docs/numerics.md, \"Memory\")",
                           spec.d_model, kMaxWidth));
  }
  if (spec.start < -kMaxExactPosition || spec.start > kMaxExactPosition ||
      spec.max_len > kMaxExactPosition - spec.start + 1) {
    ThrowUsage("--start/--max-len",
               fmt::format("positions must stay within ±2^40 ({}), where pe's "
                           "exactness bounds are proved",
                           kMaxExactPosition));
  }
  if (!std::isfinite(spec.base) || spec.base <= 0)
    ThrowUsage("--base", fmt::format("must be a finite number above 0, got {}", spec.base));
  if (!spec.tensor.empty() && !info.tensors.empty() &&
      std::find(info.tensors.begin(), info.tensors.end(), spec.tensor) == info.tensors.end()) {
    std::string names;
    for (auto n : info.tensors) names += (names.empty() ? "" : ", ") + std::string(n);
    ThrowUsage(fmt::format("--tensor '{}'", spec.tensor),
               fmt::format("scheme '{}' has no such tensor (it has: {})", spec.scheme, names));
  }
  if (info.validate) info.validate(spec);
  return info;
}

}  // namespace

std::unique_ptr<RowSource> MakeGenerator(const SchemeSpec& spec) {
  try {
    const SchemeInfo& info = ValidateSpec(spec);
    if (info.make_set) {
      TableSet set = info.make_set(spec);
      if (spec.tensor.empty() && info.tensors.empty())  // rope-plan: tensor names depend on the plan
        return set.Take(std::string(set.tensors.front()->info().name));
      return set.Take(spec.tensor.empty() ? info.tensors.front() : std::string_view(spec.tensor));
    }
    return info.make(spec);
  } catch (const AngleDomainError& e) {
    RethrowDomain(spec, e);
  } catch (const Error& e) {
    RethrowNamed(spec, e);
  }
}

TableSet MakeTableSet(const SchemeSpec& spec) {
  try {
    const SchemeInfo& info = ValidateSpec(spec);
    if (!info.make_set) return SingleTableSet(info.make(spec));
    TableSet set = info.make_set(spec);
    if (!spec.tensor.empty()) set.Select(spec.tensor);
    return set;
  } catch (const AngleDomainError& e) {
    RethrowDomain(spec, e);
  } catch (const Error& e) {
    RethrowNamed(spec, e);
  }
}

}  // namespace pe
