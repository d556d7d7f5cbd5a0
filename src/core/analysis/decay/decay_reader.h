// The panel reader of the decay computation (decay.h): rows of a RowSource
// as doubles, checked finite and scaled for the cosine, or moved into
// column-major panels for the FFTs; and scratch memory without zero fill.
// Private to src/core/analysis/decay*.cc.
#pragma once

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

namespace pe::decay_detail {

/// Wall seconds since t0.
inline double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}


/// Scales rows to unit norm in place; returns how many rows had norm 0.
std::int64_t NormalizeRows(double* x, std::int64_t rows, std::int64_t cols);

// Scratch memory without zero-filling (every value is written before it is
// read), reused from the mean's panels to the Gram window. Fresh memory
// costs first-touch page faults; in 4 KiB pages (TableMemory::Pages::kSmall),
// whose cost on the development VM held at about 0.5 s per GiB where huge
// pages ranged from 0.2 to 2.2 s per GiB (slow on a first run after a
// pause: the 4 GiB table's full mean curve read in 2.2 s instead of 1.0 s;
// 1.1-1.3 s every time in 4 KiB pages).
template <typename T>
class Scratch {
 public:
  T* Get(std::size_t n) {
    if (n > size_) {
      memory_ = TableMemory();  // the old block goes first: never both at once
      memory_ = TableMemory(n * sizeof(T), TableMemory::Pages::kSmall);
      size_ = n;
    }
    return reinterpret_cast<T*>(memory_.data());
  }

 private:
  TableMemory memory_;
  std::size_t size_ = 0;
};

// Columns [j0, j0 + w) of `count` row-major rows of `cols` values into a
// column-major panel (value (r, c) at dst[c * ld + r]), times scale[r]
// when given (the cosine's 1/norm, 0 for a zero row). Eight columns at a
// time: each row gives 8 neighbouring values (one cache line) to 8
// contiguous column runs; row by row, every row would touch w pages far
// apart.
template <typename S, typename D>
void Scatter(const S* x, std::int64_t count, std::int64_t cols, std::int64_t j0, std::int64_t w,
             const double* scale, D* dst, std::int64_t ld) {
  constexpr std::int64_t kTile = 8;
  for (std::int64_t c0 = 0; c0 < w; c0 += kTile) {
    const std::int64_t c1 = std::min(w, c0 + kTile);
    for (std::int64_t r = 0; r < count; ++r) {
      const S* row = x + r * cols + j0;
      if (scale == nullptr) {
        for (std::int64_t c = c0; c < c1; ++c) dst[c * ld + r] = static_cast<D>(row[c]);
      } else {
        const double sc = scale[r];
        for (std::int64_t c = c0; c < c1; ++c) dst[c * ld + r] = static_cast<D>(static_cast<double>(row[c]) * sc);
      }
    }
  }
}

/// A float32 table's columns to a float panel (the dot product's common
/// case), as Scatter (on AVX2 where the CPU has it); returns whether every
/// value moved is finite.
bool ScatterFloats(const float* x, std::int64_t count, std::int64_t cols, std::int64_t j0, std::int64_t w,
                   float* dst, std::int64_t ld);

