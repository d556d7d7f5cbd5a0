#include "core/analysis/views/rope_views.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>

#include "core/base/error.h"
#include "core/schemes/rope.h"

namespace pe {
namespace {

std::vector<double> ToDoubles(const std::vector<__float128>& v) {
  std::vector<double> out;
  for (auto x : v) out.push_back(static_cast<double>(x));
  return out;
}

// Each pair once, falling: the columns of a cos/sin table hold every θ twice
// (half or interleaved layout); sorting and taking every other one works
// for both layouts.
std::vector<double> PairsOnce(std::vector<double> cols) {
  std::sort(cols.begin(), cols.end(), std::greater<>());
  std::vector<double> out;
  for (std::size_t i = 0; i < cols.size(); i += 2) out.push_back(cols[i]);
  return out;
}

}  // namespace

RopeSource RopeSourceFromSpec(const SchemeSpec& spec_in, const std::string& name) {
  if (spec_in.scheme != "rope" && spec_in.scheme != "xpos")
    ThrowUsage(fmt::format("input '{}'", name), fmt::format("is scheme '{}'; this view needs a rotary scheme (rope)",
                                                            spec_in.scheme));
  const SchemeSpec spec = WithHfConfig(spec_in);
  const RopeFrequencies f = ComputeRopeFrequencies(spec);
  RopeSource s;
  s.name = name;
  s.theta = ToDoubles(f.inv_freq);
  s.attention_factor = static_cast<double>(f.attention_factor);
  // The same rotary dimension and base without scaling.
  SchemeSpec plain;
  plain.scheme = spec.scheme;
  plain.d_model = spec.d_model;
  plain.base = spec.base;
  plain.rotary_dim = spec.rotary_dim;
  plain.partial_rotary_factor = spec.partial_rotary_factor;
  plain.rope_ratio = spec.rope_ratio;
  plain.rope_scaling = "none";
  s.theta_unscaled = ToDoubles(ComputeRopeFrequencies(plain).inv_freq);
  if (s.theta_unscaled.size() != s.theta.size()) s.theta_unscaled.clear();  // proportional: other pairs
  s.context = static_cast<double>(spec.max_len);
  s.original_context = MetaNumber(f.meta, "original_max_position_embeddings").value_or(0);
  if (s.original_context <= 0 && spec.original_max_position_embeddings > 0)
    s.original_context = static_cast<double>(spec.original_max_position_embeddings);
  s.floor_scale = spec.floor_scale;
  s.attn_scale = spec.attn_scale;
  return s;
}

RopeSource RopeSourceFromTables(const DenseTable* inv_freq, const DenseTable* cos, const DenseTable* sin,
                                const std::string& name) {
  RopeSource s;
  s.name = name;
  if (inv_freq != nullptr) {
    s.theta = inv_freq->values;
    std::sort(s.theta.begin(), s.theta.end(), std::greater<>());
    for (double t : s.theta)
      if (!std::isfinite(t) || t < 0) ThrowInput(fmt::format("'{}'", name), "inv_freq holds a negative or non-finite value");
    if (s.theta.empty()) ThrowInput(fmt::format("'{}'", name), "inv_freq is empty");
  } else {
    if (cos == nullptr || sin == nullptr)
      ThrowInput(fmt::format("'{}'", name), "a rotary view needs inv_freq, or both cos and sin");
    const TableInfo& c = cos->info;
    if (c.rows != sin->info.rows || c.cols != sin->info.cols)
      ThrowInput(fmt::format("'{}'", name), fmt::format("cos is {} × {} but sin is {} × {}", c.rows, c.cols,
                                                        sin->info.rows, sin->info.cols));
    if (c.rows < 2 || c.cols < 2 || c.cols % 2 != 0)
      ThrowInput(fmt::format("'{}'", name), "cos and sin need at least 2 rows and an even number of columns");
    std::vector<double> cols;
    for (std::int64_t j = 0; j < c.cols; ++j) {
      const double a0 = std::atan2(sin->at(0, j), cos->at(0, j));
      const double a1 = std::atan2(sin->at(1, j), cos->at(1, j));
      double d = std::remainder(a1 - a0, 2 * M_PI);
      if (!std::isfinite(d)) ThrowInput(fmt::format("'{}'", name), "cos or sin holds a NaN or an infinity");
      cols.push_back(std::abs(d));
      // The attention factor: the norm of (cos, sin) at row 0.
      if (j == 0) s.attention_factor = std::hypot(sin->at(0, 0), cos->at(0, 0));
    }
    s.theta = PairsOnce(cols);
    s.context = static_cast<double>(c.rows);
    s.original_context = MetaNumber(c.meta, "original_max_position_embeddings").value_or(0);
  }
  return s;
}

std::vector<double> OffsetGrid(std::int64_t max_k, std::int64_t points) {
  std::vector<double> k;
  if (max_k + 1 <= points) {
    for (std::int64_t i = 0; i <= max_k; ++i) k.push_back(static_cast<double>(i));
  } else {
    for (std::int64_t i = 0; i < points; ++i)
      k.push_back(std::round(static_cast<double>(i) * static_cast<double>(max_k) / static_cast<double>(points - 1)));
  }
  return k;
}

ViewData RopeDecayView(const std::vector<RopeSource>& sources, std::int64_t max_k, bool qk, bool bound) {
  ViewData v;
  v.kind = qk ? ViewKind::kQk : ViewKind::kBound;
  v.title = qk && bound ? "RoPE long-term decay: q·k and RoFormer's bound"
            : qk        ? "RoPE: mean q·k against relative distance"
                        : "RoPE: RoFormer's relative upper bound";
  v.x_label = "relative distance k";
  v.y_label = qk ? "(1/(d/2))·Σᵢ cos(k·θᵢ)  ·  (1/(d/2))·Σⱼ |Sⱼ|" : "(1/(d/2))·Σⱼ |Sⱼ|";
  if (qk && !bound) v.y_label = "q·k for unit all-ones q, k: (1/(d/2))·Σᵢ cos(k·θᵢ)";
  v.x_name = "k";
  v.note = qk && bound ? "solid: mean q·k · dashed: RoFormer bound (Su et al. §3.4.3)" : "";
  const std::vector<double> ks = OffsetGrid(max_k);
  for (const RopeSource& s : sources) {
    ViewSeries out;
    out.name = s.name;
    out.x = ks;
    const std::size_t n = s.theta.size();
    ViewColumn q{"qk", {}, qk, false, ""}, b{"bound", {}, bound, qk, ""};
    for (double k : ks) {
      double sum_cos = 0, sum_abs = 0;
      std::complex<double> partial = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double a = k * s.theta[i];
        sum_cos += std::cos(a);
        partial += std::complex<double>(std::cos(a), std::sin(a));
        sum_abs += std::abs(partial);  // |S_{i+1}|
      }
      q.values.push_back(sum_cos / static_cast<double>(n));
      b.values.push_back(sum_abs / static_cast<double>(n));
    }
    if (qk) out.columns.push_back(std::move(q));
    if (bound) out.columns.push_back(std::move(b));
    v.series.push_back(std::move(out));
  }
  return v;
}

