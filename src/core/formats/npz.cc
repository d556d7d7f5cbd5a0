#include "core/formats/npz.h"

#include <fmt/format.h>

#include <string_view>

#include "core/base/error.h"
#include "core/containers/zip_tensor_source.h"

namespace pe {

namespace {

bool IsNpy(std::string_view n) { return n.size() > 4 && n.substr(n.size() - 4) == ".npy"; }

// numpy never writes an archive inside an archive; one found there (named .npy, .npz or .zip)
// is refused for the whole file rather than skipped, so that it cannot pass for an empty model.
void RefuseNested(const ZipArchive& zip, const ZipMember& m, std::string_view head) {
  if (head.size() >= 4 && head.substr(0, 4) == std::string_view("PK\x03\x04", 4))
    ThrowInput(zip.what(), fmt::format("member '{}' is itself a zip archive (an archive nested in the archive); pe "
                                       "reads .npy members only",
                                       m.name));
}

NpzEntry ReadNpzEntry(const ZipArchive& zip, const ZipMember& m) {
  const std::string_view n = m.name;
  NpzEntry e;
  e.name = std::string(n.substr(0, n.size() - 4));
  e.member = &m;
  {
    std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(m.size, kNpyMaxHeadBytes)), '\0');
    zip.OpenMember(m)->Read(0, head.size(), reinterpret_cast<std::byte*>(head.data()));
    RefuseNested(zip, m, head);
    try {
      NpyLayout l = ParseNpyHeader(head, m.size, fmt::format("{} member '{}'", zip.what(), m.name));
      l.info.name = e.name;
      // A member holds exactly its array (numpy writes nothing after it): a header whose shape
      // claims fewer bytes than follow it lies about the data (ParseNpyHeader refuses more).
      const std::uint64_t need = l.info.rows > 0 && l.info.cols > 0
                                     ? CheckedTableBytes(l.info.rows, l.info.cols, l.info.dtype)
                                     : 0;
      if (l.info.rows > 0 && l.info.cols > 0 && m.size - l.data_offset != need)
        ThrowInput(zip.what(), fmt::format("member '{}': its header's shape ({}, {}) needs {} bytes of data, but the "
                                           "member holds {} after the header",
                                           m.name, l.info.rows, l.info.cols, need, m.size - l.data_offset));
      if (l.info.rows <= 0 || l.info.cols <= 0) {
        e.problem = fmt::format("the array is empty ({} x {})", l.info.rows, l.info.cols);
      } else {
        e.layout = std::move(l);
      }
    } catch (const Error& err) {
      // A corrupt archive is an error for the whole file; an array pe cannot
      // read as a table (ints, objects) is only a problem of that array.
      const std::string msg = err.what();
      const std::string prefix = fmt::format("{} member '{}': ", zip.what(), m.name);
      e.problem = msg.rfind(prefix, 0) == 0 ? msg.substr(prefix.size()) : msg;
      if (msg.rfind(prefix, 0) != 0) throw;
    }
  }
  return e;
}

}  // namespace

std::vector<NpzEntry> ReadNpzEntries(const ZipArchive& zip) {
  std::vector<NpzEntry> out;
  for (const auto& m : zip.members()) {
    if (IsNpy(m.name)) {
      out.push_back(ReadNpzEntry(zip, m));
      continue;
    }
    const std::string_view n = m.name;
    if (n.size() > 4 && (n.substr(n.size() - 4) == ".npz" || n.substr(n.size() - 4) == ".zip")) {
      std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(m.size, 4)), '\0');
      zip.OpenMember(m)->Read(0, head.size(), reinterpret_cast<std::byte*>(head.data()));
      RefuseNested(zip, m, head);
    }
  }
  return out;
}

std::unique_ptr<RowSource> OpenNpzEntry(std::shared_ptr<ZipArchive> zip, const NpzEntry& entry) {
  if (!entry.layout)
    ThrowInput(zip->what(), fmt::format("array '{}': {}", entry.name, entry.problem));
  const NpyLayout& l = *entry.layout;
  return MakeZipTensorSource(zip, *entry.member, l.data_offset, l.info, l.big_endian, l.fortran);
}

std::vector<std::string> ListNpz(const std::string& path) {
  auto zip = ZipArchive::Open(path, fmt::format("'{}'", path));
  std::vector<std::string> names;
  for (const auto& e : ReadNpzEntries(*zip))
    if (e.layout) names.push_back(e.name);
  return names;
}

std::unique_ptr<RowSource> OpenNpz(const std::string& path, const std::string& name) {
  auto zip = ZipArchive::Open(path, fmt::format("'{}'", path));
  // Only the chosen member's header is read: opening each of N arrays in turn stays N headers.
  std::vector<const ZipMember*> npy;
  for (const auto& m : zip->members())
    if (IsNpy(m.name)) npy.push_back(&m);
  std::string names;
  for (std::size_t k = 0; k < npy.size() && k < 20; ++k)
    names += (k ? ", " : "") + npy[k]->name.substr(0, npy[k]->name.size() - 4);
  if (npy.size() > 20) names += fmt::format(", ... ({} arrays)", npy.size());
  const std::string want = name.empty() ? "pe" : name;
  const ZipMember* found = zip->Find(want + ".npy");
  if (!found && name.empty() && npy.size() == 1) found = npy[0];
  std::optional<NpzEntry> chosen;
  if (found) chosen = ReadNpzEntry(*zip, *found);
  if (!chosen) {
    if (npy.empty()) ThrowInput(zip->what(), "the archive holds no .npy array");
    ThrowInput(zip->what(), name.empty() ? fmt::format("holds several arrays ({}); name the one to read (--dataset; "
                                                       "--tensor with --init-from)",
                                                       names)
                                         : fmt::format("no array '{}' (the archive has: {})", name, names));
  }
  return OpenNpzEntry(zip, *chosen);
}

}  // namespace pe
