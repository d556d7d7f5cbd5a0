#include "core/analysis/identify/identify_rope.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/analysis/blocks.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/schemes/rope.h"
#include "core/base/table_set.h"

namespace pe {
namespace {

constexpr double kPi = std::numbers::pi;

double RoundTo(double v, DType dtype) {
  switch (dtype) {
    case DType::kFloat64: return v;
    case DType::kFloat32: return static_cast<double>(static_cast<float>(v));
    case DType::kFloat16: return HalfBitsToDouble(DoubleToHalfBits(v));
    case DType::kBFloat16: return BFloat16BitsToDouble(DoubleToBFloat16Bits(v));
  }
  return v;
}

double F32(double v) { return static_cast<double>(static_cast<float>(v)); }

// Unit roundoff of a dtype's grid.
double Unit(DType d) {
  switch (d) {
    case DType::kFloat64: return 0x1p-53;
    case DType::kFloat32: return 0x1p-24;
    case DType::kFloat16: return 0x1p-11;
    case DType::kBFloat16: return 0x1p-8;
  }
  return 0x1p-24;
}

double Wrap(double a) {  // to (-π, π]
  a = std::remainder(a, 2 * kPi);
  return a <= -kPi ? a + 2 * kPi : a;
}

// 500000 and 1000000 as integers (not 1e+06), other values to 6 digits.
std::string G(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:.6g}", v);
}

// The pair of column j (rotary columns only).
std::int64_t PairOf(const std::string& layout, std::int64_t j, std::int64_t dim) {
  return layout == "interleaved" ? j / 2 : j % (dim / 2);
}

// The column holding pair i (its first copy).
std::int64_t ColumnOf(const std::string& layout, std::int64_t i) { return layout == "interleaved" ? 2 * i : i; }

}  // namespace

// HF's float32 inv_freq, each torch operation rounded to float32 as the
// rope_init_fns of modeling_rope_utils.py do them (pow evaluated in double
// and rounded once: torch's float pow is within an ulp of that; Python
// scalars enter float32 ops rounded to float32):
//   default  1.0 / (base ** (arange(0, dim, 2).float() / dim))
//   linear   default / factor
//   ntk      default with base·factor^(dim/(dim-2)) (in double, as Python)
//   llama3   wl = 2π/inv; where(wl > L/low, inv/f, inv); smoothed band
//   yarn     inter·(1 - ef) + extra·ef, ef = 1 - clamp((j - low)/(high - low))
//   longrope 1.0 / (ext_i · base ** (arange/dim))

std::vector<double> HfFloat32InvFreq(const SchemeSpec& spec, const std::vector<double>& exact, std::int64_t dim) {
  const std::size_t half = exact.size();
  const std::string& type = spec.rope_scaling;
  double base = spec.base;
  if (type == "ntk" && dim > 2) base = spec.base * std::pow(spec.factor, static_cast<double>(dim) / static_cast<double>(dim - 2));
  std::vector<double> pos_freqs(half), out(half);
  for (std::size_t i = 0; i < half; ++i) {
    const double e = F32(F32(static_cast<double>(2 * i)) / F32(static_cast<double>(dim)));
    pos_freqs[i] = F32(std::pow(F32(base), e));
    out[i] = F32(1.0 / pos_freqs[i]);
  }
  if (type == "none" || type == "ntk") return out;
  if (type == "linear") {
    for (double& v : out) v = F32(v / F32(spec.factor));
    return out;
  }
  if (type == "llama3") {
    const double f = F32(spec.factor), lf = spec.low_freq_factor, hf = spec.high_freq_factor;
    const double old = static_cast<double>(spec.original_max_position_embeddings > 0 ? spec.original_max_position_embeddings : 8192);
    const double low_wl = old / lf, high_wl = old / hf;
    for (double& inv : out) {
      const double wl = F32(F32(2 * kPi) / inv);
      const double inv_l = wl > F32(low_wl) ? F32(inv / f) : inv;
      const double smooth = F32(F32(F32(F32(old) / wl) - F32(lf)) / F32(hf - lf));
      const double smoothed = F32(F32(F32(F32(1 - smooth) * inv_l) / f) + F32(smooth * inv_l));
      const bool medium = !(wl < F32(high_wl)) && !(wl > F32(low_wl));
      inv = medium ? smoothed : inv_l;
    }
    return out;
  }
  if (type == "yarn") {
    // The factor and length rope.cc uses (DeepSeek-style configs included).
    double factor = spec.factor, l_orig = static_cast<double>(spec.max_position_embeddings);
    if (spec.original_max_position_embeddings > 0) {
      l_orig = static_cast<double>(spec.original_max_position_embeddings);
      if (spec.max_position_embeddings > 0) factor = static_cast<double>(spec.max_position_embeddings) / l_orig;
    }
    auto [low, high] = YarnCorrectionRange(spec.beta_fast, spec.beta_slow, dim, spec.base, l_orig, spec.truncate);
    if (high == low) high += 0.001;
    for (std::size_t j = 0; j < half; ++j) {
      const double ramp = std::clamp(F32(F32(F32(static_cast<double>(j)) - F32(low)) / F32(high - low)), 0.0, 1.0);
      const double ef = F32(1 - ramp);
      const double extra = out[j], inter = F32(1.0 / F32(F32(factor) * pos_freqs[j]));
      out[j] = F32(F32(inter * F32(1 - ef)) + F32(extra * ef));
    }
    return out;
  }
  // longrope and anything newer: the exact value rounded to float32.
  for (std::size_t i = 0; i < half; ++i) out[i] = F32(exact[i]);
  if (type == "longrope" && !spec.short_factor.empty()) {
    std::vector<double> ext;
    std::size_t from = 0;
    const std::string& list = spec.short_factor;
    while (from <= list.size()) {
      std::size_t comma = list.find(',', from);
      if (comma == std::string::npos) comma = list.size();
      try {
        ext.push_back(std::stod(list.substr(from, comma - from)));
      } catch (const std::exception&) {
        return out;
      }
      from = comma + 1;
    }
    if (ext.size() == half)
      for (std::size_t i = 0; i < half; ++i) out[i] = F32(1.0 / F32(F32(ext[i]) * pos_freqs[i]));
  }
  return out;
}

