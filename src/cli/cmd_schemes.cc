#include "cmd_schemes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include <cstdio>
#include <nlohmann/json.hpp>

#include <pe/pe.h>

namespace pe::cli {

void SetupSchemes(CLI::App* cmd, SchemesOptions& o) {
  cmd->add_option("name", o.name, "Show one scheme in full")->type_name("NAME");
  cmd->add_flag("--json", o.json, "Print the list as JSON");
  cmd->footer(R"(Every scheme takes --dtype (float32, float64, float16, bfloat16) and writes
the exact value of its formula correctly rounded. Multi-tensor schemes (rope,
xpos, alibi) write all their tensors to safetensors, HDF5 and JSON; NPY and
CSV take one, chosen with --tensor. Formulas and sources: docs/schemes.md.

Examples:
  pe schemes
  pe schemes rope
  pe schemes --json
)");
}

namespace {

void PrintOne(const pe::SchemeDescription& s, std::string& out) {
  out += fmt::format("{}\n  {}\n  source: {}\n", s.name, s.summary, s.source);
  if (!s.tensors.empty()) {
    std::string t;
    for (const auto& n : s.tensors) t += (t.empty() ? "" : ", ") + n;
    out += fmt::format("  tensors: {}\n", t);
  }
  std::size_t w = 0;
  for (const auto& p : s.params) w = std::max(w, p.flag.size());
  for (const auto& p : s.params)
    out += fmt::format("    {:<{}}  {} (default: {})\n", p.flag, w, p.meaning, p.fallback);
}

}  // namespace

int RunSchemes(const SchemesOptions& o, Console&) {
  std::string out;
  if (o.json) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& s : pe::ListSchemes()) {
      if (!o.name.empty() && s.name != o.name) continue;
      nlohmann::ordered_json j;
      j["name"] = s.name;
      j["summary"] = s.summary;
      j["source"] = s.source;
      j["tensors"] = nlohmann::ordered_json::array();
      for (const auto& t : s.tensors) j["tensors"].push_back(t);
      j["params"] = nlohmann::ordered_json::array();
      for (const auto& p : s.params) j["params"].push_back({{"flag", p.flag}, {"meaning", p.meaning}, {"default", p.fallback}});
      all.push_back(j);
    }
    if (!o.name.empty() && all.empty()) pe::DescribeScheme(o.name);  // throws with a hint
    out = JsonText(all, 2) + "\n";
  } else if (!o.name.empty()) {
    PrintOne(pe::DescribeScheme(o.name), out);
  } else {
    std::size_t w = 0;
    for (const auto& s : pe::ListSchemes()) w = std::max(w, s.name.size());
    for (const auto& s : pe::ListSchemes()) {
      // Every flag a parameter line names ("--beta-fast / --beta-slow",
      // "--layout half|interleaved"): each --name, once, in order.
      std::string flags;
      std::vector<std::string> seen;
      for (const auto& p : s.params) {
        for (std::size_t at = p.flag.find("--"); at != std::string::npos; at = p.flag.find("--", at)) {
          std::size_t end = at + 2;
          while (end < p.flag.size() && (std::isalnum(static_cast<unsigned char>(p.flag[end])) || p.flag[end] == '-')) ++end;
          const std::string f = p.flag.substr(at, end - at);
          at = end;
          if (f.size() <= 2 || std::find(seen.begin(), seen.end(), f) != seen.end()) continue;
          seen.push_back(f);
          flags += (flags.empty() ? "" : " ") + f;
        }
      }
      out += fmt::format("{:<{}}  {}\n{:<{}}  params: {}\n", s.name, w, s.summary, "", w, flags);
    }
    out += "\n'pe schemes NAME' shows a scheme's parameters with their defaults.\n";
  }
  WriteStdout(out);
  return 0;
}

}  // namespace pe::cli