SimilarityMatrix RopeQkMatrix(const RopeSource& s, std::int64_t rows, std::int64_t max_side) {
  if (rows < 1 || s.theta.empty()) ThrowInput(fmt::format("'{}'", s.name), "no positions or no frequencies");
  SimilarityMatrix m;
  const std::int64_t n = std::min(rows, std::max<std::int64_t>(1, max_side));
  for (std::int64_t i = 0; i < n; ++i)
    m.positions.push_back(n == 1 ? 0 : (i * (rows - 1) + (n - 1) / 2) / (n - 1));
  // q·k depends on q − p only: one value per distinct difference.
  const double pairs = static_cast<double>(s.theta.size());
  auto qk = [&](double k) {
    double sum = 0;
    for (double t : s.theta) sum += std::cos(k * t);
    return sum / pairs;
  };
  m.values.resize(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i; j < n; ++j) {
      const double v = qk(static_cast<double>(m.positions[j] - m.positions[i]));
      m.values[i * n + j] = m.values[j * n + i] = v;
    }
  return m;
}

ViewData RopeSpectrumView(const std::vector<RopeSource>& sources) {
  ViewData v;
  v.kind = ViewKind::kSpectrum;
  v.title = "RoPE frequency spectrum: wavelength per pair";
  v.x_label = "pair i (θ₀ fastest)";
  v.y_label = "wavelength 2π/θᵢ (positions)";
  v.x_name = "pair";
  v.log_y = true;
  double l_orig = 0, l = 0;
  for (const RopeSource& s : sources) {
    ViewSeries out;
    out.name = s.name;
    ViewColumn wl{"wavelength", {}, true, false, ""}, theta{"theta", {}, false, false, ""},
        rot{"rotations", {}, false, false, ""};
    const double ctx = s.context > 0 ? s.context : s.original_context;
    for (std::size_t i = 0; i < s.theta.size(); ++i) {
      out.x.push_back(static_cast<double>(i));
      theta.values.push_back(s.theta[i]);
      wl.values.push_back(s.theta[i] > 0 ? 2 * M_PI / s.theta[i] : INFINITY);
      rot.values.push_back(ctx > 0 ? ctx * s.theta[i] / (2 * M_PI) : NAN);
    }
    out.columns = {std::move(wl), std::move(theta), std::move(rot)};
    v.series.push_back(std::move(out));
    l_orig = std::max(l_orig, s.original_context);
    l = std::max(l, s.context);
  }
  if (l_orig > 0) v.markers.push_back({l_orig, fmt::format("L_orig = {}", l_orig)});
  if (l > 0 && l != l_orig) v.markers.push_back({l, fmt::format("L = {}", l)});
  v.markers_on_y = true;
  v.note = "pairs below a marker line turn fully within that context";
  return v;
}

