#include "core/schemes/mrope.h"

#include "core/spec/position_list.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/numerics/exact_sincos.h"
#include "core/formats/format.h"
#include "core/spec/hf_config.h"
#include "core/schemes/axis_rotary.h"
#include "core/schemes/quad_source.h"
#include "core/schemes/rope.h"
#include "core/base/version.h"
#include "core/spec/engine_versions.h"

namespace pe {
namespace {

using Q = __float128;

bool ParseInt(std::string_view s, std::int64_t* out) {
  if (s.empty()) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t next = s.find(sep, pos);
    out.push_back(s.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos));
    if (next == std::string_view::npos) return out;
    pos = next + 1;
  }
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// The config's mrope_section / mrope_interleaved (rope_scaling or v5
// rope_parameters; multimodal configs keep them in text_config).
void ReadMropeConfig(const std::string& path, SchemeSpec* spec) {
  const std::string what = fmt::format("--hf-config '{}'", path);
  const nlohmann::json c = ReadHfConfigJson(path, what, true);  // under the model-folder rule
  nlohmann::json rs;
  if (c.contains("rope_scaling") && c["rope_scaling"].is_object()) rs = c["rope_scaling"];
  if (c.contains("rope_parameters") && c["rope_parameters"].is_object()) rs = c["rope_parameters"];
  if (!rs.is_object()) return;
  if (spec->mrope_section.empty() && rs.contains("mrope_section")) {
    const auto& s = rs["mrope_section"];
    if (!s.is_array()) ThrowInput(what, "rope_scaling.mrope_section is not a list");
    std::string text;
    for (const auto& v : s) {
      if (!v.is_number_integer()) ThrowInput(what, "rope_scaling.mrope_section holds a non-integer");
      text += fmt::format("{}{}", text.empty() ? "" : ",", v.get<std::int64_t>());
    }
    spec->mrope_section = text;
  }
  if (rs.contains("mrope_interleaved") && rs["mrope_interleaved"].is_boolean() && rs["mrope_interleaved"].get<bool>())
    spec->mrope_interleaved = true;
}

// The spec the frequencies are computed from: --hf-config applied (its
// rope_scaling type "mrope", Qwen2-VL's marker, is the default frequencies).
SchemeSpec Resolved(const SchemeSpec& in) {
  SchemeSpec spec = WithHfConfig(in);
  if (!in.hf_config.empty()) ReadMropeConfig(in.hf_config, &spec);
  if (spec.rope_scaling == "mrope" || spec.rope_scaling == "default") spec.rope_scaling = "none";
  spec.hf_config.clear();  // applied once
  return spec;
}

MropePositions Positions(const SchemeSpec& spec) {
  if (!spec.positions.empty() && !spec.mrope_layout.empty())
    ThrowUsage("--positions", "give either --positions or --mrope-layout, not both");
  MropePositions p;
  if (!spec.positions.empty()) {
    p = ReadMropePositions(spec.positions);
  } else if (!spec.mrope_layout.empty()) {
    p = MropePositionsFromLayout(spec.mrope_layout);
  } else {
    if (spec.max_len <= 0)
      ThrowUsage("--max-len", "scheme 'mrope' needs --positions FILE, --mrope-layout SPEC or --max-len N");
    if (spec.max_len > kMaxMropeTokens)
      ThrowUsage("--max-len", fmt::format("{} tokens is above mrope's maximum of {} (2^22)", spec.max_len, kMaxMropeTokens));
    p.len = spec.max_len;
    p.source = "sequence";
    p.ids.resize(static_cast<std::size_t>(3 * p.len));
    for (int a = 0; a < 3; ++a)
      for (std::int64_t r = 0; r < p.len; ++r) p.ids[static_cast<std::size_t>(a * p.len + r)] = spec.start + r;
    return p;
  }
  if (spec.start != 0)
    ThrowUsage("--start", "applies to --max-len sequences only; --positions and --mrope-layout give every id");
  if (spec.max_len != 0 && spec.max_len != p.len)
    ThrowUsage("--max-len", fmt::format("the positions hold {} tokens; drop --max-len", p.len));
  return p;
}

struct MropeSetup {
  SchemeSpec spec;
  RopeFrequencies freqs;
  std::array<std::int64_t, 3> section{};
  MropePositions positions;
  /// --semantics llama.cpp: ggml_rope_multi's parameters (mode MROPE or
  /// IMROPE, the four sections t, h, w, e as rope.dimension_sections gives them).
  std::optional<GgmlRopeParams> ggml;
};

// --semantics llama.cpp: "t,h,w" or "t,h,w,e" (GGUF's
// {arch}.rope.dimension_sections, four numbers). ggml_mrope_cache_init takes
// pair i's section from i % (t+h+w+e), so the sum need not be rotary_dim/2;
// it asserts sect_dims <= ne0 (the head dim) and ggml_compute_forward_rope
// that one of t, h, w is above 0.
std::array<int, 4> ParseGgmlMropeSection(const std::string& text, std::int64_t head_dim) {
  std::string s = text;
  for (char& c : s)
    if (c == '[' || c == ']') c = ' ';
  const auto parts = Split(s, ',');
  const std::string what = fmt::format("--mrope-section '{}'", text);
  if (parts.size() != 3 && parts.size() != 4)
    ThrowUsage(what, "expected three or four sizes t,h,w[,e] (e.g. 24,20,20,0, as rope.dimension_sections)");
  std::array<int, 4> out{0, 0, 0, 0};
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::int64_t v = 0;
    if (!ParseInt(Trim(parts[i]), &v) || v < 0 || v > kMaxWidth) ThrowUsage(what, "expected integers >= 0 (e.g. 24,20,20,0)");
    out[i] = static_cast<int>(v);
    sum += v;
  }
  if (out[0] + out[1] + out[2] == 0) ThrowUsage(what, "ggml_rope_multi needs one of t, h, w above 0");
  if (sum > head_dim)
    ThrowUsage(what, fmt::format("the sections sum to {}, above the head dim {} (ggml_mrope_cache_init asserts "
                                 "sect_dims <= ne0)",
                                 sum, head_dim));
  return out;
}

