#include "core/models/tensor_role.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace pe {

std::string RoleFromTensorName(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = n.find_first_of("./", start);
    parts.push_back(n.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (parts.size() > 1 && (parts.back() == "weight" || parts.back() == "data")) parts.pop_back();
  const std::string& last = parts.back();
  auto has = [&](std::string_view s) { return n.find(s) != std::string::npos; };
  if (last.find("inv_freq") != std::string::npos) return "inv_freq";
  if (last == "rope_freqs") return "rope_freqs";
  if (last == "rope_factors_long" || last == "long_factor" || last == "long_factors") return "rope_factors_long";
  if (last == "rope_factors_short" || last == "short_factor" || last == "short_factors") return "rope_factors_short";
  auto cache = [&](const std::string& trig) {
    return last == trig || last == trig + "_cached" || last == trig + "_cache" || last == "_" + trig + "_cached" ||
           (last.size() > trig.size() && last.compare(0, trig.size() + 1, trig + "_") == 0 &&
            (has("cache") || has("rotary") || has("rope"))) ||
           (last.size() > trig.size() + 1 && last.compare(last.size() - trig.size() - 1, std::string::npos, "_" + trig) == 0);
  };
  if (cache("cos")) return "cos_cache";
  if (cache("sin")) return "sin_cache";
  if (last == "embed_positions" || last == "position_embeddings" || last == "position_embedding" || last == "wpe" ||
      last == "positional_embedding" || last == "pos_embed" || last == "pos_embedding" || last == "embed_pos" ||
      last == "position_embd")
    return "position_embedding";
  if (last == "alibi_slopes" || (last == "slopes" && has("alibi"))) return "alibi_slopes";
  return "";
}

}  // namespace pe
