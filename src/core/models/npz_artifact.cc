// An .npz read as a model artifact: numpy's container holds bare arrays
// with no plan, so the artifact is its readable arrays, each with the role
// its name suggests (core/models/tensor_role.h); arrays pe cannot read as
// tables (integers, objects, empty) are listed in the notes.
#include <fmt/format.h>

#include "core/base/error.h"
#include "core/formats/npz.h"
#include "core/models/artifact.h"
#include "core/models/positional_by_value.h"
#include "core/models/tensor_role.h"

namespace pe {

ModelArtifact ReadNpzArtifact(const std::string& path) {
  ModelArtifact a;
  a.path = path;
  a.kind = "npz";
  auto zip = ZipArchive::Open(path, fmt::format("'{}'", path));
  ValueScan by_value;
  for (const NpzEntry& e : ReadNpzEntries(*zip)) {
    if (!e.layout) {
      a.notes.push_back(fmt::format("array '{}' is not read: {}", e.name, e.problem));
      continue;
    }
    ArtifactTensor t;
    t.name = e.name;
    t.info = e.layout->info;
    t.open = [zip, e]() { return OpenNpzEntry(zip, e); };
    t.role = RoleFromTensorName(e.name);
    if (t.role.empty()) t.role = by_value.Try(e.name, t.info, t.open);
    a.tensors.push_back(std::move(t));
  }
  if (const std::string note = by_value.Note(); !note.empty()) a.notes.push_back(note);
  if (a.tensors.empty() && a.notes.empty()) a.notes.push_back("the archive holds no .npy array");
  return a;
}

}  // namespace pe
