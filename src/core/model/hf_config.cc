#include "core/model/hf_config.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace pe {
namespace {

using json = nlohmann::json;

}  // namespace

std::string HfConfigFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return path + "/config.json";
  return path;
}

nlohmann::json ReadHfConfigJson(const std::string& path, const std::string& what, bool text_config) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) ThrowInput(what, "cannot read the file");
  if (st.st_size > (1 << 26)) ThrowInput(what, "too large for a config file");
  std::ifstream f(path);
  json c;
  try {
    c = json::parse(f, [](int depth, json::parse_event_t, json&) {
      // No config nests 64 deep; a "depth bomb" of '[' would build a node per byte.
      if (depth > 64) throw json::other_error::create(501, "nested too deep", nullptr);
      return true;
    });
  } catch (const json::exception&) {
    ThrowInput(what, "not valid JSON");
  }
  if (!c.is_object()) ThrowInput(what, "expected a JSON object (a model's config.json)");
  if (text_config && c.contains("text_config") && c["text_config"].is_object()) {
    json t = c["text_config"];  // multimodal configs (gemma3, llama4)
    if (!t.contains("model_type") && c.contains("model_type")) t["model_type"] = c["model_type"];
    return t;
  }
  return c;
}

}  // namespace pe