namespace {

SchemeSpec SpecFor(const RopeScalingFit& fit, const RopeShape& shape, std::int64_t rows, std::int64_t start, DType dtype) {
  SchemeSpec s;
  s.scheme = "rope";
  s.d_model = shape.rotary_dim;
  s.max_len = rows;
  s.start = start;
  s.base = fit.base;
  s.dtype = dtype;
  s.layout = shape.layout.empty() ? "half" : shape.layout;
  s.rope_scaling = fit.scaling;
  s.tensor = RopeKindName(shape.kind);
  if (fit.scaling == "linear" || fit.scaling == "ntk" || fit.scaling == "llama3" || fit.scaling == "yarn")
    s.factor = fit.factor;
  if (fit.scaling == "llama3") {
    s.low_freq_factor = fit.low_freq_factor;
    s.high_freq_factor = fit.high_freq_factor;
    s.original_max_position_embeddings = fit.original_max_position_embeddings;
  }
  if (fit.scaling == "yarn") {
    s.max_position_embeddings = fit.original_max_position_embeddings;
    s.beta_fast = fit.beta_fast;
    s.beta_slow = fit.beta_slow;
    s.truncate = fit.truncate;
  }
  if (fit.scaling == "longrope") {
    std::string list;
    for (double f : fit.factors) list += fmt::format("{}{}", list.empty() ? "" : ",", f);
    s.short_factor = s.long_factor = list;
    // Short factors for every row: the original length covers the table.
    s.original_max_position_embeddings = std::max<std::int64_t>(start + rows, 1);
  }
  return s;
}

struct Measured {
  std::vector<double> omega, sigma;
  double amplitude = 1;
  std::int64_t start = 0;
  bool ok = false;
  std::string why;
};

}  // namespace

std::string RopeKindName(RopeKind kind) {
  switch (kind) {
    case RopeKind::kCos: return "cos";
    case RopeKind::kSin: return "sin";
    case RopeKind::kInvFreq: return "inv_freq";
    case RopeKind::kNotRope: return "";
  }
  return "";
}

RopeShape DetectRopeShape(const std::vector<double>& head, std::int64_t rows, std::int64_t cols, const TableInfo& info) {
  RopeShape shape;
  auto at = [&](std::int64_t r, std::int64_t c) { return head[static_cast<std::size_t>(r * cols + c)]; };
  if (cols == 1 || (info.shape.size() == 1)) {
    // A vector: inv_freq when positive, finite and non-increasing.
    if (cols != 1 || rows < 1) return shape;
    for (std::int64_t r = 0; r < rows; ++r) {
      const double v = at(r, 0);
      if (!(v > 0) || !std::isfinite(v) || v > 16) return shape;
      if (r > 0 && v > at(r - 1, 0)) return shape;
    }
    if (rows > 1 && at(rows - 1, 0) == at(0, 0)) return shape;  // constant: no frequency ladder
    shape.kind = RopeKind::kInvFreq;
    shape.rotary_dim = 2 * info.rows;
    return shape;
  }
  if (rows < 3 || cols < 2) return shape;
  for (double v : head)
    if (!std::isfinite(v)) return shape;
  // Trailing constant columns of 0 or 1: candidates for pass-through.
  std::int64_t trailing = 0;
  for (std::int64_t c = cols - 1; c >= 0; --c) {
    const double v0 = at(0, c);
    bool constant = v0 == 0 || v0 == 1;
    for (std::int64_t r = 1; r < rows && constant; ++r) constant = at(r, c) == v0;
    if (!constant) break;
    ++trailing;
  }
  for (std::int64_t p = 0; p <= trailing; p += 2) {
    const std::int64_t dim = cols - p;
    if (dim < 2 || dim % 2) continue;
    for (const char* layout : {"half", "interleaved"}) {
      bool dup = true;
      for (std::int64_t i = 0; i < dim / 2 && dup; ++i) {
        const std::int64_t a = ColumnOf(layout, i), b = std::string_view(layout) == "half" ? i + dim / 2 : 2 * i + 1;
        for (std::int64_t r = 0; r < rows && dup; ++r) dup = at(r, a) == at(r, b);
      }
      if (!dup) continue;
      bool varies = false;
      for (std::int64_t r = 1; r < rows && !varies; ++r) varies = at(r, 0) != at(0, 0);
      if (!varies) continue;
      shape.layout = dim == 2 ? "half" : layout;
      shape.rotary_dim = dim;
      shape.passthrough = p;
      // cos or sin: the slowest pair stays near its amplitude (cos) or near 0 (sin).
      const std::int64_t fast = ColumnOf(layout, 0), slow = ColumnOf(layout, dim / 2 - 1);
      double amp = 0, mean_slow = 0;
      for (std::int64_t r = 0; r < rows; ++r) {
        amp = std::max(amp, std::fabs(at(r, fast)));
        mean_slow += std::fabs(at(r, slow)) / static_cast<double>(rows);
      }
      if (dim == 2) {  // one pair: row 0 decides (cos 0 = amplitude at position 0)
        shape.kind = std::fabs(at(0, 0)) > 0.5 * amp ? RopeKind::kCos : RopeKind::kSin;
      } else {
        shape.kind = mean_slow > 0.5 * amp ? RopeKind::kCos : RopeKind::kSin;
      }
      return shape;
    }
  }
  // A half-width cos table (onnxruntime's cos_cache, gpt-oss's rotary
  // module): one column per frequency, no copy; or vLLM's cos_sin_cache,
  // that cos table followed by its sin half. Columns [0, n) are taken only
  // when every one is a sinusoid (the three-term recurrence x[r+1] + x[r-1]
  // = 2·cos ω·x[r]), the measured frequencies fall from column to column
  // wherever they are resolved (a sinusoid PE's sin and cos columns share
  // theirs, and its half layout starts again at the fastest), and the
  // slowest column stays near the amplitude (cos, not sin). Trailing 1s are
  // frequencies too slow to move in float32.
  const auto cos_cache = [&](std::int64_t n, double amp) {
    std::vector<double> w(static_cast<std::size_t>(n));
    for (std::int64_t c = 0; c < n; ++c) {
      double num = 0, den = 0;
      for (std::int64_t r = 1; r + 1 < rows; ++r) {
        num += at(r, c) * (at(r + 1, c) + at(r - 1, c));
        den += at(r, c) * at(r, c);
      }
      if (!(den > 0)) return false;
      const double k = std::clamp(num / (2 * den), -1.0, 1.0);
      w[static_cast<std::size_t>(c)] = std::acos(k);
      for (std::int64_t r = 1; r + 1 < rows; ++r)
        // float32 angles far out (p = 1e5: |θ| errors ~ 6e-3 rad) loosen the recurrence.
        if (std::fabs(at(r + 1, c) + at(r - 1, c) - 2 * k * at(r, c)) > 2e-2 * amp) return false;
    }
    for (std::int64_t c = 1; c < n; ++c) {
      const double prev = w[static_cast<std::size_t>(c - 1)], cur = w[static_cast<std::size_t>(c)];
      if (prev > 1e-2 && !(cur < prev * (1 - 1e-6))) return false;
      if (cur > prev + 1e-3) return false;
    }
    double mean_slow = 0;
    for (std::int64_t r = 0; r < rows; ++r) mean_slow += std::fabs(at(r, n - 1)) / static_cast<double>(rows);
    return w[0] > 1e-2 && mean_slow >= 0.9 * amp;
  };
  if (rows >= 4 && cols >= 2) {
    double amp = 0;
    for (double v : head) amp = std::max(amp, std::fabs(v));
    if (!(amp > 0)) return shape;
    if (cos_cache(cols, amp)) {
      shape.kind = RopeKind::kCos;
      shape.layout = "cache";
      shape.rotary_dim = 2 * cols;
      shape.passthrough = 0;
      return shape;
    }
    // vLLM: [cos | sin], each half one column per frequency: cos² + sin² = A².
    if (cols % 2 == 0 && cols >= 4) {
      const std::int64_t h = cols / 2;
      double a2 = 0;
      for (std::int64_t c = 0; c < h; ++c) a2 = std::max(a2, std::fabs(at(0, c)) * std::fabs(at(0, c)) + at(0, c + h) * at(0, c + h));
      bool pairs = a2 > 0;
      for (std::int64_t r = 0; r < rows && pairs; ++r)
        for (std::int64_t c = 0; c < h && pairs; ++c)
          pairs = std::fabs(at(r, c) * at(r, c) + at(r, c + h) * at(r, c + h) - a2) <= 1e-5 * a2;
      if (pairs && cos_cache(h, std::sqrt(a2))) {
        shape.kind = RopeKind::kCos;
        shape.layout = "cache";
        shape.rotary_dim = cols;
        shape.passthrough = 0;
        shape.sin_half = true;
      }
    }
  }
  return shape;
}

