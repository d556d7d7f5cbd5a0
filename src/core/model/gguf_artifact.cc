// Placeholder until the GGUF reader lands (replaced by its own change).
#include "core/error.h"
#include "core/model/artifact.h"

namespace pe {

ModelArtifact ReadGgufArtifact(const std::string& path) {
  ThrowInput("'" + path + "'", "reading GGUF is not supported yet");
}

}  // namespace pe
