// `learned`: a learned absolute position table.
//  - Drawn: entry (p, j) = σ·z_k, k = p·d + j, z ~ N(0, 1) by Box–Muller:
//    pair m = floor(k/2) takes two SplitMix64 counter values (2m and 2m+1):
//      u1 = ((h(2m) >> 11) + 1)·2^-53 ∈ (0, 1],  u2 = (h(2m+1) >> 11)·2^-53 ∈ [0, 1)
//      z_2m = sqrt(-2 ln u1)·cos(2π u2),  z_2m+1 = sqrt(-2 ln u1)·sin(2π u2)
//    evaluated in quad precision and rounded once, so the table depends only
//    on (seed, σ, d, positions): identical on every machine and for any
//    block split (row p is the same whatever --max-len is).
//  - Imported (--init-from FILE): any table pe reads (NPY, safetensors with
//    --tensor NAME, HDF5, CSV, JSON), converted to --dtype.
#include <fmt/format.h>
#include <quadmath.h>

#include <cmath>

#include "core/base/error.h"
#include "core/formats/format.h"
#include "core/schemes/learned.h"
#include "core/schemes/quad_source.h"
#include "core/base/version.h"

namespace pe {

std::uint64_t SplitMix64At(std::uint64_t seed, std::uint64_t counter) {
  std::uint64_t z = seed + (counter + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void LearnedNormalPair(std::uint64_t seed, std::uint64_t pair, __float128* z_even, __float128* z_odd) {
  const std::uint64_t a = SplitMix64At(seed, 2 * pair), b = SplitMix64At(seed, 2 * pair + 1);
  const __float128 u1 = ldexpq(static_cast<__float128>((a >> 11) + 1), -53);
  const __float128 u2 = ldexpq(static_cast<__float128>(b >> 11), -53);
  const __float128 r = sqrtq(-2 * logq(u1));
  __float128 s, c;
  sincosq(2 * M_PIq * u2, &s, &c);
  *z_even = r * c;
  *z_odd = r * s;
}

namespace {

// Reads an imported table's first `rows` rows, converting to `dtype`.
class ConvertSource : public RowSource {
 public:
  ConvertSource(std::unique_ptr<RowSource> inner, TableInfo info) : inner_(std::move(inner)), info_(std::move(info)) {}
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const TableInfo& in = inner_->info();
    if (in.dtype == info_.dtype) return inner_->ReadRows(first, count, out);
    buf_.resize(static_cast<std::size_t>(count) * in.row_bytes());
    inner_->ReadRows(first, count, buf_.data());
    const std::size_t n = static_cast<std::size_t>(count * info_.cols);
    for (std::size_t k = 0; k < n; ++k)  // the source value is exact: one rounding
      StoreFromDouble(out, info_.dtype, k, LoadAsDouble(buf_.data(), in.dtype, k));
  }

 private:
  std::unique_ptr<RowSource> inner_;
  TableInfo info_;
  std::vector<std::byte> buf_;
};

}  // namespace

SchemeInfo LearnedSchemeInfo() {
  SchemeInfo info;
  info.name = "learned";
  info.summary = "learned absolute table: N(0, σ²) from a portable seeded generator, or imported with --init-from";
  info.source = "BERT/GPT-2 style nn.Embedding(max_len, d) initialised N(0, 0.02²)";
  info.needs_d_model = false;
  info.needs_max_len = false;
  // No sinusoid structure: rotation and shift do not apply. Drawn rows
  // (σ > 0) differ with probability 1; an imported table may be anything.
  info.default_checks = [](const SchemeSpec& spec, std::string_view) {
    return spec.init_from.empty() && spec.sigma > 0 ? std::vector<std::string>{"unique"} : std::vector<std::string>{};
  };
  info.validate = [](const SchemeSpec& spec) {
    if (!spec.init_from.empty()) return;
    if (spec.d_model <= 0) ThrowUsage("--d-model", "required by scheme 'learned' (or import one with --init-from)");
    if (spec.max_len <= 0) ThrowUsage("--max-len", "required by scheme 'learned' (or import one with --init-from)");
    if (spec.start < 0) ThrowUsage("--start", "must be 0 or more for 'learned'");
    if (!(spec.sigma >= 0) || !std::isfinite(spec.sigma)) ThrowUsage("--sigma", "must be a finite number >= 0");
    // |z| <= sqrt(-2 ln 2^-53) < 8.58 for every Box–Muller sample here, so
    // σ·8.58 below the dtype's largest finite value keeps every value finite.
    if (spec.init_from.empty() && spec.sigma * 8.58 > MaxFinite(spec.dtype))
      ThrowUsage("--sigma", fmt::format("{:.3g} can make values up to 8.58·σ (the largest normal sample), "
                                        "beyond {}'s largest finite value {:.5g}",
                                        spec.sigma, Traits(spec.dtype).name, MaxFinite(spec.dtype)));
    CheckedTableBytes(spec.max_len, spec.d_model, spec.dtype);
  };
  info.make = [](const SchemeSpec& spec) -> std::unique_ptr<RowSource> {
    TableInfo t;
    t.dtype = spec.dtype;
    t.meta.Set("scheme", spec.scheme);
    if (!spec.init_from.empty()) {
      OpenOptions o;
      o.dataset = spec.tensor;
      auto src = OpenTable(spec.init_from, o);
      const TableInfo& in = src->info();
      if (spec.d_model > 0 && spec.d_model != in.cols)
        ThrowUsage("--d-model", fmt::format("'{}' has {} columns, not {}", spec.init_from, in.cols, spec.d_model));
      if (spec.max_len > in.rows)
        ThrowUsage("--max-len", fmt::format("'{}' has only {} rows", spec.init_from, in.rows));
      t.rows = spec.max_len > 0 ? spec.max_len : in.rows;
      t.cols = in.cols;
      t.meta.Set("init_from", spec.init_from);
      if (!spec.tensor.empty()) t.meta.Set("tensor", spec.tensor);  // replays as --tensor (pe verify)
      if (!in.name.empty()) t.meta.Set("source_tensor", in.name);
      for (const auto& [k, v] : in.meta.entries())
        if (k != "scheme" && k != "dtype") t.meta.Set("source_" + k, v);
      t.meta.Set("d_model", t.cols);
      t.meta.Set("max_len", t.rows);
      t.meta.Set("dtype", std::string(Traits(spec.dtype).name));
      t.meta.Set("pe_version", std::string(PE_VERSION));
      return std::make_unique<ConvertSource>(std::move(src), std::move(t));
    }
    t.rows = spec.max_len;
    t.cols = spec.d_model;
    t.meta.Set("d_model", spec.d_model);
    t.meta.Set("max_len", spec.max_len);
    t.meta.Set("start", spec.start);
    t.meta.Set("sigma", spec.sigma);
    t.meta.Set("seed", static_cast<std::int64_t>(spec.seed));
    t.meta.Set("generator", std::string("splitmix64-counter+box-muller-quad"));
    t.meta.Set("dtype", std::string(Traits(spec.dtype).name));
    t.meta.Set("pe_version", std::string(PE_VERSION));
    const std::uint64_t seed = spec.seed, d = static_cast<std::uint64_t>(spec.d_model),
                        p0 = static_cast<std::uint64_t>(spec.start);
    const __float128 sigma = spec.sigma;
    return std::make_unique<QuadRowSource>(t, [=](std::int64_t row, __float128* v) {
      const std::uint64_t base = (p0 + static_cast<std::uint64_t>(row)) * d;
      __float128 z[2];
      std::uint64_t have = ~std::uint64_t{0};  // the Box–Muller pair held in z
      for (std::uint64_t j = 0; j < d; ++j) {
        const std::uint64_t k = base + j;
        if (k / 2 != have) LearnedNormalPair(seed, have = k / 2, &z[0], &z[1]);
        v[j] = sigma * z[k % 2];
      }
    });
  };
  return info;
}

}  // namespace pe
