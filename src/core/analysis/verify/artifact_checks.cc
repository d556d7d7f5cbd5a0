#include "core/analysis/verify/artifact_checks.h"
#include "core/analysis/admitted_length.h"

#include <fmt/format.h>
#include <quadmath.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>

#include "core/base/error.h"
#include "core/formats/row_window.h"
#include "core/schemes/rope.h"
#include "core/schemes/rope_scaling.h"
#include "core/spec/engine_versions.h"
#include "core/analysis/verify/engine_disagreements.h"

namespace pe {
namespace {

// Reals a GGUF stores as float32 match their config value to 2^-23 relative.
constexpr double kRealLimit = 0x1p-23;
const char* const kRealWhy = "the same value; 2^-23 relative allows a float32 copy (GGUF stores reals as float32)";

std::string Base(const std::string& p) {
  std::string s = p;
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  const auto k = s.find_last_of('/');
  return k == std::string::npos ? s : s.substr(k + 1);
}

std::string Fmt(double v) { return fmt::format("{}", v); }

std::int64_t RotaryDim(const SchemeSpec& s) {
  return PlannedRotaryDim(s);
}

// The plan group a tensor belongs to: by layer index in its name
// ("model.layers.3.self_attn.rotary_emb.inv_freq"), "local" (Gemma 3's
// rotary_emb_local), else the first full-attention group, else group 0.
int GroupOf(const PePlan& plan, const std::string& name, std::string* why) {
  static const std::regex kLayer(R"((?:^|\.)(?:layers|h|blocks|layer)\.(\d{1,6})\.)");
  std::smatch m;
  if (std::regex_search(name, m, kLayer)) {
    const long i = std::stol(m[1].str());
    if (i < static_cast<long>(plan.layers.size())) {
      *why = fmt::format("layer {}", i);
      return plan.layers[i].group;  // may be kNoPE
    }
  }
  if (name.find("local") != std::string::npos)
    for (std::size_t g = 0; g < plan.groups.size(); ++g)
      if (plan.groups[g].name == "sliding_attention") return static_cast<int>(g);
  for (std::size_t g = 0; g < plan.groups.size(); ++g)
    if (plan.groups[g].name != "sliding_attention") return static_cast<int>(g);
  return plan.groups.empty() ? PlanLayer::kNoPE : 0;
}

// The group of `plan` matching group `name` of another plan: same name, or
// the only group.
int MatchGroup(const PePlan& plan, const std::string& name) {
  for (std::size_t g = 0; g < plan.groups.size(); ++g)
    if (plan.groups[g].name == name) return static_cast<int>(g);
  if (plan.groups.size() == 1) return 0;
  return -1;
}

Check Make(const std::string& name, bool passed, double measured, double limit, const std::string& summary,
           const std::string& why) {
  Check c;
  c.name = name;
  c.passed = passed;
  c.measured = measured;
  c.limit = limit;
  c.summary = summary;
  c.limit_why = why;
  return c;
}

Check Skip(const std::string& name, const std::string& summary) {
  Check c;
  c.name = name;
  c.skipped = true;
  c.summary = summary;
  return c;
}

// Runs pe verify's table comparison of `t` against `spec` and returns its
// reference check (renamed) and, when diagnosed, the diagnosis appended.
Check VerifyTensor(const ArtifactTensor& t, const SchemeSpec& spec, DType judged, bool diagnose, bool* passed_out = nullptr) {
  auto src = t.open();
  VerifyOptions vo;
  vo.spec = spec;
  vo.checks_given = true;  // the reference comparison only
  vo.tolerance = DefaultTolerance(judged);
  vo.diagnose = diagnose;
  const VerifyReport r = Verify(*src, t.name, vo);
  Check out;
  out.name = t.name;
  bool found = false;
  for (const Check& c : r.checks) {
    if (!found || (!c.skipped && !c.passed)) {
      out = c;
      found = true;
    }
  }
  out.name = t.name;
  if (!found) out = Skip(t.name, "nothing compared");
  out.compared_entries = 0;
  for (const Check& c : r.checks)
    if (!c.skipped) out.compared_entries += c.compared_entries;
  out.details["reference"] = r.reference;
  if (r.diagnosed && !r.diagnosis_text.empty()) out.summary += "; diagnosis: " + r.diagnosis_text;
  if (passed_out) *passed_out = r.passed;
  return out;
}

// True when `t` matches `spec` (quietly: no diagnosis).
bool Matches(const ArtifactTensor& t, const SchemeSpec& spec, DType judged) {
  try {
    bool ok = false;
    VerifyTensor(t, spec, judged, false, &ok);
    return ok;
  } catch (const Error&) {
    return false;
  }
}

bool Narrow(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }

double UnitRoundoff(DType d) {
  switch (d) {
    case DType::kFloat16: return 0x1p-11;
    case DType::kBFloat16: return 0x1p-8;
    case DType::kFloat32: return 0x1p-24;
    case DType::kFloat64: return 0x1p-53;
  }
  return 0;
}

// The values of a one-column (or flattened) tensor.
std::vector<double> ReadValues(const ArtifactTensor& t, std::int64_t max_values) {
  auto src = t.open();
  const TableInfo& info = src->info();
  if (info.rows * info.cols > max_values)
    ThrowInput(fmt::format("'{}'", t.name), fmt::format("{} values, more than the {} expected", info.rows * info.cols, max_values));
  return ReadAll(*src, max_values).values;
}

// One column per frequency: a (cos, sin) pair cache read as two
// (core/formats/cos_sin_pairs.h) says so in its metadata.
void CacheLayout(const ArtifactTensor& t, SchemeSpec* s) {
  if (const MetaValue* l = t.info.meta.Find("layout"); l && MetaToString(*l) == "cache") s->layout = "cache";
}

// A longrope cache of the short and the long cache one after the other:
// rows [0, original) computed with short_factor for positions 0..original-1,
// rows [original, original + max) with long_factor for positions 0..max-1;
// the engine adds the offset `original` to a position once the sequence is
// long (onnxruntime-genai builders/base.py make_rotary_embedding_multi_cache
// @80b45b0: cos_cache = cat(cos_cache_small, cos_cache_large) for EPs
// without If; SGLang rope_variant.py @6170d97 and vLLM
// Phi3LongRoPEScaledRotaryEmbedding: long_short_cos_sin_cache =
// cat([short_cos_sin_cache, long_cos_sin_cache]), indexed at
// positions + long_prompt_offset). Each part is checked against its own
// factors, so a cache that holds the short factors twice, or the long part
// at positions original.., fails its part by name. Empty when `t` is not
// such a cache (its rows are not original + max).
std::vector<Check> LongropeParts(const ArtifactTensor& t, const SchemeSpec& s, DType judged, bool diagnose) {
  const std::int64_t orig = s.original_max_position_embeddings, maxp = s.max_position_embeddings;
  if (s.rope_scaling != "longrope" || orig <= 0 || maxp <= 0 || t.info.rows != orig + maxp) return {};
  // onnxruntime-genai's caches carry no layout: one column per frequency
  // when the table is half the rotary width.
  SchemeSpec base = s;
  const std::int64_t rot = PlannedRotaryDim(s);
  if (base.layout != "cache" && t.info.cols * 2 == rot) base.layout = "cache";
  std::vector<Check> out;
  for (const bool long_part : {false, true}) {
    const std::int64_t first = long_part ? orig : 0, rows = long_part ? maxp : orig;
    ArtifactTensor part = t;
    part.info.rows = rows;
    part.open = [open = t.open, first, rows]() {
      std::shared_ptr<RowSource> whole = open();
      TableInfo info = whole->info();
      return RowWindow(whole, first, rows, info);
    };
    SchemeSpec ps = base;
    ps.max_len = rows;
    ps.start = 0;
    if (ps.semantics == "vllm") ps.max_model_len = rows;  // vLLM picks the factors by max_model_len
    else ps.seq_len = rows;                                // transformers by the sequence length
    Check c = VerifyTensor(part, ps, judged, diagnose);
    c.name = fmt::format("{} [{}]", t.name, long_part ? "long" : "short");
    c.summary = fmt::format("rows {}..{} of a concatenated short + long cache, against {}_factor at positions 0..{}{}: {}",
                            first, first + rows - 1, long_part ? "long" : "short", rows - 1,
                            long_part ? fmt::format(" (the offset {} the engine adds once the sequence passes {})", orig, orig)
                                      : std::string(),
                            c.summary);
    out.push_back(std::move(c));
  }
  return out;
}

// Per-frequency factors a GGUF stores for a llama3 / longrope plan, exact:
// rope_freqs[i] = inv_freq_unscaled[i] / inv_freq_llama3[i] (ggml divides
// its frequencies by them; convert_hf_to_gguf.py LlamaModel).
std::optional<std::vector<double>> ExpectedFactors(const SchemeSpec& s, const std::string& role) {
  if (role == "rope_freqs" && s.rope_scaling == "llama3") {
    SchemeSpec plain = s;
    plain.rope_scaling = "none";
    plain.factor = -1;
    plain.given.erase("factor");  // reset to "not given"
    const RopeFrequencies scaled = ComputeRopeFrequencies(s), base = ComputeRopeFrequencies(plain);
    std::vector<double> out;
    for (std::size_t i = 0; i < scaled.inv_freq.size(); ++i)
      out.push_back(static_cast<double>(base.inv_freq[i] / scaled.inv_freq[i]));
    return out;
  }
  if ((role == "rope_factors_long" || role == "rope_factors_short") && s.rope_scaling == "longrope") {
    const std::string list = role == "rope_factors_long" ? s.long_factor : s.short_factor;
    std::vector<double> out;
    std::size_t from = 0;
    while (from < list.size()) {
      std::size_t to = list.find(',', from);
      if (to == std::string::npos) to = list.size();
      try {
        out.push_back(std::stod(list.substr(from, to - from)));
      } catch (const std::exception&) {
        return std::nullopt;  // a file reference: not a list
      }
      from = to + 1;
    }
    return out;
  }
  return std::nullopt;
}

// A factor tensor against the expected factors: max relative error.
Check FactorCheck(const std::string& name, const ArtifactTensor& t, const std::vector<double>& want,
                  const std::string& what_want) {
  const std::vector<double> got = ReadValues(t, 1 << 20);
  if (got.size() != want.size())
    return Make(name, false, static_cast<double>(got.size()), static_cast<double>(want.size()),
                fmt::format("{} holds {} factors, {} expects {} (one per rotary frequency)", t.name, got.size(),
                            what_want, want.size()),
                "one factor per frequency (rotary_dim / 2)");
  double worst = 0;
  std::size_t at = 0;
  bool inverted = true;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = std::abs(got[i] - want[i]) / std::abs(want[i]);
    if (!(e <= worst)) worst = e, at = i;
    inverted = inverted && std::abs(got[i] * want[i] - 1) <= 1e-5;
  }
  const double limit = 0x1p-20;
  const bool ok = worst <= limit;
  std::string s = ok ? fmt::format("{}: {} factors match {} (max relative error {:.3g})", t.name, got.size(), what_want, worst)
                     : fmt::format("{}: factor {} is {} but {} gives {} (max relative error {:.3g})", t.name, at, got[at],
                                   what_want, want[at], worst);
  if (!ok && inverted) s += "; every factor is the reciprocal of the formula's: the llama3 factors are inverted";
  Check c = Make(name, ok, worst, limit, s, "float32 factors from float32 frequencies (a few float32 ulps; 2^-20 relative)");
  c.compared_entries = static_cast<std::int64_t>(got.size());
  return c;
}

}  // namespace

