// Inline scheme specs: "rope:head-dim=128,base=500000,rope-scaling=llama3,factor=8"
// names a generated table wherever a table file is expected (`pe dot`
// inputs, `pe verify --reference`, the library's views, pe/view.h), so
// variants can be compared side by side. One parser for the CLI and the
// library: the values go through SetSpecParam (core/spec/params.h),
// the same rule as pe::Spec and the CLI's flags.
//
// Grammar: SCHEME ':' ITEM (',' ITEM)*, ITEM = KEY '=' VALUE | KEY.
//  - KEY is any scheme flag without its dashes (d-model, head-dim, max-len,
//    base, start, dtype, layout, rope-scaling, factor, grid, ...); '_' may
//    stand for '-' (rope_scaling), and d / len abbreviate d-model / max-len.
//  - A KEY alone sets a switch (no-truncate, cls-token, bidirectional);
//    KEY=true / KEY=false too.
//  - A VALUE holding commas (a list such as short-factor) is written in
//    brackets: short-factor=[1,1.2,1.5].
// SCHEME is matched case-insensitively against the registry. A key the
// scheme does not take is refused naming the schemes that take it.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/schemes/registry.h"

namespace pe {

struct ParsedInlineSpec {
  SchemeSpec spec;              ///< scheme canonical; not validated yet (the generator does)
  std::set<std::string> given;  ///< the flags it set, dash spelling without dashes ("max-len", "d-model")
};

/// The spec `text` stands for; nullopt when `text` names an existing file
/// or does not start with a scheme name and a colon (then it is a file
/// name). Throws pe::Error (usage) "input '<text>': ..." for an unknown key
/// (with a "did you mean"), a bad value, or a key the scheme does not take.
std::optional<ParsedInlineSpec> ParseInlineSpecText(const std::string& text);

/// Whether scheme `scheme` takes flag `flag` ("--heads"): the parameter
/// table's row of the flag lists the scheme (core/spec/param_table.h;
/// "--d-model" and "--head-dim" are one flag), or --scheme / --dtype, which
/// every scheme takes.
bool SchemeTakesFlag(const SchemeInfo& scheme, std::string_view flag);

/// Refuses a scheme flag the user gave that `scheme` does not take, naming
/// the schemes it applies to: "--heads: applies to alibi; the scheme is
/// sinusoidal (the default)", with the hint "add --scheme alibi" when no
/// --scheme was given. `given`: the flags given (long names with dashes);
/// `scheme_given`: whether the scheme was named; `where` prefixes the
/// message (an inline spec's "input '...'"; empty for flags).
void CheckFlagsApply(const std::vector<std::string>& given, std::string_view scheme, bool scheme_given,
                     const std::string& where = {});

/// Parses a grid "HxW" (or "N" for a square grid) into spec->grid_h/grid_w;
/// an empty string leaves them 0. Throws pe::Error (usage) otherwise.
void ParseGrid(const std::string& grid, SchemeSpec* spec);

/// Runs `build` (which turns an inline spec into a table); a usage error it
/// throws ("--head-dim: required by scheme 'rope'") is rethrown naming the
/// input it came from ("input 'rope:base=5e5': --head-dim: ...").
template <class F>
auto BuildInline(const std::string& text, F&& build) {
  try {
    return build();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUsage) throw;
    throw Error(ErrorKind::kUsage, "input '" + text + "': " + e.what());
  }
}

}  // namespace pe
