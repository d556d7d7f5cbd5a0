// The zip readers: the restricted unpickler on pickles assembled
// by hand from CPython's Lib/pickletools.py opcode table, tensor roles by
// name, and the .npz / torch artifacts on the fuzz seeds (written by numpy
// and torch.save: tests/fuzz/make_zip_seeds.py).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/models/artifact.h"
#include "core/containers/restricted_unpickler.h"
#include "core/models/tensor_role.h"

namespace pe {
namespace {

using namespace std::string_literals;

std::string Seed(const std::string& rel) {
  return std::string(PE_SOURCE_DIR) + "/tests/fuzz/seeds/" + rel;
}

std::string U32(std::uint32_t v) {
  std::string s(4, '\0');
  for (int k = 0; k < 4; ++k) s[k] = static_cast<char>((v >> (8 * k)) & 0xff);
  return s;
}
std::string Str(const std::string& s) { return "X" + U32(static_cast<std::uint32_t>(s.size())) + s; }

// _rebuild_tensor_v2(persistent storage `key` of `n` floats, offset, (rows, cols), (cols, 1), False, OrderedDict())
std::string Tensor2d(const std::string& key, int rows, int cols, int offset) {
  std::string p = "ctorch._utils\n_rebuild_tensor_v2\n(";
  p += "(" + Str("storage") + "ctorch\nFloatStorage\n" + Str(key) + Str("cpu") + "J" + U32(rows * cols + offset) + "tQ";
  p += "J" + U32(offset);
  p += "J" + U32(rows) + "J" + U32(cols) + "\x86";
  p += "J" + U32(cols) + "K\x01\x86";
  p += "\x89" "ccollections\nOrderedDict\n)R";
  p += "tR";
  return p;
}

TEST(RestrictedUnpickler, RebuildsTensorsWithDottedPaths) {
  // {"model": {"layers": [{"inv": T0}, {"inv": T1}]}} with memo use
  std::string p = "\x80\x02}q\x00"s + Str("model") + "}q\x01" + Str("layers") + "](}" + Str("inv") +
                  Tensor2d("0", 4, 2, 0) + "s}" + Str("inv") + Tensor2d("1", 3, 5, 7) + "se" + "s" + "s.";
  const auto t = UnpickleTensors(p, "'x.pt'");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].path, "model.layers.0.inv");
  EXPECT_EQ(t[1].path, "model.layers.1.inv");
  EXPECT_EQ(t[1].storage_key, "1");
  EXPECT_EQ(t[1].storage_type, "FloatStorage");
  EXPECT_EQ(t[1].offset, 7);
  EXPECT_EQ(t[1].size, (std::vector<std::int64_t>{3, 5}));
  EXPECT_EQ(t[1].stride, (std::vector<std::int64_t>{5, 1}));
}

