#include "cli/scheme_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "core/base/error.h"

namespace pe::cli {

namespace {
const char kSchemeGroup[] = "Scheme parameters (see 'pe schemes')";
}  // namespace

void AddSchemeParamFlags(CLI::App& cmd, SpecFlags& f) {
  SchemeSpec& x = f.extra;
  const std::string g = kSchemeGroup;
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
  opt("--rope-scaling", x.rope_scaling, "rope: none|linear|ntk|dynamic|yarn|longrope|llama3|proportional", "TYPE")->capture_default_str();
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
  // GGUF (core/spec/gguf_plan.h): the plan from a GGUF file's metadata, as --hf-config from config.json
  opt("--gguf", x.gguf, "rope, rope-plan: take the head dim, freq_base, rotary dim, scaling, rope_freqs and the per-layer plan from a GGUF model's metadata (llama.cpp's reading)", "FILE");
  opt("--freq-factors", x.freq_factors, "rope: divide inv_freq[i] by factor i (llama.cpp rope_freqs / freq_factors): a JSON list file or a comma list", "FILE|LIST");
  // rope scaling rules and semantics (docs/schemes.md, "Scaling rules and --semantics")
  opt("--semantics", x.semantics, "rope: whose rule where implementations disagree: hf (current transformers) | hf-4.45 (yarn) | vllm (ntk, dynamic, yarn, longrope) | llama.cpp (yarn)", "S")->capture_default_str();
  opt("--alpha", x.alpha, "rope dynamic: NTK-alpha (Hunyuan), base*alpha^(dim/(dim-2)), in [1, 1e12]", "A");
  opt("--mixed-b", x.mixed_b, "rope ntk --semantics vllm: mixed NTK exponent b, in (0, 64]", "B");
  opt("--short-mscale", x.short_mscale, "rope longrope --semantics vllm: cos/sin scale of the short cache", "M");
  opt("--long-mscale", x.long_mscale, "rope longrope --semantics vllm: cos/sin scale of the long cache", "M");
  opt("--max-model-len", x.max_model_len, "rope longrope --semantics vllm: the served length that picks the long factors (default: --max-position-embeddings)", "N");
  opt("--rope-ratio", x.rope_ratio, "rope: ChatGLM rope_ratio, base*rope_ratio", "R");
  opt("--attn-factor", x.attn_factor, "rope yarn --semantics vllm|llama.cpp: attn_factor, multiplies get_mscale(factor)", "A");
  // rope-plan (core/spec/pe_plan.h); --hf-config also gives it the whole per-layer plan
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
  opt("--grid", f.grid, "sincos-2d, vision-rope: grid HxW (or N for NxN)", "HxW");
  cmd.add_flag("--cls-token", x.cls_token, "sincos-2d: prepend a zero row (MAE cls_token)")->group(g);
  cmd.add_flag("--bidirectional", x.bidirectional, "t5-bucket: encoder (bidirectional) buckets")->group(g);
  opt("--num-buckets", x.num_buckets, "t5-bucket num_buckets", "N")->capture_default_str();
  opt("--max-distance", x.max_distance, "t5-bucket max_distance", "N")->capture_default_str();
  // relative schemes (relative-index, deberta-bucket, transformer-xl, kerple, sandwich)
  opt("--key-len", x.key_len, "[q, k] relative tables: keys k, the columns (default: --max-len)", "K");
  opt("--max-relative-position", x.max_relative_position, "relative-index shaw: clipping distance k, index clamp(j-i,-k,k)+k", "K");
  opt("--convention", x.convention, "relative-index: shaw|hf-bert; deberta-bucket: hf (torch float32)|microsoft (numpy float64)", "C");
  opt("--bucket-size", x.bucket_size, "deberta-bucket position_buckets", "N")->capture_default_str();
  opt("--max-position", x.max_position, "deberta-bucket max_relative_positions", "N")->capture_default_str();
  opt("--clamp-len", x.clamp_len, "transformer-xl: clamp positions to this (0 = off)", "N")->capture_default_str();
  opt("--kerple-form", x.kerple_form, "kerple kernel: log (-r1*log(1+r2*d)) | power (-r1*d^r2)", "F")->capture_default_str();
  opt("--r1", x.r1, "kerple r1 > 0: a number or a comma list, one per head", "R|LIST");
  opt("--r2", x.r2, "kerple r2 > 0 (power: <= 2): a number or a comma list", "R|LIST");
  opt("--rel-form", x.rel_form, "kerple, sandwich: matrix [heads, q, k] | offsets [heads, L]", "F")->capture_default_str();
  // mrope, vision-rope
  opt("--mrope-section", x.mrope_section, "mrope: t,h,w section sizes summing to rotary_dim/2 (Qwen2-VL 16,24,24; Qwen3-VL 24,20,20)", "T,H,W");
  cmd.add_flag("--mrope-interleaved", x.mrope_interleaved, "mrope: Qwen3-VL interleaved sections (apply_interleaved_mrope)")->group(g);
  opt("--positions", x.positions, "mrope: position ids from a file, shape [3, L] (t, h, w) or [L] (NPY, CSV, JSON, ...)", "FILE");
  opt("--mrope-layout", x.mrope_layout, "mrope: ids as get_rope_index builds them, e.g. text:5,image:1x4x6,text:3", "SPEC");
  opt("--variant", x.variant, "vision-rope: pixtral | qwen2-vl | dinov3 | eva", "NAME");
  opt("--frames", x.frames, "vision-rope qwen2-vl: temporal patches t of grid_thw", "T")->capture_default_str();
  opt("--spatial-merge-size", x.spatial_merge_size, "vision-rope qwen2-vl: spatial_merge_size", "N")->capture_default_str();
  opt("--normalize-coords", x.normalize_coords, "vision-rope dinov3: separate | max | min", "M");
  opt("--ref-grid", x.ref_grid, "vision-rope eva: timm ref_feat_shape HxW (the pretraining grid; ids scale by ref/grid)", "HxW");
}

void CheckSchemeFlags(const SpecFlags& f, std::string_view scheme, const std::vector<std::string>& ignore) {
  if (!f.cmd) return;
  static const std::vector<std::string> kCommon = {"--d-model", "--max-len", "--base", "--start", "--dtype"};
  std::vector<std::string> given;
  bool scheme_given = false;
  for (const CLI::Option* opt : f.cmd->get_options()) {
    if (opt->count() == 0 || opt->get_lnames().empty()) continue;
    const std::string flag = "--" + opt->get_lnames()[0];
    if (flag == "--scheme") scheme_given = true;
    const bool spec_flag = opt->get_group() == kSchemeGroup ||
                           std::find(kCommon.begin(), kCommon.end(), flag) != kCommon.end();
    if (spec_flag && std::find(ignore.begin(), ignore.end(), flag) == ignore.end()) given.push_back(flag);
  }
  CheckFlagsApply(given, scheme, scheme_given);
}


}  // namespace pe::cli
