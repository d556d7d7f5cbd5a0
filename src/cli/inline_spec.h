// Inline scheme specs: "rope:head-dim=128,base=500000,rope-scaling=llama3,factor=8"
// names a generated table wherever a table file is expected (`pe dot`
// inputs, `pe verify --reference`), so variants can be compared side by side.
//
// The grammar and the parser are core's (core/schemes/inline_spec.h), shared with
// the library's views (pe/view.h); this is the CLI's face of it.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "cli/cmd_generate.h"

namespace pe::cli {

struct InlineSpec {
  SpecFlags flags;
  std::set<std::string> given;  ///< the flags it set, without dashes ("max-len")
};

/// The flags an inline spec stands for; nullopt when `text` names an
/// existing file or does not start with a scheme name and a colon (then it
/// is a file name). Throws
/// pe::Error (usage) naming the input for an unknown key or a bad value.
std::optional<InlineSpec> ParseInlineSpec(const std::string& text);


}  // namespace pe::cli
