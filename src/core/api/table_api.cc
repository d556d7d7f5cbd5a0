// The public API's tables (include/pe/table.h, include/pe/types.h) over the
// core: MakeTableSet (generate), OpenTable (read), WriteTables (write).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <thread>

#include <sys/stat.h>

#include <pe/pe.h>

#include "core/api/api_impl.h"
#include "core/api/scheme_spec_of.h"
#include "core/spec/param_table.h"
#include "core/spec/params.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/formats/format.h"
#include "core/schemes/inline_spec.h"
#include "core/base/version.h"
#include "core/formats/hdf5.h"
#include "core/formats/json_tensors.h"
#include "core/formats/safetensors.h"
#include "core/base/parallel_for.h"
#include "core/schemes/registry.h"

namespace pe {

// ---- types.h ------------------------------------------------------------------

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUsage: return "usage";
    case ErrorKind::kInput: return "input";
    case ErrorKind::kIo: return "io";
    case ErrorKind::kBrokenPipe: return "broken-pipe";
    case ErrorKind::kInternal: return "internal";
  }
  return "internal";
}

std::string_view Version() { return PE_VERSION; }

std::string_view DTypeName(DType dtype) { return Traits(dtype).name; }

std::vector<DType> AllDTypes() { return {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}; }
std::size_t DTypeSize(DType dtype) { return Traits(dtype).size; }

DType ParseDType(std::string_view name) {
  const auto d = DTypeFromName(name);
  if (!d) ThrowUsage(fmt::format("dtype '{}'", name), fmt::format("unknown type (known: {})", DTypeNames()));
  return *d;
}

const MetaValue* FindMeta(const MetaList& meta, std::string_view key) {
  for (const auto& [k, v] : meta)
    if (k == key) return &v;
  return nullptr;
}

std::string MetaText(const MetaValue& value) { return MetaToString(value); }

TensorInfo ToTensorInfo(const TableInfo& info) {
  TensorInfo t;
  t.name = info.name;
  t.shape = LogicalShape(info);
  t.dtype = info.dtype;
  t.rows = info.rows;
  t.cols = info.cols;
  t.metadata = ToMetaList(info.meta);
  return t;
}

MetaList ToMetaList(const Metadata& meta) { return MetaList(meta.entries().begin(), meta.entries().end()); }

Metadata ToMetadata(const MetaList& meta) {
  if (meta.size() > kMaxMetadataKeys)
    ThrowUsage("metadata", fmt::format("{} keys; pe writes at most {}", meta.size(), kMaxMetadataKeys));
  std::size_t total = 0;
  for (const auto& [k, v] : meta) {
    const std::size_t bytes = k.size() + (std::holds_alternative<std::string>(v) ? std::get<std::string>(v).size() : 0);
    if (k.size() > kMaxMetadataValueBytes)
      ThrowUsage("metadata", fmt::format("a key of {} bytes; pe writes keys of at most {} bytes", k.size(),
                                         kMaxMetadataValueBytes));
    if (bytes - k.size() > kMaxMetadataValueBytes)
      ThrowUsage(fmt::format("metadata '{}'", EscapeText(k.substr(0, 100))),
                 fmt::format("a value of {} bytes; pe writes values of at most {} bytes", bytes - k.size(),
                             kMaxMetadataValueBytes));
    total += bytes;
    if (total > kMaxMetadataBytes)
      ThrowUsage("metadata", fmt::format("more than {} bytes of keys and values (at '{}'); pe writes at most {}",
                                         kMaxMetadataBytes, EscapeText(k.substr(0, 100)), kMaxMetadataBytes));
  }
  Metadata m;
  for (const auto& [k, v] : meta) m.Set(k, v);
  return m;
}

// ---- RowStream ----------------------------------------------------------------

RowStream::RowStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RowStream::RowStream(RowStream&&) noexcept = default;
RowStream& RowStream::operator=(RowStream&&) noexcept = default;
RowStream::~RowStream() = default;

const TensorInfo& RowStream::info() const { return impl_->info; }

std::int64_t RowStream::block_rows() const { return BlockRows(impl_->info.row_bytes(), impl_->info.rows); }

void RowStream::ReadRows(std::int64_t first, std::int64_t count, void* out, std::size_t out_bytes) {
  const TensorInfo& t = impl_->info;
  if (first < 0 || count < 0 || first > t.rows || count > t.rows - first)
    ThrowUsage(fmt::format("rows [{}, {}+{})", first, first, count),
               fmt::format("outside tensor '{}' of {} rows", t.name, t.rows));
  if (count == 0) return;
  if (out == nullptr || out_bytes / t.row_bytes() < static_cast<std::size_t>(count))
    ThrowUsage(fmt::format("buffer of {} bytes", out_bytes),
               fmt::format("{} rows of tensor '{}' need {} bytes", count, t.name,
                           static_cast<std::size_t>(count) * t.row_bytes()));
  impl_->source->ReadRows(first, count, static_cast<std::byte*>(out));
}

