#include "core/base/table_set.h"

#include <fmt/format.h>

#include "core/base/error.h"

namespace pe {

std::vector<std::int64_t> LogicalShape(const TableInfo& info) {
  if (!info.shape.empty()) return info.shape;
  return {info.rows, info.cols};
}

std::string TableSet::Names() const {
  std::string out;
  for (const auto& t : tensors) out += (out.empty() ? "" : ", ") + t->info().name;
  return out;
}

RowSource* TableSet::Find(std::string_view name) const {
  for (const auto& t : tensors)
    if (t->info().name == name) return t.get();
  return nullptr;
}

std::unique_ptr<RowSource> TableSet::Take(std::string_view name, std::string_view flag) {
  for (auto it = tensors.begin(); it != tensors.end(); ++it) {
    if ((*it)->info().name == name) {
      std::unique_ptr<RowSource> out = std::move(*it);
      tensors.erase(it);
      return out;
    }
  }
  ThrowUsage(fmt::format("{} '{}'", flag, name), fmt::format("no such tensor (this table has: {})", Names()));
}

void TableSet::Select(std::string_view name, std::string_view flag) {
  auto keep = Take(name, flag);
  tensors.clear();
  tensors.push_back(std::move(keep));
}

TableInfo SetTensorInfo(const Metadata& meta, std::string_view name, std::int64_t rows, std::int64_t cols, DType dtype) {
  TableInfo t;
  t.name = std::string(name);
  t.rows = rows;
  t.cols = cols;
  t.dtype = dtype;
  t.meta = meta;
  t.meta.Set("tensor", std::string(name));
  return t;
}

TableSet SingleTableSet(std::unique_ptr<RowSource> source) {
  TableSet set;
  set.meta = source->info().meta;
  set.tensors.push_back(std::move(source));
  return set;
}

namespace {

class RenamedSource : public RowSource {
 public:
  RenamedSource(std::unique_ptr<RowSource> inner, TableInfo info) : inner_(std::move(inner)), info_(std::move(info)) {}
  const TableInfo& info() const override { return info_; }
  bool concurrent_reads() const override { return inner_->concurrent_reads(); }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    inner_->ReadRows(first, count, out);
  }

 private:
  std::unique_ptr<RowSource> inner_;
  TableInfo info_;
};

}  // namespace

std::unique_ptr<RowSource> Renamed(std::unique_ptr<RowSource> inner, TableInfo info) {
  return std::make_unique<RenamedSource>(std::move(inner), std::move(info));
}

}  // namespace pe
