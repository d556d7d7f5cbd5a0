// Relative-position schemes: tables indexed by (query i, key j) or by the
// offset between them, each reproducing one reference implementation
// (sources and commits in docs/schemes.md, "Relative position schemes").
//
//   relative-index  (relative_index.cc)  Shaw et al. clipped index
//                   clamp(j - i', -k, k) + k (tensor2tensor; i' = i + K - Q,
//                   queries are the last Q keys), or HF BERT relative_key
//                   i - j + max_position_embeddings - 1: [Q, K] integers.
//   deberta-bucket  (relative_index.cc)  DeBERTa-v2 log buckets of i - j
//                   (HF float32 torch arithmetic, or microsoft/DeBERTa's
//                   float64 numpy arithmetic): [Q, K] integers.
//   transformer-xl  (transformer_xl.cc)  the relative sinusoid R: row r is
//                   position min(klen-1-r, clamp_len), [sin | cos] with
//                   ω_i = base^(-2i/d): [klen, d].
//   kerple          (relative_bias.cc)   -r1·log(1 + r2·|i-j|) or
//                   -r1·|i-j|^r2 per head: [H, Q, K] or offsets [H, L].
//   sandwich        (relative_bias.cc)   NeMo's (Σ_{i=1..d/2} cos(r·ω_i)
//                   - d/2) / (8h/H), ω_i = base^(-2i/d): [H, Q, K] or [H, L].
//
// Query i and key j are 0-based rows and columns. --max-len is Q (the
// number of rows; for transformer-xl klen; for --rel-form offsets the
// number of offsets L), --key-len is K (default Q). Every float entry is
// the exact value correctly rounded to the dtype (quad precision, one
// rounding); integer tables are exact (the dtype must hold them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/schemes/registry.h"

namespace pe {

/// Shaw et al. / tensor2tensor `_generate_relative_positions_matrix`:
/// clamp(j - i, -k, k) + k for key position j and query position i.
std::int64_t ShawIndex(std::int64_t query_pos, std::int64_t key_pos, std::int64_t max_relative_position);

/// DeBERTa-v2 `make_log_bucket_position` of one relative position (query -
/// key). `float64` false: HF transformers' torch float32 arithmetic (the
/// division abs/mid, log, the division by float32 log((max-1)/mid), the
/// product by mid-1, ceil, all in float32); true: microsoft/DeBERTa's numpy
/// float64 arithmetic. REQUIRES: bucket_size >= 2, max_position >= 2.
std::int64_t DebertaBucket(std::int64_t relative_pos, std::int64_t bucket_size, std::int64_t max_position,
                           bool float64);

/// Per-head parameters from a --r1/--r2 value: one number or a comma list.
/// Throws pe::Error (usage) naming `flag` for a malformed or non-finite
/// entry, or a list longer than 2^20.
std::vector<double> ParseHeadList(const std::string& text, const std::string& flag);

/// KERPLE bias of one distance d >= 0: log form -r1·log(1 + r2·d), power
/// form -r1·d^r2 (0^r2 = 0), in quad precision.
__float128 KerpleBias(bool power, double r1, double r2, std::int64_t d);

/// Sandwich (NeMo) bias of head h (1-based) of H for relative position r:
/// (Σ_{i=1..d/2} cos(r·base^(-2i/d)) - d/2) / (8h/H), in quad precision.
/// REQUIRES: d even, 1 <= h <= H.
__float128 SandwichBias(std::int64_t r, std::int64_t d, double base, std::int64_t h, std::int64_t heads);

/// K: spec.key_len, or spec.max_len when unset (-1). Throws pe::Error
/// (usage) for K < 1 or K above kMaxWidth (K is the row width).
std::int64_t RelativeKeyLen(const SchemeSpec& spec);

/// Throws pe::Error (usage) naming --dtype when integers up to `max_abs`
/// (the largest index the table holds, described by `what`) are not all
/// exact in spec.dtype (float16: 2048, bfloat16: 256, float32: 2^24).
void CheckIntegersFit(const SchemeSpec& spec, std::int64_t max_abs, const std::string& what);

/// The metadata every relative table carries: scheme, max_len, dtype,
/// pe_version (schemes add their own keys, named like their flags).
Metadata RelativeMetadata(const SchemeSpec& spec);

SchemeInfo RelativeIndexSchemeInfo();
SchemeInfo DebertaBucketSchemeInfo();
SchemeInfo TransformerXlSchemeInfo();
SchemeInfo KerpleSchemeInfo();
SchemeInfo SandwichSchemeInfo();

}  // namespace pe