MropeSetup Setup(const SchemeSpec& in) {
  MropeSetup s;
  s.spec = Resolved(in);
  if (s.spec.d_model <= 0) ThrowUsage("--head-dim", "required by scheme 'mrope' (or give --hf-config)");
  if (s.spec.layout != "" && s.spec.layout != "half")
    ThrowUsage(fmt::format("--layout '{}'", s.spec.layout), "M-RoPE tables are in the half layout (rotate_half) only");
  // mlx-lm's initialize_rope (rope_utils.py @060aa43) builds nn.RoPE for
  // rope_type mrope: 1-D over the token index, mrope_section unused.
  if (SemanticsFamily(s.spec.semantics) == EngineFamily::kMlxLm)
    ThrowUsage(fmt::format("--semantics '{}'", s.spec.semantics),
               "mlx-lm's mrope is 1-D (rope_utils.py initialize_rope: nn.RoPE over the token index, mrope_section "
               "unused): give --scheme rope");
  s.freqs = ComputeRopeFrequencies(s.spec);
  const std::int64_t half = s.freqs.dim / 2;
  if (s.spec.mrope_section.empty())
    ThrowUsage("--mrope-section", fmt::format("required by scheme 'mrope': three section sizes summing to rotary_dim/2 = {} "
                                              "(Qwen2-VL: 16,24,24 for head_dim 128), or --hf-config",
                                              half));
  if (s.freqs.ggml) {
    // llama.cpp (ggml_rope_multi): the stream of each pair as ggml picks it,
    // the fourth (e) section included.
    s.ggml = *s.freqs.ggml;
    s.ggml->mode = s.spec.mrope_interleaved ? GgmlRopeMode::kImrope : GgmlRopeMode::kMrope;
    s.ggml->sections = ParseGgmlMropeSection(s.spec.mrope_section, std::max(s.spec.d_model, s.freqs.dim));
    for (int a = 0; a < 3; ++a) s.section[static_cast<std::size_t>(a)] = s.ggml->sections[static_cast<std::size_t>(a)];
  } else {
    if (Split(s.spec.mrope_section, ',').size() == 4)
      ThrowUsage(fmt::format("--mrope-section '{}'", s.spec.mrope_section),
                 "a fourth (e) section is llama.cpp's (GGUF rope.dimension_sections): give --semantics llama.cpp, "
                 "or the first three (transformers' mrope_section)");
    s.section = ParseMropeSection(s.spec.mrope_section, half);
  }
  s.positions = Positions(s.spec);
  if (s.ggml && s.spec.dtype != DType::kFloat64)
    for (std::int64_t v : s.positions.ids)
      if (v > (std::int64_t{1} << 24) || v < -(std::int64_t{1} << 24))
        ThrowUsage("--positions", fmt::format("llama.cpp's recipe takes positions as float32 (exact up to 2^24 = "
                                              "16777216); position {} asked",
                                              v));
  CheckedTableBytes(s.positions.len, s.freqs.dim, s.spec.dtype);
  return s;
}

}  // namespace

