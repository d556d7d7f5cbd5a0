// TableSet: several named tensors that belong together (RoPE's cos, sin and
// inv_freq; ALiBi's slopes and bias) plus the metadata they share.
//
// Each tensor is a RowSource of its own shape and dtype (TableInfo::name is
// its tensor name, TableInfo::shape its logical shape). Writers that hold
// several tensors (HDF5, JSON, safetensors) write them all; NPY and CSV hold
// one, picked by name (`--tensor`). A single-tensor scheme is a set of one.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/table.h"

namespace pe {

struct TableSet {
  Metadata meta;  ///< shared by every tensor (also copied into each one's info)
  std::vector<std::unique_ptr<RowSource>> tensors;

  /// "cos, sin, inv_freq"
  std::string Names() const;
  /// The tensor called `name`, or nullptr.
  RowSource* Find(std::string_view name) const;
  /// Removes and returns the tensor called `name`. Throws pe::Error (usage)
  /// naming `flag` and the known tensors when there is none.
  std::unique_ptr<RowSource> Take(std::string_view name, std::string_view flag = "--tensor");
  /// Keeps only the tensor called `name` (same error as Take()).
  void Select(std::string_view name, std::string_view flag = "--tensor");
};

/// The info of a set's tensor `name` [rows, cols] of `dtype`: the set's
/// metadata `meta` plus "tensor" = name.
TableInfo SetTensorInfo(const Metadata& meta, std::string_view name, std::int64_t rows, std::int64_t cols, DType dtype);

/// A set of one tensor (for single-tensor schemes and file readers).
TableSet SingleTableSet(std::unique_ptr<RowSource> source);

/// Wraps `inner`, presenting `info` instead of inner's (same rows, cols and
/// dtype; a different name, shape or metadata).
std::unique_ptr<RowSource> Renamed(std::unique_ptr<RowSource> inner, TableInfo info);

}  // namespace pe
