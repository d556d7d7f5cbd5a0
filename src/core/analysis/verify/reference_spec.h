// The reference a table is verified against, as a spec: the table's
// metadata first, the caller's parameters over it. One merge for every
// client: `pe verify` (its flags), pe::VerifyTable (a pe::Spec), the Python
// module (keywords) and the views of `pe dot` (metadata alone).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <pe/table.h>

#include "core/base/table.h"
#include "core/spec/scheme.h"

namespace pe {

/// The reference spec of the table `info` describes:
///  - the common fields (scheme, d_model, max_len, base, start, dtype)
///    through ResolveReferenceSpec (analysis/verify/verify.h): the metadata's, the
///    shape's, then `given`'s;
///  - every other scheme parameter matched to the metadata key of the same
///    name, `given`'s value over the metadata's (each override a note);
///  - scheme-specific metadata belongs to the file's scheme: when `given`
///    names another, only the common fields carry over (a note says so).
/// given->scheme empty: the metadata's scheme, or, when the metadata names
/// none and `given` sets a scheme parameter, the default (sinusoidal).
/// `name` names the table in errors. Returns nullopt when neither the
/// metadata nor `given` describe a scheme. Throws pe::Error (input) for a
/// metadata value its key refuses (never silently replaced), (usage) for a
/// bad value of `given` or a parameter the scheme does not take (the
/// flags of `ignore_flags` excepted). `tensor_flag` is how notes name the
/// "tensor" key (the CLI's --reference-tensor names the scheme's tensor).
std::optional<SchemeSpec> BuildReferenceSpec(const TableInfo& info, const std::optional<Spec>& given,
                                             const std::string& name, std::vector<std::string>* notes,
                                             const std::vector<std::string>& ignore_flags = {},
                                             const std::string& tensor_flag = "--tensor");

}  // namespace pe
