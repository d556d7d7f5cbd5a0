// `pe generate`: build a table for a scheme and write it to a file or stdout.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include <pe/table.h>

#include "console.h"
#include "resize_flags.h"

namespace pe::cli {

/// A scheme parameter's value as its flag parsed it: bound with the
/// parameter's own type (pe::SpecParamType), so CLI11 reads "--heads 0x10"
/// or "--factor 1e1" as it reads any integer or number.
using SpecParamValue = std::variant<std::int64_t, std::uint64_t, double, std::string, bool>;

/// The values of the scheme parameters' flags, and which flag is which key.
struct SpecParamSlots {
  std::map<std::string, SpecParamValue> value;  ///< by key ("rope_scaling"); starts as the default
  /// The options AddSchemeParamFlags made, and their keys (a command may
  /// regroup one, as dot does --tensor, or replace it, as verify does).
  std::map<const CLI::Option*, std::string> key_of;
  std::map<std::string, pe::SpecParamType> type;  ///< by key
};

/// The flags shared by every command that describes a table by scheme
/// (generate, and later dot and verify): --scheme, --d-model, --max-len,
/// --base, --start, --dtype.
struct SpecFlags {
  std::string scheme = "sinusoidal";
  std::int64_t d_model = 0;
  std::int64_t max_len = 0;
  double base = 10000.0;
  std::int64_t start = 0;
  std::string dtype = "float32";
  std::string grid;  ///< --grid HxW (sincos-2d)
  /// The command these flags were parsed by (AddSpecFlags sets it), to tell
  /// which flags the user gave (CheckSchemeFlags, SpecOf).
  const CLI::App* cmd = nullptr;
  /// The scheme-specific parameters (--layout, --rope-scaling, --heads, ...),
  /// one per pe::SpecParams() entry (AddSchemeParamFlags); shared by copies.
  std::shared_ptr<SpecParamSlots> params;
};

/// Adds the SpecFlags options to `cmd`. None is mandatory here: which of
/// --d-model/--max-len a scheme needs is checked with the scheme (t5-bucket
/// has no --d-model, sincos-2d takes --grid instead of --max-len).
void AddSpecFlags(CLI::App& cmd, SpecFlags& flags);

/// The spec the flags given stand for, for the library (pe::GenerateTable,
/// pe::CheckSpec): the scheme when --scheme was given (else empty: the
/// default, not named), and each spec flag given with its value as the
/// flag parsed it, in the command's order, --dtype last. Throws pe::Error
/// (kUsage) for --scheme '' (an unknown scheme).
pe::Spec SpecOf(const SpecFlags& flags);

/// The value of scheme parameter `key` ("frames") as its flag holds it:
/// the value given, else the default. REQUIRES: AddSpecFlags bound it and
/// T is its type (std::int64_t for kInteger, ...).
template <class T>
const T& SpecFlag(const SpecFlags& flags, std::string_view key) {
  return std::get<T>(flags.params->value.at(std::string(key)));
}

struct GenerateOptions {
  SpecFlags spec;
  std::string output = "-";
  std::string format;
  int threads = 0;   ///< --threads; 0 = all cores
  int compress = 0;  ///< --compress: HDF5 gzip level, 0 = none
  bool fsync = false;  ///< --fsync: make the file durable before it appears
  ResizeFlags resize;  ///< --resize-from and its knobs: a learned table resized instead of a scheme
  bool json = false;   ///< --json: a one-line JSON summary of what was written
};

void SetupGenerate(CLI::App* cmd, GenerateOptions& options);
int RunGenerate(const GenerateOptions& options, Console& console);

}  // namespace pe::cli
