// The public API of rotation probes (include/pe/probe.h): read a probe,
// reconstruct its structure (analysis/identify/probe_fit.h), build the plan's exact
// cos/sin at float64 through the rope scheme's generator, and compare per
// pair with the tolerance rules of tables (analysis/tolerance.h).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <pe/probe.h>

#include "core/analysis/identify/probe_fit.h"
#include "core/analysis/tolerance.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/spec/position_list.h"

namespace pe {
namespace {

using Json = nlohmann::ordered_json;
constexpr double kPi = 3.14159265358979323846;

std::string Dump(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace); }

std::string Key(std::string k) {
  std::replace(k.begin(), k.end(), '-', '_');
  return k;
}

const std::string* SpecValue(const Spec& s, const std::string& key) {
  const std::string* v = nullptr;
  for (const auto& [k, val] : s.params)
    if (Key(k) == key) v = &val;
  return v;
}

double MetaNum(const MetaList& m, const std::string& key, double fallback) {
  const MetaValue* v = FindMeta(m, key);
  if (!v) return fallback;
  if (const auto* i = std::get_if<std::int64_t>(v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(v)) return *d;
  try {
    return std::stod(std::get<std::string>(*v));
  } catch (const std::exception&) {
    return fallback;
  }
}

std::string MetaStr(const MetaList& m, const std::string& key, const std::string& fallback) {
  const MetaValue* v = FindMeta(m, key);
  return v ? MetaText(*v) : fallback;
}

std::vector<double> ReadDoubles(RowStream& t) {
  const TensorInfo& info = t.info();
  std::vector<std::byte> buf(info.byte_size());
  t.ReadAll(buf.data(), buf.size());
  std::vector<double> out(static_cast<std::size_t>(info.rows * info.cols));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = LoadAsDouble(buf.data(), info.dtype, i);
  return out;
}

ProbeArray ReadProbe(RowStream& probe, const std::vector<std::int64_t>& positions) {
  const TensorInfo& info = probe.info();
  const std::string what = fmt::format("probe '{}'", info.name);
  if (info.shape.size() != 3 || info.shape[1] != info.shape[2])
    ThrowInput(what, fmt::format("shape [{}] is not a probe [L, d, d] (the last two dimensions equal)",
                                 [&] {
                                   std::string s;
                                   for (auto x : info.shape) s += (s.empty() ? "" : ", ") + std::to_string(x);
                                   return s;
                                 }()));
  ProbeArray p;
  p.L = info.shape[0];
  p.d = info.shape[1];
  if (p.d < 2) ThrowInput(what, fmt::format("d = {}: a head of at least 2 channels is needed", p.d));
  if (p.L > kMaxProbeEntries / p.d / p.d)
    ThrowInput(what, fmt::format("{} x {} x {} entries: more than pe's limit of 2^26 ({}) for a probe", p.L, p.d, p.d,
                                 kMaxProbeEntries));
  p.v = ReadDoubles(probe);
  for (std::size_t i = 0; i < p.v.size(); ++i)
    if (!std::isfinite(p.v[i])) {
      const std::int64_t n = static_cast<std::int64_t>(i);
      ThrowInput(what, fmt::format("probe[{}, {}, {}] is {}: a probe holds finite numbers", n / (p.d * p.d),
                                   n / p.d % p.d, n % p.d, p.v[i]));
    }
  if (positions.empty()) {
    for (std::int64_t r = 0; r < p.L; ++r) p.positions.push_back(r);
  } else {
    if (static_cast<std::int64_t>(positions.size()) != p.L)
      ThrowUsage("--positions", fmt::format("{} positions for a probe of {} rows (L = {})", positions.size(), p.L, p.L));
    p.positions = positions;
  }
  return p;
}

void Describe(ProbeStructure& s) {
  Json j;
  j["positions"] = s.positions;
  j["dim"] = s.dim;
  j["is_rotation"] = s.is_rotation;
  if (!s.problem.empty()) j["problem"] = s.problem;
  j["pairing"] = s.pairing;
  if (s.pairing == "neox") j["half"] = s.half;
  j["rotary_dim"] = s.rotary_dim;
  j["missing_pairs"] = s.missing;
  j["unrotated"] = s.unrotated;
  j["unrotated_identity"] = s.unrotated_identity;
  j["scale"] = s.scale;
  j["scale_min"] = s.scale_min;
  j["scale_max"] = s.scale_max;
  j["base"] = s.base > 0 ? Json(s.base) : Json(nullptr);
  j["omega0"] = s.omega0;
  j["base_fit_residual"] = s.base_fit_residual;
  j["rotation_residual"] = s.rotation_residual;
  Json pairs = Json::array();
  for (const auto& p : s.pairs)
    pairs.push_back({{"index", p.index}, {"a", p.a}, {"b", p.b}, {"omega", p.omega}, {"phase", p.phase},
                     {"fit_residual", p.fit_residual}, {"scale", p.scale}});
  j["pairs"] = pairs;
  s.json = Dump(j);
  if (!s.is_rotation) {
    s.summary = fmt::format("not a rotation probe: {}", s.problem);
    return;
  }
  std::string line = fmt::format("rotation probe, {} positions, head {}: channels rotate as {}", s.positions, s.dim,
                                 PairingWords(s.pairing, s.half));
  line += fmt::format(", rotary dim {}", s.rotary_dim);
  if (s.base > 0) line += fmt::format(", base {:.6g}", s.base);
  if (s.base > 0 && std::fabs(s.omega0 - 1) > 1e-6) line += fmt::format(" (ω0 {:.6g})", s.omega0);
  line += fmt::format(", scale {:.6g}", s.scale);
  s.summary = line;
}

// The plan's exact cos/sin [L, cols] at the probe's positions + shift.
struct PlanTables {
  std::int64_t head_dim = 0, rotary_dim = 0, cols = 0;
  std::string layout, scaling, words;
  double attention_factor = 1;
  std::vector<double> inv_freq;
  std::vector<double> cos, sin;  ///< L·cols, row r for probe row r
  Json spec_json;
};

PlanTables BuildPlan(const Spec& base, const std::vector<std::int64_t>& positions, std::int64_t shift) {
  std::vector<std::int64_t> uniq;
  for (auto p : positions) uniq.push_back(p + shift);
  std::sort(uniq.begin(), uniq.end());
  uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
  std::map<std::int64_t, std::pair<std::size_t, std::int64_t>> where;  // position -> (run, row)
  std::vector<std::vector<double>> run_cos, run_sin;
  PlanTables t;
  for (std::size_t i = 0; i < uniq.size();) {
    std::size_t j = i;
    while (j + 1 < uniq.size() && uniq[j + 1] == uniq[j] + 1) ++j;
    Spec s = base;
    s.Set("start", uniq[i]).Set("max_len", static_cast<std::int64_t>(j - i + 1)).Set("dtype", "float64");
    Table table = GenerateTable(s);
    if (run_cos.empty()) {
      const MetaList& m = table.metadata();
      t.head_dim = static_cast<std::int64_t>(MetaNum(m, "head_dim", MetaNum(m, "d_model", 0)));
      t.rotary_dim = static_cast<std::int64_t>(MetaNum(m, "rotary_dim", static_cast<double>(t.head_dim)));
      // Proportional RoPE (Gemma 4) pairs (i, i + head_dim/2) across the whole head, the frequencies past
      // rotary_dim/2 zero (transformers' and vLLM's Gemma4RotaryEmbedding): its pairs span the head.
      if (MetaStr(m, "rope_scaling", "none") == "proportional") t.rotary_dim = t.head_dim;
      t.layout = MetaStr(m, "layout", "half");
      t.scaling = MetaStr(m, "rope_scaling", "none");
      t.attention_factor = MetaNum(m, "attention_factor", 1);
      t.inv_freq = ReadDoubles(table.tensor("inv_freq"));
      t.words = fmt::format("head_dim {}, rotary dim {}, layout {}, base {}, {}, attention factor {:.6g}", t.head_dim,
                            t.rotary_dim, t.layout, MetaStr(m, "base", "?"),
                            t.scaling == "none" ? std::string("no scaling") : t.scaling + " scaling", t.attention_factor);
      for (const auto& [k, v] : m)
        if (k != "pe_version" && k != "max_len" && k != "start" && k != "dtype" && k != "tensor") {
          if (const auto* n = std::get_if<std::int64_t>(&v)) t.spec_json[k] = *n;
          else if (const auto* d = std::get_if<double>(&v)) t.spec_json[k] = *d;
          else t.spec_json[k] = std::get<std::string>(v);
        }
    }
    RowStream& c = table.tensor("cos");
    t.cols = c.info().cols;
    run_cos.push_back(ReadDoubles(c));
    run_sin.push_back(ReadDoubles(table.tensor("sin")));
    for (std::size_t k = i; k <= j; ++k) where[uniq[k]] = {run_cos.size() - 1, static_cast<std::int64_t>(k - i)};
    i = j + 1;
  }
  for (auto p : positions) {
    const auto [run, row] = where.at(p + shift);
    const auto off = static_cast<std::size_t>(row * t.cols);
    t.cos.insert(t.cos.end(), run_cos[run].begin() + static_cast<std::ptrdiff_t>(off),
                 run_cos[run].begin() + static_cast<std::ptrdiff_t>(off + static_cast<std::size_t>(t.cols)));
    t.sin.insert(t.sin.end(), run_sin[run].begin() + static_cast<std::ptrdiff_t>(off),
                 run_sin[run].begin() + static_cast<std::ptrdiff_t>(off + static_cast<std::size_t>(t.cols)));
  }
  return t;
}

// The plan's pairs: (a, b, column of cos/sin).
struct PlanPair {
  std::int64_t a, b, col;
};

std::vector<PlanPair> PlanPairs(const PlanTables& t) {
  std::vector<PlanPair> out;
  const std::int64_t h = t.rotary_dim / 2;
  for (std::int64_t i = 0; i < h; ++i) {
    if (t.layout == "interleaved") out.push_back({2 * i, 2 * i + 1, t.cols == h ? i : 2 * i});
    else out.push_back({i, i + h, i});
  }
  return out;
}

struct Compare {
  double worst_cos = 0, worst_sin = 0, worst_scale = 0;  // ratio err/limit
  double cos_err = 0, cos_lim = 0, sin_err = 0, sin_lim = 0, scale_err = 0, scale_lim = 0;
  std::int64_t cos_r = 0, cos_i = 0, sin_r = 0, sin_i = 0, scale_r = 0, scale_i = 0;
  std::int64_t over_cos = 0, over_sin = 0, over_scale = 0, entries = 0, pairs = 0;
  double plan_scale = 1;
  bool ok() const { return over_cos == 0 && over_sin == 0; }
};

Compare ComparePlan(const ProbeArray& p, const ProbeStructure& s, const PlanTables& t, const Tolerance& tol,
                    std::int64_t shift, double k, double sin_sign) {
  Compare c;
  const auto pp = PlanPairs(t);
  std::vector<double> plan_scales;
  for (std::size_t i = 0; i < pp.size(); ++i) {
    const auto [a, b, col] = pp[i];
    if (b >= p.d || s.partner[static_cast<std::size_t>(a)] != b) continue;
    ++c.pairs;
    const double w = i < t.inv_freq.size() ? t.inv_freq[i] : 0;
    for (std::int64_t r = 0; r < p.L; ++r) {
      const double cr = t.cos[static_cast<std::size_t>(r * t.cols + col)];
      const double sr = t.sin[static_cast<std::size_t>(r * t.cols + col)];
      const double th = static_cast<double>(p.positions[static_cast<std::size_t>(r)] + shift) * w;
      const double lc = tol.Limit(cr, th, w), ls = tol.Limit(sr, th, w);
      const auto I = static_cast<std::int64_t>(i);
      auto see = [&](double found, double expect, double lim, double& worst, double& err, double& l, std::int64_t& rr,
                     std::int64_t& ii, std::int64_t& over) {
        const double e = std::fabs(found - expect);
        const double ratio = lim > 0 ? e / lim : (e > 0 ? INFINITY : 0);
        if (ratio > 1) ++over;
        if (ratio > worst || (worst == 0 && e > err)) worst = ratio, err = e, l = lim, rr = r, ii = I;
        ++c.entries;
      };
      see(k * p.at(r, a, a), cr, lc, c.worst_cos, c.cos_err, c.cos_lim, c.cos_r, c.cos_i, c.over_cos);
      see(k * p.at(r, b, b), cr, lc, c.worst_cos, c.cos_err, c.cos_lim, c.cos_r, c.cos_i, c.over_cos);
      see(sin_sign * k * p.at(r, a, b), sr, ls, c.worst_sin, c.sin_err, c.sin_lim, c.sin_r, c.sin_i, c.over_sin);
      see(-sin_sign * k * p.at(r, b, a), sr, ls, c.worst_sin, c.sin_err, c.sin_lim, c.sin_r, c.sin_i, c.over_sin);
      const double sp = k * std::hypot(p.at(r, a, a), p.at(r, a, b)), sref = std::hypot(cr, sr);
      plan_scales.push_back(sref);
      c.entries -= 1;  // the scale is not an entry
      see(sp, sref, lc + ls, c.worst_scale, c.scale_err, c.scale_lim, c.scale_r, c.scale_i, c.over_scale);
    }
  }
  if (!plan_scales.empty()) {
    std::nth_element(plan_scales.begin(), plan_scales.begin() + static_cast<std::ptrdiff_t>(plan_scales.size() / 2),
                     plan_scales.end());
    c.plan_scale = plan_scales[plan_scales.size() / 2];
  }
  return c;
}

CheckResult Check(const std::string& name, bool pass, double measured, double limit, std::string summary,
                  std::string why = {}) {
  CheckResult c;
  c.name = name;
  c.status = pass ? "pass" : "fail";
  c.measured = measured;
  c.limit = limit;
  c.summary = std::move(summary);
  c.limit_why = std::move(why);
  return c;
}

CheckResult Skip(const std::string& name, std::string why) {
  CheckResult c;
  c.name = name;
  c.status = "skip";
  c.summary = std::move(why);
  return c;
}

// 1.2079, 1.0 (a whole number keeps one decimal).
std::string Num(double x) {
  std::string t = fmt::format("{:.5g}", x);
  if (t.find_first_of(".e") == std::string::npos) t += ".0";
  return t;
}

std::string ShiftWords(std::int64_t k) { return k < 0 ? fmt::format("p−{}", -k) : fmt::format("p+{}", k); }

}  // namespace

bool IsProbeShape(const TensorInfo& info) {
  return info.shape.size() == 3 && info.shape[1] == info.shape[2] && info.shape[1] >= 2 && info.shape[0] >= 1;
}

std::vector<std::int64_t> ParsePositionList(const std::string& text, const std::string& what) {
  return ParsePositionIds(text, what, kMaxProbeEntries / 4);
}

ProbeStructure AnalyzeProbe(RowStream& probe, const std::vector<std::int64_t>& positions) {
  const ProbeArray p = ReadProbe(probe, positions);
  ProbeStructure s = AnalyzeProbeArray(p);
  Describe(s);
  return s;
}

std::string ProbeStructureText(const ProbeStructure& s) {
  std::string out = "probe     " + EscapeText(s.summary) + "\n";
  if (!s.is_rotation) return out;
  if (!s.missing.empty())
    out += fmt::format("          pairs {} of the span are not rotated\n", RangesText(s.missing));
  if (!s.unrotated.empty())
    out += fmt::format("          channels {} unrotated{}\n", RangesText(s.unrotated),
                       s.unrotated_identity ? " (identity)" : " (not exactly identity)");
  if (s.scale_max - s.scale_min > 1e-6 * s.scale)
    out += fmt::format("          scale varies {:.6g} … {:.6g}\n", s.scale_min, s.scale_max);
  if (s.base > 0 && s.base_fit_residual > 1e-3)
    out += fmt::format("          frequencies are not one base's (max |ln ω − fit| {:.3g}): scaled (linear, ntk, yarn, "
                       "llama3, longrope)?\n",
                       s.base_fit_residual);
  const std::size_t n = s.pairs.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (n > 6 && i == 3) {
      out += "          ...\n";
      i = n - 3;
    }
    const auto& p = s.pairs[i];
    out += fmt::format("  pair {:>4}  channels ({}, {})  ω {:.9g}  phase {:.3g}  scale {:.6g}\n", p.index, p.a, p.b, p.omega,
                       p.phase, p.scale);
  }
  return out;
}

