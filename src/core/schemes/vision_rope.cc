#include "core/schemes/vision_rope.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <utility>
#include <vector>
#include <cmath>

#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/numerics/exact_sincos.h"
#include "core/schemes/axis_rotary.h"
#include "core/schemes/ggml_rope.h"
#include "core/schemes/quad_source.h"
#include "core/base/version.h"
#include "core/spec/engine_versions.h"

namespace pe {
namespace {

using Q = __float128;

enum class Variant { kPixtral, kQwen2Vl, kDinov3, kEva };

Variant ParseVariant(const std::string& v) {
  if (v == "pixtral") return Variant::kPixtral;
  if (v == "qwen2-vl" || v == "qwen2_vl") return Variant::kQwen2Vl;
  if (v == "dinov3") return Variant::kDinov3;
  if (v == "eva" || v == "timm-axial") return Variant::kEva;
  ThrowUsage(v.empty() ? std::string("--variant") : fmt::format("--variant '{}'", v),
             "scheme 'vision-rope' needs one of pixtral, qwen2-vl, dinov3, eva");
}

const char* VariantName(Variant v) {
  switch (v) {
    case Variant::kPixtral: return "pixtral";
    case Variant::kQwen2Vl: return "qwen2-vl";
    case Variant::kDinov3: return "dinov3";
    case Variant::kEva: return "eva";
  }
  return "";
}

// DINOv3 configs use rope_theta = 100: the default of --base for this
// variant. A base given (a flag, a key, a file's metadata) is used as given.
double DinoBase(const SchemeSpec& spec) {
  const bool given = spec.given.count("base") > 0 || spec.origin.count("--base") > 0;
  return given ? spec.base : 100.0;
}

std::string NormalizeCoords(const SchemeSpec& spec) {
  const std::string& n = spec.normalize_coords;
  if (n.empty() || n == "separate") return "separate";
  if (n == "max" || n == "min") return n;
  ThrowUsage(fmt::format("--normalize-coords '{}'", n), "expected separate (DINOv3's default), max or min");
}

// --ref-grid HxW (timm ref_feat_shape); {0, 0} when absent.
std::pair<std::int64_t, std::int64_t> RefGrid(const SchemeSpec& spec) {
  if (spec.ref_grid.empty()) return {0, 0};
  const std::string& g = spec.ref_grid;
  const auto x = g.find_first_of("xX");
  std::int64_t h = 0, w = 0;
  const auto parse = [](std::string_view t, std::int64_t* out) {
    if (t.empty()) return false;
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), *out);
    return ec == std::errc() && p == t.data() + t.size();
  };
  const bool ok = x == std::string::npos ? parse(g, &h) && (w = h, true)
                                         : parse(std::string_view(g).substr(0, x), &h) &&
                                               parse(std::string_view(g).substr(x + 1), &w);
  if (!ok || h < 1 || w < 1 || h > (std::int64_t{1} << 30) || w > (std::int64_t{1} << 30))
    ThrowUsage(fmt::format("--ref-grid '{}'", g), "expected HxW with positive integers up to 2^30, e.g. 16x16");
  return {h, w};
}

std::int64_t Rows(const SchemeSpec& spec, Variant v) {
  return spec.grid_h * spec.grid_w * (v == Variant::kQwen2Vl ? spec.frames : 1);
}

Variant Validate(const SchemeSpec& spec) {
  const Variant v = ParseVariant(spec.variant);
  const std::int64_t D = spec.d_model;
  if (D <= 0) ThrowUsage("--head-dim", "required by scheme 'vision-rope'");
  if (v == Variant::kPixtral ? D % 2 != 0 : D % 4 != 0)  // qwen2-vl, dinov3, eva: D/4 frequencies per axis
    ThrowUsage("--head-dim", fmt::format("vision-rope {} needs a multiple of {}, got {}", VariantName(v),
                                         v == Variant::kPixtral ? 2 : 4, D));
  if (spec.grid_h <= 0 || spec.grid_w <= 0) ThrowUsage("--grid", "scheme 'vision-rope' needs the patch grid, e.g. --grid 16x16");
  if (spec.grid_h > kMaxExactPosition / 4 || spec.grid_w > kMaxExactPosition / 4 ||
      spec.grid_h > (std::int64_t{1} << 40) / spec.grid_w)
    ThrowUsage("--grid", "too large");
  if (v == Variant::kQwen2Vl) {
    if (spec.frames < 1 || spec.frames > (std::int64_t{1} << 40) / (spec.grid_h * spec.grid_w))
      ThrowUsage("--frames", fmt::format("must be at least 1 (and the table not absurdly large), got {}", spec.frames));
    const std::int64_t m = spec.spatial_merge_size;
    if (m < 1 || spec.grid_h % m != 0 || spec.grid_w % m != 0)
      ThrowUsage("--spatial-merge-size", fmt::format("{} must be at least 1 and divide both grid sides ({}x{})", m,
                                                     spec.grid_h, spec.grid_w));
  } else {
    if (spec.frames != 1) ThrowUsage("--frames", fmt::format("applies to --variant qwen2-vl only"));
  }
  if (v == Variant::kEva) {
    if (!spec.ref_grid.empty()) RefGrid(spec);
  } else if (!spec.ref_grid.empty()) {
    ThrowUsage("--ref-grid", "applies to --variant eva only");
  }
  if (v == Variant::kDinov3) NormalizeCoords(spec);
  else if (!spec.normalize_coords.empty()) ThrowUsage("--normalize-coords", "applies to --variant dinov3 only");
  const std::int64_t rows = Rows(spec, v);
  if (spec.max_len != 0 && spec.max_len != rows)
    ThrowUsage("--max-len", fmt::format("vision-rope {} has {} rows for this grid; drop --max-len", VariantName(v), rows));
  if (spec.start != 0) ThrowUsage("--start", "vision-rope rows are grid cells; --start does not apply");
  CheckedTableBytes(rows, D, spec.dtype);
  return v;
}

