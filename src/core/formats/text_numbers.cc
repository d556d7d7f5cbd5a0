#include "core/formats/text_numbers.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/formats/shortest_float.h"

namespace pe {

void AppendNumber(std::string& out, const std::byte* data, DType dtype,
                  std::size_t index, const char* where) {
  double v;
  if (dtype == DType::kFloat32) {
    float f;
    std::memcpy(&f, data + 4 * index, 4);
    if (!std::isfinite(f))
      ThrowInput(where, fmt::format("value {} cannot be written as a number", f));
    char buf[kShortestFloatRoom];
    out.append(buf, WriteShortestFloat(buf, f));  // float's shortest digits
    return;
  }
  v = LoadAsDouble(data, dtype, index);
  if (!std::isfinite(v))
    ThrowInput(where, fmt::format("value {} cannot be written as a number", v));
  fmt::format_to(std::back_inserter(out), "{}", v);
}

bool FitsFloat32(double value) {
  const auto f = static_cast<float>(value);
  if (static_cast<double>(f) == value) return true;
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, f);  // shortest float32 digits
  double back;
  std::from_chars(buf, r.ptr, back);
  return back == value;
}

bool ParseNumber(std::string_view text, double* value) {
  // from_chars rejects a leading '+'; accept it as other tools write it.
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  if (ec == std::errc::result_out_of_range) return false;
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::string NumberProblem(std::string_view text) {
  double v;
  if (ParseNumber(text, &v)) return "";
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range && ptr == text.data() + text.size())
    return "is out of the range of a double";
  return "is not a number";
}

}  // namespace pe
