// JSON: one document
//   {"meta": {...every parameter...}, "shape": [rows, cols],
//    "data": [[v, v, ...], ...]}
// with one row of "data" per line and numbers in shortest round-trip form.
// NaN and infinity are refused (JSON has no spelling for them).
//
// Reading accepts the same shape from other tools; "meta" is optional, a
// "dtype" in it sets the table's dtype, else it is float32 when every value
// is exactly a float32. JSON cannot be read by rows, so a first pass checks
// the document and indexes its numbers, and rows are parsed again from the
// file when read (JsonValues; files up to 1 GiB, in a few hundred KiB of
// memory). A pipe is held in memory instead.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/base/error.h"
#include "core/base/text_escape.h"
#include "core/formats/format.h"
#include "core/base/output.h"

namespace pe {

std::unique_ptr<TableWriter> MakeJsonWriter(ByteSink& sink);
std::unique_ptr<RowSource> OpenJson(const std::string& path);

class JsonFileChars;

/// The numbers of a JSON table's "data" (both JSON readers). Two modes:
///
/// - Indexed (StreamFrom; a regular file): the parse keeps no numbers, only
///   their count and, every kStride numbers, a checkpoint (the number's index
///   and the byte offset where the text before it holds only whitespace,
///   commas and brackets). Copy re-reads the numbers from the file, from the
///   nearest checkpoint (sequential reads just continue), with
///   std::from_chars: memory is a few hundred KiB whatever the file's size.
///   The numbers are the parse's: correctly rounded to double like
///   nlohmann's strtod and integer conversions (an integer -0 is +0, as
///   nlohmann and Python read it), then rounded to the table's dtype.
/// - Held (a pipe or other unseekable input): the numbers in chunks of 1 MiB
///   (no reallocation that holds the old and the new copy at once), in the
///   table's dtype when it is known before the data (pe's files give it in
///   "meta" first), else as doubles, rounded to the dtype when rows are read.
class JsonValues {
 public:
  static constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
  static constexpr std::uint64_t kStride = 16384;  ///< numbers between two checkpoints

  JsonValues();
  ~JsonValues();
  JsonValues(JsonValues&&) noexcept;
  JsonValues& operator=(JsonValues&&) noexcept;

  /// Index instead of holding: `fd` (duplicated; the caller keeps its own)
  /// is the file that `chars` parses; `what` names it in errors.
  void StreamFrom(int fd, const JsonFileChars* chars, const std::string& what);
  /// Store values in `dtype` from now on; only before the first value.
  void SetDType(DType dtype) {
    if (size_ == 0) {
      direct_ = true;
      dtype_ = dtype;
    }
  }
  /// The "data" array opened: its first number comes after the current offset.
  void MarkDataStart();
  void Push(double v);
  std::size_t size() const { return size_; }
  /// Writes values [first, first + n) to `out` in `dtype`.
  void Copy(std::size_t first, std::size_t n, DType dtype, std::byte* out) const;
  bool direct() const { return direct_; }
  DType dtype() const { return dtype_; }

 private:
  struct Checkpoint {
    std::uint64_t index, offset;
  };
  struct Scanner;  // the re-reading side of the indexed mode (json.cc)

  bool direct_ = false;
  DType dtype_ = DType::kFloat64;
  std::size_t size_ = 0;
  std::vector<std::unique_ptr<std::byte[]>> chunks_;
  const JsonFileChars* chars_ = nullptr;  ///< set while an indexed parse runs
  std::vector<Checkpoint> checkpoints_;
  std::unique_ptr<Scanner> scanner_;  ///< indexed mode
};

/// Both JSON readers' key rules. A key given twice in one object is refused
/// (nlohmann's DOM and Python's json keep the last silently, so such a
/// document means different things to different readers), and so is an
/// object beyond kMaxMetadataKeys keys (its keys are held to find
/// duplicates). The first is the key as messages quote it (JSON-escaped, cut
/// at 100 bytes), the second the refusal of a count; both empty when fine.
std::string JsonKeyQuoted(const std::string& key);
std::string JsonKeyCountError(bool in_meta, std::size_t meta_keys, std::size_t object_keys);

/// A parsed JSON table (either reader): its values held as read, given out in
/// the table's dtype.
class JsonValuesSource : public RowSource {
 public:
  JsonValuesSource(TableInfo info, JsonValues values) : info_(std::move(info)), values_(std::move(values)) {}
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    values_.Copy(static_cast<std::size_t>(first * info_.cols), static_cast<std::size_t>(count * info_.cols),
                 info_.dtype, out);
  }

