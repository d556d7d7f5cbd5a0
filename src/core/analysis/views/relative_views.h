// Views of relative-position schemes, for `pe dot --view`:
//
//  - buckets: the index a relative scheme gives a query–key pair against the
//             relative position r = j − i (key − query, T5's "memory −
//             query"): T5's buckets (bidirectional encoder and causal
//             decoder, both from one spec), DeBERTa-v2's log buckets of
//             i − j, Shaw's clipped index clamp(j − i, −k, k) + k and HF
//             BERT's i − j + P − 1. The staircases that show where exact
//             offsets end and logarithmic buckets begin.
//  - heads:   a per-head bias over offsets k = 0..L−1 (ALiBi −m_h·k, KERPLE,
//             Sandwich) as one heads × distances heatmap (HeadsView).
//  - offsets: the same biases as one curve per head; a learned table
//             indexed by T5 buckets (relative_attention_bias) against j − i.
//  - bias:    the same biases as small multiples, one query × key panel per
//             head on shared axes: b_h(|i − j|), keys after the query left
//             empty for causal schemes (ALiBi).
// The colour map follows the data's sign (ViewData::signed_values).
// Pure: specs and tables in, ViewData out (drawn by plot/view_plot.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/views/view_data.h"
#include "core/schemes/registry.h"
#include "core/base/table.h"

namespace pe {

struct NamedSpec {
  std::string name;
  SchemeSpec spec;
};

/// True for the schemes BucketsView draws: t5-bucket, deberta-bucket,
/// relative-index.
bool HasBuckets(const std::string& scheme);

/// The offsets a buckets view spans by default for `spec`: 1.5·max_distance
/// (T5: past the clamp), max_position (DeBERTa), 2·k + 8 or P (Shaw, BERT).
std::int64_t DefaultBucketReach(const SchemeSpec& spec);

/// Every spec's index for r = −max_r..max_r. A t5-bucket spec gives two
/// series (bidirectional, causal). Throws pe::Error (usage) for another
/// scheme or parameters its scheme refuses, naming the input.
ViewData BucketsView(const std::vector<NamedSpec>& specs, std::int64_t max_r);

/// A t5-bucket table read from a file: one column, row r is the relative
/// position start + r (start and bidirectional from its metadata). Throws
/// pe::Error (usage) when its metadata names another scheme, (input) for
/// another shape.
ViewData BucketsViewOfTable(const std::string& name, const DenseTable& table);

/// Per-head biases over distances: row h of `offsets` is head h's bias at
/// distance d = 0..cols−1.
struct HeadBias {
  std::string name;      ///< the input, for the subtitle
  std::string scheme;    ///< "ALiBi", "KERPLE", ...
  std::string formula;   ///< "−m_h·k", k = |i − j| (titles and labels)
  DenseTable offsets;    ///< heads × distances
  std::vector<std::string> head_labels;  ///< per head ("m = 0.25"); empty = "head h"
  bool causal = false;   ///< keys after the query are masked (bias view)
};

/// ALiBi's −m_h·k for k = 0..max_d.
HeadBias AlibiHeadBias(const std::string& name, const std::vector<double>& slopes, std::int64_t max_d);

/// alibi (slopes of --heads, --max-bias), kerple or sandwich (their
/// offsets form) for d = 0..max_d. Throws pe::Error (usage) for another
/// scheme or parameters the scheme refuses, naming the input.
HeadBias HeadBiasFromSpec(const NamedSpec& in, std::int64_t max_d);

/// A kerple or sandwich table read from a file (its metadata names the
/// scheme): the offsets form [heads, L] as it is, the matrix form
/// [heads, Q, K] (info.shape) from its last query, k = 0..min(Q, max_d+1)−1.
/// Throws pe::Error (usage) when the metadata names another scheme.
HeadBias HeadBiasFromTable(const std::string& name, const DenseTable& table, std::int64_t max_d);

/// heads × distances as one heatmap panel, plus one curve per head (data).
ViewData HeadsView(const HeadBias& bias);

/// One curve per head: the bias against the offset k = 0..cols−1.
ViewData OffsetsView(const HeadBias& bias);

/// A learned table indexed by buckets (T5's relative_attention_bias.weight:
/// [num_buckets, heads]; a [heads, num_buckets] table is recognised) seen
/// through the buckets of `buckets` (a t5-bucket spec): one curve per head,
/// b_h(r) = W[bucket(r), h] for r = j − i = −max_r..max_r (T5's memory −
/// query), drawn as steps. Throws pe::Error (input) when the table's bucket
/// axis is not num_buckets long, (usage) for another scheme.
ViewData LearnedBucketView(const std::string& name, const DenseTable& weights, const NamedSpec& buckets,
                           std::int64_t max_r);

/// One `size` × `size` query × key panel per head (size ≤ offsets.cols).
/// Throws pe::Error (usage) for size < 2 or more than offsets.cols, or more
/// than 64 heads.
ViewData BiasPanelsView(const HeadBias& bias, std::int64_t size);

}  // namespace pe
