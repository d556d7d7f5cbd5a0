// The per-head relative attention biases (relative.h): KERPLE's log and
// power kernels (Chi et al. 2022; chijames/KERPLE, NVIDIA NeMo) and NeMo's
// Sandwich (Chi et al. 2023). Each depends on (head, distance) only, so the
// generator evaluates every (head, distance) once in quad precision, rounds
// it once to the dtype into a lookup, and fills [H, Q, K] rows (or the
// per-offset [H, L] vector) from the lookup.
#include <fmt/format.h>
#include <quadmath.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <utility>

#include "core/base/error.h"
#include "core/numerics/exact_sincos.h"
#include "core/schemes/quad_source.h"
#include "core/schemes/relative.h"

namespace pe {
namespace {

/// Most (head, distance) values a bias table precomputes (one dtype element
/// each: 128 MiB in float64).
constexpr std::int64_t kMaxLookup = std::int64_t{1} << 24;

/// Most quad cosines Sandwich evaluates (distances × d/2), about a minute.
constexpr std::int64_t kMaxSandwichWork = std::int64_t{1} << 28;

// Rows of a [H, Q, K] bias (row = h·Q + i) or of a [H, L] per-offset bias
// (row = h), from a lookup [H][D] of dtype elements and a distance rule.
class DistanceLookupSource : public RowSource {
 public:
  using DistanceFn = std::int64_t (*)(std::int64_t i, std::int64_t j, std::int64_t q, std::int64_t k);
  DistanceLookupSource(TableInfo info, std::vector<std::byte> lookup, std::int64_t distances, std::int64_t queries,
                       DistanceFn distance)
      : info_(std::move(info)), lookup_(std::move(lookup)), d_(distances), q_(queries), distance_(distance) {}
  const TableInfo& info() const override { return info_; }
  bool concurrent_reads() const override { return true; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::size_t es = Traits(info_.dtype).size;
    const std::int64_t K = info_.cols;
    for (std::int64_t r = first; r < first + count; ++r) {
      std::byte* row = out + static_cast<std::size_t>(r - first) * info_.row_bytes();
      if (!distance_) {  // offsets: row h is lookup[h][0..L)
        std::memcpy(row, lookup_.data() + static_cast<std::size_t>(r * d_) * es, info_.row_bytes());
        continue;
      }
      const std::int64_t h = r / q_, i = r % q_;
      const std::byte* head = lookup_.data() + static_cast<std::size_t>(h * d_) * es;
      for (std::int64_t j = 0; j < K; ++j)
        std::memcpy(row + static_cast<std::size_t>(j) * es, head + static_cast<std::size_t>(distance_(i, j, q_, K)) * es, es);
    }
  }

