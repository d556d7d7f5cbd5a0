#include "core/formats/metadata_json.h"

#include <variant>

#include "core/base/json_number.h"

namespace pe {

nlohmann::ordered_json MetadataToJson(const Metadata& meta) {
  using Json = nlohmann::ordered_json;
  Json j = Json::object();
  auto& entries = static_cast<Json::object_t::Container&>(j.get_ref<Json::object_t&>());
  entries.reserve(meta.entries().size());
  // No structured binding: clang 14 (the fuzz build) cannot capture one.
  for (const auto& kv : meta.entries()) {
    const MetaValue& v = kv.second;
    if (const auto* d = std::get_if<double>(&v)) entries.emplace_back(kv.first, JsonNumber(*d));
    else if (const auto* i = std::get_if<std::int64_t>(&v)) entries.emplace_back(kv.first, *i);
    else entries.emplace_back(kv.first, std::get<std::string>(v));
  }
  return j;
}

}  // namespace pe
