#include "core/formats/raw_rows_writer.h"

namespace pe {
namespace {

class RawRowsWriter : public TableWriter {
 public:
  RawRowsWriter(ByteSink& sink, std::function<std::string(const TableInfo&)> header)
      : sink_(sink), header_(std::move(header)) {}
  void Begin(const TableInfo& info) override {
    row_bytes_ = info.row_bytes();
    sink_.Write(header_(info));
  }
  void WriteRows(std::int64_t, std::int64_t count, const std::byte* rows) override {
    sink_.Write(rows, static_cast<std::size_t>(count) * row_bytes_);
  }
  void End() override {}

 private:
  ByteSink& sink_;
  std::function<std::string(const TableInfo&)> header_;
  std::size_t row_bytes_ = 0;
};

}  // namespace

std::unique_ptr<TableWriter> MakeRawRowsWriter(ByteSink& sink,
                                               std::function<std::string(const TableInfo&)> header) {
  return std::make_unique<RawRowsWriter>(sink, std::move(header));
}

}  // namespace pe
