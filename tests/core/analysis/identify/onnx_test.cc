// The ONNX wire codec and the ONNX artifact on hand-encoded protobuf (the
// encoding written from protobuf.dev's "Encoding" page and onnx/onnx.proto's
// field numbers; models built with python3-onnx itself are in
// tests/clients/test_onnx.py).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/analysis/identify/onnx_cache_identify.h"
#include "core/base/error.h"
#include "core/models/artifact.h"
#include "core/formats/onnx.h"
#include "core/containers/onnx_wire.h"

namespace pe {
namespace {

// --- a minimal protobuf writer: varint, tag, length-delimited
std::string Varint(std::uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  s += static_cast<char>(v);
  return s;
}
std::string Tag(int field, int wt) { return Varint(static_cast<std::uint64_t>(field) << 3 | wt); }
std::string Len(int field, const std::string& payload) { return Tag(field, 2) + Varint(payload.size()) + payload; }
std::string VarField(int field, std::uint64_t v) { return Tag(field, 0) + Varint(v); }

std::string Tensor(const std::string& name, std::vector<std::int64_t> dims, int data_type, const std::string& raw) {
  std::string t;
  for (auto d : dims) t += VarField(1, static_cast<std::uint64_t>(d));
  t += VarField(2, data_type);
  t += Len(8, name);
  t += Len(9, raw);
  return t;
}
std::string Model(const std::string& graph) { return VarField(1, 8) + Len(7, graph); }

std::string Floats(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

std::string Scratch(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "pe_onnx_test_" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0700);
  const std::string sub = dir + "/" + name;
  ::mkdir(sub.c_str(), 0700);
  return sub;
}
void Write(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// An onnxruntime-genai cache [rows, dim/2], computed in double, rounded to float.
std::vector<float> OrtCos(int rows, int dim, double theta) {
  std::vector<float> v;
  for (int p = 0; p < rows; ++p)
    for (int i = 0; i < dim / 2; ++i) v.push_back(static_cast<float>(std::cos(p * std::pow(theta, -2.0 * i / dim))));
  return v;
}

TEST(OnnxWire, InitializerConstantAndSubgraph) {
  const std::string init = Tensor("cos_cache", {2, 3}, kOnnxFloat, Floats({1, 2, 3, 4, 5, 6}));
  // Constant node: output "k", attribute value (field 5 t) of an unnamed tensor.
  const std::string attr = Len(1, "value") + Len(5, Tensor("", {2}, kOnnxFloat, Floats({7, 8})));
  const std::string constant = Len(2, "k") + Len(4, "Constant") + Len(5, attr);
  const std::string sub = Len(5, Tensor("deep", {1}, kOnnxDouble, std::string(8, '\0')));
  const std::string if_node = Len(2, "o") + Len(3, "branch") + Len(4, "If") + Len(5, Len(1, "then_branch") + Len(6, sub));
  const std::string bytes = Model(Len(1, constant) + Len(1, if_node) + Len(5, init));
  const auto tensors = ParseOnnxModel(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size(), "'m'");
  ASSERT_EQ(tensors.size(), 3u);
  EXPECT_EQ(tensors[0].name, "k");
  EXPECT_EQ(tensors[0].origin, "Constant node");
  EXPECT_EQ(tensors[1].name, "deep");
  EXPECT_EQ(tensors[1].depth, 1);
  EXPECT_EQ(tensors[1].origin, "subgraph 'then_branch' of If 'branch' initializer");
  EXPECT_EQ(tensors[2].name, "cos_cache");
  EXPECT_EQ(tensors[2].dims, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(tensors[2].raw_size, 24u);
  EXPECT_EQ(std::memcmp(bytes.data() + tensors[2].raw_offset, Floats({1, 2, 3, 4, 5, 6}).data(), 24), 0);
}

TEST(OnnxWire, HostileInputIsAnInputError) {
  const std::vector<std::string> bad = {
      "",                                           // no graph
      std::string("\x3a\x05\x2a", 3),               // graph length past the end
      std::string("\x3a\x02\x2a\x7f", 4),           // initializer length past its graph
      std::string("\x3b", 1),                       // group wire type
      Model(Len(5, Tensor("x", {-2, 3}, 1, ""))),   // negative dim
      Model(Len(5, Tensor("x", {1LL << 31, 1LL << 31, 1LL << 31}, 1, ""))),  // product beyond 2^60
  };
  for (const auto& b : bad) {
    try {
      ParseOnnxModel(reinterpret_cast<const std::byte*>(b.data()), b.size(), "'m'");
      ADD_FAILURE() << "accepted " << b.size() << " bytes";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
    }
  }
  // Nesting: 17 If levels is one too deep, 16 is fine.
  auto nested = [](int levels) {
    std::string g = Len(5, Tensor("x", {1}, 1, Floats({1})));
    for (int k = 0; k < levels; ++k) g = Len(1, Len(4, "If") + Len(5, Len(1, "then_branch") + Len(6, g)));
    return Model(g);
  };
  const std::string ok = nested(16), deep = nested(17);
  EXPECT_EQ(ParseOnnxModel(reinterpret_cast<const std::byte*>(ok.data()), ok.size(), "'m'").size(), 1u);
  EXPECT_THROW(ParseOnnxModel(reinterpret_cast<const std::byte*>(deep.data()), deep.size(), "'m'"), Error);
}

TEST(OnnxWire, RopeNodesKeptWithDomainInputsAndAttributes) {
  // AttributeProto: 1 name, 2 f (fixed32), 3 i, 4 s, 20 type (FLOAT 1, INT 2, STRING 3).
  std::string f;
  const float two = 2.0f;
  f.assign(reinterpret_cast<const char*>(&two), 4);
  const std::string node = Len(1, "x") + Len(1, "pos") + Len(1, "cos_cache") + Len(1, "sin_cache") + Len(2, "y") +
                           Len(3, "rope0") + Len(4, "RotaryEmbedding") + Len(7, "com.microsoft") +
                           Len(5, Len(1, "interleaved") + VarField(3, 1) + VarField(20, 2)) +
                           Len(5, Len(1, "scale") + Tag(2, 5) + f + VarField(20, 1)) +
                           Len(5, Len(1, "mode") + Len(4, "neox") + VarField(20, 3));
  const std::string other = Len(1, "a") + Len(2, "b") + Len(4, "MatMul");  // not kept
  const std::string bytes = Model(Len(1, other) + Len(1, node));
  std::vector<OnnxNode> nodes;
  ParseOnnxModel(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size(), "'m'", &nodes);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].op_type, "RotaryEmbedding");
  EXPECT_EQ(nodes[0].domain, "com.microsoft");
  EXPECT_EQ(nodes[0].name, "rope0");
  EXPECT_EQ(nodes[0].inputs, (std::vector<std::string>{"x", "pos", "cos_cache", "sin_cache"}));
  ASSERT_EQ(nodes[0].attributes.size(), 3u);
  EXPECT_EQ(nodes[0].attributes[0].name, "interleaved");
  EXPECT_TRUE(nodes[0].attributes[0].has_i);
  EXPECT_EQ(nodes[0].attributes[0].i, 1);
  EXPECT_EQ(nodes[0].attributes[1].type, 1);
  EXPECT_EQ(nodes[0].attributes[1].f, 2.0);
  EXPECT_EQ(nodes[0].attributes[2].s, "neox");
  // A float attribute cut inside its 4 bytes, and a string claiming more than its attribute.
  const std::vector<std::string> bad = {
      Model(Len(1, Len(4, "RotaryEmbedding") + Len(5, Len(1, "scale") + Tag(2, 5) + std::string("\x01\x02", 2)))),
      Model(Len(1, Len(4, "GroupQueryAttention") + Len(5, Len(1, "s") + Tag(4, 2) + Varint(1ULL << 40)))),
  };
  for (const auto& b : bad) {
    std::vector<OnnxNode> n;
    EXPECT_THROW(ParseOnnxModel(reinterpret_cast<const std::byte*>(b.data()), b.size(), "'m'", &n), Error);
  }
}

TEST(OnnxArtifact, RolesPlanFromConfigBesideAndIdentifiedCache) {
  // The model's folder is the .onnx file's folder: a config.json beside it
  // gives the plan; the parent folder's is never read (below).
  const std::string dir = Scratch("community");
  ::mkdir((dir + "/onnx").c_str(), 0700);
  const int rows = 512, dim = 64;
  const std::string graph = Len(5, Tensor("cos_cache", {rows, dim / 2}, kOnnxFloat, Floats(OrtCos(rows, dim, 10000)))) +
                            Len(5, Tensor("model.embed_tokens.weight", {4, 4}, kOnnxFloat, Floats(std::vector<float>(16)))) +
                            Len(5, Tensor("rotary.inv_freq", {dim / 2}, kOnnxFloat, Floats(std::vector<float>(dim / 2, 1))));
  Write(dir + "/onnx/model.onnx", Model(graph));
  const std::string config = R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
            "num_attention_heads": 4, "rope_theta": 500000.0, "max_position_embeddings": 8192})";
  Write(dir + "/config.json", config);
  EXPECT_FALSE(ReadOnnxArtifact(dir + "/onnx/model.onnx").plan.has_value());  // ../config.json: not read
  Write(dir + "/onnx/config.json", config);
  ModelArtifact a = ReadOnnxArtifact(dir + "/onnx/model.onnx");
  IdentifyOnnxCaches(&a);
  EXPECT_EQ(a.kind, "onnx");
  ASSERT_EQ(a.tensors.size(), 2u);  // embed_tokens is not positional
  EXPECT_EQ(a.tensors[0].role, "cos_cache");
  EXPECT_EQ(a.tensors[0].info.rows, rows);
  EXPECT_EQ(a.tensors[0].info.cols, dim / 2);
  EXPECT_EQ(a.tensors[1].role, "inv_freq");
  ASSERT_TRUE(a.plan.has_value());
  ASSERT_EQ(a.plan->layers.size(), 2u);
  EXPECT_EQ(a.plan->groups.at(0).spec.base, 500000.0);
  // The cache's own theta (10000) comes from its values: the mismatch with
  // the config's 500000 is visible in the settings.
  bool theta = false, rdim = false;
  for (const auto& s : a.settings) {
    if (s.name == "rope_theta") theta = s.value == "10000";
    if (s.name == "rotary_dim") rdim = s.value == std::to_string(dim);
  }
  EXPECT_TRUE(theta && rdim);
  auto src = a.tensors[0].open();
  std::vector<float> row(dim / 2);
  src->ReadRows(rows - 1, 1, reinterpret_cast<std::byte*>(row.data()));
  const std::vector<float> all = OrtCos(rows, dim, 10000);
  EXPECT_EQ(row, std::vector<float>(all.end() - dim / 2, all.end()));
}

TEST(OnnxArtifact, NoConfigNoPlanAndANote) {
  const std::string dir = Scratch("bare");
  Write(dir + "/model.onnx", Model(Len(5, Tensor("wpe", {8, 4}, kOnnxFloat16, std::string(64, '\0')))));
  const ModelArtifact a = ReadOnnxArtifact(dir + "/model.onnx");
  EXPECT_FALSE(a.plan.has_value());
  ASSERT_EQ(a.tensors.size(), 1u);
  EXPECT_EQ(a.tensors[0].role, "position_embedding");
  EXPECT_EQ(a.tensors[0].info.dtype, DType::kFloat16);
  bool noted = false;
  for (const auto& n : a.notes) noted = noted || n.find("no config.json") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace pe
