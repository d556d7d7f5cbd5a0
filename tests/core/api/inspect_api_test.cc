// The public inspection (include/pe/inspect.h) as a library user sees it:
// the statistics of a hand-made table against values worked out by hand
// (min, max, mean, the zero row and column, the non-finite count, the row
// norms), the rows shown for a preview and a slice, the listing of a file
// of several tensors, identification of a bare table against the base it
// was made with, the axes named from metadata, the text and JSON against
// the result's own fields, and refusals that name their flag. Uses only
// <pe/...> headers.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <pe/pe.h>

namespace pe {
namespace {

std::string TempPath(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("pe_inspect_api_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

template <class F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// 5 rows x 3 columns, float64: row 2 all zero, column 1 all zero, one NaN.
//   row 0:  3  0  4      norm 5
//   row 1: -1  0  0      norm 1
//   row 2:  0  0  0      norm 0
//   row 3:  2  0  NaN    (NaN left out)
//   row 4:  6  0  8      norm 10
// Finite entries: 14; their sum 22, min -1, max 8, mean 22/14.
std::string HandTable() {
  static const std::vector<double> v = {3, 0, 4, -1, 0, 0, 0, 0, 0, 2, 0, std::numeric_limits<double>::quiet_NaN(),
                                        6, 0, 8};
  const std::string path = TempPath("hand.npy");
  Table t = WrapTensors({TensorView{"pe", {5, 3}, DType::kFloat64, v.data()}});
  WriteTableFile(t, path);
  return path;
}

TEST(InspectApiTest, StatisticsOfAHandMadeTable) {
  InspectRequest r;
  r.path = HandTable();
  const InspectResult in = InspectFile(r);
  EXPECT_TRUE(in.tensors.empty());
  EXPECT_EQ(in.format, "npy");
  EXPECT_EQ(in.info.rows, 5);
  EXPECT_EQ(in.info.cols, 3);
  EXPECT_EQ(in.stats.entries, 15);
  EXPECT_EQ(in.stats.nonfinite, 1);
  EXPECT_EQ(in.stats.nan, 1);
  EXPECT_EQ(in.stats.min, -1.0);
  EXPECT_EQ(in.stats.max, 8.0);
  EXPECT_DOUBLE_EQ(in.stats.mean, 22.0 / 14.0);
  EXPECT_EQ(in.stats.zero_row_count, 1);
  EXPECT_EQ(in.stats.zero_rows, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(in.stats.zero_col_count, 1);
  EXPECT_EQ(in.stats.zero_cols, (std::vector<std::int64_t>{1}));
  EXPECT_EQ(in.stats.row_norm_max, 10.0);
  EXPECT_EQ(in.stats.row_norm_max_row, 4);
  // Default preview: 3 rows at each end of 5 rows meet in one block.
  EXPECT_EQ(in.shown_rows, (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 3}, {3, 5}}));
  EXPECT_FALSE(in.slice);
  EXPECT_EQ(in.shown_cols, (std::pair<std::int64_t, std::int64_t>{0, 3}));
  // The JSON document carries the same figures.
  const auto j = nlohmann::json::parse(InspectJson(in));
  EXPECT_EQ(j["schema"], "pe.inspect/1");
  EXPECT_EQ(j["shape"], nlohmann::json::array({5, 3}));
  EXPECT_EQ(j["stats"]["min"].get<double>(), -1.0);
  EXPECT_EQ(j["preview"]["rows"].size(), 5u);
  EXPECT_EQ(j["preview"]["rows"][4]["values"][2].get<double>(), 8.0);
  // The text, whole or in pieces, is the same; it names the zero row.
  std::string pieces;
  InspectText(in, [&pieces](std::string_view s) { pieces += s; });
  EXPECT_EQ(pieces, InspectText(in));
  EXPECT_NE(pieces.find("all-zero rows: 1 (row 2); all-zero columns: 1 (column 1)"), std::string::npos) << pieces;
  EXPECT_NE(pieces.find("non-finite entries: 1 (NaN 1, +inf 0, -inf 0)"), std::string::npos) << pieces;
}

TEST(InspectApiTest, SliceAndPreviewChooseTheRowsShown) {
  InspectRequest r;
  r.path = HandTable();
  r.preview = 1;
  InspectResult in = InspectFile(r);
  EXPECT_EQ(in.shown_rows, (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1}, {4, 5}}));
  r.rows = "-2:";
  r.cols = "1:";
  in = InspectFile(r);
  EXPECT_TRUE(in.slice);
  EXPECT_EQ(in.shown_rows, (std::vector<std::pair<std::int64_t, std::int64_t>>{{3, 5}}));
  EXPECT_EQ(in.shown_cols, (std::pair<std::int64_t, std::int64_t>{1, 3}));
  const auto j = nlohmann::json::parse(InspectJson(in));
  EXPECT_EQ(j["slice"]["rows"][1]["values"], nlohmann::json::array({0.0, 8.0}));
  r.rows = "4:2";
  EXPECT_EQ(ErrorOf([&] { InspectFile(r); }), "--rows '4:2': selects nothing within 0:5 (the table has 5 rows)");
  r.rows.clear();
  r.group = "none";
  EXPECT_EQ(ErrorOf([&] { InspectFile(r); }), "--group: orders the columns of --plot; give --plot FILE");
}

TEST(InspectApiTest, IdentifiesTheBaseOfABareTable) {
  Table t = GenerateTable(Spec().Set("d_model", 32).Set("max_len", 64).Set("base", 500000.0));
  std::vector<float> v(64 * 32);
  t.tensor(0).ReadAll(v.data(), v.size() * sizeof(float));
  const std::string path = TempPath("bare.npy");
  Table bare = WrapTensors({TensorView{"pe", {64, 32}, DType::kFloat32, v.data()}});
  WriteTableFile(bare, path);
  InspectRequest r;
  r.path = path;
  const InspectResult in = InspectFile(r);
  ASSERT_TRUE(in.identification.has_value());
  EXPECT_TRUE(in.identification->matched) << in.identification->verdict;
  EXPECT_EQ(in.identification->kind, "sinusoid");
  EXPECT_EQ(nlohmann::json::parse(in.identification->json)["variant"]["base"].get<double>(), 500000.0);
  EXPECT_EQ(in.axes, "positions x channels, as identified");
  r.identify = InspectRequest::Identify::kNever;
  EXPECT_FALSE(InspectFile(r).identification.has_value());
}

TEST(InspectApiTest, AFileOfSeveralTensorsIsListedThenDetailed) {
  Table t = GenerateTable(Spec("rope").Set("head_dim", 8).Set("max_len", 16));
  const std::string path = TempPath("rope.safetensors");
  WriteTableFile(t, path);
  InspectRequest r;
  r.path = path;
  const InspectResult in = InspectFile(r);
  EXPECT_EQ(in.tensor_count, 3u);
  ASSERT_EQ(in.tensors.size(), 3u);
  EXPECT_EQ(in.tensors[0].name, "cos");
  EXPECT_EQ(in.tensors[0].axes, "positions x channels");
  EXPECT_EQ(in.tensors[0].kind, "rope cos");
  EXPECT_EQ(in.tensors[2].name, "inv_freq");
  EXPECT_EQ(in.tensors[2].axes, "frequencies x 1");
  EXPECT_EQ(in.tensors[2].rows, 4);
  ASSERT_EQ(in.details.size(), 3u);
  EXPECT_EQ(in.details[1].info.name, "sin");
  const auto j = nlohmann::json::parse(InspectJson(in));
  EXPECT_EQ(j["tensor_count"], 3);
  EXPECT_EQ(j["details"].size(), 3u);
  r.rows = "0:1";
  EXPECT_EQ(ErrorOf([&] { InspectFile(r); }).find("holds 3 tensors (cos, sin, inv_freq); --rows, --plot and --pair need one"),
            std::string("'" + path + "': ").size());
  r.rows.clear();
  r.tensor = "sin";
  EXPECT_EQ(InspectFile(r).info.name, "sin");
}

TEST(InspectApiTest, AxesAreNamedFromTheMetadata) {
  TensorInfo info;
  info.name = "bias";
  info.rows = 4;
  info.cols = 8;
  EXPECT_EQ(TensorAxes(info), "rows x columns");
  info.metadata = {{"scheme", MetaValue{std::string("alibi")}}, {"heads", MetaValue{std::int64_t{4}}}};
  EXPECT_EQ(TensorAxes(info), "heads x key positions");
  info.name = "slopes";
  EXPECT_EQ(TensorAxes(info), "heads x 1");
}

TEST(InspectApiTest, AnEmptyResultIsRefused) {
  EXPECT_EQ(ErrorOf([] { InspectText(InspectResult{}); }), "inspect result: holds no inspection (make one with InspectFile)");
}

}  // namespace
}  // namespace pe