namespace {

// The largest |entry| outside each channel's diagonal and its partner.
double StrayOutsidePairs(const ProbeArray& p, const ProbeStructure& s) {
  double stray = 0;
  for (std::int64_t j = 0; j < p.d; ++j) {
    const auto fp = s.partner[static_cast<std::size_t>(j)];
    for (std::int64_t r = 0; r < p.L; ++r)
      for (std::int64_t c = 0; c < p.d; ++c)
        if (c != j && c != fp) stray = std::max(stray, std::fabs(p.at(r, j, c)));
  }
  return stray;
}

// Why the probe's values differ from the plan's (`c`, a failed
// comparison): a scale, the sign of sin, an integer offset of the
// positions, or the base its frequencies fit; appended to `dx`.
void DiagnoseProbeValues(const ProbeArray& p, const ProbeStructure& s, const PlanTables& t, const Tolerance& tol,
                         const Compare& c, const Spec& plan, std::vector<std::string>& dx) {
  const auto pp = PlanPairs(t);
    bool named = false;
    const double k = s.scale > 0 ? c.plan_scale / s.scale : 1;
    // The probe rescaled: its product with the scale was rounded once more.
    Tolerance rescaled = tol;
    rescaled.max_ulp += 1;
    if (c.over_scale > 0) {
      const Compare cs = ComparePlan(p, s, t, rescaled, 0, k, 1.0);
      dx.push_back(fmt::format("scale {}, the plan says {}{}", Num(s.scale), Num(c.plan_scale),
                               cs.ok() ? ": the angles are the plan's (an attention factor missing or extra)" : ""));
      named = cs.ok();
    }
    if (!named) {
      const Compare cf = ComparePlan(p, s, t, c.over_scale ? rescaled : tol, 0, c.over_scale ? k : 1.0, -1.0);
      if (cf.ok()) {
        dx.push_back("rotates the other way: e_a maps to cos·e_a − sin·e_b (sin has the opposite sign)");
        named = true;
      }
    }
    if (!named) {  // an integer offset of the positions
      std::vector<double> cs;
      for (std::size_t i = 0; i < pp.size(); ++i) {
        const double w = t.inv_freq[i];
        if (!(w > 0 && w < 0.3) || s.partner[static_cast<std::size_t>(pp[i].a)] != pp[i].b) continue;
        for (std::int64_t r = 0; r < p.L; ++r) {
          const double tp = std::atan2(p.at(r, pp[i].a, pp[i].b), p.at(r, pp[i].a, pp[i].a));
          const double tr = std::atan2(t.sin[static_cast<std::size_t>(r * t.cols + pp[i].col)],
                                       t.cos[static_cast<std::size_t>(r * t.cols + pp[i].col)]);
          cs.push_back(std::remainder(tp - tr, 2 * kPi) / w);
        }
      }
      if (!cs.empty()) {
        std::nth_element(cs.begin(), cs.begin() + static_cast<std::ptrdiff_t>(cs.size() / 2), cs.end());
        const double sh = cs[cs.size() / 2];
        const auto ks = static_cast<std::int64_t>(std::llround(sh));
        if (ks != 0 && std::fabs(sh - static_cast<double>(ks)) < 0.05 && std::llabs(ks) < (1LL << 30)) {
          try {
            const PlanTables ts = BuildPlan(plan, p.positions, ks);
            const Compare cp = ComparePlan(p, s, ts, c.over_scale ? rescaled : tol, ks, c.over_scale ? k : 1.0, 1.0);
            if (cp.ok()) {
              dx.push_back(fmt::format("positions are those of {}: row r holds the plan's rotation at position "
                                       "p_r {} {} (angles offset by exactly {} step{} of each ω)",
                                       ShiftWords(ks), ks < 0 ? "−" : "+", std::llabs(ks), std::llabs(ks),
                                       std::llabs(ks) == 1 ? "" : "s"));
              named = true;
            }
          } catch (const Error&) {
          }
        }
      }
    }
    if (!named && s.base > 0 && t.inv_freq.size() >= 2) {
      const double plan_base = std::pow(t.inv_freq[0] / t.inv_freq[1], static_cast<double>(t.rotary_dim) / 2.0);
      dx.push_back(fmt::format("the probe's frequencies fit base {:.6g} (ω0 {:.6g}, max |ln ω − fit| {:.3g}); the "
                               "plan's ω1/ω0 is that of base {:.6g}",
                               s.base, s.omega0, s.base_fit_residual, plan_base));
    }
}

// The verdict as JSON (schema pe.verify-probe/1).
std::string ProbeVerifyJson(const ProbeVerifyResult& res, const ProbeRequest& request, const TensorInfo& info,
                            const PlanTables& t, const Tolerance& tol, const ProbeStructure& s) {
  Json j;
  j["schema"] = "pe.verify-probe/1";
  j["file"] = request.name.empty() ? std::string("<memory>") : request.name;
  j["shape"] = info.shape;
  j["dtype"] = std::string(DTypeName(info.dtype));
  j["passed"] = res.passed;
  j["exit_code"] = res.passed ? 0 : 1;
  j["plan"] = t.spec_json;
  j["tolerance"] = tol.ToJson();
  Json checks = Json::array();
  for (const auto& ch : res.checks)
    checks.push_back({{"name", ch.name}, {"status", ch.status}, {"measured", ch.measured}, {"limit", ch.limit},
                      {"summary", ch.summary}});
  j["checks"] = checks;
  j["diagnoses"] = res.diagnoses;
  j["probe"] = Json::parse(s.json);
  return Dump(j);
}

// Channel j's max |probe − I| over the rows, and its max |probe| (0: the
// engine dropped the channel rather than passing it through).
std::pair<double, double> IdentityDeviation(const ProbeArray& p, std::int64_t j) {
  double dev = 0, mag = 0;
  for (std::int64_t r = 0; r < p.L; ++r)
    for (std::int64_t c = 0; c < p.d; ++c) {
      dev = std::max(dev, std::fabs(p.at(r, j, c) - (c == j ? 1.0 : 0.0)));
      mag = std::max(mag, std::fabs(p.at(r, j, c)));
    }
  return {dev, mag};
}

// The diagnosis for channels the plan leaves unrotated that are not the
// identity and do not rotate: all zero is ONNX Runtime's odd rotary dim.
std::string NotIdentityWords(const std::vector<std::int64_t>& extra, const std::vector<std::int64_t>& zeroed,
                             double dev) {
  if (zeroed.size() == extra.size())
    return fmt::format("channels {} are dropped (output 0 at every position); the plan leaves them unrotated: an odd "
                       "rotary dim the engine truncated (ONNX Runtime zeroes the channel past the last pair of an odd "
                       "rotary_embedding_dim)",
                       RangesText(extra));
  return fmt::format("channels {} are not exactly identity (max |probe − I| {:.3g}); the plan leaves them unrotated",
                     RangesText(extra), dev);
}

}  // namespace

