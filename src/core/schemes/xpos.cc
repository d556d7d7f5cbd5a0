// xPos (torchscale, xpos_relative_position.py): interleaved rotary cos and
// sin tables plus the per-position scale ζ_i^(n/scale_base), and inv_freq.
#include <fmt/format.h>
#include <quadmath.h>

#include <cmath>

#include "core/base/error.h"
#include "core/base/version.h"
#include "core/schemes/quad_source.h"
#include "core/schemes/rope.h"
#include "core/schemes/rotary_tables.h"

namespace pe {
namespace {

using Q = __float128;

}  // namespace

SchemeInfo XposSchemeInfo() {
  SchemeInfo info;
  info.name = "xpos";
  info.summary = "xPos (torchscale): interleaved rotary cos, sin [L, D] plus scale [L, D/2] = ζ_i^(n/scale_base)";
  info.source = "microsoft/torchscale component/xpos_relative_position.py";
  info.tensors = {"cos", "sin", "scale", "inv_freq"};
  info.default_checks = RotaryDefaultChecks;
  info.validate = [](const SchemeSpec& spec) {
    if (spec.d_model % 2 != 0) ThrowUsage("--head-dim", "xpos needs an even head dimension");
    if (spec.start < 0) ThrowUsage("--start", "the xpos offset must be 0 or more");
    if (!(spec.scale_base > 0) || !std::isfinite(spec.scale_base)) ThrowUsage("--scale-base", "must be above 0");
  };
  info.make_set = [](const SchemeSpec& spec) {
    const std::int64_t D = spec.d_model, half = D / 2, L = spec.max_len, off = spec.start;
    std::vector<Q> inv(static_cast<std::size_t>(half));
    for (std::int64_t k = 0; k < half; ++k) inv[k] = DefaultInvFreq(spec.base, k, D);
    TableSet set;
    set.meta = RopeMetadata(spec, D, "interleaved");
    set.meta.Set("scale_base", spec.scale_base);
    // torchscale: min_pos = -(length + offset) // 2 (floor), scale rows are
    // the last `length` of arange(min_pos, min_pos + length + offset).
    const std::int64_t total = L + off;
    const std::int64_t min_pos = -((total + 1) / 2);  // floor(-total/2)
    set.meta.Set("scale_first_position", min_pos + off);
    set.meta.Set("pe_version", std::string(PE_VERSION));
    set.tensors.push_back(RotaryTable(SetTensorInfo(set.meta, "cos", L, D, spec.dtype), inv, RopeLayout::kInterleaved, true,
                                      1, off));
    set.tensors.push_back(RotaryTable(SetTensorInfo(set.meta, "sin", L, D, spec.dtype), inv, RopeLayout::kInterleaved, false,
                                      1, off));
    std::vector<Q> zeta(static_cast<std::size_t>(half));
    for (std::int64_t k = 0; k < half; ++k)  // (2k + 0.4 D) / (1.4 D) = (20k + 4D) / (14D)
      zeta[k] = static_cast<Q>(20 * k + 4 * D) / static_cast<Q>(14 * D);
    const Q sb = spec.scale_base;
    const std::int64_t n0 = min_pos + off;
    // The largest scale is ζ_0^(n0/scale_base) = (2/7)^(n0/scale_base) for
    // n0 < 0: refuse what would overflow the dtype (never write inf).
    if (n0 < 0) {
      const double ln_max = -static_cast<double>(n0) / spec.scale_base * std::log(3.5);
      if (!(ln_max < std::log(MaxFinite(spec.dtype))))
        ThrowUsage("--scale-base", fmt::format("{:.3g} with positions from {} makes scale values up to e^{:.3g}, beyond "
                                               "{}'s largest finite value {:.5g}",
                                               spec.scale_base, n0, ln_max, Traits(spec.dtype).name,
                                               MaxFinite(spec.dtype)));
    }
    set.tensors.push_back(std::make_unique<QuadRowSource>(
        SetTensorInfo(set.meta, "scale", L, half, spec.dtype), [zeta, sb, n0](std::int64_t row, Q* v) {
          const Q e = static_cast<Q>(n0 + row) / sb;
          for (std::size_t k = 0; k < zeta.size(); ++k) v[k] = powq(zeta[k], e);
        }));
    CheckInvFreqFinite(spec, inv);
    set.tensors.push_back(VectorTable(SetTensorInfo(set.meta, "inv_freq", 0, 1, spec.dtype), inv));
    return set;
  };
  return info;
}

}  // namespace pe
