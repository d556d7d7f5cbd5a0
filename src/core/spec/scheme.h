// SchemeSpec: the parameters of a table to generate, as given (flags, inline
// specs, API keys, a file's metadata, a model's config). Which schemes exist
// and how each builds its rows is the registry's (core/schemes/registry.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/dtype.h"
#include "core/base/table.h"
#include "core/base/table_set.h"

namespace pe {

/// Parameters of a generated table. Each numeric field's domain is declared
/// once, with its key, in core/spec/params.cc; fields a scheme does not
/// use are ignored by it; ValidateSpec() checks the ones it does.
struct SchemeSpec {
  std::string scheme = "sinusoidal";
  std::int64_t d_model = 0;   ///< columns (channels)
  std::int64_t max_len = 0;   ///< rows (positions)
  double base = 10000.0;      ///< frequency base b in ω_i = b^(-2i/d)
  std::int64_t start = 0;     ///< position of row 0
  DType dtype = DType::kFloat32;

  // Scheme-specific parameters (docs/schemes.md). Empty strings and
  // negative numbers mean "the scheme's default".
  std::string tensor;        ///< --tensor: one tensor of a multi-tensor scheme
  std::string layout;        ///< --layout: interleaved|concat (sinusoid), half|interleaved (rope), mae|timm (2-D)
  std::string denominator;   ///< --denominator d|half-minus-one
  std::string odd_rule;      ///< --odd-rule unpaired-sin|zero-column
  std::int64_t padding_idx = 1;    ///< --padding-idx (fairseq)
  double min_timescale = 1.0;      ///< --min-timescale (tensor2tensor)
  double max_timescale = 1.0e4;    ///< --max-timescale (tensor2tensor)
  // learned
  std::uint64_t seed = 0;          ///< --seed
  double sigma = 0.02;             ///< --sigma
  std::string init_from;           ///< --init-from FILE
  // rope
  std::int64_t rotary_dim = -1;    ///< --rotary-dim (default: d_model)
  double partial_rotary_factor = 1.0;  ///< --partial-rotary-factor
  std::string rope_scaling = "none";   ///< --rope-scaling
  double factor = -1;              ///< --factor
  std::int64_t max_position_embeddings = -1;           ///< --max-position-embeddings
  std::int64_t original_max_position_embeddings = -1;  ///< --original-max-position-embeddings
  double beta_fast = 32;           ///< --beta-fast (yarn)
  double beta_slow = 1;            ///< --beta-slow (yarn)
  double mscale = 0;               ///< --mscale (yarn; 0 = unset)
  double mscale_all_dim = 0;       ///< --mscale-all-dim (yarn; 0 = unset)
  double attention_factor = -1;    ///< --attention-factor (override)
  bool truncate = true;            ///< --no-truncate clears it (yarn)
  double low_freq_factor = 1;      ///< --low-freq-factor (llama3)
  double high_freq_factor = 4;     ///< --high-freq-factor (llama3)
  std::string short_factor;        ///< --short-factor FILE|list (longrope)
  std::string long_factor;         ///< --long-factor FILE|list (longrope)
  std::int64_t seq_len = -1;       ///< --seq-len (dynamic, longrope; default start+max_len)
  double scale_base = 512;         ///< --scale-base (xpos)
  std::string hf_config;           ///< --hf-config: a Hugging Face config.json (rope)
  std::string gguf;                ///< --gguf: a GGUF model file (rope, rope-plan; core/spec/gguf_plan.h)
  std::string freq_factors;        ///< --freq-factors FILE|list: llama.cpp rope_freqs, inv_freq[i] / f[i]
  // rope scaling rules and semantics (docs/schemes.md, "Scaling rules and --semantics")
  std::string semantics = "hf";    ///< --semantics: the engine version whose rule applies (core/spec/engine_versions.h)
  double alpha = -1;               ///< --alpha: dynamic NTK-alpha (Hunyuan), base·alpha^(dim/(dim-2))
  double mixed_b = -1;             ///< --mixed-b: vLLM ntk "mixed" exponent b
  double short_mscale = -1;        ///< --short-mscale: vLLM longrope cos/sin scale, short cache
  double long_mscale = -1;         ///< --long-mscale: vLLM longrope cos/sin scale, long cache
  double rope_ratio = -1;          ///< --rope-ratio: ChatGLM, base·rope_ratio
  std::int64_t max_model_len = -1; ///< --max-model-len: vLLM longrope switch (default max_position_embeddings)
  std::int64_t max_trained_positions = -1;  ///< --max-trained-positions: vLLM 2026-09 dynamic NTK's trained length
  double attn_factor = -1;         ///< --attn-factor: vLLM/llama.cpp YaRN multiplier of get_mscale(factor)
  double ext_factor = -1;          ///< --ext-factor: llama.cpp YaRN ramp mix weight (yarn_ext_factor; -1 = 1)
  // rope-plan (core/spec/pe_plan.h): a per-layer plan of RoPE / NoPE
  std::int64_t num_layers = -1;        ///< --num-layers
  std::string layer_types;             ///< --layer-types T,T,...: one per layer
  std::int64_t global_every = -1;      ///< --global-every N: layer i full when (i+1)%N==0, else sliding
  double local_base = -1;              ///< --local-base: sliding layers' base, unscaled (-1 = unset)
  std::string no_rope_layers;          ///< --no-rope-layers 1,1,1,0,...: HF's list, 1 = RoPE, 0 = NoPE
  std::int64_t no_rope_interval = -1;  ///< --no-rope-interval N: layer i NoPE when (i+1)%N==0
  std::string nope_types;              ///< --nope-types T,...: layer types without RoPE (Cohere2: full_attention)
  bool attn_temperature = false;       ///< --attn-temperature: Llama 4's q scale on NoPE layers
  double floor_scale = 8192;           ///< --floor-scale (attention temperature)
  double attn_scale = 0.1;             ///< --attn-scale (attention temperature)
  // alibi
  std::int64_t heads = 0;          ///< --heads
  std::string alibi_bias = "rows"; ///< --alibi-bias rows|shifted|distance
  double max_bias = 8;             ///< --max-bias
  // sincos-2d
  std::int64_t grid_h = 0, grid_w = 0;  ///< --grid HxW
  bool cls_token = false;          ///< --cls-token
  // t5-bucket
  bool bidirectional = false;      ///< --bidirectional
  std::int64_t num_buckets = 32;   ///< --num-buckets
  std::int64_t max_distance = 128; ///< --max-distance
  // relative schemes (schemes/relative.h): relative-index, deberta-bucket,
  // transformer-xl, kerple, sandwich
  std::int64_t key_len = -1;                ///< --key-len: keys k of a [q, k] table (default: max_len)
  std::int64_t max_relative_position = -1;  ///< --max-relative-position (relative-index shaw; -1 = unset)
  std::string convention;                   ///< --convention shaw|hf-bert (relative-index), hf|microsoft (deberta-bucket)
  std::int64_t bucket_size = 256;           ///< --bucket-size (deberta-bucket position_buckets)
  std::int64_t max_position = 512;          ///< --max-position (deberta-bucket max_relative_positions)
  std::int64_t clamp_len = 0;               ///< --clamp-len (transformer-xl; 0 = off)
  std::string kerple_form = "log";          ///< --kerple-form log|power
  std::string r1, r2;                       ///< --r1, --r2 (kerple): a number or a comma list per head
  std::string rel_form = "matrix";          ///< --rel-form matrix|offsets (kerple, sandwich)
  // mrope, vision-rope (core/schemes/mrope.h, vision_rope.h)
  std::string mrope_section;       ///< --mrope-section t,h,w (mrope)
  bool mrope_interleaved = false;  ///< --mrope-interleaved (Qwen3-VL)
  std::string positions;           ///< --positions FILE: [3, L] or [L] ids (mrope)
  std::string mrope_layout;        ///< --mrope-layout "text:5,image:1x4x6,text:3" (mrope)
  std::string variant;             ///< --variant pixtral|qwen2-vl|dinov3|eva (vision-rope)
  std::int64_t frames = 1;         ///< --frames T (vision-rope qwen2-vl)
  std::int64_t spatial_merge_size = 2;  ///< --spatial-merge-size (vision-rope qwen2-vl)
  std::string normalize_coords;    ///< --normalize-coords separate|max|min (vision-rope dinov3)
  std::string ref_grid;            ///< --ref-grid HxW: timm ref_feat_shape (vision-rope eva)

