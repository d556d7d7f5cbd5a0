#include "core/analysis/decay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "core/analysis/blas.h"
#include "core/analysis/fft.h"
#include "core/parallel_for.h"
#include "core/error.h"
#include "core/schemes/sinusoidal.h"

namespace pe {
namespace {

// Rows of the Gram block computed by one GEMM, and its widest column span.
// 512 × 8192 doubles = 32 MiB: large enough for BLAS to run near peak.
constexpr std::int64_t kBlockRows = 512;
constexpr std::int64_t kBlockCols = 8192;

std::int64_t ResolveMaxOffset(std::int64_t rows, std::int64_t max_offset) {
  if (max_offset < 0) return rows - 1;
  if (max_offset > rows - 1)
    ThrowUsage("--max-offset", fmt::format("must be at most rows - 1 = {}, got {}",
                                           rows - 1, max_offset));
  return max_offset;
}

// The min/max/std curve's cost: each of the pairs (p, p+k), k <= K, is a
// dot product of `cols` multiply-adds in a GEMM block plus a fold of about
// the cost of about 64 more (measured on the loaded 2-core VM: 2.9 ns per
// pair at d = 1, 60 ns at d = 1024, i.e. ~0.056 ns per unit wall time).
// Beyond kGramBudget units (about 40 s there, ~20 s on idle cores; the
// full 32768 x 1024 curve of docs/dot.md, 5.8e11 units, fits) pe refuses
// and names the K that fits, instead of running for minutes or hours.
constexpr double kGramBudget = 7.5e11;

double GramWork(std::int64_t rows, std::int64_t cols, std::int64_t k_max) {
  const double L = static_cast<double>(rows), K = static_cast<double>(k_max);
  return (static_cast<double>(cols) + 64) * ((K + 1) * L - K * (K + 1) / 2);
}

void CheckGramBudget(const DenseTable& table, std::int64_t k_max) {
  const std::int64_t rows = table.info.rows, cols = table.info.cols;
  if (GramWork(rows, cols, k_max) <= kGramBudget) return;
  std::int64_t lo = 0, hi = k_max;  // largest K within the budget (K = 0 may not be)
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (GramWork(rows, cols, mid) <= kGramBudget) lo = mid;
    else hi = mid - 1;
  }
  const double pairs = (static_cast<double>(k_max) + 1) * static_cast<double>(rows) -
                       static_cast<double>(k_max) * (static_cast<double>(k_max) + 1) / 2;
  const std::string fits = GramWork(rows, cols, lo) <= kGramBudget
                               ? fmt::format("give --max-offset {} or less, or --mean-only", lo)
                               : std::string("give --mean-only");
  ThrowUsage(fmt::format("table of {} x {}", rows, cols),
             fmt::format("min, max and std over offsets 0..{} compare {:.3g} pairs of rows (O(L·K·d): {:.2g} "
                         "row-values, pe's budget is 7.5e+11, about 20 s); {} (the mean by FFT, any offset)",
                         k_max, pairs, GramWork(rows, cols, k_max), fits));
}

void CheckFinite(const DenseTable& table) {
  const std::int64_t cols = table.info.cols;
  for (std::size_t i = 0; i < table.values.size(); ++i) {
    if (!std::isfinite(table.values[i]))
      ThrowInput(fmt::format("table '{}'", table.info.name),
                 fmt::format("row {}, column {} is {}; similarities are undefined",
                             static_cast<std::int64_t>(i) / cols,
                             static_cast<std::int64_t>(i) % cols, table.values[i]));
  }
}

// Scales rows to unit norm in place; returns how many rows had norm 0.
std::int64_t NormalizeRows(double* x, std::int64_t rows, std::int64_t cols) {
  std::int64_t zero = 0;
  for (std::int64_t p = 0; p < rows; ++p) {
    double* row = x + p * cols;
    double ss = 0;
    for (std::int64_t j = 0; j < cols; ++j) ss += row[j] * row[j];
    if (ss == 0) {
      ++zero;
      continue;
    }
    const double inv = 1.0 / std::sqrt(ss);
    for (std::int64_t j = 0; j < cols; ++j) row[j] *= inv;
  }
  return zero;
}

const MetaValue* FindMeta(const TableInfo& info, const char* key) {
  return info.meta.Find(key);
}

std::optional<double> MetaNumber(const MetaValue* v) {
  if (v == nullptr) return std::nullopt;
  if (auto* i = std::get_if<std::int64_t>(v)) return static_cast<double>(*i);
  if (auto* d = std::get_if<double>(v)) return *d;
  if (auto* s = std::get_if<std::string>(v)) {
    try {
      std::size_t used = 0;
      double d = std::stod(*s, &used);
      if (used == s->size()) return d;
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

// Per-offset accumulators of one worker.
struct Folds {
  std::vector<double> min, max, s, ss;  // s, ss: Σ e and Σ e², e = g - FFT mean
  explicit Folds(std::size_t n)
      : min(n, std::numeric_limits<double>::infinity()),
        max(n, -std::numeric_limits<double>::infinity()),
        s(n, 0.0),
        ss(n, 0.0) {}
};

// Folds rows [r0, r1) of a Gram block into the per-offset accumulators. Row
// r is position p = i0 + r; column c is position q = c0 + c; only
// 0 <= q - p <= K is used. The inner loop runs over contiguous k, so the
// compiler vectorises it.
template <typename T>
void FoldRows(const T* block, std::int64_t ld, std::int64_t r0, std::int64_t r1,
              std::int64_t i0, std::int64_t c0, std::int64_t c1, std::int64_t k_max,
              const double* mean, Folds& f) {
  for (std::int64_t r = r0; r < r1; ++r) {
    const std::int64_t p = i0 + r;
    const std::int64_t q_lo = std::max(c0, p);
    const std::int64_t q_hi = std::min(c1, p + k_max + 1);
    if (q_lo >= q_hi) continue;
    const T* g = block + r * ld + (q_lo - c0);
    const std::int64_t k0 = q_lo - p;
    const std::int64_t n = q_hi - q_lo;
    double* mn = f.min.data() + k0;
    double* mx = f.max.data() + k0;
    double* sum = f.s.data() + k0;
    double* ss = f.ss.data() + k0;
    const double* mu = mean + k0;
    for (std::int64_t t = 0; t < n; ++t) {
      const double v = static_cast<double>(g[t]);
      mn[t] = v < mn[t] ? v : mn[t];
      mx[t] = v > mx[t] ? v : mx[t];
      const double e = v - mu[t];
      sum[t] += e;
      ss[t] += e * e;
    }
  }
}

// min, max and Σ(g - mean)² per offset from blocked Gram products. Each of
// the (at most 2) workers takes every other row block, runs a single-threaded
// GEMM into its own buffer and folds it into its own accumulators; they are
// merged at the end. (Letting BLAS thread each GEMM instead leaves its
// spinning threads competing with the fold for the same 2 cores.)
template <typename T>
void GramStatistics(const T* x, std::int64_t rows, std::int64_t cols,
                    std::int64_t k_max, const std::vector<double> mean,
                    DecayCurve& out) {
  const std::size_t n_k = static_cast<std::size_t>(k_max + 1);
  const int workers =
      static_cast<int>(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 2));
  const BlasRoutines& blas = Blas();  // single-threaded (core/analysis/blas.h)
  std::vector<Folds> folds(workers, Folds(n_k));
  auto work = [&](int w) {
    std::vector<T> block(static_cast<std::size_t>(kBlockRows * kBlockCols));
    for (std::int64_t i0 = w * kBlockRows; i0 < rows; i0 += workers * kBlockRows) {
      const std::int64_t i1 = std::min(rows, i0 + kBlockRows);
      const std::int64_t q_end = std::min(rows, i1 + k_max);  // exclusive
      for (std::int64_t c0 = i0; c0 < q_end; c0 += kBlockCols) {
        const std::int64_t c1 = std::min(q_end, c0 + kBlockCols);
        const int m = static_cast<int>(i1 - i0), n = static_cast<int>(c1 - c0);
        const int k = static_cast<int>(cols);
        if constexpr (std::is_same_v<T, double>) {
          blas.dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0,
                      x + i0 * cols, k, x + c0 * cols, k, 0.0, block.data(), n);
        } else {
          blas.sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f,
                      x + i0 * cols, k, x + c0 * cols, k, 0.0f, block.data(), n);
        }
        FoldRows(block.data(), n, 0, m, i0, c0, c1, k_max, mean.data(), folds[w]);
      }
    }
  };
  ParallelFor(workers, work);
  out.min = folds[0].min;
  out.max = folds[0].max;
  std::vector<double> sum = folds[0].s;
  out.std = folds[0].ss;
  for (int w = 1; w < workers; ++w) {
    for (std::size_t k = 0; k < n_k; ++k) {
      out.min[k] = std::min(out.min[k], folds[w].min[k]);
      out.max[k] = std::max(out.max[k], folds[w].max[k]);
      sum[k] += folds[w].s[k];
      out.std[k] += folds[w].ss[k];
    }
  }
  // Shifted-data variance: the FFT mean is a shift within ~1e-13 of the
  // true mean, so Σe²/n - (Σe/n)² loses nothing, and the mean itself is
  // corrected by Σe/n to the directly summed value.
  for (std::size_t k = 0; k < n_k; ++k) {
    const double n = static_cast<double>(out.pairs[k]);
    const double shift = sum[k] / n;
    out.std[k] = std::sqrt(std::max(0.0, out.std[k] / n - shift * shift));
    if constexpr (std::is_same_v<T, double>) out.mean[k] += shift;
  }
}

}  // namespace

