#include "core/analysis/verify/alibi_verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/analysis/blocks.h"
#include "core/schemes/alibi.h"

namespace pe {
namespace {

std::string G(double v) { return fmt::format("{:.6g}", v); }

// Least-squares line a + s·j through x[0..n), and its largest residual.
struct Line {
  double a = 0, s = 0, resid = 0, scale = 0;
};

Line FitLine(const std::vector<double>& x) {
  Line l;
  const double n = static_cast<double>(x.size());
  if (x.size() < 2) {
    l.a = x.empty() ? 0 : x[0];
    return l;
  }
  double sj = 0, sx = 0, sjj = 0, sjx = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    const double d = static_cast<double>(j);
    sj += d, sx += x[j], sjj += d * d, sjx += d * x[j];
  }
  l.s = (n * sjx - sj * sx) / (n * sjj - sj * sj);
  l.a = (sx - l.s * sj) / n;
  for (std::size_t j = 0; j < x.size(); ++j) {
    l.resid = std::max(l.resid, std::fabs(x[j] - (l.a + l.s * static_cast<double>(j))));
    l.scale = std::max(l.scale, std::fabs(x[j]));
  }
  return l;
}

std::vector<double> Slopes(std::int64_t heads, double max_bias) {
  std::vector<double> out;
  for (__float128 s : AlibiSlopes(heads, max_bias)) out.push_back(static_cast<double>(s));
  return out;
}

// The largest relative difference of `found` from `want` (same length).
double MaxRel(const std::vector<double>& found, const std::vector<double>& want) {
  double m = 0;
  for (std::size_t h = 0; h < found.size() && h < want.size(); ++h)
    m = std::max(m, want[h] == 0 ? std::fabs(found[h]) : std::fabs(found[h] / want[h] - 1));
  return m;
}

}  // namespace

