// Multi-tensor files seen whole by the CLI: what each tensor's
// axes are (from the scheme and tensor name in its metadata, never guessed
// from the shape alone), what kind of tensor it is, and `pe inspect` of a file
// that holds several tensors (a listing of every tensor, then each one's
// details). Only core/formats/format.h's ListTensorNames/OpenTable are used, so
// every container a reader adds (HDF5 groups, safetensors, JSON tensors,
// npz, GGUF, ONNX, checkpoints) is covered without a change here.
#pragma once

#include <string>
#include <vector>

#include "cli/cmd_inspect.h"
#include "cli/console.h"
#include "core/base/table.h"

namespace pe::cli {

/// "positions x channels", "heads x key positions", "frequencies x 1", ...:
/// the rows and columns of `info` named from its metadata's scheme (and
/// layout/form keys) and tensor name; "rows x columns" when nothing says.
std::string AxesOf(const TableInfo& info);

/// "rope cos", "alibi slopes", "sinusoidal table" from the metadata, or the
/// result of identification ("rope cos (identified: ...)") when there is no
/// metadata; `identify` false leaves an unlabelled table as "unlabelled".
std::string KindOf(RowSource& source, bool identify);

/// The tensors `pe inspect FILE` / `pe verify FILE` should take whole: the
/// names ListTensorNames gives when there are two or more and no tensor was
/// named (--tensor/--dataset); empty otherwise (the single-tensor path).
std::vector<std::string> WholeFileTensors(const std::string& path, const std::string& tensor,
                                          const std::string& format);

/// The tensor `pe dot FILE` draws when none is named: "" for a file of one
/// tensor; of several, the one table of positions x channels (an HDF5 file
/// with pe and a slopes side tensor, a learned table with its ids); when
/// there are none or several (rope cos and sin), a usage error that lists
/// every tensor with its axes and says to pick one with --tensor.
std::string PickDotTensor(const std::string& path);

/// `pe inspect` of a multi-tensor file: a listing (name, shape, dtype, axes,
/// kind/identification), then the details of each tensor as `pe inspect
/// FILE --tensor NAME` prints them. --json: one document
/// {"schema": "pe.inspect/1", "file", "format", "tensors": [listing], "details":
/// [one pe.inspect/1 document per tensor]}.
int RunInspectSet(const InspectOptions& options, Console& console, const std::vector<std::string>& names);

}  // namespace pe::cli
