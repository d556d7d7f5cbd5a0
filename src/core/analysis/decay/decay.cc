#include "core/analysis/decay/decay.h"

#include <fmt/format.h>

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <limits>
#include <mutex>
#include <atomic>
#include <exception>
#include <string_view>
#include <thread>
#include <type_traits>

#include "core/numerics/blas.h"
#include "core/analysis/blocks.h"
#include "core/numerics/fft.h"
#include "core/base/parallel_for.h"
#include "core/formats/pump.h"
#include "core/base/error.h"
#include "core/schemes/sinusoidal.h"
#include "core/formats/table_memory.h"
#include "core/base/cpu_dispatch.h"
#include <pe/runtime.h>

#include "core/analysis/decay/decay_parts.h"

namespace pe {

using namespace decay_detail;

namespace {

std::int64_t ResolveMaxOffset(std::int64_t rows, std::int64_t max_offset) {
  if (max_offset < 0) return rows - 1;
  if (max_offset > rows - 1)
    ThrowUsage("--max-offset", fmt::format("must be at most rows - 1 = {}, got {}",
                                           rows - 1, max_offset));
  return max_offset;
}

// A DenseTable read as a RowSource of float64 rows (no copy).
class DenseRowSource : public RowSource {
 public:
  explicit DenseRowSource(const DenseTable& t) : table_(t), info_(t.info) {
    info_.dtype = DType::kFloat64;
  }
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const double* src = table_.values.data() + first * info_.cols;
    std::memcpy(out, src, static_cast<std::size_t>(count * info_.cols) * sizeof(double));
  }

 private:
  const DenseTable& table_;
  TableInfo info_;
};

}  // namespace

DecayCurve ComputeDecay(RowSource& source, const DecayOptions& options,
                        const DecayStreamOptions& stream) {
  const TableInfo& info = source.info();
  const std::int64_t rows = info.rows, cols = info.cols;
  if (rows < 1 || cols < 1)
    ThrowInput(fmt::format("table '{}'", info.name), "has no rows or no columns");
  const std::int64_t k_max = ResolveMaxOffset(rows, options.max_offset);
  if (!options.mean_only) CheckGramBudget(rows, cols, k_max);
  const std::int64_t budget = ResolveBudget(stream.memory_budget);
  // A float32 table's dot product: the panels hold its float values (exact
  // when widened), half the memory of doubles, so half the passes.
  const bool float_panel = info.dtype == DType::kFloat32 && !options.cosine;
  const DecayMeanPlan plan = PlanDecayMean(rows, cols, k_max, budget, float_panel ? 4 : 8);

  // With float64 min/max/std the mean is the direct sum over the Gram band
  // (shift + Σe/n, see FinishGram), so no FFT and one read of the table;
  // the FFT mean serves --mean-only and the float32 blocks (whose sums
  // would lose digits).
  const bool fft_mean = options.mean_only || options.single_precision;

  // Progress in rows of work: each mean pass reads its segments (with up to
  // K rows of overlap each), the FFTs count as one more pass, the Gram
  // window reads the table once and then folds its rows.
  const std::int64_t passes = fft_mean ? (cols + plan.panel_cols - 1) / plan.panel_cols : 0;
  std::int64_t total = 0;
  if (fft_mean) {
    for (std::int64_t s0 = 0; s0 < rows; s0 += plan.segment_rows)
      total += std::min(plan.segment_rows + k_max, rows - s0);
    total = total * passes + rows;  // reads, then the FFT work as rows
  }
  if (!options.mean_only) total += 2 * rows;  // the Gram window's reads and blocks
  // Reported as rows of the table: the work done so far scaled to `rows`,
  // so a bar reads "65.5k/131.1k rows" for a 131k-row table, not its
  // passes' sum.
  std::int64_t done = 0;
  auto report = [&](std::int64_t work) {
    const auto r = static_cast<std::int64_t>(static_cast<double>(rows) * static_cast<double>(work) /
                                             static_cast<double>(std::max<std::int64_t>(total, 1)));
    stream.progress(std::min(r, rows), rows);
  };
  auto advance = [&](std::int64_t n) {
    done += n;
    if (stream.progress) report(std::min(done, total));
  };

  RowReader reader(source, options.cosine);
  DecayCurve out;
  out.pairs.resize(static_cast<std::size_t>(k_max + 1));
  for (std::int64_t k = 0; k <= k_max; ++k) out.pairs[k] = rows - k;
  DecayStreamOptions::Timing timing;
  timing.passes = passes;
  timing.segment_rows = fft_mean ? plan.segment_rows : 0;
  Scratch<double> scratch;  // the mean's panels, then the Gram window
  if (fft_mean) {
    if (float_panel) {
      Scratch<float> panels;
      out.mean = StreamedLagSums(reader, rows, cols, k_max, plan, budget, advance, panels, &timing.fft,
                                 &timing.read_ahead);
    } else {
      out.mean = StreamedLagSums(reader, rows, cols, k_max, plan, budget, advance, scratch, &timing.fft,
                                 &timing.read_ahead);
    }
    for (std::int64_t k = 0; k <= k_max; ++k) out.mean[k] /= static_cast<double>(rows - k);
  } else {
    out.mean.assign(static_cast<std::size_t>(k_max + 1), 0.0);  // the shift, set from rows 0..K
  }
  if (!options.mean_only) {
    const std::size_t gram_bytes = options.single_precision ? sizeof(float) : sizeof(double);
    const std::int64_t step = GramStep(rows, cols, k_max, budget, gram_bytes);
    if (options.single_precision) {
      Scratch<float> window;
      StreamedGram<float>(reader, rows, cols, k_max, step, advance, window, false, &timing.gram, out);
    } else {
      StreamedGram<double>(reader, rows, cols, k_max, step, advance, scratch, true, &timing.gram, out);
    }
  }
  out.zero_rows = reader.zero_rows;
  timing.read = reader.seconds;
  if (stream.timing) *stream.timing = timing;
  if (stream.progress) stream.progress(rows, rows);  // the shares' rounding
  AddClosedForm(info, options, k_max, out);
  return out;
}

DecayCurve ComputeDecay(const DenseTable& table, const DecayOptions& options) {
  DenseRowSource source(table);
  return ComputeDecay(source, options);
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
