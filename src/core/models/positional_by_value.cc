#include "core/models/positional_by_value.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <vector>

#include "core/base/dtype.h"
#include "core/base/error.h"

namespace pe {
namespace {

constexpr std::int64_t kMaxInvFreqRows = 4096;

// Half an ulp of the entry's dtype at 1, plus the float32 angle's own
// rounding: the slack of one entry against the exact relations.
double Slack(DType d) {
  switch (d) {
    case DType::kBFloat16: return 1.0 / 64;   // 2^-8 per entry, a few entries per relation
    case DType::kFloat16: return 1.0 / 512;   // 2^-11
    default: return 1e-4;                     // float32 angles at position 2: well below
  }
}

std::vector<double> Rows(RowSource& src, std::int64_t n) {
  const TableInfo& info = src.info();
  std::vector<std::byte> buf(static_cast<std::size_t>(n) * info.row_bytes());
  src.ReadRows(0, n, buf.data());
  std::vector<double> out(static_cast<std::size_t>(n * info.cols));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = LoadAsDouble(buf.data(), info.dtype, i);
  return out;
}

// The columns that hold one value per frequency, in frequency order, as
// row `r` shows them: the first half when the halves are equal, the even
// columns when the pairs are, else every column (a cache).
std::vector<std::int64_t> FrequencyColumns(const double* r, std::int64_t w, double tol) {
  bool halves = w % 2 == 0, pairs = w % 2 == 0;
  for (std::int64_t j = 0; j < w / 2 && (halves || pairs); ++j) {
    halves = halves && std::fabs(r[j] - r[j + w / 2]) <= tol;
    pairs = pairs && std::fabs(r[2 * j] - r[2 * j + 1]) <= tol;
  }
  std::vector<std::int64_t> cols;
  if (halves && !pairs)
    for (std::int64_t j = 0; j < w / 2; ++j) cols.push_back(j);
  else if (pairs && !halves)
    for (std::int64_t j = 0; j < w / 2; ++j) cols.push_back(2 * j);
  else
    for (std::int64_t j = 0; j < w; ++j) cols.push_back(j);
  return cols;
}

bool LooksCos(const std::vector<double>& v, std::int64_t w, double tol) {
  const double a = v[0];
  if (!(a > 0) || !std::isfinite(a)) return false;
  for (std::int64_t j = 0; j < w; ++j)
    if (std::fabs(v[j] - a) > tol * a) return false;
  const double* r1 = v.data() + w;
  const double* r2 = v.data() + 2 * w;
  const double lo = std::cos(1.0) - tol;
  bool any_below_one = false;
  for (std::int64_t j = 0; j < w; ++j) {
    const double c1 = r1[j] / a, c2 = r2[j] / a;
    if (!std::isfinite(c1) || !std::isfinite(c2) || c1 < lo || c1 > 1 + tol) return false;
    if (std::fabs(c2 - (2 * c1 * c1 - 1)) > 4 * tol) return false;  // cos 2x = 2 cos^2 x - 1
    any_below_one = any_below_one || c1 < 1 - 4 * tol;
  }
  if (!any_below_one) return false;  // a constant table (a norm weight of ones) is not a cache
  const auto cols = FrequencyColumns(r1, w, tol * a);
  for (std::size_t k = 1; k < cols.size(); ++k)
    if (r1[cols[k]] < r1[cols[k - 1]] - tol * a) return false;  // frequencies decrease: cos rises
  return true;
}

bool LooksSin(const std::vector<double>& v, std::int64_t w, double tol) {
  double peak = 0;
  for (std::int64_t j = 0; j < w; ++j) {
    if (std::fabs(v[j]) > tol * 1e-2) return false;
    peak = std::fmax(peak, std::fabs(v[w + j]));
  }
  if (!(peak > 0) || !std::isfinite(peak)) return false;
  const double* r1 = v.data() + w;
  const double* r2 = v.data() + 2 * w;
  const auto cols = FrequencyColumns(r1, w, tol * peak);
  double prev_cos = -1;
  for (std::size_t k = 0; k < cols.size(); ++k) {
    const double s1 = r1[cols[k]], s2 = r2[cols[k]];
    if (!std::isfinite(s1) || !std::isfinite(s2) || s1 < -tol * peak) return false;
    if (k > 0 && s1 > r1[cols[k - 1]] + tol * peak) return false;  // sin falls with the frequency
    if (s1 <= 1e-3 * peak) continue;  // too small to carry its angle's cosine
    const double c = s2 / (2 * s1);      // sin 2x = 2 sin x cos x
    if (c < std::cos(1.0) - 8 * tol || c > 1 + 8 * tol || c < prev_cos - 8 * tol) return false;
    prev_cos = c;
  }
  return prev_cos > -1;  // at least one column carried its angle
}

bool LooksInvFreq(RowSource& src) {
  const std::int64_t n = src.info().rows;
  const std::vector<double> v = Rows(src, n);
  if (!(v[0] > 0) || v[0] > 1 + 1e-6) return false;
  for (std::int64_t i = 1; i < n; ++i)
    if (!(v[i] > 0) || !(v[i] < v[i - 1]) || !std::isfinite(v[i])) return false;
  return true;
}

}  // namespace

bool PlausiblePositionalShape(const TableInfo& info) {
  const std::vector<std::int64_t> shape = LogicalShape(info);
  if (shape.empty() || shape.size() > 4) return false;
  for (std::size_t i = 0; i + 2 < shape.size(); ++i)
    if (shape[i] != 1) return false;
  if (info.cols == 1) return info.rows >= 2 && info.rows <= kMaxInvFreqRows && shape.size() == 1;
  return info.rows >= 3 && info.cols >= 2 && info.cols <= kMaxPositionalCols && info.cols % 2 == 0;
}

std::string PositionalRoleByValue(RowSource& src) {
  const TableInfo& info = src.info();
  if (!PlausiblePositionalShape(info)) return "";
  if (info.cols == 1) return LooksInvFreq(src) ? "inv_freq" : "";
  const std::vector<double> v = Rows(src, 3);
  const double tol = Slack(info.dtype);
  if (LooksCos(v, info.cols, tol)) return "cos_cache";
  if (LooksSin(v, info.cols, tol)) return "sin_cache";
  return "";
}

std::string ValueScan::Try(const std::string& name, const TableInfo& info,
                           const std::function<std::unique_ptr<RowSource>()>& open) {
  if (!PlausiblePositionalShape(info)) return "";
  if (scanned_ >= kMaxValueScans) {
    ++skipped_;
    return "";
  }
  ++scanned_;
  std::string role;
  try {
    role = PositionalRoleByValue(*open());
  } catch (const Error&) {
    return "";  // unreadable: the reader's own notes say why where it matters
  }
  if (!role.empty()) found_.push_back(fmt::format("{} ({})", name, role));
  return role;
}

std::string ValueScan::Note() const {
  std::string out;
  if (!found_.empty())
    out = fmt::format("found by their values (their names say nothing): {}", fmt::join(found_, ", "));
  if (skipped_ > 0)
    out += fmt::format("{}{} more tensors of a table's shape not tested by value (at most {} are)", out.empty() ? "" : "; ",
                       skipped_, kMaxValueScans);
  return out;
}

bool HoldsEachFrequencyTwice(RowSource& src) {
  const TableInfo& info = src.info();
  if (info.rows < 2 || info.cols < 2 || info.cols % 2) return false;
  std::vector<std::byte> buf(info.row_bytes());
  src.ReadRows(1, 1, buf.data());
  std::vector<double> r(static_cast<std::size_t>(info.cols));
  double peak = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    r[i] = LoadAsDouble(buf.data(), info.dtype, i);
    peak = std::fmax(peak, std::fabs(r[i]));
  }
  return FrequencyColumns(r.data(), info.cols, Slack(info.dtype) * peak).size() * 2 == r.size();
}

}  // namespace pe