void RowStream::ReadAll(void* out, std::size_t out_bytes) {
  const TensorInfo& t = impl_->info;
  if (out == nullptr || out_bytes < t.byte_size())
    ThrowUsage(fmt::format("buffer of {} bytes", out_bytes),
               fmt::format("tensor '{}' ({} x {} {}) needs {} bytes", t.name, t.rows, t.cols, DTypeName(t.dtype),
                           t.byte_size()));
  RowSource& src = *impl_->source;
  const std::int64_t block = block_rows();
  const std::int64_t blocks = (t.rows + block - 1) / block;
  auto* bytes = static_cast<std::byte*>(out);
  auto fill = [&](std::int64_t b) {
    const std::int64_t first = b * block;
    const std::int64_t n = std::min(block, t.rows - first);
    src.ReadRows(first, n, bytes + static_cast<std::size_t>(first) * t.row_bytes());
  };
  const int threads = static_cast<int>(std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, 64));
  if (!src.concurrent_reads() || blocks < 2 || threads < 2) {
    for (std::int64_t b = 0; b < blocks; ++b) fill(b);
    return;
  }
  // Generators fill disjoint blocks on every core; block b goes to worker b % n.
  const int n = static_cast<int>(std::min<std::int64_t>(threads, blocks));
  ParallelFor(n, [&](int w) {
    for (std::int64_t b = w; b < blocks; b += n) fill(b);
  });
}

void RowStream::ForEachBlock(const std::function<void(const RowBlock&)>& fn, std::int64_t block) {
  const TensorInfo& t = impl_->info;
  if (block < 0) ThrowUsage(fmt::format("block of {} rows", block), "must be >= 0");
  if (block == 0) block = block_rows();
  block = std::min(block, std::max<std::int64_t>(t.rows, 1));
  if (t.row_bytes() != 0 && static_cast<std::uint64_t>(block) > (std::uint64_t{1} << 40) / t.row_bytes())
    ThrowUsage(fmt::format("block of {} rows", block), "larger than 1 TiB");
  std::vector<std::byte> buf(static_cast<std::size_t>(block) * t.row_bytes());
  for (std::int64_t first = 0; first < t.rows; first += block) {
    const std::int64_t n = std::min(block, t.rows - first);
    impl_->source->ReadRows(first, n, buf.data());
    fn(RowBlock{first, n, buf.data(), static_cast<std::size_t>(n) * t.row_bytes()});
  }
}

// ---- Table ------------------------------------------------------------------

Table::Table(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Table::Table(Table&&) noexcept = default;
Table& Table::operator=(Table&&) noexcept = default;
Table::~Table() = default;

const MetaList& Table::metadata() const { return impl_->meta; }
std::size_t Table::size() const { return impl_->streams.size(); }

std::vector<std::string> Table::names() const {
  std::vector<std::string> out;
  for (const auto& s : impl_->streams) out.push_back(s.info().name);
  return out;
}

RowStream& Table::tensor(std::size_t i) {
  if (i >= impl_->streams.size())
    ThrowUsage(fmt::format("tensor {}", i), fmt::format("the table has {} tensors", impl_->streams.size()));
  return impl_->streams[i];
}

RowStream& Table::tensor(std::string_view name) {
  for (auto& s : impl_->streams)
    if (s.info().name == name) return s;
  std::string list;
  for (const auto& s : impl_->streams) list += (list.empty() ? "" : ", ") + s.info().name;
  ThrowUsage(fmt::format("tensor '{}'", name), fmt::format("not in this table (it has: {})", list));
}

Table MakeTable(TableSet set) {
  auto impl = std::make_unique<Table::Impl>();
  impl->set = std::move(set);
  impl->meta = ToMetaList(impl->set.meta);
  if (impl->meta.empty() && !impl->set.tensors.empty()) impl->meta = ToMetaList(impl->set.tensors[0]->info().meta);
  for (auto& t : impl->set.tensors) {
    auto s = std::make_unique<RowStream::Impl>();
    s->source = t.get();
    s->info = ToTensorInfo(t->info());
    impl->streams.emplace_back(std::move(s));
  }
  return Table(std::move(impl));
}

// ---- generate -----------------------------------------------------------------

Table GenerateTable(const Spec& spec) { return MakeTable(MakeTableSet(SchemeSpecOf(CheckSpec(spec)))); }

// ---- read ---------------------------------------------------------------------

Table OpenTableFile(const std::string& path, const ReadOptions& options) {
  OpenOptions oo;
  if (!options.format.empty()) {
    oo.format = FormatFromName(options.format);
    if (!oo.format)
      ThrowUsage(fmt::format("format '{}'", options.format), fmt::format("unknown format (known: {})", FormatNames()));
  }
  if (!options.tensor.empty()) {
    oo.dataset = options.tensor;
    return MakeTable(SingleTableSet(OpenTable(path, oo)));
  }
  return MakeTable(OpenTableSet(path, oo));
}

std::vector<std::string> ListTableTensors(const std::string& path, const ReadOptions& options) {
  OpenOptions oo;
  if (!options.format.empty()) {
    oo.format = FormatFromName(options.format);
    if (!oo.format)
      ThrowUsage(fmt::format("format '{}'", options.format), fmt::format("unknown format (known: {})", FormatNames()));
  }
  return ListTensorNames(path, oo);
}

std::vector<std::string> TableFormats() {
  std::vector<std::string> out;
  for (const auto& f : Formats()) out.emplace_back(f.name);
  return out;
}

std::vector<std::string> WritableTableFormats() {
  std::vector<std::string> out;
  for (const auto& f : Formats())
    if (f.writable) out.emplace_back(f.name);
  return out;
}

bool KnownTableFormat(std::string_view name) { return FormatFromName(name).has_value(); }

// ---- wrap and write ---------------------------------------------------------------

namespace {

// Rows in the caller's memory, not copied.
class ViewRowSource : public RowSource {
 public:
  ViewRowSource(TableInfo info, const std::byte* data) : info_(std::move(info)), data_(data) {}
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    std::memcpy(out, data_ + static_cast<std::size_t>(first) * info_.row_bytes(),
                static_cast<std::size_t>(count) * info_.row_bytes());
  }
  bool concurrent_reads() const override { return true; }

 private:
  TableInfo info_;
  const std::byte* data_;
};

}  // namespace

