// The hostile-file checks run before an HDF5 dataset is read: hard links
// only, data stored in this file with built-in filters only, chunk and
// sparse-size limits, bounded attributes (hdf5_common.h lists them).
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

}  // namespace

namespace hdf5_internal {

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

}  // namespace hdf5_internal

}  // namespace pe
