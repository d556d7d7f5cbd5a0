#include "core/analysis/verify/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/analysis/verify/alibi_verify.h"
#include "core/analysis/verify/axis_rotary_verify.h"
#include "core/analysis/blocks.h"
#include "core/analysis/verify/xpos_verify.h"
#include "core/analysis/verify/properties.h"
#include "core/analysis/verify/reference_compare.h"
#include "core/analysis/verify/rope_verify.h"
#include "core/analysis/verify/rope_angle_dtype.h"
#include "core/analysis/stats.h"
#include "core/base/error.h"
#include "core/numerics/exact_sincos.h"
#include "core/formats/metadata_json.h"
#include "core/spec/gguf_plan.h"
#include "core/schemes/axis_rotary.h"
#include "core/schemes/mrope.h"
#include "core/schemes/rope.h"
#include "core/schemes/rotary_tables.h"
#include "core/formats/pump.h"
#include "core/schemes/sinusoidal.h"
#include "core/base/table_set.h"
#include "core/spec/engine_versions.h"

namespace pe {
namespace {

std::string G(double v) { return fmt::format("{:.3g}", v); }

std::optional<std::string> MetaString(const Metadata& m, const std::string& key) {
  const MetaValue* v = m.Find(key);
  if (!v) return std::nullopt;
  return MetaToString(*v);
}

std::optional<std::int64_t> MetaInt(const Metadata& m, const std::string& key) {
  auto d = MetaNumber(m, key);
  if (!d || *d != std::floor(*d) || std::fabs(*d) > 9e15) return std::nullopt;
  return static_cast<std::int64_t>(*d);
}

// Rows analysed at the head of a table: 512, or fewer for very wide tables
// (at most ~2^22 doubles in memory).
std::int64_t HeadRows(const TableInfo& info) {
  return std::min<std::int64_t>(info.rows, std::max<std::int64_t>(3, std::min<std::int64_t>(512, (std::int64_t{1} << 22) / std::max<std::int64_t>(1, info.cols))));
}

// Reads the first rows of a source: pairing, zero rows and per-column ω.
struct HeadAnalysis {
  Pairing pairing;
  std::vector<double> col_omega;  // per column; 0 = not a sinusoid (no angle term)
  std::vector<std::int64_t> zero_rows;
};

HeadAnalysis AnalyseHead(RowSource& src) {
  HeadAnalysis h;
  const TableInfo& info = src.info();
  const std::int64_t n = HeadRows(info);
  std::vector<std::byte> scratch;
  std::vector<double> head;
  ReadRowsAsDouble(src, 0, n, &scratch, &head);
  for (std::int64_t r = 0; r < n; ++r) {
    bool z = true;
    for (std::int64_t j = 0; j < info.cols && z; ++j) z = head[static_cast<std::size_t>(r * info.cols + j)] == 0;
    if (z) h.zero_rows.push_back(r);
  }
  h.pairing = FindPairing(head, n, info.cols, h.zero_rows, 1e-3);
  h.col_omega.assign(static_cast<std::size_t>(info.cols), 0.0);
  if (h.pairing.found) {
    for (std::size_t i = 0; i < h.pairing.sin_cols.size(); ++i) {
      h.col_omega[static_cast<std::size_t>(h.pairing.sin_cols[i])] = std::fabs(h.pairing.omega[i]);
      h.col_omega[static_cast<std::size_t>(h.pairing.cos_cols[i])] = std::fabs(h.pairing.omega[i]);
    }
  }
  // Columns outside pairs (an unpaired sin, RoPE-style tables): ω from the
  // second difference x[r+1] - 2x[r] + x[r-1] = -4 sin²(ω/2)·x[r] when the
  // column is a sinusoid; a poor fit leaves ω = 0 (no angle allowance).
  std::set<std::int64_t> zr(h.zero_rows.begin(), h.zero_rows.end());
  for (std::int64_t j = 0; j < info.cols; ++j) {
    if (h.col_omega[static_cast<std::size_t>(j)] != 0 || n < 3) continue;
    double num = 0, den = 0, res = 0, scale = 0;
    auto x = [&](std::int64_t r) { return head[static_cast<std::size_t>(r * info.cols + j)]; };
    for (std::int64_t r = 1; r + 1 < n; ++r) {
      if (zr.count(r - 1) || zr.count(r) || zr.count(r + 1)) continue;
      num += x(r) * (x(r + 1) - 2 * x(r) + x(r - 1));
      den += x(r) * x(r);
    }
    if (den <= 0) continue;
    const double q = -num / den;  // 4 sin²(ω/2)
    for (std::int64_t r = 1; r + 1 < n; ++r) {
      if (zr.count(r - 1) || zr.count(r) || zr.count(r + 1)) continue;
      res = std::max(res, std::fabs(x(r + 1) - 2 * x(r) + x(r - 1) + q * x(r)));
      scale = std::max(scale, std::fabs(x(r)));
    }
    if (q > 0 && q < 4 && res <= 1e-6 * std::max(scale, 1e-300) + 1e-12)
      h.col_omega[static_cast<std::size_t>(j)] = 2 * std::asin(std::sqrt(q) / 2);
  }
  return h;
}

std::string Differences(const SinusoidVariant& found, const SinusoidVariant& declared) {
  std::vector<std::string> d;
  if (found.sin_only != declared.sin_only) d.push_back("cos columns replaced by sin");
  if (found.layout != declared.layout) d.push_back("layout");
  if (found.denominator != declared.denominator) d.push_back("frequency denominator");
  if (found.base != declared.base) d.push_back("base");
  if (found.start != declared.start) d.push_back(fmt::format("first position ({} instead of {})", found.start, declared.start));
  if (found.zero_rows != declared.zero_rows) d.push_back("zeroed padding rows");
  std::string s;
  for (const auto& e : d) s += (s.empty() ? "" : ", ") + e;
  return s;
}


// Where the parameters of a rope reference came from, by metadata key:
// --hf-config or --gguf (which replace the flags' values), or the file's
// metadata (spec.origin). A parameter a config gives is found by reading
// the config over a spec of sentinel values: whatever changed, it holds.
nlohmann::ordered_json ReferenceSources(const SchemeSpec& given) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  // By the parameter's own key: Hugging Face's names of the same numbers
  // count as them, and the tensor's name is no parameter of the values.
  static const std::map<std::string, std::string> kAlias = {
      {"rope_theta", "base"}, {"rope_type", "rope_scaling"}, {"head_dim", "d_model"}};
  for (const auto& [flag, what] : given.origin) {
    std::string key = flag.rfind("--", 0) == 0 ? flag.substr(2) : flag;
    std::replace(key.begin(), key.end(), '-', '_');
    if (key == "tensor") continue;
    if (const auto a = kAlias.find(key); a != kAlias.end()) key = a->second;
    if (!out.contains(key)) out[key] = what;
  }
  const auto apply = [&](const SchemeSpec& before, const SchemeSpec& after, const std::string& source) {
    const auto num = [&](const char* key, double b, double a) {
      if (!(b == a) && !(std::isnan(b) && std::isnan(a))) out[key] = source;
    };
    const auto integer = [&](const char* key, std::int64_t b, std::int64_t a) {
      if (b != a) out[key] = source;
    };
    const auto text = [&](const char* key, const std::string& b, const std::string& a) {
      if (b != a) out[key] = source;
    };
    integer("d_model", before.d_model, after.d_model);
    num("base", before.base, after.base);
    num("partial_rotary_factor", before.partial_rotary_factor, after.partial_rotary_factor);
    integer("rotary_dim", before.rotary_dim, after.rotary_dim);
    integer("max_position_embeddings", before.max_position_embeddings, after.max_position_embeddings);
    text("rope_scaling", before.rope_scaling, after.rope_scaling);
    num("factor", before.factor, after.factor);
    integer("original_max_position_embeddings", before.original_max_position_embeddings,
            after.original_max_position_embeddings);
    num("beta_fast", before.beta_fast, after.beta_fast);
    num("beta_slow", before.beta_slow, after.beta_slow);
    num("mscale", before.mscale, after.mscale);
    num("mscale_all_dim", before.mscale_all_dim, after.mscale_all_dim);
    num("attention_factor", before.attention_factor, after.attention_factor);
    num("low_freq_factor", before.low_freq_factor, after.low_freq_factor);
    num("high_freq_factor", before.high_freq_factor, after.high_freq_factor);
    text("short_factor", before.short_factor, after.short_factor);
    text("long_factor", before.long_factor, after.long_factor);
    text("layout", before.layout, after.layout);
    text("freq_factors", before.freq_factors, after.freq_factors);
    num("alpha", before.alpha, after.alpha);
    num("rope_ratio", before.rope_ratio, after.rope_ratio);
    if (before.truncate != after.truncate) out["truncate"] = source;
  };
  if (given.scheme != "rope") return out;
  try {
    if (!given.gguf.empty()) {
      SchemeSpec plain = given;
      plain.hf_config.clear();
      apply(plain, WithGguf(plain), "--gguf " + given.gguf);
    }
    if (!given.hf_config.empty()) {
      // Sentinels: a value the config states replaces them, even one equal
      // to the flag's or the default.
      constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
      SchemeSpec probe = given;
      probe.gguf.clear();
      probe.d_model = std::int64_t{1} << 62;
      probe.base = probe.partial_rotary_factor = probe.factor = probe.beta_fast = probe.beta_slow = kNaN;
      probe.mscale = probe.mscale_all_dim = probe.attention_factor = kNaN;
      probe.low_freq_factor = probe.high_freq_factor = probe.alpha = probe.rope_ratio = kNaN;
      probe.rotary_dim = probe.max_position_embeddings = probe.original_max_position_embeddings = -7;
      probe.rope_scaling = "\x01";
      apply(probe, WithHfConfig(probe), "--hf-config " + given.hf_config);
    }
  } catch (const Error&) {
    // The reference itself reports a bad config or GGUF, with its message.
  }
  return out;
}

// The default float32 rule for a RoPE cos/sin multiplied by an attention
// factor a != 1 (YaRN, longrope): the peers compute fl(fl(cos θ)·fl(a)) in
// float32 (transformers: emb.cos() * attention_scaling). With e the error
// the plain rule allows for cos θ (n ulp + the angle term), the product is
// off from v = a·cos θ by at most
//   a·e  +  u·|v| (a rounded to float32)  +  u·|p| (the product rounded)
// plus second-order terms, u = 2^-24. a·n·ulp(cos θ) <= n·a'·ulp(v) with
// a' = a for a >= 1 (v's binade is at least cos θ's) and 2 for a < 1
// (ulp(x) lies in (u|x|, 2u|x|]). So: max_ulp n·a', rtol 3u (the two
// roundings and the second-order terms), angle unit a·u_C.
Tolerance AttentionScaledTolerance(const Tolerance& plain, double a) {
  Tolerance t = plain;
  const double scale = a >= 1 ? a : 2.0;
  t.max_ulp = plain.max_ulp * scale;
  t.rtol = plain.rtol + 3 * std::ldexp(1.0, -24);
  t.angle_unit = plain.angle_unit * a;
  t.why = fmt::format(
      "default for a float32 RoPE table times its attention factor a = {}: {} ulp of float32 (the cos/sin's own "
      "{} ulp times a) + 3·2^-24·|v| (a and the product rounded to float32) + a·2^-24·|θ|·(3 + 2|ln ω|) "
      "(docs/verify.md)",
      a, fmt::format("{:.4g}", t.max_ulp), plain.max_ulp);
  return t;
}

// The reference as it was computed, into `ref`: the spec's common fields as
// the reference used them (a config or GGUF replaces the flags' head
// dimension and base), every other parameter of its metadata, and where
// each came from.
void DescribeUsedReference(const SchemeSpec& given, const Metadata& used, nlohmann::ordered_json* ref) {
  nlohmann::ordered_json& spec = (*ref)["spec"];
  for (const char* key : {"d_model", "max_len", "start"})
    if (const auto v = MetaInt(used, key)) spec[key] = *v;
  if (const MetaValue* b = used.Find("base")) {
    if (const auto* d = std::get_if<double>(b)) spec["base"] = *d;
    else if (const auto* i = std::get_if<std::int64_t>(b)) spec["base"] = static_cast<double>(*i);
  }
  static const std::set<std::string> kShown = {"scheme", "d_model", "max_len", "start", "base", "dtype", "tensor",
                                               "pe_version", "rope_theta", "head_dim", "source_config", "source_gguf"};
  Metadata rest;
  for (const auto& [k, v] : used.entries())
    if (!kShown.count(k)) rest.Set(k, v);
  if (rest.size()) (*ref)["parameters"] = MetadataToJson(rest);
  if (nlohmann::ordered_json sources = ReferenceSources(given); !sources.empty()) (*ref)["sources"] = sources;
}

}  // namespace

