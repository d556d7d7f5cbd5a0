// pe::AtomicOutput (include/pe/output.h) over the core's AtomicFile.
#include <pe/output.h>

#include <fmt/format.h>

#include <cstdio>

#include "core/base/error.h"
#include "core/base/output.h"

namespace pe {

struct AtomicOutput::Impl {
  explicit Impl(const std::string& target) : file(target) {}
  AtomicFile file;
};

AtomicOutput::AtomicOutput(const std::string& target) : impl_(std::make_unique<Impl>(target)) {}
AtomicOutput::AtomicOutput(AtomicOutput&&) noexcept = default;
AtomicOutput& AtomicOutput::operator=(AtomicOutput&&) noexcept = default;
AtomicOutput::~AtomicOutput() = default;

void AtomicOutput::Write(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), impl_->file.file()) != bytes.size())
    ThrowIo(fmt::format("cannot write '{}'", impl_->file.target()), "write failed");
}

void AtomicOutput::Commit() { impl_->file.Commit(); }

}  // namespace pe
