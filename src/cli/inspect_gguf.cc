#include "cli/inspect_gguf.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/console.h"
#include "core/model/artifact.h"
#include "core/model/gguf.h"
#include "core/model/gguf_tables.h"

namespace pe {

void PrintGgufSummary(const std::string& path, bool json) {
  using cli::PrintLine;
  const GgufFile file = ReadGgufFile(path);
  const ModelArtifact a = ReadGgufArtifact(path);
  if (json) {
    nlohmann::ordered_json j;
    j["schema"] = "pe.inspect.gguf/1";
    j["file"] = path;
    j["format"] = "gguf";
    j["version"] = file.version;
    j["architecture"] = a.architecture;
    j["context_length"] = a.context_length;
    j["settings"] = nlohmann::ordered_json::array();
    for (const auto& s : a.settings) j["settings"].push_back({{"name", s.name}, {"value", s.value}, {"source", s.source}});
    if (a.plan) {
      j["layer_plan"] = a.plan->LayerPlanNames();
      j["groups"] = nlohmann::ordered_json::array();
      for (const auto& g : a.plan->groups)
        j["groups"].push_back({{"name", g.name}, {"head_dim", g.spec.d_model}, {"rotary_dim", g.spec.rotary_dim > 0 ? g.spec.rotary_dim : g.spec.d_model},
                               {"base", g.spec.base}, {"layout", g.spec.layout}, {"rope_scaling", g.spec.rope_scaling},
                               {"factor", g.spec.factor}});
    }
    j["tensors"] = nlohmann::ordered_json::array();
    for (const auto& t : file.tensors) {
      std::vector<std::uint64_t> ne(t.ne.rbegin(), t.ne.rend());
      j["tensors"].push_back({{"name", t.name}, {"type", FindGgmlType(t.type)->name}, {"shape", ne}});
    }
    j["notes"] = a.notes;
    cli::WriteStdout(j.dump(2) + "\n");
    return;
  }
  PrintLine(fmt::format("file      {}", path));
  PrintLine(fmt::format("format    gguf v{} ({} tensors, {} metadata keys, alignment {})", file.version,
                        file.tensors.size(), file.kv.size(), file.alignment));
  for (const auto& s : a.settings) PrintLine(fmt::format("  {:<36} {:<16} <- {}", s.name, s.value.size() > 60 ? s.value.substr(0, 57) + "..." : s.value, s.source));
  if (a.plan) {
    PrintLine(fmt::format("plan      {} layers, {} RoPE group(s)", a.plan->layers.size(), a.plan->groups.size()));
    for (const auto& g : a.plan->groups)
      PrintLine(fmt::format("  {:<20} head_dim {} rotary_dim {} base {} layout {} scaling {}{}", g.name, g.spec.d_model,
                            g.spec.rotary_dim > 0 ? g.spec.rotary_dim : g.spec.d_model, g.spec.base, g.spec.layout,
                            g.spec.rope_scaling, g.spec.factor > 0 ? fmt::format(" factor {}", g.spec.factor) : ""));
    std::size_t nope = 0;
    for (const auto& l : a.plan->layers) nope += l.group == PlanLayer::kNoPE;
    if (nope) PrintLine(fmt::format("  NoPE layers: {}", nope));
  } else {
    PrintLine("plan      none");
  }
  for (const auto& n : a.notes) PrintLine("note      " + n);
  PrintLine("tensors");
  const std::size_t kShown = 40;
  for (std::size_t k = 0; k < file.tensors.size() && k < kShown; ++k) {
    const auto& t = file.tensors[k];
    std::string shape;
    for (std::size_t d = t.ne.size(); d-- > 0;) shape += fmt::format("{}{}", shape.empty() ? "" : " x ", t.ne[d]);
    PrintLine(fmt::format("  {:<40} {:<8} {}", t.name, FindGgmlType(t.type)->name, shape));
  }
  if (file.tensors.size() > kShown) PrintLine(fmt::format("  ... ({} tensors)", file.tensors.size()));
}

}  // namespace pe
