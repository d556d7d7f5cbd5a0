// A table's metadata as a JSON object, in the file's key order: one
// conversion for every JSON that pe prints or writes (inspect, dot, the JSON
// table format).
#pragma once

#include <nlohmann/json.hpp>

#include "core/base/table.h"

namespace pe {

/// {key: value, ...} in insertion order. Integers and strings as they are;
/// doubles through JsonNumber (non-finite values become "nan"/"inf"/"-inf").
/// Linear in the number of keys: the keys of a Metadata are unique, so each
/// is appended without the per-key search of ordered_json's operator[]
/// (which made `pe inspect --json` quadratic, 5 s for 65,536 keys).
nlohmann::ordered_json MetadataToJson(const Metadata& meta);

}  // namespace pe