std::string ErrorOf(const std::string& pickle) {
  try {
    UnpickleTensors(pickle, "'x.pt'");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RestrictedUnpickler, RefusesGlobalsOutsideTheAllowList) {
  EXPECT_EQ(ErrorOf("\x80\x02" "cos\nsystem\n" + Str("touch x") + "\x85R."),
            "'x.pt': refuses to load global os.system (only tensor and container types are allowed)");
  EXPECT_NE(ErrorOf("\x80\x04" + Str("builtins") + Str("eval") + "\x93.").find("global builtins.eval"),
            std::string::npos);
  // Refused when read, before any REDUCE.
  EXPECT_NE(ErrorOf("\x80\x02" "ctorch\nload\n.").find("global torch.load"), std::string::npos);
}

TEST(RestrictedUnpickler, Bounds) {
  EXPECT_NE(ErrorOf("\x80\x02h\x03.").find("memo index 3 is out of range"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string("\x80\x02") + std::string(5000, ']') + std::string(4999, 'a') + ".")
                .find("nested deeper"),
            std::string::npos);
  EXPECT_NE(ErrorOf("\x80\x02" + std::string(20000, '(') + ".").find("MARKs"), std::string::npos);
  EXPECT_NE(ErrorOf("\x80\x02X\xff\xff\x00\x00" "ab."s).find("truncated"), std::string::npos);
  EXPECT_NE(ErrorOf("\x80\x06.").find("protocol 6"), std::string::npos);
  EXPECT_NE(ErrorOf("\x80\x02S'x'\n.").find("opcode 0x53"), std::string::npos);  // text STRING
  EXPECT_NE(ErrorOf("\x80\x02}}.").find("STOP with a malformed stack"), std::string::npos);
}

TEST(TensorRole, RealModelNames) {
  EXPECT_EQ(RoleFromTensorName("model.layers.0.self_attn.rotary_emb.inv_freq"), "inv_freq");
  EXPECT_EQ(RoleFromTensorName("gpt_neox.layers.0.attention.rotary_emb.cos_cached"), "cos_cache");
  EXPECT_EQ(RoleFromTensorName("sin_cached"), "sin_cache");
  EXPECT_EQ(RoleFromTensorName("cos_cache_global"), "cos_cache");
  EXPECT_EQ(RoleFromTensorName("cos"), "cos_cache");
  EXPECT_EQ(RoleFromTensorName("rope_freqs.weight"), "rope_freqs");
  EXPECT_EQ(RoleFromTensorName("model.decoder.embed_positions.weight"), "position_embedding");
  EXPECT_EQ(RoleFromTensorName("bert.embeddings.position_embeddings.weight"), "position_embedding");
  EXPECT_EQ(RoleFromTensorName("transformer.wpe.weight"), "position_embedding");
  EXPECT_EQ(RoleFromTensorName("text_model.positional_embedding"), "position_embedding");
  EXPECT_EQ(RoleFromTensorName("model.layers.0.self_attn.q_proj.weight"), "");
  EXPECT_EQ(RoleFromTensorName("acos"), "");
  EXPECT_EQ(RoleFromTensorName("position_ids"), "");
}

TEST(NpzArtifact, SeedHasRopeTensorsWithRoles) {
  ModelArtifact a = ReadNpzArtifact(Seed("npz/rope_stored.npz"));
  EXPECT_EQ(a.kind, "npz");
  EXPECT_FALSE(a.plan.has_value());
  ASSERT_EQ(a.tensors.size(), 3u);
  EXPECT_EQ(a.tensors[0].name, "cos");
  EXPECT_EQ(a.tensors[0].role, "cos_cache");
  EXPECT_EQ(a.tensors[1].role, "sin_cache");
  EXPECT_EQ(a.tensors[2].role, "inv_freq");
  auto src = a.tensors[0].open();
  DenseTable t = ReadAll(*src);
  ASSERT_EQ(t.info.rows, 8);
  ASSERT_EQ(t.info.cols, 4);
  // cos(pos * 10000^(-k/4)), k = 0, 2, half layout; float32 (make_zip_seeds.py)
  for (int p = 0; p < 8; ++p)
    for (int c = 0; c < 4; ++c)
      EXPECT_NEAR(t.at(p, c), std::cos(p * std::pow(10000.0, -(c % 2) * 2 / 4.0)), 1e-7) << p << "," << c;
  ModelArtifact d = ReadNpzArtifact(Seed("npz/rope_deflated.npz"));
  ASSERT_EQ(d.tensors.size(), 2u);  // cos (float16) and fortran; ints in the notes
  EXPECT_EQ(d.tensors[1].name, "fortran");
  // make_zip_seeds.py stores np.sin(emb) as 'fortran': a sin table found by its values
  EXPECT_EQ(d.tensors[1].role, "sin_cache");
  ASSERT_EQ(d.notes.size(), 2u);
  EXPECT_NE(d.notes[0].find("'ints'"), std::string::npos);
  EXPECT_NE(d.notes[1].find("fortran (sin_cache)"), std::string::npos);
}

TEST(TorchArtifact, SeedHasPositionalTensorsOnly) {
  ModelArtifact a = ReadTorchArtifact(Seed("torch/state_dict.pt"));
  EXPECT_EQ(a.kind, "torch");
  EXPECT_FALSE(a.plan.has_value());
  ASSERT_EQ(a.tensors.size(), 2u);
  EXPECT_EQ(a.tensors[0].name, "model.layers.0.self_attn.rotary_emb.inv_freq");
  EXPECT_EQ(a.tensors[0].role, "inv_freq");
  EXPECT_EQ(a.tensors[1].name, "model.embed_positions.weight");
  EXPECT_EQ(a.tensors[1].role, "position_embedding");
  auto src = a.tensors[0].open();
  DenseTable t = ReadAll(*src);
  ASSERT_EQ(t.info.rows, 2);
  EXPECT_EQ(t.at(0, 0), 1.0);
  EXPECT_EQ(t.at(1, 0), static_cast<double>(static_cast<float>(0.01)));
  bool other = false;
  for (const auto& n : a.notes) other |= n.find("1 other tensor") != std::string::npos;
  EXPECT_TRUE(other);
}

}  // namespace
}  // namespace pe
