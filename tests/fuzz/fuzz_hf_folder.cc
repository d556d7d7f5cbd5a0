// libFuzzer target: the Hugging Face model folder reader
// (core/models/hf_artifact.cc) and the checks run on what it returns
// (core/analysis/verify/artifact_checks.h).
//
// The input is split at the markers "\n--index--\n" and "\n--weights--\n"
// into config.json, model.safetensors.index.json and model.safetensors of a
// folder in /dev/shm (absent parts are not written). Contract as in
// fuzz_reader.h: ReadHfFolderArtifact + CheckArtifactTensors succeed or
// throw pe::Error; a crash, a sanitizer report, another exception, a
// timeout or an allocation beyond -rss_limit_mb is a finding.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/base/error.h"
#include "core/models/artifact.h"
#include "core/analysis/verify/artifact_checks.h"

namespace {

// The folder's name lives for the whole process (never destroyed): the exit
// handler that removes the folder runs after static destructors would.
const std::string& Folder() {
  static const std::string* const dir = new std::string([] {
    const char* base = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string d = std::string(base) + "/pe-fuzz-folder-" + std::to_string(::getpid());
    ::mkdir(d.c_str(), 0700);
    std::atexit([] {
      for (const char* f : {"config.json", "model.safetensors.index.json", "model.safetensors"})
        ::unlink((Folder() + "/" + f).c_str());
      ::rmdir(Folder().c_str());
    });
    return d;
  }());
  return *dir;
}

void Put(const std::string& name, std::string_view bytes, bool present) {
  const std::string p = Folder() + "/" + name;
  ::unlink(p.c_str());
  if (!present) return;
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) std::abort();
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) std::abort();
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  std::string_view config = all, index, weights;
  bool has_index = false, has_weights = false;
  if (auto w = config.find("\n--weights--\n"); w != std::string_view::npos) {
    weights = config.substr(w + 13);
    config = config.substr(0, w);
    has_weights = true;
  }
  if (auto i = config.find("\n--index--\n"); i != std::string_view::npos) {
    index = config.substr(i + 11);
    config = config.substr(0, i);
    has_index = true;
  }
  Put("config.json", config, true);
  Put("model.safetensors.index.json", index, has_index);
  Put("model.safetensors", weights, has_weights);
  try {
    const pe::ModelArtifact a = pe::OpenModelArtifact(Folder());
    pe::CheckArtifactTensors(a, false);
  } catch (const pe::Error&) {
  }
  return 0;
}
