// `-` as a table path: standard input, checked and spooled (pe::SpoolInput) to a private temporary file
// (the readers seek and map; a pipe does neither) named with the extension
// of the format given with --input-format, so every reader opens it as
// a file. Only the self-describing text and array formats are accepted
// (csv, json, npy): a container (HDF5, safetensors, ...) is not streamed.
#pragma once

#include <string>

namespace pe::cli {

/// Returns `path` unchanged unless it is "-"; then reads standard input once
/// into a temporary file removed at exit and returns its path. `format` is
/// the --input-format value (required for "-"); `flag` names it in errors.
std::string TablePathOrStdin(const std::string& path, const std::string& format, const char* flag);

/// `message` with the spool's quoted path ('/tmp/pe-stdin-...') spelled
/// "standard input", as the user gave it.
std::string StdinNamed(const std::string& message);

}  // namespace pe::cli