std::string SettingSource(const ModelArtifact& a, const std::string& name, const std::string& group) {
  const ArtifactSetting* s = a.FindSetting(name, group);
  const std::string src = s ? s->source : fmt::format("{} plan {}", a.kind, name);
  if (a.kind == "hf-folder" && src.rfind("config.json", 0) == 0) return Base(a.path) + "/" + src;
  return Base(a.path) + " " + src;
}

std::vector<Check> CheckArtifactTensors(const ModelArtifact& a, bool diagnose, const ModelArtifact* plan_of) {
  std::vector<Check> out;
  // The plan the RoPE tensors are checked against: the artifact's own, or,
  // where it states none (an ONNX export, a bare checkpoint), the other
  // artifact's of the same model.
  const bool own_plan = a.plan && !a.plan->groups.empty();
  const ModelArtifact* planner = own_plan ? &a : (plan_of && plan_of->plan && !plan_of->plan->groups.empty() ? plan_of : nullptr);
  for (const ArtifactTensor& t : a.tensors) {
    const DType dt = t.info.dtype;
    if (t.info.meta.Find("unsupported_dtype")) {
      out.push_back(Skip(t.name, fmt::format("dtype {} is not readable as a table", MetaToString(*t.info.meta.Find("unsupported_dtype")))));
      continue;
    }
    if (t.role == "inv_freq" || t.role == "cos_cache" || t.role == "sin_cache") {
      if (!planner) {
        out.push_back(Skip(t.name, fmt::format("a {} tensor, but the artifact states no RoPE plan to compare it with{}",
                                               t.role, plan_of ? " (nor does the other artifact)" : "")));
        continue;
      }
      const PePlan& plan = *planner->plan;
      std::string where;
      const int g = GroupOf(plan, t.name, &where);
      if (g == PlanLayer::kNoPE) {
        out.push_back(Make(t.name, false, 1, 0,
                           fmt::format("a RoPE {} stored for {}, which the plan leaves without RoPE (NoPE)", t.role, where),
                           "NoPE layers carry no rotary tensor"));
        continue;
      }
      SchemeSpec s = plan.groups[g].spec;
      s.scheme = "rope";
      s.tensor = t.role == "inv_freq" ? "inv_freq" : t.role == "cos_cache" ? "cos" : "sin";
      s.max_len = t.role == "inv_freq" ? 1 : t.info.rows;
      s.dtype = dt;
      const std::string gname = plan.groups[g].name;
      if (t.role == "inv_freq" && Narrow(dt)) {
        out.push_back(Make(t.name + ": dtype", false, UnitRoundoff(dt), UnitRoundoff(DType::kFloat32),
                           fmt::format("inv_freq stored in {}: each frequency is rounded to {:.3g} relative, so the "
                                       "angle p*inv_freq drifts by up to p times that (transformers keeps inv_freq in "
                                       "float32)",
                                       DTypeName(dt), UnitRoundoff(dt)),
                           "inv_freq needs float32 or wider (unit roundoff 2^-24)"));
      }
      // 16-bit frequencies are judged as float32 values (what they replace).
      const DType judged = t.role == "inv_freq" && Narrow(dt) ? DType::kFloat32 : dt;
      auto planned = [&](const std::string& summary) {
        return own_plan ? fmt::format("{} ({} group {}): {}", t.role, plan.source, gname, summary)
                        : fmt::format("{} against {}'s plan ({} group {}; {} states none): {}", t.role,
                                      Base(planner->path), plan.source, gname, Base(a.path), summary);
      };
      if (t.role != "inv_freq") CacheLayout(t, &s);
      if (std::vector<Check> parts = t.role != "inv_freq" ? LongropeParts(t, s, judged, diagnose) : std::vector<Check>{};
          !parts.empty()) {
        for (Check& part : parts) part.summary = planned(part.summary), out.push_back(std::move(part));
        continue;
      }
      Check c = VerifyTensor(t, s, judged, diagnose);
      c.summary = planned(c.summary);
      if (!own_plan) c.details["plan_from"] = planner->path;
      if (!c.passed && !c.skipped && s.rope_scaling != "none") {
        // Another peer's rule where they disagree (rope_scaling.h)?
        for (const EngineVersion& ev : EngineVersions()) {
          const char* sem = ev.name;
          if (s.semantics == sem || SemanticsFamily(s.semantics) == ev.family) continue;
          SchemeSpec o = s;
          o.semantics = sem;
          try {
            CheckRopeSemantics(o);
          } catch (const Error&) {
            continue;
          }
          if (Matches(t, o, judged)) {
            c.summary += fmt::format("; it matches the plan under --semantics {} instead: the {} scaling was computed "
                                     "with that rule{}",
                                     sem, s.rope_scaling,
                                     std::string(sem) == "hf-4.45" ? " (the old YaRN rule factor = "
                                                                     "max_position_embeddings / original_max_position_embeddings)"
                                                                   : "");
            c.details["matches_semantics"] = sem;
            break;
          }
        }
      }
      out.push_back(std::move(c));
      continue;
    }
    if (t.role == "position_embedding") {
      if (!a.absolute) {
        out.push_back(Skip(t.name, "a position embedding, but the artifact's metadata states no absolute positions"));
        continue;
      }
      const AbsolutePositions& ab = *a.absolute;
      if (ab.kind == "learned") {
        const bool ok = t.info.rows == ab.spec.max_len && t.info.cols == ab.spec.d_model;
        const std::string shape = fmt::format("[{} x {}]", t.info.rows, t.info.cols);
        const std::string want = ab.offset ? fmt::format("[{} + {} x {}]", ab.spec.max_len - ab.offset, ab.offset, ab.spec.d_model)
                                           : fmt::format("[{} x {}]", ab.spec.max_len, ab.spec.d_model);
        Check c = Make(t.name, ok, static_cast<double>(std::abs(t.info.rows - ab.spec.max_len) + std::abs(t.info.cols - ab.spec.d_model)),
                       0,
                       ok ? fmt::format("learned position embedding {} = {} (trained weights: identified by shape; {})",
                                        shape, want, ab.source)
                          : fmt::format("learned position embedding {} but the config needs {} ({}): a table from "
                                        "another model size or offset",
                                        shape, want, ab.source),
                       "rows = max_position_embeddings + offset, columns = d_model");
        c.details["identification"] = "learned";
        c.compared_plan_values = 1;  // its shape against the config (no value of a trained table is known)
        out.push_back(std::move(c));
        continue;
      }
      SchemeSpec s = ab.spec;
      s.dtype = dt;
      Check c = VerifyTensor(t, s, dt, diagnose);
      c.summary = fmt::format("sinusoidal embed_positions ({}): {}", s.scheme, c.summary);
      if (!c.passed && !c.skipped && t.info.rows == s.max_len && t.info.cols == s.d_model) {
        for (int shift : {1, -1, 2, -2}) {
          SchemeSpec o = s;
          o.start = shift;
          if (Matches(t, o, dt)) {
            c.summary += fmt::format("; its rows are positions {}.. instead of 0..: the row offset is off by {} "
                                     "(fairseq's padding_idx + 1 convention applied where the model has none, or "
                                     "the reverse)",
                                     shift, std::abs(shift));
            c.details["row_offset"] = shift;
            break;
          }
        }
      }
      out.push_back(std::move(c));
      continue;
    }
    if (t.role == "rope_freqs" || t.role == "rope_factors_long" || t.role == "rope_factors_short") {
      std::optional<std::vector<double>> want;
      if (a.plan)
        for (const PlanGroup& g : a.plan->groups)
          if (!want) want = ExpectedFactors(g.spec, t.role);
      if (!want) {
        out.push_back(Skip(t.name, fmt::format("{}: the artifact's own plan states no scaling these factors encode; "
                                               "compare it with the model's config (pe verify --model THIS --model "
                                               "FOLDER)",
                                               t.role)));
        continue;
      }
      out.push_back(FactorCheck(t.name, t, *want, t.role == "rope_freqs" ? "the llama3 formula of the plan" : "the plan's list"));
      continue;
    }
    out.push_back(Skip(t.name, t.role.empty() ? "not a known positional tensor" : "no check for role " + t.role));
  }
  return out;
}

