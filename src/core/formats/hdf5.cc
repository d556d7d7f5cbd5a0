#include "core/formats/hdf5.h"

#include <fmt/format.h>
#include <hdf5.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <variant>
#include <vector>

#include "core/base/error.h"
#include "core/base/output.h"
#include "core/formats/pump.h"
#include <pe/runtime.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PE_HAS_ASAN 1
#endif
#endif
#ifndef PE_HAS_ASAN
#define PE_HAS_ASAN 0
#endif

namespace pe {
namespace {

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept {
    Reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = H5I_INVALID_HID;
    return *this;
  }
  ~Handle() { Reset(); }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }
  void Reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = H5I_INVALID_HID;
  }
  /// Closes now and reports failure (a close flushes data for files).
  bool Close() {
    herr_t rc = (id_ >= 0 && close_) ? close_(id_) : 0;
    id_ = H5I_INVALID_HID;
    return rc >= 0;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer close_ = nullptr;
};

void SilenceHdf5() {
  static const bool done = [] {
    // No library shutdown at exit: after a failed write (EFBIG, ENOSPC) the
    // file cannot be closed, and HDF5 1.10's exit handler then crashes
    // closing it again. pe closes what it opened; the OS reclaims the rest.
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    // No plugins, for the whole process and before any file is opened:
    // libhdf5 would otherwise dlopen every library in HDF5_PLUGIN_PATH (or
    // its default plugin folder) to look for a filter a file names, running
    // their code. Only the filters built into the library are used.
    H5PLset_loading_state(0);
    return true;
  }();
  (void)done;
}

// The HDF5 error stack's errno after a failed write: the sec2 driver records
// "errno = N" when write() fails (EFBIG under ulimit -f, ENOSPC), and errno
// itself may be overwritten by the cleanup that follows.
herr_t FindErrno(unsigned, const H5E_error2_t* e, void* data) {
  if (e != nullptr && e->desc != nullptr) {
    if (const char* p = std::strstr(e->desc, "errno = ")) {
      *static_cast<int*>(data) = std::atoi(p + 8);
      return 1;
    }
  }
  return 0;
}

// The reason for a failed write: the errno text when the driver recorded
// one, else `fallback`.
std::string WriteFailure(const std::string& fallback) {
  int err = 0;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, FindErrno, &err);
  return err > 0 ? std::string(std::strerror(err)) : fallback;
}

// The HDF5 type for a dtype (a new handle each time).
Handle FileType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return Handle(H5Tcopy(H5T_IEEE_F32LE), H5Tclose);
    case DType::kFloat64: return Handle(H5Tcopy(H5T_IEEE_F64LE), H5Tclose);
    case DType::kFloat16: {
      Handle t(H5Tcopy(H5T_IEEE_F32LE), H5Tclose);
      H5Tset_fields(t.get(), 15, 10, 5, 0, 10);
      H5Tset_size(t.get(), 2);
      H5Tset_ebias(t.get(), 15);
      return t;
    }
    case DType::kBFloat16: {
      Handle t(H5Tcopy(H5T_IEEE_F32LE), H5Tclose);
      H5Tset_fields(t.get(), 15, 7, 8, 0, 7);
      H5Tset_size(t.get(), 2);
      H5Tset_ebias(t.get(), 127);
      return t;
    }
  }
  return {};
}

class Hdf5Writer : public TableWriter {
 public:
  Hdf5Writer(std::string path, std::string display, bool replacing, bool append = false)
      : path_(std::move(path)), display_(std::move(display)), append_(append), writeback_(replacing) {}

