#include "core/schemes/axis_rotary.h"

#include <cmath>
#include <cstring>

#include "core/schemes/quad_source.h"

namespace pe {

AxisRotarySource::AxisRotarySource(TableInfo info, AxisRotaryPlan plan, AxisIdsFn ids, std::int64_t min_id,
                                   std::int64_t max_id, __float128 scale)
    : info_(std::move(info)), plan_(std::move(plan)), ids_(std::move(ids)), scale_(scale) {
  CheckAngleDomain(plan_.frequencies, min_id, max_id);
}

void AxisRotarySource::ReadRows(std::int64_t first, std::int64_t count, std::byte* out) {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(plan_.axes));
  const std::size_t size = Traits(info_.dtype).size;
  for (std::int64_t r = 0; r < count; ++r) {
    ids_(first + r, ids.data());
    std::byte* row = out + static_cast<std::size_t>(r) * info_.row_bytes();
    for (std::size_t j = 0; j < plan_.columns.size(); ++j) {
      const AxisColumn col = plan_.columns[j];
      const std::int64_t pos = ids[static_cast<std::size_t>(col.axis)];
      const Frequency& f = plan_.frequencies[static_cast<std::size_t>(col.freq)];
      const bool cosine = col.kind == SinusoidColumn::kCos;
      const std::int64_t turn = plan_.turn.empty() ? 0 : plan_.turn[static_cast<std::size_t>(col.freq)];
      if (turn > 0 && (4 * pos) % turn == 0) {
        // pos·2π/M = n·π/2: sin, cos in {0, ±1}, exact.
        const std::int64_t n = (((4 * pos) / turn) % 4 + 4) % 4;
        static constexpr int kSin[4] = {0, 1, 0, -1}, kCos[4] = {1, 0, -1, 0};
        const int v = cosine ? kCos[n] : kSin[n];
        if (scale_ == 1 && info_.dtype == DType::kFloat32) {
          const float x = static_cast<float>(v);
          std::memcpy(row + j * size, &x, size);
        } else if (scale_ == 1 && info_.dtype == DType::kFloat64) {
          const double x = v;
          std::memcpy(row + j * size, &x, size);
        } else {
          StoreQuad(row, info_.dtype, j, scale_ * static_cast<__float128>(v));
        }
      } else if (scale_ == 1 && info_.dtype == DType::kFloat32) {
        float s, c;
        SinCosF32(pos, f, &s, &c);
        std::memcpy(row + j * size, cosine ? &c : &s, size);
      } else if (scale_ == 1 && info_.dtype == DType::kFloat64) {
        double s, c;
        SinCosF64(pos, f, &s, &c);
        std::memcpy(row + j * size, cosine ? &c : &s, size);
      } else {
        __float128 s, c;
        SinCosQuad(pos, f, &s, &c);
        StoreQuad(row, info_.dtype, j, scale_ * (cosine ? c : s));
      }
    }
  }
}

std::vector<double> AxisRotarySource::ColumnOmega() const {
  std::vector<double> w;
  w.reserve(plan_.columns.size());
  for (const AxisColumn& col : plan_.columns) w.push_back(plan_.frequencies[static_cast<std::size_t>(col.freq)].hi);
  return w;
}

void AxisRotarySource::EntryAngles(std::int64_t first, std::int64_t count, double* out) const {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(plan_.axes));
  const std::size_t cols = plan_.columns.size();
  for (std::int64_t r = 0; r < count; ++r) {
    ids_(first + r, ids.data());
    for (std::size_t j = 0; j < cols; ++j) {
      const AxisColumn col = plan_.columns[j];
      out[static_cast<std::size_t>(r) * cols + j] =
          std::fabs(static_cast<double>(ids[static_cast<std::size_t>(col.axis)]) *
                    plan_.frequencies[static_cast<std::size_t>(col.freq)].hi);
    }
  }
}

void AxisRotarySource::EntryIds(std::int64_t row, std::int64_t* out) const {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(plan_.axes));
  ids_(row, ids.data());
  for (std::size_t j = 0; j < plan_.columns.size(); ++j) out[j] = ids[static_cast<std::size_t>(plan_.columns[j].axis)];
}

}  // namespace pe