namespace {

// The checks of one artifact's plan against another's, each value named
// with both sources (each artifact's setting, or the value shown).
struct PlanComparer {
  const ModelArtifact& a;
  const ModelArtifact& b;
  std::vector<Check>& out;

  static std::string Shown(const ModelArtifact& m, const std::string& name, const std::string& group,
                           const std::string& fallback) {
    const ArtifactSetting* s = m.FindSetting(name, group);
    return s ? s->value : fallback;
  }
  // A check on one value both state.
  void Exact(const std::string& check, const std::string& key, const std::string& ga, const std::string& gb,
             const std::string& va, const std::string& vb, bool same) {
    out.push_back(Make(check, same, same ? 0 : 1, 0,
                       fmt::format("{}: {} = {}, {} = {}", check, SettingSource(a, key, ga), Shown(a, key, ga, va),
                                   SettingSource(b, key, gb), Shown(b, key, gb, vb)),
                       "the same value"));
  }
  // A real both state, equal to float32 copies' precision.
  void Real(const std::string& check, const std::string& key, const std::string& ga, const std::string& gb, double va,
            double vb) {
    const double rel = va == vb ? 0 : std::abs(va - vb) / std::max(std::abs(va), std::abs(vb));
    out.push_back(Make(check, rel <= kRealLimit, rel, kRealLimit,
                       fmt::format("{}: {} = {}, {} = {}", check, SettingSource(a, key, ga), Shown(a, key, ga, Fmt(va)),
                                   SettingSource(b, key, gb), Shown(b, key, gb, Fmt(vb))),
                       kRealWhy));
  }

