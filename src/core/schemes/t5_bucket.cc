// T5 relative-position buckets (HF transformers modeling_t5.py
// _relative_position_bucket): one row per relative position rp = memory -
// query = start + r, one column holding the bucket index. The large-distance
// branch is evaluated exactly as the reference does in float32: the
// division rp/max_exact, a correctly rounded float32 log, the division by
// float32(ln(max_distance/max_exact)), the product, truncation toward zero.
#include <fmt/format.h>

#include <cmath>

#include "core/base/error.h"
#include "core/schemes/t5_bucket.h"
#include "core/schemes/quad_source.h"
#include "core/base/version.h"

namespace pe {
namespace {

// log of a float32 correctly rounded to float32 (via double: the double
// result is within 1/2 ulp + tiny, so one more rounding is correct except
// in cases no float32 input reaches in this range).
float LogF32(float x) { return static_cast<float>(std::log(static_cast<double>(x))); }

}  // namespace

std::int64_t T5Bucket(std::int64_t rp, bool bidirectional, std::int64_t num_buckets, std::int64_t max_distance) {
  std::int64_t bucket = 0;
  std::int64_t nb = num_buckets;
  if (bidirectional) {
    nb /= 2;
    if (rp > 0) bucket += nb;
    rp = rp < 0 ? -rp : rp;
  } else {
    rp = rp < 0 ? -rp : 0;  // -min(rp, 0)
  }
  const std::int64_t max_exact = nb / 2;
  if (rp < max_exact) return bucket + rp;
  const float ratio = static_cast<float>(rp) / static_cast<float>(max_exact);
  const float denom = static_cast<float>(std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)));
  const float scaled = LogF32(ratio) / denom * static_cast<float>(nb - max_exact);
  std::int64_t large = max_exact + static_cast<std::int64_t>(scaled);  // .to(torch.long) truncates
  large = std::min(large, nb - 1);
  return bucket + large;
}

SchemeInfo T5BucketSchemeInfo() {
  SchemeInfo info;
  info.name = "t5-bucket";
  info.summary = "T5 relative-position bucket index for rp = start..start+max_len-1 (float32 log, truncation)";
  info.source = "huggingface/transformers models/t5/modeling_t5.py _relative_position_bucket";
  info.needs_d_model = false;
  // One integer bucket index per relative position: neighbouring positions
  // share a bucket (rows repeat) and indices exceed 1, so no property check
  // applies; the reference comparison is the whole verdict.
  info.default_checks = [](const SchemeSpec&, std::string_view) { return std::vector<std::string>{}; };
  info.validate = [](const SchemeSpec& spec) {
    const std::int64_t nb = spec.bidirectional ? spec.num_buckets / 2 : spec.num_buckets;
    if (nb < 2 || spec.num_buckets > (1 << 24))
      ThrowUsage("--num-buckets", fmt::format("must leave at least 2 buckets per direction, got {}", spec.num_buckets));
    if (spec.max_distance <= nb / 2)
      ThrowUsage("--max-distance", fmt::format("must exceed num_buckets/2 (= {}) per direction", nb / 2));
    if (spec.dtype == DType::kBFloat16 && spec.num_buckets > 256)
      ThrowUsage("--dtype bfloat16", "cannot hold bucket indices above 256 exactly");
    if (spec.dtype == DType::kFloat16 && spec.num_buckets > 2048)
      ThrowUsage("--dtype float16", "cannot hold bucket indices above 2048 exactly");
  };
  info.make = [](const SchemeSpec& spec) -> std::unique_ptr<RowSource> {
    TableInfo t;
    t.rows = spec.max_len;
    t.cols = 1;
    t.dtype = spec.dtype;
    t.meta.Set("scheme", spec.scheme);
    t.meta.Set("start", spec.start);
    t.meta.Set("max_len", spec.max_len);
    t.meta.Set("bidirectional", static_cast<std::int64_t>(spec.bidirectional ? 1 : 0));
    t.meta.Set("num_buckets", spec.num_buckets);
    t.meta.Set("max_distance", spec.max_distance);
    t.meta.Set("dtype", std::string(Traits(spec.dtype).name));
    t.meta.Set("pe_version", std::string(PE_VERSION));
    const SchemeSpec s = spec;
    return std::make_unique<QuadRowSource>(t, [s](std::int64_t row, __float128* v) {
      v[0] = static_cast<__float128>(T5Bucket(s.start + row, s.bidirectional, s.num_buckets, s.max_distance));
    });
  };
  return info;
}

}  // namespace pe
