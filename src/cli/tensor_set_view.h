// `pe dot FILE` of a file that holds several tensors: which one to draw,
// from each tensor's axes (pe::TensorAxes: named from the scheme and tensor
// name in its metadata, never guessed from the shape alone). Only the
// public API's ListTableTensors/OpenTableFile are used, so every container
// a reader adds (HDF5 groups, safetensors, JSON tensors, npz, GGUF, ONNX,
// checkpoints) is covered without a change here.
#pragma once

#include <string>

namespace pe::cli {

/// The tensor `pe dot FILE` draws when none is named: "" for a file of one
/// tensor; of several, the one table of positions x channels (an HDF5 file
/// with pe and a slopes side tensor, a learned table with its ids); when
/// there are none or several (rope cos and sin), a usage error that lists
/// every tensor with its axes and says to pick one with --tensor.
std::string PickDotTensor(const std::string& path);

}  // namespace pe::cli