  void AbsolutePositions();
  void Layers(const PePlan& pa, const PePlan& pb);
  void Layout(const PlanGroup& ga, const PlanGroup& gb, const std::string& pre, const std::string& gn,
              const std::string& gbn);
  void Mrope(const SchemeSpec& sa, const SchemeSpec& sb, const std::string& pre, const std::string& gn,
             const std::string& gbn);
  void Scaling(const SchemeSpec& sa, const SchemeSpec& sb, const std::string& pre, const std::string& gn,
               const std::string& gbn);
  void ScalingParameters(const SchemeSpec& sa, const SchemeSpec& sb, const std::string& pre, const std::string& gn,
                         const std::string& gbn);
  void Group(const PlanGroup& ga, const PePlan& pa, const PePlan& pb);
};

// Absolute position embeddings (one of the two has them): their kind,
// offset and width.
void PlanComparer::AbsolutePositions() {
  if (!a.absolute || !b.absolute) {
    out.push_back(Make("position_embedding", false, 1, 0,
                       fmt::format("position_embedding: {} states {}, {} states {}", Base(a.path),
                                   a.absolute ? a.absolute->kind + " absolute positions" : "RoPE / no absolute positions",
                                   Base(b.path),
                                   b.absolute ? b.absolute->kind + " absolute positions" : "RoPE / no absolute positions"),
                       "the same kind of positional encoding"));
    return;
  }
  Exact("position_embedding", "position_embedding", "", "", a.absolute->kind, b.absolute->kind,
        a.absolute->kind == b.absolute->kind);
  Exact("position_offset", "position_offset", "", "", fmt::format("{}", a.absolute->offset),
        fmt::format("{}", b.absolute->offset), a.absolute->offset == b.absolute->offset);
  Exact("d_model", "d_model", "", "", fmt::format("{}", a.absolute->spec.d_model), fmt::format("{}", b.absolute->spec.d_model),
        a.absolute->spec.d_model == b.absolute->spec.d_model);
}

// Layers and NoPE layers.
void PlanComparer::Layers(const PePlan& pa, const PePlan& pb) {
  if (pa.layers.empty() || pb.layers.empty()) return;
  Exact("num_layers", "num_layers", "", "", fmt::format("{}", pa.layers.size()), fmt::format("{}", pb.layers.size()),
        pa.layers.size() == pb.layers.size());
  if (pa.layers.size() != pb.layers.size()) return;
  std::vector<std::size_t> differ;
  for (std::size_t i = 0; i < pa.layers.size(); ++i)
    if ((pa.layers[i].group == PlanLayer::kNoPE) != (pb.layers[i].group == PlanLayer::kNoPE)) differ.push_back(i);
  out.push_back(Make("nope_layers", differ.empty(), static_cast<double>(differ.size()), 0,
                     differ.empty() ? "nope_layers: both leave the same layers without RoPE"
                                    : fmt::format("nope_layers: {} layers differ in having RoPE (first: layer {}: {} "
                                                  "{}, {} {})",
                                                  differ.size(), differ[0], Base(a.path),
                                                  pa.layers[differ[0]].group == PlanLayer::kNoPE ? "NoPE" : "RoPE",
                                                  Base(b.path),
                                                  pb.layers[differ[0]].group == PlanLayer::kNoPE ? "NoPE" : "RoPE"),
                     "the same layers without RoPE"));
}

void PlanComparer::Layout(const PlanGroup& ga, const PlanGroup& gb, const std::string& pre, const std::string& gn,
                          const std::string& gbn) {
  // A GGUF's rope type against the architecture: convert_hf_to_gguf.py
  // permutes q/k of the Llama family so that ggml's NORM (interleaved)
  // rope equals HF's rotate_half; every other model keeps its layout.
  static const std::set<std::string> kPermuted = {"llama", "mistral", "mixtral", "granite", "granitemoe",
                                                  "baichuan", "internlm2", "minicpm"};
  auto expect = [&](const ModelArtifact& hf, const std::string& layout, const ModelArtifact& other) {
    if (hf.kind == "hf-folder" && other.kind == "gguf" && layout == "half" && kPermuted.count(hf.architecture))
      return std::string("interleaved");
    return layout.empty() ? std::string("half") : layout;
  };
  // The rotation pairs (a group's pairing where its cos/sin columns
  // differ from them: GLM, Llama 4, DeepSeek-V3).
  const auto pairs = [](const PlanGroup& g) {
    return !g.pairing.empty() ? g.pairing : g.spec.layout.empty() ? std::string("half") : g.spec.layout;
  };
  const std::string pa_l = pairs(ga), pb_l = pairs(gb);
  const std::string la = expect(a, pa_l, b), lb = expect(b, pb_l, a);
  Check c = Make(pre + "layout", la == lb, la == lb ? 0 : 1, 0,
                 fmt::format("{}layout: {} = {}, {} = {}", pre, SettingSource(a, "layout", gn), pa_l,
                             SettingSource(b, "layout", gbn), pb_l),
                 "the same rotation pairs (a llama-family GGUF: NORM, as convert_hf_to_gguf.py permutes q/k)");
  if (la != pa_l) c.summary += " (HF rotate_half = GGUF NORM after the converter's q/k permutation)";
  if (la != lb) c.summary += fmt::format("; a model of architecture {} needs {} rotation in {}", a.architecture, la, Base(b.path));
  out.push_back(std::move(c));
}

// M-RoPE's sections and their order (llama.cpp MROPE / IMROPE, the
// config's mrope_section / Qwen3-VL's interleaving).
void PlanComparer::Mrope(const SchemeSpec& sa, const SchemeSpec& sb, const std::string& pre, const std::string& gn,
                         const std::string& gbn) {
  if (sa.mrope_section.empty() && sb.mrope_section.empty()) return;
  const auto m = [](const SchemeSpec& s) {
    return s.mrope_section.empty() ? std::string("none (1-D RoPE)")
                                   : s.mrope_section + (s.mrope_interleaved ? " interleaved" : " contiguous");
  };
  const std::string ma = m(sa), mb = m(sb);
  out.push_back(Make(pre + "mrope_section", ma == mb, ma == mb ? 0 : 1, 0,
                     fmt::format("{}mrope_section: {} = {}, {} = {}", pre, SettingSource(a, "mrope_section", gn), ma,
                                 SettingSource(b, "mrope_section", gbn), mb),
                     "the same M-RoPE sections, in the same order (MROPE contiguous, IMROPE interleaved)"));
}

const ArtifactTensor* FactorsTensor(const ModelArtifact& m, const char* role) {
  for (const auto& t : m.tensors)
    if (t.role == role) return &t;
  return nullptr;
}

// The scaling's type; a GGUF may encode llama3 / longrope as rope_freqs /
// rope_factors tensors, which are then checked against the other side's
// formula.
void PlanComparer::Scaling(const SchemeSpec& sa, const SchemeSpec& sb, const std::string& pre, const std::string& gn,
                           const std::string& gbn) {
  std::string ta = sa.rope_scaling, tb = sb.rope_scaling;
  auto baked = [&](const ModelArtifact& m, const std::string& other_type) -> std::string {
    if (other_type == "llama3" && FactorsTensor(m, "rope_freqs")) return "llama3";
    if (other_type == "longrope" && FactorsTensor(m, "rope_factors_long")) return "longrope";
    return "";
  };
  if (tb == "none" && !baked(b, ta).empty()) tb = ta + " (as factor tensors)";
  if (ta == "none" && !baked(a, tb).empty()) ta = tb + " (as factor tensors)";
  const bool same_type = ta == tb || ta.rfind(tb, 0) == 0 || tb.rfind(ta, 0) == 0;
  out.push_back(Make(pre + "rope_scaling.type", same_type, same_type ? 0 : 1, 0,
                     fmt::format("{}rope_scaling.type: {} = {}, {} = {}", pre, SettingSource(a, "rope_scaling.type", gn), ta,
                                 SettingSource(b, "rope_scaling.type", gbn), tb),
                     "the same scaling (llama3 / longrope may be stored as factor tensors)"));
  const bool sa_params = sa.rope_scaling != "none", sb_params = sb.rope_scaling != "none";
  if (same_type && sa_params && sb_params) {
    ScalingParameters(sa, sb, pre, gn, gbn);
  } else if (same_type && sa_params != sb_params) {
    // One side encodes the scaling as factor tensors: check them against the other's formula.
    const ModelArtifact& with = sa_params ? a : b;
    const ModelArtifact& tensors = sa_params ? b : a;
    const SchemeSpec& s = sa_params ? sa : sb;
    for (const char* role : {"rope_freqs", "rope_factors_long", "rope_factors_short"}) {
      const ArtifactTensor* t = FactorsTensor(tensors, role);
      if (!t) continue;
      if (auto want = ExpectedFactors(s, role))
        out.push_back(FactorCheck(fmt::format("{}{} {}", pre, Base(tensors.path), t->name), *t, *want,
                                  fmt::format("{} of {}", std::string(role) == "rope_freqs" ? "the llama3 formula"
                                                                                            : "the list",
                                              SettingSource(with, "rope_scaling.type", sa_params ? gn : gbn))));
    }
  }
}

// The parameters of a scaling of the same type on both sides.
void PlanComparer::ScalingParameters(const SchemeSpec& sa, const SchemeSpec& sb, const std::string& pre,
                                     const std::string& gn, const std::string& gbn) {
  const std::string& t = sa.rope_scaling;
  if (t != "longrope") Real(pre + "rope_scaling.factor", "rope_scaling.factor", gn, gbn, sa.factor, sb.factor);
  if (t == "yarn" || t == "llama3" || t == "longrope" || t == "dynamic")
    if (sa.original_max_position_embeddings > 0 || sb.original_max_position_embeddings > 0)
      Exact(pre + "rope_scaling.original_max_position_embeddings", "rope_scaling.original_max_position_embeddings",
            gn, gbn, fmt::format("{}", sa.original_max_position_embeddings),
            fmt::format("{}", sb.original_max_position_embeddings),
            sa.original_max_position_embeddings == sb.original_max_position_embeddings);
  if (t == "llama3") {
    Real(pre + "rope_scaling.low_freq_factor", "rope_scaling.low_freq_factor", gn, gbn, sa.low_freq_factor, sb.low_freq_factor);
    Real(pre + "rope_scaling.high_freq_factor", "rope_scaling.high_freq_factor", gn, gbn, sa.high_freq_factor,
         sb.high_freq_factor);
  }
  if (t == "yarn") {
    Real(pre + "rope_scaling.beta_fast", "rope_scaling.beta_fast", gn, gbn, sa.beta_fast, sb.beta_fast);
    Real(pre + "rope_scaling.beta_slow", "rope_scaling.beta_slow", gn, gbn, sa.beta_slow, sb.beta_slow);
    Exact(pre + "rope_scaling.truncate", "rope_scaling.truncate", gn, gbn, sa.truncate ? "true" : "false",
          sb.truncate ? "true" : "false", sa.truncate == sb.truncate);
    if (sa.mscale > 0 || sb.mscale > 0) Real(pre + "rope_scaling.mscale", "rope_scaling.mscale", gn, gbn, sa.mscale, sb.mscale);
    if (sa.mscale_all_dim > 0 || sb.mscale_all_dim > 0)
      Real(pre + "rope_scaling.mscale_all_dim", "rope_scaling.mscale_all_dim", gn, gbn, sa.mscale_all_dim, sb.mscale_all_dim);
  }
  if (sa.attention_factor > 0 || sb.attention_factor > 0)
    Real(pre + "rope_scaling.attention_factor", "rope_scaling.attention_factor", gn, gbn, sa.attention_factor,
         sb.attention_factor);
  if (t == "longrope") {
    Exact(pre + "rope_scaling.short_factor", "rope_scaling.short_factor", gn, gbn, sa.short_factor, sb.short_factor,
          sa.short_factor == sb.short_factor);
    Exact(pre + "rope_scaling.long_factor", "rope_scaling.long_factor", gn, gbn, sa.long_factor, sb.long_factor,
          sa.long_factor == sb.long_factor);
  }
}

// One layer type's group of a against the group of b for the same type.
void PlanComparer::Group(const PlanGroup& ga, const PePlan& pa, const PePlan& pb) {
  const int gbi = MatchGroup(pb, ga.name);
  const std::string pre = pa.groups.size() > 1 ? ga.name + ": " : "";
  const std::string gn = pa.groups.size() > 1 ? ga.name : "";
  if (gbi < 0) {
    out.push_back(Make(pre + "group", false, 1, 0,
                       fmt::format("{}{} has layers of type {}, {} has no encoding for them", pre, Base(a.path),
                                   ga.name, Base(b.path)),
                       "both artifacts encode every layer type"));
    return;
  }
  const PlanGroup& gb = pb.groups[gbi];
  const std::string gbn = pb.groups.size() > 1 ? gb.name : "";
  const SchemeSpec &sa = ga.spec, &sb = gb.spec;
  Real(pre + "rope_theta", "rope_theta", gn, gbn, sa.base, sb.base);
  Exact(pre + "rotary_dim", "rotary_dim", gn, gbn, fmt::format("{}", RotaryDim(sa)), fmt::format("{}", RotaryDim(sb)),
        RotaryDim(sa) == RotaryDim(sb));
  Layout(ga, gb, pre, gn, gbn);
  Mrope(sa, sb, pre, gn, gbn);
  Scaling(sa, sb, pre, gn, gbn);
}

}  // namespace

