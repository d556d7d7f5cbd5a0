#include "cli/scheme_flags.h"

#include <fmt/format.h>

#include <charconv>

#include "core/error.h"

namespace pe::cli {

void AddSchemeParamFlags(CLI::App& cmd, SpecFlags& f) {
  SchemeSpec& x = f.extra;
  const std::string g = "Scheme parameters (see 'pe schemes')";
  auto opt = [&](const std::string& name, auto& field, const std::string& help, const std::string& type) {
    return cmd.add_option(name, field, help)->type_name(type)->group(g);
  };
  opt("--tensor", x.tensor, "One tensor of a multi-tensor scheme (rope: cos|sin|inv_freq; alibi: slopes|bias; xpos: cos|sin|scale|inv_freq)", "NAME");
  opt("--layout", x.layout, "sinusoidal: interleaved|concat; rope: half|interleaved; sincos-2d: mae|timm", "L");
  opt("--denominator", x.denominator, "sinusoidal frequencies: d (b^(-2i/d), the paper) | half-minus-one (b^(-k/(h-1)), t2t/fairseq)", "D");
  opt("--odd-rule", x.odd_rule, "odd --d-model: unpaired-sin | zero-column", "R");
  opt("--padding-idx", x.padding_idx, "fairseq: the zeroed padding row (first real position is padding_idx+1)", "N")->capture_default_str();
  opt("--min-timescale", x.min_timescale, "tensor2tensor min_timescale", "T")->capture_default_str();
  opt("--max-timescale", x.max_timescale, "tensor2tensor max_timescale", "T")->capture_default_str();
  opt("--seed", x.seed, "learned: seed of the SplitMix64 counter generator", "N")->capture_default_str();
  opt("--sigma", x.sigma, "learned: standard deviation of N(0, sigma^2)", "S")->capture_default_str();
  opt("--init-from", x.init_from, "learned: import the table from a checkpoint file (NPY, safetensors, HDF5, ...)", "FILE");
  opt("--rotary-dim", x.rotary_dim, "rope: channels rotated (partial rotary; default: --head-dim)", "N");
  opt("--partial-rotary-factor", x.partial_rotary_factor, "rope: rotary dim = int(head_dim * factor)", "F")->capture_default_str();
  opt("--rope-scaling", x.rope_scaling, "rope: none|linear|ntk|dynamic|yarn|longrope|llama3", "TYPE")->capture_default_str();
  opt("--factor", x.factor, "rope scaling factor", "F");
  opt("--max-position-embeddings", x.max_position_embeddings, "rope: config.max_position_embeddings", "N");
  opt("--original-max-position-embeddings", x.original_max_position_embeddings, "rope: original context length L_orig", "N");
  opt("--beta-fast", x.beta_fast, "yarn beta_fast", "B")->capture_default_str();
  opt("--beta-slow", x.beta_slow, "yarn beta_slow", "B")->capture_default_str();
  opt("--mscale", x.mscale, "yarn mscale (DeepSeek)", "M");
  opt("--mscale-all-dim", x.mscale_all_dim, "yarn mscale_all_dim (DeepSeek)", "M");
  opt("--attention-factor", x.attention_factor, "rope: override the attention factor (multiplies cos and sin)", "A");
  cmd.add_flag("--no-truncate{false}", x.truncate, "yarn: do not floor/ceil the correction range (truncate=False)")->group(g);
  opt("--low-freq-factor", x.low_freq_factor, "llama3 low_freq_factor", "F")->capture_default_str();
  opt("--high-freq-factor", x.high_freq_factor, "llama3 high_freq_factor", "F")->capture_default_str();
  opt("--short-factor", x.short_factor, "longrope short_factor: a JSON file (a list, or a config with rope_scaling) or a comma list", "FILE|LIST");
  opt("--long-factor", x.long_factor, "longrope long_factor: as --short-factor", "FILE|LIST");
  opt("--seq-len", x.seq_len, "rope dynamic/longrope: the sequence length the cache is built for (default: start + max-len)", "N");
  opt("--hf-config", x.hf_config, "rope: take head_dim, rope_theta, partial rotary, max_position_embeddings and rope_scaling from a Hugging Face config.json", "FILE");
  // rope-plan (core/model/pe_plan.h); --hf-config also gives it the whole per-layer plan
  opt("--num-layers", x.num_layers, "rope-plan: number of layers", "N");
  opt("--layer-types", x.layer_types, "rope-plan: per layer full_attention|sliding_attention|chunked_attention (comma list)", "LIST");
  opt("--global-every", x.global_every, "rope-plan: layer i is full_attention when (i+1)%N==0, else sliding_attention (Gemma 3: 6)", "N");
  opt("--local-base", x.local_base, "rope-plan: sliding layers' base, without scaling (Gemma 3 rope_local_base_freq)", "B");
  opt("--no-rope-layers", x.no_rope_layers, "rope-plan: HF no_rope_layers, per layer 1 (RoPE) or 0 (NoPE)", "LIST");
  opt("--no-rope-interval", x.no_rope_interval, "rope-plan: layer i is NoPE when (i+1)%N==0 (Llama 4, SmolLM3: 4)", "N");
  opt("--nope-types", x.nope_types, "rope-plan: layer types without RoPE (Cohere2: full_attention)", "LIST");
  cmd.add_flag("--attn-temperature", x.attn_temperature, "rope-plan: Llama 4's attention temperature on NoPE layers (tensor nope/attn_scale)")->group(g);
  opt("--floor-scale", x.floor_scale, "rope-plan attention temperature floor_scale", "F")->capture_default_str();
  opt("--attn-scale", x.attn_scale, "rope-plan attention temperature attn_scale", "S")->capture_default_str();
  opt("--scale-base", x.scale_base, "xpos scale base", "B")->capture_default_str();
  opt("--heads", x.heads, "alibi: number of attention heads", "N");
  opt("--alibi-bias", x.alibi_bias, "alibi bias form: rows (slope*j, the reference) | distance (-slope*|i-j|)", "FORM")->capture_default_str();
  opt("--max-bias", x.max_bias, "alibi: slopes 2^(-max_bias*k/n) (8 = Press et al.)", "B")->capture_default_str();
  opt("--grid", f.grid, "sincos-2d: grid HxW (or N for NxN)", "HxW");
  cmd.add_flag("--cls-token", x.cls_token, "sincos-2d: prepend a zero row (MAE cls_token)")->group(g);
  cmd.add_flag("--bidirectional", x.bidirectional, "t5-bucket: encoder (bidirectional) buckets")->group(g);
  opt("--num-buckets", x.num_buckets, "t5-bucket num_buckets", "N")->capture_default_str();
  opt("--max-distance", x.max_distance, "t5-bucket max_distance", "N")->capture_default_str();
}

namespace {

bool ParseInt(std::string_view s, std::int64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

void ParseGrid(const std::string& grid, SchemeSpec* spec) {
  if (grid.empty()) return;
  const auto x = grid.find_first_of("xX");
  std::int64_t h = 0, w = 0;
  bool ok = x == std::string::npos ? ParseInt(grid, &h) && (w = h, true)
                                   : ParseInt(std::string_view(grid).substr(0, x), &h) &&
                                         ParseInt(std::string_view(grid).substr(x + 1), &w);
  if (!ok || h <= 0 || w <= 0)
    ThrowUsage(fmt::format("--grid '{}'", grid), "expected HxW with positive integers, e.g. 14x14 or 16x8");
  spec->grid_h = h;
  spec->grid_w = w;
}

}  // namespace pe::cli
