#include "tensor_set_view.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include <pe/error.h>
#include <pe/inspect.h>
#include <pe/table.h>

namespace pe::cli {
namespace {

// Each candidate is opened (its file's header parsed again), so the search
// is bounded whatever the file holds.
constexpr std::size_t kMaxCandidates = 64;

std::string FirstNames(const std::vector<std::string>& names, std::size_t n) {
  std::vector<std::string> shown(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(std::min(n, names.size())));
  return fmt::format("{}{}", fmt::join(shown, ", "), names.size() > n ? fmt::format(", ... ({} in all)", names.size()) : "");
}

}  // namespace

std::string PickDotTensor(const std::string& path) {
  if (path == "-") return "";  // standard input holds one table
  const std::vector<std::string> names = ListTableTensors(path);
  if (names.size() < 2) return "";
  if (names.size() > kMaxCandidates)
    ThrowUsage(fmt::format("'{}'", path),
               fmt::format("holds {} tensors ({}); pe looks for the table to draw among at most {}", names.size(),
                           FirstNames(names, 16), kMaxCandidates),
               fmt::format("name the one to draw with --tensor {}", names[0]));
  std::vector<std::string> tables, described;
  for (const std::string& name : names) {
    ReadOptions one;
    one.tensor = name;
    Table table = OpenTableFile(path, one);
    const TensorInfo& info = table.tensor(0).info();
    const std::string axes = TensorAxes(info);
    described.push_back(fmt::format("{} [{} x {}: {}]", name, info.rows, info.cols, axes));
    if (axes == "positions x channels" || axes == "grid cells x channels") tables.push_back(name);
  }
  if (tables.size() == 1) return tables[0];
  ThrowUsage(fmt::format("'{}'", path),
             fmt::format("holds {} tensors: {}; {}", names.size(), fmt::join(described, ", "),
                         tables.empty() ? "none is a table of positions x channels"
                                        : fmt::format("{} are tables of positions", fmt::join(tables, " and "))),
             fmt::format("name the one to draw with --tensor {}", tables.empty() ? names[0] : tables[0]));
}

}  // namespace pe::cli
