// Scratch bytes that text encoders write into: grown on request, never
// zero-filled (a std::string zero-fills what resize adds, which for the CSV
// writer's blocks was a memset of every fresh page before the text was
// written over it: 5% of `pe generate -o pe.csv`).
//
// Contract: Reserve(n) returns at least n writable bytes at data(); their
// content is unspecified (what an earlier use left, or uninitialised), and
// growing does not keep it. Not thread-safe; one buffer per thread.
#pragma once

#include <cstddef>
#include <memory>

namespace pe {

class TextBuffer {
 public:
  char* Reserve(std::size_t n) {
    if (n > capacity_) {
      data_ = std::make_unique_for_overwrite<char[]>(n);
      capacity_ = n;
    }
    return data_.get();
  }
  char* data() const { return data_.get(); }
  std::size_t capacity() const { return capacity_; }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t capacity_ = 0;
};

}  // namespace pe