std::string RopeSpecFlags(const SchemeSpec& s) {
  std::string f;
  if (s.base != 10000) f += fmt::format(" --base {}", s.base);
  if (!s.tensor.empty()) f += " --tensor " + s.tensor;
  if (s.layout == "interleaved" || s.layout == "cache") f += " --layout " + s.layout;
  if (s.start != 0) f += fmt::format(" --start {}", s.start);
  if (s.rope_scaling != "none" && !s.rope_scaling.empty()) f += " --rope-scaling " + s.rope_scaling;
  if (s.factor > 0) f += fmt::format(" --factor {}", s.factor);
  if (s.rope_scaling == "llama3")
    f += fmt::format(" --low-freq-factor {} --high-freq-factor {} --original-max-position-embeddings {}", s.low_freq_factor,
                     s.high_freq_factor, s.original_max_position_embeddings);
  if (s.max_position_embeddings > 0) f += fmt::format(" --max-position-embeddings {}", s.max_position_embeddings);
  if (s.rope_scaling == "yarn") {
    if (s.beta_fast != 32 || s.beta_slow != 1) f += fmt::format(" --beta-fast {} --beta-slow {}", s.beta_fast, s.beta_slow);
    if (!s.truncate) f += " --no-truncate";
  }
  if (s.rope_scaling == "longrope") {
    f += fmt::format(" --short-factor {} --long-factor {}", s.short_factor, s.long_factor);
    if (s.original_max_position_embeddings > 0)
      f += fmt::format(" --original-max-position-embeddings {}", s.original_max_position_embeddings);
  }
  if (s.attention_factor > 0) f += fmt::format(" --attention-factor {}", s.attention_factor);
  return f;
}

nlohmann::ordered_json RopeRecipeMatch::ToJson() const {
  return {{"recipe", recipe}, {"identical", identical}, {"max_abs_err", max_abs_err}};
}

