// ONNX model files (.onnx) as tensor containers: the file handling over the
// wire codec (core/containers/onnx_wire.h): the file is mapped read-only, its
// ModelProto parsed in place, and a tensor's rows read straight from the
// mapping (raw_data), decoded from its typed field (float_data,
// double_data, int32_data), or read from its external data file.
//
// Readable: FLOAT, FLOAT16, BFLOAT16, DOUBLE. Other data types are listed by
// DescribeOnnx but refused by OpenOnnx with the type's name.
//
// External data (data_location EXTERNAL; external_data "location",
// "offset", "length", as onnx/external_data_helper.py writes them) is read
// only from a file inside the model's folder: the location must be a
// relative path without "..", and its realpath must lie under the realpath
// of the folder that holds the .onnx file (a symlink that leaves the folder
// is refused); offset + length must lie inside that file and length must be
// the tensor's size. Anything else is an input error naming the reason.
// docs/formats.md, "ONNX".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/base/table.h"
#include "core/containers/onnx_wire.h"

namespace pe {

/// The largest .onnx file pe maps: protobuf messages are limited to 2 GiB
/// (larger models keep their weights in external data).
inline constexpr std::uint64_t kMaxOnnxFileBytes = std::uint64_t{1} << 31;

/// One tensor of an ONNX model, for listing (no data read).
struct OnnxTensorInfo {
  TableInfo info;         ///< name, shape, rows/cols as OpenOnnx gives them (dtype float32 when unreadable)
  std::string data_type;  ///< "FLOAT", "INT64", ...
  bool readable = false;  ///< FLOAT, FLOAT16, BFLOAT16 or DOUBLE
  bool external = false;  ///< data in an external file
  std::string origin;     ///< "initializer", "Constant node", "subgraph 'then_branch' of If 'x' initializer"
};

/// Every named tensor of the model at `path` (initializers, Constant nodes,
/// subgraphs'), each name once (the shallowest, then the first), in file
/// order. Throws pe::Error (input) for an unreadable or malformed file.
std::vector<OnnxTensorInfo> DescribeOnnx(const std::string& path);

/// The RotaryEmbedding and GroupQueryAttention nodes of the model at
/// `path` (core/containers/onnx_wire.h, OnnxNode), in file order, subgraphs'
/// included. Throws as DescribeOnnx.
std::vector<OnnxNode> OnnxRopeNodes(const std::string& path);

/// The names of the readable tensors (for ListTensorNames).
std::vector<std::string> ListOnnxTensors(const std::string& path);

/// Opens tensor `name` (empty: "pe" or the only readable tensor). Rank 0-1
/// is one column, rank >= 2 is [prod(leading dims), last dim]; info.shape
/// keeps the dims; metadata "onnx_data_type" and "onnx_origin". Throws
/// pe::Error (input) for a missing name (listing the tensors), an
/// unreadable data type (naming it), data shorter or longer than the dims
/// say, and external data that is refused (see above) or out of bounds.
std::unique_ptr<RowSource> OpenOnnx(const std::string& path, const std::string& name);

}  // namespace pe