// --semantics llama.cpp (qwen2-vl only): mtmd's encoder (tools/mtmd/models/
// qwen2vl.cpp, qwen3vl.cpp, glm4v.cpp) rotates q and k with
// ggml_rope_multi(..., d_head/2, sections {d/4, d/4, d/4, d/4},
// GGML_ROPE_TYPE_VISION, 32768, base, 1, 0, 1, 32, 1), positions
// [y, x, y, x] in 2x2 merge windows (clip.cpp, clip_image_batch_encode):
// float32 and narrower tables are that kernel's CPU recipe (GgmlMropeCache).
bool LlamaCppVision(const SchemeSpec& spec, Variant v) {
  if (spec.semantics.empty() || spec.semantics == "hf") return false;
  if (FindEngineVersion(spec.semantics).family != EngineFamily::kLlamaCpp)
    ThrowUsage(fmt::format("--semantics '{}'", spec.semantics), "vision-rope takes hf (default) or llama.cpp");
  if (v != Variant::kQwen2Vl)
    ThrowUsage(fmt::format("--semantics '{}'", spec.semantics),
               fmt::format("vision-rope has llama.cpp's recipe for --variant qwen2-vl only (ggml's VISION mode); {} is "
                           "computed by transformers' rule",
                           VariantName(v)));
  if (spec.grid_h > (std::int64_t{1} << 24) || spec.grid_w > (std::int64_t{1} << 24))
    ThrowUsage("--grid", "llama.cpp's recipe takes positions as float32 (exact up to 2^24)");
  if (spec.spatial_merge_size != 2)
    ThrowUsage("--spatial-merge-size", "llama.cpp's clip.cpp walks 2x2 merge windows only: give 2 (the default)");
  return true;
}

class GgmlVisionSource : public RowSource {
 public:
  GgmlVisionSource(TableInfo info, GgmlRopeParams g, bool cosine, AxisIdsFn ids)
      : info_(std::move(info)), g_(std::move(g)), cosine_(cosine), ids_(std::move(ids)) {}
  const TableInfo& info() const override { return info_; }
  bool concurrent_reads() const override { return true; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::int64_t pairs = g_.n_dims;  // VISION: ne0/2 pairs, (i, i + n_dims)
    std::vector<float> cache(static_cast<std::size_t>(2 * pairs));
    std::int64_t id[2];
    for (std::int64_t r = 0; r < count; ++r) {
      ids_(first + r, id);
      GgmlMropeCache(g_, {id[0], id[1], id[0], id[1]}, cache.data());
      std::byte* dst = out + static_cast<std::size_t>(r) * info_.row_bytes();
      for (std::int64_t j = 0; j < info_.cols; ++j)
        StoreFromDouble(dst, info_.dtype, static_cast<std::size_t>(j),
                        static_cast<double>(cache[static_cast<std::size_t>(2 * (j % pairs) + (cosine_ ? 0 : 1))]));
    }
  }

 private:
  TableInfo info_;
  GgmlRopeParams g_;
  bool cosine_;
  AxisIdsFn ids_;
};

struct Built {
  AxisRotaryPlan plan;  // columns of the cos table (sin: same with kSin)
  AxisIdsFn ids;
  std::int64_t lo = 0, hi = 0;
};

