// docs/models.md's family table against the code's rows (FamilyRules(),
// core/spec/model_rules.h): the same model types, and for each the same
// config class, pairs, cos/sin columns, class defaults, other rules and
// source. The table in the manual is the data's, word for word.
#include "core/spec/model_rules.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace pe {
namespace {

std::string Trim(const std::string& s) {
  const auto a = s.find_first_not_of(' ');
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(' ') - a + 1);
}

// The cells of a markdown table row "| a | b |".
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '|') {
      out.push_back(Trim(cell));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return out;
}

std::string Unquote(const std::string& s) {
  return s.size() >= 2 && s.front() == '`' && s.back() == '`' ? s.substr(1, s.size() - 2) : s;
}

// model_type -> cells of docs/models.md's family table.
std::map<std::string, std::vector<std::string>> DocRows() {
  std::ifstream in(std::string(PE_SOURCE_DIR) + "/docs/models.md");
  EXPECT_TRUE(in) << "docs/models.md";
  std::map<std::string, std::vector<std::string>> rows;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("| model_type | config class |", 0) == 0) {
      inside = true;
      std::getline(in, line);  // |---|...
      continue;
    }
    if (!inside) continue;
    if (line.rfind("| `", 0) != 0) break;
    const std::vector<std::string> c = Cells(line);
    EXPECT_EQ(c.size(), 8u) << line;
    const std::string type = Unquote(c[0]);
    EXPECT_EQ(rows.count(type), 0u) << "docs/models.md lists " << type << " twice";
    rows[type] = c;
  }
  return rows;
}

std::string Columns(const std::string& table) { return table == "cache" ? "one per frequency (dim/2)" : table; }

TEST(ModelRules, DocsTableIsTheCodesRows) {
  const auto docs = DocRows();
  ASSERT_FALSE(docs.empty()) << "no family table in docs/models.md";
  for (const FamilyRule& r : FamilyRules()) {
    const auto it = docs.find(r.model_type);
    if (it == docs.end()) {
      ADD_FAILURE() << "docs/models.md has no row for model_type " << r.model_type;
      continue;
    }
    const std::vector<std::string>& c = it->second;
    if (c.size() != 8) continue;
    EXPECT_EQ(c[1], r.config_class) << r.model_type << ": config class";
    EXPECT_EQ(c[2], r.pairing) << r.model_type << ": pairs";
    EXPECT_EQ(c[3], Columns(r.table)) << r.model_type << ": cos/sin columns";
    EXPECT_EQ(c[4], fmt::format("{:g}", r.partial)) << r.model_type << ": partial";
    EXPECT_EQ(c[5], fmt::format("{:g}", r.theta)) << r.model_type << ": rope_theta";
    EXPECT_EQ(c[6], r.notes) << r.model_type << ": other rules";
    EXPECT_EQ(Unquote(c[7]), r.source) << r.model_type << ": source";
  }
  for (const auto& [type, cells] : docs)
    EXPECT_NE(FindFamilyRule(type), nullptr) << "docs/models.md lists " << type << ", which has no row in the code";
  std::size_t exact = 0;
  for (const auto& [type, cells] : docs)
    for (const FamilyRule& r : FamilyRules()) exact += type == r.model_type;
  EXPECT_EQ(exact, docs.size()) << "every docs row names a code row exactly";
  EXPECT_EQ(docs.size(), FamilyRules().size());
}

TEST(ModelRules, EveryRowCitesItsSource) {
  for (const FamilyRule& r : FamilyRules()) {
    EXPECT_FALSE(std::string(r.source).empty()) << r.model_type;
    EXPECT_FALSE(std::string(r.config_class).empty()) << r.model_type;
  }
}

TEST(ModelRules, GenericNoteNamesTheType) {
  EXPECT_EQ(GenericRuleNote("frobnicator").rfind("model_type 'frobnicator' has no rule in pe; planned by the generic "
                                                 "rule, unchecked",
                                                 0),
            0u);
}

}  // namespace
}  // namespace pe
