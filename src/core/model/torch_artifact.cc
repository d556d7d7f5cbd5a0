// Placeholder until the PyTorch checkpoints reader lands (replaced by its own change).
#include "core/error.h"
#include "core/model/artifact.h"

namespace pe {

ModelArtifact ReadTorchArtifact(const std::string& path) {
  ThrowInput("'" + path + "'", "reading PyTorch checkpoints is not supported yet");
}

}  // namespace pe
