// The pieces shared by the HDF5 writer, reader and probe (hdf5_common.h).
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

namespace hdf5_internal {

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
Handle OpenReadOnly(const std::string& path, const std::string& what) {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
#if H5_VERSION_GE(1, 10, 7)
  H5Pset_file_locking(fapl.get(), false, true);
#endif
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!file.ok()) ThrowInput(what, "cannot open as HDF5 (truncated or corrupt?)");
  return file;
}

Handle AccessList(hid_t cls) {
  Handle pl(H5Pcreate(cls), H5Pclose);
  H5Pset_elink_cb(pl.get(), RefuseExternalLink, nullptr);
  if (cls == H5P_DATASET_ACCESS) {
    H5Pset_efile_prefix(pl.get(), "/nonexistent/pe-reads-no-external-files");
    H5Pset_virtual_prefix(pl.get(), "/nonexistent/pe-reads-no-external-files");
  }
  return pl;
}

}  // namespace hdf5_internal

}  // namespace pe
