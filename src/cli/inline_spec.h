// Inline scheme specs: "rope:head-dim=128,base=500000,rope-scaling=llama3,factor=8"
// names a generated table wherever a table file is expected (`pe dot`
// inputs, `pe verify --reference`), so variants can be compared side by side.
//
// The grammar and the parser are the library's (pe::InlineSpecOf,
// include/pe/table.h; docs/cli.md); this is the CLI's face of it.
#pragma once

#include <optional>
#include <set>
#include <string>

#include <pe/table.h>

namespace pe::cli {

struct InlineSpec {
  pe::Spec spec;                ///< the scheme (canonical) and the keys given, for pe::GenerateTable
  std::set<std::string> given;  ///< the flags it set, without dashes ("max-len")
};

/// The spec an inline spec stands for; nullopt when `text` names an
/// existing file or does not start with a scheme name and a colon (then it
/// is a file name). Throws pe::Error (usage) naming the input for an
/// unknown key or a bad value.
std::optional<InlineSpec> ParseInlineSpec(const std::string& text);

}  // namespace pe::cli
