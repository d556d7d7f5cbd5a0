#include "core/spec/scheme.h"

#include <map>
#include <string>

#include "core/base/dtype.h"

namespace pe {

std::string ParamName(const SchemeSpec& spec, const std::string& flag) {
  const auto it = spec.origin.find(flag);
  return it == spec.origin.end() ? flag : it->second;
}

double MaxFinite(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return 65504.0;
    case DType::kBFloat16: return 0x1.fep127;
    case DType::kFloat32: return 0x1.fffffep127;
    case DType::kFloat64: break;
  }
  return 0x1.fffffffffffffp1023;
}

}  // namespace pe
