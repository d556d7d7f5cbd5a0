// pe/output.h: a file that appears complete or not at all.
//
// Every file pe writes (tables, reports, pictures) goes through a temporary
// file beside the target, renamed into place on Commit(); a failure, an
// interruption or destruction without Commit() leaves the target as it was
// and removes the temporary file. A client writing a report beside pe's
// (the CLI's JUnit file) uses the same rule.
#pragma once

#include <pe/export.h>

#include <memory>
#include <string>
#include <string_view>

namespace pe {

class PE_API AtomicOutput {
 public:
  /// Creates the temporary file now, so a target that cannot be written
  /// fails before any work. Throws pe::Error (kIo) when the target's folder
  /// does not exist or is not writable, the target is a folder, or a link
  /// pe refuses to follow.
  explicit AtomicOutput(const std::string& target);
  AtomicOutput(AtomicOutput&&) noexcept;
  AtomicOutput& operator=(AtomicOutput&&) noexcept;
  ~AtomicOutput();

  /// Appends bytes. Throws pe::Error (kIo) naming the target on failure.
  void Write(std::string_view bytes);
  /// Flushes and renames the temporary file onto the target.
  void Commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Makes an interruption leave no temporary file behind: for every
/// catchable signal whose default action ends the process (and that is not
/// ignored or handled already), the temporary files of the AtomicOutputs
/// (and of pe's own writers) not yet committed are removed, then the
/// process dies of the same signal (exit status 128+N). Ignores SIGPIPE (a
/// write to a closed pipe then fails with EPIPE) and SIGXFSZ (EFBIG). Call
/// once, at program start; a program that handles these signals itself
/// does not call it.
PE_API void InstallInterruptCleanup();

}  // namespace pe