std::optional<std::vector<Frequency>> SinusoidFrequencies(const TableInfo& info) {
  const MetaValue* scheme = FindMeta(info, "scheme");
  const auto* name = scheme ? std::get_if<std::string>(scheme) : nullptr;
  if (name == nullptr || (*name != "sinusoidal" && *name != "marian")) return std::nullopt;
  const auto d = MetaNumber(FindMeta(info, "d_model"));
  const auto base = MetaNumber(FindMeta(info, "base"));
  if (!d || !base || *d != static_cast<double>(info.cols) || !(*base > 0) || !std::isfinite(*base))
    return std::nullopt;
  auto text = [&](const char* key) {
    const MetaValue* v = FindMeta(info, key);
    const auto* t = v ? std::get_if<std::string>(v) : nullptr;
    return t ? *t : std::string();
  };
  // The frequency spacing and odd-d rule as written by `pe generate`
  // (metadata keys denominator, odd_rule; absent = the paper's). The layout
  // does not matter: a dot product sums over columns in any order.
  const std::string den_text = text("denominator"), odd_text = text("odd_rule");
  SinusoidDenominator den = SinusoidDenominator::kD;
  if (den_text == "half-minus-one") den = SinusoidDenominator::kHalfMinusOne;
  else if (!den_text.empty() && den_text != "d") return std::nullopt;
  SinusoidOddRule odd = den == SinusoidDenominator::kD ? SinusoidOddRule::kUnpairedSin
                                                       : SinusoidOddRule::kZeroColumn;
  if (odd_text == "zero-column") odd = SinusoidOddRule::kZeroColumn;
  else if (odd_text == "unpaired-sin") odd = SinusoidOddRule::kUnpairedSin;
  else if (!odd_text.empty()) return std::nullopt;
  const SinusoidPlan plan = BuildSinusoidPlan(info.cols, *base, SinusoidLayout::kInterleaved, den, odd);
  // Σ_i cos(k ω_i) holds only when every frequency has exactly one sin and
  // one cos column (zero columns add nothing); an unpaired sin makes the
  // product depend on p.
  std::vector<int> sins(plan.frequencies.size()), coss(plan.frequencies.size());
  for (const SinusoidColumn& c : plan.columns) {
    if (c.kind == SinusoidColumn::kSin) ++sins[c.pair];
    if (c.kind == SinusoidColumn::kCos) ++coss[c.pair];
  }
  for (std::size_t i = 0; i < plan.frequencies.size(); ++i)
    if (sins[i] != 1 || coss[i] != 1) return std::nullopt;
  if (plan.frequencies.empty()) return std::nullopt;
  return plan.frequencies;
}

