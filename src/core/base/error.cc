#include "core/base/error.h"

namespace pe {

int ExitCodeFor(ErrorKind kind) {
  // Internal errors are still reported as 2: CI should treat any non-verdict
  // exit as "the tool could not answer", not as "the table is wrong" (1).
  return kind == ErrorKind::kBrokenPipe ? kExitOk : kExitError;
}

void ThrowUsage(const std::string& what, const std::string& why) {
  throw Error(ErrorKind::kUsage, what + ": " + why);
}
void ThrowUsage(const std::string& what, const std::string& why, const std::string& hint) {
  throw Error(ErrorKind::kUsage, what + ": " + why, hint);
}
void ThrowInput(const std::string& what, const std::string& why) {
  throw Error(ErrorKind::kInput, what + ": " + why);
}
void ThrowIo(const std::string& what, const std::string& why) {
  throw Error(ErrorKind::kIo, what + ": " + why);
}

}  // namespace pe
