// Multi-tensor JSON: the JSON shape for a TableSet of several tensors
// (RoPE, xPos, ALiBi):
//
//   {"meta": {...shared parameters...},
//    "tensors": {
//      "cos":      {"shape": [L, D], "data": [[...], [...], ...]},
//      "inv_freq": {"shape": [h],    "data": [...]},
//      "bias":     {"shape": [H, L, L], "data": [[[...], ...], ...]}}}
//
// Every tensor's "data" is nested exactly as its shape (numpy.array(data)
// has that shape), one innermost row per line, numbers in shortest
// round-trip form of the tensor's dtype. A one-tensor table keeps the
// original {"meta", "shape", "data"} form (formats/json.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/base/output.h"
#include "core/base/table_set.h"

namespace pe {

/// Writes every tensor of `set` to `sink` in the shape above.
void WriteJsonTensors(TableSet& set, ByteSink& sink);

/// True when the JSON file at `path` is a multi-tensor document: among the
/// keys of its top-level object, "tensors" comes before any "data" (parsed
/// as JSON up to that key; keys of nested objects and strings do not count).
bool LooksLikeJsonTensors(const std::string& path);

/// The keys of the file's top-level "tensors" object, in file order, read by
/// a SAX pass that keeps no values (memory independent of the file's size).
/// Throws pe::Error (input) naming the file when it is not valid JSON.
std::vector<std::string> ListJsonTensorNames(const std::string& path);

/// Opens tensor `name` of a multi-tensor JSON file (empty: the only tensor,
/// else an error listing them). Nested data is viewed as [rows, cols] like
/// the other formats (1-D: one column).
std::unique_ptr<RowSource> OpenJsonTensor(const std::string& path, const std::string& name);

}  // namespace pe