  void Begin(const TableInfo& info) override {
    SilenceHdf5();
    info_ = info;
    // append_: one more dataset in a file a previous writer made (TableSet).
    file_ = Handle(append_ ? H5Fopen(path_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)
                           : H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                   H5Fclose);
    Check(file_.ok(), "cannot create the file");
    // The file descriptor of HDF5's default (sec2) driver, for writeback.
    void* handle = nullptr;
    if (H5Fget_vfd_handle(file_.get(), H5P_DEFAULT, &handle) >= 0 && handle != nullptr)
      fd_ = *static_cast<int*>(handle);
    const hsize_t dims[2] = {static_cast<hsize_t>(info.rows), static_cast<hsize_t>(info.cols)};
    // The logical shape (a vector, a 3-D bias) when it is not [rows, cols].
    for (std::int64_t d : LogicalShape(info)) shape_.push_back(static_cast<hsize_t>(d));
    Handle space(H5Screate_simple(static_cast<int>(shape_.size()), shape_.data(), nullptr), H5Sclose);
    Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    // Chunks of about 1 MiB: whole rows when a row fits, else row pieces.
    const std::size_t es = Traits(info.dtype).size;
    hsize_t chunk_cols = std::min<hsize_t>(dims[1], (1u << 20) / es);
    hsize_t chunk_rows = std::max<hsize_t>(1, std::min<hsize_t>(dims[0], (1u << 20) / (chunk_cols * es)));
    std::vector<hsize_t> chunk(shape_.size(), 1);
    chunk.back() = std::max<hsize_t>(1, shape_.size() == 1 ? std::min<hsize_t>(dims[0], (1u << 20) / es) : chunk_cols);
    if (shape_.size() >= 2) chunk[shape_.size() - 2] = std::min(chunk_rows, std::max<hsize_t>(1, shape_[shape_.size() - 2]));
    Check(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()) >= 0, "cannot set the chunk size");
    // The pump's 512 KiB blocks often end inside a ~1 MiB chunk; the
    // library then fills that chunk, writes it whole, and writes its rest
    // again (aligning the blocks to chunks cost more page faults than it saved).
    // Uncompressed, the chunk cache is off: every selection, whole chunks and
    // the partial ones at block edges alike, goes straight to the file with
    // no copy. --compress (shuffle + deflate) needs whole chunks to compress,
    // so a 64 MiB cache holds the partial chunks at block edges until they
    // are complete.
    Handle dapl(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose);
    if (const int gzip = GlobalWriteSettings().hdf5_gzip_level; gzip > 0) {
      Check(H5Pset_shuffle(dcpl.get()) >= 0 && H5Pset_deflate(dcpl.get(), static_cast<unsigned>(gzip)) >= 0,
            "cannot enable gzip compression");
      H5Pset_chunk_cache(dapl.get(), 521, std::size_t{64} << 20, 1.0);
    } else {
      H5Pset_chunk_cache(dapl.get(), 0, 0, 1.0);
    }
    // No modification times in the object header: the same arguments must
    // give byte-identical files.
    H5Pset_obj_track_times(dcpl.get(), false);
    type_ = FileType(info.dtype);
    // A name with '/' ("sliding_attention/cos", rope-plan) is a dataset in
    // groups: create the missing groups, without modification times too.
    for (std::size_t slash = info.name.find('/', 1); slash != std::string::npos;
         slash = info.name.find('/', slash + 1)) {
      const std::string group = info.name.substr(0, slash);
      if (H5Lexists(file_.get(), group.c_str(), H5P_DEFAULT) > 0) continue;
      Handle gcpl(H5Pcreate(H5P_GROUP_CREATE), H5Pclose);
      H5Pset_obj_track_times(gcpl.get(), false);
      Handle grp(H5Gcreate2(file_.get(), group.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), H5Gclose);
      Check(grp.ok(), "cannot create the group of the dataset");
    }
    dset_ = Handle(H5Dcreate2(file_.get(), info.name.c_str(), type_.get(), space.get(), H5P_DEFAULT, dcpl.get(),
                              dapl.get()),
                   H5Dclose);
    Check(dset_.ok(), "cannot create the dataset");
    Metadata meta = info.meta;
    if (!meta.Find("dtype")) meta.Set("dtype", std::string(Traits(info.dtype).name));
    for (const auto& [key, value] : meta.entries()) WriteAttribute(key, value);
  }

  void WriteRows(std::int64_t first, std::int64_t count, const std::byte* rows) override {
    WriteDataRows(first, count, rows);
    // The chunks went straight to the file (no chunk cache uncompressed):
    // start their disk writes as FileSink does. HDF5 appends chunks in
    // order, so the whole file's unsent pages are the new ones.
    if (writeback_.Wrote(static_cast<std::size_t>(count) * info_.row_bytes()) && fd_ >= 0)
      StartWriteback(fd_, 0, 0);
  }

  void WriteDataRows(std::int64_t first, std::int64_t count, const std::byte* rows) {
    if (shape_.size() != 2) return WriteShapedRows(first, count, rows);
    Handle fspace(H5Dget_space(dset_.get()), H5Sclose);
    const hsize_t start[2] = {static_cast<hsize_t>(first), 0};
    const hsize_t size[2] = {static_cast<hsize_t>(count), static_cast<hsize_t>(info_.cols)};
    H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start, nullptr, size, nullptr);
    Handle mspace(H5Screate_simple(2, size, nullptr), H5Sclose);
    Check(H5Dwrite(dset_.get(), type_.get(), mspace.get(), fspace.get(), H5P_DEFAULT, rows) >= 0,
          "cannot write rows (disk full?)");
  }

  // Rows of the [rows, cols] view into a dataset of another rank: a 1-D
  // slab, or pieces that each stay within one index of the leading dims.
  void WriteShapedRows(std::int64_t first, std::int64_t count, const std::byte* rows) {
    const std::size_t rank = shape_.size();
    std::int64_t done = 0;
    while (done < count) {
      const auto row = static_cast<hsize_t>(first + done);
      std::vector<hsize_t> start(rank, 0), size(rank, 1);
      hsize_t n = static_cast<hsize_t>(count - done);
      if (rank == 1) {
        start[0] = row;
        size[0] = n;
      } else {
        hsize_t rest = row;  // multi-index of the view row over shape_[0..rank-2]
        for (std::size_t k = rank - 1; k-- > 0;) {
          start[k] = rest % shape_[k];
          rest /= shape_[k];
        }
        n = std::min(n, shape_[rank - 2] - start[rank - 2]);
        size[rank - 2] = n;
        size[rank - 1] = shape_[rank - 1];
      }
      Handle fspace(H5Dget_space(dset_.get()), H5Sclose);
      H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, size.data(), nullptr);
      const hsize_t msize[2] = {n, static_cast<hsize_t>(info_.cols)};
      Handle mspace(H5Screate_simple(2, msize, nullptr), H5Sclose);
      Check(H5Dwrite(dset_.get(), type_.get(), mspace.get(), fspace.get(), H5P_DEFAULT,
                     rows + static_cast<std::size_t>(done) * info_.row_bytes()) >= 0,
            "cannot write rows (disk full?)");
      done += static_cast<std::int64_t>(n);
    }
  }

  void End() override {
    const bool ok = dset_.Close() && type_.Close();
    Check(ok && H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) >= 0 && file_.Close(), "cannot finish the file (disk full?)");
  }

 private:
  void WriteAttribute(const std::string& key, const MetaValue& value) {
    Handle scalar(H5Screate(H5S_SCALAR), H5Sclose);
    Handle type;
    const void* buf = nullptr;
    std::int64_t i;
    double d;
    const char* s = nullptr;
    if (const auto* pi = std::get_if<std::int64_t>(&value)) {
      i = *pi;
      type = Handle(H5Tcopy(H5T_STD_I64LE), H5Tclose);
      buf = &i;
    } else if (const auto* pd = std::get_if<double>(&value)) {
      d = *pd;
      type = Handle(H5Tcopy(H5T_IEEE_F64LE), H5Tclose);
      buf = &d;
    } else {
      s = std::get<std::string>(value).c_str();
      type = Handle(H5Tcopy(H5T_C_S1), H5Tclose);
      H5Tset_size(type.get(), H5T_VARIABLE);
      H5Tset_cset(type.get(), H5T_CSET_UTF8);
      buf = &s;
    }
    Handle attr(H5Acreate2(dset_.get(), key.c_str(), type.get(), scalar.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    Check(attr.ok() && H5Awrite(attr.get(), type.get(), buf) >= 0, fmt::format("cannot write attribute '{}'", key));
  }

  void Check(bool ok, const std::string& why) {
    if (!ok) ThrowIo(fmt::format("cannot write '{}'", display_), WriteFailure(why));
  }

  std::string path_, display_;
  bool append_ = false;
  WritebackPolicy writeback_;
  int fd_ = -1;  ///< the file's descriptor in HDF5's driver; -1 unknown
  std::vector<hsize_t> shape_;
  TableInfo info_;
  Handle file_, dset_, type_;
};

// Names and text from a file, as they appear in messages: bytes below 0x20
// and 0x7f as \xNN (an ESC sequence or a newline in a dataset name must not
// reach the terminal, nor split the one-line error), at most 200 bytes.
std::string Printable(std::string_view s) {
  std::string out;
  const std::size_t n = std::min<std::size_t>(s.size(), 200);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (n < s.size()) out += fmt::format("... ({} bytes)", s.size());
  return out;
}

// A link access callback that refuses every external link: pe never opens
// another file on the word of this one.
herr_t RefuseExternalLink(const char*, const char*, const char*, const char*, unsigned*, hid_t, void*) {
  return -1;
}

// The access properties for every link and dataset pe opens: no external
// link is traversed; relative external-storage and virtual-dataset file
// names (refused anyway, CheckStorage) would resolve in a folder that does
// not exist, not in the current one.
Handle AccessList(hid_t cls) {
  Handle pl(H5Pcreate(cls), H5Pclose);
  H5Pset_elink_cb(pl.get(), RefuseExternalLink, nullptr);
  if (cls == H5P_DATASET_ACCESS) {
    H5Pset_efile_prefix(pl.get(), "/nonexistent/pe-reads-no-external-files");
    H5Pset_virtual_prefix(pl.get(), "/nonexistent/pe-reads-no-external-files");
  }
  return pl;
}

class Hdf5Source : public RowSource {
 public:
  Hdf5Source(std::string path, Handle file, Handle dset, Handle mem_type, TableInfo info, int rank)
      : path_(std::move(path)), file_(std::move(file)), dset_(std::move(dset)), mem_type_(std::move(mem_type)),
        info_(std::move(info)), rank_(rank) {}
  const TableInfo& info() const override { return info_; }

  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    if (!info_.shape.empty() && info_.shape.size() > 2) return ReadFoldedRows(first, count, out);
    Handle fspace(H5Dget_space(dset_.get()), H5Sclose);
    std::vector<hsize_t> start(static_cast<std::size_t>(rank_), 0), size(static_cast<std::size_t>(rank_), 1);
    // Leading size-1 dimensions stay at 0; the last one or two are rows/cols.
    if (rank_ >= 2) {
      start[rank_ - 2] = static_cast<hsize_t>(first);
      size[rank_ - 2] = static_cast<hsize_t>(count);
      size[rank_ - 1] = static_cast<hsize_t>(info_.cols);
    } else {
      start[0] = static_cast<hsize_t>(first);
      size[0] = static_cast<hsize_t>(count);
    }
    H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, size.data(), nullptr);
    const hsize_t msize[2] = {static_cast<hsize_t>(count), static_cast<hsize_t>(info_.cols)};
    Handle mspace(H5Screate_simple(2, msize, nullptr), H5Sclose);
    if (H5Dread(dset_.get(), mem_type_.get(), mspace.get(), fspace.get(), H5P_DEFAULT, out) < 0)
      ThrowInput(fmt::format("'{}'", path_), "cannot read rows (truncated or corrupt file?)");
  }

 private:
  // An N-D dataset [a, b, ..., c] read as rows of the [a·b·..., c] view:
  // pieces that each stay within one index of the leading dimensions.
  void ReadFoldedRows(std::int64_t first, std::int64_t count, std::byte* out) {
    const std::size_t rank = info_.shape.size();
    const std::size_t off = static_cast<std::size_t>(rank_) - rank;  // dropped leading 1s
    std::int64_t done = 0;
    while (done < count) {
      std::vector<hsize_t> start(static_cast<std::size_t>(rank_), 0), size(static_cast<std::size_t>(rank_), 1);
      auto rest = static_cast<hsize_t>(first + done);
      for (std::size_t k = rank - 1; k-- > 0;) {
        start[off + k] = rest % static_cast<hsize_t>(info_.shape[k]);
        rest /= static_cast<hsize_t>(info_.shape[k]);
      }
      const hsize_t n = std::min<hsize_t>(static_cast<hsize_t>(count - done),
                                          static_cast<hsize_t>(info_.shape[rank - 2]) - start[off + rank - 2]);
      size[off + rank - 2] = n;
      size[off + rank - 1] = static_cast<hsize_t>(info_.cols);
      Handle fspace(H5Dget_space(dset_.get()), H5Sclose);
      H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, size.data(), nullptr);
      const hsize_t msize[2] = {n, static_cast<hsize_t>(info_.cols)};
      Handle mspace(H5Screate_simple(2, msize, nullptr), H5Sclose);
      if (H5Dread(dset_.get(), mem_type_.get(), mspace.get(), fspace.get(), H5P_DEFAULT,
                  out + static_cast<std::size_t>(done) * info_.row_bytes()) < 0)
        ThrowInput(fmt::format("'{}'", path_), "cannot read rows (truncated or corrupt file?)");
      done += static_cast<std::int64_t>(n);
    }
  }

  std::string path_;
  Handle file_, dset_, mem_type_;
  TableInfo info_;
  int rank_;
};

