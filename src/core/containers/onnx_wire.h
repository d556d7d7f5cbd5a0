// ONNX tensors from the bytes of a ModelProto (a codec: bytes in, tensor
// descriptions out; no files, no threads). core/formats/onnx.h does the file
// handling (mapping, external data) on top of it.
//
// Why a wire-format reader and not Debian's libonnx-dev + libprotobuf-dev:
// protobuf's generated ModelProto parses the whole message into memory,
// copying every initializer's raw_data (a 1.9 GiB model costs 1.9 GiB more
// before the first check), while pe needs a few small tensors of a graph
// whose weights it never reads. The wire format is small and fully
// specified (protobuf.dev/programming-guides/encoding: varints, tags
// field<<3|wire type, types 0 varint, 1 fixed64, 2 length-delimited,
// 5 fixed32; groups 3/4 are refused), so this file reads exactly the fields
// it needs, records where raw_data sits in the caller's buffer (no copy:
// rows are read straight from the mapped file), skips everything else, and
// checks every length against the bytes present. (libonnx-dev 1.12 ships
// only onnx-ml.pb.h, generated for ONNX_ML with the namespace onnx, and
// would add libprotobuf to every consumer of libpe.)
//
// Fields read (onnx/onnx.proto, onnx/onnx commit
// 64209faab4da3d679f2d46c7f725f6f2b779279b; unchanged since IR version 4):
//   ModelProto      7 graph (GraphProto)
//   GraphProto      1 node (NodeProto), 2 name, 5 initializer (TensorProto)
//   NodeProto       2 output, 3 name, 4 op_type, 5 attribute (AttributeProto);
//                   for RoPE ops (IsOnnxRopeOp) also 1 input, 7 domain
//   AttributeProto  1 name, 5 t (TensorProto), 6 g (GraphProto),
//                   10 tensors, 11 graphs; for RoPE ops also 2 f (float),
//                   3 i (int), 4 s (string), 20 type
//   TensorProto     1 dims (int64, packed or not), 2 data_type, 8 name,
//                   9 raw_data, 4 float_data (float), 10 double_data
//                   (double), 5 int32_data (FLOAT16/BFLOAT16 bit patterns,
//                   one per int32, as onnx.helper.make_tensor stores them),
//                   13 external_data (StringStringEntryProto 1 key, 2 value),
//                   14 data_location (0 DEFAULT, 1 EXTERNAL)
//
// Tensors found: the graph's initializers, the tensor of every Constant
// node (attribute "value", named by the node's output), and both of those in
// subgraphs (If/Loop/Scan bodies: attributes g and graphs) down to
// kMaxOnnxGraphDepth; a deeper graph is an error, not skipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/dtype.h"

