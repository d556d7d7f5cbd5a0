#include "core/base/text_escape.h"

#include <fmt/format.h>

namespace pe {
namespace {

// The length of the valid UTF-8 sequence at s[i] (1..4), or 0 when the byte
// there does not start one (stray continuation, overlong form, surrogate,
// beyond U+10FFFF, truncated). ASCII is 1.
std::size_t Utf8Length(std::string_view s, std::size_t i, unsigned* cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned c = b(i);
  std::size_t n;
  unsigned v, min;
  if (c < 0x80) { *cp = c; return 1; }
  if (c >= 0xc2 && c <= 0xdf) { n = 2; v = c & 0x1f; min = 0x80; }
  else if (c >= 0xe0 && c <= 0xef) { n = 3; v = c & 0x0f; min = 0x800; }
  else if (c >= 0xf0 && c <= 0xf4) { n = 4; v = c & 0x07; min = 0x10000; }
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    v = (v << 6) | (b(i + k) & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

template <bool kXml>
std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    unsigned cp = 0;
    const std::size_t n = Utf8Length(s, i, &cp);
    if (n == 0) {  // not UTF-8: the byte, spelled
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i]));
      i += 1;
      continue;
    }
    if (cp < 0x20 || cp == 0x7f) {
      switch (cp) {
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default: out += fmt::format("\\x{:02x}", cp);
      }
    } else if (cp >= 0x80 && cp <= 0x9f) {
      out += fmt::format("\\u{:04x}", cp);  // C1 control (CSI, NEL, ...)
    } else if (kXml && (cp == 0xfffe || cp == 0xffff)) {
      out += fmt::format("\\u{:04x}", cp);  // not XML characters
    } else if (kXml && cp == '&') {
      out += "&amp;";
    } else if (kXml && cp == '<') {
      out += "&lt;";
    } else if (kXml && cp == '>') {
      out += "&gt;";
    } else if (kXml && cp == '"') {
      out += "&quot;";
    } else if (kXml && cp == '\'') {
      out += "&apos;";
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string EscapeText(std::string_view s) { return Escape<false>(s); }

std::string XmlText(std::string_view s) { return Escape<true>(s); }

std::string XmlTextKeepLines(std::string_view s) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t nl; (nl = s.find('\n', from)) != std::string::npos; from = nl + 1)
    out += XmlText(std::string_view(s).substr(from, nl - from)) + "&#10;";
  return out + XmlText(std::string_view(s).substr(from));
}

std::string TextStyle::Status(std::string_view word) const {
  if (!color) return std::string(word);
  const char* code = word == "PASS" ? "\x1b[1;32m" : word == "FAIL" ? "\x1b[1;31m" : "\x1b[1;33m";
  return fmt::format("{}{}\x1b[0m", code, word);
}

}  // namespace pe