Table WrapTensors(const std::vector<TensorView>& tensors, const MetaList& metadata) {
  if (tensors.empty()) ThrowUsage("tensors", "none given");
  TableSet set;
  set.meta = ToMetadata(metadata);
  for (const TensorView& v : tensors) {
    const std::string what = fmt::format("tensor '{}'", v.name);
    if (v.name.empty()) ThrowUsage("tensor ''", "a tensor needs a name");
    if (set.Find(v.name)) ThrowUsage(what, "given twice");
    if (v.shape.empty()) ThrowUsage(what, "a 0-D (scalar) tensor is not a table; give it at least one axis");
    if (v.data == nullptr) ThrowUsage(what, "no data");
    std::int64_t rows = 1;
    for (std::size_t i = 0; i + 1 < v.shape.size(); ++i) {
      if (v.shape[i] <= 0) ThrowUsage(what, fmt::format("axis {} has extent {}; every extent must be >= 1", i, v.shape[i]));
      if (rows > (std::int64_t{1} << 50) / v.shape[i]) ThrowUsage(what, "too many rows");
      rows *= v.shape[i];
    }
    const std::int64_t last = v.shape.back();
    if (last <= 0) ThrowUsage(what, fmt::format("axis {} has extent {}; every extent must be >= 1", v.shape.size() - 1, last));
    TableInfo info;
    info.name = v.name;
    info.dtype = v.dtype;
    if (v.shape.size() == 1) {
      info.rows = last;
      info.cols = 1;
    } else {
      info.rows = rows;
      info.cols = last;
    }
    CheckedTableBytes(info.rows, info.cols, info.dtype);
    if (v.shape.size() != 2) info.shape = v.shape;
    info.meta = set.meta;
    set.tensors.push_back(std::make_unique<ViewRowSource>(std::move(info), static_cast<const std::byte*>(v.data)));
  }
  return MakeTable(std::move(set));
}

namespace {

Format ResolveFormat(const std::string& path, const std::string& name) {
  std::optional<Format> forced;
  if (!name.empty()) {
    forced = FormatFromName(name);
    if (!forced) ThrowUsage(fmt::format("format '{}'", name), fmt::format("unknown format (known: {})", FormatNames()));
  }
  return ResolveOutputFormat(path, forced);
}

}  // namespace

std::string OutputFormat(const std::string& path, const std::string& format) {
  return std::string(Traits(ResolveFormat(path, format)).name);
}

void WriteTableFile(Table& table, const std::string& path, const WriteOptions& options) {
  const Format format = ResolveFormat(path, options.format);
  if (options.threads < 0 || options.threads > 1024)
    ThrowUsage(fmt::format("threads {}", options.threads), "must be in 0..1024 (0: all cores)");
  if (options.gzip_level < 0 || options.gzip_level > 9)
    ThrowUsage(fmt::format("--compress {}", options.gzip_level), "must be a gzip level in 1..9 (0: none)");
  if (options.gzip_level > 0 && format != Format::kHdf5)
    ThrowUsage(fmt::format("--compress {}", options.gzip_level), "applies to HDF5 output only (-o FILE.h5)");
  WriteSettings settings;
  settings.threads = options.threads;
  settings.hdf5_gzip_level = options.gzip_level;
  settings.fsync = options.fsync;
  settings.progress = options.progress;
  WriteTables(ImplAccess::Of(table).set, format, path, settings);
}

}  // namespace pe
