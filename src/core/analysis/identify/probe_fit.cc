#include "core/analysis/identify/probe_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pe {
namespace {

constexpr double kPi = 3.14159265358979323846;

double Wrap(double x) {  // to (−π, π]
  x = std::remainder(x, 2 * kPi);
  return x;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m), v.end());
  return v[m];
}

}  // namespace

std::string RangesText(const std::vector<std::int64_t>& idx) {
  std::string out;
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j == i ? fmt::format("{}", idx[i]) : fmt::format("{}–{}", idx[i], idx[j]);
    i = j + 1;
  }
  return out;
}

std::string PairingWords(const std::string& pairing, std::int64_t half) {
  if (pairing == "neox") return fmt::format("(i, i+{}) pairs (NEOX)", half);
  if (pairing == "norm") return "(2i, 2i+1) pairs (NORM)";
  if (pairing == "none") return "no pairs (nothing rotates)";
  return "pairs of no regular pattern";
}

void FitPairFrequency(const ProbeArray& p, std::int64_t a, std::int64_t b, double& omega, double& phase,
                      double& residual) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(p.L));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) {
    return p.positions[static_cast<std::size_t>(x)] < p.positions[static_cast<std::size_t>(y)];
  });
  std::vector<double> pos, th;
  for (std::int64_t r : order) {
    pos.push_back(static_cast<double>(p.positions[static_cast<std::size_t>(r)]));
    th.push_back(std::atan2(p.at(r, a, b), p.at(r, a, a)));
  }
  omega = 0;
  phase = th.empty() ? 0 : th[0];
  residual = 0;
  if (pos.size() < 2 || pos.front() == pos.back()) return;
  // First estimate: steps of one position (ω < π for every usual rope), else
  // the smallest gap (aliased when ω·gap > π).
  std::vector<double> ones, smallest;
  double gmin = 0;
  for (std::size_t k = 1; k < pos.size(); ++k) {
    const double g = pos[k] - pos[k - 1];
    if (g <= 0) continue;
    if (g == 1) ones.push_back(Wrap(th[k] - th[k - 1]));
    if (gmin == 0 || g < gmin) gmin = g;
  }
  if (ones.empty())
    for (std::size_t k = 1; k < pos.size(); ++k)
      if (pos[k] - pos[k - 1] == gmin) smallest.push_back(Wrap(th[k] - th[k - 1]) / gmin);
  double w = ones.empty() ? Median(smallest) : Median(ones);
  std::vector<double> u(th.size());
  for (int pass = 0; pass < 3; ++pass) {
    u[0] = th[0];
    for (std::size_t k = 1; k < th.size(); ++k) {
      const double g = pos[k] - pos[k - 1];
      double dth = th[k] - th[k - 1];
      dth += 2 * kPi * std::round((w * g - dth) / (2 * kPi));
      u[k] = u[k - 1] + dth;
    }
    double mp = 0, mu = 0;
    for (std::size_t k = 0; k < u.size(); ++k) mp += pos[k], mu += u[k];
    mp /= static_cast<double>(u.size());
    mu /= static_cast<double>(u.size());
    double sxy = 0, sxx = 0;
    for (std::size_t k = 0; k < u.size(); ++k) sxy += (pos[k] - mp) * (u[k] - mu), sxx += (pos[k] - mp) * (pos[k] - mp);
    w = sxy / sxx;
    phase = mu - w * mp;
  }
  omega = w;
  for (std::size_t k = 0; k < u.size(); ++k) residual = std::max(residual, std::fabs(u[k] - (w * pos[k] + phase)));
  phase = Wrap(phase);
}

