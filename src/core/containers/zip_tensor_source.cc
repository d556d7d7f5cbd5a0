#include "core/containers/zip_tensor_source.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace pe {
namespace {

class ZipTensorSource : public RowSource {
 public:
  ZipTensorSource(std::shared_ptr<ZipArchive> zip, const ZipMember& member, std::uint64_t offset, TableInfo info,
                  bool big_endian, bool fortran)
      : zip_(std::move(zip)), reader_(zip_->OpenMember(member)), offset_(offset), info_(std::move(info)),
        big_endian_(big_endian), fortran_(fortran) {}
  const TableInfo& info() const override { return info_; }

  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::size_t es = Traits(info_.dtype).size;
    const std::size_t rb = info_.row_bytes();
    if (!fortran_) {
      reader_->Read(offset_ + static_cast<std::uint64_t>(first) * rb, static_cast<std::size_t>(count) * rb, out);
    } else {
      if (cache_.empty()) {
        cache_.resize(static_cast<std::size_t>(info_.rows) * rb);
        reader_->Read(offset_, cache_.size(), cache_.data());
      }
      const auto rows = static_cast<std::size_t>(info_.rows);
      for (std::int64_t c = 0; c < info_.cols; ++c)
        for (std::int64_t r = 0; r < count; ++r)
          std::memcpy(out + static_cast<std::size_t>(r) * rb + static_cast<std::size_t>(c) * es,
                      cache_.data() + (static_cast<std::size_t>(c) * rows + static_cast<std::size_t>(first + r)) * es,
                      es);
    }
    if (big_endian_) {
      const std::size_t n = static_cast<std::size_t>(count * info_.cols);
      for (std::size_t i = 0; i < n; ++i) std::reverse(out + i * es, out + (i + 1) * es);
    }
  }

 private:
  std::shared_ptr<ZipArchive> zip_;
  std::unique_ptr<ZipMemberReader> reader_;
  std::uint64_t offset_;
  TableInfo info_;
  bool big_endian_;
  bool fortran_;
  std::vector<std::byte> cache_;
};

}  // namespace

std::unique_ptr<RowSource> MakeZipTensorSource(std::shared_ptr<ZipArchive> zip, const ZipMember& member,
                                               std::uint64_t offset, TableInfo info, bool big_endian,
                                               bool fortran) {
  return std::make_unique<ZipTensorSource>(std::move(zip), member, offset, std::move(info), big_endian, fortran);
}

}  // namespace pe