 private:
  TableInfo info_;
  std::vector<std::byte> lookup_;
  std::int64_t d_, q_;
  DistanceFn distance_;
};

std::int64_t KerpleCausal(std::int64_t i, std::int64_t j, std::int64_t, std::int64_t) { return j > i ? 0 : i - j; }
std::int64_t AbsDistance(std::int64_t i, std::int64_t j, std::int64_t, std::int64_t) { return i > j ? i - j : j - i; }
// NeMo Sandwich: |.| matrix sliced [-q:, -k:] (queries end-aligned with the
// keys), then torch.tril on the slice when not bidirectional.
std::int64_t SandwichBidir(std::int64_t i, std::int64_t j, std::int64_t q, std::int64_t k) {
  const std::int64_t r = i - j + k - q;
  return r < 0 ? -r : r;
}
std::int64_t SandwichCausal(std::int64_t i, std::int64_t j, std::int64_t q, std::int64_t k) {
  return j > i ? 0 : SandwichBidir(i, j, q, k);
}

bool Offsets(const SchemeSpec& spec) { return spec.rel_form == "offsets"; }

void CheckRelForm(const SchemeSpec& spec) {
  if (spec.rel_form != "matrix" && spec.rel_form != "offsets")
    ThrowUsage(fmt::format("--rel-form '{}'", spec.rel_form), "expected matrix ([heads, q, k]) or offsets ([heads, L])");
  if (spec.start != 0)
    ThrowUsage(ParamName(spec, "--start"), fmt::format("scheme '{}' has no start position", spec.scheme));
}

// Distances 0..D-1 the table needs: L for offsets, max(Q, K) for a matrix.
std::int64_t DistanceCount(const SchemeSpec& spec) {
  if (Offsets(spec)) return spec.max_len;
  return std::max(spec.max_len, RelativeKeyLen(spec));
}

// Validates the table size for H heads, before anything is allocated.
void CheckBiasSize(const SchemeSpec& spec, std::int64_t heads) {
  if (Offsets(spec)) {
    if (spec.max_len > kMaxWidth)
      ThrowUsage(ParamName(spec, "--max-len"),
                 fmt::format("{} offsets is above pe's maximum width of {} (2^20)", spec.max_len, kMaxWidth));
    CheckedTableBytes(heads, spec.max_len, spec.dtype);
  } else {
    const std::int64_t K = RelativeKeyLen(spec);
    if (spec.max_len > kMaxWidth)
      ThrowUsage(ParamName(spec, "--max-len"),
                 fmt::format("{} queries is above {} (2^20): the bias is precomputed per distance", spec.max_len, kMaxWidth));
    CheckedTableBytes(heads * spec.max_len, K, spec.dtype);
  }
  if (heads * DistanceCount(spec) > kMaxLookup)
    ThrowUsage("--heads/--max-len",
               fmt::format("{} heads × {} distances is above pe's {} precomputed bias values", heads, DistanceCount(spec),
                           kMaxLookup));
}

TableInfo BiasInfo(const SchemeSpec& spec, std::int64_t heads, Metadata meta) {
  TableInfo t;
  t.dtype = spec.dtype;
  t.meta = std::move(meta);
  if (Offsets(spec)) {
    t.rows = heads;
    t.cols = spec.max_len;
    t.shape = {heads, spec.max_len};
  } else {
    const std::int64_t K = RelativeKeyLen(spec);
    t.rows = heads * spec.max_len;
    t.cols = K;
    t.shape = {heads, spec.max_len, K};
  }
  return t;
}

std::string JoinList(const std::vector<double>& v) {
  std::string s;
  for (double x : v) {
    if (!s.empty()) s += ',';
    s += fmt::format("{}", x);
  }
  return s;
}

struct KerpleParams {
  std::int64_t heads;
  std::vector<double> r1, r2;  // one per head
};

KerpleParams ResolveKerple(const SchemeSpec& spec) {
  if (spec.r1.empty()) ThrowUsage(ParamName(spec, "--r1"), "kerple needs r1 (one number or one per head, e.g. 1.5,0.7)");
  if (spec.r2.empty()) ThrowUsage(ParamName(spec, "--r2"), "kerple needs r2 (one number or one per head)");
  KerpleParams p;
  p.r1 = ParseHeadList(spec.r1, ParamName(spec, "--r1"));
  p.r2 = ParseHeadList(spec.r2, ParamName(spec, "--r2"));
  const std::int64_t n1 = static_cast<std::int64_t>(p.r1.size()), n2 = static_cast<std::int64_t>(p.r2.size());
  p.heads = spec.heads > 0 ? spec.heads : std::max(n1, n2);
  if (spec.heads < 0) ThrowUsage(ParamName(spec, "--heads"), fmt::format("must be at least 1, got {}", spec.heads));
  if (p.heads > (1 << 20)) ThrowUsage(ParamName(spec, "--heads"), "at most 2^20");
  for (auto [list, flag] : {std::pair{&p.r1, "--r1"}, std::pair{&p.r2, "--r2"}}) {
    const std::int64_t n = static_cast<std::int64_t>(list->size());
    if (n != 1 && n != p.heads)
      ThrowUsage(ParamName(spec, flag), fmt::format("has {} values for {} heads (give one, or one per head)", n, p.heads));
    if (n == 1) list->assign(static_cast<std::size_t>(p.heads), list->front());
  }
  const bool power = spec.kerple_form == "power";
  for (std::int64_t h = 0; h < p.heads; ++h) {
    if (!(p.r1[h] > 0))
      ThrowUsage(ParamName(spec, "--r1"), fmt::format("must be above 0 (KERPLE's r1 > 0), got {} for head {}", p.r1[h], h));
    if (!(p.r2[h] > 0) || (power && p.r2[h] > 2))
      ThrowUsage(ParamName(spec, "--r2"),
                 fmt::format("must be {} (KERPLE's {}), got {} for head {}", power ? "in (0, 2]" : "above 0",
                             power ? "0 < r2 <= 2 for a conditionally positive definite kernel" : "r2 > 0", p.r2[h], h));
  }
  return p;
}

}  // namespace

std::vector<double> ParseHeadList(const std::string& text, const std::string& flag) {
  std::vector<double> out;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = text.find(',', at);
    std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    double v = 0;
    const char* b = item.data();
    const char* e = b + item.size();
    if (!item.empty() && *b == '+') ++b;
    auto [p, ec] = std::from_chars(b, e, v);
    if (item.empty() || ec != std::errc() || p != e || !std::isfinite(v))
      ThrowUsage(fmt::format("{} '{}'", flag, text),
                 fmt::format("expected finite numbers separated by commas; '{}' is not one", item));
    out.push_back(v);
    if (out.size() > (std::size_t{1} << 20)) ThrowUsage(flag, "at most 2^20 values");
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

__float128 KerpleBias(bool power, double r1, double r2, std::int64_t d) {
  const __float128 x = static_cast<__float128>(d);
  if (power) return d == 0 ? -static_cast<__float128>(r1) * 0 : -static_cast<__float128>(r1) * QPow(x, r2);
  return -static_cast<__float128>(r1) * log1pq(static_cast<__float128>(r2) * x);
}

__float128 SandwichBias(std::int64_t r, std::int64_t d, double base, std::int64_t h, std::int64_t heads) {
  __float128 sum = 0;
  for (std::int64_t i = 1; i <= d / 2; ++i) {
    __float128 s, c;
    SinCosQuad(r, PowerFrequency(base, 2 * i, d), &s, &c);
    sum += c - 1;  // Σ (cos - 1) = Σ cos - d/2, without cancellation
  }
  return sum * heads / (8 * static_cast<__float128>(h));
}

SchemeInfo KerpleSchemeInfo() {
  SchemeInfo info;
  info.name = "kerple";
  info.summary = "KERPLE bias per head: log -r1·log(1+r2·|i-j|) or power -r1·|i-j|^r2; [heads, q, k] or per offset";
  info.source =
      "chijames/KERPLE megatron/mpu/layers.py (ParallelKerpleLog, ParallelKerplePower); NVIDIA/NeMo "
      "position_embedding/kerple_relative_position_embedding.py";
  info.needs_d_model = false;
  // A bias, not an embedding: values are <= 0 and rows repeat across
  // heads with equal parameters; the reference comparison is the verdict.
  info.default_checks = [](const SchemeSpec&, std::string_view) { return std::vector<std::string>{}; };
  info.validate = [](const SchemeSpec& spec) {
    CheckRelForm(spec);
    if (spec.kerple_form != "log" && spec.kerple_form != "power")
      ThrowUsage(fmt::format("--kerple-form '{}'", spec.kerple_form), "expected log or power");
    const KerpleParams p = ResolveKerple(spec);
    CheckBiasSize(spec, p.heads);
    // |bias| grows with the distance: bound it at the largest one, per head,
    // so that no table holds -inf.
    const std::int64_t far = DistanceCount(spec) - 1;
    const bool power = spec.kerple_form == "power";
    const double top = MaxFinite(spec.dtype);
    for (std::int64_t h = 0; h < p.heads; ++h) {
      const __float128 b = KerpleBias(power, p.r1[h], p.r2[h], far);
      if (!(-b <= static_cast<__float128>(top)))
        ThrowUsage(ParamName(spec, "--r1"),
                   fmt::format("{} (r2 {}, head {}) makes biases down to {:.4g} at distance {}: beyond {}'s range "
                               "(±{:.6g})",
                               p.r1[h], p.r2[h], h, static_cast<double>(b), far, Traits(spec.dtype).name, top));
    }
  };
  info.make = [](const SchemeSpec& spec) -> std::unique_ptr<RowSource> {
    const KerpleParams p = ResolveKerple(spec);
    const bool power = spec.kerple_form == "power";
    const std::int64_t D = DistanceCount(spec);
    const std::size_t es = Traits(spec.dtype).size;
    std::vector<std::byte> lookup(static_cast<std::size_t>(p.heads * D) * es);
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t d = 0; d < D; ++d)
        StoreQuad(lookup.data(), spec.dtype, static_cast<std::size_t>(h * D + d), KerpleBias(power, p.r1[h], p.r2[h], d));
    Metadata m = RelativeMetadata(spec);
    m.Set("heads", p.heads);
    if (!Offsets(spec)) m.Set("key_len", RelativeKeyLen(spec));
    m.Set("kerple_form", spec.kerple_form);
    m.Set("r1", JoinList(p.r1));
    m.Set("r2", JoinList(p.r2));
    m.Set("bidirectional", static_cast<std::int64_t>(spec.bidirectional ? 1 : 0));
    m.Set("rel_form", spec.rel_form);
    TableInfo t = BiasInfo(spec, p.heads, std::move(m));
    DistanceLookupSource::DistanceFn fn = Offsets(spec) ? nullptr : spec.bidirectional ? AbsDistance : KerpleCausal;
    return std::make_unique<DistanceLookupSource>(t, std::move(lookup), D, spec.max_len, fn);
  };
  return info;
}

SchemeInfo SandwichSchemeInfo() {
  SchemeInfo info;
  info.name = "sandwich";
  info.summary = "Sandwich bias (NeMo): (sum_{i=1..d/2} cos(r·b^(-2i/d)) - d/2) / (8h/H) per head; [heads, q, k] or per offset";
  info.source = "NVIDIA/NeMo nlp/modules/common/megatron/position_embedding/sandwich_relative_position_embedding.py";
  info.default_checks = [](const SchemeSpec&, std::string_view) { return std::vector<std::string>{}; };
  info.validate = [](const SchemeSpec& spec) {
    CheckRelForm(spec);
    if (spec.d_model % 2 != 0)
      ThrowUsage(ParamName(spec, "--d-model"),
                 fmt::format("sandwich needs an even d' (NeMo sums cos over i = 1..d'/2), got {}", spec.d_model));
    if (spec.heads < 0) ThrowUsage(ParamName(spec, "--heads"), fmt::format("must be at least 1, got {}", spec.heads));
    const std::int64_t H = spec.heads > 0 ? spec.heads : 1;
    if (H > (1 << 20)) ThrowUsage(ParamName(spec, "--heads"), "at most 2^20");
    CheckBiasSize(spec, H);
    if (DistanceCount(spec) * (spec.d_model / 2) > kMaxSandwichWork)
      ThrowUsage("--d-model/--max-len",
                 fmt::format("{} distances × {} cosines is above pe's limit of {} quad-precision cosines",
                             DistanceCount(spec), spec.d_model / 2, kMaxSandwichWork));
    std::vector<Frequency> w;
    for (std::int64_t i = 1; i <= spec.d_model / 2; ++i) w.push_back(PowerFrequency(spec.base, 2 * i, spec.d_model));
    CheckAngleDomain(w, 0, DistanceCount(spec) - 1);
  };
  info.make = [](const SchemeSpec& spec) -> std::unique_ptr<RowSource> {
    const std::int64_t H = spec.heads > 0 ? spec.heads : 1;
    const std::int64_t D = DistanceCount(spec), d = spec.d_model;
    std::vector<Frequency> w;
    for (std::int64_t i = 1; i <= d / 2; ++i) w.push_back(PowerFrequency(spec.base, 2 * i, d));
    // Σ_i (cos(r·ω_i) - 1) once per distance, then one scale per head.
    std::vector<__float128> sums(static_cast<std::size_t>(D));
    for (std::int64_t r = 0; r < D; ++r) {
      __float128 sum = 0;
      for (const Frequency& f : w) {
        __float128 s, c;
        SinCosQuad(r, f, &s, &c);
        sum += c - 1;
      }
      sums[static_cast<std::size_t>(r)] = sum;
    }
    // Head 1 has the largest scale H/8: refuse a table whose bias would be
    // -inf in the dtype before any is written.
    __float128 low = 0;
    for (__float128 v : sums) low = v < low ? v : low;
    const double top = MaxFinite(spec.dtype);
    if (!(-low * H / 8 <= static_cast<__float128>(top)))
      ThrowUsage(ParamName(spec, "--heads"),
                 fmt::format("{} heads with --d-model {} make biases down to {:.4g}: beyond {}'s range (±{:.6g})", H,
                             d, static_cast<double>(low * H / 8), Traits(spec.dtype).name, top));
    const std::size_t es = Traits(spec.dtype).size;
    std::vector<std::byte> lookup(static_cast<std::size_t>(H * D) * es);
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t r = 0; r < D; ++r)
        StoreQuad(lookup.data(), spec.dtype, static_cast<std::size_t>(h * D + r),
                  sums[static_cast<std::size_t>(r)] * H / (8 * static_cast<__float128>(h + 1)));
    Metadata m = RelativeMetadata(spec);
    m.Set("d_model", d);
    m.Set("base", spec.base);
    m.Set("heads", H);
    if (!Offsets(spec)) m.Set("key_len", RelativeKeyLen(spec));
    m.Set("bidirectional", static_cast<std::int64_t>(spec.bidirectional ? 1 : 0));
    m.Set("rel_form", spec.rel_form);
    TableInfo t = BiasInfo(spec, H, std::move(m));
    DistanceLookupSource::DistanceFn fn = Offsets(spec) ? nullptr : spec.bidirectional ? SandwichBidir : SandwichCausal;
    return std::make_unique<DistanceLookupSource>(t, std::move(lookup), D, spec.max_len, fn);
  };
  return info;
}

}  // namespace pe
