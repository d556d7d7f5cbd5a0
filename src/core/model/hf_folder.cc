// Placeholder until the Hugging Face model folders reader lands (replaced by its own change).
#include "core/error.h"
#include "core/model/artifact.h"

namespace pe {

ModelArtifact ReadHfFolderArtifact(const std::string& path) {
  ThrowInput("'" + path + "'", "reading Hugging Face model folders is not supported yet");
}

}  // namespace pe
