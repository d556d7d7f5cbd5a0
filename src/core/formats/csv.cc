#include "core/formats/csv.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/base/error.h"
#include "core/numerics/shortest_float.h"
#include "core/numerics/text_numbers.h"

namespace pe {
namespace {

// A line longer than this is not a row of a table (a 65,536-column float64
// row in shortest round-trip form is about 1.6 MB): refuse it before it is
// held in memory. Columns are capped likewise, before the line is split.
constexpr std::size_t kMaxLineBytes = std::size_t{16} << 20;
constexpr std::size_t kMaxColumns = std::size_t{1} << 20;

std::int64_t StartOf(const TableInfo& info) {
  if (const MetaValue* v = info.meta.Find("start"))
    if (const auto* i = std::get_if<std::int64_t>(v)) return *i;
  return 0;
}

class CsvWriter : public TableWriter {
 public:
  explicit CsvWriter(ByteSink& sink) : sink_(sink) {}
  void Begin(const TableInfo& info) override {
    info_ = info;
    start_ = StartOf(info);
    std::string header = "position";
    for (std::int64_t j = 0; j < info.cols; ++j) fmt::format_to(std::back_inserter(header), ",dim_{}", j);
    header.push_back('\n');
    sink_.Write(header);
  }
  void WriteRows(std::int64_t first, std::int64_t count, const std::byte* rows) override {
    const std::size_t n = EncodeRows(first, count, rows, buf_);
    sink_.Write(buf_.data(), n);
  }
  void End() override {}

  // Blocks are encoded on the pump's threads (core/formats/pump.h), written in order.
  bool encodes_rows() const override { return true; }
  std::size_t EncodeRows(std::int64_t first, std::int64_t count, const std::byte* rows,
                         TextBuffer& buf) const override {
    const auto cols = static_cast<std::size_t>(info_.cols);
    if (info_.dtype == DType::kFloat32) {
      // float32 fast path: the same shortest round-trip digits as
      // AppendNumber, formatted straight into the buffer. Room per row: the
      // position, then per value a comma and the text; plus the scratch
      // bytes WriteShortestFloats may leave after the last one. Reserved
      // for the worst case but not zero-filled: only the pages the text
      // reaches (about 60% of it) are ever touched.
      const std::size_t row_room = 24 + cols * (kShortestFloatMax + 1);
      char* const begin = buf.Reserve(static_cast<std::size_t>(count) * row_room + kShortestFloatRoom);
      char* p = begin;
      for (std::int64_t r = 0; r < count; ++r) {
        const std::byte* row = rows + static_cast<std::size_t>(r) * info_.row_bytes();
        for (std::size_t j = 0; j < cols; ++j) {
          float f;
          std::memcpy(&f, row + 4 * j, 4);
          if (!std::isfinite(f)) {
            std::string probe;
            AppendNumber(probe, row, info_.dtype, j, "CSV output");  // throws the usual error
          }
        }
        p = fmt::format_to(p, FMT_COMPILE("{}"), start_ + first + r);
        p = WriteShortestFloats(p, row, cols, ',');
        *p++ = '\n';
      }
      return static_cast<std::size_t>(p - begin);
    }
    std::string text;
    for (std::int64_t r = 0; r < count; ++r) {
      const std::byte* row = rows + static_cast<std::size_t>(r) * info_.row_bytes();
      fmt::format_to(std::back_inserter(text), "{}", start_ + first + r);
      for (std::size_t j = 0; j < cols; ++j) {
        text.push_back(',');
        AppendNumber(text, row, info_.dtype, j, "CSV output");
      }
      text.push_back('\n');
    }
    if (!text.empty()) std::memcpy(buf.Reserve(text.size()), text.data(), text.size());
    return text.size();
  }
  void WriteEncoded(std::int64_t, std::int64_t, std::string_view bytes) override { sink_.Write(bytes.data(), bytes.size()); }