nlohmann::ordered_json EntryRef::ToJson() const {
  return {{"row", row},           {"position", position}, {"col", col}, {"expected", JsonNumber(expected)},
          {"found", JsonNumber(found)}, {"error", JsonNumber(error)}, {"limit", JsonNumber(limit)}};
}

std::optional<SchemeSpec> ResolveReferenceSpec(const TableInfo& file, const SpecOverrides& flags,
                                               std::vector<std::string>* notes) {
  const Metadata& m = file.meta;
  const auto meta_scheme = MetaString(m, "scheme");
  if (!meta_scheme && !flags.any()) return std::nullopt;
  SchemeSpec spec;
  auto note_override = [&](const char* flag, const std::string& key, const std::string& given, const std::string& meta) {
    if (given != meta) notes->push_back(fmt::format("{} {} overrides the file's metadata {} = {}", flag, given, key, meta));
  };
  // scheme
  spec.scheme = meta_scheme.value_or("sinusoidal");
  if (flags.scheme) {
    if (meta_scheme) note_override("--scheme", "scheme", *flags.scheme, *meta_scheme);
    spec.scheme = *flags.scheme;
  }
  if (flags.scheme) {
    FindScheme(spec.scheme);  // "did you mean" for a typo, before any work
  } else {
    bool known = false;
    for (const auto& s : Schemes()) known = known || s.name == spec.scheme;
    if (!known)
      ThrowInput(fmt::format("the file's metadata scheme = {}", spec.scheme),
                 "not a scheme pe knows; give --scheme (see 'pe schemes') or --reference");
  }
  // integers: d_model, max_len, start
  struct IntField {
    const char* key;
    const char* flag;
    std::optional<std::int64_t> given;
    std::int64_t* out;
    std::int64_t fallback;
  };
  IntField ints[] = {{"d_model", "--d-model", flags.d_model, &spec.d_model, file.cols},
                     {"max_len", "--max-len", flags.max_len, &spec.max_len, file.rows},
                     {"start", "--start", flags.start, &spec.start, 0}};
  const std::string file_name = flags.path.empty() ? std::string("the file's") : fmt::format("'{}':", flags.path);
  const auto meta_name = [&](const char* key) {
    const MetaValue* v = m.Find(key);
    return fmt::format("{} metadata {}={}", file_name, key, v ? MetaToString(*v) : "");
  };
  for (auto& f : ints) {
    const auto meta = MetaInt(m, f.key);
    // Present but not an integer, or out of range: an input error, never
    // silently the default (docs/verify.md).
    if (!f.given && m.Find(f.key)) {
      const bool is_start = std::string_view(f.key) == "start";
      const auto num = MetaNumber(m, f.key);
      if (!num) ThrowInput(meta_name(f.key), "not a number");
      if (is_start && !(std::fabs(*num) <= static_cast<double>(kMaxExactPosition)))
        ThrowInput(meta_name(f.key), fmt::format("positions must stay within ±2^40 ({})", kMaxExactPosition));
      if (!meta) ThrowInput(meta_name(f.key), "not an integer");
      if (!is_start && *meta < 1)
        ThrowInput(meta_name(f.key), "must be at least 1");
      spec.origin[f.flag] = meta_name(f.key);
    }
    *f.out = meta.value_or(f.fallback);
    if (f.given) {
      if (meta) note_override(f.flag, f.key, std::to_string(*f.given), std::to_string(*meta));
      *f.out = *f.given;
    }
  }
  // base, or Hugging Face's name for it (rope_theta) in files other tools wrote
  const char* base_key = !m.Find("base") && m.Find("rope_theta") ? "rope_theta" : "base";
  const auto meta_base = MetaNumber(m, base_key);
  if (!flags.base && m.Find(base_key)) {
    if (!meta_base || !std::isfinite(*meta_base) || !(*meta_base > 0))
      ThrowInput(meta_name(base_key), "not a finite number above 0");
    spec.origin["--base"] = meta_name(base_key);
  }
  spec.base = meta_base.value_or(10000.0);
  if (flags.base) {
    if (meta_base) note_override("--base", base_key, fmt::format("{}", *flags.base), fmt::format("{}", *meta_base));
    spec.base = *flags.base;
  }
  // dtype: the file's own; a declared one that differs is reported.
  spec.dtype = file.dtype;
  const std::string actual(Traits(file.dtype).name);
  if (const auto md = MetaString(m, "dtype"); md && *md != actual)
    notes->push_back(fmt::format("the file's metadata says dtype = {}, but it holds {}", *md, actual));
  if (flags.dtype) {
    const auto d = DTypeFromName(*flags.dtype);
    if (!d) ThrowUsage(fmt::format("--dtype '{}'", *flags.dtype), fmt::format("unknown type (known: {})", DTypeNames()));
    if (*d != file.dtype)
      notes->push_back(fmt::format("--dtype {}: the {} file is judged as a {} table (tolerance and ulps in {})", *flags.dtype,
                                   actual, *flags.dtype, *flags.dtype));
  }
  return spec;
}

