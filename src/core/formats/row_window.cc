#include "core/formats/row_window.h"

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

}  // namespace

std::unique_ptr<RowSource> RowWindow(std::shared_ptr<RowSource> inner, std::int64_t first, std::int64_t count,
                                     TableInfo info) {
  const TableInfo& in = inner->info();
  if (first < 0 || count <= 0 || first > in.rows - count || info.cols != in.cols || info.dtype != in.dtype)
    throw Error(ErrorKind::kInternal, "RowWindow outside its table");
  info.rows = count;
  return std::make_unique<WindowSource>(std::move(inner), first, std::move(info));
}

}  // namespace pe