 private:
  TableInfo info_;
  JsonValues values_;
};

/// Characters of a FILE for nlohmann's sax_parse(first, last, ...), read in
/// 64 KiB chunks: its own FILE* adapter calls fgetc once per character,
/// which costs about half of the parse.
class JsonFileChars {
 public:
  explicit JsonFileChars(std::FILE* f) : f_(f), buf_(std::size_t{1} << 16) {}
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;
    Iterator() = default;
    explicit Iterator(JsonFileChars* chars) : chars_(chars && chars->Fill() ? chars : nullptr) {}
    reference operator*() const { return chars_->buf_[chars_->pos_]; }
    Iterator& operator++() {
      if (++chars_->pos_ == chars_->len_ && !chars_->Fill()) chars_ = nullptr;
      return *this;
    }
    bool operator==(const Iterator& other) const { return chars_ == other.chars_; }
    bool operator!=(const Iterator& other) const { return chars_ != other.chars_; }

   private:
    JsonFileChars* chars_ = nullptr;  ///< nullptr at the end
  };
  Iterator begin() { return Iterator(this); }
  Iterator end() { return Iterator(); }
  /// Bytes of the file handed to the parser so far (nlohmann has read one
  /// character past a number when it reports it).
  std::uint64_t consumed() const { return base_ + pos_; }

 private:
  bool Fill() {
    base_ += len_;
    len_ = std::fread(buf_.data(), 1, buf_.size(), f_);
    pos_ = 0;
    CheckStrings();
    return len_ > 0;
  }
  // Strings (keys and metadata values) longer than kMaxMetadataValueBytes
  // are refused as they arrive, before the parser has gathered them: a
  // 200 MB "scheme" would otherwise be held several times over.
  void CheckStrings() {
    const char* p = buf_.data();
    for (std::size_t i = 0; i < len_;) {
      if (!in_string_) {
        const void* q = std::memchr(p + i, '"', len_ - i);
        if (!q) break;
        i = static_cast<std::size_t>(static_cast<const char*>(q) - p) + 1;
        in_string_ = true;
        string_bytes_ = 0;
        string_start_ = base_ + i - 1;
        continue;
      }
      const char c = p[i++];
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
        continue;
      }
      if (++string_bytes_ > kMaxMetadataValueBytes)
        ThrowInput(what_, fmt::format("the string at byte {} is longer than {} KiB (pe reads keys and metadata "
                                      "values of at most {} KiB){}",
                                      string_start_, kMaxMetadataValueBytes >> 10, kMaxMetadataValueBytes >> 10,
                                      key_ && !key_->empty() ? fmt::format(", after the key '{}'",
                                                                           EscapeText(key_->substr(0, 100)))
                                                             : std::string()));
    }
  }

 public:
  /// Names the file in the refusal of a long string, and the last key
  /// seen (the parser's) before it.
  void SetContext(std::string what, const std::string* key) {
    what_ = std::move(what);
    key_ = key;
  }

 private:
  std::string what_ = "JSON";
  const std::string* key_ = nullptr;
  bool in_string_ = false, escaped_ = false;
  std::size_t string_bytes_ = 0;
  std::uint64_t string_start_ = 0;
  std::FILE* f_;
  std::vector<char> buf_;
  std::size_t pos_ = 0, len_ = 0;
  std::uint64_t base_ = 0;  ///< file offset of buf_[0]
};

/// JSON tables above this size are not read (both JSON readers).
inline constexpr std::int64_t kMaxJsonBytes = std::int64_t{1} << 30;

}  // namespace pe