std::string RopeIdentification::Describe() const {
  if (!detected) return "not a RoPE tensor";
  std::string what;
  if (shape.kind == RopeKind::kInvFreq) {
    what = fmt::format("RoPE inv_freq, {} frequencies (rotary dim {})", omega.size(), shape.rotary_dim);
  } else {
    what = fmt::format("RoPE {} table{}, {} layout ({}), rotary dim {}", paired ? "cos+sin" : RopeKindName(shape.kind),
                       paired ? "s" : "", shape.layout,
                       shape.layout == "half"    ? "Llama/NeoX rotate_half"
                       : shape.layout == "cache" ? "one column per frequency, half the rotary dim: cos_cache"
                                                 : "GPT-J/Meta rotate_every_two",
                       shape.rotary_dim);
    if (shape.sin_half) what += fmt::format(" + its sin half after it (vLLM's cos_sin_cache; the cos half is compared)");
    if (shape.passthrough) what += fmt::format(" + {} pass-through columns (head_dim {})", shape.passthrough, shape.rotary_dim + shape.passthrough);
    else what += fmt::format(" (head_dim {} when it rotates every channel)", shape.rotary_dim);
  }
  if (scaling) what += ", " + scaling->Describe();
  if (fit.undetermined > 0)
    what += fmt::format(" (the {} lowest frequenc{} not determined by {} rows: ω·(L−1) below the values' resolution)",
                        fit.undetermined, fit.undetermined == 1 ? "y is" : "ies are", rows);
  if (shape.kind != RopeKind::kInvFreq) {
    if (std::fabs(attention_factor - 1) > 0) what += fmt::format(", attention factor {}", G(attention_factor));
    what += fmt::format(", positions {}…{}", start, start + rows - 1);
  }
  return what;
}

nlohmann::ordered_json RopeIdentification::ToJson() const {
  nlohmann::ordered_json j;
  j["detected"] = detected;
  j["matched"] = matched;
  j["verdict"] = verdict;
  if (!matched) j["reason"] = reason;
  if (!detected) return j;
  j["kind"] = paired ? "cos+sin" : RopeKindName(shape.kind);
  if (shape.kind != RopeKind::kInvFreq) {
    j["layout"] = shape.layout;
    j["passthrough_cols"] = shape.passthrough;
  }
  j["rotary_dim"] = shape.rotary_dim;
  j["head_dim"] = shape.rotary_dim + shape.passthrough;
  j["start"] = start;
  j["amplitude"] = amplitude;
  j["attention_factor"] = attention_factor;
  j["scaling"] = scaling ? scaling->ToJson() : nlohmann::ordered_json();
  j["fitted_base"] = fit.fitted_base;
  j["undetermined_pairs"] = fit.undetermined;
  nlohmann::ordered_json alts = nlohmann::ordered_json::array();
  for (const auto& c : fit.candidates) alts.push_back({{"description", c.Describe()}, {"residual", std::isfinite(c.residual) ? nlohmann::ordered_json(c.residual) : nlohmann::ordered_json()}});
  j["fit_candidates"] = alts;
  j["precision"] = precision;
  j["recipe"] = recipe;
  nlohmann::ordered_json rs = nlohmann::ordered_json::array();
  for (const auto& r : recipes) rs.push_back(r.ToJson());
  j["recipes"] = rs;
  j["max_abs_err"] = max_abs_err;
  j["max_ulp_err"] = max_ulp_err;
  j["rows_compared"] = rows_compared;
  j["last_row_differ"] = last_row_differ;
  j["last_row_differ_f32"] = last_row_differ_f32;
  j["last_row_entries"] = last_row_entries;
  nlohmann::ordered_json spec_j;
  spec_j["scheme"] = "rope";
  spec_j["head_dim"] = spec.d_model;
  spec_j["tensor"] = spec.tensor;
  spec_j["layout"] = spec.layout;
  spec_j["base"] = spec.base;
  spec_j["start"] = spec.start;
  spec_j["rope_scaling"] = spec.rope_scaling;
  if (spec.attention_factor > 0) spec_j["attention_factor"] = spec.attention_factor;
  j["spec"] = spec_j;
  return j;
}