// The links at the file's root: the names of the datasets (not groups)
// reached by hard links, and whether a link of another kind is named "pe"
// (then that one is chosen, and refused with its kind). Only hard links
// are looked at: an external link would open another file, a soft one
// could lead anywhere in this one. Stops at 10,000 datasets so that a
// hostile file cannot make the list huge.
struct RootLinks {
  std::vector<std::string> datasets;
  bool has_pe = false;
};

// The datasets of one group below the root ("sliding_attention/cos":
// rope-plan files; "decoder/layer0/pe"), down to kMaxGroupDepth levels: a
// hard-link cycle (a group linking to its parent) ends there, and the
// 10,000-dataset cap bounds the list.
constexpr int kMaxGroupDepth = 8;
struct GroupLinks {
  RootLinks* links;
  std::string prefix;
  int depth = 1;
};

herr_t CollectChild(hid_t loc, const char* name, const H5L_info_t* info, void* data) {
  auto* g = static_cast<GroupLinks*>(data);
  if (info == nullptr || info->type != H5L_TYPE_HARD) return 0;
  H5O_info_t oinfo;
  if (H5Oget_info_by_name2(loc, name, &oinfo, H5O_INFO_BASIC, H5P_DEFAULT) >= 0) {
    if (oinfo.type == H5O_TYPE_DATASET) {
      g->links->datasets.push_back(g->prefix + name);
    } else if (oinfo.type == H5O_TYPE_GROUP && g->depth < kMaxGroupDepth) {
      GroupLinks sub{g->links, g->prefix + name + "/", g->depth + 1};
      H5Literate_by_name(loc, name, H5_INDEX_NAME, H5_ITER_INC, nullptr, CollectChild, &sub, H5P_DEFAULT);
    }
  }
  return g->links->datasets.size() >= 10000 ? 1 : 0;
}

