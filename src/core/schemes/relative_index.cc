// The integer relative-position tables (relative.h): Shaw et al.'s clipped
// index in its tensor2tensor and Hugging Face BERT conventions, and
// DeBERTa-v2's log buckets in HF's float32 torch and microsoft/DeBERTa's
// float64 numpy arithmetic. Also the helpers every relative scheme shares.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "core/base/error.h"
#include "core/numerics/exact_sincos.h"
#include "core/schemes/quad_source.h"
#include "core/schemes/relative.h"
#include "core/base/version.h"

namespace pe {

std::int64_t RelativeKeyLen(const SchemeSpec& spec) {
  const std::int64_t k = spec.key_len < 0 ? spec.max_len : spec.key_len;
  if (k < 1) ThrowUsage(ParamName(spec, "--key-len"), fmt::format("must be at least 1, got {}", k));
  if (k > kMaxWidth)
    ThrowUsage(ParamName(spec, "--key-len"),
               fmt::format("{} keys is above pe's maximum width of {} (2^20): a [q, k] table's row holds every key", k,
                           kMaxWidth));
  return k;
}

void CheckIntegersFit(const SchemeSpec& spec, std::int64_t max_abs, const std::string& what) {
  std::int64_t limit = std::int64_t{1} << 53;
  switch (spec.dtype) {
    case DType::kFloat16: limit = 2048; break;
    case DType::kBFloat16: limit = 256; break;
    case DType::kFloat32: limit = std::int64_t{1} << 24; break;
    case DType::kFloat64: break;
  }
  if (max_abs > limit)
    ThrowUsage(fmt::format("--dtype {}", Traits(spec.dtype).name),
               fmt::format("cannot hold every integer up to {} exactly ({} reaches {}); use a wider --dtype", limit,
                           what, max_abs));
}

Metadata RelativeMetadata(const SchemeSpec& spec) {
  Metadata m;
  m.Set("scheme", spec.scheme);
  m.Set("max_len", spec.max_len);
  m.Set("dtype", std::string(Traits(spec.dtype).name));
  m.Set("pe_version", std::string(PE_VERSION));
  return m;
}

namespace {

void RejectStart(const SchemeSpec& spec) {
  if (spec.start != 0)
    ThrowUsage(ParamName(spec, "--start"),
               fmt::format("scheme '{}' has no start position (rows are queries 0..q-1)", spec.scheme));
}

// Correctly rounded float32 log of a float32 (via double, as t5_bucket.cc).
float LogF32(float x) { return static_cast<float>(std::log(static_cast<double>(x))); }

std::int64_t MaxPositionEmbeddings(const SchemeSpec& spec) {
  return spec.max_position_embeddings < 0 ? 512 : spec.max_position_embeddings;
}

bool IsHfBert(const SchemeSpec& spec) { return spec.convention == "hf-bert"; }

bool IsMicrosoft(const SchemeSpec& spec) { return spec.convention == "microsoft"; }

// A [Q, K] table of integers, row i = query i.
std::unique_ptr<RowSource> IndexTable(const SchemeSpec& spec, Metadata meta,
                                      std::function<std::int64_t(std::int64_t, std::int64_t)> at) {
  TableInfo t;
  t.rows = spec.max_len;
  t.cols = RelativeKeyLen(spec);
  t.dtype = spec.dtype;
  t.meta = std::move(meta);
  const std::int64_t K = t.cols;
  return std::make_unique<QuadRowSource>(t, [at, K](std::int64_t i, __float128* v) {
    for (std::int64_t j = 0; j < K; ++j) v[j] = static_cast<__float128>(at(i, j));
  });
}

}  // namespace

std::int64_t ShawIndex(std::int64_t query_pos, std::int64_t key_pos, std::int64_t k) {
  const std::int64_t d = key_pos - query_pos;
  return (d < -k ? -k : d > k ? k : d) + k;
}

std::int64_t DebertaBucket(std::int64_t rel, std::int64_t bucket_size, std::int64_t max_position, bool float64) {
  const std::int64_t mid = bucket_size / 2;
  const std::int64_t sign = rel > 0 ? 1 : rel < 0 ? -1 : 0;
  // abs_pos = where(-mid < rel < mid, mid - 1, |rel|); only |rel| > mid
  // reaches the log branch's result (where(abs_pos <= mid, rel, ...)).
  const std::int64_t abs_pos = (rel < mid && rel > -mid) ? mid - 1 : (rel < 0 ? -rel : rel);
  if (abs_pos <= mid) return rel;
  if (float64) {
    // numpy: abs_pos/mid, np.log, np.log((max_position-1)/mid) of a Python
    // float, * (mid-1), np.ceil, + mid, all float64.
    const double lp = std::ceil(std::log(static_cast<double>(abs_pos) / static_cast<double>(mid)) /
                                std::log(static_cast<double>(max_position - 1) / static_cast<double>(mid)) *
                                static_cast<double>(mid - 1)) +
                      static_cast<double>(mid);
    return static_cast<std::int64_t>(lp) * sign;
  }
  // torch: the int64 tensor / int is a float32 true division; the Python
  // float (max_position-1)/mid becomes a float32 tensor; every later step is
  // float32 (the int scalars are exact in float32).
  const float ratio = static_cast<float>(abs_pos) / static_cast<float>(mid);
  const float denom = LogF32(static_cast<float>(static_cast<double>(max_position - 1) / static_cast<double>(mid)));
  const float lp = std::ceil(LogF32(ratio) / denom * static_cast<float>(mid - 1)) + static_cast<float>(mid);
  return static_cast<std::int64_t>(lp * static_cast<float>(sign));
}

SchemeInfo RelativeIndexSchemeInfo() {
  SchemeInfo info;
  info.name = "relative-index";
  info.summary = "Shaw et al. relative index [q, k]: clamp(j-i, -k, k)+k (tensor2tensor) or i-j+P-1 (HF BERT relative_key)";
  info.source =
      "tensorflow/tensor2tensor layers/common_attention.py _generate_relative_positions_matrix; huggingface/transformers "
      "models/bert/modeling_bert.py (position_embedding_type=\"relative_key\")";
  info.needs_d_model = false;
  // An index table: rows repeat once clipped and values exceed 1, so no
  // property check applies; the reference comparison is the verdict.
  info.default_checks = [](const SchemeSpec&, std::string_view) { return std::vector<std::string>{}; };
  info.validate = [](const SchemeSpec& spec) {
    RejectStart(spec);
    const std::int64_t K = RelativeKeyLen(spec);
    const std::int64_t Q = spec.max_len;
    CheckedTableBytes(Q, K, spec.dtype);
    if (!spec.convention.empty() && spec.convention != "shaw" && !IsHfBert(spec))
      ThrowUsage(fmt::format("--convention '{}'", spec.convention), "relative-index conventions are shaw and hf-bert");
    if (IsHfBert(spec)) {
      const std::int64_t P = MaxPositionEmbeddings(spec);
      if (P < 1 || P > kMaxExactPosition)
        ThrowUsage(ParamName(spec, "--max-position-embeddings"), fmt::format("must be in [1, 2^40], got {}", P));
      if (Q > P || K > P)
        ThrowUsage("--max-len/--key-len",
                   fmt::format("hf-bert indexes distance_embedding (2·{}-1 rows) with i-j+{}-1: queries and keys must "
                               "not exceed max_position_embeddings = {} (got q = {}, k = {})",
                               P, P, P, Q, K));
      CheckIntegersFit(spec, Q - 1 + P - 1, "the index i-j+P-1");
    } else {
      if (spec.max_relative_position < 0)
        ThrowUsage(ParamName(spec, "--max-relative-position"),
                   spec.max_relative_position == -1
                       ? std::string("the shaw convention needs the clipping distance k (at least 0)")
                       : fmt::format("must be at least 0, got {}", spec.max_relative_position));
      if (spec.max_relative_position > kMaxExactPosition)
        ThrowUsage(ParamName(spec, "--max-relative-position"), "at most 2^40");
      if (Q > K)
        ThrowUsage("--max-len",
                   fmt::format("tensor2tensor takes the q queries as the last q of the k keys: q = {} must not exceed "
                               "--key-len {}",
                               Q, K));
      // j - i' is at most q - 1 (i' = i + k_len - q): the largest index.
      CheckIntegersFit(spec, std::min(Q - 1, spec.max_relative_position) + spec.max_relative_position,
                       "the index clamp(j-i, -k, k)+k");
    }
  };
  info.make = [](const SchemeSpec& spec) -> std::unique_ptr<RowSource> {
    Metadata m = RelativeMetadata(spec);
    const std::int64_t K = RelativeKeyLen(spec);
    m.Set("key_len", K);
    if (IsHfBert(spec)) {
      const std::int64_t P = MaxPositionEmbeddings(spec);
      m.Set("convention", std::string("hf-bert"));
      m.Set("max_position_embeddings", P);
      return IndexTable(spec, std::move(m), [P](std::int64_t i, std::int64_t j) { return i - j + P - 1; });
    }
    const std::int64_t k = spec.max_relative_position;
    const std::int64_t shift = K - spec.max_len;  // query i sits at key position i + K - Q
    m.Set("convention", std::string("shaw"));
    m.Set("max_relative_position", k);
    return IndexTable(spec, std::move(m),
                      [k, shift](std::int64_t i, std::int64_t j) { return ShawIndex(i + shift, j, k); });
  };
  return info;
}

SchemeInfo DebertaBucketSchemeInfo() {
  SchemeInfo info;
  info.name = "deberta-bucket";
  info.summary = "DeBERTa-v2 log-bucket relative positions [q, k] of i-j (HF float32 torch, or microsoft float64 numpy)";
  info.source =
      "huggingface/transformers models/deberta_v2/modeling_deberta_v2.py make_log_bucket_position, "
      "build_relative_position; microsoft/DeBERTa DeBERTa/deberta/da_utils.py";
  info.needs_d_model = false;
  info.default_checks = [](const SchemeSpec&, std::string_view) { return std::vector<std::string>{}; };
  info.validate = [](const SchemeSpec& spec) {
    RejectStart(spec);
    const std::int64_t K = RelativeKeyLen(spec);
    CheckedTableBytes(spec.max_len, K, spec.dtype);
    if (!spec.convention.empty() && spec.convention != "hf" && !IsMicrosoft(spec))
      ThrowUsage(fmt::format("--convention '{}'", spec.convention), "deberta-bucket conventions are hf and microsoft");
    if (spec.bucket_size < 4 || spec.bucket_size > (std::int64_t{1} << 24))
      ThrowUsage(ParamName(spec, "--bucket-size"),
                 fmt::format("must be in [4, 2^24] (mid = bucket_size/2 >= 2), got {}", spec.bucket_size));
    const std::int64_t mid = spec.bucket_size / 2;
    if (spec.max_position - 1 <= mid || spec.max_position > kMaxExactPosition)
      ThrowUsage(ParamName(spec, "--max-position"),
                 fmt::format("must exceed bucket_size/2 + 1 = {} (the log base (max_position-1)/mid must exceed 1) "
                             "and be at most 2^40, got {}",
                             mid + 1, spec.max_position));
    // |bucket| grows with |i-j|: the largest is at the widest distance.
    const std::int64_t far = std::max(spec.max_len - 1, K - 1);
    const std::int64_t top = std::max(std::llabs(DebertaBucket(far, spec.bucket_size, spec.max_position, IsMicrosoft(spec))),
                                      std::llabs(DebertaBucket(-far, spec.bucket_size, spec.max_position, IsMicrosoft(spec))));
    CheckIntegersFit(spec, top, "the bucket of the widest distance");
  };
  info.make = [](const SchemeSpec& spec) -> std::unique_ptr<RowSource> {
    Metadata m = RelativeMetadata(spec);
    m.Set("key_len", RelativeKeyLen(spec));
    m.Set("bucket_size", spec.bucket_size);
    m.Set("max_position", spec.max_position);
    m.Set("convention", std::string(IsMicrosoft(spec) ? "microsoft" : "hf"));
    const std::int64_t b = spec.bucket_size, mp = spec.max_position;
    const bool f64 = IsMicrosoft(spec);
    return IndexTable(spec, std::move(m),
                      [b, mp, f64](std::int64_t i, std::int64_t j) { return DebertaBucket(i - j, b, mp, f64); });
  };
  return info;
}

}  // namespace pe