namespace {

// A head's value of pair i's column (its cos or sin column in the layout).
struct PairColumns {
  const std::vector<double>& head;
  std::int64_t cols;
  const RopeShape& shape;
  double operator()(std::int64_t r, std::int64_t i) const {
    return head[static_cast<std::size_t>(r * cols + ColumnOf(shape.layout, i))];
  }
};

// ω̂ per pair from the second difference of the head's n rows.
std::vector<double> SecondDifferenceOmega(const PairColumns& x, std::int64_t n, std::int64_t half) {
  std::vector<double> what(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i) {
    double num = 0, den = 0;
    for (std::int64_t r = 1; r + 1 < n; ++r) {
      num += x(r, i) * (x(r + 1, i) + x(r - 1, i));
      den += x(r, i) * x(r, i);
    }
    const double c = den > 0 ? std::clamp(num / (2 * den), -1.0, 1.0) : 1.0;
    what[static_cast<std::size_t>(i)] = std::acos(c);
  }
  return what;
}

// Amplitude: row 0 of a cos table at position 0 (row0_cos); else the
// quadrature of the pair whose ω̂ is closest to π/2 (best conditioned),
// with the partner's values when there is one.
double MeasureAmplitude(const PairColumns& x, const std::vector<double>* partner_head, const std::vector<double>& what,
                        std::int64_t n, std::int64_t half, bool row0_cos) {
  std::int64_t best = 0;
  for (std::int64_t i = 1; i < half; ++i)
    if (std::fabs(what[static_cast<std::size_t>(i)] - kPi / 2) < std::fabs(what[static_cast<std::size_t>(best)] - kPi / 2)) best = i;
  if (partner_head) {
    double a = 0;
    for (std::int64_t r = 0; r < n; ++r) {
      const double c = x(r, best), s = (*partner_head)[static_cast<std::size_t>(r * x.cols + ColumnOf(x.shape.layout, best))];
      a += std::sqrt(c * c + s * s);
    }
    return a / static_cast<double>(n);
  }
  if (row0_cos) return x(0, 0);
  const double w = what[static_cast<std::size_t>(best)];
  double a = 0;
  std::int64_t k = 0;
  for (std::int64_t r = 1; r + 1 < n; ++r, ++k) {
    const double q = (x(r - 1, best) - x(r + 1, best)) / (2 * std::sin(w));
    a += std::sqrt(x(r, best) * x(r, best) + q * q);
  }
  return k ? a / static_cast<double>(k) : 1;
}

// The first position from the phase at row 1 of each well-measured pair
// (quadrature from rows 0 and 2, or the partner), unwrapped slowest first;
// nullopt when the phases give none.
std::optional<std::int64_t> StartFromPhases(const PairColumns& x, const std::vector<double>* partner_head,
                                            const std::vector<double>& what, std::int64_t half, double A) {
  const bool cosine = x.shape.kind == RopeKind::kCos;
  std::vector<std::pair<double, double>> wp;  // (ω̂, φ)
  for (std::int64_t i = 0; i < half; ++i) {
    const double w = what[static_cast<std::size_t>(i)];
    if (!(w > 2e-3 && w < 3.0)) continue;
    const double y = x(1, i) / A;
    double phi;
    if (partner_head) {
      const double o = (*partner_head)[static_cast<std::size_t>(1 * x.cols + ColumnOf(x.shape.layout, i))] / A;
      phi = cosine ? std::atan2(o, y) : std::atan2(y, o);
    } else if (cosine) {
      phi = std::atan2((x(0, i) - x(2, i)) / (2 * A * std::sin(w)), y);
    } else {
      phi = std::atan2(y, (x(2, i) - x(0, i)) / (2 * A * std::sin(w)));
    }
    wp.push_back({w, phi});
  }
  if (wp.empty()) return 0;
  std::sort(wp.begin(), wp.end());
  double p = std::fmod(wp[0].second + 2 * kPi, 2 * kPi) / wp[0].first;
  for (std::size_t k = 1; k < wp.size(); ++k) p += Wrap(wp[k].second - p * wp[k].first) / wp[k].first;
  if (!(std::fabs(p) < 1e12)) return std::nullopt;
  return static_cast<std::int64_t>(std::llround(p)) - 1;
}

// ω refined on rows further and further away (the last head row, then
// doubling to the last row): each stage's estimate unwraps the next
// stage's angle, so that a noisy ω̂ (bfloat16 values) never picks the
// wrong turn. Sets m.omega and m.sigma from m.start and m.amplitude.
void RefineOmega(RowSource& source, RowSource* partner, const std::vector<double>& what, std::int64_t n,
                 std::int64_t rows, const RopeShape& shape, DType grid, Measured& m) {
  const std::int64_t half = shape.rotary_dim / 2;
  const bool cosine = shape.kind == RopeKind::kCos;
  const double A = m.amplitude;
  const double eps = 4 * Unit(grid);
  m.omega = what;
  m.sigma.assign(static_cast<std::size_t>(half), 50);
  std::vector<std::int64_t> stages;
  for (std::int64_t r = n - 1; ; r = std::min(rows - 1, 2 * r + 1)) {
    if (m.start + r > 0) stages.push_back(r);
    if (r >= rows - 1) break;
  }
  std::vector<double> row, prow;
  std::vector<std::byte> scratch;
  for (std::int64_t r : stages) {
    const double P = static_cast<double>(m.start + r);
    ReadRowsAsDouble(source, r, 1, &scratch, &row);
    if (partner) ReadRowsAsDouble(*partner, r, 1, &scratch, &prow);
    for (std::int64_t i = 0; i < half; ++i) {
      const std::size_t c = static_cast<std::size_t>(ColumnOf(shape.layout, i));
      const double target = m.omega[static_cast<std::size_t>(i)] * P;
      const double y = std::clamp(row[c] / A, -1.0, 1.0);
      std::vector<double> base_angles;
      double dtheta;
      if (partner) {
        const double o = std::clamp(prow[c] / A, -1.0, 1.0);
        base_angles = {cosine ? std::atan2(o, y) : std::atan2(y, o)};
        dtheta = eps;
      } else if (cosine) {
        const double t = std::acos(y);
        base_angles = {t, -t};
        dtheta = eps / std::max(std::sin(t), std::sqrt(2 * eps));
      } else {
        const double t = std::asin(y);
        base_angles = {t, kPi - t};
        dtheta = eps / std::max(std::cos(t), std::sqrt(2 * eps));
      }
      double bestv = 0, bestd = HUGE_VAL;
      for (double t : base_angles) {
        const double k = std::round((target - t) / (2 * kPi));
        const double v = t + 2 * kPi * k;
        if (std::fabs(v - target) < bestd) bestd = std::fabs(v - target), bestv = v;
      }
      // An angle below the values' resolution only bounds ω: keep the
      // estimate, uninformative for the fit.
      if (!(bestv > dtheta)) continue;
      m.omega[static_cast<std::size_t>(i)] = bestv / P;
      // Relative: the angle's resolution over the angle, plus a float32
      // recipe's own angle error (2^-24·(4 + |ln ω|)), four times over.
      // Values on a 16-bit grid may come from angles rounded to it
      // (emb.to(bfloat16).cos()): the angle itself then carries the grid's
      // relative unit, which no base or scaling should be bent to explain.
      const double angle_unit = grid == DType::kBFloat16 || grid == DType::kFloat16 ? Unit(grid) : 0;
      m.sigma[static_cast<std::size_t>(i)] =
          dtheta / bestv + 4 * 0x1p-24 * (4 + std::fabs(std::log(m.omega[static_cast<std::size_t>(i)]))) + angle_unit;
    }
  }
  for (double& w : m.omega)
    if (!(w > 0)) w = 1e-12;
}

// Step 2-3 for a cos/sin table: amplitude, first position, ω per pair.
Measured MeasureTable(RowSource& source, RowSource* partner, const std::vector<double>& head, std::int64_t n,
                      std::int64_t cols, const std::vector<double>* partner_head,
                      std::int64_t rows, const RopeShape& shape, DType grid, std::optional<std::int64_t> start_hint) {
  Measured m;
  const std::int64_t half = shape.rotary_dim / 2;
  const bool cosine = shape.kind == RopeKind::kCos;
  const PairColumns x{head, cols, shape};
  const std::vector<double> what = SecondDifferenceOmega(x, n, half);
  bool row0_cos = cosine, row0_sin = !cosine;
  for (std::int64_t i = 0; i < half; ++i) {
    row0_cos = row0_cos && x(0, i) == x(0, 0) && x(0, 0) > 0;
    row0_sin = row0_sin && x(0, i) == 0;
  }
  m.amplitude = MeasureAmplitude(x, partner_head, what, n, half, row0_cos);
  if (!(m.amplitude > 0) || !std::isfinite(m.amplitude)) {
    m.why = "the amplitude of the columns could not be measured";
    return m;
  }
  // First position.
  if (start_hint) {
    m.start = *start_hint;
  } else if (row0_cos || row0_sin) {
    m.start = 0;
  } else if (const auto start = StartFromPhases(x, partner_head, what, half, m.amplitude)) {
    m.start = *start;
  } else {
    m.why = "the first position could not be found from the phases";
    return m;
  }
  // ω from the last row, unwrapped with ω̂.
  if (!(static_cast<double>(m.start + rows - 1) > 0)) {
    m.why = "the last row is at position 0 or below: no angle to measure";
    return m;
  }
  RefineOmega(source, partner, what, n, rows, shape, grid, m);
  m.ok = true;
  return m;
}

struct Compared {
  std::vector<RopeRecipeMatch> recipes;
  double max_abs_err = 0, max_ulp_err = 0;
  std::int64_t rows_compared = 0, last_differ = 0, last_differ_f32 = 0, last_entries = 0;
  double best_identical() const {
    double b = 0;
    for (const auto& r : recipes) b = std::max(b, r.identical);
    return b;
  }
};

// Compares the file with `spec` (exact, rounded to the grid) and the float32
// recipes, on row ranges sampled within `budget` entries.
Compared CompareCandidate(RowSource& source, const SchemeSpec& spec_in, const RopeShape& shape, DType grid,
                          std::int64_t budget) {
  Compared out;
  const TableInfo& info = source.info();
  SchemeSpec spec = spec_in;
  spec.dtype = grid;  // correctly rounded to the grid (fast paths of rope.cc)
  TableSet set = MakeTableSet(spec);
  std::unique_ptr<RowSource> ref = std::move(set.tensors.front());
  // Frequencies for the recipes: the exact inv_freq as doubles.
  SchemeSpec fs = spec;
  fs.tensor = "inv_freq";
  fs.dtype = DType::kFloat64;
  TableSet fset = MakeTableSet(fs);
  const std::int64_t half = fset.tensors.front()->info().rows;
  std::vector<std::byte> scratch;
  std::vector<double> inv;
  ReadRowsAsDouble(*fset.tensors.front(), 0, half, &scratch, &inv);
  const double af = static_cast<double>(ComputeRopeFrequencies(spec).attention_factor);
  const std::vector<double> inv32 = HfFloat32InvFreq(spec, inv, shape.rotary_dim);
  std::vector<double> inv16(inv32.size());
  for (std::size_t i = 0; i < inv32.size(); ++i) inv16[i] = RoundTo(inv32[i], DType::kBFloat16);
  const std::vector<std::string> names = {"exact", "hf-float32", "bf16-inv-freq", "bf16-angles"};
  std::vector<std::int64_t> ident(names.size(), 0);
  std::vector<double> rmax(names.size(), 0);
  std::int64_t total = 0;
  const double af32 = F32(af);
  auto recipe_value = [&](const std::vector<double>& w, std::int64_t pos, std::int64_t pair, DType angle = DType::kFloat32) {
    double theta = F32(w[static_cast<std::size_t>(pair)] * F32(static_cast<double>(pos)));
    if (angle != DType::kFloat32) theta = RoundTo(theta, angle);  // emb.to(bfloat16) before cos
    double v = F32(shape.kind == RopeKind::kCos ? std::cos(theta) : std::sin(theta));
    if (af != 1) v = F32(v * af32);
    return RoundTo(v, grid);
  };
  if (shape.kind == RopeKind::kInvFreq) {
    std::vector<double> file;
    ReadRowsAsDouble(source, 0, info.rows, &scratch, &file);
    std::vector<double> refv;
    ReadRowsAsDouble(*ref, 0, info.rows, &scratch, &refv);
    for (std::int64_t i = 0; i < info.rows && i < half; ++i) {
      const double f = file[static_cast<std::size_t>(i)];
      const double vals[4] = {refv[static_cast<std::size_t>(i)], RoundTo(inv32[static_cast<std::size_t>(i)], grid),
                              inv16[static_cast<std::size_t>(i)], inv16[static_cast<std::size_t>(i)]};
      for (std::size_t k = 0; k < 4; ++k) {
        if (vals[k] == f) ++ident[k];
        rmax[k] = std::max(rmax[k], std::fabs(vals[k] - f));
      }
      out.max_abs_err = std::max(out.max_abs_err, std::fabs(f - inv[static_cast<std::size_t>(i)]));
      out.max_ulp_err = std::max(out.max_ulp_err, std::fabs(f - inv[static_cast<std::size_t>(i)]) / UlpOf(inv[static_cast<std::size_t>(i)], info.dtype));
      // The file's own dtype: a float32 inv_freq of bfloat16 numbers differs.
      if (f != RoundTo(inv[static_cast<std::size_t>(i)], info.dtype)) ++out.last_differ;
      if (f != vals[1]) ++out.last_differ_f32;
      ++total;
    }
    out.last_entries = info.rows;
    out.rows_compared = info.rows;
  } else {
    const std::int64_t cols = info.cols;
    const auto ranges = SampleRanges(info.rows, cols, budget, std::clamp<std::int64_t>((std::int64_t{1} << 16) / cols, 1, 512));
    std::vector<double> file, refv;
    for (const auto& [first, count] : ranges) {
      ReadRowsAsDouble(source, first, count, &scratch, &file);
      ReadRowsAsDouble(*ref, first, count, &scratch, &refv);
      const std::int64_t rcols = ref->info().cols;
      for (std::int64_t r = 0; r < count; ++r) {
        const std::int64_t pos = spec.start + first + r;
        const bool last_row = first + r == info.rows - 1;
        // cache: rotary_dim / 2 columns (vLLM's sin half after them is not compared)
        for (std::int64_t j = 0; j < (shape.layout == "cache" ? shape.rotary_dim / 2 : shape.rotary_dim); ++j) {
          const double f = file[static_cast<std::size_t>(r * cols + j)];
          const double e = refv[static_cast<std::size_t>(r * rcols + j)];
          const std::int64_t pair = PairOf(shape.layout, j, shape.rotary_dim);
          const double vals[4] = {e, recipe_value(inv32, pos, pair), recipe_value(inv16, pos, pair),
                                  recipe_value(inv32, pos, pair, DType::kBFloat16)};
          for (std::size_t k = 0; k < 4; ++k) {
            if (vals[k] == f) ++ident[k];
            rmax[k] = std::max(rmax[k], std::fabs(vals[k] - f));
          }
          const double err = std::fabs(f - e);
          out.max_abs_err = std::max(out.max_abs_err, err);
          out.max_ulp_err = std::max(out.max_ulp_err, err / UlpOf(std::max(std::fabs(e), std::fabs(f)), grid));
          if (last_row) {
            ++out.last_entries;
            if (f != e) ++out.last_differ;
            if (f != vals[1]) ++out.last_differ_f32;
          }
          ++total;
        }
      }
    }
    out.rows_compared = CountRows(ranges);
  }
  for (std::size_t k = 0; k < names.size(); ++k)
    out.recipes.push_back({names[k], total ? static_cast<double>(ident[k]) / static_cast<double>(total) : 0, rmax[k]});
  return out;
}

// Candidates to confirm: the fit's first six, and the best plain one with
// a common base (a table whose inv_freq was rounded to bfloat16 is far
// from every model at float32 precision, closest to its own).
std::vector<RopeScalingFit> CandidatesToConfirm(const RopeFitResult& fit) {
  std::vector<RopeScalingFit> tries;
  for (const auto& c : fit.candidates) {
    if (tries.size() >= 6) break;
    tries.push_back(c);
  }
  for (const auto& c : fit.candidates)
    if (c.scaling == "none") {
      bool have = false;
      for (const auto& t : tries) have = have || (t.scaling == "none" && t.base == c.base);
      if (!have) tries.push_back(c);
    }
  return tries;
}

struct Scored {
  RopeScalingFit fit;
  SchemeSpec spec;
  double af = 1;
  Compared cmp;
};

// Each candidate rebuilt (at the measured start and one either side) and
// compared on a sample: the one that reproduces the most entries; within
// half a percent, the simpler model.
std::optional<Scored> BestCandidate(RowSource& source, const RopeIdentification& id, const std::vector<RopeScalingFit>& tries,
                                    DType grid, std::optional<std::int64_t> start_hint) {
  const std::int64_t rows_for_spec = id.shape.kind == RopeKind::kInvFreq ? 1 : source.info().rows;
  std::optional<Scored> best;
  for (const auto& c : tries) {
    for (std::int64_t ds : {0, 1, -1}) {
      if (id.shape.kind == RopeKind::kInvFreq && ds != 0) continue;
      if (ds != 0 && start_hint) continue;
      SchemeSpec spec = SpecFor(c, id.shape, rows_for_spec, id.start + ds, grid);
      double af = 1;
      try {
        af = static_cast<double>(ComputeRopeFrequencies(spec).attention_factor);
        // The measured amplitude decides the attention factor: the scaling's
        // own when it agrees, else the measured one.
        if (id.shape.kind != RopeKind::kInvFreq) {
          const double tol = std::max(2 * Unit(grid), 1e-5) * std::max(1.0, id.amplitude);
          if (std::fabs(af - id.amplitude) > tol) {
            spec.attention_factor = id.amplitude;
            af = spec.attention_factor;
          }
        }
        Scored s{c, spec, af, CompareCandidate(source, spec, id.shape, grid, std::int64_t{1} << 15)};
        const double gain = best ? s.cmp.best_identical() - best->cmp.best_identical() : 1;
        if (!best || gain > 0.005 ||
            (gain > -0.005 && RopeScalingComplexity(c.scaling) < RopeScalingComplexity(best->fit.scaling)))
          best = std::move(s);
      } catch (const Error&) {
        continue;  // a candidate pe cannot build (angle domain, invalid parameters)
      }
    }
  }
  return best;
}

// The precision of the best candidate's full comparison: a recipe that
// explains the table, or angles in the values' own precision, or no match
// (id.reason).
void JudgeRope(RopeIdentification& id, const Compared& full, const Scored& best, const TableInfo& info, DType grid) {
  std::size_t bk = 0;
  for (std::size_t k = 1; k < full.recipes.size(); ++k)
    if (full.recipes[k].identical > full.recipes[bk].identical + 1e-12) bk = k;
  const RopeRecipeMatch& br = full.recipes[bk];
  id.recipe = br.recipe;
  const std::string values = grid != info.dtype ? fmt::format(", {} values stored as {}", Traits(grid).name, Traits(info.dtype).name) : "";
  // A recipe explains the table when it reproduces nearly every entry and
  // the rest are within a couple of ulps (a framework's 1-ulp cos/pow).
  // Slack: 2 ulps, plus a float32 angle's own error at the largest angle
  // (an inv_freq an ulp away from the emulated one moves θ by p·ulp).
  double theta_max = 0;
  if (id.shape.kind != RopeKind::kInvFreq && !id.omega.empty())
    theta_max = *std::max_element(id.omega.begin(), id.omega.end()) *
                std::max(std::fabs(static_cast<double>(id.start)), std::fabs(static_cast<double>(id.start + info.rows - 1)));
  const double slack = std::max(1.0, id.attention_factor) * (2 * UlpOf(1.0, grid) + 4 * 0x1p-24 * theta_max);
  if (br.identical >= 0.9 && br.max_abs_err <= slack) {
    id.matched = true;
    if (br.recipe == "exact") id.precision = "exact" + values;
    else if (br.recipe == "hf-float32")
      id.precision = (id.shape.kind == RopeKind::kInvFreq ? "float32 (HF's torch formula: pow in float32, then 1/x)"
                                                          : "float32 angles (HF LlamaRotaryEmbedding recipe)") + values;
    else if (br.recipe == "bf16-angles")
      id.precision = "angles rounded to bfloat16 before cos/sin (emb.to(bfloat16).cos())" + values;
    else id.precision = (id.shape.kind == RopeKind::kInvFreq ? "inv_freq rounded to bfloat16" : "float32 angles, inv_freq rounded to bfloat16 before the product") + values;
  } else if (id.shape.kind != RopeKind::kInvFreq &&
             full.max_abs_err <= std::max(1.0, id.attention_factor) *
                                     (2 * UlpOf(1.0, grid) + 4 * Unit(grid) * theta_max)) {
    // No recipe bit for bit, but within what angles computed in the values'
    // own precision cost (numpy float64: the product p·ω rounded).
    id.matched = true;
    id.recipe = "";
    id.precision = fmt::format("{} angles (another recipe: within 2 ulp + 4·2^-{}·|θ| of exact)", Traits(grid).name,
                               grid == DType::kFloat64 ? 53 : grid == DType::kFloat32 ? 24 : grid == DType::kFloat16 ? 11 : 8) + values;
  } else {
    id.matched = false;
    id.precision = "unknown";
    id.reason = fmt::format("the closest candidate ({}) reproduces {:.1f}% of entries (recipe {}), max |error| {:.3g} vs exact",
                            best.fit.Describe(), 100 * br.identical, br.recipe, full.max_abs_err);
  }
  if (id.matched)
    id.verdict = fmt::format("{}, {}, {} {:.4g} % of entries bit for bit{}", id.Describe(), id.precision,
                             id.recipe.empty() ? "the exact table reproduces" : "matches", 100 * (id.recipe.empty() ? full.recipes[0].identical : br.identical),
                             id.rows_compared < info.rows ? fmt::format(" ({} of {} rows compared)", id.rows_compared, info.rows) : "");
}

}  // namespace