Built Build(const SchemeSpec& spec, Variant v) {
  Built b;
  b.plan.axes = 2;
  const std::int64_t D = spec.d_model, half = D / 2, H = spec.grid_h, W = spec.grid_w;
  switch (v) {
    case Variant::kPixtral: {
      b.plan.frequencies = PowerFrequencies(spec.base, half, 2, D);  // base^(-2i/D)
      const std::int64_t nh = (half + 1) / 2;                         // len(freqs[::2])
      for (std::int64_t j = 0; j < D; ++j) {
        const std::int64_t k = j % half;
        if (k < nh) b.plan.columns.push_back({static_cast<std::int32_t>(2 * k), 0, SinusoidColumn::kCos});
        else b.plan.columns.push_back({static_cast<std::int32_t>(2 * (k - nh) + 1), 1, SinusoidColumn::kCos});
      }
      b.ids = [W](std::int64_t r, std::int64_t* id) {
        id[0] = r / W;
        id[1] = r % W;
      };
      b.hi = std::max(H, W) - 1;
      break;
    }
    case Variant::kQwen2Vl: {
      const std::int64_t q = D / 4;
      b.plan.frequencies = PowerFrequencies(spec.base, q, 2, half);  // base^(-2k/(D/2))
      for (std::int64_t j = 0; j < D; ++j) {
        const std::int64_t k = j % half;
        b.plan.columns.push_back({static_cast<std::int32_t>(k < q ? k : k - q), k < q ? 0 : 1, SinusoidColumn::kCos});
      }
      const std::int64_t m = spec.spatial_merge_size;
      // rot_pos_emb: (h, w) ids reshaped [H/m, m, W/m, m], permuted to
      // [H/m, W/m, m, m] and flattened, repeated for each of t frames.
      b.ids = [H, W, m](std::int64_t r, std::int64_t* id) {
        const std::int64_t cell = r % (H * W);
        const std::int64_t block = cell / (m * m), within = cell % (m * m);
        id[0] = (block / (W / m)) * m + within / m;
        id[1] = (block % (W / m)) * m + within % m;
      };
      b.hi = std::max(H, W) - 1;
      break;
    }
    case Variant::kDinov3: {
      const std::int64_t q = D / 4;
      const std::string norm = NormalizeCoords(spec);
      const std::int64_t mh = norm == "separate" ? H : norm == "max" ? std::max(H, W) : std::min(H, W);
      const std::int64_t mw = norm == "separate" ? W : mh;
      const Q base = DinoBase(spec);
      for (int axis = 0; axis < 2; ++axis) {
        const std::int64_t M = axis == 0 ? mh : mw;
        const Q scale = 2 * QPi() / static_cast<Q>(M);
        for (std::int64_t k = 0; k < q; ++k) {  // 2π · base^(-4k/D) / M
          b.plan.frequencies.push_back(
              FrequencyFromQuad(scale * QPow(base, -static_cast<Q>(4 * k) / static_cast<Q>(D))));
          b.plan.turn.push_back(k == 0 || base == 1 ? M : 0);  // ω = 2π/M exactly
        }
      }
      for (std::int64_t j = 0; j < D; ++j) {
        const std::int64_t k = j % half;
        b.plan.columns.push_back({static_cast<std::int32_t>(k), k < q ? 0 : 1, SinusoidColumn::kCos});
      }
      // c = 2(i + 0.5)/M - 1 = (2i + 1 - M)/M: the id is 2i + 1 - M.
      b.ids = [W, mh, mw](std::int64_t r, std::int64_t* id) {
        id[0] = 2 * (r / W) + 1 - mh;
        id[1] = 2 * (r % W) + 1 - mw;
      };
      b.lo = std::min(1 - mh, 1 - mw);
      b.hi = std::max(2 * H - 1 - mh, 2 * W - 1 - mw);
      break;
    }
    case Variant::kEva: {
      // build_rotary_pos_embed(in_pixels=False): bands ω_k = base^(-k/(D/4))
      // (freq_bands, step 1), grid t = arange(s) [/ s · ref], pos = t·ω,
      // [y·ω | x·ω] repeat_interleave(2). With a reference grid the id
      // stays the integer i and the frequency becomes ω·ref/s (quad).
      const std::int64_t q = D / 4;
      const auto [rh, rw] = RefGrid(spec);
      const Q base = spec.base;
      for (int axis = 0; axis < 2; ++axis) {
        const std::int64_t f = axis == 0 ? H : W, ref = axis == 0 ? rh : rw;
        const Q scale = ref > 0 ? static_cast<Q>(ref) / static_cast<Q>(f) : 1;
        for (std::int64_t k = 0; k < q; ++k)
          b.plan.frequencies.push_back(FrequencyFromQuad(scale * QPow(base, -static_cast<Q>(k) / static_cast<Q>(q))));
      }
      for (std::int64_t j = 0; j < D; ++j) {
        const std::int64_t m = j / 2;  // repeat_interleave(2)
        b.plan.columns.push_back({static_cast<std::int32_t>(m), m < q ? 0 : 1, SinusoidColumn::kCos});
      }
      b.ids = [W](std::int64_t r, std::int64_t* id) {
        id[0] = r / W;
        id[1] = r % W;
      };
      b.hi = std::max(H, W) - 1;
      break;
    }
  }
  return b;
}

}  // namespace