SchemeSpec MropeFrequencySpec(const SchemeSpec& spec) { return Resolved(spec); }

std::array<std::int64_t, 3> ParseMropeSection(const std::string& text, std::int64_t half) {
  std::string s = text;
  for (char& c : s)
    if (c == '[' || c == ']') c = ' ';
  const auto parts = Split(s, ',');
  std::array<std::int64_t, 3> out{};
  const std::string what = fmt::format("--mrope-section '{}'", text);
  if (parts.size() != 3) ThrowUsage(what, "expected three sizes t,h,w (e.g. 16,24,24)");
  for (int i = 0; i < 3; ++i)
    if (!ParseInt(Trim(parts[static_cast<std::size_t>(i)]), &out[static_cast<std::size_t>(i)]) || out[static_cast<std::size_t>(i)] < 0 ||
        out[static_cast<std::size_t>(i)] > kMaxWidth)
      ThrowUsage(what, "expected three integers >= 0 (e.g. 16,24,24)");
  if (out[0] + out[1] + out[2] != half)
    ThrowUsage(what, fmt::format("the sections sum to {}, but the rotary dimension has {} frequencies (rotary_dim/2)",
                                 out[0] + out[1] + out[2], half));
  return out;
}

std::vector<int> MropeAxes(const std::array<std::int64_t, 3>& section, std::int64_t half, bool interleaved) {
  std::vector<int> axis(static_cast<std::size_t>(half), 0);
  for (std::int64_t i = 0; i < half; ++i) {
    int a = 0;
    if (interleaved) {
      // apply_interleaved_mrope: freqs_t[..., offset:3·s:3] = freqs[axis][...]
      if (i % 3 == 1 && i < 3 * section[1]) a = 1;
      if (i % 3 == 2 && i < 3 * section[2]) a = 2;
    } else {
      // apply_multimodal_rotary_pos_emb: split by sections, chunk k takes axis k % 3.
      a = i < section[0] ? 0 : i < section[0] + section[1] ? 1 : 2;
    }
    axis[static_cast<std::size_t>(i)] = a;
  }
  return axis;
}

MropePositions MropePositionsFromLayout(const std::string& layout) {
  const std::string what = fmt::format("--mrope-layout '{}'", layout);
  MropePositions p;
  p.source = "layout:" + layout;
  // First pass: the items and the token count (bounded before allocating).
  struct Item {
    bool text;
    std::int64_t n, t, h, w;
  };
  std::vector<Item> items;
  std::int64_t total = 0;
  for (std::string_view raw : Split(layout, ',')) {
    const std::string_view item = Trim(raw);
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos)
      ThrowUsage(what, fmt::format("item '{}' is not KIND:SIZE (text:N, image:TxHxW, video:TxHxW)", item));
    const std::string_view kind = item.substr(0, colon), size = item.substr(colon + 1);
    Item it{};
    if (kind == "text") {
      it.text = true;
      if (!ParseInt(size, &it.n) || it.n < 0 || it.n > kMaxMropeTokens)
        ThrowUsage(what, fmt::format("'{}': text takes a token count, e.g. text:5", item));
    } else if (kind == "image" || kind == "video") {
      const auto dims = Split(size, 'x');
      std::int64_t v[3] = {1, 0, 0};
      const std::size_t off = dims.size() == 2 ? 1 : 0;
      bool ok = dims.size() == 2 || dims.size() == 3;
      for (std::size_t d = 0; ok && d < dims.size(); ++d)
        ok = ParseInt(dims[d], &v[d + off]) && v[d + off] >= 1 && v[d + off] <= kMaxMropeTokens;
      if (!ok) ThrowUsage(what, fmt::format("'{}': {} takes TxHxW (or HxW) positive sizes, e.g. {}:1x4x6", item, kind, kind));
      it.t = v[0];
      it.h = v[1];
      it.w = v[2];
      if (it.t > kMaxMropeTokens / it.h || it.t * it.h > kMaxMropeTokens / it.w)
        ThrowUsage(what, fmt::format("'{}' has more than {} tokens", item, kMaxMropeTokens));
      it.n = it.t * it.h * it.w;
    } else {
      ThrowUsage(what, fmt::format("unknown item kind '{}' (text, image, video)", kind));
    }
    total += it.n;
    if (total > kMaxMropeTokens)
      ThrowUsage(what, fmt::format("more than {} tokens (2^22, pe's M-RoPE maximum)", kMaxMropeTokens));
    items.push_back(it);
  }
  if (total == 0) ThrowUsage(what, "no tokens");
  p.len = total;
  p.ids.resize(static_cast<std::size_t>(3 * total));
  std::int64_t r = 0, next = 0;  // next = max(previous ids) + 1
  for (const Item& it : items) {
    const std::int64_t s = next;
    if (it.text) {
      for (std::int64_t k = 0; k < it.n; ++k, ++r)
        for (int a = 0; a < 3; ++a) p.ids[static_cast<std::size_t>(a * total + r)] = s + k;
      if (it.n > 0) next = s + it.n;
    } else {
      for (std::int64_t t = 0; t < it.t; ++t)
        for (std::int64_t h = 0; h < it.h; ++h)
          for (std::int64_t w = 0; w < it.w; ++w, ++r) {
            p.ids[static_cast<std::size_t>(r)] = s + t;
            p.ids[static_cast<std::size_t>(total + r)] = s + h;
            p.ids[static_cast<std::size_t>(2 * total + r)] = s + w;
          }
      next = s + std::max({it.t, it.h, it.w});
    }
  }
  return p;
}

