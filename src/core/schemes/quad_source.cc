#include "core/schemes/quad_source.h"

#include <quadmath.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace pe {

double QuadToDoubleRoundOdd(__float128 q) {
  double d = static_cast<double>(q);
  const __float128 back = d;
  if (back == q) return d;
  if ((std::bit_cast<std::uint64_t>(d) & 1) == 0) d = std::nextafter(d, q > back ? HUGE_VAL : -HUGE_VAL);
  return d;
}

void StoreQuad(std::byte* data, DType dtype, std::size_t index, __float128 q) {
  switch (dtype) {
    case DType::kFloat32: {
      const float f = static_cast<float>(q);  // libgcc's conversion rounds once, to nearest even
      std::memcpy(data + index * sizeof f, &f, sizeof f);
      return;
    }
    case DType::kFloat64: {
      const double d = static_cast<double>(q);
      std::memcpy(data + index * sizeof d, &d, sizeof d);
      return;
    }
    case DType::kFloat16:
    case DType::kBFloat16:
      StoreFromDouble(data, dtype, index, QuadToDoubleRoundOdd(q));
      return;
  }
}

void QuadRowSource::ReadRows(std::int64_t first, std::int64_t count, std::byte* out) {
  std::vector<__float128> values(static_cast<std::size_t>(info_.cols));
  for (std::int64_t r = 0; r < count; ++r) {
    fill_(first + r, values.data());
    std::byte* row = out + static_cast<std::size_t>(r) * info_.row_bytes();
    for (std::size_t j = 0; j < values.size(); ++j) StoreQuad(row, info_.dtype, j, values[j]);
  }
}

namespace {

class ZeroRowsSource : public RowSource {
 public:
  ZeroRowsSource(std::unique_ptr<RowSource> inner, std::int64_t start, std::vector<std::int64_t> zero)
      : inner_(std::move(inner)), start_(start), zero_(std::move(zero)) {}
  const TableInfo& info() const override { return inner_->info(); }
  bool concurrent_reads() const override { return inner_->concurrent_reads(); }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    inner_->ReadRows(first, count, out);
    const std::size_t rb = info().row_bytes();
    for (std::int64_t p : zero_) {
      const std::int64_t r = p - start_ - first;
      if (r >= 0 && r < count) std::memset(out + static_cast<std::size_t>(r) * rb, 0, rb);
    }
  }

 private:
  std::unique_ptr<RowSource> inner_;
  std::int64_t start_;
  std::vector<std::int64_t> zero_;
};

class PrependSource : public RowSource {
 public:
  PrependSource(std::unique_ptr<RowSource> inner, TableInfo info, std::int64_t zeros)
      : inner_(std::move(inner)), info_(std::move(info)), zeros_(zeros) {}
  const TableInfo& info() const override { return info_; }
  bool concurrent_reads() const override { return inner_->concurrent_reads(); }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::size_t rb = info_.row_bytes();
    const std::int64_t z = std::clamp<std::int64_t>(zeros_ - first, 0, count);
    std::memset(out, 0, static_cast<std::size_t>(z) * rb);
    if (count > z) inner_->ReadRows(first + z - zeros_, count - z, out + static_cast<std::size_t>(z) * rb);
  }

 private:
  std::unique_ptr<RowSource> inner_;
  TableInfo info_;
  std::int64_t zeros_;
};

}  // namespace

std::unique_ptr<RowSource> ZeroRows(std::unique_ptr<RowSource> inner, std::int64_t start,
                                    std::vector<std::int64_t> zero_positions) {
  return std::make_unique<ZeroRowsSource>(std::move(inner), start, std::move(zero_positions));
}

std::unique_ptr<RowSource> PrependZeroRows(std::unique_ptr<RowSource> inner, TableInfo info,
                                           std::int64_t zero_before) {
  return std::make_unique<PrependSource>(std::move(inner), std::move(info), zero_before);
}

__float128 QPow(__float128 base, __float128 x) { return powq(base, x); }
__float128 QPi() { return M_PIq; }

}  // namespace pe
