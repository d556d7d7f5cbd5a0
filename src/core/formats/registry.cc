#include "core/formats/format.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/base/error.h"
#include "core/formats/cos_sin_pairs.h"
#include "core/formats/csv.h"
#include "core/formats/hdf5.h"
#include "core/formats/json.h"
#include "core/formats/npy.h"
#include "core/formats/npz.h"
#include "core/formats/torch_checkpoint.h"
#include "core/formats/json_tensors.h"
#include "core/formats/safetensors.h"
#include "core/formats/gguf_tables.h"
#include "core/formats/onnx.h"
#include "core/base/output.h"
#include "core/formats/pump.h"

namespace pe {

const std::vector<FormatTraits>& Formats() {
  static const std::vector<FormatTraits> kFormats = {
      {Format::kCsv, "csv", {".csv"}, false, false},
      {Format::kJson, "json", {".json"}, false, false},
      {Format::kNpy, "npy", {".npy"}, false, true},
      {Format::kHdf5, "hdf5", {".h5", ".hdf5"}, true, true},
      {Format::kSafetensors, "safetensors", {".safetensors"}, false, true},
      {Format::kNpz, "npz", {".npz"}, false, true, false},
      {Format::kTorch, "torch", {".pt", ".pth", ".bin", ".ckpt"}, false, true, false},
      {Format::kGguf, "gguf", {".gguf"}, false, true, false},
      {Format::kOnnx, "onnx", {".onnx"}, false, true, false},
  };
  return kFormats;
}

const FormatTraits& Traits(Format format) {
  return Formats()[static_cast<std::size_t>(format)];
}

std::optional<Format> FormatFromName(std::string_view name) {
  for (const auto& f : Formats()) {
    if (f.name == name) return f.format;
    if (name == "h5" && f.format == Format::kHdf5) return f.format;
  }
  return std::nullopt;
}

std::string FormatNames() {
  std::string out;
  for (const auto& f : Formats()) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

std::string WritableFormatNames() {
  std::string out;
  for (const auto& f : Formats())
    if (f.writable) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

std::optional<Format> FormatFromExtension(const std::string& path) {
  const auto slash = path.rfind('/');
  const auto dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return std::nullopt;
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const auto& f : Formats())
    for (auto e : f.extensions)
      if (e == ext) return f.format;
  return std::nullopt;
}

Format ResolveOutputFormat(const std::string& path,
                           std::optional<Format> forced) {
  if (IsStdStream(path)) {
    const Format f = forced.value_or(Format::kCsv);
    if (Traits(f).needs_seekable_file) {
      ThrowUsage(fmt::format("--format {}", Traits(f).name),
                 "cannot be written to standard output (HDF5 needs a seekable "
                 "file); give a file name with -o");
    }
    if (!Traits(f).writable) ThrowUsage(fmt::format("--format {}", Traits(f).name), fmt::format("pe reads {} but does not write it (it writes {})", Traits(f).name, WritableFormatNames()));
    return f;
  }
  std::optional<Format> f = forced ? forced : FormatFromExtension(path);
  if (f && !Traits(*f).writable)
    ThrowUsage(fmt::format("-o '{}'", path),
               fmt::format("pe reads {} but does not write it; write {}", Traits(*f).name, WritableFormatNames()));
  if (f) return *f;
  ThrowUsage(fmt::format("-o '{}'", path),
             fmt::format("unknown file extension; use --format ({})", WritableFormatNames()));
}

namespace {

std::unique_ptr<TableWriter> MakeStreamWriter(Format format, ByteSink& sink) {
  switch (format) {
    case Format::kCsv: return MakeCsvWriter(sink);
    case Format::kJson: return MakeJsonWriter(sink);
    case Format::kNpy: return MakeNpyWriter(sink);
    case Format::kHdf5: break;
    case Format::kSafetensors: return MakeSafetensorsTableWriter(sink);
    case Format::kNpz:
    case Format::kTorch:
    case Format::kGguf:
    case Format::kOnnx: break;  // read only (ResolveOutputFormat refuses them)
  }
  throw Error(ErrorKind::kInternal, "no stream writer for this format");
}

// Blocks in order; produced on several threads when the source allows
// (core/formats/pump.h: --threads, progress).
void Pump(RowSource& source, TableWriter& writer, const WriteSettings& settings) { PumpRows(source, writer, settings); }

// HDF5 seeks and rewrites its file: a device or a pipe as -o cannot take it.
void CheckSeekableTarget(const std::string& path, Format format) {
  struct stat st;
  if (Traits(format).needs_seekable_file && ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) &&
      !S_ISDIR(st.st_mode)) {
    ThrowUsage(fmt::format("cannot write '{}'", path),
               fmt::format("{} needs a regular file (it seeks); a device or a pipe cannot hold it",
                           Traits(format).name == "hdf5" ? "HDF5" : std::string(Traits(format).name)));
  }
}

}  // namespace

void WriteTable(RowSource& source, Format format, const std::string& path, const WriteSettings& settings) {
  CheckedTableBytes(source.info().rows, source.info().cols, source.info().dtype);
  if (IsStdStream(path)) {
    if (Traits(format).needs_seekable_file)
      ThrowUsage("standard output", "HDF5 needs a seekable file; use -o FILE");
    if (Traits(format).binary && ::isatty(STDOUT_FILENO)) {
      ThrowUsage("standard output",
                 fmt::format("refusing to write binary {} to a terminal; "
                             "redirect it or use -o FILE",
                             Traits(format).name));
    }
    FileSink sink(stdout, "standard output", settings.fsync);
    auto writer = MakeStreamWriter(format, sink);
    Pump(source, *writer, settings);
    sink.Flush();
    return;
  }
  CheckSeekableTarget(path, format);
  CheckFreeSpace(path, MinOutputBytes(source.info(), format, settings));
  AtomicFile file(path, settings.fsync);
  const bool early = file.replaces() || settings.fsync;  // writeback from the start (WritebackPolicy)
  if (format == Format::kHdf5) {
    file.ReleaseFile();
    auto writer = MakeHdf5Writer(file.temp_path(), path, early, settings.hdf5_gzip_level);
    Pump(source, *writer, settings);
  } else {
    FileSink sink(file.file(), "'" + path + "'", early);
    auto writer = MakeStreamWriter(format, sink);
    Pump(source, *writer, settings);
    sink.Flush();
  }
  file.Commit();
}

bool HoldsSeveralTensors(Format format) {
  return format == Format::kHdf5 || format == Format::kJson || format == Format::kSafetensors || !Traits(format).writable;
}

void WriteTables(TableSet& set, Format format, const std::string& path, const WriteSettings& settings) {
  if (set.tensors.empty()) throw Error(ErrorKind::kInternal, "WriteTables: an empty set");
  if (set.tensors.size() == 1) return WriteTable(*set.tensors.front(), format, path, settings);
  if (!HoldsSeveralTensors(format)) {
    // "what" names the format, chosen by --format, the extension or stdout's CSV default.
    ThrowUsage(fmt::format("{} output", Traits(format).name),
               fmt::format("{} holds one tensor and this scheme makes {} ({}); choose one with --tensor, or write "
                           "safetensors, HDF5 or JSON",
                           Traits(format).name == "csv" ? "CSV" : "NPY",
                           set.tensors.size(), set.Names()));
  }
  for (const auto& t : set.tensors) CheckedTableBytes(t->info().rows, t->info().cols, t->info().dtype);
  if (IsStdStream(path)) {
    if (Traits(format).needs_seekable_file)
      ThrowUsage("standard output", "HDF5 needs a seekable file; use -o FILE");
    if (Traits(format).binary && ::isatty(STDOUT_FILENO))
      ThrowUsage("standard output", fmt::format("refusing to write binary {} to a terminal; redirect it or use -o FILE",
                                                Traits(format).name));
    FileSink sink(stdout, "standard output", settings.fsync);
    if (format == Format::kJson) WriteJsonTensors(set, sink);
    else WriteSafetensors(set, sink, settings.threads);
    sink.Flush();
    return;
  }
  CheckSeekableTarget(path, format);
  AtomicFile file(path, settings.fsync);
  const bool early = file.replaces() || settings.fsync;  // writeback from the start (WritebackPolicy)
  if (format == Format::kHdf5) {
    file.ReleaseFile();
    bool first = true;
    for (auto& t : set.tensors) {
      auto writer = first ? MakeHdf5Writer(file.temp_path(), path, early, settings.hdf5_gzip_level)
                          : MakeHdf5AppendWriter(file.temp_path(), path, early, settings.hdf5_gzip_level);
      Pump(*t, *writer, settings);
      first = false;
    }
  } else {
    FileSink sink(file.file(), "'" + path + "'", early);
    if (format == Format::kJson) WriteJsonTensors(set, sink);
    else WriteSafetensors(set, sink, settings.threads);
    sink.Flush();
  }
  file.Commit();
}

// The reader for `format` (OpenTable has checked the path).
static std::unique_ptr<RowSource> OpenByFormat(const std::string& path, Format format, const OpenOptions& options);

// OpenByFormat, where a name may be a component of a (cos, sin) pair cache
// (core/formats/cos_sin_pairs.h): "<tensor>.cos" of a file's tensor, or
// "cos"/"sin" of a file of one table. A tensor stored under that very name
// is read as itself.
static std::unique_ptr<RowSource> OpenCosSinAware(const std::string& path, Format format, const OpenOptions& options) {
  std::string base, which;
  const bool component = ParseCosSinComponentName(options.dataset, &base, &which);
  if (!component) return OpenByFormat(path, format, options);
  std::unique_ptr<RowSource> source;
  try {
    source = OpenByFormat(path, format, options);
  } catch (const Error& not_found) {
    if (base.empty()) throw;
    OpenOptions whole = options;
    whole.dataset = base;
    std::unique_ptr<RowSource> inner;
    try {
      inner = OpenByFormat(path, format, whole);
    } catch (const Error&) {
      throw not_found;  // the base is no tensor either: the name's own error
    }
    std::optional<CosSinPairs> pairs = CosSinPairsOf(*inner);
    if (!pairs) throw not_found;
    return CosSinComponent(std::shared_ptr<RowSource>(std::move(inner)), *pairs, which);
  }
  // A file of one table (.npy) opened as "cos"/"sin": its component when it holds pairs.
  if (base.empty() && source->info().name != which)
    if (std::optional<CosSinPairs> pairs = CosSinPairsOf(*source))
      return CosSinComponent(std::shared_ptr<RowSource>(std::move(source)), *pairs, which);
  return source;
}

std::unique_ptr<RowSource> OpenTable(const std::string& path,
                                     const OpenOptions& options) {
  std::optional<Format> format = options.format;
  if (!format) format = FormatFromExtension(path);
  if (!format) {
    ThrowUsage(fmt::format("'{}'", path),
               fmt::format("unknown file extension; use --format ({})", FormatNames()));
  }
  if (IsStdStream(path))
    ThrowUsage("standard input", "reading tables from standard input is not supported; give a file");
  // Readers seek (NPY, CSV row index, HDF5): refuse what cannot be sought,
  // and never open() a FIFO, which would block until a writer comes.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
  if (S_ISDIR(st.st_mode)) ThrowInput(fmt::format("'{}'", path), "is a directory, not a table file");
  if (!S_ISREG(st.st_mode))
    ThrowInput(fmt::format("'{}'", path), "is not a regular file (a pipe or a device); save it to a file first");
  std::FILE* probe = std::fopen(path.c_str(), "rb");
  if (!probe) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
  std::fclose(probe);
  std::unique_ptr<RowSource> source = OpenCosSinAware(path, *format, options);
  // Every consumer may divide by rows and cols: an empty table is an error.
  const TableInfo& info = source->info();
  if (info.rows <= 0 || info.cols <= 0)
    ThrowInput(fmt::format("'{}'", path), fmt::format("the table is empty ({} x {})", info.rows, info.cols));
  return source;
}

std::unique_ptr<RowSource> OpenByFormat(const std::string& path, Format format, const OpenOptions& options) {
  switch (format) {
    case Format::kCsv: return OpenCsv(path);
    case Format::kJson:
      if (LooksLikeJsonTensors(path)) return OpenJsonTensor(path, options.dataset);  // multi-tensor shape
      return OpenJson(path);
    case Format::kNpy: return OpenNpy(path);
    case Format::kHdf5: return OpenHdf5(path, options.dataset);
    case Format::kSafetensors: return OpenSafetensors(path, options.dataset);
    // Read-only model containers (core/formats/npz, torch_checkpoint, gguf_tables, onnx).
    case Format::kNpz: return OpenNpz(path, options.dataset);
    case Format::kTorch: return OpenTorch(path, options.dataset);
    case Format::kGguf: return OpenGgufTensor(path, options.dataset);
    case Format::kOnnx: return OpenOnnx(path, options.dataset);
  }
  throw Error(ErrorKind::kInternal, "unknown format");
}

// `names` with every (cos, sin) pair cache replaced by its two components
// (core/formats/cos_sin_pairs.h). A file of one table (.npy) is opened to
// see; of a checkpoint, the tensors' descriptions (one parse) say which
// are marked, and only [L, n, 2] ones are opened for the value test; of a
// safetensors, HDF5 or .npz file of at most kMaxPairScan tensors each is
// opened (the listing of a file of thousands of tensors stays one parse);
// GGUF, ONNX and JSON files are not searched.
constexpr std::size_t kMaxPairScan = 256;

static std::vector<std::string> ExpandCosSinNames(const std::string& path, Format format, const OpenOptions& options,
                                                  const std::vector<std::string>& names) {
  auto components = [](const std::string& base) {
    return std::vector<std::string>{CosSinComponentName(base, "cos"), CosSinComponentName(base, "sin")};
  };
  if (names.empty()) {
    if (format != Format::kNpy) return names;
    std::unique_ptr<RowSource> one = OpenByFormat(path, format, options);
    return CosSinPairsOf(*one) ? components("") : names;
  }
  // GGUF and ONNX name their tensors by their engines' conventions, JSON
  // holds pe's own tensors: none is searched (each open would parse the
  // file again).
  if (format == Format::kGguf || format == Format::kOnnx || format == Format::kJson || format == Format::kCsv)
    return names;
  std::vector<const TableInfo*> infos(names.size(), nullptr);
  std::optional<TorchCheckpoint> ck;
  if (format == Format::kTorch) {
    ck = ReadTorchCheckpoint(path);
    for (std::size_t i = 0; i < names.size(); ++i)
      for (const auto& e : ck->tensors)
        if (e.info && e.tensor.path == names[i]) infos[i] = &*e.info;
  } else if (names.size() > kMaxPairScan) {
    return names;
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    bool pairs = false;
    if (infos[i] && !MayBePackedPairs(*infos[i])) {
      pairs = MarkedCosSinPairs(*infos[i]).has_value();
    } else if (!ck || infos[i]) {
      OpenOptions one = options;
      one.dataset = names[i];
      std::unique_ptr<RowSource> src = OpenByFormat(path, format, one);
      pairs = CosSinPairsOf(*src).has_value();
    }
    if (!pairs) {
      out.push_back(names[i]);
      continue;
    }
    for (auto& c : components(names[i])) out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::string> ListTensorNames(const std::string& path, const OpenOptions& options) {
  // OpenTable checks the path (missing, directory, FIFO) and the extension
  // and gives those errors; the tensors are listed only for a regular file.
  const std::optional<Format> format = options.format ? options.format : FormatFromExtension(path);
  struct stat st;
  if (!format || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    OpenTable(path, options);  // throws the error that applies
    return {};
  }
  std::vector<std::string> names;
  switch (*format) {
    case Format::kHdf5: names = ListHdf5Datasets(path); break;
    case Format::kSafetensors:
      for (const auto& t : ListSafetensors(path)) names.push_back(t.name);
      break;
    case Format::kJson:
      if (LooksLikeJsonTensors(path)) names = ListJsonTensorNames(path);
      break;
    case Format::kCsv:
    case Format::kNpy: break;
    // Read-only model containers (core/formats/npz, torch_checkpoint, gguf_tables, onnx).
    case Format::kNpz: names = ListNpz(path); break;
    case Format::kTorch: names = ListTorch(path); break;
    case Format::kGguf: names = ListGgufTensorNames(path); break;
    case Format::kOnnx: names = ListOnnxTensors(path); break;
  }
  return ExpandCosSinNames(path, *format, options, names);
}

TableSet OpenTableSet(const std::string& path, const OpenOptions& options) {
  if (!options.dataset.empty()) return SingleTableSet(OpenTable(path, options));
  const std::vector<std::string> names = ListTensorNames(path, options);
  if (names.size() <= 1) return SingleTableSet(OpenTable(path, options));
  TableSet set;
  OpenOptions one = options;
  for (const auto& name : names) {
    one.dataset = name;
    set.tensors.push_back(OpenTable(path, one));
  }
  set.meta = set.tensors.front()->info().meta;
  return set;
}

}  // namespace pe
