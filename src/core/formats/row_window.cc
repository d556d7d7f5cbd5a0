#include "core/formats/row_window.h"

#include <algorithm>

#include "core/base/error.h"

namespace pe {
namespace {

class WindowSource : public RowSource {
 public:
  WindowSource(std::shared_ptr<RowSource> inner, std::int64_t first, TableInfo info)
      : inner_(std::move(inner)), first_(first), info_(std::move(info)) {}
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    inner_->ReadRows(first_ + first, count, out);
  }

 private:
  std::shared_ptr<RowSource> inner_;
  std::int64_t first_;
  TableInfo info_;
};

class ConcatSource : public RowSource {
 public:
  ConcatSource(std::unique_ptr<RowSource> a, std::unique_ptr<RowSource> b, TableInfo info)
      : a_(std::move(a)), b_(std::move(b)), info_(std::move(info)) {}
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::int64_t na = a_->info().rows;
    const std::int64_t from_a = first < na ? std::min(count, na - first) : 0;
    if (from_a > 0) a_->ReadRows(first, from_a, out);
    if (count > from_a)
      b_->ReadRows(first + from_a - na, count - from_a, out + static_cast<std::size_t>(from_a) * info_.row_bytes());
  }

 private:
  std::unique_ptr<RowSource> a_, b_;
  TableInfo info_;
};

}  // namespace

std::unique_ptr<RowSource> RowWindow(std::shared_ptr<RowSource> inner, std::int64_t first, std::int64_t count,
                                     TableInfo info) {
  const TableInfo& in = inner->info();
  if (first < 0 || count <= 0 || first > in.rows - count || info.cols != in.cols || info.dtype != in.dtype)
    throw Error(ErrorKind::kInternal, "RowWindow outside its table");
  info.rows = count;
  return std::make_unique<WindowSource>(std::move(inner), first, std::move(info));
}

std::unique_ptr<RowSource> RowConcat(std::unique_ptr<RowSource> a, std::unique_ptr<RowSource> b, TableInfo info) {
  if (a->info().cols != b->info().cols || a->info().dtype != b->info().dtype || info.cols != a->info().cols ||
      info.dtype != a->info().dtype)
    throw Error(ErrorKind::kInternal, "RowConcat of tables of different widths or dtypes");
  info.rows = a->info().rows + b->info().rows;
  return std::make_unique<ConcatSource>(std::move(a), std::move(b), std::move(info));
}

}  // namespace pe