nlohmann::ordered_json SpecToJson(const SchemeSpec& spec) {
  return {{"scheme", spec.scheme}, {"d_model", spec.d_model}, {"max_len", spec.max_len}, {"base", spec.base}, {"start", spec.start}};
}

std::string Compared::Describe() const {
  const auto n = [](std::int64_t k, const char* one, const char* many) {
    return fmt::format("{} {}", k, k == 1 ? one : many);
  };
  std::string out = n(tensors, "tensor", "tensors") + " (" + n(entries, "entry", "entries") + "), " +
                    n(plan_values, "plan value", "plan values");
  if (properties) out += ", " + n(properties, "property check", "property checks");
  return out;
}

nlohmann::ordered_json Compared::ToJson() const {
  return {{"tensors", tensors}, {"entries", entries}, {"plan_values", plan_values}, {"properties", properties}};
}

void SettleVerdict(VerifyReport& rep, bool allow_empty, const std::vector<std::string>& reasons) {
  rep.compared = Compared{};
  rep.allow_empty = allow_empty;
  bool all_passed = true;
  std::vector<std::string> why = reasons;
  for (const Check& c : rep.checks) {
    if (c.skipped) {
      why.push_back(fmt::format("{} skipped ({})", c.name, c.summary));
      continue;
    }
    all_passed = all_passed && c.passed;
    rep.compared.tensors += c.compared_entries > 0;
    rep.compared.entries += c.compared_entries;
    rep.compared.plan_values += c.compared_plan_values;
    rep.compared.properties += c.compared_property;
    if (c.compared_entries == 0 && c.compared_plan_values == 0 && !c.compared_property)
      why.push_back(fmt::format("{} compared no value ({})", c.name, c.summary));
  }
  rep.nothing_compared.clear();
  if (rep.compared.nothing())
    rep.nothing_compared = why.empty() ? std::string("no check ran") : fmt::format("{}", fmt::join(why, "; "));
  rep.passed = all_passed && (rep.nothing_compared.empty() || allow_empty);
}

