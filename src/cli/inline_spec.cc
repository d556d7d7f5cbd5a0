#include "cli/inline_spec.h"

#include "core/base/dtype.h"
#include "core/schemes/inline_spec.h"

namespace pe::cli {

std::optional<InlineSpec> ParseInlineSpec(const std::string& text) {
  std::optional<ParsedInlineSpec> parsed = ParseInlineSpecText(text);
  if (!parsed) return std::nullopt;
  // The flags the spec stands for (ToSpec turns them back into the same spec).
  InlineSpec out;
  const SchemeSpec& s = parsed->spec;
  out.flags.extra = s;
  out.flags.scheme = s.scheme;
  out.flags.d_model = s.d_model;
  out.flags.max_len = s.max_len;
  out.flags.base = s.base;
  out.flags.start = s.start;
  out.flags.dtype = std::string(Traits(s.dtype).name);
  out.flags.cmd = nullptr;  // the keys given are in `given`
  out.given = std::move(parsed->given);
  return out;
}

}  // namespace pe::cli