std::vector<double> SinusoidClosedForm(const TableInfo& info, std::int64_t max_offset) {
  std::vector<double> out;
  const auto freqs = SinusoidFrequencies(info);
  if (!freqs) return out;
  out.resize(static_cast<std::size_t>(max_offset + 1));
  // cos(k·ω) with θ = k·ω formed as a double-double (k·ω_hi exact by fma,
  // plus k·ω_lo), then cos(θ_hi) - sin(θ_hi)·θ_lo: within about 1 ulp, and
  // ~50x faster than the correctly rounded evaluator the generator needs.
  auto fill = [&](std::int64_t k0, std::int64_t k1) {
    for (std::int64_t k = k0; k < k1; ++k) {
      const double kd = static_cast<double>(k);
      // Neumaier summation: the terms alternate in sign and nearly cancel.
      double sum = 0, comp = 0;
      for (const Frequency& w : *freqs) {
        const double hi = kd * w.hi;
        const double lo = std::fma(kd, w.hi, -hi) + kd * w.lo;
        const double c = std::cos(hi) - std::sin(hi) * lo;
        const double t = sum + c;
        comp += std::abs(sum) >= std::abs(c) ? (sum - t) + c : (c - t) + sum;
        sum = t;
      }
      out[k] = sum + comp;
    }
  };
  const std::int64_t n = max_offset + 1;
  if (n * static_cast<std::int64_t>(freqs->size()) < (1 << 16)) {
    fill(0, n);
  } else {
    ParallelFor(2, [&](int half) { half == 0 ? fill(0, n / 2) : fill(n / 2, n); });
  }
  return out;
}