nlohmann::ordered_json VerifyReport::ToJson() const {
  nlohmann::ordered_json j;
  j["schema"] = "pe.verify/1";
  j["file"] = file;
  j["shape"] = {info.rows, info.cols};
  j["dtype"] = std::string(Traits(info.dtype).name);
  j["passed"] = passed;
  j["exit_code"] = passed ? 0 : 1;
  nlohmann::ordered_json ref = {{"kind", reference_kind}};
  for (const auto& [k, v] : reference.items()) ref[k] = v;
  j["reference"] = ref;
  j["notes"] = notes;
  j["tolerance"] = tolerance.ToJson();
  nlohmann::ordered_json cs = nlohmann::ordered_json::array();
  for (const auto& c : checks) cs.push_back(c.ToJson());
  j["checks"] = cs;
  if (diagnosed) {
    j["diagnosis"] = {{"summary", diagnosis_text},
                      {"identification", rope_diagnosis     ? rope_diagnosis->ToJson()
                                         : !scheme_diagnosis.is_null() ? scheme_diagnosis
                                                                       : diagnosis.ToJson()}};
  } else {
    j["diagnosis"] = nullptr;
  }
  // What was compared (after the existing keys: their order is a contract).
  j["compared"] = compared.ToJson();
  j["nothing_compared"] = nothing_compared.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(nothing_compared);
  j["allow_empty"] = allow_empty;
  return j;
}

namespace {

// The statistics pass only where a figure needs it (padding rows without
// a reference, a pairing found in the file, the diagnosis): a passing
// verify against a reference reads the table once less.
class LazyStats {
 public:
  explicit LazyStats(RowSource& table) : table_(table) {}
  const TableStats& Get() {
    if (!stats_) stats_ = ComputeStats(table_);
    return *stats_;
  }