  /// Where parameters came from when not from a flag: flag ("--base") ->
  /// how to name it in an error ("'t.h5': metadata base=1e-40"). `pe verify`
  /// fills it for values taken from a file's metadata, so that an error
  /// does not call them flags.
  std::map<std::string, std::string> origin;

  /// The parameters given explicitly, by canonical key ("factor", "seq_len"):
  /// by a flag, an inline spec, an API key or a file's metadata. The domain
  /// check (CheckParamDomains, core/spec/params.h) refuses a given value
  /// even when it equals the field's "not given" default: --factor -1 is an
  /// error, not the default.
  std::set<std::string> given;
};

/// The widest table pe makes: 2^20 = 1,048,576 columns (d_model, head
/// dimension), larger than any published model. Per-column plans
/// (frequencies, column maps) and row buffers are sized by the width, so
/// this bounds them (docs/numerics.md, "Memory").
inline constexpr std::int64_t kMaxWidth = std::int64_t{1} << 20;

/// How an error names the parameter behind `flag` in `spec`: the flag
/// itself, or its origin (spec.origin) with its value.
std::string ParamName(const SchemeSpec& spec, const std::string& flag);

/// The largest finite value of `dtype` (65504 for float16).
double MaxFinite(DType dtype);

/// One parameter a scheme takes, for `pe schemes` and help.
struct SchemeParam {
  std::string_view flag;     ///< "--base"
  std::string_view meaning;  ///< "frequency base b"
  std::string_view fallback; ///< "10000"
};

/// The rotated channels a plan states: rotary_dim, else
/// floor(head_dim · partial_rotary_factor); 0 where that product is not a
/// number of channels (a factor out of its domain, which the config check
/// names), never an out-of-range conversion.
inline std::int64_t PlannedRotaryDim(const SchemeSpec& s) {
  if (s.rotary_dim > 0) return s.rotary_dim;
  const double r = std::floor(static_cast<double>(s.d_model) * s.partial_rotary_factor);
  return std::isfinite(r) && std::fabs(r) < 0x1p62 ? static_cast<std::int64_t>(r) : 0;
}

}  // namespace pe