DecayCurve ComputeDecay(const DenseTable& table, const DecayOptions& options) {
  const std::int64_t rows = table.info.rows, cols = table.info.cols;
  if (rows < 1 || cols < 1)
    ThrowInput(fmt::format("table '{}'", table.info.name), "has no rows or no columns");
  const std::int64_t k_max = ResolveMaxOffset(rows, options.max_offset);
  if (!options.mean_only) CheckGramBudget(table, k_max);
  CheckFinite(table);
  DecayCurve out;
  // Only the cosine needs a scaled copy; the dot product reads the table.
  std::vector<double> scaled;
  const double* x = table.values.data();
  if (options.cosine) {
    scaled = table.values;
    out.zero_rows = NormalizeRows(scaled.data(), rows, cols);
    x = scaled.data();
  }
  out.pairs.resize(static_cast<std::size_t>(k_max + 1));
  for (std::int64_t k = 0; k <= k_max; ++k) out.pairs[k] = rows - k;

  out.mean = SumAutocorrelation(x, rows, cols, k_max);
  for (std::int64_t k = 0; k <= k_max; ++k) out.mean[k] /= static_cast<double>(rows - k);

  if (!options.mean_only) {
    if (options.single_precision) {
      std::vector<float> xf(x, x + rows * cols);
      GramStatistics(xf.data(), rows, cols, k_max, out.mean, out);
    } else {
      GramStatistics(x, rows, cols, k_max, out.mean, out);
    }
  }

  out.closed_form = SinusoidClosedForm(table.info, k_max);
  if (!out.closed_form.empty()) {
    if (options.cosine) {  // every exact row has norm² = pairs = Σ cos(0)
      const double pairs = out.closed_form[0];
      for (double& v : out.closed_form) v /= pairs;
    }
    out.mean_deviation.resize(out.closed_form.size());
    for (std::size_t k = 0; k < out.closed_form.size(); ++k)
      out.mean_deviation[k] = std::abs(out.mean[k] - out.closed_form[k]);
    if (!options.mean_only) {
      out.max_deviation.resize(out.closed_form.size());
      for (std::size_t k = 0; k < out.closed_form.size(); ++k)
        out.max_deviation[k] = std::max(std::abs(out.max[k] - out.closed_form[k]),
                                        std::abs(out.min[k] - out.closed_form[k]));
    }
  }
  return out;
}