namespace {

// --semantics llama.cpp, float32 and narrower tables: ggml's CPU recipe
// (GgmlMropeCache: the theta_scale recurrence of every stream, each pair
// reading its own), positions (t, h, w, e) with e = 0 as llama.cpp builds
// them for text (llm_graph_input_pos::set_input: "4th dim is 0") and image
// tokens (mtmd_image_tokens_get_decoder_pos, MTMD_POS_TYPE_MROPE: z = 0).
class GgmlMropeSource : public RowSource {
 public:
  GgmlMropeSource(TableInfo info, GgmlRopeParams g, bool cosine, std::shared_ptr<const MropePositions> ids)
      : info_(std::move(info)), g_(std::move(g)), cosine_(cosine), ids_(std::move(ids)) {}
  const TableInfo& info() const override { return info_; }
  bool concurrent_reads() const override { return true; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::int64_t half = g_.n_dims / 2;
    std::vector<float> cache(static_cast<std::size_t>(g_.n_dims));
    for (std::int64_t r = 0; r < count; ++r) {
      const std::int64_t row = first + r;
      GgmlMropeCache(g_, {ids_->at(0, row), ids_->at(1, row), ids_->at(2, row), 0}, cache.data());
      std::byte* dst = out + static_cast<std::size_t>(r) * info_.row_bytes();
      for (std::int64_t j = 0; j < info_.cols; ++j) {
        const float v = cache[static_cast<std::size_t>(2 * (j % half) + (cosine_ ? 0 : 1))];
        StoreFromDouble(dst, info_.dtype, static_cast<std::size_t>(j), static_cast<double>(v));
      }
    }
  }

 private:
  TableInfo info_;
  GgmlRopeParams g_;
  bool cosine_;
  std::shared_ptr<const MropePositions> ids_;
};

}  // namespace

