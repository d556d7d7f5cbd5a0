#include "core/base/error.h"

namespace pe {

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
