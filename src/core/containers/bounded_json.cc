#include "core/containers/bounded_json.h"

#include <fmt/format.h>

#include "core/base/error.h"

namespace pe {

namespace {

// A first pass that builds nothing: counts values, keys and containers and
// tracks the depth, stopping at the first one past the budget. (nlohmann's
// callback parser would do the same while building, but its cost grows as
// N^2 for N objects inside one object; a SAX pass is linear.)
class BudgetPass : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit BudgetPass(const JsonBudget& b) : budget_(b) {}
  std::string why;
  std::string error_text;

  bool null() override { return Count(); }
  bool boolean(bool) override { return Count(); }
  bool number_integer(number_integer_t) override { return Count(); }
  bool number_unsigned(number_unsigned_t) override { return Count(); }
  bool number_float(number_float_t, const string_t&) override { return Count(); }
  bool string(string_t&) override { return Count(); }
  bool binary(binary_t&) override { return Count(); }
  bool start_object(std::size_t) override { return Open(); }
  bool key(string_t&) override { return Count(); }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error_text = e.what();
    return false;
  }

 private:
  bool Count() {
    if (++seen_ <= budget_.max_values) return true;
    why = fmt::format("holds more than {} values, more than any file of its kind needs (refused)", budget_.max_values);
    return false;
  }
  bool Open() {
    if (++depth_ > budget_.max_depth) {
      why = fmt::format("nested deeper than {} levels (refused)", budget_.max_depth);
      return false;
    }
    return Count();
  }
  bool Close() {
    --depth_;
    return true;
  }
  const JsonBudget& budget_;
  std::int64_t seen_ = 0;
  int depth_ = 0;
};

}  // namespace

nlohmann::json ParseBoundedJson(std::string_view text, const std::string& what, const JsonBudget& budget) {
  BudgetPass pass(budget);
  const bool ok = nlohmann::json::sax_parse(text, &pass, nlohmann::json::input_format_t::json, false);
  if (!pass.why.empty()) ThrowInput(what, pass.why);
  if (!ok || !pass.error_text.empty()) {
    // nlohmann's message names the byte where parsing stopped.
    std::string m = pass.error_text;
    if (auto p = m.find("parse error"); p != std::string::npos) m = m.substr(p);
    ThrowInput(what, fmt::format("not valid JSON{}", m.empty() ? "" : " (" + m.substr(0, 160) + ")"));
  }
  try {
    return nlohmann::json::parse(text);  // within the budget: built without a callback, linear
  } catch (const nlohmann::json::exception& e) {
    ThrowInput(what, "not valid JSON");
  }
}

}  // namespace pe
