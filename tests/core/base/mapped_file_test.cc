// Mapped input (core/base/mapped_file.h): a file that shrinks while mapped
// reads as zeros past its new end and is reported, never a crash; SIGBUS
// outside pe's mappings keeps its default action; a mapping may start at any
// offset; a .npy's and a safetensors tensor's view hold the
// same bytes ReadRows gives, and a shrink under a view is pe's usual
// "truncated" error when the rows are handed back.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/formats/format.h"
#include "core/base/mapped_file.h"
#include <pe/runtime.h>
#include "core/base/table.h"

namespace pe {
namespace {

const std::size_t kPage = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

std::string TempPath(const std::string& suffix) {
  char tmpl[] = "/tmp/pe_mapped_XXXXXX";
  const int fd = ::mkstemp(tmpl);
  ::close(fd);
  std::remove(tmpl);
  return std::string(tmpl) + suffix;
}

void WriteFile(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

// A .npy of `rows` x `cols` float32 in C order whose value (r, c) is
// r * cols + c, with a header padded to 64 bytes as numpy writes it.
std::string WriteNpy(std::int64_t rows, std::int64_t cols) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                     std::to_string(cols) + "), }";
  std::size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::vector<unsigned char> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  bytes.push_back(static_cast<unsigned char>(dict.size() & 0xff));
  bytes.push_back(static_cast<unsigned char>(dict.size() >> 8));
  bytes.insert(bytes.end(), dict.begin(), dict.end());
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    const float v = static_cast<float>(i);
    unsigned char b[4];
    std::memcpy(b, &v, 4);
    bytes.insert(bytes.end(), b, b + 4);
  }
  const std::string path = TempPath(".npy");
  WriteFile(path, bytes);
  return path;
}

TEST(MappedFile, HoldsTheFilesBytes) {
  const std::string path = TempPath(".bin");
  std::vector<unsigned char> bytes(3 * kPage + 100);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 7 + 3);
  WriteFile(path, bytes);
  const int fd = ::open(path.c_str(), O_RDONLY);
  auto m = MappedFile::Open(fd, bytes.size());
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->size(), bytes.size());
  EXPECT_EQ(std::memcmp(m->data(), bytes.data(), bytes.size()), 0);
  // Released pages fault back in with the same bytes (the page cache keeps them).
  m->Release(bytes.size());
  EXPECT_EQ(std::memcmp(m->data(), bytes.data(), bytes.size()), 0);
  EXPECT_FALSE(m->shrank());
  m.reset();
  ::close(fd);
  std::remove(path.c_str());
}

TEST(MappedFile, HoldsTheBytesFromAnOffset) {
  const std::string path = TempPath(".bin");
  std::vector<unsigned char> bytes(5 * kPage + 77);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 13 + 1);
  WriteFile(path, bytes);
  const int fd = ::open(path.c_str(), O_RDONLY);
  for (std::uint64_t offset : {std::uint64_t{0}, std::uint64_t{8}, std::uint64_t{kPage}, std::uint64_t{kPage + 1000}}) {
    const std::uint64_t size = bytes.size() - offset - 3;
    auto m = MappedFile::Open(fd, size, offset);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->size(), size);
    EXPECT_EQ(std::memcmp(m->data(), bytes.data() + offset, size), 0) << "offset " << offset;
  }
  ::close(fd);
  std::remove(path.c_str());
}

TEST(MappedFile, ShrunkFileReadsZerosAndIsReported) {
  const std::string path = TempPath(".bin");
  std::vector<unsigned char> bytes(8 * kPage, 0xab);
  WriteFile(path, bytes);
  const int fd = ::open(path.c_str(), O_RDONLY);
  auto m = MappedFile::Open(fd, bytes.size());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(static_cast<unsigned char>(m->data()[0]), 0xab);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(kPage + kPage / 2)), 0);
  // Past the new end: SIGBUS without pe's handler; with it, zeros.
  EXPECT_EQ(static_cast<unsigned char>(m->data()[5 * kPage + 1]), 0);
  EXPECT_TRUE(m->shrank());
  EXPECT_EQ(static_cast<unsigned char>(m->data()[7 * kPage]), 0);
  EXPECT_EQ(static_cast<unsigned char>(m->data()[10]), 0xab);  // the first page is still the file's
  m.reset();
  ::close(fd);
  std::remove(path.c_str());
}

TEST(MappedFile, EmptyAndSpecialFilesAreNotMapped) {
  const int null_fd = ::open("/dev/null", O_RDONLY);
  EXPECT_EQ(MappedFile::Open(null_fd, 4096), nullptr);
  EXPECT_EQ(MappedFile::Open(null_fd, 0), nullptr);
  ::close(null_fd);
}