SchemeInfo VisionRopeSchemeInfo() {
  SchemeInfo info;
  info.name = "vision-rope";
  info.summary = "2-D rotary of vision encoders (Pixtral, Qwen2-VL ViT, DINOv3, EVA-02/timm axial): cos, sin [grid cells, head_dim]";
  info.source = "huggingface/transformers models/pixtral, models/qwen2_vl (VisionRotaryEmbedding, rot_pos_emb), "
                "models/dinov3_vit; timm layers/pos_embed_sincos.py (RotaryEmbeddingCat)";
  info.tensors = {"cos", "sin"};
  info.needs_d_model = false;
  info.needs_max_len = false;
  // Rows are grid cells (not a 1-D sequence): no rotation/shift checks;
  // every cell differs from the others except qwen2-vl's repeated frames.
  info.default_checks = [](const SchemeSpec& spec, std::string_view) {
    if (spec.variant == "qwen2-vl" && spec.frames > 1) return std::vector<std::string>{};
    return std::vector<std::string>{"unique"};
  };
  info.validate = [](const SchemeSpec& spec) { LlamaCppVision(spec, Validate(spec)); };
  info.make_set = [](const SchemeSpec& spec) {
    const Variant v = Validate(spec);
    const std::int64_t rows = Rows(spec, v);
    TableSet set;
    Metadata& m = set.meta;
    m.Set("scheme", spec.scheme);
    m.Set("variant", std::string(VariantName(v)));
    m.Set("d_model", spec.d_model);
    m.Set("head_dim", spec.d_model);
    m.Set("grid", fmt::format("{}x{}", spec.grid_h, spec.grid_w));
    m.Set("grid_h", spec.grid_h);
    m.Set("grid_w", spec.grid_w);
    m.Set("max_len", rows);
    m.Set("base", v == Variant::kDinov3 ? DinoBase(spec) : spec.base);
    if (v == Variant::kQwen2Vl) {
      m.Set("frames", spec.frames);
      m.Set("spatial_merge_size", spec.spatial_merge_size);
    }
    if (v == Variant::kDinov3) m.Set("normalize_coords", NormalizeCoords(spec));
    if (v == Variant::kEva && !spec.ref_grid.empty()) {
      const auto [rh, rw] = RefGrid(spec);
      m.Set("ref_grid", fmt::format("{}x{}", rh, rw));
    }
    m.Set("layout", std::string(v == Variant::kEva ? "interleaved" : "half"));
    m.Set("dtype", std::string(Traits(spec.dtype).name));
    m.Set("pe_version", std::string(PE_VERSION));
    Built b = Build(spec, v);
    const bool ggml = LlamaCppVision(spec, v);
    if (ggml) {
      m.Set("semantics", std::string("llama.cpp"));
      if (spec.dtype != DType::kFloat64) m.Set("recipe", std::string("ggml-cpu float32"));
    }
    for (const auto kind : {SinusoidColumn::kCos, SinusoidColumn::kSin}) {
      if (ggml && spec.dtype != DType::kFloat64) {
        GgmlRopeParams g;
        g.n_dims = spec.d_model / 2;
        g.freq_base = static_cast<float>(spec.base);
        g.n_ctx_orig = 32768;
        g.mode = GgmlRopeMode::kVision;
        const int q = static_cast<int>(spec.d_model / 4);
        g.sections = {q, q, q, q};
        set.tensors.push_back(std::make_unique<GgmlVisionSource>(
            SetTensorInfo(m, kind == SinusoidColumn::kCos ? "cos" : "sin", rows, spec.d_model, spec.dtype), std::move(g),
            kind == SinusoidColumn::kCos, b.ids));
        continue;
      }
      AxisRotaryPlan p = b.plan;
      for (auto& c : p.columns) c.kind = kind;
      set.tensors.push_back(std::make_unique<AxisRotarySource>(
          SetTensorInfo(m, kind == SinusoidColumn::kCos ? "cos" : "sin", rows, spec.d_model, spec.dtype), std::move(p), b.ids,
          b.lo, b.hi));
    }
    return set;
  };
  return info;
}

}  // namespace pe