herr_t CollectName(hid_t loc, const char* name, const H5L_info_t* info, void* data) {
  auto* links = static_cast<RootLinks*>(data);
  if (info == nullptr || info->type != H5L_TYPE_HARD) {
    if (std::string_view(name) == "pe") links->has_pe = true;  // refused by CheckHardLinks, by name
    return 0;
  }
  H5O_info_t oinfo;
  if (H5Oget_info_by_name2(loc, name, &oinfo, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return 0;
  if (oinfo.type == H5O_TYPE_DATASET) {
    links->datasets.push_back(name);
  } else if (oinfo.type == H5O_TYPE_GROUP) {
    GroupLinks g{links, std::string(name) + "/"};
    H5Literate_by_name(loc, name, H5_INDEX_NAME, H5_ITER_INC, nullptr, CollectChild, &g, H5P_DEFAULT);
  }
  return links->datasets.size() >= 10000 ? 1 : 0;
}

// Names an HDF5 type class for messages.
const char* ClassName(H5T_class_t c) {
  switch (c) {
    case H5T_INTEGER: return "integer";
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    case H5T_ARRAY: return "array";
    case H5T_ENUM: return "enum";
    case H5T_VLEN: return "variable-length";
    case H5T_BITFIELD: return "bitfield";
    case H5T_OPAQUE: return "opaque";
    case H5T_REFERENCE: return "reference";
    case H5T_TIME: return "time";
    default: return "unknown";
  }
}

// Every component of the dataset path `name` must be a hard link: pe does
// not follow external links (another file), soft links (a name that can
// lead anywhere, or nowhere) or user-defined ones. Checked before anything
// is opened.
void CheckHardLinks(hid_t file, hid_t lapl, const std::string& what, const std::string& name) {
  std::string prefix;
  std::size_t pos = 0;
  bool any = false;
  while (pos <= name.size()) {
    std::size_t slash = name.find('/', pos);
    if (slash == std::string::npos) slash = name.size();
    const std::string part = name.substr(pos, slash - pos);
    pos = slash + 1;
    if (part.empty()) continue;
    prefix += (prefix.empty() ? "" : "/") + part;
    any = true;
    if (H5Lexists(file, prefix.c_str(), lapl) <= 0)
      ThrowInput(what, fmt::format("no dataset '{}' in the file", Printable(name)));
    H5L_info_t li;
    if (H5Lget_info(file, prefix.c_str(), &li, lapl) < 0)
      ThrowInput(what, fmt::format("cannot read the link '{}' (corrupt file?)", Printable(prefix)));
    if (li.type == H5L_TYPE_HARD) continue;
    const std::string subject = prefix == name ? fmt::format("dataset '{}'", Printable(name))
                                               : fmt::format("'{}' (in '{}')", Printable(prefix), Printable(name));
    std::vector<char> val(std::min<std::size_t>(li.u.val_size, 1u << 16) + 1, '\0');
    const bool got = li.u.val_size > 0 && H5Lget_val(file, prefix.c_str(), val.data(), val.size() - 1, lapl) >= 0;
    if (li.type == H5L_TYPE_EXTERNAL) {
      unsigned flags = 0;
      const char* target_file = nullptr;
      const char* target_obj = nullptr;
      std::string target = "another file";
      if (got && H5Lunpack_elink_val(val.data(), val.size() - 1, &flags, &target_file, &target_obj) >= 0 &&
          target_file && target_obj)
        target = fmt::format("'{}' in {}", Printable(target_obj), Printable(target_file));
      ThrowInput(what, fmt::format("{} is an external link to {}; pe reads only data inside the file", subject,
                                   target));
    }
    if (li.type == H5L_TYPE_SOFT) {
      ThrowInput(what, fmt::format("{} is a soft link to '{}'; pe follows only hard links (open the target with "
                                   "--dataset)",
                                   subject, got ? Printable(std::string_view(val.data())) : "?"));
    }
    ThrowInput(what, fmt::format("{} is a user-defined link (type {}); pe follows only hard links", subject,
                                 static_cast<int>(li.type)));
  }
  if (!any) ThrowInput(what, fmt::format("no dataset '{}' in the file", Printable(name)));
}

// The filters built into libhdf5; pe never loads a filter plugin.
bool BuiltinFilter(H5Z_filter_t id) {
  switch (id) {
    case H5Z_FILTER_DEFLATE:
    case H5Z_FILTER_SHUFFLE:
    case H5Z_FILTER_FLETCHER32:
    case H5Z_FILTER_SZIP:
    case H5Z_FILTER_NBIT:
    case H5Z_FILTER_SCALEOFFSET: return true;
    default: return false;
  }
}

// Where the dataset's data lives, checked before any of it is read: in this
// file only (contiguous, chunked or compact), never in external files
// (H5Pset_external: any path, /etc/passwd, /dev/zero, a FIFO) nor in other
// HDF5 files (a virtual dataset); and only filters built into libhdf5.
void CheckStorage(hid_t dcpl, const std::string& what, const std::string& name) {
  const std::string subject = fmt::format("dataset '{}'", Printable(name));
  const H5D_layout_t layout = H5Pget_layout(dcpl);
  if (layout == H5D_VIRTUAL) {
    std::size_t count = 0;
    H5Pget_virtual_count(dcpl, &count);
    std::string files;
    for (std::size_t i = 0; i < std::min<std::size_t>(count, 3); ++i) {
      char buf[4096] = {};
      if (H5Pget_virtual_filename(dcpl, i, buf, sizeof buf) < 0) continue;
      files += (files.empty() ? "" : ", ") + Printable(buf);
    }
    if (count > 3) files += fmt::format(" and {} more", count - 3);
    ThrowInput(what, fmt::format("{} is a virtual dataset whose data lives in other files ({}); pe reads only "
                                 "data inside the file",
                                 subject, files.empty() ? "unknown" : files));
  }
  if (layout != H5D_CONTIGUOUS && layout != H5D_CHUNKED && layout != H5D_COMPACT)
    ThrowInput(what, fmt::format("{} has an unknown storage layout ({}) (corrupt file?)", subject,
                                 static_cast<int>(layout)));
  const int external = H5Pget_external_count(dcpl);
  if (external < 0) ThrowInput(what, fmt::format("{} has an unreadable storage layout (corrupt file?)", subject));
  if (external > 0) {
    char buf[4096] = {};
    off_t offset = 0;
    hsize_t size = 0;
    std::string file = "unknown";
    if (H5Pget_external(dcpl, 0, sizeof buf - 1, buf, &offset, &size) >= 0) file = Printable(buf);
    if (external > 1) file += fmt::format(" and {} more", external - 1);
    ThrowInput(what, fmt::format("{} stores its data in an external file ({}); pe reads only data inside the file",
                                 subject, file));
  }
  const int nfilters = H5Pget_nfilters(dcpl);
  if (nfilters < 0) ThrowInput(what, fmt::format("{} has an unreadable filter pipeline (corrupt file?)", subject));
  for (int i = 0; i < nfilters; ++i) {
    unsigned flags = 0, values[8];
    std::size_t nvalues = 8;
    char filter_name[256] = {};
    const H5Z_filter_t id = H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &nvalues, values,
                                           sizeof filter_name - 1, filter_name, nullptr);
    const std::string label = filter_name[0] ? Printable(filter_name) : "unnamed";
    if (id < 0) ThrowInput(what, fmt::format("{} has an unreadable filter pipeline (corrupt file?)", subject));
    // Plugin loading is off (SilenceHdf5), so H5Zfilter_avail looks only at
    // the filters registered in the library: it never searches a folder.
    if (!BuiltinFilter(id)) {
      ThrowInput(what, fmt::format("{} uses filter {} ({}), which is not built into the HDF5 library; pe loads no "
                                   "filter plugins (it reads deflate, shuffle, fletcher32, szip, nbit and "
                                   "scaleoffset)",
                                   subject, static_cast<int>(id), label));
    }
    if (H5Zfilter_avail(id) <= 0) {
      ThrowInput(what, fmt::format("{} uses filter {} ({}), which this HDF5 library lacks", subject,
                                   static_cast<int>(id), label));
    }
  }
}

// Limits that keep a hostile header from costing more than its file: HDF5
// reads whole chunks, so a chunk is at most 64 MiB; and a dataset may claim
// at most 64 times the bytes it stores (sparse chunks read as fill values,
// or a decompression bomb) once it is above 64 MiB. pe's own files store
// every byte; compressed float tables from other tools shrink far less.
// What the file "stores" is at most the file's size, whatever its header
// says.
constexpr std::uint64_t kMaxChunkBytes = std::uint64_t{64} << 20;
constexpr std::uint64_t kMaxStoredRatio = 64;
constexpr std::uint64_t kSparseAllowance = std::uint64_t{64} << 20;
// The chunk cache for reading: one band of chunks (every chunk that a row
// block touches) up to this size, so that each chunk is read and
// decompressed once in a sequential read.
constexpr std::uint64_t kMaxChunkCacheBytes = std::uint64_t{256} << 20;
// Attributes: pe's files have about ten; a dataset with more than this is
// refused (reading them is not bounded by the table's size), and an
// attribute whose value takes more than 1 MiB is skipped.
constexpr hsize_t kMaxAttributes = 4096;
constexpr std::uint64_t kMaxAttributeBytes = std::uint64_t{1} << 20;
// All the string values of one dataset together: what the probe child
// hands to the parent stays small.
constexpr std::uint64_t kMaxMetadataBytes = std::uint64_t{16} << 20;

struct AttrSink {
  Metadata* meta;
  std::uint64_t bytes = 0;  ///< string bytes kept so far
  void SetString(const char* name, std::string value) {
    if (bytes + value.size() > kMaxMetadataBytes) return;
    bytes += value.size();
    meta->Set(name, std::move(value));
  }
};

// Refuses datasets whose layout would make reading cost more than the file;
// returns the bytes of one band of chunks (0: not chunked).
std::uint64_t CheckLayout(hid_t dcpl, hid_t dset, const std::string& what, const std::string& name,
                          std::uint64_t logical_bytes, std::size_t elem_size, std::uint64_t file_size,
                          const std::vector<hsize_t>& dims) {
  std::uint64_t band = 0;
  if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
    hsize_t chunk[32];
    const int n = H5Pget_chunk(dcpl, 32, chunk);
    if (n < 1 || static_cast<std::size_t>(n) != dims.size())
      ThrowInput(what, fmt::format("dataset '{}' has an unreadable chunk layout (corrupt file?)", Printable(name)));
    std::uint64_t bytes = elem_size;
    for (int k = 0; k < n; ++k) {
      if (chunk[k] == 0 || bytes > kMaxChunkBytes / chunk[k]) {
        ThrowInput(what, fmt::format("dataset '{}' has chunks above {} MiB; pe reads chunks up to that size",
                                     Printable(name), kMaxChunkBytes >> 20));
      }
      bytes *= chunk[k];
    }
    // A row block spans the chunks across the last dimension (rank >= 2).
    const std::uint64_t across = n >= 2 ? (dims[n - 1] + chunk[n - 1] - 1) / chunk[n - 1] : 1;
    band = across > kMaxChunkCacheBytes / bytes ? kMaxChunkCacheBytes : across * bytes;
  }
  const std::uint64_t stored = std::min<std::uint64_t>(H5Dget_storage_size(dset), file_size);
  if (logical_bytes > kSparseAllowance && logical_bytes / kMaxStoredRatio > stored) {
    ThrowInput(what, fmt::format("dataset '{}' claims {} bytes but the file stores {} of them (unwritten chunks or a "
                                 "compression bomb); pe refuses tables more than {} times their stored size",
                                 Printable(name), logical_bytes, stored, kMaxStoredRatio));
  }
  return band;
}