TEST(MappedFileDeathTest, SigbusOutsidePesMappingsKeepsItsDefaultAction) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string path = TempPath(".bin");
  WriteFile(path, std::vector<unsigned char>(4 * kPage, 1));
  // pe's handler installed by a live mapping of its own...
  const int fd = ::open(path.c_str(), O_RDONLY);
  auto mine = MappedFile::Open(fd, 4 * kPage);
  ASSERT_NE(mine, nullptr);
  // ...and a mapping that is not pe's, of a file that then shrinks.
  EXPECT_EXIT(
      {
        const std::string other = TempPath(".bin");
        WriteFile(other, std::vector<unsigned char>(4 * kPage, 2));
        const int ofd = ::open(other.c_str(), O_RDONLY);
        auto* p = static_cast<volatile unsigned char*>(::mmap(nullptr, 4 * kPage, PROT_READ, MAP_SHARED, ofd, 0));
        (void)!::truncate(other.c_str(), 0);
        std::remove(other.c_str());
        const unsigned char v = p[3 * kPage];
        std::_Exit(v == 0 ? 3 : 4);
      },
      [](int status) {
        if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGBUS;
#if defined(__SANITIZE_ADDRESS__)
        // AddressSanitizer's own SIGBUS handler (installed before pe's, so
        // the one pe chains to) reports the fault and exits non-zero.
        return WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3 &&
               WEXITSTATUS(status) != 4;
#else
        return false;
#endif
      },
      "");
  mine.reset();
  ::close(fd);
  std::remove(path.c_str());
}

TEST(NpyView, SameBytesAsReadRows) {
  const std::string path = WriteNpy(1000, 37);
  auto src = OpenTable(path);
  const TableInfo& info = src->info();
  std::vector<std::byte> read(static_cast<std::size_t>(info.rows) * info.row_bytes());
  src->ReadRows(0, info.rows, read.data());
  const std::byte* v = src->ViewRows(0, info.rows);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(std::memcmp(v, read.data(), read.size()), 0);
  const std::byte* part = src->ViewRows(500, 10);
  ASSERT_NE(part, nullptr);
  float x;
  std::memcpy(&x, part + 3 * 4, 4);
  EXPECT_EQ(x, 500.0f * 37 + 3);
  EXPECT_EQ(src->ViewRows(995, 10), nullptr);  // past the rows the file holds: ReadRows decides
  EXPECT_NO_THROW(src->ReleaseRows(0, info.rows));
  src.reset();
  std::remove(path.c_str());
}

// A safetensors file of two float32 tensors, "a" [rows, cols] holding
// i + 0.5 and "b" [rows, cols] holding -i, the header padded to 8 bytes.
std::string WriteSafetensors(std::int64_t rows, std::int64_t cols) {
  const std::int64_t n = rows * cols, bytes = 4 * n;
  std::string header = "{\"a\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string(rows) + "," +
                       std::to_string(cols) + "],\"data_offsets\":[0," + std::to_string(bytes) +
                       "]},\"b\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string(rows) + "," +
                       std::to_string(cols) + "],\"data_offsets\":[" + std::to_string(bytes) + "," +
                       std::to_string(2 * bytes) + "]}}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<unsigned char> out(8);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(header.size() >> (8 * i));
  out.insert(out.end(), header.begin(), header.end());
  for (int t = 0; t < 2; ++t)
    for (std::int64_t i = 0; i < n; ++i) {
      const float v = t == 0 ? static_cast<float>(i) + 0.5f : -static_cast<float>(i);
      unsigned char b[4];
      std::memcpy(b, &v, 4);
      out.insert(out.end(), b, b + 4);
    }
  const std::string path = TempPath(".safetensors");
  WriteFile(path, out);
  return path;
}

TEST(SafetensorsView, EachTensorsOwnBytes) {
  const std::string path = WriteSafetensors(300, 7);
  for (const char* name : {"a", "b"}) {
    OpenOptions o;
    o.dataset = name;
    auto src = OpenTable(path, o);
    const TableInfo& info = src->info();
    std::vector<std::byte> read(static_cast<std::size_t>(info.rows) * info.row_bytes());
    src->ReadRows(0, info.rows, read.data());
    const std::byte* v = src->ViewRows(0, info.rows);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_EQ(std::memcmp(v, read.data(), read.size()), 0) << name;
    float x;
    std::memcpy(&x, src->ViewRows(100, 1) + 4 * 3, 4);
    EXPECT_EQ(x, name[0] == 'a' ? 703.5f : -703.0f) << name;
    EXPECT_EQ(src->ViewRows(299, 2), nullptr);
    EXPECT_NO_THROW(src->ReleaseRows(0, info.rows));
  }
  std::remove(path.c_str());
}

TEST(NpyView, NoMappingWhenAskedNot) {
  const std::string path = WriteNpy(16, 8);
  RuntimeOptions options = GetRuntimeOptions();
  options.no_mmap = true;
  SetRuntimeOptions(options);
  auto src = OpenTable(path);
  options.no_mmap = false;
  SetRuntimeOptions(options);
  EXPECT_EQ(src->ViewRows(0, 16), nullptr);
  EXPECT_NO_THROW(src->ReleaseRows(0, 16));
  src.reset();
  std::remove(path.c_str());
}

TEST(NpyView, ShrinkUnderAViewIsTheTruncatedError) {
  const std::int64_t rows = 4096, cols = 64;  // 1 MiB of rows
  const std::string path = WriteNpy(rows, cols);
  auto src = OpenTable(path);
  const std::byte* v = src->ViewRows(0, rows);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(::truncate(path.c_str(), 64 + 4096), 0);
  // Every value read (zeros past the new end), no crash.
  double sum = 0;
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    float x;
    std::memcpy(&x, v + 4 * i, 4);
    sum += x;
  }
  EXPECT_GE(sum, 0.0);
  try {
    src->ReleaseRows(0, rows);
    ADD_FAILURE() << "no error for a file that shrank under its view";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("file is truncated (it shrank while being read)"), std::string::npos) << e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
  }
  src.reset();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace pe
