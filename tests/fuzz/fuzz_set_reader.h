// Shared body of the fuzz targets of multi-tensor containers (.npz, PyTorch
// checkpoints): the bytes are written as a file (fuzz_reader.h's scratch
// file), every tensor is listed (ListTensorNames), the first few are opened
// and read like a consumer reads them (first blocks and the last block),
// and the model-artifact reader runs over the same file. Same contract as
// fuzz_reader.h: success or pe::Error, nothing else.
#pragma once

#include <functional>

#include "core/models/artifact.h"
#include "fuzz_reader.h"

namespace pe::fuzz {

inline void ReadSome(RowSource& source) {
  const TableInfo& info = source.info();
  if (info.rows <= 0 || info.cols <= 0) std::abort();
  CheckedTableBytes(info.rows, info.cols, info.dtype);
  const std::int64_t block = BlockRows(info.row_bytes(), info.rows);
  std::vector<std::byte> buf(static_cast<std::size_t>(block) * info.row_bytes());
  std::int64_t first = 0;
  for (int b = 0; b < 4 && first < info.rows; ++b, first += block)
    source.ReadRows(first, std::min(block, info.rows - first), buf.data());
  const std::int64_t last = std::max<std::int64_t>(0, info.rows - block);
  source.ReadRows(last, info.rows - last, buf.data());  // backwards: a deflated member restarts
}

inline int FuzzSet(Format format, const std::function<ModelArtifact(const std::string&)>& artifact,
                   const std::uint8_t* data, std::size_t size) {
  const std::string& path = ScratchPath();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) std::abort();
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  OpenOptions options;
  options.format = format;
  try {
    const std::vector<std::string> names = ListTensorNames(path, options);
    for (std::size_t i = 0; i < names.size() && i < 4; ++i) {
      options.dataset = names[i];
      auto source = OpenTable(path, options);
      ReadSome(*source);
    }
  } catch (const Error&) {
  }
  try {
    ModelArtifact a = artifact(path);
    for (std::size_t i = 0; i < a.tensors.size() && i < 4; ++i) {
      auto source = a.tensors[i].open();
      ReadSome(*source);
    }
  } catch (const Error&) {
  }
  return 0;
}

}  // namespace pe::fuzz