// The probe's tolerance: the request's, else the dtype's rule, widened for
// longrope's factors and for a scaled cache.
static Tolerance ProbeTolerance(const ProbeRequest& request, DType judged, const PlanTables& t) {
  const bool expl = request.atol || request.rtol || request.max_ulp;
  Tolerance tol = expl ? ExplicitTolerance(judged, request.atol.value_or(0), request.rtol.value_or(0),
                                           request.max_ulp.value_or(request.atol || request.rtol ? 0 : 1))
                       : DefaultTolerance(judged);
  if (!expl && t.scaling == "longrope") tol = LongropeTolerance(tol);
  if (!expl && t.attention_factor != 1) {
    // An engine's scaled cache (vLLM: cos(θ)·mscale in float32) rounds the product once more.
    tol.max_ulp += 1;
    tol.why += "; +1 ulp: the cos/sin scale's product is rounded once more";
  }
  return tol;
}

ProbeVerifyResult VerifyProbe(RowStream& probe, const ProbeRequest& request) {
  ProbeVerifyResult res;
  Spec spec = request.spec;
  if (spec.scheme.empty()) spec.scheme = "rope";
  spec = CheckSpec(spec);
  if (spec.scheme != "rope")
    ThrowUsage("--probe", fmt::format("checks against a 1-D RoPE plan (--scheme rope, with --hf-config or flags); the "
                                      "scheme is {}",
                                      spec.scheme));
  std::vector<std::int64_t> positions = request.positions;
  std::int64_t start = 0;
  if (const std::string* v = SpecValue(spec, "start")) start = std::stoll(*v);
  Spec plan(spec.scheme);
  bool has_dim = false;
  for (const auto& [k, v] : spec.params) {
    const std::string key = Key(k);
    if (key == "start" || key == "max_len" || key == "dtype" || key == "tensor" || key == "positions") continue;
    if (key == "d_model" || key == "head_dim" || key == "hf_config" || key == "gguf") has_dim = true;
    plan.params.emplace_back(k, v);
  }
  const TensorInfo info = probe.info();
  ProbeArray p = ReadProbe(probe, positions);
  if (positions.empty())
    for (std::int64_t r = 0; r < p.L; ++r) p.positions[static_cast<std::size_t>(r)] = start + r;
  if (!has_dim) plan.Set("d_model", p.d);
  res.found = AnalyzeProbeArray(p);
  Describe(res.found);
  const ProbeStructure& s = res.found;
  const DType judged = request.judge_as.value_or(info.dtype);
  PlanTables t = BuildPlan(plan, p.positions, 0);
  const Tolerance tol = ProbeTolerance(request, judged, t);
  res.plan = t.words;
  res.tolerance = tol.why;
  const std::string plan_pairing = t.layout == "interleaved" ? "norm" : "neox";
  const std::string plan_words = PairingWords(plan_pairing, t.rotary_dim / 2);
  std::vector<std::string>& dx = res.diagnoses;

  // shape
  const bool shape_ok = t.head_dim == p.d && t.rotary_dim <= p.d;
  res.checks.push_back(Check("shape", shape_ok, static_cast<double>(p.d), static_cast<double>(t.head_dim),
                             fmt::format("probe [{}, {}, {}], the plan's head_dim {}", p.L, p.d, p.d, t.head_dim)));
  if (!shape_ok) dx.push_back(fmt::format("the probe's head has {} channels; the plan's head_dim is {}", p.d, t.head_dim));
  const bool structured = shape_ok && s.is_rotation;
  if (shape_ok && !s.is_rotation) {
    res.checks.push_back(Check("pairing", false, 1, 0, s.problem));
    dx.push_back(s.problem);
  }
  if (structured) {
    std::vector<std::int64_t> plan_partner(static_cast<std::size_t>(p.d), -1);
    for (const auto& pp : PlanPairs(t)) plan_partner[static_cast<std::size_t>(pp.a)] = pp.b, plan_partner[static_cast<std::size_t>(pp.b)] = pp.a;
    std::int64_t wrong = 0, not_rot = 0;
    std::vector<std::int64_t> extra;  // rotate where the plan leaves them
    std::vector<std::int64_t> zeroed;  // of those, output 0 at every position (dropped, not passed through)
    double extra_dev = 0;
    for (std::int64_t j = 0; j < p.d; ++j) {
      const auto fp = s.partner[static_cast<std::size_t>(j)], pl = plan_partner[static_cast<std::size_t>(j)];
      if (fp >= 0 && pl >= 0 && fp != pl) ++wrong;
      // A pair of frequency 0 (proportional RoPE's unrotated angles) is the identity in the plan too.
      const std::size_t pair = static_cast<std::size_t>(t.layout == "interleaved" ? j / 2 : j % std::max<std::int64_t>(1, t.rotary_dim / 2));
      const bool zero = pair < t.inv_freq.size() && t.inv_freq[pair] == 0;
      if (pl >= 0 && fp < 0 && !zero) ++not_rot;
      if (pl < 0) {
        const auto [dev, mag] = IdentityDeviation(p, j);
        if (dev > 0) extra.push_back(j);
        if (mag == 0) zeroed.push_back(j);
        extra_dev = std::max(extra_dev, dev);
      }
    }
    res.checks.push_back(Check("pairing", wrong == 0, static_cast<double>(wrong), 0,
                               fmt::format("{} of {} channels pair as the plan's {}; found {}", p.d - wrong, p.d,
                                           plan_words, PairingWords(s.pairing, s.half))));
    if (wrong > 0) {
      std::string line = fmt::format("channels rotate as {}; the plan says {}", PairingWords(s.pairing, s.half),
                                     t.layout == "interleaved" ? "(2i, 2i+1) (NORM)" : fmt::format("(i, i+{}) (NEOX)", t.rotary_dim / 2));
      if (s.pairing == plan_pairing && s.rotary_dim != t.rotary_dim)
        line += fmt::format(": rotary dim {}, the plan's {}{}", s.rotary_dim, t.rotary_dim,
                            s.rotary_dim == p.d && t.rotary_dim < p.d ? " (partial rotary dropped: every channel rotates)" : "");
      dx.push_back(line);
    }
    res.checks.push_back(Check("rotated", not_rot == 0, static_cast<double>(not_rot), 0,
                               fmt::format("{} of the plan's {} rotated channels left unrotated", not_rot, t.rotary_dim)));
    if (not_rot > 0 && wrong == 0) {
      std::vector<std::int64_t> idx, ch;
      const auto pps = PlanPairs(t);
      for (std::size_t i = 0; i < pps.size(); ++i)
        if (s.partner[static_cast<std::size_t>(pps[i].a)] < 0) {
          idx.push_back(static_cast<std::int64_t>(i));
          ch.push_back(pps[i].a);
          ch.push_back(pps[i].b);
        }
      std::sort(ch.begin(), ch.end());
      dx.push_back(fmt::format("pair{} {} {} not rotated (channels {})", idx.size() == 1 ? "" : "s", RangesText(idx),
                               idx.size() == 1 ? "is" : "are", RangesText(ch)));
    }
    const std::int64_t n_plain = p.d - t.rotary_dim;
    res.checks.push_back(n_plain == 0 ? Skip("unrotated", "the plan rotates every channel")
                                      : Check("unrotated", extra.empty(), extra_dev, 0,
                                              fmt::format("channels {}–{} exactly identity: max |probe − I| {:.3g}",
                                                          t.rotary_dim, p.d - 1, extra_dev),
                                              "the plan leaves them unrotated"));
    if (!extra.empty() && wrong == 0) {
      bool rot = false;
      for (auto j : extra) rot = rot || s.partner[static_cast<std::size_t>(j)] >= 0;
      dx.push_back(rot ? fmt::format("channels {} rotate; the plan leaves them unrotated (rotary dim {} of head_dim {})",
                                     RangesText(extra), t.rotary_dim, p.d)
                       : NotIdentityWords(extra, zeroed, extra_dev));
    }
    const double stray = StrayOutsidePairs(p, s);
    const double stray_lim = UlpOf(1.0, judged);
    res.checks.push_back(Check("zeros", stray <= stray_lim, stray, stray_lim,
                               fmt::format("entries outside the pairs: max |x| {:.3g}", stray), "1 ulp of 1"));
    // cos, sin, scale
    const Compare c = ComparePlan(p, s, t, tol, 0, 1.0, 1.0);
    if (c.pairs == 0) {
      res.checks.push_back(Skip("cos", "no pair rotates as the plan's"));
      res.checks.push_back(Skip("sin", "no pair rotates as the plan's"));
      res.checks.push_back(Skip("scale", "no pair rotates as the plan's"));
    } else {
      const auto pp = PlanPairs(t);
      const auto at = [&](std::int64_t r, std::int64_t i) {
        return fmt::format("position {}, pair {} (channels {}, {})", p.positions[static_cast<std::size_t>(r)], i,
                           pp[static_cast<std::size_t>(i)].a, pp[static_cast<std::size_t>(i)].b);
      };
      res.checks.push_back(Check("cos", c.over_cos == 0, c.cos_err, c.cos_lim,
                                 fmt::format("max error {:.3g} of tolerance at {} (|err| {:.3g} against a limit of {:.3g}); "
                                             "{} of {} entries over tolerance",
                                             c.worst_cos, at(c.cos_r, c.cos_i), c.cos_err, c.cos_lim, c.over_cos,
                                             c.entries / 2)));
      res.checks.push_back(Check("sin", c.over_sin == 0, c.sin_err, c.sin_lim,
                                 fmt::format("max error {:.3g} of tolerance at {} (|err| {:.3g} against a limit of {:.3g}); "
                                             "{} of {} entries over tolerance",
                                             c.worst_sin, at(c.sin_r, c.sin_i), c.sin_err, c.sin_lim, c.over_sin,
                                             c.entries / 2)));
      res.checks.push_back(Check("scale", c.over_scale == 0, c.scale_err, c.scale_lim,
                                 fmt::format("scale {:.6g} (min {:.6g}, max {:.6g}), the plan's {:.6g}", s.scale,
                                             s.scale_min, s.scale_max, c.plan_scale)));
      if (request.diagnose && !c.ok()) DiagnoseProbeValues(p, s, t, tol, c, plan, dx);
    }
  }
  res.passed = true;
  for (const auto& ch : res.checks)
    if (ch.status == "fail") res.passed = false;
  res.json = ProbeVerifyJson(res, request, info, t, tol, s);
  return res;
}

