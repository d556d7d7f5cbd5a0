// T5 relative-position buckets (t5_bucket.cc; HF, float32 log), the registry entry.
// Formulas, sources and layouts: docs/schemes.md.
#pragma once

#include <cstdint>
#include <vector>

#include "core/schemes/registry.h"

namespace pe {

/// T5's _relative_position_bucket for one relative position (memory -
/// query), with the reference's float32 log, division and truncation.
std::int64_t T5Bucket(std::int64_t relative_position, bool bidirectional, std::int64_t num_buckets,
                      std::int64_t max_distance);

SchemeInfo T5BucketSchemeInfo();

}  // namespace pe