RopeIdentification IdentifyRope(RowSource& source, const TableStats& stats, const RopeIdentifyOptions& options,
                                RowSource* partner) {
  RopeIdentification id;
  const TableInfo& info = source.info();
  id.rows = info.rows;
  if (info.cols > kMaxWidth || info.rows < 1 || stats.nonfinite > 0) return id;
  const std::int64_t cols = info.cols;
  const bool vector = cols == 1;
  // The head as doubles: at most ~2^22 values.
  const std::int64_t n =
      vector ? std::min<std::int64_t>(info.rows, kMaxWidth)
             : std::min(info.rows, std::max<std::int64_t>(3, std::min<std::int64_t>(512, (std::int64_t{1} << 22) / cols)));
  if (vector && info.rows > kMaxWidth) return id;
  std::vector<std::byte> scratch;
  std::vector<double> own_head;
  std::vector<double>& head = options.keep_head ? *options.keep_head : own_head;
  ReadRowsAsDouble(source, 0, n, &scratch, &head);
  id.shape = DetectRopeShape(head, n, cols, info);
  if (id.shape.kind == RopeKind::kNotRope) return id;
  id.detected = true;
  const DType grid = stats.grid;
  auto fail = [&](std::string why) {
    id.matched = false;
    id.reason = std::move(why);
    id.verdict = fmt::format("{}; no match: {}", id.Describe(), id.reason);
    return id;
  };

  // ω per pair.
  std::vector<double> sigma;
  if (id.shape.kind == RopeKind::kInvFreq) {
    id.omega = head;
    for (double w : id.omega) sigma.push_back(std::max(4 * Unit(grid), 4 * 0x1p-24 * (4 + std::fabs(std::log(w)))));
  } else {
    if (partner && (partner->info().rows != info.rows || partner->info().cols != info.cols)) partner = nullptr;
    std::vector<double> phead;
    if (partner) {
      ReadRowsAsDouble(*partner, 0, n, &scratch, &phead);
      id.paired = true;
    }
    if (info.rows < 3) return fail("fewer than 3 rows: no frequency to measure");
    const Measured m = MeasureTable(source, partner, head, n, cols, partner ? &phead : nullptr, info.rows,
                                    id.shape, grid, options.start_hint);
    if (!m.ok) return fail(m.why);
    id.omega = m.omega;
    sigma = m.sigma;
    id.amplitude = m.amplitude;
    id.start = m.start;
  }
  id.fit = FitRopeScaling(id.omega, sigma, id.shape.rotary_dim);
  if (id.fit.candidates.empty()) return fail("no base explains the frequencies (they do not fall from pair to pair)");
  const std::optional<Scored> best = BestCandidate(source, id, CandidatesToConfirm(id.fit), grid, options.start_hint);
  if (!best) return fail("no candidate could be rebuilt");
  // The full comparison of the best.
  const Compared full = CompareCandidate(source, best->spec, id.shape, grid, options.max_entries);
  id.scaling = best->fit;
  id.spec = best->spec;
  id.spec.dtype = info.dtype;
  id.start = best->spec.start;
  id.attention_factor = best->af;
  id.recipes = full.recipes;
  id.max_abs_err = full.max_abs_err;
  id.max_ulp_err = full.max_ulp_err;
  id.rows_compared = full.rows_compared;
  id.last_row_differ = full.last_differ;
  id.last_row_differ_f32 = full.last_differ_f32;
  id.last_row_entries = full.last_entries;
  JudgeRope(id, full, *best, info, grid);
  if (!id.matched) return fail(id.reason);
  return id;
}

}  // namespace pe