// Reads the scalar attributes (int, float, string) into `meta`. Bounded:
// values above 1 MiB are skipped before reading where the size is known
// (fixed-size types) and after (variable-length strings, whose size only
// the global heap knows: a corrupt heap entry can make libhdf5 allocate
// gigabytes). That is why, when the probe child ran, it reads the
// attributes and sends them to the parent, which never reads them itself
// (ProbeInChild).
herr_t CollectAttr(hid_t loc, const char* name, const H5A_info_t*, void* data) {
  auto* sink = static_cast<AttrSink*>(data);
  Metadata* meta = sink->meta;
  Handle attr(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
  if (!attr.ok()) return 0;
  Handle space(H5Aget_space(attr.get()), H5Sclose);
  if (H5Sget_simple_extent_npoints(space.get()) != 1) return 0;  // arrays: skip
  if (H5Aget_storage_size(attr.get()) > kMaxAttributeBytes) return 0;
  Handle type(H5Aget_type(attr.get()), H5Tclose);
  switch (H5Tget_class(type.get())) {
    case H5T_INTEGER: {
      std::int64_t v;
      if (H5Aread(attr.get(), H5T_NATIVE_INT64, &v) >= 0) meta->Set(name, v);
      break;
    }
    case H5T_FLOAT: {
      double v;
      if (H5Tget_size(type.get()) <= 16 && H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &v) >= 0) meta->Set(name, v);
      break;
    }
    case H5T_STRING: {
      if (H5Tis_variable_str(type.get()) > 0) {
        char* s = nullptr;
        Handle mt(H5Tcopy(H5T_C_S1), H5Tclose);
        H5Tset_size(mt.get(), H5T_VARIABLE);
        H5Tset_cset(mt.get(), H5Tget_cset(type.get()));
        if (H5Aread(attr.get(), mt.get(), &s) >= 0 && s) {
          const std::size_t n = ::strnlen(s, kMaxAttributeBytes + 1);
          if (n <= kMaxAttributeBytes) sink->SetString(name, std::string(s, n));
          H5free_memory(s);
        }
      } else {
        const std::size_t n = H5Tget_size(type.get());
        if (n > 0 && n <= kMaxAttributeBytes) {
          std::string s(n, '\0');
          if (H5Aread(attr.get(), type.get(), s.data()) >= 0) {
            s.resize(std::min(s.find('\0'), s.size()));
            sink->SetString(name, std::move(s));
          }
        }
      }
      break;
    }
    default:
      break;
  }
  return 0;
}

}  // namespace