ViewData RopeRatioView(const std::vector<RopeSource>& sources) {
  ViewData v;
  v.kind = ViewKind::kRatio;
  v.title = "RoPE scaling: scaled / unscaled frequency per pair";
  v.x_label = "pair i (θ₀ fastest)";
  v.y_label = "θᵢ(scaled) / θᵢ(unscaled)";
  v.x_name = "pair";
  v.log_y = true;
  for (const RopeSource& s : sources) {
    if (s.theta_unscaled.empty())
      ThrowUsage("--view ratio", fmt::format("'{}' has no unscaled frequencies to compare with (give a rope spec, "
                                             "e.g. rope:head-dim=128,rope-scaling=llama3,factor=8)",
                                             s.name));
    ViewSeries out;
    out.name = s.name;
    ViewColumn r{"ratio", {}, true, false, ""}, a{"theta", {}, false, false, ""}, u{"theta_unscaled", {}, false, false, ""};
    for (std::size_t i = 0; i < s.theta.size(); ++i) {
      out.x.push_back(static_cast<double>(i));
      r.values.push_back(s.theta[i] / s.theta_unscaled[i]);
      a.values.push_back(s.theta[i]);
      u.values.push_back(s.theta_unscaled[i]);
    }
    out.columns = {std::move(r), std::move(a), std::move(u)};
    v.series.push_back(std::move(out));
  }
  return v;
}

ViewData TemperatureView(const std::vector<RopeSource>& sources, std::int64_t max_p) {
  ViewData v;
  v.kind = ViewKind::kTemperature;
  v.title = "Attention temperature against position";
  v.x_label = "position p";
  v.y_label = "logit scale";
  v.x_name = "position";
  v.note = "solid: attention factor² (cos and sin both scaled) · dashed: Llama 4 NoPE temperature";
  const std::vector<double> ps = OffsetGrid(max_p);
  for (const RopeSource& s : sources) {
    ViewSeries out;
    out.name = s.name;
    out.x = ps;
    ViewColumn af{"attention_factor_squared", {}, true, false, ""},
        t{"llama4_temperature", {}, true, true, fmt::format("Llama 4 NoPE (floor {}, scale {})", s.floor_scale, s.attn_scale)};
    for (double p : ps) {
      af.values.push_back(s.attention_factor * s.attention_factor);
      t.values.push_back(1 + s.attn_scale * std::log(std::floor((p + 1) / s.floor_scale) + 1));
    }
    out.columns = {std::move(af), std::move(t)};
    v.series.push_back(std::move(out));
  }
  return v;
}

}  // namespace pe
