#include "core/base/table.h"

#include <cmath>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/base/error.h"

namespace pe {

void Metadata::Set(const std::string& key, MetaValue value) {
  const auto [it, added] = index_.try_emplace(key, entries_.size());
  if (!added) {
    entries_[it->second].second = std::move(value);
    return;
  }
  entries_.emplace_back(key, std::move(value));
}

const MetaValue* Metadata::Find(const std::string& key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

std::string MetaToString(const MetaValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return fmt::format("{}", *i);
  if (const auto* d = std::get_if<double>(&value)) return fmt::format("{}", *d);
  return std::get<std::string>(value);
}

std::optional<double> MetaNumber(const Metadata& meta, const std::string& key) {
  const MetaValue* v = meta.Find(key);
  if (v == nullptr) return std::nullopt;
  if (const auto* i = std::get_if<std::int64_t>(v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(v)) return *d;
  const std::string& text = std::get<std::string>(*v);
  try {
    std::size_t used = 0;
    const double d = std::stod(text, &used);
    if (used == text.size()) return d;
  } catch (const std::exception&) {  // not a number, or out of range
  }
  return std::nullopt;
}

std::string MetaText(const Metadata& meta, const std::string& key) {
  const MetaValue* v = meta.Find(key);
  return v ? MetaToString(*v) : std::string();
}

std::int64_t MetaIntOr(const Metadata& meta, const std::string& key, std::int64_t fallback) {
  const MetaValue* v = meta.Find(key);
  if (!v) return fallback;
  if (const auto* i = std::get_if<std::int64_t>(v)) return *i;
  if (const auto* d = std::get_if<double>(v); d && std::isfinite(*d) && std::fabs(*d) < 9e18) return std::llround(*d);
  return fallback;
}

std::uint64_t CheckedTableBytes(std::int64_t rows, std::int64_t cols,
                                DType dtype) {
  if (rows < 0 || cols < 0) ThrowUsage("table shape", "negative size");
  const std::uint64_t size = Traits(dtype).size;
  const auto r = static_cast<std::uint64_t>(rows);
  const auto c = static_cast<std::uint64_t>(cols);
  if (c != 0 && r > kMaxTableBytes / size / c) {
    ThrowUsage(fmt::format("table of {} x {} {}", rows, cols, Traits(dtype).name),
               fmt::format("{} bytes would exceed pe's limit of {} bytes (1 PiB)",
                           r > UINT64_MAX / size / c
                               ? std::string("more than 2^64")
                               : fmt::format("{}", r * c * size),
                           kMaxTableBytes));
  }
  return r * c * size;
}

std::int64_t BlockRows(std::size_t row_bytes, std::int64_t rows) {
  constexpr std::size_t kBlockBytes = std::size_t{1} << 20;
  std::int64_t n = row_bytes == 0 ? rows
                                  : static_cast<std::int64_t>(
                                        std::max<std::size_t>(1, kBlockBytes / row_bytes));
  return std::max<std::int64_t>(1, std::min(n, rows));
}

DenseTable ReadAll(RowSource& source, std::int64_t max_elements) {
  const TableInfo& info = source.info();
  if (info.cols != 0 && info.rows > max_elements / info.cols) {
    ThrowUsage(fmt::format("table of {} x {}", info.rows, info.cols),
               "too large to hold in memory for this operation");
  }
  DenseTable t{info, {}};
  t.values.resize(static_cast<std::size_t>(info.rows * info.cols));
  const std::int64_t block = BlockRows(info.row_bytes(), info.rows);
  std::vector<std::byte> buf(static_cast<std::size_t>(block) * info.row_bytes());
  for (std::int64_t first = 0; first < info.rows; first += block) {
    const std::int64_t n = std::min(block, info.rows - first);
    source.ReadRows(first, n, buf.data());
    const std::size_t count = static_cast<std::size_t>(n * info.cols);
    double* dst = t.values.data() + first * info.cols;
    for (std::size_t i = 0; i < count; ++i)
      dst[i] = LoadAsDouble(buf.data(), info.dtype, i);
  }
  return t;
}

MemoryRowSource::MemoryRowSource(TableInfo info, std::vector<std::byte> bytes)
    : info_(std::move(info)), bytes_(std::move(bytes)) {}

void MemoryRowSource::ReadRows(std::int64_t first, std::int64_t count,
                               std::byte* out) {
  const std::size_t rb = info_.row_bytes();
  std::memcpy(out, bytes_.data() + static_cast<std::size_t>(first) * rb,
              static_cast<std::size_t>(count) * rb);
}

}  // namespace pe