std::vector<Check> ComparePlans(const ModelArtifact& a, const ModelArtifact& b) {
  std::vector<Check> out;
  PlanComparer cmp{a, b, out};
  if (a.context_length > 0 && b.context_length > 0)
    cmp.Exact("context_length", "context_length", "", "", fmt::format("{}", a.context_length),
              fmt::format("{}", b.context_length), a.context_length == b.context_length);
  if (a.absolute || b.absolute) {
    cmp.AbsolutePositions();
    return out;
  }
  if (!a.plan || !b.plan || a.plan->groups.empty() || b.plan->groups.empty()) {
    out.push_back(Skip("plan", fmt::format("{} states {} plan and {} {}: nothing to compare", Base(a.path),
                                           a.plan ? "a" : "no", Base(b.path), b.plan ? "a plan" : "none")));
    return out;
  }
  cmp.Layers(*a.plan, *b.plan);
  for (const PlanGroup& ga : a.plan->groups) cmp.Group(ga, *a.plan, *b.plan);
  return out;
}

namespace {

bool Guessed(const ModelArtifact& m) { return m.plan && !m.plan->unchecked.empty(); }

// A check whose expected value comes from a guessed plan (a model_type
// without a family rule: core/spec/model_rules.h) neither passes nor fails:
// it is "unchecked" (skipped, details.unchecked), so that a verification
// whose only comparisons are against a guess compares nothing.
void MarkUnchecked(Check& c, const std::string& why) {
  if (c.skipped) return;
  c.summary = fmt::format("unchecked: {} (it would have {}, against a guessed plan: {})", c.summary,
                          c.passed ? "passed" : "failed", why);
  c.details["unchecked"] = true;
  c.details["unchecked_would_pass"] = c.passed;
  c.skipped = true;
  c.passed = true;
  c.compared_entries = 0;
  c.compared_plan_values = 0;
  c.compared_property = false;
}

// Tensor roles whose check is against the artifact's RoPE plan.
bool AgainstRopePlan(const ArtifactTensor& t) {
  return t.role == "inv_freq" || t.role == "cos_cache" || t.role == "sin_cache" || t.role == "rope_freqs" ||
         t.role == "rope_factors_long" || t.role == "rope_factors_short";
}

}  // namespace

