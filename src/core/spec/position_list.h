// A list of positions as the flags give it (`--positions`): items joined by
// ',', an item P, START:STOP[:STEP] (Python's range, STOP excluded) or A-B
// (inclusive); or the path of a file holding one vector [L] of integer ids
// (NPY, CSV, JSON, ...). The probe (`verify --probe`) and 1-D RoPE tables
// (`--scheme rope --positions`) read it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pe {

/// The positions `text` lists, in order (repeats kept). Throws pe::Error
/// (kUsage) naming `what` for a malformed item, a non-integer id in the
/// file, a value beyond ±2^40, or more than `max_count` positions; the
/// file's reader errors (kInput) as they are.
std::vector<std::int64_t> ParsePositionIds(const std::string& text, const std::string& what, std::int64_t max_count);

/// Position ids as torch keeps them: an integer .npy (int64 from
/// torch.save / numpy, int32, int16, int8; format 1.0-3.0, little-endian,
/// C order), its header read here, bounded: at most `max_count` ids, no
/// allocation before that bound holds. Fills `shape` and `values` and
/// returns true; false when `path` is not an integer .npy (a table reader
/// then takes it, or says why not). Throws pe::Error (kInput) naming
/// `what` for a malformed or oversized one.
bool ReadIntegerNpyIds(const std::string& path, const std::string& what, std::int64_t max_count,
                       std::vector<std::int64_t>* shape, std::vector<std::int64_t>* values);

}  // namespace pe