std::unique_ptr<TableWriter> MakeHdf5Writer(const std::string& path, const std::string& display_name,
                                            bool replacing) {
  return std::make_unique<Hdf5Writer>(path, display_name, replacing);
}

std::unique_ptr<TableWriter> MakeHdf5AppendWriter(const std::string& path, const std::string& display_name,
                                                  bool replacing) {
  return std::make_unique<Hdf5Writer>(path, display_name, replacing, true);
}

namespace {

// `meta`: the attributes as the probe child read them (then they are not
// read again); nullptr: read them here.
std::unique_ptr<RowSource> OpenHdf5InProcess(const std::string& path, const std::string& dataset,
                                             const Metadata* meta);

// Seconds (of CPU, and of wall time) a probe may take (reading 64 MiB takes
// well under one); RuntimeOptions::hdf5_probe_seconds (the fuzz harness
// uses a short one).
unsigned ProbeSeconds() {
  const unsigned v = GetRuntimeOptions().hdf5_probe_seconds;
  return v > 0 && v < 3600 ? v : 10;
}

// The probe's report to the parent, through a pipe: 'O' and the metadata,
// or 'E', the error kind and the exact message.
void PutU64(std::string& out, std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
void PutStr(std::string& out, const std::string& s) {
  PutU64(out, s.size());
  out += s;
}
struct ReportReader {
  const std::string& s;
  std::size_t pos = 0;
  bool U64(std::uint64_t& v) {
    if (s.size() - pos < sizeof v) return false;
    std::memcpy(&v, s.data() + pos, sizeof v);
    pos += sizeof v;
    return true;
  }
  bool Str(std::string& v) {
    std::uint64_t n = 0;
    if (!U64(n) || s.size() - pos < n) return false;
    v.assign(s, pos, n);
    pos += n;
    return true;
  }
};

std::string EncodeMeta(const Metadata& meta) {
  std::string out = "O";
  PutU64(out, meta.entries().size());
  for (const auto& [key, value] : meta.entries()) {
    PutStr(out, key);
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      out += 'i';
      PutU64(out, static_cast<std::uint64_t>(*i));
    } else if (const auto* d = std::get_if<double>(&value)) {
      out += 'd';
      std::uint64_t bits;
      std::memcpy(&bits, d, sizeof bits);
      PutU64(out, bits);
    } else {
      out += 's';
      PutStr(out, std::get<std::string>(value));
    }
  }
  return out;
}

bool DecodeMeta(const std::string& report, Metadata& meta) {
  ReportReader r{report, 1};
  std::uint64_t n = 0;
  if (!r.U64(n)) return false;
  for (std::uint64_t k = 0; k < n; ++k) {
    std::string key;
    if (!r.Str(key) || r.pos >= report.size()) return false;
    const char tag = report[r.pos++];
    std::uint64_t v = 0;
    if (tag == 'i' && r.U64(v)) {
      meta.Set(key, static_cast<std::int64_t>(v));
    } else if (tag == 'd' && r.U64(v)) {
      double d;
      std::memcpy(&d, &v, sizeof d);
      meta.Set(key, d);
    } else if (std::string s; tag == 's' && r.Str(s)) {
      meta.Set(key, std::move(s));
    } else {
      return false;
    }
  }
  return true;
}

void WriteAll(int fd, const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// The HDF5 library (1.10 in Debian 12) trusts its files more than pe does:
// fuzzing finds inputs that make it read out of bounds, crash, loop or
// allocate gigabytes. So a child process first does everything the parent
// will do to open the file (links, layout, attributes) and reads its rows
// (all of them up to 64 MiB, else the first 8 MiB and the last block),
// under a CPU, wall-clock and address-space limit. It reports through a
// pipe: on success the attributes it read (the parent does not read them
// again: a corrupt variable-length attribute costs a failed allocation in
// the child but 20 GiB in an uncapped parent), on a failure the exact
// message, which the parent throws without redoing the work. A crash or a
// time limit becomes a clean error in the parent.
// Returns false when no probe could run (no fork): read in process.
bool ProbeInChild(const std::string& path, const std::string& dataset, const std::string& what, Metadata& meta) {
  const unsigned seconds = ProbeSeconds();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return false;
  }
  if (pid == 0) {
    ::close(fds[0]);
    // Silent: the parent prints the message (and a sanitizer report from a
    // crash in libhdf5 is not for the user).
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      ::dup2(devnull, STDOUT_FILENO);
      ::dup2(devnull, STDERR_FILENO);
    }
    ::signal(SIGINT, SIG_DFL);  // the parent owns interrupt cleanup
    ::signal(SIGTERM, SIG_DFL);
    // Corrupt files can send libhdf5 into endless loops: a CPU-time limit
    // ends those (SIGXCPU), and a wall-clock one of the same length ends
    // the waits (a slow or blocking file uses no CPU). Default actions,
    // whatever the parent installed.
    ::signal(SIGALRM, SIG_DFL);
    ::signal(SIGXCPU, SIG_DFL);
    struct rlimit cpu = {static_cast<rlim_t>(seconds), static_cast<rlim_t>(seconds) + 1};
    ::setrlimit(RLIMIT_CPU, &cpu);
    ::alarm(seconds);
#if !defined(__SANITIZE_ADDRESS__) && !PE_HAS_ASAN
    // Fuzzing shows libhdf5 asking for absurd allocations on corrupt files:
    // fail them here, in the child, rather than let it swap or be OOM-killed.
    // (Not under AddressSanitizer, whose shadow memory needs terabytes.)
    const rlim_t cap = rlim_t{4} << 30;
    struct rlimit lim = {cap, cap};
    ::setrlimit(RLIMIT_AS, &lim);
#endif
    std::string report;
    try {
      auto source = OpenHdf5InProcess(path, dataset, nullptr);
      const TableInfo& info = source->info();
      const std::int64_t block = BlockRows(info.row_bytes(), info.rows);
      std::vector<std::byte> buf(static_cast<std::size_t>(block) * info.row_bytes());
      const bool all = CheckedTableBytes(info.rows, info.cols, info.dtype) <= (std::uint64_t{64} << 20);
      std::int64_t first = 0;
      for (int b = 0; first < info.rows && (all || b < 8); ++b, first += block)
        source->ReadRows(first, std::min(block, info.rows - first), buf.data());
      if (first < info.rows) {
        const std::int64_t last = std::max(first, info.rows - block);
        source->ReadRows(last, info.rows - last, buf.data());
      }
      report = EncodeMeta(info.meta);
    } catch (const Error& e) {
      report = "E";
      report += static_cast<char>(e.kind());
      PutStr(report, e.what());
    } catch (const std::bad_alloc&) {
      report = "E";
      report += static_cast<char>(ErrorKind::kInput);
      PutStr(report, fmt::format("{}: the HDF5 library asked for more than 4 GiB of memory to read the file "
                                 "(corrupt or hostile file)",
                                 what));
    } catch (...) {
      report = "E";
      report += static_cast<char>(ErrorKind::kInput);
      PutStr(report, fmt::format("{}: the HDF5 library failed reading the file (corrupt or hostile file)", what));
    }
    WriteAll(fds[1], report);
    ::_exit(0);
  }
  ::close(fds[1]);
  // The report first (a large one would fill the pipe), then the status.
  std::string report;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (report.size() < (std::size_t{64} << 20)) report.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  struct rusage usage = {};
  while (::wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) break;
  }
  // Out of time: CPU time (SIGXCPU) or wall time (SIGALRM). A child that
  // used its time computing is in a loop; one that used little CPU was
  // waiting for its file.
  if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGALRM)) {
    const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    if (WTERMSIG(status) == SIGXCPU || cpu >= 0.1 * seconds)
      ThrowInput(what, fmt::format("the HDF5 library did not finish reading the file in {} s (an endless loop: "
                                   "corrupt or hostile file?)",
                                   seconds));
    ThrowInput(what, fmt::format("the HDF5 library did not finish reading the file in {} s (it was waiting, not "
                                 "computing: a slow or blocking file?)",
                                 seconds));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !report.empty()) {
    if (report[0] == 'O' && DecodeMeta(report, meta)) return true;
    if (report[0] == 'E' && report.size() >= 2) {
      const auto kind = static_cast<ErrorKind>(static_cast<unsigned char>(report[1]));
      ReportReader r{report, 2};
      std::string message;
      if (r.Str(message) && !message.empty()) throw Error(kind, message);
    }
  }
  ThrowInput(what, "the HDF5 library crashed reading the file (corrupt or hostile file)");
}

}  // namespace

