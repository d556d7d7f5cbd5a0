// pe/error.h: the one exception type of the pe library.
//
// Every function of the public API (include/pe/*.h) reports a problem a
// caller can fix by throwing pe::Error: a bad parameter (kUsage), a
// malformed or unsupported input file (kInput), a refused read or write
// (kIo). The message reads "<what>: <why>" (no "pe: error:" prefix), e.g.
//   "--d-model: must be at least 1, got 0 (...)"
//   "'t.npy': not an NPY file (bad magic)"
// and names parameters by their CLI flag (docs/library.md, "Specs").
// Nothing else is thrown except std::bad_alloc.
//
// This header is shared with pe's internal core (core/base/error.h includes it),
// so the exception a caller catches is the one the core threw.
#pragma once

#include <pe/export.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace pe {

enum class ErrorKind {
  kUsage,       ///< a parameter is out of range or inconsistent
  kInput,       ///< an input file is malformed or of an unsupported kind
  kIo,          ///< the operating system refused a read or a write
  kBrokenPipe,  ///< (CLI only) stdout's reader went away
  kInternal,    ///< a bug in pe; should never reach a caller
};

class PE_API Error : public std::runtime_error {
 public:
  /// `hint`: what to change, when it is known ("add --scheme alibi"); the
  /// CLI prints it as a second line "pe: hint: ..." (not under --quiet).
  Error(ErrorKind kind, const std::string& message, std::string hint = {})
      : std::runtime_error(message), kind_(kind), hint_(std::move(hint)) {}
  ErrorKind kind() const { return kind_; }
  const std::string& hint() const { return hint_; }

 private:
  ErrorKind kind_;
  std::string hint_;
};

/// "usage", "input", "io", "broken-pipe", "internal".
PE_API const char* ErrorKindName(ErrorKind kind);

/// Shorthands that throw an Error reading "<what>: <why>" (`what` the
/// subject, such as "--d-model 0" or "'t.npy'"; `why` the reason).
[[noreturn]] PE_API void ThrowUsage(const std::string& what, const std::string& why);
[[noreturn]] PE_API void ThrowUsage(const std::string& what, const std::string& why, const std::string& hint);
[[noreturn]] PE_API void ThrowInput(const std::string& what, const std::string& why);
[[noreturn]] PE_API void ThrowIo(const std::string& what, const std::string& why);

}  // namespace pe