// Reads rows of a source as doubles: every value checked finite, rows scaled
// to unit norm for the cosine, zero rows counted on request.
class RowReader {
 public:
  RowReader(RowSource& source, bool cosine) : source_(source), cosine_(cosine) {}
  /// A reader of the same source with buffers of its own (for a second
  /// thread; the source must then allow concurrent reads, or be locked).
  RowReader Sibling() const { return RowReader(source_, cosine_); }
  bool concurrent() const { return source_.concurrent_reads(); }
  /// Rows [first, first + count), row-major; rows below `count_below` that
  /// have norm 0 are added to zero_rows (pass `first` to count none).
  const double* Read(std::int64_t first, std::int64_t count, std::int64_t count_below) {
    buf_.resize(static_cast<std::size_t>(count * source_.info().cols));
    ReadTo(first, count, count_below, buf_.data());
    return buf_.data();
  }
  /// The same into `dst` (count × cols doubles), without a copy.
  void ReadTo(std::int64_t first, std::int64_t count, std::int64_t count_below, double* dst) {
    const auto t0 = std::chrono::steady_clock::now();
    struct Clock {  // adds the time spent here to `seconds`, however Read ends
      std::chrono::steady_clock::time_point t0;
      double& seconds;
      ~Clock() { seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
    } clock{t0, seconds};
    ReadRowsAsDoubleInto(source_, first, count, dst);
    CheckFinite(dst, count, first);
    if (cosine_) {  // zero rows counted only below count_below
      const std::int64_t cols = source_.info().cols;
      const std::int64_t counted = std::clamp<std::int64_t>(count_below - first, 0, count);
      zero_rows += NormalizeRows(dst, counted, cols);
      NormalizeRows(dst + counted * cols, count - counted, cols);
    }
  }
  /// Rows [first, first + count), columns [j0, j0 + w) into a column-major
  /// panel: value (r, c) to dst[c * ld + r], as doubles (scaled for the
  /// cosine). float32 files go straight from the file's values, without a
  /// row-major double copy; into a float panel each value is checked finite
  /// as it is moved, else whole rows when j0 == 0 (the first pass reads
  /// every row). Zero rows below `count_below` are counted.
  template <typename D>
  void ReadPanel(std::int64_t first, std::int64_t count, std::int64_t j0, std::int64_t w, D* dst,
                 std::int64_t ld, std::int64_t count_below) {
    const TableInfo& info = source_.info();
    const std::int64_t cols = info.cols;
    if (info.dtype != DType::kFloat32) {
      const double* x = Read(first, count, count_below);
      const auto t0 = std::chrono::steady_clock::now();
      Scatter(x, count, cols, j0, w, nullptr, dst, ld);
      seconds += Since(t0);
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    bool view = false;
    const float* x = FloatRows(first, count, &view);
    if constexpr (std::is_same_v<D, float>) {
      if (!cosine_) {
        // Checked as moved: each pass checks its own columns, so the file's
        // rows are read once in all (a check of whole rows in the first
        // pass read every row's other columns too).
        const bool finite = ScatterFloats(x, count, cols, j0, w, dst, ld);
        if (view) source_.ReleaseRows(first, count);
        // The first one in row order: rows above this block may hold one
        // in columns that no pass has read yet (unless the pass has them all).
        if (!finite) ThrowFirstNonFinite(w == cols ? first : 0, first + count);
        seconds += Since(t0);
        return;
      }
    }
    if (j0 == 0) CheckFinite(x, count, first);
    const double* scale = nullptr;
    if (cosine_) {
      scale_.resize(static_cast<std::size_t>(count));
      for (std::int64_t r = 0; r < count; ++r) {
        double ss = 0;
        for (std::int64_t j = 0; j < cols; ++j) ss += static_cast<double>(x[r * cols + j]) * x[r * cols + j];
        if (ss == 0 && first + r < count_below) ++zero_rows;
        // As Read(): x · (1 / sqrt(ss)), the same bits as the row-major path.
        scale_[r] = ss == 0 ? 0.0 : 1.0 / std::sqrt(ss);
      }
      scale = scale_.data();
    }
    Scatter(x, count, cols, j0, w, scale, dst, ld);
    if (view) source_.ReleaseRows(first, count);
    seconds += Since(t0);
  }

  std::int64_t zero_rows = 0;
  double seconds = 0;  ///< wall time spent reading and converting

 private:
  // A NaN or infinity has every exponent bit set: one vectorised OR of
  // tests over the rows (integer operations, no chain of additions), then
  // a search only when one is there, for the first in row-major order (as
  // reported).
  template <typename V>
  void CheckFinite(const V* x, std::int64_t count, std::int64_t first) const {
    using Bits = std::conditional_t<sizeof(V) == 4, std::uint32_t, std::uint64_t>;
    constexpr Bits kExponent = static_cast<Bits>(sizeof(V) == 4 ? 0x7f800000u : 0x7ff0000000000000u);
    const std::int64_t cols = source_.info().cols;
    const std::size_t n = static_cast<std::size_t>(count * cols);
    Bits bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
      Bits bits;
      std::memcpy(&bits, x + i, sizeof(V));
      bad |= (bits & kExponent) == kExponent;
    }
    if (bad == 0) return;
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(x[i]))
        ThrowInput(fmt::format("table '{}'", source_.info().name),
                   fmt::format("row {}, column {} is {}; similarities are undefined",
                               first + static_cast<std::int64_t>(i) / cols,
                               static_cast<std::int64_t>(i) % cols, x[i]));
  }

