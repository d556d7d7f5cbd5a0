// Reads an HDF5 dataset as a RowSource after the hostile-file checks
// (hdf5_checks.cc), and lists a file's datasets.
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

}  // namespace

namespace hdf5_internal {

std::unique_ptr<RowSource> OpenHdf5InProcess(const std::string& path, const std::string& dataset,
                                             const Metadata* meta) {
  SilenceHdf5();
  const std::string what = fmt::format("'{}'", path);
  if (H5Fis_hdf5(path.c_str()) <= 0) ThrowInput(what, "not an HDF5 file (or it is corrupt)");
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) ThrowInput(fmt::format("cannot read {}", what), std::strerror(errno));
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  Handle file = OpenReadOnly(path, what);
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

}  // namespace hdf5_internal

std::vector<std::string> ListHdf5Datasets(const std::string& path) {
  SilenceHdf5();
  const std::string what = fmt::format("'{}'", path);
  if (H5Fis_hdf5(path.c_str()) <= 0) ThrowInput(what, "not an HDF5 file (or it is corrupt)");
  Handle file = OpenReadOnly(path, what);
  RootLinks links;
  H5Literate(file.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, CollectName, &links);
  return links.datasets;
}

}  // namespace pe
