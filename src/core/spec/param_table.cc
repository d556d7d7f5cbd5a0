#include "core/spec/param_table.h"

#include <algorithm>
#include <deque>
#include <map>
#include <string>

namespace pe {
namespace {

using enum ParamType;

// One row per parameter: {key, flag, member, type, domain, default shown,
// metavar, help, {schemes: {name, line, meaning, default there[, flag shown]}
// or {name, line, part} for a flag sharing that line}[, alias of]}.
// The common flags first (the CLI's AddSpecFlags), then the scheme flags in
// the order of `pe generate --help`.
const std::vector<ParamRow>& Rows() {
  static const std::vector<ParamRow> kRows = {
    {"d_model", "--d-model,--head-dim", &SchemeSpec::d_model, kInt, AtLeast(1).Unset(0), kHidden, "N", "Columns (model width d; RoPE/xPos: head dimension)",
     {{"sinusoidal", 10, "columns d", "required"}, {"tensor2tensor", 10, "columns d", "required"},
      {"fairseq", 10, "columns d", "required"}, {"marian", 10, "columns d", "required"},
      {"sin-only", 10, "columns d", "required"}, {"learned", 10, "columns d", "required (or from --init-from)"},
      {"rope", 10, "head dimension (alias of --d-model)", "required", "--head-dim"},
      {"rope-plan", 30, "head dimension (without --hf-config)", "required", "--head-dim"},
      {"xpos", 10, "head dimension D (even)", "required", "--head-dim"},
      {"sincos-2d", 10, "channels D (a multiple of 4)", "required"},
      {"transformer-xl", 10, "d (even: inv_freq has d/2 entries, sin and cos each)", "required"},
      {"sandwich", 10, "d' (hidden size per head, even)", "required"},
      {"mrope", 10, "head dimension (alias of --d-model)", "required", "--head-dim"},
      {"vision-rope", 20, "head dimension D (pixtral: even; qwen2-vl, dinov3, eva: multiple of 4)", "required", "--head-dim"}}},
    {"max_len", "--max-len", &SchemeSpec::max_len, kInt, AtLeast(1).Unset(0), kHidden, "N", "Rows (number of positions)",
     {{"sinusoidal", 20, "rows (positions)", "required"}, {"tensor2tensor", 20, "rows (positions)", "required"},
      {"fairseq", 20, "rows (positions)", "required"}, {"marian", 20, "rows (positions)", "required"},
      {"sin-only", 20, "rows (positions)", "required"}, {"learned", 20, "rows", "required (or from --init-from)"},
      {"rope", 20, "rows (positions)", "required"}, {"rope-plan", 40, "rows (positions)", "required"},
      {"xpos", 20, "rows: the sequence length L", "required"},
      {"alibi", 20, "key/query length L of the bias", "required"},
      {"sincos-2d", 30, "optional: must equal the rows H·W (+1)", "inferred"},
      {"t5-bucket", 20, "rows: how many relative positions", "required"},
      {"relative-index", 10, "queries q (rows)", "required"}, {"deberta-bucket", 10, "queries q (rows)", "required"},
      {"transformer-xl", 20, "klen = mlen + qlen (rows; row r is position klen-1-r)", "required"},
      {"kerple", 50, "queries q (rows of each head); offsets: L", "required"},
      {"sandwich", 40, "queries q (rows of each head); offsets: L", "required"},
      {"mrope", 60, "text tokens at start + r", "required (or --positions / --mrope-layout)"},
      {"vision-rope", 30, "optional: must equal the grid's rows", "inferred"}}},
    {"base", "--base,--rope-theta", &SchemeSpec::base, kReal, Above(0), kShown, "B", "Frequency base b in ω_i = b^(-2i/d) (Hugging Face: rope_theta)",
     {{"sinusoidal", 30, "frequency base b", "10000"}, {"fairseq", 60, "frequency base", "10000"},
      {"marian", 60, "frequency base", "10000"}, {"sin-only", 60, "frequency base", "10000"},
      {"rope", 30, "rope_theta", "10000"},
      {"rope-plan", 90, "rope_theta of every RoPE layer (sliding ones too unless --local-base)", "10000"},
      {"xpos", 40, "frequency base of the angles", "10000"}, {"sincos-2d", 60, "temperature", "10000"},
      {"transformer-xl", 40, "frequency base (10000 in the reference)", "10000"},
      {"sandwich", 30, "frequency base", "10000"}, {"mrope", 80, "rope_theta", "10000"},
      {"vision-rope", 50, "rope_theta (dinov3: 100 unless given)", "10000 (dinov3: 100)"}}},
    {"rope_theta", "", &SchemeSpec::base, kReal, {}, kHidden, "", "",
     {}, "base"},
    {"start", "--start", &SchemeSpec::start, kInt, Any(), kShown, "P", "Position of the first row",
     {{"sinusoidal", 40, "position of the first row", "0"},
      {"tensor2tensor", 30, "start_index: position of the first row", "0"},
      {"fairseq", 30, "position of the first row", "0"}, {"marian", 30, "position of the first row", "0"},
      {"sin-only", 30, "position of the first row", "0"},
      {"learned", 50, "position of the first row (row p draws elements p·d..)", "0"},
      {"rope", 40, "position of the first row", "0"}, {"rope-plan", 50, "position of the first row", "0"},
      {"xpos", 30, "offset (KV cache): angles use offset + r", "0"},
      {"t5-bucket", 10, "first relative position (memory - query), e.g. -128", "0"},
      {"mrope", 70, "position of the first text token (with --max-len)", "0"}}},
    {"dtype", "--dtype", &SchemeSpec::dtype, kDType, {}, kShown, "TYPE", "Element type",
     {{"sinusoidal", 50, "float32, float64, float16, bfloat16", "float32"},
      {"tensor2tensor", 40, "float32, float64, float16, bfloat16", "float32"},
      {"fairseq", 40, "float32, float64, float16, bfloat16", "float32"},
      {"marian", 40, "float32, float64, float16, bfloat16", "float32"},
      {"sin-only", 40, "float32, float64, float16, bfloat16", "float32"},
      {"sincos-2d", 70, "float32, float64 (MAE's numpy output), float16, bfloat16", "float32"},
      {"relative-index", 60, "float32, float64, float16, bfloat16 (integers, exact)", "float32"},
      {"deberta-bucket", 60, "float32, float64, float16, bfloat16 (integers, exact)", "float32"},
      {"transformer-xl", 50, "float32, float64, float16, bfloat16", "float32"},
      {"kerple", 90, "float32, float64, float16, bfloat16", "float32"},
      {"sandwich", 80, "float32, float64, float16, bfloat16", "float32"}}},
    {"tensor", "--tensor", &SchemeSpec::tensor, kText, {}, kHidden, "NAME", "One tensor of a multi-tensor scheme (rope: cos|sin|inv_freq; alibi: slopes|bias; xpos: cos|sin|scale|inv_freq)",
     {{"learned", 70, "with --init-from: the tensor/dataset to import", "pe or the only one"},
      {"rope", 290, "cos | sin | inv_freq", "all"},
      {"rope-plan", 170, "one tensor, e.g. sliding_attention/cos or nope/attn_scale", "all"},
      {"xpos", 60, "cos | sin | scale | inv_freq", "all"}, {"alibi", 50, "slopes | bias", "all"},
      {"mrope", 110, "cos | sin | inv_freq", "all"}, {"vision-rope", 100, "cos | sin", "both"}}},
    // The sinusoid presets take --layout, --denominator and --odd-rule so that
    // restating the preset's value works and another value gets the preset's
    // own message (RejectFlags), not "does not apply".
    {"layout", "--layout", &SchemeSpec::layout, kText, {}, kHidden, "L", "sinusoidal: interleaved|concat; rope: half|interleaved; sincos-2d: mae|timm",
     {{"sinusoidal", 60, "interleaved | concat ([sin... | cos...])", "interleaved"},
      {"tensor2tensor", 50, "fixed by the preset (restating its value is accepted)", "fixed"},
      {"fairseq", 50, "fixed by the preset (restating its value is accepted)", "fixed"},
      {"marian", 50, "fixed by the preset (restating its value is accepted)", "fixed"},
      {"sin-only", 50, "fixed by the preset (restating its value is accepted)", "fixed"},
      {"rope", 50, "half (Llama/NeoX rotate_half) | interleaved (GPT-J/Meta) | cache (onnxruntime cos_cache [L, dim/2])", "half"},
      {"rope-plan", 160, "as scheme rope, for the non-sliding RoPE layers", "-"},
      {"sincos-2d", 40, "mae [sin x|cos x|sin y|cos y] | timm [sin y|sin x|cos y|cos x]", "mae"}}},
    {"denominator", "--denominator", &SchemeSpec::denominator, kText, {}, kHidden, "D", "sinusoidal frequencies: d (b^(-2i/d), the paper) | half-minus-one (b^(-k/(h-1)), t2t/fairseq)",
     {{"sinusoidal", 70, "d (base^(-2i/d)) | half-minus-one (base^(-k/(h-1)))", "d"}, {"tensor2tensor", 50, 1},
      {"fairseq", 50, 1}, {"marian", 50, 1}, {"sin-only", 50, 1}}},
    {"odd_rule", "--odd-rule", &SchemeSpec::odd_rule, kText, {}, kHidden, "R", "odd --d-model: unpaired-sin | zero-column",
     {{"sinusoidal", 80, "odd d: unpaired-sin | zero-column", "by denominator"}, {"tensor2tensor", 50, 2},
      {"fairseq", 50, 2}, {"marian", 50, 2}, {"sin-only", 50, 2}}},
    {"padding_idx", "--padding-idx", &SchemeSpec::padding_idx, kInt, AtLeast(0), kShown, "N", "fairseq: the zeroed padding row (first real position is padding_idx+1)",
     {{"fairseq", 70, "zeroed row; first real position is padding_idx+1", "1"}}},
    {"min_timescale", "--min-timescale", &SchemeSpec::min_timescale, kReal, Above(0), kShown, "T", "tensor2tensor min_timescale",
     {{"tensor2tensor", 60, "min_timescale", "1"}}},
    {"max_timescale", "--max-timescale", &SchemeSpec::max_timescale, kReal, Above(0), kShown, "T", "tensor2tensor max_timescale",
     {{"tensor2tensor", 70, "max_timescale", "10000"}}},
    {"seed", "--seed", &SchemeSpec::seed, kUnsigned, {}, kShown, "N", "learned: seed of the SplitMix64 counter generator",
     {{"learned", 40, "generator seed (SplitMix64 counters + Box–Muller)", "0"}}},
    {"sigma", "--sigma", &SchemeSpec::sigma, kReal, AtLeast(0), kShown, "S", "learned: standard deviation of N(0, sigma^2)",
     {{"learned", 30, "standard deviation σ", "0.02"}}},
    {"init_from", "--init-from", &SchemeSpec::init_from, kText, {}, kHidden, "FILE", "learned: import the table from a checkpoint file (NPY, safetensors, HDF5, ...)",
     {{"learned", 60, "import a table: NPY, safetensors, HDF5, CSV, JSON", "-"}}},
    {"rotary_dim", "--rotary-dim", &SchemeSpec::rotary_dim, kInt, AtLeast(2).Unset(-1), kHidden, "N", "rope: channels rotated (partial rotary; default: --head-dim)",
     {{"rope", 60, "partial rotary: channels rotated", "head-dim"}, {"rope-plan", 160, 1},
      {"mrope", 90, "as scheme rope", "-"}}},
    {"partial_rotary_factor", "--partial-rotary-factor", &SchemeSpec::partial_rotary_factor, kReal, In(0, 1, true), kShown, "F", "rope: rotary dim = int(head_dim * factor)",
     {{"rope", 70, "rotary dim = int(head_dim * f)", "1"}, {"rope-plan", 160, 2}, {"mrope", 90, 1}}},
    {"rope_scaling", "--rope-scaling", &SchemeSpec::rope_scaling, kText, {}, kShown, "TYPE", "rope: none|linear|ntk|dynamic|yarn|longrope|llama3|proportional",
     {{"rope", 80, "none|linear|ntk|dynamic|yarn|longrope|llama3|proportional (Gemma 4)", "none"},
      {"rope-plan", 160, 3}, {"mrope", 90, 2}}},
    {"rope_type", "", &SchemeSpec::rope_scaling, kText, {}, kHidden, "", "",
     {}, "rope_scaling"},
    {"factor", "--factor", &SchemeSpec::factor, kReal, Above(0).Unset(-1), kHidden, "F", "rope scaling factor",
     {{"rope", 90, "scaling factor (llama3: 8)", "-"}, {"rope-plan", 160, 4}, {"mrope", 90, 3}}},
    {"max_position_embeddings", "--max-position-embeddings", &SchemeSpec::max_position_embeddings, kInt, AtLeast(1).Unset(-1), kHidden, "N", "rope: config.max_position_embeddings",
     {{"rope", 100, "config.max_position_embeddings (dynamic, yarn, longrope)", "-"}, {"rope-plan", 160, 5},
      {"relative-index", 50, "hf-bert: P (distance_embedding rows 2P-1)", "512"}, {"mrope", 90, 4}}},
    {"original_max_position_embeddings", "--original-max-position-embeddings", &SchemeSpec::original_max_position_embeddings, kInt, AtLeast(1).Unset(-1), kHidden, "N", "rope: original context length L_orig",
     {{"rope", 110, "L_orig (yarn, longrope; llama3: 8192)", "-"}, {"rope-plan", 160, 6}, {"mrope", 90, 5}}},
    {"beta_fast", "--beta-fast", &SchemeSpec::beta_fast, kReal, Above(0), kShown, "B", "yarn beta_fast",
     {{"rope", 120, "yarn ramp", "32 / 1"}, {"rope-plan", 160, 7}, {"mrope", 90, 6}}},
    {"beta_slow", "--beta-slow", &SchemeSpec::beta_slow, kReal, Above(0), kShown, "B", "yarn beta_slow",
     {{"rope", 120, 1}, {"rope-plan", 160, 8}, {"mrope", 90, 7}}},
    {"mscale", "--mscale", &SchemeSpec::mscale, kReal, AtLeast(0), kHidden, "M", "yarn mscale (DeepSeek)",
     {{"rope", 130, "yarn attention factor (DeepSeek)", "-"}, {"rope-plan", 160, 9}, {"mrope", 90, 8}}},
    {"mscale_all_dim", "--mscale-all-dim", &SchemeSpec::mscale_all_dim, kReal, AtLeast(0), kHidden, "M", "yarn mscale_all_dim (DeepSeek)",
     {{"rope", 130, 1}, {"rope-plan", 160, 10}, {"mrope", 90, 9}}},
    {"attention_factor", "--attention-factor", &SchemeSpec::attention_factor, kReal, Above(0).Unset(-1), kHidden, "A", "rope: override the attention factor (multiplies cos and sin)",
     {{"rope", 170, "override (multiplies cos and sin)", "by type"}, {"rope-plan", 160, 16}, {"mrope", 90, 15}}},
    {"no_truncate", "--no-truncate", &SchemeSpec::truncate, kNegSwitch, {}, kHidden, "", "yarn: do not floor/ceil the correction range (truncate=False)",
     {{"rope", 140, "yarn truncate=False", "-"}, {"rope-plan", 160, 11}, {"mrope", 90, 10}}},
    {"truncate", "", &SchemeSpec::truncate, kSwitch, {}, kHidden, "", "",
     {}, "no_truncate"},
    {"low_freq_factor", "--low-freq-factor", &SchemeSpec::low_freq_factor, kReal, Above(0), kShown, "F", "llama3 low_freq_factor",
     {{"rope", 150, "llama3 bands", "1 / 4"}, {"rope-plan", 160, 12}, {"mrope", 90, 11}}},
    {"high_freq_factor", "--high-freq-factor", &SchemeSpec::high_freq_factor, kReal, Above(0), kShown, "F", "llama3 high_freq_factor",
     {{"rope", 150, 1}, {"rope-plan", 160, 13}, {"mrope", 90, 12}}},
    {"short_factor", "--short-factor", &SchemeSpec::short_factor, kText, {}, kHidden, "FILE|LIST", "longrope short_factor: a JSON file (a list, or a config with rope_scaling) or a comma list",
     {{"rope", 160, "longrope lists (JSON file or comma list)", "-"}, {"rope-plan", 160, 14}, {"mrope", 90, 13}}},
    {"long_factor", "--long-factor", &SchemeSpec::long_factor, kText, {}, kHidden, "FILE|LIST", "longrope long_factor: as --short-factor",
     {{"rope", 160, 1}, {"rope-plan", 160, 15}, {"mrope", 90, 14}}},
    {"seq_len", "--seq-len", &SchemeSpec::seq_len, kInt, AtLeast(1).Unset(-1), kHidden, "N", "rope dynamic/longrope: the sequence length the cache is built for (default: start + max-len)",
     {{"rope", 180, "sequence length for dynamic/longrope", "start+max-len"}, {"rope-plan", 160, 17},
      {"mrope", 90, 16}}},
    {"hf_config", "--hf-config", &SchemeSpec::hf_config, kText, {}, kHidden, "FILE", "rope: take head_dim, rope_theta, partial rotary, max_position_embeddings and rope_scaling from a Hugging Face config.json",
     {{"rope", 260, "a Hugging Face config.json, read by its family's rule: head_dim, rope_theta, partial rotary, rope_scaling, layout (overrides those flags; the full-attention layers' group)", "-"},
      {"rope-plan", 10, "a model's config.json: the plan by its family's rule (docs/models.md, \"Model families\"; layer_types + rope_parameters)", "-"},
      {"mrope", 100, "a config.json: head_dim, rope_theta, rope_scaling.mrope_section, mrope_interleaved", "-"}}},
    {"gguf", "--gguf", &SchemeSpec::gguf, kText, {}, kHidden, "FILE", "rope, rope-plan: take the head dim, freq_base, rotary dim, scaling, rope_freqs and the per-layer plan from a GGUF model's metadata (llama.cpp's reading)",
     {{"rope", 270, "a GGUF model: head dim, freq_base, rotary dim, scaling, rope_freqs, layout by architecture (overrides those flags; the full-attention layers' RoPE)", "-"},
      {"rope-plan", 20, "a GGUF model: the plan from its metadata as llama.cpp reads it (rope type by architecture, sliding-window layers, rope_freqs)", "-"}}},
    {"freq_factors", "--freq-factors", &SchemeSpec::freq_factors, kText, {}, kHidden, "FILE|LIST", "rope: divide inv_freq[i] by factor i (llama.cpp rope_freqs / freq_factors): a JSON list file or a comma list",
     {{"rope", 280, "divide inv_freq[i] by f[i] (llama.cpp rope_freqs; JSON file or comma list)", "-"}}},
    {"semantics", "--semantics", &SchemeSpec::semantics, kText, {}, kShown, "S", "rope: the engine version whose rule applies where implementations disagree: hf (transformers 5.x) | hf-4.45 | vllm@2026-05 | vllm@2026-09 (= vllm) | llama.cpp (= llama.cpp@v0.4.0) | mlx-lm (docs/schemes.md, \"Scaling rules and --semantics\")",
     {{"rope", 190, "hf|hf-4.45|vllm@2026-05|vllm@2026-09|vllm|llama.cpp|mlx-lm: the engine version whose rule applies", "hf"},
      {"rope-plan", 160, 18}, {"mrope", 90, 17},
      {"vision-rope", 110, "hf | llama.cpp (qwen2-vl: ggml's float32 VISION recipe, mtmd's encoder)", "hf"}}},
    {"alpha", "--alpha", &SchemeSpec::alpha, kReal, In(1, 1e12, false).Unset(-1), kHidden, "A", "rope dynamic: NTK-alpha (Hunyuan), base*alpha^(dim/(dim-2)), in [1, 1e12]",
     {{"rope", 200, "dynamic NTK-alpha (Hunyuan): base*alpha^(dim/(dim-2))", "-"}, {"rope-plan", 160, 19},
      {"mrope", 90, 18}}},
    {"mixed_b", "--mixed-b", &SchemeSpec::mixed_b, kReal, In(0, 64, true).Unset(-1), kHidden, "B", "rope ntk --semantics vllm: mixed NTK exponent b, in (0, 64]",
     {{"rope", 210, "ntk, vllm: mixed NTK exponent", "-"}, {"rope-plan", 160, 20}, {"mrope", 90, 19}}},
    {"short_mscale", "--short-mscale", &SchemeSpec::short_mscale, kReal, In(0, 1e6, true).Unset(-1), kHidden, "M", "rope longrope --semantics vllm: cos/sin scale of the short cache",
     {{"rope", 220, "longrope, vllm: cos/sin scale of each cache", "by max/orig"}}},
    {"long_mscale", "--long-mscale", &SchemeSpec::long_mscale, kReal, In(0, 1e6, true).Unset(-1), kHidden, "M", "rope longrope --semantics vllm: cos/sin scale of the long cache",
     {{"rope", 220, 1}}},
    {"max_model_len", "--max-model-len", &SchemeSpec::max_model_len, kInt, In(1, 0x1p40, false).Unset(-1), kHidden, "N", "rope longrope --semantics vllm: the served length that picks the long factors (default: --max-position-embeddings)",
     {{"rope", 230, "longrope, vllm: served length choosing the long factors", "max-position-embeddings"}, {"rope-plan", 160, 24}}},
    {"max_trained_positions", "--max-trained-positions", &SchemeSpec::max_trained_positions, kInt, In(1, 0x1p40, false).Unset(-1), kHidden, "N", "rope dynamic --semantics vllm@2026-09: the trained length of the NTK ratio f·max_pos/max_trained − (f−1) (default: --max-position-embeddings)",
     {{"rope", 232, "dynamic, vllm@2026-09: trained length of the NTK ratio", "max-position-embeddings"}, {"rope-plan", 160, 25}}},
    {"rope_ratio", "--rope-ratio", &SchemeSpec::rope_ratio, kReal, In(0, 1e12, true).Unset(-1), kHidden, "R", "rope: ChatGLM rope_ratio, base*rope_ratio",
     {{"rope", 240, "ChatGLM: base*rope_ratio", "-"}, {"rope-plan", 160, 21}, {"mrope", 90, 20}}},
    {"attn_factor", "--attn-factor", &SchemeSpec::attn_factor, kReal, In(0, 1e6, true).Unset(-1), kHidden, "A", "rope yarn --semantics vllm|llama.cpp, any scaling under llama.cpp: attn_factor, multiplies get_mscale(factor)",
     {{"rope", 250, "yarn, vllm|llama.cpp: attn_factor multiplying get_mscale(factor)", "1"}, {"rope-plan", 160, 22},
      {"mrope", 90, 21}}},
    {"ext_factor", "--ext-factor", &SchemeSpec::ext_factor, kReal, In(0, 1e6, false).Unset(-1), kHidden, "E", "rope yarn --semantics llama.cpp: yarn_ext_factor, the weight of the extrapolated angle in ggml's ramp mix",
     {{"rope", 255, "yarn, llama.cpp: yarn_ext_factor (ramp mix weight)", "1"}, {"rope-plan", 160, 23},
      {"mrope", 90, 22}}},
    {"num_layers", "--num-layers", &SchemeSpec::num_layers, kInt, AtLeast(1).Unset(-1), kHidden, "N", "rope-plan: number of layers",
     {{"rope-plan", 60, "number of layers", "from --layer-types"}}},
    {"layer_types", "--layer-types", &SchemeSpec::layer_types, kText, {}, kHidden, "LIST", "rope-plan: per layer full_attention|sliding_attention|chunked_attention (comma list)",
     {{"rope-plan", 70, "per layer: full_attention|sliding_attention|chunked_attention, comma list", "all full"}}},
    {"global_every", "--global-every", &SchemeSpec::global_every, kInt, AtLeast(1).Unset(-1), kHidden, "N", "rope-plan: layer i is full_attention when (i+1)%N==0, else sliding_attention (Gemma 3: 6)",
     {{"rope-plan", 80, "Gemma 3: layer i full when (i+1)%N==0, else sliding", "-"}}},
    {"local_base", "--local-base", &SchemeSpec::local_base, kReal, Above(0).Unset(-1), kHidden, "B", "rope-plan: sliding layers' base, without scaling (Gemma 3 rope_local_base_freq)",
     {{"rope-plan", 100, "sliding layers' base, unscaled (Gemma 3 rope_local_base_freq)", "--base"}}},
    {"no_rope_layers", "--no-rope-layers", &SchemeSpec::no_rope_layers, kText, {}, kHidden, "LIST", "rope-plan: HF no_rope_layers, per layer 1 (RoPE) or 0 (NoPE)",
     {{"rope-plan", 110, "HF no_rope_layers: per layer 1 (RoPE) or 0 (NoPE)", "all 1"}}},
    {"no_rope_interval", "--no-rope-interval", &SchemeSpec::no_rope_interval, kInt, AtLeast(1).Unset(-1), kHidden, "N", "rope-plan: layer i is NoPE when (i+1)%N==0 (Llama 4, SmolLM3: 4)",
     {{"rope-plan", 120, "layer i NoPE when (i+1)%N==0 (Llama 4, SmolLM3: 4)", "-"}}},
    {"nope_types", "--nope-types", &SchemeSpec::nope_types, kText, {}, kHidden, "LIST", "rope-plan: layer types without RoPE (Cohere2: full_attention)",
     {{"rope-plan", 130, "layer types without RoPE (Cohere2: full_attention)", "-"}}},
    {"attn_temperature", "--attn-temperature", &SchemeSpec::attn_temperature, kSwitch, {}, kHidden, "", "rope-plan: Llama 4's attention temperature on NoPE layers (tensor nope/attn_scale)",
     {{"rope-plan", 140, "Llama 4: tensor nope/attn_scale = ln(floor((p+1)/floor_scale)+1)*attn_scale+1", "off"}}},
    {"floor_scale", "--floor-scale", &SchemeSpec::floor_scale, kReal, AtLeast(1), kShown, "F", "rope-plan attention temperature floor_scale",
     {{"rope-plan", 150, "attention temperature parameters", "8192 / 0.1"}}},
    {"attn_scale", "--attn-scale", &SchemeSpec::attn_scale, kReal, In(0, 1e6, false), kShown, "S", "rope-plan attention temperature attn_scale",
     {{"rope-plan", 150, 1}}},
    {"scale_base", "--scale-base", &SchemeSpec::scale_base, kReal, Above(0), kShown, "B", "xpos scale base",
     {{"xpos", 50, "scale_base", "512"}}},
    {"heads", "--heads", &SchemeSpec::heads, kInt, AtLeast(1).Unset(0), kHidden, "N", "alibi: number of attention heads",
     {{"alibi", 10, "number of heads n", "required"}, {"kerple", 40, "heads H", "the length of the --r1/--r2 lists"},
      {"sandwich", 20, "heads H (head h = 1..H is scaled by H/(8h))", "1"}}},
    {"alibi_bias", "--alibi-bias", &SchemeSpec::alibi_bias, kText, {}, kShown, "FORM", "alibi bias form: rows (slope*j, the reference) | shifted (slope*(j-(L-1)), MPT) | distance (-slope*|i-j|)",
     {{"alibi", 30, "rows: [H, L] slope·j (reference) | shifted: [H, L] slope·(j-(L-1)) (MPT) | distance: [H, L, L] -slope·|i-j|", "rows"}}},
    {"max_bias", "--max-bias", &SchemeSpec::max_bias, kReal, Above(0), kShown, "B", "alibi: slopes 2^(-max_bias*k/n) (8 = Press et al.)",
     {{"alibi", 40, "slopes 2^(-max_bias·k/n2) (ggml); 8 = Press", "8"}}},
    {"grid", "--grid", {}, kGrid, {}, kHidden, "HxW", "sincos-2d, vision-rope: grid HxW (or N for NxN)",
     {{"sincos-2d", 20, "HxW (or N for NxN); rows = H·W (+1 with --cls-token)", "required"},
      {"vision-rope", 40, "HxW patches (pixtral: N x N = image_size/patch_size for the model's buffer; qwen2-vl: grid_thw's h x w before the merge)", "required"}}},
    {"cls_token", "--cls-token", &SchemeSpec::cls_token, kSwitch, {}, kHidden, "", "sincos-2d: prepend a zero row (MAE cls_token)",
     {{"sincos-2d", 50, "prepend a zero row (MAE)", "off"}}},
    {"bidirectional", "--bidirectional", &SchemeSpec::bidirectional, kSwitch, {}, kHidden, "", "t5-bucket: encoder (bidirectional) buckets",
     {{"t5-bucket", 30, "encoder buckets (half for rp > 0)", "off (decoder)"},
      {"kerple", 70, "|i-j| everywhere (else causal: 0 where j > i)", "off"},
      {"sandwich", 60, "no causal mask (else tril: distance 0 where j > i)", "off"}}},
    {"num_buckets", "--num-buckets", &SchemeSpec::num_buckets, kInt, AtLeast(2), kShown, "N", "t5-bucket num_buckets",
     {{"t5-bucket", 40, "num_buckets", "32"}}},
    {"max_distance", "--max-distance", &SchemeSpec::max_distance, kInt, AtLeast(1), kShown, "N", "t5-bucket max_distance",
     {{"t5-bucket", 50, "max_distance", "128"}}},
    {"key_len", "--key-len", &SchemeSpec::key_len, kInt, AtLeast(1).Unset(-1), kHidden, "K", "[q, k] relative tables: keys k, the columns (default: --max-len)",
     {{"relative-index", 20, "keys k (columns)", "--max-len"},
      {"deberta-bucket", 20, "keys k (columns)", "--max-len"}, {"kerple", 60, "keys k", "--max-len"},
      {"sandwich", 50, "keys k (queries are the last q keys)", "--max-len"}}},
    {"max_relative_position", "--max-relative-position", &SchemeSpec::max_relative_position, kInt, AtLeast(0).Unset(-1), kHidden, "K", "relative-index shaw: clipping distance k, index clamp(j-i,-k,k)+k",
     {{"relative-index", 40, "shaw: clipping distance k (embedding rows 2k+1)", "required (shaw)"}}},
    {"convention", "--convention", &SchemeSpec::convention, kText, {}, kHidden, "C", "relative-index: shaw|hf-bert; deberta-bucket: hf (torch float32)|microsoft (numpy float64)",
     {{"relative-index", 30, "shaw (tensor2tensor) | hf-bert", "shaw"},
      {"deberta-bucket", 50, "hf (torch float32) | microsoft (numpy float64)", "hf"}}},
    {"bucket_size", "--bucket-size", &SchemeSpec::bucket_size, kInt, AtLeast(4), kShown, "N", "deberta-bucket position_buckets",
     {{"deberta-bucket", 30, "position_buckets (mid = bucket_size/2)", "256"}}},
    {"max_position", "--max-position", &SchemeSpec::max_position, kInt, AtLeast(1), kShown, "N", "deberta-bucket max_relative_positions",
     {{"deberta-bucket", 40, "max_relative_positions", "512"}}},
    {"clamp_len", "--clamp-len", &SchemeSpec::clamp_len, kInt, AtLeast(0), kShown, "N", "transformer-xl: clamp positions to this (0 = off)",
     {{"transformer-xl", 30, "positions above it are clamped to it (0 = off)", "0"}}},
    {"kerple_form", "--kerple-form", &SchemeSpec::kerple_form, kText, {}, kShown, "F", "kerple kernel: log (-r1*log(1+r2*d)) | power (-r1*d^r2)",
     {{"kerple", 30, "log | power", "log"}}},
    {"r1", "--r1", &SchemeSpec::r1, kText, {}, kHidden, "R|LIST", "kerple r1 > 0: a number or a comma list, one per head",
     {{"kerple", 10, "r1 > 0: one number or a comma list (one per head)", "required"}}},
    {"r2", "--r2", &SchemeSpec::r2, kText, {}, kHidden, "R|LIST", "kerple r2 > 0 (power: <= 2): a number or a comma list",
     {{"kerple", 20, "r2 > 0 (power: 0 < r2 <= 2): one number or a list", "required"}}},
    {"rel_form", "--rel-form", &SchemeSpec::rel_form, kText, {}, kShown, "F", "kerple, sandwich: matrix [heads, q, k] | offsets [heads, L]",
     {{"kerple", 80, "matrix [H, q, k] | offsets [H, L] (distance 0..L-1)", "matrix"},
      {"sandwich", 70, "matrix [H, q, k] | offsets [H, L] (distance 0..L-1)", "matrix"}}},
    {"mrope_section", "--mrope-section", &SchemeSpec::mrope_section, kText, {}, kHidden, "T,H,W", "mrope: t,h,w section sizes summing to rotary_dim/2 (Qwen2-VL 16,24,24; Qwen3-VL 24,20,20); --semantics llama.cpp: t,h,w[,e] as rope.dimension_sections",
     {{"mrope", 20, "t,h,w section sizes summing to rotary_dim/2 (Qwen2-VL 16,24,24; Qwen3-VL 24,20,20); llama.cpp: t,h,w[,e]", "required"}}},
    {"mrope_interleaved", "--mrope-interleaved", &SchemeSpec::mrope_interleaved, kSwitch, {}, kHidden, "", "mrope: Qwen3-VL interleaved sections (apply_interleaved_mrope)",
     {{"mrope", 30, "Qwen3-VL's interleaved sections (THWTHW...)", "off"}}},
    {"positions", "--positions", &SchemeSpec::positions, kText, {}, kHidden, "FILE", "mrope: position ids from a file, shape [3, L] (t, h, w) or [L] (NPY, CSV, JSON, ...); rope: row r is position ids[r], a list 0,1,4095, ranges 0:64[:STEP] or 5-9, or a file of [L] ids",
     {{"mrope", 40, "ids from a file: [3, L] (t, h, w) or [L] (NPY, CSV, JSON, ...)", "-"},
      {"rope", 95, "row r is position ids[r] (remapped positions, attention sinks): a list 0,1,4095, 0:64[:STEP], 5-9, or a file of [L] ids", "-"}}},
    {"mrope_layout", "--mrope-layout", &SchemeSpec::mrope_layout, kText, {}, kHidden, "SPEC", "mrope: ids as get_rope_index builds them, e.g. text:5,image:1x4x6,text:3",
     {{"mrope", 50, "ids by get_rope_index: e.g. text:5,image:1x4x6,text:3 (grid after the merge)", "-"}}},
    {"variant", "--variant", &SchemeSpec::variant, kText, {}, kHidden, "NAME", "vision-rope: pixtral | qwen2-vl | dinov3 | eva",
     {{"vision-rope", 10, "pixtral | qwen2-vl | dinov3 | eva (timm RotaryEmbeddingCat, axial)", "required"}}},
    {"frames", "--frames", &SchemeSpec::frames, kInt, AtLeast(1), kShown, "T", "vision-rope qwen2-vl: temporal patches t of grid_thw",
     {{"vision-rope", 60, "qwen2-vl: t of grid_thw (rows repeat per frame)", "1"}}},
    {"spatial_merge_size", "--spatial-merge-size", &SchemeSpec::spatial_merge_size, kInt, AtLeast(1), kShown, "N", "vision-rope qwen2-vl: spatial_merge_size",
     {{"vision-rope", 70, "qwen2-vl: merge window (row order)", "2"}}},
    {"normalize_coords", "--normalize-coords", &SchemeSpec::normalize_coords, kText, {}, kHidden, "M", "vision-rope dinov3: separate | max | min",
     {{"vision-rope", 80, "dinov3: separate | max | min", "separate"}}},
    {"ref_grid", "--ref-grid", &SchemeSpec::ref_grid, kText, {}, kHidden, "HxW", "vision-rope eva: timm ref_feat_shape HxW (the pretraining grid; ids scale by ref/grid)",
     {{"vision-rope", 90, "eva: timm ref_feat_shape HxW (ids scaled by ref/grid)", "-"}}},
  };
  return kRows;
}

}  // namespace

const std::vector<ParamRow>& ParamTable() { return Rows(); }

const ParamRow* FindParamRow(std::string_view key) {
  for (const ParamRow& r : Rows())
    if (r.key == key) return &r;
  return nullptr;
}

const ParamRow* FindParamRowByFlag(std::string_view flag) {
  for (const ParamRow& r : Rows()) {
    std::string_view names = r.flag;
    while (!names.empty()) {
      const std::size_t comma = names.find(',');
      if (names.substr(0, comma) == flag) return &r;
      names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
    }
  }
  return nullptr;
}

std::vector<SchemeParam> SchemeListing(std::string_view scheme) {
  struct Entry {
    int line, part;
    std::string_view flag, meaning, fallback;
  };
  std::vector<Entry> entries;
  for (const ParamRow& r : Rows())
    for (const ParamUse& u : r.schemes)
      if (u.scheme == scheme)
        entries.push_back({u.line, u.part, u.shown_as.empty() ? r.main_flag() : u.shown_as, u.meaning, u.fallback});
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.line != b.line ? a.line < b.line : a.part < b.part; });
  // The joined flags of shared lines live as long as the registry.
  static std::deque<std::string> joined;
  std::vector<SchemeParam> out;
  for (std::size_t i = 0; i < entries.size();) {
    std::size_t j = i + 1;
    while (j < entries.size() && entries[j].line == entries[i].line) ++j;
    std::string_view flag = entries[i].flag;
    if (j > i + 1) {
      std::string all(entries[i].flag);
      for (std::size_t k = i + 1; k < j; ++k) all += " / " + std::string(entries[k].flag);
      flag = joined.emplace_back(std::move(all));
    }
    out.push_back({flag, entries[i].meaning, entries[i].fallback});
    i = j;
  }
  return out;
}

double ParamNumber(const ParamRow& row, const SchemeSpec& spec) {
  if (const auto* i = std::get_if<std::int64_t SchemeSpec::*>(&row.member)) return static_cast<double>(spec.**i);
  if (const auto* d = std::get_if<double SchemeSpec::*>(&row.member)) return spec.**d;
  return 0;
}

}  // namespace pe