std::unique_ptr<RowSource> OpenHdf5(const std::string& path, const std::string& dataset) {
  SilenceHdf5();
  Metadata meta;
  if (ProbeInChild(path, dataset, fmt::format("'{}'", path), meta)) return OpenHdf5InProcess(path, dataset, &meta);
  return OpenHdf5InProcess(path, dataset, nullptr);
}

namespace {

std::unique_ptr<RowSource> OpenHdf5InProcess(const std::string& path, const std::string& dataset,
                                             const Metadata* meta) {
  SilenceHdf5();
  const std::string what = fmt::format("'{}'", path);
  if (H5Fis_hdf5(path.c_str()) <= 0) ThrowInput(what, "not an HDF5 file (or it is corrupt)");
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) ThrowInput(fmt::format("cannot read {}", what), std::strerror(errno));
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  // No file locking for reading: it fails on read-only and network file
  // systems and protects nothing pe does.
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
#if H5_VERSION_GE(1, 10, 7)
  H5Pset_file_locking(fapl.get(), false, true);
#endif
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!file.ok()) ThrowInput(what, "cannot open as HDF5 (truncated or corrupt?)");
  Handle lapl = AccessList(H5P_LINK_ACCESS);
  std::string name = dataset;
  if (name.empty()) {
    RootLinks links;
    H5Literate(file.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, CollectName, &links);
    if (links.has_pe || std::find(links.datasets.begin(), links.datasets.end(), "pe") != links.datasets.end()) {
      name = "pe";
    } else if (links.datasets.size() == 1) {
      name = links.datasets[0];
    } else {
      std::string list;
      for (const auto& n : links.datasets) list += (list.empty() ? "" : ", ") + Printable(n);
      ThrowInput(what, links.datasets.empty() ? "the file holds no dataset"
                                              : fmt::format("no dataset 'pe'; choose one with --dataset ({})", list));
    }
  }
  CheckHardLinks(file.get(), lapl.get(), what, name);
  {
    H5O_info_t oinfo;
    if (H5Oget_info_by_name2(file.get(), name.c_str(), &oinfo, H5O_INFO_BASIC | H5O_INFO_NUM_ATTRS, lapl.get()) < 0)
      ThrowInput(what, fmt::format("cannot read the object '{}' (corrupt file?)", Printable(name)));
    if (oinfo.type != H5O_TYPE_DATASET) ThrowInput(what, fmt::format("'{}' is not a dataset", Printable(name)));
    if (meta == nullptr && oinfo.num_attrs > kMaxAttributes) {
      ThrowInput(what, fmt::format("dataset '{}' has {} attributes; pe reads at most {}", Printable(name),
                                   oinfo.num_attrs, kMaxAttributes));
    }
  }
  Handle dapl = AccessList(H5P_DATASET_ACCESS);
  Handle dset(H5Dopen2(file.get(), name.c_str(), dapl.get()), H5Dclose);
  if (!dset.ok()) ThrowInput(what, fmt::format("'{}' is not a dataset", Printable(name)));
  Handle dcpl(H5Dget_create_plist(dset.get()), H5Pclose);
  if (!dcpl.ok())
    ThrowInput(what, fmt::format("dataset '{}' has an unreadable layout (corrupt file?)", Printable(name)));
  CheckStorage(dcpl.get(), what, name);
  Handle type(H5Dget_type(dset.get()), H5Tclose);
  const H5T_class_t type_class = H5Tget_class(type.get());
  if (type_class != H5T_FLOAT) {
    ThrowInput(what, fmt::format("dataset '{}' holds {} values, not floating-point numbers", Printable(name),
                                 ClassName(type_class)));
  }
  DType dtype;
  Handle mem_type;
  const std::size_t size = H5Tget_size(type.get());
  if (size == 4) {
    dtype = DType::kFloat32;
    mem_type = Handle(H5Tcopy(H5T_NATIVE_FLOAT), H5Tclose);
  } else if (size == 8) {
    dtype = DType::kFloat64;
    mem_type = Handle(H5Tcopy(H5T_NATIVE_DOUBLE), H5Tclose);
  } else if (size == 2) {
    size_t spos, epos, esize, mpos, msize;
    H5Tget_fields(type.get(), &spos, &epos, &esize, &mpos, &msize);
    dtype = esize == 8 ? DType::kBFloat16 : DType::kFloat16;
    mem_type = FileType(dtype);
  } else {
    ThrowInput(what, fmt::format("dataset '{}' has {}-byte floats; pe reads 2, 4 and 8", Printable(name), size));
  }
  Handle space(H5Dget_space(dset.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank == 0)
    ThrowInput(what, fmt::format("dataset '{}' is a scalar, not a table (1 or 2 dimensions)", Printable(name)));
  if (rank < 1 || rank > 32)
    ThrowInput(what, fmt::format("dataset '{}' has rank {}; a table has 1 or 2", Printable(name), rank));
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  // Leading dimensions of size 1 are dropped; other N-D datasets (an ALiBi
  // bias [H, L, L]) are read as [prod(leading dims), last].
  int lead = 0;
  while (lead + 2 < rank && dims[lead] == 1) ++lead;
  TableInfo info;
  info.name = name;
  info.dtype = dtype;
  info.rows = static_cast<std::int64_t>(rank >= 2 ? dims[rank - 2] : dims[0]);
  info.cols = static_cast<std::int64_t>(rank >= 2 ? dims[rank - 1] : 1);
  if (rank - lead > 2) {
    for (int k = lead; k + 2 < rank; ++k) {
      if (dims[k] != 0 && static_cast<hsize_t>(info.rows) > (hsize_t{1} << 50) / dims[k])
        ThrowInput(what, fmt::format("dataset '{}' is too large", Printable(name)));
      info.rows *= static_cast<std::int64_t>(dims[k]);
    }
    for (int k = lead; k < rank; ++k) info.shape.push_back(static_cast<std::int64_t>(dims[k]));
  } else if (rank == 1) {
    info.shape = {info.rows};  // a vector stays [n], as safetensors and NPY read it
  }
  std::uint64_t logical_bytes = 0;
  try {
    logical_bytes = CheckedTableBytes(info.rows, info.cols, dtype);
  } catch (const Error& e) {
    ThrowInput(what, fmt::format("dataset '{}' of {} x {} is too large ({})", Printable(name), info.rows, info.cols,
                                 std::string(e.what()).substr(std::string(e.what()).find(": ") + 2)));
  }
  const std::uint64_t band = CheckLayout(dcpl.get(), dset.get(), what, name, logical_bytes, size, file_size, dims);
  if (band > 0) {
    // Reopened with a chunk cache that holds one band of chunks: a row block
    // smaller than a chunk then reads and decompresses each chunk once, not
    // once per block (libhdf5's default cache is 1 MiB).
    dset.Reset();
    const auto slots = static_cast<std::size_t>(std::clamp<std::uint64_t>(band / 4096, 521, 1000003));
    H5Pset_chunk_cache(dapl.get(), slots | 1, static_cast<std::size_t>(std::max<std::uint64_t>(band, 1u << 20)),
                       1.0);
    dset = Handle(H5Dopen2(file.get(), name.c_str(), dapl.get()), H5Dclose);
    if (!dset.ok()) ThrowInput(what, fmt::format("'{}' is not a dataset", Printable(name)));
  }
  if (meta != nullptr) {
    info.meta = *meta;
  } else {
    AttrSink sink{&info.meta};
    H5Aiterate2(dset.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, CollectAttr, &sink);
  }
  return std::make_unique<Hdf5Source>(path, std::move(file), std::move(dset), std::move(mem_type), std::move(info),
                                      rank);
}

}  // namespace

std::vector<std::string> ListHdf5Datasets(const std::string& path) {
  SilenceHdf5();
  const std::string what = fmt::format("'{}'", path);
  if (H5Fis_hdf5(path.c_str()) <= 0) ThrowInput(what, "not an HDF5 file (or it is corrupt)");
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
#if H5_VERSION_GE(1, 10, 7)
  H5Pset_file_locking(fapl.get(), false, true);
#endif
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!file.ok()) ThrowInput(what, "cannot open as HDF5 (truncated or corrupt?)");
  RootLinks links;
  H5Literate(file.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, CollectName, &links);
  return links.datasets;
}

}  // namespace pe