AlibiDiagnosisResult DiagnoseAlibi(RowSource& table, const SchemeSpec& d, const std::string& tensor) {
  AlibiDiagnosisResult out;
  const TableInfo& info = table.info();
  const std::int64_t L = d.max_len;
  const bool slopes_tensor = tensor == "slopes" || info.cols == 1;
  // Per head: the row to read (rows form and MPT's shifted form: row h;
  // distance form [H·L, L]: the last query row of head h, -s·(L-1-j)).
  const bool distance = !slopes_tensor && d.alibi_bias == "distance";
  std::int64_t heads = slopes_tensor ? info.rows : distance ? (L > 0 ? info.rows / L : 0) : info.rows;
  heads = std::min<std::int64_t>(heads, std::int64_t{1} << 16);
  std::vector<double> slope(static_cast<std::size_t>(heads)), offset(static_cast<std::size_t>(heads));
  std::int64_t nonlinear_head = -1;
  double nonlinear_resid = 0;
  std::vector<std::byte> scratch;
  std::vector<double> row;
  for (std::int64_t h = 0; h < heads; ++h) {
    if (slopes_tensor) {
      ReadRowsAsDouble(table, h, 1, &scratch, &row);
      slope[static_cast<std::size_t>(h)] = row.empty() ? 0 : row[0];
      continue;
    }
    ReadRowsAsDouble(table, distance ? h * L + (L - 1) : h, 1, &scratch, &row);
    const Line l = FitLine(row);
    slope[static_cast<std::size_t>(h)] = l.s;
    offset[static_cast<std::size_t>(h)] = l.a;
    // Linear to float32 noise (the product slope·j rounded: 2^-24 of the
    // row's largest value, with room for the peers' pow slopes).
    if (l.resid > 1e-5 * std::max(l.scale, 1e-30) && l.resid > nonlinear_resid)
      nonlinear_head = h, nonlinear_resid = l.resid;
  }
  std::vector<std::string> causes;
  const std::vector<double> want = Slopes(d.heads, d.max_bias);
  // float32 powers are within ~2^-17 relative of the exact slopes (up to
  // 2^-24·(k + 3) for k <= 2H); bfloat16 within 2^-9.
  const double same = 1e-4;
  out.json["heads_in_table"] = heads;
  out.json["slopes"] = slope;
  if (nonlinear_head >= 0) {
    causes.push_back(fmt::format("not an ALiBi bias: head {}'s row is not linear in the key index j (off a line by {})",
                                 nonlinear_head, G(nonlinear_resid)));
  }
  std::vector<double> slopes_abs = slope;
  const bool negated = !slope.empty() && std::all_of(slope.begin(), slope.end(), [](double s) { return s < 0; });
  if (negated && !distance) {
    for (double& s : slopes_abs) s = -s;
    causes.push_back("the bias has the opposite sign (-slope·j): pe's rows form is +slope·j, its distance form "
                     "-slope·|i-j|");
  }
  const double rel = heads == d.heads ? MaxRel(slopes_abs, want) : HUGE_VAL;
  out.json["max_rel_slope_error"] = std::isfinite(rel) ? nlohmann::ordered_json(rel) : nlohmann::ordered_json();
  if (nonlinear_head < 0 && rel > same) {
    // Another head count or max bias whose slopes these are.
    std::int64_t match_heads = 0;
    double match_bias = 0;
    for (double mb : {d.max_bias, 8.0, 16.0, 4.0}) {
      for (std::int64_t n = std::max<std::int64_t>(1, heads); n <= std::max<std::int64_t>(heads, 1) * 4 && !match_heads; ++n) {
        std::vector<double> w = Slopes(n, mb);
        w.resize(static_cast<std::size_t>(heads));
        if (MaxRel(slopes_abs, w) <= same) match_heads = n, match_bias = mb;
      }
      if (match_heads) break;
    }
    if (match_heads && match_heads != d.heads && match_bias == d.max_bias) {
      causes.push_back(heads == match_heads
                           ? fmt::format("the slopes are those of {} heads, not {}: add --heads {}", match_heads, d.heads,
                                         match_heads)
                           : fmt::format("the slopes are the first {} of {} heads' (2^(-8k/{})), not those of {} heads",
                                         heads, match_heads, match_heads, d.heads));
    } else if (match_heads && match_bias != d.max_bias) {
      causes.push_back(fmt::format("the slopes follow max bias {}, not {}: add --max-bias {}{}", G(match_bias),
                                   G(d.max_bias), G(match_bias),
                                   match_heads != d.heads ? fmt::format(" --heads {}", match_heads) : std::string()));
    } else if (heads == d.heads && rel <= 0x1p-8) {
      causes.push_back(fmt::format("the slopes were rounded to bfloat16 (or float16): up to {} relative off the exact "
                                   "2^(-8k/n), float32 powers are within 2^-17",
                                   G(rel)));
    } else if (heads == d.heads) {
      std::size_t worst = 0;
      for (std::size_t h = 0; h < want.size(); ++h)
        if (std::fabs(slopes_abs[h] / want[h] - 1) > std::fabs(slopes_abs[worst] / want[worst] - 1)) worst = h;
      causes.push_back(fmt::format("the slopes are not ALiBi's for {} heads (max bias {}): head {} has {}, not {}",
                                   d.heads, G(d.max_bias), worst, G(slope[worst]), G(want[worst])));
    } else {
      causes.push_back(fmt::format("the table holds {} heads, not {}, and no head count's slopes match", heads, d.heads));
    }
  }
  // The offsets of the rows forms: 0 for pe's rows form; -(L-1)·slope for
  // MPT's (llm-foundry build_alibi_bias: slope·(j - (L-1))).
  if (!slopes_tensor && !distance && nonlinear_head < 0 && heads > 0) {
    bool zero = true, shifted = true, constant = true;
    for (std::int64_t h = 0; h < heads; ++h) {
      const double s = slope[static_cast<std::size_t>(h)], a = offset[static_cast<std::size_t>(h)];
      const double unit = std::fabs(s) * static_cast<double>(std::max<std::int64_t>(L, 1));
      zero = zero && std::fabs(a) <= 1e-5 * unit;
      shifted = shifted && std::fabs(a + s * static_cast<double>(L - 1)) <= 1e-5 * unit;
      constant = constant && std::isfinite(a);
    }
    out.json["form"] = zero ? "rows" : shifted ? "shifted" : "rows plus a constant per head";
    if (shifted && d.alibi_bias != "shifted") {
      causes.push_back(fmt::format(
          "each head's row is slope·(j - {}): MPT's form (llm-foundry build_alibi_bias), the rows form shifted by "
          "-{}·slope per head, which softmax ignores: add --alibi-bias shifted",
          L - 1, L - 1));
    } else if (zero && d.alibi_bias == "shifted") {
      causes.push_back("each head's row is slope·j (the rows form), not MPT's slope·(j - (L-1)): add --alibi-bias rows");
    } else if (!zero && !shifted && constant) {
      causes.push_back(fmt::format("head 0's row is offset by {} from slope·j (a constant per head, which softmax "
                                   "ignores, but none of pe's forms)",
                                   G(offset[0])));
    }
  }
  std::string what = fmt::format("ALiBi {} of {} heads", slopes_tensor ? "slopes" : "bias", heads);
  if (causes.empty()) {
    std::size_t worst = 0;
    for (std::size_t h = 0; h < want.size() && h < slopes_abs.size(); ++h)
      if (std::fabs(slopes_abs[h] / want[h] - 1) > std::fabs(slopes_abs[worst] / want[worst] - 1)) worst = h;
    out.text = fmt::format(
        "{}: the declared slopes to within {} relative (head {} the farthest), more than float32 powers of the slope "
        "base explain where the reference check failed",
        what, G(rel), worst);
    return out;
  }
  std::string s;
  for (const auto& c : causes) s += (s.empty() ? "" : "; ") + c;
  out.text = s + " [" + what + "]";
  return out;
}

}  // namespace pe
