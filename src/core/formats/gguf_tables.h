// GGUF files as tables (file handling over the codec core/containers/gguf.h):
// the header is parsed once per open, tensor data is read by pread on
// demand, so a multi-gigabyte model is listed and one small tensor read
// without touching the rest.
//
// A tensor of F32, F16, BF16 or F64 is a table: ne[0] (GGUF's innermost
// dimension, the contiguous one) is the row length, so [ne0, ne1] reads as
// ne1 rows x ne0 columns (numpy shape (ne1, ne0)), and 3-D/4-D tensors as
// [ne3*ne2*ne1, ne0] with their logical shape kept. A 1-D tensor [n] is a
// column n x 1, as the safetensors and NPY readers treat vectors. Any other
// type (quantized Q4_0, Q8_0, K-quants, IQ*, integer) is refused with its
// type named. Metadata: general.architecture and the tensor's GGUF type.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/containers/gguf.h"
#include "core/base/table.h"

namespace pe {

/// Parses the GGUF file at `path` (throws pe::Error input naming it).
GgufFile ReadGgufFile(const std::string& path);

/// The table info of tensor `t` (shape and dtype; cols = ne[0]); `t` must
/// have a table type (GgmlTableDType).
TableInfo GgufTensorTableInfo(const GgufFile& file, const GgufTensorInfo& t);

/// Opens tensor `name` of a GGUF file as a table (empty name: the only
/// tensor; several is an error listing them). Throws pe::Error (input) for
/// a missing tensor, a quantized type (named) or a malformed file.
std::unique_ptr<RowSource> OpenGgufTensor(const std::string& path, const std::string& name);

/// The names of every tensor of a GGUF file, in file order.
std::vector<std::string> ListGgufTensorNames(const std::string& path);

}  // namespace pe