 private:
  RowSource& table_;
  std::optional<TableStats> stats_;
};

// The reference of a verification: a table the spec generates (exact,
// float64) or the reference file, the first position, the scheme's own
// property checks, the shape a plain table declares, a RoPE tensor's name.
// Fills rep's reference description, tolerance and notes.
struct ReferencePlan {
  std::unique_ptr<RowSource> generated;
  RowSource* ref = nullptr;
  std::int64_t start = 0;
  /// The scheme's own default property checks (grids, buckets, slopes: rows
  /// that are not a 1-D position sequence); nullopt = the generic rule.
  std::optional<std::vector<std::string>> scheme_checks;
  std::optional<std::pair<std::int64_t, std::int64_t>> declared_shape;  // rows, cols
  /// A RoPE reference: its tensor ("cos", "sin", "inv_freq"); an inv_freq is
  /// a vector of frequencies, judged by its own rule (rope_verify.h).
  std::string rope_tensor;
  /// Per column, the angle term's factor of a recipe with its own bound
  /// (--semantics llama.cpp: ggml's recurrence); empty = the plain rule.
  std::vector<double> col_angle_factor;
};

ReferencePlan PlanReference(const VerifyOptions& o, VerifyReport& rep) {
  const TableInfo& info = rep.info;
  ReferencePlan plan;
  plan.ref = o.reference_file;
  plan.start = MetaInt(info.meta, "start").value_or(0);
  if (o.spec) {
    SchemeSpec spec = *o.spec;
    rep.reference_kind = "scheme";
    rep.reference["spec"] = SpecToJson(spec);
    plan.start = spec.start;
    spec.dtype = DType::kFloat64;  // compare with the exact value, not a rounded one
    // The declared shape first (cheap): a file whose metadata says
    // d_model=100000000 must not cost a 100,000,000-column plan before its
    // 8 columns are found wrong. The schemes whose table is [max_len, d_model].
    static const std::set<std::string> kPlainShape = {"sinusoidal", "tensor2tensor", "fairseq",
                                                      "marian",     "sin-only",      "learned"};
    if (kPlainShape.count(spec.scheme) && spec.init_from.empty() && (spec.max_len != info.rows || spec.d_model != info.cols))
      plan.declared_shape = {spec.max_len, spec.d_model};
  }
  if (o.spec && !plan.declared_shape) {
    SchemeSpec spec = *o.spec;
    spec.dtype = DType::kFloat64;
    // Multi-tensor schemes (RoPE cos/sin/inv_freq, ALiBi slopes/bias): the
    // tensor named by the spec (metadata "tensor" or --tensor), else the one
    // named like the file's dataset, else the scheme's first.
    TableSet set = MakeTableSet(spec);
    DescribeUsedReference(*o.spec, set.meta, &rep.reference);
    // A float32 RoPE cos/sin scaled by an attention factor: its product's
    // roundings are budgeted too (AttentionScaledTolerance).
    if ((spec.scheme == "rope" || spec.scheme == "mrope") && rep.tolerance.is_default &&
        rep.tolerance.dtype == DType::kFloat32)
      if (const MetaValue* af = set.meta.Find("attention_factor"))
        if (const auto* a = std::get_if<double>(af); a && std::isfinite(*a) && *a > 0 && *a != 1)
          if (const std::string t = set.Find(info.name) ? info.name : set.tensors.front()->info().name;
              t == "cos" || t == "sin")
            rep.tolerance = AttentionScaledTolerance(rep.tolerance, *a);
    if (set.tensors.size() == 1) plan.generated = std::move(set.tensors.front());
    else if (set.Find(info.name)) plan.generated = set.Take(info.name);
    else plan.generated = std::move(set.tensors.front());
    plan.ref = plan.generated.get();
    // The schemes whose peers round more than the plain sinusoid recipe
    // (tolerance.h): longrope's factor list, M-RoPE's and the vision
    // rotaries' per-entry ids, ALiBi's float32 powers, xPos's scale.
    if (rep.tolerance.is_default) {
      const std::string tensor = plan.ref->info().name;
      const MetaValue* scaling = set.meta.Find("rope_scaling");
      if ((spec.scheme == "rope" || spec.scheme == "mrope") && scaling && MetaToString(*scaling) == "longrope" &&
          (tensor == "cos" || tensor == "sin"))
        rep.tolerance = LongropeTolerance(rep.tolerance);
      if (dynamic_cast<AxisRotarySource*>(plan.ref)) rep.tolerance = AxisRotaryTolerance(rep.tolerance, spec.scheme);
      if (spec.scheme == "alibi") rep.tolerance = AlibiTolerance(rep.tolerance, spec.heads);
      if (spec.scheme == "xpos" && tensor == "scale") {
        const auto first = MetaInt(set.meta, "scale_first_position").value_or(0);
        const double last = static_cast<double>(first) + static_cast<double>(plan.ref->info().rows) - 1;
        rep.tolerance = XposScaleTolerance(
            rep.tolerance, std::max(std::fabs(static_cast<double>(first)), std::fabs(last)) / spec.scale_base);
      }
    }
    if (spec.scheme == "rope" && rep.tolerance.is_default && rep.tolerance.angle_unit > 0)
      if (const std::string t = plan.ref->info().name; t == "cos" || t == "sin")
        plan.col_angle_factor = GgmlColumnFactors(spec, plan.ref->info().cols, &rep.tolerance);
    // M-RoPE under llama.cpp: the same recurrence per stream (ggml_mrope_cache_init).
    if (spec.scheme == "mrope" && rep.tolerance.is_default && rep.tolerance.angle_unit > 0)
      if (const std::string t = plan.ref->info().name; t == "cos" || t == "sin")
        plan.col_angle_factor = GgmlColumnFactors(MropeFrequencySpec(spec), plan.ref->info().cols, &rep.tolerance);
    if (spec.scheme == "rope") {
      plan.rope_tensor = plan.ref->info().name;
      rep.reference["tensor"] = plan.rope_tensor;
      if (plan.rope_tensor == "inv_freq") {
        rep.reference["frequencies"] = plan.ref->info().rows;
        rep.tolerance.why = InvFreqToleranceWhy(rep.tolerance);
      }
    }
    // A table judged in float32/float16/bfloat16 ulps needs the exact value
    // to far below that ulp, not to 1 ulp of double: the fast float64
    // sinusoid (2^-50 relative; entries near a rounding boundary of the
    // judged dtype from the quad path) is ~30x cheaper (docs/numerics.md).
    if (rep.tolerance.dtype != DType::kFloat64)
      if (auto* sinusoid = dynamic_cast<SinusoidSource*>(plan.ref)) sinusoid->SetFastFloat64(rep.tolerance.dtype);
    if (const SchemeInfo& si = FindScheme(spec.scheme); si.default_checks)
      plan.scheme_checks = si.default_checks(*o.spec, si.tensors.empty() ? std::string_view() : std::string_view(plan.ref->info().name));
    // Metadata the scheme itself writes (layout, ...) that the file contradicts.
    for (const auto& [key, value] : plan.ref->info().meta.entries()) {
      if (key == "pe_version" || key == "dtype" || key == "max_len" || key == "d_model" || key == "base" || key == "rope_theta" ||
          key == "start" || key == "scheme")
        continue;
      if (const MetaValue* fv = info.meta.Find(key); fv && MetaToString(*fv) != MetaToString(value))
        rep.notes.push_back(fmt::format("the file's metadata says {} = {}, but scheme '{}' produces {} = {}", key,
                                        MetaToString(*fv), spec.scheme, key, MetaToString(value)));
    }
  } else if (plan.ref) {
    rep.reference_kind = "file";
    rep.reference["path"] = o.reference_path;
    rep.reference["shape"] = {plan.ref->info().rows, plan.ref->info().cols};
    rep.reference["dtype"] = std::string(Traits(plan.ref->info().dtype).name);
    plan.start = MetaInt(plan.ref->info().meta, "start").value_or(plan.start);
  }

  return plan;
}

// The "shape" check against the reference (or the declared shape); true
// when the shapes agree. `ref_head`: the reference's head, when it does.
bool AddShapeCheck(const ReferencePlan& plan, VerifyReport& rep, HeadAnalysis* ref_head_out) {
  const TableInfo& info = rep.info;
  HeadAnalysis& ref_head = *ref_head_out;
  bool shape_ok = true;
  if (plan.ref || plan.declared_shape) {
    Check shape;
    shape.name = "shape";
    TableInfo ri;
    if (plan.ref) {
      ri = plan.ref->info();
    } else {
      ri.rows = plan.declared_shape->first;
      ri.cols = plan.declared_shape->second;
    }
    shape_ok = ri.rows == info.rows && ri.cols == info.cols;
    shape.passed = shape_ok;
    shape.measured = shape_ok ? 0 : 1;
    shape.limit = 0;
    shape.limit_why = "the table must have the reference's rows (positions) and columns";
    shape.summary = fmt::format("file [{}, {}], reference [{}, {}]", info.rows, info.cols, ri.rows, ri.cols);
    shape.details = {{"file", {info.rows, info.cols}}, {"reference", {ri.rows, ri.cols}}};
    rep.checks.push_back(shape);
    if (shape_ok && plan.ref) ref_head = AnalyseHead(*plan.ref);
  }

  return shape_ok;
}

// The entry-by-entry comparison with the reference, streamed over row
// blocks on every core (analysis/verify/reference_compare.h); `folds` ride on its
// read of the table (bounds, norm, unique).
Check ReferenceCheck(RowSource& table, const ReferencePlan& plan, const VerifyReport& rep, const HeadAnalysis& ref_head,
                     const VerifyOptions& o, RowFolds& folds) {
  const TableInfo& info = rep.info;
  Check c;
  c.name = "reference";
  // Streamed over row blocks on every core; the same figures as one
  // sequential pass (analysis/verify/reference_compare.h).
  ReferenceCompareOptions ro;
  ro.tolerance = rep.tolerance;
  ro.col_omega = ref_head.col_omega;
  ro.col_angle_factor = plan.col_angle_factor;
  // Rows whose columns take different ids (M-RoPE's t, h, w; a patch's
  // row and column): each entry's own angle for the angle term.
  if (auto* axis = dynamic_cast<AxisRotarySource*>(plan.ref); axis && rep.tolerance.angle_unit > 0) {
    ro.col_omega = axis->ColumnOmega();
    ro.entry_angle = [axis](std::int64_t first, std::int64_t count, double* out) { axis->EntryAngles(first, count, out); };
  }
  // A table at listed positions (--positions): each row's own position,
  // for the angle term and to name where it differs.
  const auto* positioned = dynamic_cast<const PositionedRows*>(plan.ref);
  if (positioned && rep.tolerance.angle_unit > 0) {
    const std::vector<double> omega = ro.col_omega;
    ro.entry_angle = [positioned, omega](std::int64_t first, std::int64_t count, double* out) {
      const std::size_t cols = omega.size();
      for (std::int64_t r = 0; r < count; ++r)
        for (std::size_t j = 0; j < cols; ++j)
          out[static_cast<std::size_t>(r) * cols + j] =
              static_cast<double>(positioned->ids()[static_cast<std::size_t>(first + r)]) * omega[j];
    };
  }
  ro.start = plan.start;
  ro.inv_freq = plan.rope_tensor == "inv_freq";
  ro.on_rows = o.on_rows;
  if (!folds.empty()) ro.fold = &folds;
  // The recurrence's rows as a filter, when the reference is a sinusoid
  // with fast float64 rows: most entries then never need the reference.
  if (auto* sinusoid = dynamic_cast<SinusoidSource*>(plan.ref); sinusoid && sinusoid->has_approx_rows())
    ro.approx_reference = [sinusoid](std::int64_t first, std::int64_t count, double* out, double* bound,
                                     std::shared_ptr<void>& state) {
      // The recurrence continues from one chunk of a thread to the next.
      if (!state) state = std::make_shared<SinCosBatch::RecurrenceState>();
      return sinusoid->ReadRowsApprox(first, count, out, bound, static_cast<SinCosBatch::RecurrenceState*>(state.get()));
    };
  if (auto* sinusoid = dynamic_cast<SinusoidSource*>(plan.ref); sinusoid && sinusoid->has_approx_rows())
    ro.recurrence = sinusoid->interleaved_recurrence(), ro.recurrence_start = sinusoid->start();
  const ReferenceComparison cmp = CompareWithReference(table, *plan.ref, ro);
  const auto entry = [positioned](const ComparedEntry& e) {
    const std::int64_t position =
        positioned && e.row >= 0 && e.row < static_cast<std::int64_t>(positioned->ids().size())
            ? positioned->ids()[static_cast<std::size_t>(e.row)]
            : e.position;
    return EntryRef{e.row, position, e.col, e.expected, e.found, e.error, e.limit};
  };
  const double max_abs = cmp.max_abs, max_rel = cmp.max_rel, max_ulp = cmp.max_ulp, max_ratio = cmp.max_ratio;
  const std::int64_t over = cmp.over, nonfinite = cmp.nonfinite, vacuous = cmp.vacuous;
  const EntryRef worst = entry(cmp.worst), worst_ratio = entry(cmp.worst_ratio), first_over = entry(cmp.first_over);
  const bool have_first = cmp.have_first;
  const std::int64_t entries = info.rows * info.cols;
  c.passed = over == 0;
  c.compared_entries = entries - vacuous;  // any value passes the vacuous ones
  c.measured = max_ratio;
  c.limit = 1;
  c.limit_why = rep.tolerance.why;
  c.details = {{"entries", entries},
               {"count_over", over},
               {"nonfinite", nonfinite},
               {"max_abs_err", JsonNumber(max_abs)},
               {"max_rel_err", JsonNumber(max_rel)},
               {"max_ulp_err", JsonNumber(max_ulp)},
               {"ulp_dtype", std::string(Traits(rep.tolerance.dtype).name)},
               {"max_err_over_limit", JsonNumber(max_ratio)},
               {"count_unchecked", vacuous},
               {"worst", worst.ToJson()},
               {"worst_vs_limit", worst_ratio.ToJson()},
               {"first_over", have_first ? first_over.ToJson() : nlohmann::ordered_json()}};
  c.summary = fmt::format(
      "max |err| {} at {} (expected {}, found {}); max rel err {}; max {} ulp({}); {} of {} "
      "{} over tolerance",
      G(max_abs),
      plan.rope_tensor == "inv_freq" ? fmt::format("frequency {}", worst.row)
                                : fmt::format("position {}, column {}", worst.position, worst.col),
      worst.expected, worst.found, G(max_rel), G(max_ulp), Traits(rep.tolerance.dtype).name, over, entries,
      plan.rope_tensor == "inv_freq" ? "frequencies" : "entries");
  if (nonfinite) c.summary += fmt::format(" ({} NaN or infinite)", nonfinite);
  if (vacuous)
    c.summary += fmt::format(
        "; {} of {} entries are unchecked: at their angles the limit exceeds the values' range (an angle computed "
        "in {} no longer determines the value), so any value passes; --max-ulp N checks them against the exact values",
        vacuous, entries, Traits(rep.tolerance.dtype).name);
  return c;
}

// A RoPE cos/sin table that fails the declared rule but lies within the
// bound of llama.cpp's float32 recipe for the same parameters (ggml's
// recurrence, GgmlColumnFactors): that recipe is the simplest explanation,
// not a wrong base or factor.
bool FitsGgmlRecipe(RowSource& table, const VerifyOptions& o, const ReferencePlan& plan, const HeadAnalysis& ref_head,
                    const VerifyReport& rep) {
  if (!o.spec || SemanticsFamily(o.spec->semantics) == EngineFamily::kLlamaCpp || !rep.tolerance.is_default ||
      rep.tolerance.angle_unit == 0 ||
      (plan.rope_tensor != "cos" && plan.rope_tensor != "sin"))
    return false;
  SchemeSpec alt = *o.spec;
  alt.semantics = "llama.cpp";
  alt.dtype = DType::kFloat64;
  std::unique_ptr<RowSource> ref;
  Tolerance t = rep.tolerance;
  ReferenceCompareOptions ro;
  try {
    TableSet set = MakeTableSet(alt);
    if (!set.Find(plan.rope_tensor)) return false;
    ref = set.Take(plan.rope_tensor);
    ro.col_angle_factor = GgmlColumnFactors(alt, ref->info().cols, &t);
  } catch (const Error&) {
    return false;  // a scaling llama.cpp has no rule for
  }
  if (ro.col_angle_factor.empty() || ref->info().rows != table.info().rows || ref->info().cols != table.info().cols)
    return false;
  ro.tolerance = t;
  ro.col_omega = ref_head.col_omega;
  ro.start = plan.start;
  return CompareWithReference(table, *ref, ro).over == 0;
}

// An M-RoPE cos/sin table that fails transformers' rule but passes
// llama.cpp's (ggml_rope_multi: a pair in no t/h/w section reads the fourth
// position, which llama.cpp sets to 0): returns the flags that pass it, or
// "" when llama.cpp's reading does not explain the table either.
std::string FitsGgmlMrope(RowSource& table, const VerifyOptions& o, const ReferencePlan& plan, const VerifyReport& rep) {
  if (!o.spec || SemanticsFamily(o.spec->semantics) == EngineFamily::kLlamaCpp || !rep.tolerance.is_default ||
      rep.tolerance.angle_unit == 0)
    return "";
  const std::string tensor = plan.ref ? plan.ref->info().name : std::string();
  if (tensor != "cos" && tensor != "sin") return "";
  SchemeSpec alt = *o.spec;
  alt.semantics = "llama.cpp";
  alt.dtype = DType::kFloat64;
  try {
    const SchemeSpec resolved = MropeFrequencySpec(alt);
    if (std::count(resolved.mrope_section.begin(), resolved.mrope_section.end(), ',') == 2) {
      alt.mrope_section = resolved.mrope_section + ",0";
      alt.hf_config.clear();
      alt = MropeFrequencySpec(alt);  // the config's other values, applied once
      alt.semantics = "llama.cpp";
      alt.dtype = DType::kFloat64;
    }
    TableSet set = MakeTableSet(alt);
    if (!set.Find(tensor)) return "";
    std::unique_ptr<RowSource> ref = set.Take(tensor);
    auto* axis = dynamic_cast<AxisRotarySource*>(ref.get());
    if (!axis || ref->info().rows != table.info().rows || ref->info().cols != table.info().cols) return "";
    ReferenceCompareOptions ro;
    ro.tolerance = rep.tolerance;  // already the axis-rotary rule (PlanReference)
    ro.col_angle_factor = GgmlColumnFactors(MropeFrequencySpec(alt), ref->info().cols, &ro.tolerance);
    ro.col_omega = axis->ColumnOmega();
    ro.entry_angle = [axis](std::int64_t first, std::int64_t count, double* out) { axis->EntryAngles(first, count, out); };
    ro.start = plan.start;
    if (CompareWithReference(table, *ref, ro).over != 0) return "";
    return fmt::format("--semantics llama.cpp --mrope-section {}", alt.mrope_section);
  } catch (const Error&) {
    return "";
  }
}

// The declared RoPE (its --hf-config applied) replayed with narrow-dtype
// angles, for the tensor the plan compares.
std::optional<AngleDtypeFit> FitAngleDtypeOfDeclared(RowSource& table, const SchemeSpec& spec, const ReferencePlan& plan,
                                                     DType grid) {
  try {
    SchemeSpec d = WithHfConfig(spec);
    d.start = plan.start;
    return FitAngleDtype(table, d, plan.rope_tensor.empty() ? std::string("cos") : plan.rope_tensor, grid);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Diagnosis of a failed verification: what does the table match, and how
// does that differ from the declared reference?
void Diagnose(RowSource& table, const VerifyOptions& o, const ReferencePlan& plan, bool shape_ok,
              const HeadAnalysis& ref_head, LazyStats& stats, VerifyReport& rep) {
  const TableInfo& info = rep.info;
  const bool failed = true;
  if (failed && o.diagnose && o.spec && o.spec->scheme == "rope" && FitsGgmlRecipe(table, o, plan, ref_head, rep)) {
    rep.diagnosed = true;
    rep.diagnosis_text =
        "llama.cpp's float32 recipe (ggml's theta *= theta_scale recurrence, whose angle error grows with the pair "
        "index): within its bound for these parameters; pass with --semantics llama.cpp";
  } else if (std::string fix = failed && o.diagnose && o.spec && o.spec->scheme == "mrope" && shape_ok
                                    ? FitsGgmlMrope(table, o, plan, rep)
                                    : std::string();
             !fix.empty()) {
    rep.diagnosed = true;
    rep.diagnosis_text = fmt::format(
        "llama.cpp's M-RoPE (ggml_rope_multi): the pairs in no t/h/w section read the fourth (e) position, which "
        "llama.cpp sets to 0 for text and image tokens (never rotated; transformers rotates them by t); the table "
        "passes with {}",
        fix);
  } else if (std::optional<AngleDtypeFit> angles =
                 failed && o.diagnose && o.spec && o.spec->scheme == "rope" && shape_ok
                     ? FitAngleDtypeOfDeclared(table, *o.spec, plan, stats.Get().grid)
                     : std::nullopt) {
    // Before any fit of base or factors: the declared RoPE with its angles
    // rounded to a narrow dtype (rope_angle_dtype.h).
    rep.diagnosed = true;
    rep.diagnosis_text = angles->text;
    rep.scheme_diagnosis = angles->ToJson();
  } else if (failed && o.diagnose && o.spec && o.spec->scheme == "rope") {
    RopeIdentifyOptions ro;
    if (MetaInt(info.meta, "start")) ro.start_hint = MetaInt(info.meta, "start");
    rep.rope_diagnosis = IdentifyRope(table, stats.Get(), ro);
    rep.diagnosed = true;
    rep.diagnosis_text = RopeDiagnosis(*rep.rope_diagnosis, *o.spec, plan.rope_tensor, TensorFlagFor(info));
  } else if (auto* axis = dynamic_cast<AxisRotarySource*>(plan.ref); failed && o.diagnose && axis && shape_ok) {
    // M-RoPE and the vision rotaries: no 1-D sinusoid; the declared ids and
    // frequencies replayed under the common faults.
    AxisRotaryDiagnosis a = DiagnoseAxisRotary(table, *axis, DefaultTolerance(rep.tolerance.dtype), plan.ref->info().name,
                                               o.spec ? o.spec->scheme : std::string("rotary"),
                                               o.spec && o.spec->scheme != "vision-rope" ? o.spec->base
                                               : o.spec && (o.spec->variant == "pixtral" || o.spec->variant == "qwen2-vl")
                                                   ? o.spec->base
                                                   : 0.0);
    rep.diagnosed = true;
    rep.diagnosis_text = std::move(a.text);
    rep.scheme_diagnosis = std::move(a.json);
  } else if (failed && o.diagnose && o.spec && o.spec->scheme == "xpos" && plan.ref && shape_ok && plan.ref->info().name == "scale") {
    // A scale is a power, no sinusoid: the declared powers replayed with
    // other scale bases and shifted positions.
    XposScaleDiagnosis x = DiagnoseXposScale(table, *o.spec, MetaInt(plan.ref->info().meta, "scale_first_position").value_or(0),
                                             rep.tolerance);
    rep.diagnosed = true;
    rep.diagnosis_text = std::move(x.text);
    rep.scheme_diagnosis = std::move(x.json);
  } else if (failed && o.diagnose && o.spec && o.spec->scheme == "alibi") {
    // Slopes and biases are no sinusoids: the ALiBi reading of the table.
    AlibiDiagnosisResult a = DiagnoseAlibi(table, *o.spec, plan.ref ? plan.ref->info().name : std::string("bias"));
    rep.diagnosed = true;
    rep.diagnosis_text = std::move(a.text);
    rep.scheme_diagnosis = std::move(a.json);
  } else if (failed && o.diagnose) {
    IdentifyOptions io;
    if (MetaInt(info.meta, "start")) io.start_hint = MetaInt(info.meta, "start");
    rep.diagnosis = Identify(table, stats.Get(), io);
    rep.diagnosed = true;
    const Identification& id = rep.diagnosis;
    if (!id.matched) {
      rep.diagnosis_text = "no known sinusoid variant matches: " + id.reason;
    } else {
      rep.diagnosis_text = fmt::format("matches {}{} to within {} (precision: {}{})", id.variant.Describe(),
                                       id.known_as.empty() ? "" : " (" + id.known_as + ")", G(id.max_abs_err), id.precision,
                                       id.recipe ? ", recipe " + std::string(RecipeOf(*id.recipe).name) : "");
      if (stats.Get().grid != info.dtype && stats.Get().grid != rep.tolerance.dtype)
        rep.diagnosis_text += fmt::format("; its values are {} numbers: --dtype {} judges it at that precision",
                                          Traits(stats.Get().grid).name, Traits(stats.Get().grid).name);
      if (plan.ref && shape_ok) {
        TableStats rs;
        rs.rows = plan.ref->info().rows;
        rs.cols = plan.ref->info().cols;
        rs.grid = plan.ref->info().dtype;
        rs.zero_rows = ref_head.zero_rows;
        rs.zero_row_count = static_cast<std::int64_t>(rs.zero_rows.size());
        IdentifyOptions ro;
        ro.start_hint = plan.start;
        ro.max_entries = std::int64_t{1} << 16;  // the reference is exact: a small sample identifies it
        const Identification rid = Identify(*plan.ref, rs, ro);
        if (rid.matched) {
          const std::string diff = Differences(id.variant, rid.variant);
          if (!diff.empty()) rep.diagnosis_text += "; the reference is " + rid.variant.Describe() + "; differs in: " + diff;
          else if (id.precision != "exact")
            rep.diagnosis_text += fmt::format("; the same variant as the reference, differing only in precision ({})", id.precision);
        }
      }
    }
  }
}

}  // namespace

VerifyReport Verify(RowSource& table, const std::string& path, const VerifyOptions& o) {
  VerifyReport rep;
  rep.file = path;
  rep.info = table.info();
  rep.notes = o.notes;
  const TableInfo& info = rep.info;
  rep.tolerance = o.tolerance.value_or(DefaultTolerance(info.dtype));
  std::vector<std::string> checks = o.checks;
  CheckPropertyCheckNames(checks);  // a usage error before a table is read, not after
  if (!o.spec && !o.reference_file && checks.empty())
    ThrowUsage(fmt::format("'{}'", path),
               "nothing to verify against: the file has no scheme metadata; give --scheme/--d-model/... , "
               "--reference FILE, or --check");
  LazyStats stats(table);

  ReferencePlan plan = PlanReference(o, rep);
  RowSource* ref = plan.ref;
  const std::int64_t start = plan.start;
  HeadAnalysis ref_head;
  const bool shape_ok = ref || plan.declared_shape ? AddShapeCheck(plan, rep, &ref_head) : true;

  // Property checks: which, and their options (set before the comparison,
  // which measures bounds and norm on its read of the table).
  if (!o.checks_given) {
    if (plan.scheme_checks) checks = *plan.scheme_checks;
    else if (ref && shape_ok && ref_head.pairing.found) checks = PropertyCheckNames();
    else if (ref) checks = {"unique"};
  }
  PropertyOptions po;
  if (!checks.empty()) {
    po.checks = checks;
    po.offsets = o.offsets;
    po.start = start;
    // Property limits follow the default rule for the judged dtype: an
    // explicit --atol/--rtol/--max-ulp is about agreement with the reference,
    // not about the rounding noise a property must allow.
    po.tolerance = DefaultTolerance(rep.tolerance.dtype);
    // Padding rows: those the reference itself zeroes (fairseq's padding_idx
    // row); without a reference, the file's all-zero rows.
    po.skip_rows = ref && shape_ok ? ref_head.zero_rows : stats.Get().zero_rows;
    po.reference = ref && shape_ok ? ref : nullptr;  // "unique" excuses rows the dtype itself makes equal
    if (ref && shape_ok && ref_head.pairing.found) {
      po.pairing = ref_head.pairing;
      po.omega_known = true;
    } else if (info.cols > kMaxWidth) {
      // Wider than any table pe makes: no pairing is looked for (the head
      // as doubles would be twice the rows it holds); the checks that need
      // one skip.
      po.pairing = Pairing{};
    } else {
      const std::int64_t n = HeadRows(info);
      std::vector<std::byte> scratch;
      std::vector<double> head;
      ReadRowsAsDouble(table, 0, n, &scratch, &head);
      std::vector<std::int64_t> skip;
      for (auto z : stats.Get().zero_rows)
        if (z < n) skip.push_back(z);
      po.pairing = FindPairing(head, n, info.cols, skip, 1e-2);
    }
  }
  const bool wants_bounds_norm = std::find(checks.begin(), checks.end(), "bounds") != checks.end() ||
                                 std::find(checks.begin(), checks.end(), "norm") != checks.end();
  std::optional<BoundsNormFold> bounds_norm;
  if (wants_bounds_norm && ref && shape_ok) bounds_norm.emplace(info, po);
  // unique too, for a float32 table (the comparison's blocks as they are).
  std::optional<UniqueFold> unique;
  if (std::find(checks.begin(), checks.end(), "unique") != checks.end() && ref && shape_ok &&
      info.dtype == DType::kFloat32)
    unique.emplace(info, po);
  RowFolds folds;
  SharedDistances distances;  // the norm's pass sums the neighbours' distances for unique
  if (bounds_norm && unique) bounds_norm->ShareDistances(&distances), unique->UseDistances(&distances);
  if (bounds_norm) folds.Add(&*bounds_norm);
  if (unique) folds.Add(&*unique);

  // Entry-by-entry comparison with the reference.
  if (ref && shape_ok) rep.checks.push_back(ReferenceCheck(table, plan, rep, ref_head, o, folds));

  if (!checks.empty()) {
    // bounds, norm and unique from the comparison's read of the table, when it runs.
    if (bounds_norm) po.bounds_norm = bounds_norm->Finish();
    if (unique) po.unique = unique->Finish();
    for (Check& c : RunPropertyChecks(table, po)) {
      c.compared_property = !c.skipped;
      rep.checks.push_back(std::move(c));
    }
  }

  SettleVerdict(rep, o.allow_empty);
  // A failed check is diagnosed (a report that compared nothing has none).
  const bool failed = std::any_of(rep.checks.begin(), rep.checks.end(), [](const Check& c) { return !c.skipped && !c.passed; });
  if (failed && o.diagnose) Diagnose(table, o, plan, shape_ok, ref_head, stats, rep);
  return rep;
}

}  // namespace pe