MropePositions ReadMropePositions(const std::string& path) {
  const std::string what = fmt::format("--positions '{}'", path);
  {
    std::vector<std::int64_t> shape, ids;
    if (ReadIntegerNpyIds(path, what, 3 * kMaxMropeTokens, &shape, &ids)) {
      // Drop a batch axis of one: [1, L] -> [L], [3, 1, L] -> [3, L].
      if (shape.size() == 3 && shape[0] == 3 && shape[1] == 1) shape = {3, shape[2]};
      if (shape.size() == 2 && shape[0] == 1) shape = {shape[1]};
      const bool one_d = shape.size() == 1;
      if (!one_d && !(shape.size() == 2 && shape[0] == 3)) {
        std::string s;
        for (auto d : shape) s += fmt::format("{}{}", s.empty() ? "" : ", ", d);
        ThrowInput(what, fmt::format("shape [{}]: expected [3, L] or [3, 1, L] (t, h, w ids) or [L] / [1, L] "
                                     "(t = h = w)",
                                     s));
      }
      const std::int64_t len = one_d ? shape[0] : shape[1];
      if (len < 1 || len > kMaxMropeTokens)
        ThrowInput(what, fmt::format("{} tokens: expected 1 to {} (2^22)", len, kMaxMropeTokens));
      MropePositions p;
      p.len = len;
      p.source = "file:" + path;
      p.ids.resize(static_cast<std::size_t>(3 * len));
      for (std::size_t k = 0; k < ids.size(); ++k) {
        if (ids[k] > kMaxExactPosition || ids[k] < -kMaxExactPosition)
          ThrowInput(what, fmt::format("value {} (element {}) is beyond ±2^40, where pe's exactness bounds are proved",
                                       ids[k], k));
        if (one_d) {
          for (int a = 0; a < 3; ++a) p.ids[static_cast<std::size_t>(a * len) + k] = ids[k];
        } else {
          p.ids[k] = ids[k];
        }
      }
      return p;
    }
  }
  std::unique_ptr<RowSource> src;
  try {
    src = OpenTable(path);
  } catch (const Error& e) {
    std::string why = e.what();  // the reader names the file: keep one name
    const std::string named = "'" + path + "': ";
    if (why.rfind(named, 0) == 0) why.erase(0, named.size());
    ThrowInput(what, why);
  }
  const TableInfo& info = src->info();
  const std::vector<std::int64_t> shape = LogicalShape(info);
  std::int64_t len = 0;
  bool one_d = false;
  if (shape.size() == 2 && shape[0] == 3) {
    len = shape[1];
  } else if (shape.size() == 1 || (shape.size() == 2 && shape[1] == 1)) {  // [L], or one CSV column [L, 1]
    len = shape[0];
    one_d = true;
  } else {
    std::string s;
    for (auto d : shape) s += fmt::format("{}{}", s.empty() ? "" : ", ", d);
    ThrowInput(what, fmt::format("shape [{}]: expected [3, L] (t, h, w ids) or [L] (t = h = w)", s));
  }
  if (len < 1 || len > kMaxMropeTokens)
    ThrowInput(what, fmt::format("{} tokens: expected 1 to {} (2^22)", len, kMaxMropeTokens));
  const DenseTable d = ReadAll(*src, 3 * kMaxMropeTokens);
  MropePositions p;
  p.len = len;
  p.source = "file:" + path;
  p.ids.resize(static_cast<std::size_t>(3 * len));
  const std::size_t n = d.values.size();
  for (std::size_t k = 0; k < n; ++k) {
    const double v = d.values[k];
    if (!std::isfinite(v) || v != std::floor(v))
      ThrowInput(what, fmt::format("value {} (element {}) is not an integer position id", v, k));
    if (std::fabs(v) > static_cast<double>(kMaxExactPosition))
      ThrowInput(what, fmt::format("value {} (element {}) is beyond ±2^40, where pe's exactness bounds are proved", v, k));
    const auto id = static_cast<std::int64_t>(v);
    if (one_d) {
      for (int a = 0; a < 3; ++a) p.ids[static_cast<std::size_t>(a * len) + k] = id;
    } else {
      p.ids[k] = id;  // row-major [3, L] is the layout of ids
    }
  }
  return p;
}

