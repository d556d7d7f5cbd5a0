// Placeholder until the ONNX reader lands (replaced by its own change).
#include "core/error.h"
#include "core/model/artifact.h"

namespace pe {

ModelArtifact ReadOnnxArtifact(const std::string& path) {
  ThrowInput("'" + path + "'", "reading ONNX is not supported yet");
}

}  // namespace pe
