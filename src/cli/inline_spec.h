// Inline scheme specs: "rope:head-dim=128,base=500000,rope-scaling=llama3,factor=8"
// names a generated table wherever a table file is expected (`pe dot`
// inputs, `pe verify --reference`), so variants can be compared side by side.
//
// Grammar: SCHEME ':' ITEM (',' ITEM)*, ITEM = KEY '=' VALUE | KEY.
//  - KEY is any scheme flag without its dashes (d-model, head-dim, max-len,
//    base, start, dtype, layout, rope-scaling, factor, grid, ...); '_' may
//    stand for '-' (rope_scaling), and d / len abbreviate d-model / max-len.
//    The keys are exactly the flags of `pe generate` (one grammar: a new
//    scheme flag is an inline key with no change here).
//  - A KEY alone sets a switch flag (no-truncate, cls-token, bidirectional).
//  - A VALUE holding commas (a list such as short-factor) is written in
//    brackets: short-factor=[1,1.2,1.5].
// SCHEME is matched case-insensitively against the registry.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "cli/cmd_generate.h"
#include "core/analysis/view_compute.h"
#include "core/error.h"

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