SchemeInfo MropeSchemeInfo() {
  SchemeInfo info;
  info.name = "mrope";
  info.summary = "multimodal RoPE (Qwen2-VL, Qwen2.5-VL; Qwen3-VL interleaved): cos, sin [L, dim] from (t, h, w) ids";
  info.source = "huggingface/transformers models/qwen2_vl (apply_multimodal_rotary_pos_emb, get_rope_index), "
                "models/qwen3_vl (apply_interleaved_mrope)";
  info.tensors = {"cos", "sin", "inv_freq"};
  info.needs_d_model = false;
  info.needs_max_len = false;
  // Ids built from a layout or a sequence are distinct per token; a file's
  // may repeat (padding), so nothing is assumed of them.
  info.default_checks = [](const SchemeSpec& spec, std::string_view tensor) {
    if ((tensor == "cos" || tensor == "sin") && spec.positions.empty()) return std::vector<std::string>{"unique"};
    return std::vector<std::string>{};
  };
  info.validate = [](const SchemeSpec& spec) { Setup(spec); };
  info.make_set = [](const SchemeSpec& spec_in) {
    MropeSetup s = Setup(spec_in);
    const SchemeSpec& spec = s.spec;
    const std::int64_t dim = s.freqs.dim, half = dim / 2, L = s.positions.len;
    std::vector<int> axes;
    if (s.ggml) {
      for (std::int64_t i = 0; i < half; ++i) axes.push_back(GgmlMropeStream(*s.ggml, i));
    } else {
      axes = MropeAxes(s.section, half, spec.mrope_interleaved);
    }
    TableSet set;
    Metadata& m = set.meta;
    m.Set("scheme", spec.scheme);
    m.Set("d_model", spec.d_model);
    m.Set("head_dim", spec.d_model);
    m.Set("rotary_dim", dim);
    m.Set("max_len", L);
    m.Set("start", spec.start);
    m.Set("base", spec.base);
    m.Set("rope_theta", spec.base);  // Hugging Face's name
    m.Set("layout", std::string("half"));
    if (s.ggml) {
      const auto& g = s.ggml->sections;
      m.Set("mrope_section", fmt::format("{},{},{},{}", g[0], g[1], g[2], g[3]));
      m.Set("semantics", std::string("llama.cpp"));
      m.Set("ggml_rope_mode", std::string(s.ggml->mode == GgmlRopeMode::kImrope ? "imrope" : "mrope"));
      m.Set("mrope_position_e", std::string("0 (llama.cpp: text and image tokens)"));
      if (spec.dtype != DType::kFloat64) m.Set("recipe", std::string("ggml-cpu float32"));
    } else {
      m.Set("mrope_section", fmt::format("{},{},{}", s.section[0], s.section[1], s.section[2]));
    }
    m.Set("mrope_interleaved", static_cast<std::int64_t>(spec.mrope_interleaved ? 1 : 0));
    m.Set("positions_source", s.positions.source);
    if (!spec.positions.empty()) m.Set("positions", spec.positions);
    if (!spec.mrope_layout.empty()) m.Set("mrope_layout", spec.mrope_layout);
    m.Set("rope_scaling", spec.rope_scaling);
    m.Set("rope_type", spec.rope_scaling == "none" ? std::string("default") : spec.rope_scaling);
    for (const auto& [k, v] : s.freqs.meta.entries()) m.Set(k, v);
    m.Set("attention_factor", static_cast<double>(s.freqs.attention_factor));
    if (!spec_in.hf_config.empty()) m.Set("source_config", spec_in.hf_config);
    m.Set("dtype", std::string(Traits(spec.dtype).name));
    m.Set("pe_version", std::string(PE_VERSION));

    AxisRotaryPlan plan;
    plan.axes = s.ggml ? 4 : 3;  // llama.cpp: the fourth (e) stream, 0
    for (Q f : s.freqs.inv_freq) plan.frequencies.push_back(FrequencyFromQuad(f));
    std::int64_t lo = 0, hi = 0;
    for (std::int64_t v : s.positions.ids) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    auto ids = std::make_shared<const MropePositions>(std::move(s.positions));
    const bool e_axis = s.ggml.has_value();
    const AxisIdsFn fn = [ids, e_axis](std::int64_t r, std::int64_t* out) {
      for (int a = 0; a < 3; ++a) out[a] = ids->at(a, r);
      if (e_axis) out[3] = 0;
    };
    for (const auto kind : {SinusoidColumn::kCos, SinusoidColumn::kSin}) {
      AxisRotaryPlan p = plan;
      for (std::int64_t j = 0; j < dim; ++j) {
        const std::int64_t i = j % half;
        p.columns.push_back({static_cast<std::int32_t>(i), axes[static_cast<std::size_t>(i)], kind});
      }
      const char* name = kind == SinusoidColumn::kCos ? "cos" : "sin";
      if (s.ggml && spec.dtype != DType::kFloat64) {
        set.tensors.push_back(std::make_unique<GgmlMropeSource>(SetTensorInfo(m, name, L, dim, spec.dtype), *s.ggml,
                                                                kind == SinusoidColumn::kCos, ids));
        continue;
      }
      set.tensors.push_back(std::make_unique<AxisRotarySource>(SetTensorInfo(m, name, L, dim, spec.dtype), std::move(p), fn, lo,
                                                               hi, s.freqs.attention_factor));
    }
    Q top = 0;
    for (Q f : s.freqs.inv_freq) top = f > top ? f : top;
    if (!(top <= static_cast<Q>(MaxFinite(spec.dtype))))
      ThrowUsage("--base", fmt::format("{:.3g} makes inv_freq up to {:.3g}, beyond {}'s largest finite value", spec.base,
                                       static_cast<double>(top), Traits(spec.dtype).name));
    TableInfo inv = SetTensorInfo(m, "inv_freq", half, 1, spec.dtype);
    inv.shape = {half};
    const std::vector<Q> values = s.freqs.inv_freq;
    set.tensors.push_back(std::make_unique<QuadRowSource>(inv, [values](std::int64_t row, Q* v) { v[0] = values[row]; }));
    return set;
  };
  return info;
}

}  // namespace pe