std::string ProbeVerifyText(const ProbeVerifyResult& r, const TextStyle& style) {
  std::string out;
  int failed = 0, run = 0;
  for (const auto& c : r.checks) {
    if (c.status != "skip") ++run;
    if (c.status == "fail") ++failed;
  }
  const std::string name = EscapeText(r.json.empty() ? std::string() : Json::parse(r.json).value("file", ""));
  out += style.Status(r.passed ? "PASS" : "FAIL") +
         EscapeText(fmt::format(" — probe {} [{} x {} x {}] against the plan ({})", name, r.found.positions, r.found.dim,
                                r.found.dim, r.plan)) +
         "\n";
  out += "found: " + EscapeText(r.found.summary) + "\n";
  out += "tolerance: " + EscapeText(r.tolerance) + "\n";
  for (const auto& c : r.checks)
    out += style.Status(c.status == "pass" ? "PASS" : c.status == "fail" ? "FAIL" : "SKIP") +
           EscapeText(fmt::format(" {:<10}{}", c.name, c.summary)) + "\n";
  for (const auto& n : r.notes) out += "note: " + EscapeText(n) + "\n";
  if (!r.diagnoses.empty()) {
    out += "diagnosis:\n";
    for (const auto& d : r.diagnoses) out += "  " + EscapeText(d) + "\n";
  }
  out += "result: " + style.Status(r.passed ? "PASS" : "FAIL") +
         EscapeText(r.passed ? fmt::format(" ({} checks)", run) : fmt::format(" ({} of {} checks failed)", failed, run)) +
         "\n";
  return out;
}

}  // namespace pe
