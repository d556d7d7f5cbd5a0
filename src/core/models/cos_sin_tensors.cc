#include "core/models/cos_sin_tensors.h"

#include <fmt/format.h>

#include "core/base/table_set.h"
#include "core/formats/cos_sin_pairs.h"

namespace pe {
namespace {

std::string LastName(const std::string& name) {
  const std::size_t dot = name.find_last_of("./");
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

}  // namespace

bool AppendCosSinPairTensors(const std::string& name, const TableInfo& info,
                             const std::function<std::unique_ptr<RowSource>()>& open, ModelArtifact* a) {
  TableInfo marked = info;
  marked.name = name;
  // vLLM/SGLang Phi3LongRoPEScaledRotaryEmbedding: cat([short, long]) of
  // caches cat((cos, sin), -1) each; by its name only.
  if (LastName(name) == "long_short_cos_sin_cache" && !info.meta.Find(kCosSinPairsKey))
    marked.meta.Set(kCosSinPairsKey, std::string("halves"));
  std::optional<CosSinPairs> pairs = MarkedCosSinPairs(marked);
  if (!pairs && MayBePackedPairs(marked)) {
    std::unique_ptr<RowSource> src = open();
    pairs = PackedByValue(*src);
  }
  if (!pairs) return false;
  const bool halves = pairs->form == "halves";
  for (const char* which : {"cos", "sin"}) {
    ArtifactTensor t;
    t.name = CosSinComponentName(name, which);
    t.role = std::string(which) + "_cache";
    t.info = marked;
    t.info.name = t.name;
    t.info.rows = pairs->positions;
    t.info.cols = pairs->freqs;
    t.info.shape.clear();
    t.info.meta.Set("layout", std::string("cache"));
    const CosSinPairs p = *pairs;
    const std::string w = which;
    t.open = [open, p, w, halves, marked]() -> std::unique_ptr<RowSource> {
      std::unique_ptr<RowSource> inner = open();
      if (halves) {  // the reader does not mark it: the name did
        TableInfo marked_info = inner->info();
        marked_info.meta.Set(kCosSinPairsKey, std::string("halves"));
        inner = Renamed(std::move(inner), marked_info);
      }
      return CosSinComponent(std::shared_ptr<RowSource>(std::move(inner)), p, w);
    };
    a->tensors.push_back(std::move(t));
  }
  a->notes.push_back(fmt::format("'{}' holds cos and sin in one tensor, {}: read as '{}' and '{}' [{} x {}] (one "
                                 "column per frequency)",
                                 name, pairs->description, CosSinComponentName(name, "cos"),
                                 CosSinComponentName(name, "sin"), pairs->positions, pairs->freqs));
  return true;
}

}  // namespace pe
