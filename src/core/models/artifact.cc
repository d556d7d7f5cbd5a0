// LooksLikeModelArtifact and OpenModelArtifact: which reader of
// core/models/ reads a path (a folder with config.json; else the file's
// magic bytes; else its extension). Contract in artifact.h.
#include "core/models/artifact.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>

#include "core/spec/params.h"
#include "core/base/error.h"

namespace pe {
namespace {

std::string LowerExtension(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string e = path.substr(dot);
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  return e;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The first bytes of a regular file (fewer when it is shorter).
std::string Magic(const std::string& path, std::size_t n) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "";
  std::string out(n, '\0');
  out.resize(std::fread(out.data(), 1, n, f));
  std::fclose(f);
  return out;
}

const char* const kModelExtensions[] = {".gguf", ".onnx", ".pt", ".pth", ".bin", ".ckpt", ".npz"};

}  // namespace

const ArtifactSetting* ModelArtifact::FindSetting(const std::string& name, const std::string& group) const {
  if (!group.empty())
    for (const auto& s : settings)
      if (s.name == group + "." + name) return &s;
  for (const auto& s : settings)
    if (s.name == name) return &s;
  return nullptr;
}

bool LooksLikeModelArtifact(const std::string& path) {
  if (IsDirectory(path)) {
    struct stat st;
    return ::stat((path + "/config.json").c_str(), &st) == 0;
  }
  const std::string e = LowerExtension(path);
  return std::find(std::begin(kModelExtensions), std::end(kModelExtensions), e) != std::end(kModelExtensions);
}

namespace {

ModelArtifact ReadArtifact(const std::string& path) {
  const std::string what = fmt::format("'{}'", path);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) ThrowInput(what, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) {
    if (::stat((path + "/config.json").c_str(), &st) != 0)
      ThrowInput(what, "a folder without config.json is not a Hugging Face model folder");
    return ReadHfFolderArtifact(path);
  }
  if (!S_ISREG(st.st_mode)) ThrowInput(what, "not a regular file or a folder");
  // Magic bytes first: a GGUF named .bin is still a GGUF.
  const std::string m = Magic(path, 4);
  if (m == "GGUF") return ReadGgufArtifact(path);
  const std::string e = LowerExtension(path);
  if (m.size() == 4 && m.compare(0, 2, "PK") == 0) {
    if (e == ".npz") return ReadNpzArtifact(path);
    return ReadTorchArtifact(path);  // PyTorch's zip checkpoints (.pt, .pth, .bin, .ckpt)
  }
  if (e == ".gguf") return ReadGgufArtifact(path);  // its reader names what is wrong with the magic
  if (e == ".onnx") return ReadOnnxArtifact(path);
  if (e == ".npz") return ReadNpzArtifact(path);
  if (e == ".pt" || e == ".pth" || e == ".bin" || e == ".ckpt") return ReadTorchArtifact(path);
  ThrowInput(what, "not a model artifact (a folder with config.json, or a .gguf, .onnx, .pt/.pth/.bin/.ckpt or "
                   ".npz file)");
}

}  // namespace

ModelArtifact OpenModelArtifact(const std::string& path) {
  ModelArtifact a = ReadArtifact(path);
  // Every layer group's values against their domains, as flags are checked:
  // out of domain is a problem (a failing check of verify --model), named
  // by the file it came from.
  if (a.plan) {
    const SchemeSpec nothing_given{};
    for (const auto& g : a.plan->groups) {
      SchemeSpec named = g.spec;
      if (a.kind == "gguf") named.gguf = path;
      else named.hf_config = a.kind == "hf-folder" ? path + "/config.json" : path;
      try {
        CheckParamDomains(named, &nothing_given);
      } catch (const Error& e) {
        a.problems.push_back(fmt::format("layer group {}: {}", g.name, e.what()));
      }
    }
  }
  return a;
}

void SummariseArtifactTensors(ModelArtifact* a) {
  if (a->tensors.size() <= kMaxArtifactTensors) return;
  std::map<std::string, std::size_t> roles, shapes;
  for (std::size_t k = kMaxArtifactTensors; k < a->tensors.size(); ++k) {
    const ArtifactTensor& t = a->tensors[k];
    ++roles[t.role.empty() ? "unknown role" : t.role];
    const auto& sh = t.info.shape.empty() ? std::vector<std::int64_t>{t.info.rows, t.info.cols} : t.info.shape;
    std::string s;
    for (std::size_t d = 0; d < sh.size() && d < 8; ++d) s += (d ? " x " : "") + std::to_string(sh[d]);
    if (shapes.size() < 16 || shapes.count(s)) ++shapes[s];
    else ++shapes["other shapes"];
  }
  const std::size_t rest = a->tensors.size() - kMaxArtifactTensors;
  std::string by_role, by_shape;
  for (const auto& [r, n] : roles) by_role += fmt::format("{}{} {}", by_role.empty() ? "" : ", ", n, r);
  for (const auto& [s, n] : shapes) by_shape += fmt::format("{}{} [{}]", by_shape.empty() ? "" : ", ", n, s);
  a->notes.push_back(fmt::format("{} positional tensors: the first {} are listed and checked; the other {} are only "
                                 "summarised (pe checks at most {} per artifact): {}; shapes {}",
                                 a->tensors.size(), kMaxArtifactTensors, rest, kMaxArtifactTensors, by_role, by_shape));
  a->tensors.resize(kMaxArtifactTensors);
  a->tensors_summarised += rest;
}

}  // namespace pe