ProbeStructure AnalyzeProbeArray(const ProbeArray& p) {
  ProbeStructure s;
  s.positions = p.L;
  s.dim = p.d;
  const std::int64_t d = p.d;
  double M = 0;
  for (double x : p.v) M = std::max(M, std::fabs(x));
  const double thr = M * 1e-9;
  s.partner.assign(static_cast<std::size_t>(d), -1);
  if (M == 0) s.problem = "every entry is 0";
  std::vector<double> mx(static_cast<std::size_t>(d));
  for (std::int64_t j = 0; j < d && s.problem.empty(); ++j) {
    std::fill(mx.begin(), mx.end(), 0.0);
    for (std::int64_t r = 0; r < p.L; ++r)
      for (std::int64_t k = 0; k < d; ++k)
        if (k != j) mx[static_cast<std::size_t>(k)] = std::max(mx[static_cast<std::size_t>(k)], std::fabs(p.at(r, j, k)));
    std::int64_t first = -1, second = -1;
    for (std::int64_t k = 0; k < d; ++k) {
      if (k == j || mx[static_cast<std::size_t>(k)] <= thr) continue;
      if (first < 0 || mx[static_cast<std::size_t>(k)] > mx[static_cast<std::size_t>(first)]) second = first, first = k;
      else if (second < 0 || mx[static_cast<std::size_t>(k)] > mx[static_cast<std::size_t>(second)]) second = k;
    }
    if (second >= 0)
      s.problem = fmt::format("channel {} mixes with channels {} and {}: not a rotation of pairs", j, std::min(first, second),
                              std::max(first, second));
    s.partner[static_cast<std::size_t>(j)] = first;
  }
  for (std::int64_t j = 0; j < d && s.problem.empty(); ++j) {
    const std::int64_t k = s.partner[static_cast<std::size_t>(j)];
    if (k >= 0 && s.partner[static_cast<std::size_t>(k)] != j)
      s.problem = fmt::format("channel {} mixes into channel {} but not back: not a rotation of pairs", j, k);
  }
  s.is_rotation = s.problem.empty();
  if (!s.is_rotation) {
    s.pairing = "other";
    return s;
  }
  for (std::int64_t j = 0; j < d; ++j) {
    const std::int64_t k = s.partner[static_cast<std::size_t>(j)];
    if (k < 0) {
      s.unrotated.push_back(j);
      for (std::int64_t r = 0; r < p.L && s.unrotated_identity; ++r)
        for (std::int64_t c = 0; c < d; ++c)
          if (p.at(r, j, c) != (c == j ? 1.0 : 0.0)) {
            s.unrotated_identity = false;
            break;
          }
    } else if (k > j) {
      ProbePair pr;
      pr.a = j;
      pr.b = k;
      s.pairs.push_back(pr);
    }
  }
  if (s.pairs.empty()) {
    s.pairing = "none";
  } else {
    bool norm = true, neox = true;
    const std::int64_t h = s.pairs[0].b - s.pairs[0].a;
    for (const auto& pr : s.pairs) {
      if (pr.b - pr.a != 1 || pr.a % 2 != 0) norm = false;
      if (pr.b - pr.a != h || pr.a >= h) neox = false;
    }
    if (norm) {
      s.pairing = "norm";
      for (auto& pr : s.pairs) pr.index = pr.a / 2;
      s.rotary_dim = 2 * (s.pairs.back().index + 1);
    } else if (neox) {
      s.pairing = "neox";
      s.half = h;
      for (auto& pr : s.pairs) pr.index = pr.a;
      s.rotary_dim = 2 * h;
    } else {
      s.pairing = "other";
      for (std::size_t i = 0; i < s.pairs.size(); ++i) s.pairs[i].index = static_cast<std::int64_t>(i);
      s.rotary_dim = 2 * static_cast<std::int64_t>(s.pairs.size());
    }
    if (s.pairing != "other") {
      std::vector<bool> have(static_cast<std::size_t>(s.rotary_dim / 2), false);
      for (const auto& pr : s.pairs) have[static_cast<std::size_t>(pr.index)] = true;
      for (std::size_t i = 0; i < have.size(); ++i)
        if (!have[i]) s.missing.push_back(static_cast<std::int64_t>(i));
    }
  }
  std::vector<double> all_scales;
  s.scale_min = s.pairs.empty() ? 1 : INFINITY;
  s.scale_max = s.pairs.empty() ? 1 : 0;
  for (auto& pr : s.pairs) {
    std::vector<double> sc;
    for (std::int64_t r = 0; r < p.L; ++r) {
      const double c = p.at(r, pr.a, pr.a), sn = p.at(r, pr.a, pr.b);
      const double v = std::hypot(c, sn);
      sc.push_back(v);
      all_scales.push_back(v);
      s.scale_min = std::min(s.scale_min, v);
      s.scale_max = std::max(s.scale_max, v);
      s.rotation_residual = std::max({s.rotation_residual, std::fabs(p.at(r, pr.b, pr.b) - c),
                                      std::fabs(p.at(r, pr.b, pr.a) + sn)});
    }
    pr.scale = Median(sc);
    FitPairFrequency(p, pr.a, pr.b, pr.omega, pr.phase, pr.fit_residual);
  }
  s.scale = all_scales.empty() ? 1 : Median(all_scales);
  // ω_i = c·base^(-2i/R): ln ω linear in x = 2i/R.
  std::vector<double> xs, ys;
  for (const auto& pr : s.pairs)
    if (pr.omega > 0 && s.rotary_dim > 0) {
      xs.push_back(2.0 * static_cast<double>(pr.index) / static_cast<double>(s.rotary_dim));
      ys.push_back(std::log(pr.omega));
    }
  if (xs.size() >= 2) {
    double mx2 = 0, my = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) mx2 += xs[i], my += ys[i];
    mx2 /= static_cast<double>(xs.size());
    my /= static_cast<double>(xs.size());
    double sxy = 0, sxx = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) sxy += (xs[i] - mx2) * (ys[i] - my), sxx += (xs[i] - mx2) * (xs[i] - mx2);
    const double slope = sxx > 0 ? sxy / sxx : 0;
    const double c0 = my - slope * mx2;
    if (slope < 0) {
      s.base = std::exp(-slope);
      s.omega0 = std::exp(c0);
    }
    for (std::size_t i = 0; i < xs.size(); ++i)
      s.base_fit_residual = std::max(s.base_fit_residual, std::fabs(ys[i] - (c0 + slope * xs[i])));
  } else if (xs.size() == 1) {
    s.omega0 = std::exp(ys[0]);
  }
  return s;
}

}  // namespace pe