AnchorCurve ComputeAnchor(RowSource& source, std::int64_t anchor,
                          const DecayOptions& options) {
  const TableInfo& info = source.info();
  const std::int64_t rows = info.rows, cols = info.cols;
  if (anchor < 0 || anchor >= rows)
    ThrowUsage("--from", fmt::format("must be a row of the table, 0..{}, got {}", rows - 1, anchor));
  const std::int64_t k_max = ResolveMaxOffset(rows, options.max_offset);
  const std::size_t row_bytes = info.row_bytes();
  std::vector<std::byte> raw(row_bytes);
  source.ReadRows(anchor, 1, raw.data());
  std::vector<double> a(static_cast<std::size_t>(cols));
  for (std::int64_t j = 0; j < cols; ++j) a[j] = LoadAsDouble(raw.data(), info.dtype, j);
  auto norm = [&](const std::vector<double>& v) {
    double ss = 0;
    for (double e : v) ss += e * e;
    return std::sqrt(ss);
  };
  for (std::int64_t j = 0; j < cols; ++j)
    if (!std::isfinite(a[j]))
      ThrowInput(fmt::format("table '{}'", info.name),
                 fmt::format("row {}, column {} is {}; similarities are undefined", anchor, j, a[j]));
  const double a_norm = norm(a);

  AnchorCurve out;
  out.anchor = anchor;
  const std::int64_t first = std::max<std::int64_t>(0, anchor - k_max);
  const std::int64_t last = std::min(rows - 1, anchor + k_max);
  const std::int64_t block = BlockRows(row_bytes, last - first + 1);
  std::vector<std::byte> buf(static_cast<std::size_t>(block) * row_bytes);
  std::vector<double> row(static_cast<std::size_t>(cols));
  for (std::int64_t b0 = first; b0 <= last; b0 += block) {
    const std::int64_t count = std::min(block, last - b0 + 1);
    source.ReadRows(b0, count, buf.data());
    for (std::int64_t r = 0; r < count; ++r) {
      const std::byte* src = buf.data() + static_cast<std::size_t>(r) * row_bytes;
      double dot = 0;
      for (std::int64_t j = 0; j < cols; ++j) {
        row[j] = LoadAsDouble(src, info.dtype, j);
        if (!std::isfinite(row[j]))
          ThrowInput(fmt::format("table '{}'", info.name),
                     fmt::format("row {}, column {} is {}; similarities are undefined",
                                 b0 + r, j, row[j]));
        dot += a[j] * row[j];
      }
      if (options.cosine) {
        const double denom = a_norm * norm(row);
        dot = denom == 0 ? 0.0 : dot / denom;
      }
      out.offset.push_back(b0 + r - anchor);
      out.row.push_back(b0 + r);
      out.value.push_back(dot);
    }
  }
  const std::vector<double> cf = SinusoidClosedForm(info, k_max);
  if (!cf.empty()) {
    for (std::size_t i = 0; i < out.offset.size(); ++i) {
      double c = cf[static_cast<std::size_t>(std::abs(out.offset[i]))];
      if (options.cosine) c /= cf[0];  // cf[0] = number of (sin, cos) pairs
      out.closed_form.push_back(c);
      out.deviation.push_back(std::abs(out.value[i] - c));
    }
  }
  return out;
}

SimilarityMatrix ComputeSimilarityMatrix(RowSource& source, bool cosine,
                                         std::int64_t max_side) {
  const TableInfo& info = source.info();
  const std::int64_t rows = info.rows, cols = info.cols;
  if (rows < 1 || cols < 1)
    ThrowInput(fmt::format("table '{}'", info.name), "has no rows or no columns");
  SimilarityMatrix m;
  const std::int64_t n = std::min(rows, std::max<std::int64_t>(1, max_side));
  for (std::int64_t i = 0; i < n; ++i)
    m.positions.push_back(n == 1 ? 0 : (i * (rows - 1) + (n - 1) / 2) / (n - 1));
  std::vector<double> x(static_cast<std::size_t>(n * cols));
  std::vector<std::byte> raw(info.row_bytes());
  for (std::int64_t i = 0; i < n; ++i) {
    source.ReadRows(m.positions[i], 1, raw.data());
    for (std::int64_t j = 0; j < cols; ++j) {
      const double v = LoadAsDouble(raw.data(), info.dtype, j);
      if (!std::isfinite(v))
        ThrowInput(fmt::format("table '{}'", info.name),
                   fmt::format("row {}, column {} is {}; similarities are undefined",
                               m.positions[i], j, v));
      x[i * cols + j] = v;
    }
  }
  if (cosine) NormalizeRows(x.data(), n, cols);
  m.values.assign(static_cast<std::size_t>(n * n), 0.0);
  Blas().dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, static_cast<int>(n),
              static_cast<int>(cols), 1.0, x.data(), static_cast<int>(cols), 0.0,
              m.values.data(), static_cast<int>(n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < i; ++j) m.values[i * n + j] = m.values[j * n + i];
  return m;
}

}  // namespace pe