 private:
  ByteSink& sink_;
  TableInfo info_;
  std::int64_t start_ = 0;
  TextBuffer buf_;
};

// Splits `line` at commas; trims spaces around cells.
void SplitCells(std::string_view line, std::vector<std::string_view>* cells) {
  cells->clear();
  std::size_t begin = 0;
  while (true) {
    std::size_t end = line.find(',', begin);
    std::string_view cell = line.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
    while (!cell.empty() && (cell.front() == ' ' || cell.front() == '\t')) cell.remove_prefix(1);
    while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\t')) cell.remove_suffix(1);
    cells->push_back(cell);
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
}

// Reads a file line by line over fread chunks, byte-exact (fgets would stop
// at a NUL byte and miscount the offsets), never holding more than one line.
class LineReader {
 public:
  LineReader(std::FILE* f, std::string path) : f_(f), path_(std::move(path)), buf_(std::size_t{1} << 16) {}

  /// Continues at byte `offset` of the file.
  void Seek(std::int64_t offset) {
    if (std::fseek(f_, offset, SEEK_SET) != 0)
      ThrowIo(fmt::format("cannot read '{}'", path_), std::strerror(errno));
    pos_ = len_ = 0;
    offset_ = offset;
  }
  /// The next line with its '\n' (the last one may lack it) in `out`;
  /// false at the end of the file. `start` gets the line's byte offset.
  bool Next(std::string* out, std::int64_t* start, std::int64_t line_no) {
    out->clear();
    *start = offset_;
    while (true) {
      if (pos_ == len_) {
        len_ = std::fread(buf_.data(), 1, buf_.size(), f_);
        pos_ = 0;
        if (len_ == 0) {
          if (std::ferror(f_)) ThrowIo(fmt::format("cannot read '{}'", path_), std::strerror(errno));
          return !out->empty();
        }
      }
      const char* begin = buf_.data() + pos_;
      const void* nl = std::memchr(begin, '\n', len_ - pos_);
      const std::size_t n = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - begin) + 1 : len_ - pos_;
      out->append(begin, n);
      pos_ += n;
      offset_ += static_cast<std::int64_t>(n);
      if (out->size() > kMaxLineBytes)
        ThrowInput(fmt::format("'{}'", path_),
                   fmt::format("line {} is longer than {} MiB (not a table?)", line_no, kMaxLineBytes >> 20));
      if (nl) return true;
    }
  }
  /// The byte offset of the next line.
  std::int64_t offset() const { return offset_; }

 private:
  std::FILE* f_;
  std::string path_;
  std::vector<char> buf_;
  std::size_t pos_ = 0, len_ = 0;
  std::int64_t offset_ = 0;
};

// The line's content: without its line end, the byte-order mark of the
// file's first line, or "" for a blank line.
std::string_view Content(const std::string& line, std::int64_t start) {
  std::string_view view(line);
  if (start == 0 && view.substr(0, 3) == "\xEF\xBB\xBF") view.remove_prefix(3);
  while (!view.empty() && (view.back() == '\n' || view.back() == '\r')) view.remove_suffix(1);
  return view;
}

// Where some data rows start: the first, then about one per `stride` bytes
// of file. At most kMaxMarks are kept (every other one is dropped and the
// stride doubled when full), so the index of any file costs at most 1 MiB;
// a block of rows is read from the mark before it (or straight on from the
// previous block, as rows are usually read in order).
struct CsvMark {
  std::int64_t row;
  std::int64_t offset;
};
constexpr std::size_t kMaxMarks = std::size_t{1} << 16;

class CsvSource : public RowSource {
 public:
  CsvSource(std::string path, std::FILE* f, TableInfo info, std::vector<CsvMark> marks, bool has_pos)
      : path_(std::move(path)), f_(f), reader_(f, path_), info_(std::move(info)), marks_(std::move(marks)),
        has_pos_(has_pos) {}
  ~CsvSource() override { std::fclose(f_); }
  const TableInfo& info() const override { return info_; }

  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    std::int64_t row = next_row_;
    if (first != next_row_ || row < 0) {
      auto it = std::upper_bound(marks_.begin(), marks_.end(), first,
                                 [](std::int64_t r, const CsvMark& m) { return r < m.row; });
      --it;  // marks_[0].row == 0 <= first
      reader_.Seek(it->offset);
      row = it->row;
    }
    next_row_ = -1;  // unknown until this block is read whole
    std::vector<std::string_view> cells;
    std::int64_t start = 0;
    const std::size_t skip = has_pos_ ? 1 : 0;
    while (row < first + count) {
      if (!reader_.Next(&line_, &start, 0))
        ThrowInput(fmt::format("'{}'", path_), "the file changed while being read");
      const std::string_view view = Content(line_, start);
      if (view.empty()) continue;  // blank lines were skipped when indexing; skip them again
      if (row++ < first) continue;
      SplitCells(view, &cells);
      // Every row was checked when indexed; a mismatch now means the file
      // changed under us.
      if (cells.size() != skip + static_cast<std::size_t>(info_.cols))
        ThrowInput(fmt::format("'{}'", path_), "the file changed while being read");
      const std::int64_t r = row - 1 - first;
      for (std::int64_t j = 0; j < info_.cols; ++j) {
        double v = 0;
        if (!ParseNumber(cells[skip + static_cast<std::size_t>(j)], &v))
          ThrowInput(fmt::format("'{}'", path_), "the file changed while being read");
        StoreFromDouble(out, info_.dtype, static_cast<std::size_t>(r * info_.cols + j), v);
      }
    }
    next_row_ = row;
  }

 private:
  std::string path_;
  std::FILE* f_;
  LineReader reader_;
  TableInfo info_;
  std::vector<CsvMark> marks_;
  bool has_pos_;
  std::int64_t next_row_ = -1;  ///< the row the reader stands at (-1: unknown)
  std::string line_;
};

}  // namespace

