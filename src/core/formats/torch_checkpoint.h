// PyTorch checkpoints in torch.save's zip format (torch >= 1.6; .pt, .pth,
// .bin, .ckpt): a zip archive (core/containers/zip_archive.h) whose members all
// sit under one folder, "<prefix>/" ("archive/" since torch 2.x, the file's
// stem before), holding
//   <prefix>/data.pkl      the pickled object (a state dict), read by the
//                          restricted unpickler (core/containers/restricted_unpickler.h)
//   <prefix>/data/<key>    each storage's raw bytes, little-endian
//   <prefix>/byteorder     "little" (when present)
//   <prefix>/version, .data/serialization_id, ...
// (pytorch caffe2/serialize/inline_container.h and torch/serialization.py,
// _save and _load, v1.13.0). Each tensor is (storage, offset, size,
// stride); pe reads float32/float16/bfloat16/float64 tensors (and
// complex64/complex128 ones as their float (real, imag) pairs [..., 2],
// marked as cos/sin pairs: core/formats/cos_sin_pairs.h) that are
// contiguous row-major, 1-D as one column, N-D as [prod(leading), last],
// in place from the storage member. Tensors are named by their dotted path
// through the dicts and lists ("model.layers.0.self_attn.rotary_emb.inv_freq").
// Legacy checkpoints (torch < 1.6, or _use_new_zipfile_serialization=False:
// a bare pickle stream starting with the magic number 0x1950a86a20f9469cfc6c)
// are refused with a clear message.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/containers/restricted_unpickler.h"
#include "core/containers/zip_archive.h"
#include "core/base/model_folder.h"
#include "core/base/table.h"

namespace pe {

/// The largest data.pkl read (a state dict's pickle is kilobytes to a few MiB).
inline constexpr std::uint64_t kMaxTorchPickleBytes = std::uint64_t{64} << 20;

struct TorchTensorEntry {
  PickledTensor tensor;                ///< tensor.path is its name
  const ZipMember* member = nullptr;   ///< its storage
  std::optional<TableInfo> info;       ///< set when pe reads it as a table
  std::uint64_t byte_offset = 0;       ///< of its first element in the storage member
  std::string problem;                 ///< else why not ("dtype int64", "not contiguous ...")
};

struct TorchCheckpoint {
  std::shared_ptr<ZipArchive> zip;
  std::string prefix;  ///< "archive"
  std::vector<TorchTensorEntry> tensors;
};

/// Reads and validates the checkpoint at `path` (no tensor data is read).
/// Throws pe::Error (input) naming the file.
TorchCheckpoint ReadTorchCheckpoint(const std::string& path);
/// The same, with `beside` the folder the checkpoint sits in (a folder's
/// reader opens its checkpoint by descriptor, so the path's own folder is
/// not that one): TensorRT-LLM's flat rotary_cos_sin is shaped from its
/// rope_config.json there (core/formats/cos_sin_pairs.h).
TorchCheckpoint ReadTorchCheckpoint(const std::string& path, const ModelFolder& beside);

/// The names of the readable tensors of `path`.
std::vector<std::string> ListTorch(const std::string& path);

/// Opens tensor `name` of `path` (empty: the only readable tensor; several
/// is an error listing them).
std::unique_ptr<RowSource> OpenTorch(const std::string& path, const std::string& name);

/// Opens `entry` of `ckpt` (throws its problem when it is not readable).
std::unique_ptr<RowSource> OpenTorchEntry(const TorchCheckpoint& ckpt, const TorchTensorEntry& entry);

}  // namespace pe
