// The rotary tables that RoPE (rope.cc) and xPos (xpos.cc) write: the cos
// or sin table of a set of inverse frequencies in the half, interleaved or
// cache layout, optionally times a constant scale (correctly rounded), the
// inv_freq vector, the metadata both record, and their default checks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/table.h"
#include "core/spec/scheme.h"

namespace pe {

// base^(-2i/dim) in quad.
__float128 DefaultInvFreq(__float128 base, std::int64_t i, std::int64_t dim);

// kCache: onnxruntime's cos_cache/sin_cache, [L, dim/2], one column per
// frequency (the first half of the half layout; docs/formats.md, "ONNX").
enum class RopeLayout { kHalf, kInterleaved, kCache };

// --layout's value; refuses an unknown one.
RopeLayout ParseRopeLayout(const std::string& s);

// inv_freq is written as a tensor of the table's dtype: refuses frequencies
// that would be inf in it (a float16 inv_freq above 65504).
void CheckInvFreqFinite(const SchemeSpec& spec, const std::vector<__float128>& inv_freq);

// The cos or sin table [rows, 2·freqs] for `layout`, times `scale`.
std::unique_ptr<RowSource> RotaryTable(TableInfo info, const std::vector<__float128>& inv_freq, RopeLayout layout,
                                       bool cosine, __float128 scale, std::int64_t start);

// A 1-D rotary table at listed positions (--positions): row r is position
// ids[r] (remapped positions, attention sinks, a chunk's positions). Its
// rows are those of `span`, a table over positions [lo, hi] (start lo),
// read where each id lies: every value is the one a table starting at 0
// has at that position. `pe verify` reads ids() for the angle term of its
// tolerance and to name positions.
class PositionedRows final : public RowSource {
 public:
  PositionedRows(TableInfo info, std::unique_ptr<RowSource> span, std::vector<std::int64_t> ids, std::int64_t lo);
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override;
  const std::vector<std::int64_t>& ids() const { return ids_; }

 private:
  TableInfo info_;
  std::unique_ptr<RowSource> span_;
  std::vector<std::int64_t> ids_;
  std::int64_t lo_;
};

// A vector as a one-column table (inv_freq).
std::unique_ptr<RowSource> VectorTable(TableInfo info, std::vector<__float128> values);

// The metadata both RoPE and xPos record.
Metadata RopeMetadata(const SchemeSpec& spec, std::int64_t dim, const char* layout);

// pe verify's default property checks for a rotary tensor.
std::vector<std::string> RotaryDefaultChecks(const SchemeSpec&, std::string_view tensor);

}  // namespace pe
