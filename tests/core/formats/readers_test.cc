// Text readers: Metadata costs, Python's number grammar, the two
// ways JSON numbers are stored, CSV rows read out of order.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/formats/format.h"
#include "core/numerics/text_numbers.h"
#include "core/base/table.h"

namespace pe {
namespace {

std::string TempFile(const std::string& suffix, const std::string& text) {
  char tmpl[] = "/tmp/pe_readers_XXXXXX";
  const int fd = ::mkstemp(tmpl);
  ::close(fd);
  std::remove(tmpl);
  const std::string path = std::string(tmpl) + suffix;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return path;
}

std::vector<std::byte> AllRows(RowSource& src) {
  const TableInfo& info = src.info();
  std::vector<std::byte> out(static_cast<std::size_t>(info.rows) * info.row_bytes());
  src.ReadRows(0, info.rows, out.data());
  return out;
}

TEST(Metadata, SetReplacesInPlaceAndKeepsOrder) {
  Metadata m;
  m.Set("b", std::int64_t{1});
  m.Set("a", std::string("x"));
  m.Set("b", 2.5);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m.entries()[0].first, "b");
  EXPECT_EQ(std::get<double>(m.entries()[0].second), 2.5);
  EXPECT_EQ(m.entries()[1].first, "a");
  ASSERT_NE(m.Find("a"), nullptr);
  EXPECT_EQ(m.Find("c"), nullptr);
  Metadata copy = m;  // the index travels with the entries
  copy.Set("a", std::int64_t{7});
  EXPECT_EQ(std::get<std::int64_t>(*copy.Find("a")), 7);
  EXPECT_EQ(std::get<std::string>(*m.Find("a")), "x");
}

// CPU seconds of this thread (not wall time: a busy machine stretches that).
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The CPU time of 100,000 Finds and in-place Sets of keys a Metadata of n
// keys holds, the best of 3 runs (nothing is allocated while timed).
double LookupCost(int n) {
  Metadata m;
  for (int i = 0; i < n; ++i) m.Set("key" + std::to_string(i), std::int64_t{i});
  EXPECT_EQ(m.size(), static_cast<std::size_t>(n));
  std::vector<std::string> keys;
  for (int j = 0; j < 100000; ++j) keys.push_back("key" + std::to_string((j * 7919LL) % n));
  double best = 1e300;
  for (int run = 0; run < 3; ++run) {
    const double t0 = ThreadCpuSeconds();
    std::int64_t found = 0;
    for (const std::string& k : keys) {
      found += m.Find(k) != nullptr;
      m.Set(k, found);
    }
    best = std::min(best, ThreadCpuSeconds() - t0);
    EXPECT_EQ(found, 100000);
  }
  EXPECT_EQ(m.size(), static_cast<std::size_t>(n));
  return best;
}

TEST(Metadata, ManyKeysAreLinear) {
  // A lookup in 200 times the keys: about the same cost with an index (a few
  // times more as it outgrows the caches), 200 times more if each Find or
  // Set scans the keys (a linear scan per Set took minutes for 200,000).
  const double small = LookupCost(1000);
  const double large = LookupCost(200000);
  std::printf("lookups: CPU %.4f s in 200000 keys, %.4f s in 1000 (ratio %.2f, limit 40)\n", large, small,
              large / std::max(small, 1e-4));
  EXPECT_LT(large, 40 * std::max(small, 1e-4)) << "CPU " << large << " s in 200000 keys, " << small << " s in 1000";
}

TEST(ParseNumber, PythonFloatGrammar) {
  double v = 1;
  EXPECT_TRUE(ParseNumber("1e-400", &v));
  EXPECT_EQ(v, 0.0);
  EXPECT_TRUE(ParseNumber("-1e-400", &v));
  EXPECT_TRUE(v == 0.0 && std::signbit(v));
  EXPECT_TRUE(ParseNumber("2.4703282292062328e-324", &v));  // just above half the least subnormal
  EXPECT_EQ(v, 4.9406564584124654e-324);
  EXPECT_TRUE(ParseNumber("1_000.000_1", &v));
  EXPECT_EQ(v, 1000.0001);
  EXPECT_TRUE(ParseNumber(" \t.5\f ", &v));
  EXPECT_EQ(v, 0.5);
  EXPECT_TRUE(ParseNumber("5.", &v));
  EXPECT_EQ(v, 5.0);
  EXPECT_TRUE(ParseNumber("-InFiNiTy", &v));
  EXPECT_TRUE(std::isinf(v) && v < 0);
  for (const char* bad : {"+-1", "-+1", "0x1p3", "1__0", "_1", "1_", "1e", ".", "", " ", "nan(1)", "1,5", "1e5e5"})
    EXPECT_FALSE(ParseNumber(bad, &v)) << bad;
  EXPECT_EQ(NumberProblem("1e999"), "is out of the range of a double");
  EXPECT_EQ(NumberProblem("+-1"), "is not a number");
  EXPECT_EQ(NumberProblem("1e-999"), "");
}

// The same numbers with "dtype" before "data" (stored in the dtype as read)
// and after it (stored as doubles, rounded when rows are read) give the same
// bytes, for every dtype.
TEST(JsonReader, DtypeBeforeAndAfterDataAgree) {
  const std::string rows = "[[0.1, -2.5e-8, 65519.9], [3.4028235e38, 1e-40, -0]]";
  for (const char* dtype : {"float16", "bfloat16", "float32", "float64"}) {
    const std::string meta = std::string("{\"dtype\": \"") + dtype + "\"}";
    const std::string first = TempFile(".json", "{\"meta\": " + meta + ", \"data\": " + rows + "}");
    const std::string last = TempFile(".json", "{\"data\": " + rows + ", \"meta\": " + meta + "}");
    auto a = OpenTable(first);
    auto b = OpenTable(last);
    EXPECT_EQ(Traits(a->info().dtype).name, std::string(dtype));
    EXPECT_EQ(a->info().dtype, b->info().dtype);
    EXPECT_EQ(AllRows(*a), AllRows(*b)) << dtype;
    std::remove(first.c_str());
    std::remove(last.c_str());
  }
}

TEST(JsonReader, DuplicateKeysAreRefused) {
  for (const char* doc : {R"({"data": [[1]], "meta": {"a": 1, "a": 1}})", R"({"x": {"y": 1, "y": 1}, "data": [[1]]})",
                          R"({"tensors": {"a": {"shape": [1], "data": [1], "data": [1]}}})"}) {
    const std::string path = TempFile(".json", doc);
    EXPECT_THROW(OpenTable(path), Error) << doc;
    std::remove(path.c_str());
  }
}

// The streamed JSON readers (formats/json.h): rows read in any order, from
// checkpoints many blocks apart, hold the closed-form values written; a file
// rewritten between the passes gives an error, not wrong numbers.
TEST(JsonReader, RowsInAnyOrderFromCheckpoints) {
  constexpr int kRows = 300, kCols = 257;  // 77,100 numbers: four checkpoints
  auto value = [](int r, int c) { return (r * kCols + c) * 0.25 - 5000.0; };
  std::string one = "{\"data\": [", nested = "{\"tensors\": {\"x\": {\"shape\": [3, 100, 257], \"data\": [[";
  for (int r = 0; r < kRows; ++r) {
    std::string row = "[";
    for (int c = 0; c < kCols; ++c) row += (c ? (c % 7 ? "," : " ,\n\t") : "") + fmt::format("{}", value(r, c));
    row += "]";
    one += (r ? ",\n" : "") + row;
    nested += (r ? (r % 100 ? ",\n" : "],\n[") : "") + row;
  }
  one += "]}";
  nested += "]]}}}";
  for (const std::string& doc : {one, nested}) {
    const std::string path = TempFile(".json", doc);
    auto src = OpenTable(path);
    ASSERT_EQ(src->info().rows, kRows);
    ASSERT_EQ(src->info().cols, kCols);
    ASSERT_EQ(src->info().dtype, DType::kFloat32);  // quarters are float32
    for (int first : {250, 0, 299, 64, 63, 65, 128, 1, 200, 190, 299}) {
      const int n = std::min(9, kRows - first);
      std::vector<float> part(static_cast<std::size_t>(n) * kCols);
      src->ReadRows(first, n, reinterpret_cast<std::byte*>(part.data()));
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < kCols; ++c)
          ASSERT_EQ(part[static_cast<std::size_t>(r) * kCols + c], static_cast<float>(value(first + r, c)))
              << first + r << "," << c;
    }
    // Rewritten with other text: reading again must refuse.
    std::string changed = doc;
    for (char& ch : changed)
      if (ch == ',') ch = '}';
    std::FILE* f = std::fopen(path.c_str(), "r+b");
    std::fwrite(changed.data(), 1, changed.size(), f);
    std::fclose(f);
    std::vector<float> row(kCols);
    EXPECT_THROW(src->ReadRows(0, 1, reinterpret_cast<std::byte*>(row.data())), Error);
    std::remove(path.c_str());
  }
}

// Rows read in any order, from many blocks apart, equal the rows read in one go.
TEST(CsvReader, RowsInAnyOrder) {
  std::string text = "position,a,b\n";
  for (int p = 0; p < 40000; ++p) {
    text += std::to_string(p) + "," + std::to_string(p * 0.25) + "," + std::to_string(-p) + "\r\n";
    if (p % 1000 == 999) text += "\n";
  }
  const std::string path = TempFile(".csv", text);
  auto src = OpenTable(path);
  ASSERT_EQ(src->info().rows, 40000);
  const std::vector<std::byte> all = AllRows(*src);
  const std::size_t rb = src->info().row_bytes();
  for (std::int64_t first : {39990, 0, 20000, 20005, 123, 39999, 5}) {
    const std::int64_t n = std::min<std::int64_t>(7, 40000 - first);
    std::vector<std::byte> part(static_cast<std::size_t>(n) * rb);
    src->ReadRows(first, n, part.data());
    EXPECT_EQ(0, std::memcmp(part.data(), all.data() + first * rb, part.size())) << first;
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace pe
