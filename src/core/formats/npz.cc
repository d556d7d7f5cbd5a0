#include "core/formats/npz.h"

#include <fmt/format.h>

#include <string_view>

#include "core/error.h"
#include "core/model/zip_tensor_source.h"

namespace pe {

std::vector<NpzEntry> ReadNpzEntries(const ZipArchive& zip) {
  std::vector<NpzEntry> out;
  for (const auto& m : zip.members()) {
    const std::string_view n = m.name;
    if (n.size() <= 4 || n.substr(n.size() - 4) != ".npy") continue;
    NpzEntry e;
    e.name = std::string(n.substr(0, n.size() - 4));
    e.member = &m;
    try {
      std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(m.size, kNpyMaxHeadBytes)), '\0');
      zip.OpenMember(m)->Read(0, head.size(), reinterpret_cast<std::byte*>(head.data()));
      NpyLayout l = ParseNpyHeader(head, m.size, fmt::format("{} member '{}'", zip.what(), m.name));
      l.info.name = e.name;
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
    out.push_back(std::move(e));
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
  const auto entries = ReadNpzEntries(*zip);
  std::string names;
  for (const auto& e : entries) names += (names.empty() ? "" : ", ") + e.name;
  const std::string want = name.empty() ? "pe" : name;
  const NpzEntry* chosen = nullptr;
  for (const auto& e : entries)
    if (e.name == want) chosen = &e;
  if (!chosen && name.empty() && entries.size() == 1) chosen = &entries[0];
  if (!chosen) {
    if (entries.empty()) ThrowInput(zip->what(), "the archive holds no .npy array");
    ThrowInput(zip->what(), name.empty() ? fmt::format("holds several arrays ({}); name the one to read (--dataset; "
                                                       "--tensor with --init-from)",
                                                       names)
                                         : fmt::format("no array '{}' (the archive has: {})", name, names));
  }
  return OpenNpzEntry(zip, *chosen);
}

}  // namespace pe
