#include "command_model.h"

#include <pe/analysis.h>
#include <pe/table.h>
#include <pe/types.h>
#include <pe/view.h>

#include <algorithm>

#include "help_format.h"

namespace pe::cli {

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  std::string item;
  for (char c : list + ",") {
    if (c == ',') {
      const auto b = item.find_first_not_of(' ');
      const auto e = item.find_last_not_of(' ');
      if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
      item.clear();
    } else {
      item += c;
    }
  }
  return out;
}

namespace {

std::vector<std::string> SchemeNames() {
  std::vector<std::string> out;
  for (const auto& s : ListSchemes()) out.push_back(s.name);
  return out;
}

std::vector<std::string> DTypeNames() {
  std::vector<std::string> out;
  for (DType t : AllDTypes()) out.emplace_back(DTypeName(t));
  return out;
}

// The values an option accepts, from the registries that validate them.
std::vector<std::string> ValuesFor(const std::string& command, const OptionModel& o) {
  auto has_long = [&](const char* n) {
    for (const auto& l : o.longs)
      if (l == n) return true;
    return false;
  };
  if (has_long("scheme") || (command == "schemes" && o.positional == "name")) return SchemeNames();
  if (has_long("dtype")) return DTypeNames();
  if (has_long("view")) {  // pe dot's own two (the decay curve, the position matrix), then the views
    std::vector<std::string> v = {"decay", "matrix"};
    for (const std::string& n : ViewNames())
      if (n != "decay" && n != "matrix") v.push_back(n);
    return v;
  }
  if (has_long("check")) {
    std::vector<std::string> v = VerifyCheckNames();
    v.insert(v.end(), {"all", "none"});
    return v;
  }
  if (has_long("rope-scaling")) {  // the types its help lists: "rope: none|linear|..."
    const std::size_t colon = o.description.find(": ");
    std::string list = colon == std::string::npos ? o.description : o.description.substr(colon + 2);
    list = list.substr(0, list.find_first_of(" ;,("));
    std::vector<std::string> v;
    for (std::size_t from = 0; from <= list.size();) {
      const std::size_t bar = std::min(list.find('|', from), list.size());
      if (bar > from) v.push_back(list.substr(from, bar - from));
      from = bar + 1;
    }
    return v;
  }
  if (has_long("format")) {
    if (command == "dot") return {"csv", "json"};  // pe dot writes curves, not tables
    return command == "generate" ? WritableTableFormats() : TableFormats();
  }
  return {};
}

bool IsPath(const std::string& type_name) {
  return type_name.find("FILE") != std::string::npos || type_name.find("PATH") != std::string::npos ||
         type_name == "INPUT..." || type_name == "REF";
}

OptionModel ReadOption(const std::string& command, const CLI::Option& opt) {
  OptionModel m;
  m.shorts = opt.get_snames();
  m.longs = opt.get_lnames();
  if (opt.get_positional()) m.positional = opt.get_name(true);
  m.flag = opt.get_expected_max() == 0;  // a flag takes no value (get_type_size() is not 0 for them in CLI11 2.1)
  if (!m.flag) m.type_name = HelpTypeName(opt.get_type_name());
  m.description = opt.get_description();
  // As in --help: no default on a spec flag (the scheme's or the file's decides).
  if (!IsSpecHelpFlag(&opt)) m.default_value = opt.get_default_str();
  m.group = opt.get_group();
  m.repeatable = opt.get_positional() && opt.get_items_expected_max() > 1;
  m.file = !m.flag && IsPath(m.type_name);
  m.values = ValuesFor(command, m);
  return m;
}

}  // namespace

CommandModel ReadCommandModel(const CLI::App& app) {
  CommandModel m;
  m.name = app.get_name();
  m.description = app.get_description();
  m.footer = app.get_footer();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;  // hidden
    OptionModel o = ReadOption(m.name, *opt);
    (o.positional.empty() ? m.options : m.positionals).push_back(std::move(o));
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
    m.subcommands.push_back(ReadCommandModel(*sub));
  return m;
}

nlohmann::ordered_json CommandModelJson(const CommandModel& m) {
  auto options = [](const std::vector<OptionModel>& list) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const OptionModel& o : list)
      out.push_back({{"shorts", o.shorts},
                     {"longs", o.longs},
                     {"positional", o.positional},
                     {"type_name", o.type_name},
                     {"group", o.group},
                     {"flag", o.flag},
                     {"default", o.default_value}});
    return out;
  };
  nlohmann::ordered_json j;
  j["name"] = m.name;
  j["options"] = options(m.options);
  j["positionals"] = options(m.positionals);
  j["subcommands"] = nlohmann::ordered_json::array();
  for (const CommandModel& s : m.subcommands) j["subcommands"].push_back(CommandModelJson(s));
  return j;
}

}  // namespace pe::cli