VerifyReport VerifyModelArtifacts(const std::vector<const ModelArtifact*>& artifacts, bool diagnose, bool allow_empty,
                                  std::int64_t max_model_len) {
  VerifyReport rep;
  rep.reference_kind = "model";
  rep.tolerance = DefaultTolerance(DType::kFloat32);
  rep.tolerance.why = "stored tensors: pe verify's rule for their dtype (docs/verify.md); settings: exact, reals to "
                      "2^-23 relative (float32 copies)";
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ModelArtifact* m : artifacts) {
    rep.file += (rep.file.empty() ? "" : " + ") + m->path;
    list.push_back({{"path", m->path}, {"kind", m->kind}, {"architecture", m->architecture}});
    for (const auto& n : m->notes) rep.notes.push_back(fmt::format("{}: {}", Base(m->path), n));
    if (m->kind == "hf-folder" && m->plan)
      for (const auto& l : EngineVersionDisagreements(m->path))
        rep.notes.push_back(fmt::format("{}: engine versions disagree: {}", Base(m->path), l));
  }
  rep.reference["artifacts"] = list;
  std::vector<std::string> reasons;  // why nothing may have been compared
  for (const ModelArtifact* m : artifacts) {
    for (const std::string& p : m->problems) {
      Check c = Make("config", false, 0, 0, p,
                     p.rfind("config.json ", 0) == 0
                         ? "a rope block that passes transformers' own validation (modeling_rope_utils.py; "
                           "docs/models.md, \"Config lint\")"
                         : "every value a model's metadata states must lie in its parameter's domain "
                           "(docs/schemes.md, \"Parameter domains\")");
      c.compared_plan_values = 1;
      rep.checks.push_back(std::move(c));
    }
    // An artifact that states no plan is checked against the first other one that does.
    const ModelArtifact* other = nullptr;
    for (const ModelArtifact* o : artifacts)
      if (o != m && o->plan && !o->plan->groups.empty()) {
        other = o;
        break;
      }
    std::vector<Check> checks = CheckArtifactTensors(*m, diagnose, other);
    if (Guessed(*m))
      for (Check& c : checks)
        for (const ArtifactTensor& t : m->tensors)
          if (AgainstRopePlan(t) && (c.name == t.name || c.name == t.name + ": dtype")) MarkUnchecked(c, m->plan->unchecked);
    if (m->tensors.empty()) reasons.push_back(fmt::format("{} stores no positional tensor", Base(m->path)));
    if (max_model_len > 0)
      for (Check& c : AdmittedLengthChecks(*m, max_model_len)) checks.push_back(std::move(c));
    for (Check& c : checks) {
      if (artifacts.size() > 1) c.name = Base(m->path) + " " + c.name;
      rep.checks.push_back(std::move(c));
    }
  }
  for (std::size_t i = 1; i < artifacts.size(); ++i)
    for (Check& c : ComparePlans(*artifacts[0], *artifacts[i])) {
      if (!c.skipped && c.compared_entries == 0) c.compared_plan_values = 1;  // one setting (or group) of both plans
      for (const ModelArtifact* m : {artifacts[0], artifacts[i]})
        if (Guessed(*m)) MarkUnchecked(c, fmt::format("{}: {}", Base(m->path), m->plan->unchecked));
      rep.checks.push_back(std::move(c));
    }
  if (rep.checks.empty())
    rep.checks.push_back(Skip("model", "no positional tensor stored and no second artifact to compare the plan with"));
  SettleVerdict(rep, allow_empty, reasons);
  return rep;
}

}  // namespace pe