namespace pe {

/// Subgraph nesting pe follows (the main graph is depth 0). Deeper: error.
inline constexpr int kMaxOnnxGraphDepth = 16;
/// Tensors pe describes from one model (real LLM graphs hold a few
/// thousand initializers and Constants); more is refused.
inline constexpr std::size_t kMaxOnnxTensors = std::size_t{1} << 20;
/// Dimensions of one tensor (ONNX tensors have a handful).
inline constexpr std::size_t kMaxOnnxRank = 32;
/// What the parse holds beyond the file: tensor records, names, labels,
/// typed-field entries, all together (a crafted file of millions of tiny
/// constants or long labels is refused once it passes this).
inline constexpr std::uint64_t kMaxOnnxMetadataBytes = std::uint64_t{256} << 20;
/// One tensor name or external location.
inline constexpr std::size_t kMaxOnnxNameBytes = std::size_t{64} << 10;

/// TensorProto.DataType values (onnx.proto).
enum OnnxDataType : std::int32_t {
  kOnnxFloat = 1,
  kOnnxFloat16 = 10,
  kOnnxDouble = 11,
  kOnnxBFloat16 = 16,
};

/// "FLOAT", "INT64", "FLOAT8E4M3FN", ... (the enum's name; "type 99" when unknown).
std::string OnnxDataTypeName(std::int32_t data_type);

/// pe's dtype for a readable ONNX data type (FLOAT, FLOAT16, BFLOAT16,
/// DOUBLE); false for the others.
bool OnnxDTypeOf(std::int32_t data_type, DType* out);

/// The typed field that holds elements of `dtype` (float_data 4 for
/// float32, double_data 10 for float64, int32_data 5 for float16/bfloat16).
int OnnxTypedField(DType dtype);

/// Where one occurrence of a repeated numeric field sits in the buffer.
struct OnnxField {
  int field = 0;             ///< 4 float_data, 5 int32_data, 10 double_data
  std::uint64_t offset = 0;  ///< of the payload (after tag and length)
  std::uint64_t size = 0;    ///< payload bytes
  int wire_type = 0;         ///< 2 packed, 5 one float, 1 one double, 0 one varint
};

/// One tensor of the model, as described (nothing decoded yet).
struct OnnxTensor {
  std::string name;
  std::vector<std::int64_t> dims;  ///< validated: each >= 0, product fits
  std::int64_t elements = 1;       ///< product of dims
  std::int32_t data_type = 0;
  std::string origin;              ///< "initializer", "Constant node", "subgraph 'then' initializer", ...
  int depth = 0;                   ///< graph nesting where it was found
  bool has_raw = false;
  std::uint64_t raw_offset = 0, raw_size = 0;  ///< raw_data in the buffer
  std::vector<OnnxField> typed;                ///< float_data/int32_data/double_data occurrences, in order
  bool external = false;                       ///< data_location EXTERNAL
  std::string location;                        ///< external_data "location"
  bool has_offset = false, has_length = false;
  std::uint64_t ext_offset = 0, ext_length = 0;
};

/// An INT, FLOAT or STRING attribute of a RoPE op's node.
struct OnnxAttribute {
  std::string name;
  int type = 0;          ///< AttributeProto.type: 1 FLOAT, 2 INT, 3 STRING (0: unstated; the field present says)
  bool has_f = false, has_i = false, has_s = false;
  double f = 0;
  std::int64_t i = 0;
  std::string s;         ///< at most kMaxOnnxNameBytes
};

/// A node of a RoPE op (IsOnnxRopeOp), as stored.
struct OnnxNode {
  std::string op_type, domain, name;
  std::vector<std::string> inputs;  ///< in order; "" for an omitted optional input
  std::vector<OnnxAttribute> attributes;
  int depth = 0;                    ///< graph nesting where it was found
};

/// RoPE nodes pe keeps from one model (each charged to the metadata
/// budget too); more is refused.
inline constexpr std::size_t kMaxOnnxRopeNodes = std::size_t{1} << 16;

/// The op types whose nodes ParseOnnxModel keeps: RotaryEmbedding (ONNX
/// opset 23 and com.microsoft) and GroupQueryAttention (com.microsoft).
bool IsOnnxRopeOp(std::string_view op_type);

/// Parses the ModelProto in `data` (`size` bytes). `what` names the file
/// in errors. Throws pe::Error (input) for malformed protobuf (a varint
/// past the end, a length past its message, an unknown wire type), negative
/// or overflowing dims, a too-deep graph, too many tensors, and a tensor
/// whose storage cannot hold its elements. Data types are not checked here
/// (listing shows every tensor); opening one is.
/// `rope_nodes`, when given, receives the nodes of IsOnnxRopeOp in file order.
std::vector<OnnxTensor> ParseOnnxModel(const std::byte* data, std::size_t size, const std::string& what,
                                       std::vector<OnnxNode>* rope_nodes = nullptr);

/// Decodes a tensor's typed field (float_data, double_data or int32_data)
/// into `out` as little-endian elements of `dtype` (the tensor's own).
/// Reads the occurrences of OnnxTypedField(dtype). Throws pe::Error (input) when the
/// element count differs from the dims or an int32_data value is not a
/// 16-bit pattern.
void DecodeOnnxTypedData(const std::byte* data, std::size_t size, const OnnxTensor& tensor, DType dtype,
                         std::vector<std::byte>* out, const std::string& what);

}  // namespace pe
