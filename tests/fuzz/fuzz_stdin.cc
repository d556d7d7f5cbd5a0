// libFuzzer target: standard input's spool (pe::SpoolInput, `pe inspect -`).
// The first byte picks the format (npy, csv, json); the rest is the input,
// read through a memfd as a pipe is read (sequentially, no seek).
//
// Contract checked: SpoolInput either returns a file holding a prefix of the
// input (CSV and JSON: all of it; NPY: exactly its header and data) that the
// reader then opens or refuses with pe::Error, or throws pe::Error; anything
// else is a finding (fuzz_reader.h).
#include <sys/mman.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>

#include <pe/table.h>

#include "fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* kFormats[] = {"npy", "csv", "json"};
  const std::string format = kFormats[data[0] % 3];
  ++data, --size;
  const int fd = ::memfd_create("pe-fuzz-stdin", MFD_CLOEXEC);
  if (fd < 0) std::abort();
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<std::size_t>(n);
  }
  ::lseek(fd, 0, SEEK_SET);
  const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  std::string path;
  try {
    path = pe::SpoolInput(fd, format, dir);
  } catch (const pe::Error&) {
    ::close(fd);
    return 0;
  }
  ::close(fd);
  std::ifstream in(path, std::ios::binary);
  const std::string copied((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ::unlink(path.c_str());
  if (copied.size() > size || std::memcmp(copied.data(), data, copied.size()) != 0) std::abort();
  if (format != "npy" && copied.size() != size) std::abort();
  return pe::fuzz::FuzzOne(format == "npy" ? pe::Format::kNpy : format == "csv" ? pe::Format::kCsv
                                                                               : pe::Format::kJson,
                           reinterpret_cast<const std::uint8_t*>(copied.data()), copied.size());
}
