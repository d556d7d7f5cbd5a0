#include "core/numerics/text_numbers.h"

#include <fmt/format.h>

#include <charconv>
#include <clocale>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <locale.h>

#include "core/base/error.h"
#include "core/numerics/shortest_float.h"

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

namespace {

enum class Parsed { kOk, kNotANumber, kOutOfRange };

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool EqualsLower(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

// Digits with single underscores between them (Python's digitpart);
// returns the end, or `i` itself when there is no digit at `i`.
std::size_t DigitPart(std::string_view s, std::size_t i, bool* underscores) {
  if (i >= s.size() || !IsDigit(s[i])) return i;
  ++i;
  while (i < s.size()) {
    if (IsDigit(s[i])) {
      ++i;
    } else if (s[i] == '_' && i + 1 < s.size() && IsDigit(s[i + 1])) {
      *underscores = true;
      i += 2;
    } else {
      break;
    }
  }
  return i;
}

// Python's float() grammar (docs/formats.md, "Numbers in CSV"): ASCII
// whitespace around, an optional sign, then inf, infinity or nan in any
// case, or a decimal with optional '_' between digits: digits [. [digits]]
// or . digits, then an optional exponent e[sign]digits. No hex, no "+-1".
// The value is correctly rounded: 1e-400 is 0, 5e-324 the least subnormal.
Parsed Parse(std::string_view text, double* value) {
  constexpr std::string_view kSpace = " \t\n\r\v\f";
  const auto b = text.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return Parsed::kNotANumber;
  text = text.substr(b, text.find_last_not_of(kSpace) - b + 1);
  std::size_t i = 0;
  const bool negative = text[0] == '-';
  if (text[0] == '+' || text[0] == '-') i = 1;
  const std::string_view body = text.substr(i);
  if (EqualsLower(body, "inf") || EqualsLower(body, "infinity")) {
    *value = negative ? -HUGE_VAL : HUGE_VAL;
    return Parsed::kOk;
  }
  if (EqualsLower(body, "nan")) {
    *value = negative ? -NAN : NAN;
    return Parsed::kOk;
  }
  bool underscores = false;
  std::size_t j = DigitPart(text, i, &underscores);
  const bool int_digits = j > i;
  bool frac_digits = false;
  if (j < text.size() && text[j] == '.') {
    const std::size_t k = DigitPart(text, j + 1, &underscores);
    frac_digits = k > j + 1;
    j = k;
  }
  if (!int_digits && !frac_digits) return Parsed::kNotANumber;
  if (j < text.size() && (text[j] == 'e' || text[j] == 'E')) {
    std::size_t k = j + 1;
    if (k < text.size() && (text[k] == '+' || text[k] == '-')) ++k;
    const std::size_t e = DigitPart(text, k, &underscores);
    if (e == k) return Parsed::kNotANumber;
    j = e;
  }
  if (j != text.size()) return Parsed::kNotANumber;
  // Now a plain decimal that from_chars reads (without a leading '+').
  std::string plain;
  std::string_view digits = text.substr(negative ? 0 : i);
  if (underscores) {
    plain.reserve(digits.size());
    for (char c : digits)
      if (c != '_') plain.push_back(c);
    digits = plain;
  }
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *value);
  if (ec == std::errc() && ptr == digits.data() + digits.size()) return Parsed::kOk;
  if (ec != std::errc::result_out_of_range) return Parsed::kNotANumber;
  // Out of range: from_chars refuses both overflow and underflow; strtod in
  // the C locale rounds correctly to 0 or a subnormal, or says HUGE_VAL.
  static const locale_t c_locale = ::newlocale(LC_ALL_MASK, "C", nullptr);
  const std::string copy(digits);
  const double v = ::strtod_l(copy.c_str(), nullptr, c_locale);
  if (std::isinf(v)) return Parsed::kOutOfRange;
  *value = v;
  return Parsed::kOk;
}

}  // namespace

bool ParseNumber(std::string_view text, double* value) {
  double v = 0;
  if (Parse(text, &v) != Parsed::kOk) return false;
  *value = v;
  return true;
}

std::string NumberProblem(std::string_view text) {
  double v;
  switch (Parse(text, &v)) {
    case Parsed::kOk: return "";
    case Parsed::kOutOfRange: return "is out of the range of a double";
    case Parsed::kNotANumber: break;
  }
  return "is not a number";
}

}  // namespace pe
