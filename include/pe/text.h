// pe/text.h: text from files made safe to print, and how reports are styled.
//
// File names, metadata values and tensor names come from files a caller
// does not control; every report pe renders passes them through EscapeText
// (terminal text) or XmlText (JUnit), and a client printing them beside a
// report should too.
#pragma once

#include <pe/export.h>

#include <string>
#include <string_view>
#include <vector>

namespace pe {

/// Text made safe for a terminal and for one-line messages: control
/// characters (bytes below 0x20, 0x7f), C1 controls (U+0080..U+009F) and
/// bytes that are not valid UTF-8 are written as escapes (`\n`, `\t`, `\r`,
/// `\xNN`, `\u0085`); valid UTF-8 is kept. Idempotent on its own output's
/// printable part, and never produces a control byte or a line break.
PE_API std::string EscapeText(std::string_view s);

/// As EscapeText, and additionally the XML specials & < > " ' as entities:
/// the result is well-formed XML 1.0 character data or attribute value.
PE_API std::string XmlText(std::string_view s);

/// As XmlText, with line breaks kept as character references (`&#10;`):
/// a multi-line message as one attribute value.
PE_API std::string XmlTextKeepLines(std::string_view s);

/// The closest name in `candidates` to `name` by edit distance, or empty
/// when nothing is close (for "did you mean" hints).
PE_API std::string ClosestName(std::string_view name, const std::vector<std::string_view>& candidates);

/// How a human-readable report is rendered.
struct PE_API TextStyle {
  /// PASS, FAIL and SKIP in bold green, red and yellow (ANSI escapes).
  bool color = false;

  /// `word` as the style shows it.
  std::string Status(std::string_view word) const;
};

}  // namespace pe
