#include "core/analysis/identify/onnx_cache_identify.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/analysis/identify/identify_rope.h"
#include "core/analysis/stats.h"
#include "core/base/error.h"
#include "core/formats/onnx.h"
#include "core/models/positional_by_value.h"

namespace pe {
namespace {

// [L, c] cache viewed as the half-layout table [L, 2c] = [cache, cache].
class DoubledCache : public RowSource {
 public:
  explicit DoubledCache(std::unique_ptr<RowSource> cache) : cache_(std::move(cache)), info_(cache_->info()) {
    info_.cols *= 2;
    info_.shape.clear();
    info_.meta = Metadata();
  }
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::size_t half = cache_->info().row_bytes();
    buf_.resize(static_cast<std::size_t>(count) * half);
    cache_->ReadRows(first, count, buf_.data());
    for (std::int64_t r = 0; r < count; ++r) {
      std::memcpy(out + r * 2 * half, buf_.data() + r * half, half);
      std::memcpy(out + r * 2 * half + half, buf_.data() + r * half, half);
    }
  }

 private:
  std::unique_ptr<RowSource> cache_;
  TableInfo info_;
  std::vector<std::byte> buf_;
};

// The sin_cache name that pairs with a cos_cache name.
std::string PartnerName(const std::string& cos) {
  std::string s = cos;
  const auto at = s.find("cos");
  if (at != std::string::npos) s.replace(at, 3, "sin");
  return s;
}

void IdentifyCache(const std::string& path, const ArtifactTensor& t, const std::vector<ArtifactTensor>& all,
                   ModelArtifact* art) {
  // Cheap only: caches up to 2^24 entries, each identified once.
  if (t.info.rows <= 2 || t.info.cols < 1 || t.info.rows * t.info.cols > (std::int64_t{1} << 24)) return;
  try {
    // A full table (an exporter's folded cos, each frequency twice) is
    // identified as it is; an onnxruntime cache [L, rotary_dim/2] as the
    // first half of one.
    const bool full = HoldsEachFrequencyTwice(*OpenOnnx(path, t.name));
    auto as_table = [&](const std::string& name) -> std::unique_ptr<RowSource> {
      if (full) return OpenOnnx(path, name);
      return std::make_unique<DoubledCache>(OpenOnnx(path, name));
    };
    std::unique_ptr<RowSource> cos_source = as_table(t.name);
    RowSource& cos = *cos_source;
    std::unique_ptr<RowSource> sin;
    const std::string partner = PartnerName(t.name);
    for (const auto& o : all)
      if (o.role == "sin_cache" && o.info.rows == t.info.rows && o.info.cols == t.info.cols &&
          (o.name == partner || (!sin && o.name != t.name && partner == t.name)))
        sin = as_table(o.name);
    const TableStats stats = ComputeStats(cos);
    RopeIdentification id = IdentifyRope(cos, stats, RopeIdentifyOptions{}, sin.get());
    if (!id.detected || id.shape.kind != RopeKind::kCos) {
      art->notes.push_back(fmt::format("{}: its values are not a RoPE cos cache{}", t.name,
                                       id.reason.empty() ? "" : " (" + id.reason + ")"));
      return;
    }
    const std::string src = fmt::format("{} (identified from its values)", t.name);
    art->settings.push_back({"rope_theta", fmt::format("{}", id.spec.base), src});
    art->settings.push_back({"rotary_dim", fmt::format("{}", id.shape.rotary_dim), src});
    std::string flags = RopeSpecFlags(id.spec);
    if (flags.find("--tensor") == std::string::npos) flags += " --tensor cos";
    if (full)
      art->notes.push_back(fmt::format("{}: {}; check it with pe verify MODEL --dataset {} --scheme rope --head-dim {} "
                                       "--max-len {}{}",
                                       t.name, id.Describe(), t.name, id.shape.rotary_dim, t.info.rows, flags));
    else
      art->notes.push_back(fmt::format("{}: an onnxruntime cache [L, rotary_dim/2], the first half of a {}; check it "
                                       "with pe verify MODEL --dataset {} --scheme rope --head-dim {} --max-len {} "
                                       "--layout cache{}",
                                       t.name, id.Describe(), t.name, id.shape.rotary_dim, t.info.rows, flags));
  } catch (const Error& e) {
    art->notes.push_back(fmt::format("{}: not identified ({})", t.name, e.what()));
  }
}

}  // namespace

void IdentifyOnnxCaches(ModelArtifact* art) {
  if (art->kind != "onnx") return;
  // Identification reads each cache whole: the first few are identified, so that a file of
  // thousands of cache-shaped initializers costs no more than a real model's handful.
  constexpr std::size_t kMaxIdentified = 8;
  const std::vector<ArtifactTensor> all = art->tensors;
  std::size_t caches = 0;
  for (const auto& t : all)
    if (t.role == "cos_cache" && ++caches <= kMaxIdentified) IdentifyCache(art->path, t, all, art);
  if (caches > kMaxIdentified)
    art->notes.push_back(fmt::format("{} cos caches: the first {} are identified from their values, the other {} not",
                                    caches, kMaxIdentified, caches - kMaxIdentified));
}

}  // namespace pe
