#include "core/spec/hf_config.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/containers/bounded_json.h"
#include "core/base/model_folder.h"

namespace pe {
namespace {

using json = nlohmann::json;

}  // namespace

std::string HfConfigFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return path + "/config.json";
  return path;
}

nlohmann::json ParseHfConfigText(const std::string& text, const std::string& what, bool text_config) {
  json c = ParseBoundedJson(text, what, kConfigBudget);
  if (!c.is_object()) ThrowInput(what, "expected a JSON object (a model's config.json)");
  // The names that select a model's rules and appear in every report: a
  // control byte there is a forged config, refused rather than printed.
  for (const json* o : {&c, c.contains("text_config") ? &c["text_config"] : nullptr}) {
    if (!o || !o->is_object()) continue;
    for (const char* key : {"model_type", "rope_type", "type"}) {
      const json* v = o->contains(key) ? &(*o)[key] : nullptr;
      for (const char* block : {"rope_scaling", "rope_parameters"})
        if (!v && o->contains(block) && (*o)[block].is_object() && (*o)[block].contains(key)) v = &(*o)[block][key];
      if (!v || !v->is_string()) continue;
      for (unsigned char ch : v->get_ref<const std::string&>())
        if (ch < 0x20 || ch == 0x7f)
          ThrowInput(what, fmt::format("{} holds the control byte 0x{:02x}: not a model's config (refused)", key, ch));
    }
  }
  if (text_config && c.contains("text_config") && c["text_config"].is_object()) {
    json t = c["text_config"];  // multimodal configs (gemma3, llama4)
    if (!t.contains("model_type") && c.contains("model_type")) t["model_type"] = c["model_type"];
    return t;
  }
  return c;
}

nlohmann::json ReadHfConfigJson(const std::string& path, const std::string& what, bool text_config) {
  // The model's folder is the folder given, or the folder of the file given;
  // the config is opened beneath it (core/base/model_folder.h).
  struct stat st;
  const bool folder = ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  const ModelFolder dir = folder ? ModelFolder::Of(path) : ModelFolder::OfFile(path);
  const auto slash = path.rfind('/');
  const std::string name = folder ? "config.json" : (slash == std::string::npos ? path : path.substr(slash + 1));
  const auto text = dir.ReadSmall(name, what, kMaxConfigBytes);
  if (!text) ThrowInput(what, folder ? "the folder has no config.json" : "cannot read the file: no such file");
  return ParseHfConfigText(*text, what, text_config);
}

// A number list as "a,b,c" (the rope scheme's inline list form), bounded.
std::string HfFactorList(const nlohmann::json& v, const std::string& what, const char* key) {
  if (!v.is_array() || v.size() > static_cast<std::size_t>(kMaxWidth))
    ThrowInput(what, fmt::format("{} must be a list of at most {} numbers", key, kMaxWidth));
  std::string out;
  for (const auto& x : v) {
    if (!x.is_number()) ThrowInput(what, fmt::format("{} holds a non-number", key));
    out += fmt::format("{}{}", out.empty() ? "" : ",", x.get<double>());
  }
  return out;
}

}  // namespace pe
