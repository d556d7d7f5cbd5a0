#include "core/io/bounded_json.h"

#include <fmt/format.h>

#include "core/error.h"

namespace pe {

namespace {
// Thrown from the parser's callback to stop it; turned into pe::Error below.
struct OverBudget {
  std::string why;
};
}  // namespace

nlohmann::json ParseBoundedJson(std::string_view text, const std::string& what, const JsonBudget& budget) {
  std::int64_t seen = 0;
  nlohmann::json out;
  try {
    out = nlohmann::json::parse(text, [&](int depth, nlohmann::json::parse_event_t ev, nlohmann::json&) {
      if (depth > budget.max_depth)
        throw OverBudget{fmt::format("nested deeper than {} levels (refused)", budget.max_depth)};
      if (ev != nlohmann::json::parse_event_t::object_end && ev != nlohmann::json::parse_event_t::array_end &&
          ++seen > budget.max_values)
        throw OverBudget{fmt::format("holds more than {} values, more than any file of its kind needs (refused)",
                                     budget.max_values)};
      return true;
    });
  } catch (const OverBudget& e) {
    ThrowInput(what, e.why);
  } catch (const nlohmann::json::exception& e) {
    // nlohmann's message names the byte where parsing stopped.
    std::string m = e.what();
    if (auto p = m.find("parse error"); p != std::string::npos) m = m.substr(p);
    ThrowInput(what, fmt::format("not valid JSON ({})", m.substr(0, 160)));
  }
  return out;
}

}  // namespace pe