std::unique_ptr<TableWriter> MakeCsvWriter(ByteSink& sink) { return std::make_unique<CsvWriter>(sink); }

std::unique_ptr<RowSource> OpenCsv(const std::string& path) {
  const std::string what = fmt::format("'{}'", path);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
  struct Closer {
    std::FILE* f;
    bool armed = true;
    ~Closer() { if (armed) std::fclose(f); }
  } closer{f};

  std::vector<CsvMark> marks;
  std::int64_t stride = std::int64_t{1} << 16;  // bytes of file between marks
  std::int64_t rows = 0;
  std::vector<std::string_view> cells;
  std::string line;
  std::int64_t line_start = 0, line_no = 0;
  std::int64_t cols = -1;
  bool has_pos = false, all_f32 = true, header_seen = false;
  std::int64_t first_pos = 0, prev_pos = 0;
  LineReader reader(f, path);
  while (reader.Next(&line, &line_start, line_no + 1)) {
    ++line_no;
    const std::string_view view = Content(line, line_start);
    if (view.empty()) continue;  // blank lines (a trailing one, typically)
    if (view.find('\0') != std::string_view::npos)
      ThrowInput(what, fmt::format("line {}: contains a NUL byte (not a text file?)", line_no));
    // Count before splitting: a ragged or absurdly wide line is refused
    // without building a vector of its cells.
    const std::size_t n_cells = static_cast<std::size_t>(std::count(view.begin(), view.end(), ',')) + 1;
    if (cols >= 0 && n_cells != static_cast<std::size_t>(cols + (has_pos ? 1 : 0))) {
      ThrowInput(what, fmt::format("line {}: {} cells, expected {} (ragged row)", line_no, n_cells,
                                   cols + (has_pos ? 1 : 0)));
    }
    if (n_cells > kMaxColumns)
      ThrowInput(what, fmt::format("line {}: {} cells; pe reads at most {} columns", line_no, n_cells, kMaxColumns));
    SplitCells(view, &cells);
    if (!header_seen && rows == 0) {
      header_seen = true;
      double probe;
      if (!ParseNumber(cells[0], &probe)) {  // a header row
        has_pos = cells[0] == "position" || cells[0] == "pos";
        cols = static_cast<std::int64_t>(cells.size()) - (has_pos ? 1 : 0);
        if (cols <= 0) ThrowInput(what, "line 1: the header names no value columns");
        continue;
      }
    }
    if (cols < 0) cols = static_cast<std::int64_t>(cells.size());
    if (static_cast<std::int64_t>(cells.size()) != cols + (has_pos ? 1 : 0)) {
      ThrowInput(what, fmt::format("line {}: {} cells, expected {} (ragged row)", line_no, cells.size(),
                                   cols + (has_pos ? 1 : 0)));
    }
    std::size_t j0 = 0;
    if (has_pos) {
      double p;
      if (!ParseNumber(cells[0], &p) || p != std::floor(p) || std::fabs(p) > 9e15)
        ThrowInput(what, fmt::format("line {}: position '{}' is not an integer", line_no, cells[0]));
      const auto ip = static_cast<std::int64_t>(p);
      if (rows == 0) first_pos = ip;
      else if (ip != prev_pos + 1)
        ThrowInput(what, fmt::format("line {}: position {} does not follow {}", line_no, ip, prev_pos));
      prev_pos = ip;
      j0 = 1;
    }
    for (std::size_t j = j0; j < cells.size(); ++j) {
      double v;
      if (!ParseNumber(cells[j], &v))
        ThrowInput(what, fmt::format("line {}, column {}: '{}' {}", line_no, j + 1,
                                     std::string(cells[j].substr(0, 40)), NumberProblem(cells[j])));
      if (!std::isfinite(v))
        ThrowInput(what, fmt::format("line {}, column {}: value '{}' is not finite (NaN and infinity are not table values)",
                                     line_no, j + 1, std::string(cells[j].substr(0, 40))));
      if (all_f32 && !FitsFloat32(v)) all_f32 = false;
    }
    if (marks.empty() || line_start - marks.back().offset >= stride) {
      if (marks.size() == kMaxMarks) {  // full: keep every other mark, twice as far apart
        for (std::size_t k = 0; k < kMaxMarks / 2; ++k) marks[k] = marks[2 * k];
        marks.resize(kMaxMarks / 2);
        stride *= 2;
      }
      if (marks.empty() || line_start - marks.back().offset >= stride) marks.push_back({rows, line_start});
    }
    ++rows;
  }
  if (rows == 0) ThrowInput(what, "no data rows (empty file or header only)");
  TableInfo info;
  info.rows = rows;
  info.cols = cols;
  info.dtype = all_f32 ? DType::kFloat32 : DType::kFloat64;
  if (has_pos) info.meta.Set("start", first_pos);
  closer.armed = false;
  return std::make_unique<CsvSource>(path, f, std::move(info), std::move(marks), has_pos);
}

}  // namespace pe
