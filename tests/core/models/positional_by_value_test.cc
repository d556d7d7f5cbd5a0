// PositionalRoleByValue against tables built by the peers' own float32
// recipes, transcribed: transformers' LlamaRotaryEmbedding (modeling_llama.py:
// inv_freq = 1 / base^(arange(0, d, 2) / d) in float32, freqs = pos * inv_freq
// in float32, emb = cat(freqs, freqs), cos/sin in float32, times
// attention_scaling), GPT-J's interleaved form (repeat_interleave), the
// onnxruntime cache [L, d/2]; and against tensors that are not positional
// (weights, a norm's ones, a learned table, the absolute sinusoid,
// increasing vectors).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/base/dtype.h"
#include "core/models/positional_by_value.h"
#include "core/base/table.h"

namespace pe {
namespace {

MemoryRowSource Source(std::int64_t rows, std::int64_t cols, const std::vector<double>& v, DType dtype,
                       std::vector<std::int64_t> shape = {}) {
  TableInfo info;
  info.rows = rows;
  info.cols = cols;
  info.dtype = dtype;
  info.shape = std::move(shape);
  std::vector<std::byte> bytes(v.size() * Traits(dtype).size);
  for (std::size_t i = 0; i < v.size(); ++i) StoreFromDouble(bytes.data(), dtype, i, v[i]);
  return MemoryRowSource(info, std::move(bytes));
}

enum class Layout { kHalf, kInterleaved, kCache };

// transformers' float32 recipe; `sine` picks sin, `scale` the attention factor.
std::vector<double> Rope(std::int64_t rows, std::int64_t d, float base, Layout layout, bool sine, float scale = 1,
                         float linear = 1) {
  std::vector<float> inv(d / 2);
  for (std::int64_t i = 0; i < d / 2; ++i)
    inv[i] = 1.0f / std::pow(base, static_cast<float>(2 * i) / static_cast<float>(d)) / linear;
  const std::int64_t w = layout == Layout::kCache ? d / 2 : d;
  std::vector<double> out;
  for (std::int64_t p = 0; p < rows; ++p)
    for (std::int64_t j = 0; j < w; ++j) {
      const std::int64_t k = layout == Layout::kHalf ? j % (d / 2) : layout == Layout::kInterleaved ? j / 2 : j;
      const float angle = static_cast<float>(p) * inv[k];
      out.push_back((sine ? std::sin(angle) : std::cos(angle)) * scale);
    }
  return out;
}

std::string RoleOf(const std::vector<double>& v, std::int64_t rows, std::int64_t cols, DType dtype = DType::kFloat32,
                   std::vector<std::int64_t> shape = {}) {
  MemoryRowSource src = Source(rows, cols, v, dtype, std::move(shape));
  return PositionalRoleByValue(src);
}

TEST(PositionalByValue, FindsTransformersCosAndSinInEveryLayout) {
  for (Layout layout : {Layout::kHalf, Layout::kInterleaved, Layout::kCache}) {
    const std::int64_t w = layout == Layout::kCache ? 64 : 128;
    // the dynamo export's folded constant: [1, 1, 64, 128]
    EXPECT_EQ(RoleOf(Rope(64, 128, 500000, layout, false), 64, w, DType::kFloat32, {1, 1, 64, w}), "cos_cache");
    EXPECT_EQ(RoleOf(Rope(64, 128, 500000, layout, true), 64, w, DType::kFloat32, {1, 1, 64, w}), "sin_cache");
    EXPECT_EQ(RoleOf(Rope(16, 64, 10000, layout, false), 16, w / 2), "cos_cache");
  }
}

TEST(PositionalByValue, FindsScaledAndLowPrecisionTables) {
  // YaRN's attention factor 0.1 ln(8) + 1 multiplies both; linear scaling 8
  const float yarn = 0.1f * std::log(8.0f) + 1.0f;
  EXPECT_EQ(RoleOf(Rope(32, 128, 1e6, Layout::kHalf, false, yarn), 32, 128), "cos_cache");
  EXPECT_EQ(RoleOf(Rope(32, 128, 1e6, Layout::kHalf, true, yarn), 32, 128), "sin_cache");
  EXPECT_EQ(RoleOf(Rope(32, 128, 1e4, Layout::kHalf, false, 1, 8), 32, 128), "cos_cache");
  for (DType d : {DType::kBFloat16, DType::kFloat16, DType::kFloat64}) {
    EXPECT_EQ(RoleOf(Rope(8, 128, 500000, Layout::kHalf, false), 8, 128, d), "cos_cache") << Traits(d).name;
    EXPECT_EQ(RoleOf(Rope(8, 128, 500000, Layout::kHalf, true), 8, 128, d), "sin_cache") << Traits(d).name;
  }
}

TEST(PositionalByValue, FindsInvFreq) {
  std::vector<double> inv;
  for (int i = 0; i < 64; ++i) inv.push_back(1.0f / std::pow(500000.0f, static_cast<float>(2 * i) / 128.0f));
  EXPECT_EQ(RoleOf(inv, 64, 1, DType::kFloat32, {64}), "inv_freq");
  std::vector<double> rising(inv.rbegin(), inv.rend());
  EXPECT_EQ(RoleOf(rising, 64, 1, DType::kFloat32, {64}), "");
  std::vector<double> big = inv;
  big[0] = 2;  // the first frequency of RoPE is 1 (or less, scaled)
  EXPECT_EQ(RoleOf(big, 64, 1, DType::kFloat32, {64}), "");
}

TEST(PositionalByValue, RefusesTensorsThatAreNotPositional) {
  std::mt19937 gen(7);
  std::normal_distribution<double> normal(0, 0.02);
  std::vector<double> weights(64 * 128);
  for (double& x : weights) x = normal(gen);
  EXPECT_EQ(RoleOf(weights, 64, 128), "");                       // a weight matrix / learned table
  EXPECT_EQ(RoleOf(std::vector<double>(8 * 128, 1.0), 8, 128), "");  // stacked norm weights of ones
  EXPECT_EQ(RoleOf(std::vector<double>(8 * 128, 0.0), 8, 128), "");  // zeros
  // The absolute sinusoid (Vaswani, interleaved sin/cos): row 0 is 0, 1, 0, 1, ...
  std::vector<double> sinusoid;
  for (int p = 0; p < 16; ++p)
    for (int j = 0; j < 128; ++j) {
      const double f = std::pow(10000.0, -2.0 * (j / 2) / 128);
      sinusoid.push_back(j % 2 ? std::cos(p * f) : std::sin(p * f));
    }
  EXPECT_EQ(RoleOf(sinusoid, 16, 128), "");
  // A cos table whose row 2 is not the double angle of row 1 (rows shuffled).
  std::vector<double> cos = Rope(8, 128, 10000, Layout::kHalf, false);
  std::swap_ranges(cos.begin() + 128, cos.begin() + 256, cos.begin() + 3 * 128);
  EXPECT_EQ(RoleOf(cos, 8, 128), "");
}

TEST(PositionalByValue, ShapesNeverOpened) {
  TableInfo wide;
  wide.rows = 4096;
  wide.cols = 4096;
  EXPECT_FALSE(PlausiblePositionalShape(wide));  // a weight matrix: too wide
  TableInfo batched;
  batched.rows = 8 * 64;
  batched.cols = 128;
  batched.shape = {8, 64, 128};
  EXPECT_FALSE(PlausiblePositionalShape(batched));  // leading dims other than 1
  TableInfo odd;
  odd.rows = 64;
  odd.cols = 127;
  EXPECT_FALSE(PlausiblePositionalShape(odd));
}

}  // namespace
}  // namespace pe