  // Rows [from, end) checked in row order: throws for the first NaN or
  // infinity (one is there: a panel's check saw it).
  void ThrowFirstNonFinite(std::int64_t from, std::int64_t end) {
    constexpr std::int64_t kChunk = 1024;
    for (std::int64_t r0 = from; r0 < end; r0 += kChunk) {
      const std::int64_t n = std::min(kChunk, end - r0);
      bool view = false;
      CheckFinite(FloatRows(r0, n, &view), n, r0);
      if (view) source_.ReleaseRows(r0, n);
    }
    ThrowInput(fmt::format("table '{}'", source_.info().name),
               "a value changed while it was read (the file is being written)");
  }

  // A float32 source's rows [first, first + count): in place where the
  // source maps the file (*view set; hand them back with ReleaseRows), so
  // that a panel of a few columns reads only their cache lines, else read
  // into raw_.
  const float* FloatRows(std::int64_t first, std::int64_t count, bool* view) {
    if (const std::byte* v = source_.ViewRows(first, count)) {
      *view = true;
      return reinterpret_cast<const float*>(v);
    }
    *view = false;
    raw_.resize(static_cast<std::size_t>(count * source_.info().cols));
    source_.ReadRows(first, count, reinterpret_cast<std::byte*>(raw_.data()));
    return raw_.data();
  }

  RowSource& source_;
  bool cosine_;
  std::vector<double> buf_;
  std::vector<float> raw_;
  std::vector<double> scale_;
};

// Rows [first, first + count) in pieces of `read_rows`, each given to
// piece(reader, r0, n). A source that allows concurrent reads is read by two
// threads, each with its own reader, for its half of the rows (reading and
// converting is otherwise a serial part between steps that use both cores).
// The first half's error wins over the second's, so the first bad value in
// row order is named whatever the timing. Progress (`advance`, on the
// calling thread) is per piece on one thread, else once at the end.
template <typename Piece>
void ReadRowsInTwo(RowReader& reader, std::int64_t first, std::int64_t count, std::int64_t read_rows,
                   const std::function<void(std::int64_t)>& advance, const Piece& piece) {
  const int parts = reader.concurrent() && count >= 2 * read_rows && CoreCount() > 1 ? 2 : 1;
  RowReader other = reader.Sibling();
  RowReader* const readers[2] = {&reader, &other};
  const std::int64_t mid = first + (count / 2 + read_rows - 1) / read_rows * read_rows;
  std::exception_ptr failed[2];
  ParallelFor(parts, [&](int p) {
    const std::int64_t b = parts == 1 || p == 0 ? first : mid;
    const std::int64_t e = parts == 1 || p == 1 ? first + count : mid;
    try {
      for (std::int64_t r0 = b; r0 < e; r0 += read_rows) {
        const std::int64_t n = std::min(read_rows, e - r0);
        piece(*readers[p], r0, n);
        if (parts == 1 && advance) advance(n);
      }
    } catch (...) {
      failed[p] = std::current_exception();
    }
  });
  for (const std::exception_ptr& f : failed)
    if (f) std::rethrow_exception(f);
  reader.zero_rows += other.zero_rows;
  if (parts == 2 && advance) advance(count);
}

}  // namespace pe::decay_detail
