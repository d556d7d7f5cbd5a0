#include "inline_spec.h"

#include <algorithm>

namespace pe::cli {

std::optional<InlineSpec> ParseInlineSpec(const std::string& text) {
  std::optional<pe::Spec> spec = pe::InlineSpecOf(text);
  if (!spec) return std::nullopt;
  InlineSpec out;
  for (const auto& [key, value] : spec->params) {
    std::string flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    out.given.insert(flag);
  }
  out.spec = std::move(*spec);
  return out;
}

}  // namespace pe::cli
