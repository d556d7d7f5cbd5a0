// Writes a table as one HDF5 dataset (hdf5.h): chunked by row blocks,
// metadata as scalar attributes; a failed write reports the errno the HDF5
// driver recorded (EFBIG, ENOSPC).
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
#include "core/formats/hdf5_common.h"

namespace pe {
using namespace hdf5_internal;

namespace {

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

class Hdf5Writer : public TableWriter {
 public:
  Hdf5Writer(std::string path, std::string display, bool replacing, int gzip_level, bool append = false)
      : path_(std::move(path)), display_(std::move(display)), append_(append), gzip_level_(gzip_level),
        writeback_(replacing) {}

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
    if (const int gzip = gzip_level_; gzip > 0) {
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
  int gzip_level_ = 0;
  WritebackPolicy writeback_;
  int fd_ = -1;  ///< the file's descriptor in HDF5's driver; -1 unknown
  std::vector<hsize_t> shape_;
  TableInfo info_;
  Handle file_, dset_, type_;
};

}  // namespace

std::unique_ptr<TableWriter> MakeHdf5Writer(const std::string& path, const std::string& display_name,
                                            bool replacing, int gzip_level) {
  return std::make_unique<Hdf5Writer>(path, display_name, replacing, gzip_level);
}

std::unique_ptr<TableWriter> MakeHdf5AppendWriter(const std::string& path, const std::string& display_name,
                                                  bool replacing, int gzip_level) {
  return std::make_unique<Hdf5Writer>(path, display_name, replacing, gzip_level, true);
}

}  // namespace pe
