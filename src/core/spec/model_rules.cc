#include "core/spec/model_rules.h"

#include <pe/model.h>  // SetPlanNoteSink is the API's (PE_API)

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <set>

#include "core/base/error.h"
#include "core/spec/engine_versions.h"
#include "core/spec/hf_config.h"

namespace pe {
namespace {

using json = nlohmann::json;

// A row with the generic Llama rule's other columns: head_dim (else
// hidden_size / num_attention_heads), every layer type but
// linear_attention rotates, the scaling on every layer.
FamilyRule R(const char* type, const char* cls, const char* pairing, const char* table, double partial, double theta,
             const char* source) {
  return {type, cls, pairing, table, partial, theta, "head_dim", -1, "", "", "", "", "", -1, 0, source};
}

// The "other rules" column of docs/models.md's family table, per row (a
// test compares the two word for word).
std::vector<std::pair<const char*, const char*>> FamilyNotes() {
  return {
      {"axk2", "head dim qk_rope_head_dim"},
      {"chatglm", "kv_channels; rotary dim = half the head; base x rope_ratio"},
      {"codegen", "rotary_dim"},
      {"cohere2", "RoPE on sliding_attention layers only; head_dim = hidden_size / num_attention_heads; no layer_types: sliding_window_pattern 4"},
      {"cohere2_moe", "as cohere2, head_dim (default 128); the dense prefix layers (first_k_dense_replace) rotate when prefix_dense_sliding_window_pattern is 1 (force_rope)"},
      {"deepseek_v2", "head dim qk_rope_head_dim"},
      {"deepseek_v3", "head dim qk_rope_head_dim; pairs interleaved when rope_interleave (default true)"},
      {"deepseek_v32", "as deepseek_v3 (MLA); the indexer's pairs half (`indexer.pairing`)"},
      {"deepseek_v4", "rope_parameters {main, compress} (4.x: rope_theta, compress_rope_theta (160000) + rope_scaling, YaRN attention_factor default 1.0); sliding_attention layers main, the others compress; rotary dim head_dim (512) x partial (qk_rope_head_dim / head_dim); the trailing channels of each head (nope part first, rope part last); no layer_types: compress_ratios"},
      {"dia", "decoder_config; head_dim default 128"},
      {"diffusion_gemma_text", "as gemma4_text"},
      {"exaone4", "RoPE on sliding_attention layers only (global layers NoPE); no layer_types: pattern 4"},
      {"gemma3_text", "sliding layers: rope_local_base_freq (10000), unscaled; head_dim default 256; no layer_types: pattern 6"},
      {"gemma3n_text", "sliding layers: rope_local_base_freq (10000), unscaled; head_dim default 256; pattern 6"},
      {"gemma4_text", "full_attention layers: global_head_dim (default 512), their rope_parameters block (proportional, partial 0.25); sliding: head_dim, theta 10000"},
      {"gemma4_unified_text", "as gemma4_text"},
      {"glm4_moe", "odd rotary dims (int(42 x 0.5) = 21) give (dim+1)/2 frequencies"},
      {"glm_moe_dsa", "head dim qk_rope_head_dim"},
      {"gpt_neox", "rotary_pct, rotary_emb_base"},
      {"gptj", "rotary_dim"},
      {"hy_v4", "head dim qk_rope_head_dim"},
      {"jetmoe", "head dim kv_channels (default 128; num_attention_heads = num_key_value_heads x num_experts_per_tok)"},
      {"glm5_next_text", "no RoPE: every layer NoPE (qk_rope_head_dim 0)"},
      {"cosmos3_edge_text", "M-RoPE sections always interleaved (apply_interleaved_mrope)"},
      {"granitemoehybrid", "only the `attention` layers of layer_types, and only when position_embedding_type is \"rope\" (default None: every layer NoPE)"},
      {"dots1", ""},
      {"kimi_k3", "no RoPE: every layer NoPE (KDA linear_attention and the gated MLA)"},
      {"llama4_text", "no_rope_layers (empty: every 4th layer NoPE, no_rope_layer_interval); RoPE layers chunked_attention; attention temperature on NoPE layers; head_dim default 128"},
      {"longcat_flash", "head dim qk_rope_head_dim"},
      {"minicpm3", "head dim qk_rope_head_dim"},
      {"minimax", "linear_attention layers NoPE"},
      {"minimax_m3_vl_text", "its rotary_dim key is not read (the module rotates the whole head)"},
      {"ministral3", "`llama_4_scaling_beta`: a query scale by position, named in a warning (not in the tables)"},
      {"mistral4", "head_dim = qk_nope_head_dim + qk_rope_head_dim; partial default qk_rope_head_dim / head_dim; pairs interleaved when rope_interleave (default true); `llama_4_scaling_beta` named in a warning"},
      {"modernbert", "4.x: global_rope_theta, sliding layers local_rope_theta (10000)"},
      {"modernbert-decoder", "as modernbert"},
      {"olmo3", "4.x scaling block on full_attention layers only"},
      {"phi3", "longrope: top-level original_max_position_embeddings"},
      {"qwen2_5_omni", "thinker_config.text_config; head_dim default 128"},
      {"qwen3_5_moe_text", "linear_attention layers NoPE"},
      {"qwen3_5_text", "linear_attention layers NoPE"},
      {"qwen4_exp_text", "linear_attention layers NoPE; M-RoPE sections always interleaved (as qwen3_5_text)"},
      {"qwen3_next", "linear_attention layers NoPE"},
      {"qwen3_omni_moe_text", "odd head dim 73: 37 frequencies, tables 74 wide"},
      {"smollm3", "no_rope_layers, else every no_rope_layer_interval-th (4) layer NoPE"},
      {"t5gemma", "decoder; head_dim default 256"},
      {"t5gemma2", "decoder; head_dim default 256"},
      {"youtu", "head dim qk_rope_head_dim; pairs interleaved when rope_interleave (YoutuAttention = DeepseekV3Attention)"},
      {"zamba2", "head dim attention_head_dim (2 x hidden_size / num_attention_heads); only the `hybrid` blocks of layers_block_type attend; RoPE only when use_mem_rope (default false: every layer NoPE)"},
  };
}

std::vector<FamilyRule> MakeRules() {
  // Class defaults (partial_rotary_factor, rope_theta) as the default
  // config of each class holds them (transformers 5.17,
  // tests/data/conformance); layout and table width as its modeling file
  // computes them, checked against that corpus (cos/sin columns, pairing).
  std::vector<FamilyRule> rows = {
      R("evolla", "EvollaConfig", "half", "half", 1.0, 500000.0, "models/evolla/modeling_evolla.py EvollaRotaryEmbedding"),
      R("afmoe", "AfmoeConfig", "half", "half", 1.0, 10000.0, "models/afmoe/modeling_afmoe.py AfmoeRotaryEmbedding"),
      R("apertus", "ApertusConfig", "half", "half", 1.0, 12000000.0, "models/apertus/modeling_apertus.py ApertusRotaryEmbedding"),
      R("arcee", "ArceeConfig", "half", "half", 1.0, 10000.0, "models/arcee/modeling_arcee.py ArceeRotaryEmbedding"),
      R("aria_text", "AriaTextConfig", "half", "half", 1.0, 10000.0, "models/aria/modeling_aria.py AriaTextRotaryEmbedding"),
      R("axk2", "AXK2Config", "half", "half", 1.0, 10000.0, "models/axk2/modeling_axk2.py AXK2RotaryEmbedding"),
      R("bitnet", "BitNetConfig", "half", "half", 1.0, 500000.0, "models/bitnet/modeling_bitnet.py BitNetRotaryEmbedding"),
      R("blt_global_transformer", "BltGlobalTransformerConfig", "interleaved", "interleaved", 1.0, 500000.0, "models/blt/modeling_blt.py BltRotaryEmbedding"),
      R("blt_local_encoder", "BltLocalEncoderConfig", "interleaved", "interleaved", 1.0, 500000.0, "models/blt/modeling_blt.py BltRotaryEmbedding"),
      R("blt_patcher", "BltPatcherConfig", "interleaved", "interleaved", 1.0, 10000.0, "models/blt/modeling_blt.py BltRotaryEmbedding"),
      R("chameleon", "ChameleonConfig", "half", "half", 1.0, 10000.0, "models/chameleon/modeling_chameleon.py ChameleonRotaryEmbedding"),
      R("cohere2", "Cohere2Config", "interleaved", "interleaved", 1.0, 10000.0, "models/cohere2/modeling_cohere2.py Cohere2RotaryEmbedding"),
      R("csm_depth_decoder_model", "CsmDepthDecoderConfig", "half", "half", 1.0, 500000.0, "models/csm/modeling_csm.py CsmRotaryEmbedding"),
      R("dbrx", "DbrxConfig", "half", "half", 1.0, 10000.0, "models/dbrx/modeling_dbrx.py DbrxRotaryEmbedding"),
      R("deepseek_ocr2_text", "DeepseekOcr2TextConfig", "half", "half", 1.0, 10000.0, "models/deepseek_ocr2/modeling_deepseek_ocr2.py DeepseekOcr2VisionRotaryEmbedding"),
      R("deepseek_v2", "DeepseekV2Config", "interleaved", "cache", 1.0, 10000.0, "models/deepseek_v2/modeling_deepseek_v2.py DeepseekV2RotaryEmbedding"),
      R("deepseek_v3", "DeepseekV3Config", "interleaved", "half", 1.0, 10000.0, "models/deepseek_v3/modeling_deepseek_v3.py DeepseekV3RotaryEmbedding"),
      R("deepseek_v32", "DeepseekV32Config", "interleaved", "half", 1.0, 10000.0, "models/deepseek_v32/modeling_deepseek_v32.py DeepseekV32RotaryEmbedding, DeepseekV32Indexer"),
      R("dia", "DiaDecoderConfig", "half", "half", 1.0, 10000.0, "models/dia/modeling_dia.py DiaRotaryEmbedding"),
      R("diffllama", "DiffLlamaConfig", "half", "half", 1.0, 10000.0, "models/diffllama/modeling_diffllama.py DiffLlamaRotaryEmbedding"),
      R("diffusion_gemma_text", "DiffusionGemmaTextConfig", "half", "half", 1.0, 1000000.0, "models/diffusion_gemma/modeling_diffusion_gemma.py DiffusionGemmaTextRotaryEmbedding"),
      R("doge", "DogeConfig", "half", "half", 1.0, 10000.0, "models/doge/modeling_doge.py DogeRotaryEmbedding"),
      R("emu3_text_model", "Emu3TextConfig", "half", "half", 1.0, 1000000.0, "models/emu3/modeling_emu3.py Emu3RotaryEmbedding"),
      R("ernie4_5", "Ernie4_5Config", "interleaved", "half", 1.0, 500000.0, "models/ernie4_5/modeling_ernie4_5.py Ernie4_5RotaryEmbedding"),
      R("ernie4_5_moe", "Ernie4_5_MoeConfig", "interleaved", "half", 1.0, 500000.0, "models/ernie4_5_moe/modeling_ernie4_5_moe.py Ernie4_5_MoeRotaryEmbedding"),
      R("esm", "EsmConfig", "half", "half", 1.0, 10000.0, "models/esm/modeling_esm.py EsmRotaryEmbedding"),
      R("eurobert", "EuroBertConfig", "half", "half", 1.0, 10000.0, "models/eurobert/modeling_eurobert.py EuroBertRotaryEmbedding"),
      R("exaone4", "Exaone4Config", "half", "half", 1.0, 10000.0, "models/exaone4/modeling_exaone4.py Exaone4RotaryEmbedding"),
      R("exaone_moe", "ExaoneMoeConfig", "half", "half", 1.0, 10000.0, "models/exaone_moe/modeling_exaone_moe.py ExaoneMoeRotaryEmbedding"),
      R("falcon", "FalconConfig", "half", "half", 1.0, 10000.0, "models/falcon/modeling_falcon.py FalconRotaryEmbedding"),
      R("flex_olmo", "FlexOlmoConfig", "half", "half", 1.0, 500000.0, "models/flex_olmo/modeling_flex_olmo.py FlexOlmoRotaryEmbedding"),
      R("gemma", "GemmaConfig", "half", "half", 1.0, 10000.0, "models/gemma/modeling_gemma.py GemmaRotaryEmbedding"),
      R("gemma2", "Gemma2Config", "half", "half", 1.0, 10000.0, "models/gemma2/modeling_gemma2.py Gemma2RotaryEmbedding"),
      R("gemma3_text", "Gemma3TextConfig", "half", "half", 1.0, 1000000.0, "models/gemma3/modeling_gemma3.py Gemma3RotaryEmbedding"),
      R("gemma3n_text", "Gemma3nTextConfig", "half", "half", 1.0, 1000000.0, "models/gemma3n/modeling_gemma3n.py Gemma3nRotaryEmbedding"),
      R("gemma4_text", "Gemma4TextConfig", "half", "half", 1.0, 1000000.0, "models/gemma4/modeling_gemma4.py Gemma4TextRotaryEmbedding"),
      R("gemma4_unified_text", "Gemma4UnifiedTextConfig", "half", "half", 1.0, 1000000.0, "models/gemma4_unified/modeling_gemma4_unified.py Gemma4UnifiedTextRotaryEmbedding"),
      R("glm4_moe", "Glm4MoeConfig", "half", "half", 0.5, 10000.0, "models/glm4_moe/modeling_glm4_moe.py Glm4MoeRotaryEmbedding"),
      R("glm_moe_dsa", "GlmMoeDsaConfig", "half", "half", 1.0, 10000.0, "models/glm_moe_dsa/modeling_glm_moe_dsa.py GlmMoeDsaRotaryEmbedding"),
      R("glmasr_encoder", "GlmAsrEncoderConfig", "half", "half", 0.5, 10000.0, "models/glmasr/modeling_glmasr.py GlmAsrRotaryEmbedding"),
      R("llama", "LlamaConfig", "half", "half", 1.0, 10000.0, "models/llama/modeling_llama.py LlamaRotaryEmbedding"),
      R("granite4_vision_text", "Granite4VisionTextConfig", "half", "half", 1.0, 10000.0, "models/granite4_vision/modeling_granite4_vision.py Granite4VisionTextRotaryEmbedding"),
      R("granite_swa", "GraniteSWAConfig", "half", "half", 1.0, 10000.0, "models/granite_swa/modeling_granite_swa.py GraniteSWARotaryEmbedding"),
      R("granitemoe", "GraniteMoeConfig", "half", "half", 1.0, 10000.0, "models/granitemoe/modeling_granitemoe.py GraniteMoeRotaryEmbedding"),
      R("granitemoeshared", "GraniteMoeSharedConfig", "half", "half", 1.0, 10000.0, "models/granitemoeshared/modeling_granitemoeshared.py GraniteMoeSharedRotaryEmbedding"),
      R("helium", "HeliumConfig", "interleaved", "half", 1.0, 100000.0, "models/helium/modeling_helium.py HeliumRotaryEmbedding"),
      R("hrm_text", "HrmTextConfig", "half", "half", 1.0, 10000.0, "models/hrm/modeling_hrm.py HrmTextRotaryEmbedding"),
      R("hunyuan_v1_moe", "HunYuanMoEV1Config", "half", "half", 1.0, 10000.0, "models/hunyuan_v1_moe/modeling_hunyuan_v1_moe.py HunYuanMoEV1RotaryEmbedding"),
      R("hy_v4", "HYV4Config", "half", "half", 1.0, 10000.0, "models/hy_v4/modeling_hy_v4.py HYV4RotaryEmbedding"),
      R("jina_embeddings_v3", "JinaEmbeddingsV3Config", "half", "half", 1.0, 20000.0, "models/jina_embeddings_v3/modeling_jina_embeddings_v3.py JinaEmbeddingsV3RotaryEmbedding"),
      R("kyutai_speech_to_text", "KyutaiSpeechToTextConfig", "half", "half", 1.0, 10000.0, "models/kyutai_speech_to_text/modeling_kyutai_speech_to_text.py KyutaiSpeechToTextRotaryEmbedding"),
      R("laguna", "LagunaConfig", "half", "half", 0.5, 500000.0, "models/laguna/modeling_laguna.py LagunaRotaryEmbedding"),
      R("lasr_encoder", "LasrEncoderConfig", "half", "half", 1.0, 10000.0, "models/lasr/modeling_lasr.py LasrEncoderRotaryEmbedding"),
      R("lfm2", "Lfm2Config", "half", "half", 1.0, 1000000.0, "models/lfm2/modeling_lfm2.py Lfm2RotaryEmbedding"),
      R("lfm2_moe", "Lfm2MoeConfig", "half", "half", 1.0, 1000000.0, "models/lfm2_moe/modeling_lfm2_moe.py Lfm2MoeRotaryEmbedding"),
      R("llama4_text", "Llama4TextConfig", "interleaved", "cache", 1.0, 500000.0, "models/llama4/modeling_llama4.py Llama4TextRotaryEmbedding"),
      R("longcat_flash", "LongcatFlashConfig", "half", "half", 1.0, 10000000.0, "models/longcat_flash/modeling_longcat_flash.py LongcatFlashRotaryEmbedding"),
      R("mellum", "MellumConfig", "half", "half", 1.0, 500000.0, "models/mellum/modeling_mellum.py MellumRotaryEmbedding"),
      R("mimi", "MimiConfig", "half", "half", 1.0, 10000.0, "models/mimi/modeling_mimi.py MimiRotaryEmbedding"),
      R("mimo_v2_flash", "MiMoV2FlashConfig", "half", "half", 0.334, 5000000.0, "models/mimo_v2_flash/modeling_mimo_v2_flash.py MiMoV2FlashRotaryEmbedding"),
      R("minicpm3", "MiniCPM3Config", "half", "half", 1.0, 10000.0, "models/minicpm3/modeling_minicpm3.py MiniCPM3RotaryEmbedding"),
      R("minimax", "MiniMaxConfig", "half", "half", 1.0, 1000000.0, "models/minimax/modeling_minimax.py MiniMaxRotaryEmbedding"),
      R("minimax_m3_vl_text", "MiniMaxM3VLTextConfig", "half", "half", 1.0, 5000000.0, "models/minimax_m3_vl/modeling_minimax_m3_vl.py MiniMaxM3VLRotaryEmbedding"),
      R("ministral", "MinistralConfig", "half", "half", 1.0, 10000.0, "models/ministral/modeling_ministral.py MinistralRotaryEmbedding"),
      R("ministral3", "Ministral3Config", "half", "half", 1.0, 1000000.0, "models/ministral3/modeling_ministral3.py Ministral3RotaryEmbedding"),
      R("mistral", "MistralConfig", "half", "half", 1.0, 10000.0, "models/mistral/modeling_mistral.py MistralRotaryEmbedding"),
      R("mixtral", "MixtralConfig", "half", "half", 1.0, 1000000.0, "models/mixtral/modeling_mixtral.py MixtralRotaryEmbedding"),
      R("modernbert", "ModernBertConfig", "half", "half", 1.0, 160000.0, "models/modernbert/modeling_modernbert.py ModernBertRotaryEmbedding"),
      R("modernbert-decoder", "ModernBertDecoderConfig", "half", "half", 1.0, 160000.0, "models/modernbert_decoder/modeling_modernbert_decoder.py ModernBertDecoderRotaryEmbedding"),
      R("moonshine", "MoonshineConfig", "interleaved", "half", 0.9, 10000.0, "models/moonshine/modeling_moonshine.py MoonshineRotaryEmbedding"),
      R("moonshine_streaming", "MoonshineStreamingConfig", "interleaved", "half", 0.8, 10000.0, "models/moonshine_streaming/modeling_moonshine_streaming.py MoonshineStreamingRotaryEmbedding"),
      R("moshi", "MoshiConfig", "half", "half", 1.0, 10000.0, "models/moshi/modeling_moshi.py MoshiRotaryEmbedding"),
      R("muse_glimmer_text", "MuseGlimmerTextConfig", "half", "half", 1.0, 10000.0, "models/muse_glimmer/modeling_muse_glimmer.py MuseGlimmerTextRotaryEmbedding"),
      R("nanochat", "NanoChatConfig", "half", "half", 1.0, 10000.0, "models/nanochat/modeling_nanochat.py NanoChatRotaryEmbedding"),
      R("nemotron", "NemotronConfig", "half", "half", 0.5, 10000.0, "models/nemotron/modeling_nemotron.py NemotronRotaryEmbedding"),
      R("nomic_bert", "NomicBertConfig", "half", "half", 1.0, 1000.0, "models/nomic_bert/modeling_nomic_bert.py NomicBertRotaryEmbedding"),
      R("olmo", "OlmoConfig", "half", "half", 1.0, 10000.0, "models/olmo/modeling_olmo.py OlmoRotaryEmbedding"),
      R("olmo2", "Olmo2Config", "half", "half", 1.0, 10000.0, "models/olmo2/modeling_olmo2.py Olmo2RotaryEmbedding"),
      R("olmo3", "Olmo3Config", "half", "half", 1.0, 500000.0, "models/olmo3/modeling_olmo3.py Olmo3RotaryEmbedding"),
      R("openai_privacy_filter", "OpenAIPrivacyFilterConfig", "half", "cache", 1.0, 150000.0, "models/openai_privacy_filter/modeling_openai_privacy_filter.py OpenAIPrivacyFilterRotaryEmbedding"),
      R("pe_audio_encoder", "PeAudioEncoderConfig", "interleaved", "half", 1.0, 20000.0, "models/pe_audio/modeling_pe_audio.py PeAudioEncoderRotaryEmbedding"),
      R("pe_audio_video_encoder", "PeAudioVideoEncoderConfig", "interleaved", "half", 1.0, 20000.0, "models/pe_audio_video/modeling_pe_audio_video.py PeAudioVideoEncoderRotaryEmbedding"),
      R("persimmon", "PersimmonConfig", "half", "half", 0.5, 10000.0, "models/persimmon/modeling_persimmon.py PersimmonRotaryEmbedding"),
      R("phi", "PhiConfig", "half", "half", 0.5, 10000.0, "models/phi/modeling_phi.py PhiRotaryEmbedding"),
      R("phi4_multimodal", "Phi4MultimodalConfig", "half", "half", 1.0, 10000.0, "models/phi4_multimodal/modeling_phi4_multimodal.py Phi4MultimodalRotaryEmbedding"),
      R("phimoe", "PhimoeConfig", "half", "half", 1.0, 1000000.0, "models/phimoe/modeling_phimoe.py PhimoeRotaryEmbedding"),
      R("qwen2", "Qwen2Config", "half", "half", 1.0, 10000.0, "models/qwen2/modeling_qwen2.py Qwen2RotaryEmbedding"),
      R("qwen2_5_omni", "Qwen2_5OmniTextConfig", "half", "half", 1.0, 1000000.0, "models/qwen2_5_omni/modeling_qwen2_5_omni.py Qwen2_5OmniDiTRotaryEmbedding"),
      R("qwen2_5_omni_talker", "Qwen2_5OmniTalkerConfig", "half", "half", 1.0, 1000000.0, "models/qwen2_5_omni/modeling_qwen2_5_omni.py Qwen2_5OmniDiTRotaryEmbedding"),
      R("qwen2_5_omni_text", "Qwen2_5OmniTextConfig", "half", "half", 1.0, 1000000.0, "models/qwen2_5_omni/modeling_qwen2_5_omni.py Qwen2_5OmniDiTRotaryEmbedding"),
      R("qwen3_moe", "Qwen3MoeConfig", "half", "half", 1.0, 10000.0, "models/qwen3_moe/modeling_qwen3_moe.py Qwen3MoeRotaryEmbedding"),
      R("qwen3_next", "Qwen3NextConfig", "half", "half", 0.25, 10000.0, "models/qwen3_next/modeling_qwen3_next.py Qwen3NextRotaryEmbedding"),
      R("qwen3_omni_moe_talker_code_predictor", "Qwen3OmniMoeTalkerCodePredictorConfig", "half", "half", 1.0, 10000.0, "models/qwen3_omni_moe/modeling_qwen3_omni_moe.py Qwen3OmniMoeRotaryEmbedding"),
      R("qwen3_omni_moe_talker_text", "Qwen3OmniMoeTalkerTextConfig", "half", "half", 1.0, 10000.0, "models/qwen3_omni_moe/modeling_qwen3_omni_moe.py Qwen3OmniMoeRotaryEmbedding"),
      R("qwen3_omni_moe_text", "Qwen3OmniMoeTextConfig", "half", "half", 1.0, 1000000.0, "models/qwen3_omni_moe/modeling_qwen3_omni_moe.py Qwen3OmniMoeRotaryEmbedding"),
      R("seed_oss", "SeedOssConfig", "half", "half", 1.0, 10000.0, "models/seed_oss/modeling_seed_oss.py SeedOssRotaryEmbedding"),
      R("smollm3", "SmolLM3Config", "half", "half", 1.0, 2000000.0, "models/smollm3/modeling_smollm3.py SmolLM3RotaryEmbedding"),
      R("solar_open", "SolarOpenConfig", "half", "half", 1.0, 1000000.0, "models/solar_open/modeling_solar_open.py SolarOpenRotaryEmbedding"),
      R("stablelm", "StableLmConfig", "half", "half", 0.25, 10000.0, "models/stablelm/modeling_stablelm.py StableLmRotaryEmbedding"),
      R("starcoder2", "Starcoder2Config", "half", "half", 1.0, 10000.0, "models/starcoder2/modeling_starcoder2.py Starcoder2RotaryEmbedding"),
      R("step3p5", "Step3p7TextConfig", "half", "half", 1.0, 10000.0, "models/step3p5/modeling_step3p5.py Step3p7RotaryEmbedding"),
      R("t5gemma", "T5GemmaModuleConfig", "half", "half", 1.0, 10000.0, "models/t5gemma/modeling_t5gemma.py T5GemmaRotaryEmbedding"),
      R("t5gemma2", "T5Gemma2DecoderConfig", "half", "half", 1.0, 1000000.0, "models/t5gemma2/modeling_t5gemma2.py T5Gemma2RotaryEmbedding"),
      R("t5gemma2_decoder", "T5Gemma2DecoderConfig", "half", "half", 1.0, 1000000.0, "models/t5gemma2/modeling_t5gemma2.py T5Gemma2RotaryEmbedding"),
      R("t5gemma2_text", "T5Gemma2TextConfig", "half", "half", 1.0, 1000000.0, "models/t5gemma2/modeling_t5gemma2.py T5Gemma2RotaryEmbedding"),
      R("timesfm2_5", "TimesFm2_5Config", "half", "half", 1.0, 10000.0, "models/timesfm2_5/modeling_timesfm2_5.py TimesFm2_5RotaryEmbedding"),
      R("vaultgemma", "VaultGemmaConfig", "half", "half", 1.0, 10000.0, "models/vaultgemma/modeling_vaultgemma.py VaultGemmaRotaryEmbedding"),
      R("voxtral_realtime_encoder", "VoxtralRealtimeEncoderConfig", "half", "half", 1.0, 10000.0, "models/voxtral_realtime/modeling_voxtral_realtime.py VoxtralRealtimeRotaryEmbedding"),
      R("youtu", "YoutuConfig", "interleaved", "half", 1.0, 10000.0,
        "models/youtu/modular_youtu.py YoutuRotaryEmbedding, YoutuAttention = DeepseekV3Attention (interleaved pairs when rope_interleave)"),
      R("zaya", "ZayaConfig", "half", "half", 0.5, 5000000.0, "models/zaya/modeling_zaya.py ZayaRotaryEmbedding"),
      // Families without a corpus entry (their modules take 3-D position
      // ids, or the sweep did not reach them).
      R("glm", "GlmConfig", "interleaved", "half", 0.5, 10000.0,
        "models/glm/modeling_glm.py apply_rotary_pos_emb (cos[..., :d/2].repeat_interleave(2))"),
      R("glm4", "Glm4Config", "interleaved", "half", 0.5, 10000.0,
        "models/glm4/modeling_glm4.py apply_rotary_pos_emb (cos[..., :d/2].repeat_interleave(2))"),
      R("cohere", "CohereConfig", "interleaved", "interleaved", 1.0, 10000.0,
        "models/cohere/modeling_cohere.py CohereRotaryEmbedding (repeat_interleave), rotate_half on pairs"),
      R("gptj", "GPTJConfig", "interleaved", "interleaved", 1.0, 10000.0,
        "models/gptj/modeling_gptj.py rotate_every_two, rotary_dim"),
      R("gpt_neox", "GPTNeoXConfig", "half", "half", 0.25, 10000.0,
        "models/gpt_neox/modeling_gpt_neox.py GPTNeoXRotaryEmbedding (rotary_pct, rotary_emb_base)"),
      R("gpt_oss", "GptOssConfig", "half", "cache", 1.0, 150000.0,
        "models/gpt_oss/modeling_gpt_oss.py GptOssRotaryEmbedding (cos/sin of width head_dim/2, _apply_rotary_emb halves)"),
      R("qwen2_vl_text", "Qwen2VLTextConfig", "half", "half", 1.0, 1000000.0,
        "models/qwen2_vl/modeling_qwen2_vl.py Qwen2VLRotaryEmbedding (M-RoPE: one text axis = 1-D RoPE)"),
      R("qwen2_5_vl_text", "Qwen2_5_VLTextConfig", "half", "half", 1.0, 1000000.0,
        "models/qwen2_5_vl/modeling_qwen2_5_vl.py Qwen2_5_VLRotaryEmbedding (M-RoPE)"),
      R("qwen3_vl_text", "Qwen3VLTextConfig", "half", "half", 1.0, 5000000.0,
        "models/qwen3_vl/modeling_qwen3_vl.py Qwen3VLTextRotaryEmbedding (interleaved M-RoPE sections)"),
      R("qwen3_5_text", "Qwen3_5TextConfig", "half", "half", 0.25, 10000000.0,
        "models/qwen3_5/modeling_qwen3_5.py Qwen3_5TextRotaryEmbedding (linear_attention layers NoPE)"),
      R("qwen3_5_moe_text", "Qwen3_5MoeTextConfig", "half", "half", 0.25, 10000000.0,
        "models/qwen3_5_moe/modeling_qwen3_5_moe.py Qwen3_5MoeTextRotaryEmbedding (linear_attention layers NoPE)"),
      R("qwen3", "Qwen3Config", "half", "half", 1.0, 10000.0, "models/qwen3/modeling_qwen3.py Qwen3RotaryEmbedding"),
      R("phi3", "Phi3Config", "half", "half", 1.0, 10000.0,
        "models/phi3/modeling_phi3.py Phi3RotaryEmbedding (longrope, top-level original_max_position_embeddings)"),
      R("qwen2_moe", "Qwen2MoeConfig", "half", "half", 1.0, 10000.0, "models/qwen2_moe/modeling_qwen2_moe.py Qwen2MoeRotaryEmbedding"),
      R("granite", "GraniteConfig", "half", "half", 1.0, 10000.0, "models/granite/modeling_granite.py GraniteRotaryEmbedding"),
      R("exaone", "ExaoneConfig", "half", "half", 1.0, 10000.0, "LGAI-EXAONE modeling_exaone.py ExaoneRotaryEmbedding"),
      R("internlm2", "InternLM2Config", "half", "half", 1.0, 10000.0, "internlm modeling_internlm2.py InternLM2RotaryEmbedding"),
      R("minicpm", "MiniCPMConfig", "half", "half", 1.0, 10000.0, "openbmb modeling_minicpm.py MiniCPMRotaryEmbedding"),
      R("baichuan", "BaichuanConfig", "half", "half", 1.0, 10000.0, "baichuan-inc modeling_baichuan.py RotaryEmbedding"),
      R("codegen", "CodeGenConfig", "interleaved", "interleaved", 1.0, 10000.0,
        "models/codegen/modeling_codegen.py rotate_every_two, rotary_dim"),
      R("chatglm", "ChatGLMConfig", "interleaved", "interleaved", 0.5, 10000.0,
        "THUDM modeling_chatglm.py RotaryEmbedding (kv_channels, half the head, base x rope_ratio)"),
      // Read from transformers' modeling / configuration files (stored
      // copies, commits named in tests/clients/test_models_families.py),
      // beyond the corpus.
      R("blt_local_decoder", "BltLocalDecoderConfig", "interleaved", "interleaved", 1.0, 500000.0,
        "models/blt/modeling_blt.py BltRotaryEmbedding; configuration_blt.py BltLocalDecoderConfig (default_theta 500000)"),
      R("cohere2_moe", "Cohere2MoeConfig", "interleaved", "interleaved", 1.0, 10000.0,
        "models/cohere2_moe/modular_cohere2_moe.py Cohere2MoeRotaryEmbedding = Cohere2RotaryEmbedding, "
        "Cohere2MoeAttention (force_rope); configuration_cohere2_moe.py"),
      R("jetmoe", "JetMoeConfig", "half", "half", 1.0, 10000.0,
        "models/jetmoe/modeling_jetmoe.py JetMoeRotaryEmbedding; configuration_jetmoe.py attribute_map head_dim -> "
        "kv_channels"),
      R("mistral4", "Mistral4Config", "interleaved", "half", 1.0, 10000.0,
        "models/mistral4/modular_mistral4.py Mistral4RotaryEmbedding = LlamaRotaryEmbedding, Mistral4Attention "
        "(apply_rotary_pos_emb_interleave when rope_interleave); configuration_mistral4.py __post_init__"),
      R("zamba2", "Zamba2Config", "half", "half", 1.0, 10000.0,
        "models/zamba2/modeling_zamba2.py Zamba2RotaryEmbedding, Zamba2Attention (if config.use_mem_rope); "
        "configuration_zamba2.py attention_head_dim"),
      R("deepseek_v4", "DeepseekV4Config", "interleaved", "cache", 0.125, 10000.0,
        "models/deepseek_v4/modeling_deepseek_v4.py DeepseekV4RotaryEmbedding, apply_rotary_pos_emb, "
        "DeepseekV4Attention; configuration_deepseek_v4.py __post_init__"),
      // GLM's vision-language text models: M-RoPE text positions are 1-D RoPE's.
      R("glm4v_text", "Glm4vTextConfig", "interleaved", "half", 1.0, 10000.0,
        "models/glm4v/modeling_glm4v.py Glm4vTextRotaryEmbedding (cat(freqs, freqs)), apply_multimodal_rotary_pos_emb "
        "(cos[..., :d/2].repeat_interleave(2), rotate_half_llm)"),
      R("glm_ocr_text", "GlmOcrTextConfig", "interleaved", "half", 1.0, 10000.0,
        "models/glm_ocr/modular_glm_ocr.py GlmOcrTextAttention = Glm4vTextAttention"),
      R("glm4v_moe_text", "Glm4vMoeTextConfig", "half", "half", 0.5, 10000.0,
        "models/glm4v_moe/modular_glm4v_moe.py Glm4vMoeTextAttention (apply_multimodal_rotary_pos_emb, rotate_half)"),
      R("glm_image_text", "GlmImageTextConfig", "half", "half", 1.0, 10000.0,
        "models/glm_image/modular_glm_image.py GlmImageTextAttention = Glm4vMoeTextAttention"),
      R("paddleocr_vl_text", "PaddleOCRTextConfig", "half", "half", 1.0, 500000.0,
        "models/paddleocr_vl/modular_paddleocr_vl.py PaddleOCRRotaryEmbedding = Qwen2VLRotaryEmbedding, "
        "PaddleOCRAttention = Qwen2_5OmniAttention (M-RoPE, rotate_half)"),
      R("hunyuan_vl_text", "HunYuanVLTextConfig", "half", "half", 1.0, 10000.0,
        "models/hunyuan_vl/modular_hunyuan_vl.py HunYuanVLRotaryEmbedding = HunYuanDenseV1RotaryEmbedding (its "
        "inv_freq; XD-RoPE channels equal for text), rotate_half"),
      R("hunyuan_v1_dense", "HunYuanDenseV1Config", "half", "half", 1.0, 10000.0,
        "models/hunyuan_v1_dense/modeling_hunyuan_v1_dense.py HunYuanDenseV1RotaryEmbedding (dynamic NTK alpha), "
        "rotate_half; configuration_hunyuan_v1_dense.py (rope_theta 10000, head_dim None: hidden / heads)"),
      R("ernie4_5_vl_moe_text", "Ernie4_5_VLMoeTextConfig", "interleaved", "interleaved", 1.0, 500000.0,
        "models/ernie4_5_vl_moe/modular_ernie4_5_vl_moe.py Ernie4_5_VLMoeTextRotaryEmbedding (h / w frequencies "
        "pre-rotated, recomposition_to_3d: for text positions the frequencies in order, repeat_interleave(2)), "
        "rotate_half_text"),
      R("qwen4_exp_text", "Qwen4ExpTextConfig", "half", "half", 1.0, 10000.0,
        "models/qwen4_exp/modular_qwen4_exp.py Qwen4ExpTextRotaryEmbedding = Qwen3_5TextRotaryEmbedding "
        "(interleaved M-RoPE sections), linear_attention layers NoPE"),
      R("glm5_next_text", "Glm5NextTextConfig", "half", "half", 1.0, 10000.0,
        "models/glm5_next/modeling_glm5_next.py (no text rotary class, only Glm5NextVisionRotaryEmbedding; "
        "Glm5NextTextConfig qk_rope_head_dim 0)"),
      R("cosmos3_edge_text", "Cosmos3EdgeTextConfig", "half", "half", 1.0, 100000000.0,
        "models/cosmos3_edge/modular_cosmos3_edge.py Cosmos3EdgeTextRotaryEmbedding (apply_interleaved_mrope, "
        "cat(freqs, freqs)), Cosmos3EdgeTextAttention = LlamaAttention"),
      R("olmoe", "OlmoeConfig", "half", "half", 1.0, 10000.0,
        "models/olmoe/modeling_olmoe.py OlmoeRotaryEmbedding; configuration_olmoe.py (no rope_theta of its own: "
        "PreTrainedConfig's 10000)"),
      R("dots1", "Dots1Config", "half", "half", 1.0, 10000.0,
        "models/dots1/modeling_dots1.py Dots1RotaryEmbedding; configuration_dots1.py (layer_types: sliding from "
        "max_window_layers, every layer rotates)"),
      R("granitemoehybrid", "GraniteMoeHybridConfig", "half", "half", 1.0, 10000.0,
        "models/granitemoehybrid/modeling_granitemoehybrid.py GraniteMoeHybridRotaryEmbedding; "
        "configuration_granitemoehybrid.py (position_embedding_type None or \"rope\"; layer_types mamba / "
        "attention)"),
      R("kimi_k3", "KimiK3TextConfig", "half", "half", 1.0, 10000.0,
        "models/kimi_k3/modular_kimi_k3.py KimiK3GatedMLA (no RoPE on any head part), KimiK3DeltaAttention"),
  };
  auto row = [&](const char* type) -> FamilyRule& {
    for (FamilyRule& r : rows)
      if (std::string(r.model_type) == type) return r;
    throw Error(ErrorKind::kInternal, fmt::format("family table: no row '{}'", type));
  };
  // Which layers rotate, and with what.
  row("cohere2").rope_types = "sliding_attention";  // Cohere2Attention: rotary only when sliding_window is set
  row("cohere2").head_dim_key = "hidden/heads";     // Cohere2Config: head_dim = hidden_size // num_attention_heads
  row("cohere2").pattern = 4;
  row("exaone4").rope_types = "sliding_attention";  // Exaone4Attention: global layers are NoPE (is_sliding)
  row("exaone4").pattern = 4;
  row("olmo3").scaled_types = "full_attention";     // Olmo3: rope scaling on full-attention layers only
  for (const char* t : {"gemma3_text", "gemma3n_text"}) {
    row(t).local_theta_key = "rope_local_base_freq";  // sliding layers: this theta, no scaling
    row(t).local_theta = 10000.0;
    row(t).head_dim = 256;
    row(t).pattern = 6;
  }
  for (const char* t : {"gemma4_text", "gemma4_unified_text", "diffusion_gemma_text"}) {
    row(t).full_head_dim_key = "global_head_dim";  // full-attention layers: global_head_dim (class default 512)
    row(t).local_theta = 10000.0;
    row(t).head_dim = 256;
  }
  row("llama4_text").head_dim = 128;
  row("modernbert").local_theta_key = "local_rope_theta";
  row("modernbert").local_theta = 10000.0;
  row("modernbert-decoder").local_theta_key = "local_rope_theta";
  row("modernbert-decoder").local_theta = 10000.0;
  // Empty default configs (composite classes): the text model's class defaults.
  row("dia").head_dim = 128;
  row("qwen2_5_omni").head_dim = 128;
  row("t5gemma").head_dim = 256;
  row("t5gemma2").head_dim = 256;
  for (const char* t : {"deepseek_v2", "deepseek_v3", "deepseek_v32", "glm_moe_dsa", "longcat_flash", "minicpm3", "youtu",
                        "axk2", "hy_v4"})
    row(t).head_dim_key = "qk_rope_head_dim";
  // Cohere2MoeAttention = Cohere2Attention (RoPE when sliding) + force_rope
  // on the dense prefix layers when prefix_dense_sliding_window_pattern is 1.
  row("cohere2_moe").rope_types = "sliding_attention";
  row("cohere2_moe").head_dim = 128;
  row("cohere2_moe").pattern = 4;
  row("jetmoe").head_dim_key = "kv_channels";  // JetMoeConfig.attribute_map: head_dim -> kv_channels
  // Mistral4Config.__post_init__: head_dim = qk_nope_head_dim + qk_rope_head_dim
  // (whatever the file says), partial_rotary_factor default qk_rope_head_dim / head_dim.
  row("mistral4").head_dim_key = "qk_nope_head_dim+qk_rope_head_dim";
  // Zamba2: the shared attention of the "hybrid" blocks, at attention_head_dim
  // (2 * hidden_size / num_attention_heads), rotates only when use_mem_rope.
  row("zamba2").head_dim_key = "attention_head_dim";
  row("zamba2").block_types_key = "layers_block_type";
  row("zamba2").rope_types = "hybrid";
  row("zamba2").rope_switch = "use_mem_rope";
  // DeepSeek-V4: rope_parameters {main, compress}; sliding layers read main,
  // the compressed ones (CSA / HCA) compress; the trailing rotary_dim channels.
  row("deepseek_v4").head_dim_key = "head_dim x partial_rotary_factor";
  row("deepseek_v4").head_dim = 512;
  row("deepseek_v4").rope_labels = "sliding_attention=main,*=compress";
  row("deepseek_v4").rope_slice = "trailing";
  // GraniteMoeHybrid: the attention layers rotate only when position_embedding_type is "rope".
  row("granitemoehybrid").rope_types = "attention";
  row("granitemoehybrid").rope_switch = "position_embedding_type=rope";
  row("kimi_k3").nope_types = "*";  // KimiK3GatedMLA and KimiK3DeltaAttention apply no RoPE
  row("glm5_next_text").nope_types = "*";  // its DSA attention has no rope part (qk_rope_head_dim 0)
  row("kimi_k3").head_dim_key = "qk_rope_head_dim";
  for (const auto& [type, text] : FamilyNotes()) row(type).notes = text;
  return rows;
}

bool InList(const char* list, const std::string& item) {
  const std::string s = list;
  if (s == "*") return true;  // every layer type
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    if (s.compare(pos, comma - pos, item) == 0 && comma - pos == item.size()) return true;
    pos = comma + 1;
  }
  return false;
}

// The label a layer type reads from rope_parameters under the rule's
// rope_labels ("sliding_attention=main,*=compress"), or "" (by layer type).
std::string RopeLabel(const FamilyRule& rule, const std::string& type) {
  const std::string list = rule.rope_labels;
  std::string any;
  std::size_t pos = 0;
  while (!list.empty() && pos <= list.size()) {
    std::size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = list.substr(pos, comma - pos);
    const std::size_t eq = item.find('=');
    if (eq != std::string::npos) {
      if (item.compare(0, eq, type) == 0 && eq == type.size()) return item.substr(eq + 1);
      if (item.compare(0, eq, "*") == 0 && eq == 1) any = item.substr(eq + 1);
    }
    pos = comma + 1;
  }
  return any;
}

// The generic rule: what transformers' LlamaRotaryEmbedding and
// PreTrainedConfig give a config that states nothing else.
const FamilyRule kGeneric = {"", "PreTrainedConfig", "half", "half", 1.0, 10000.0, "head_dim", -1, "", "", "", "", "", -1,
                             0, "models/llama/modeling_llama.py LlamaRotaryEmbedding, modeling_rope_utils.py"};

std::optional<double> Num(const json& o, const char* key) {
  if (o.is_object() && o.contains(key) && o[key].is_number()) return o[key].get<double>();
  return std::nullopt;
}

std::optional<std::int64_t> Int(const json& o, const char* key) {
  if (o.is_object() && o.contains(key) && o[key].is_number_integer()) return o[key].get<std::int64_t>();
  return std::nullopt;
}

std::string Str(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}

std::string Clip(const std::string& s) { return s.size() > 64 ? s.substr(0, 64) + "..." : s; }

std::string NumText(double v) { return fmt::format("{}", v); }

// One RoPE parameter block (4.x rope_scaling, 5.x rope_parameters or one
// of its per-layer-type entries) into `s`; `scaling` false keeps only the
// theta and partial factor (a layer type the scaling does not reach).
// The keys of a rope block only some engine versions read (ScalingRules(),
// core/spec/engine_versions.h): read into `s` where the rule of
// s->semantics for s->rope_scaling reads them; a key that rule never reads
// is dropped as the engine drops it, with a note naming the version.
void ApplyEngineKeys(const json& rs, SchemeSpec* s, std::vector<std::string>* notes,
                     const std::function<std::optional<double>(const char*)>& num) {
  const EngineVersion& v = FindEngineVersion(s->semantics);
  const std::string type = s->rope_scaling;
  if (v.family != EngineFamily::kHf && v.family != EngineFamily::kHf445) {
    if (RuleReads(v.name, type, "attn_factor"))
      if (auto x = num("attn_factor")) s->attn_factor = *x;
    if (RuleReads(v.name, type, "max_trained_positions"))
      if (auto x = num("max_trained_positions")) s->max_trained_positions = static_cast<std::int64_t>(*x);
    if (RuleReads(v.name, type, "mixed_b"))
      if (auto x = num("mixed_b")) s->mixed_b = *x;
    if (RuleReads(v.name, type, "short_mscale"))
      if (auto x = num("short_mscale")) s->short_mscale = *x;
    if (RuleReads(v.name, type, "long_mscale"))
      if (auto x = num("long_mscale")) s->long_mscale = *x;
  }
  const ScalingRule* rule = FindScalingRule(v.name, type);
  if (!rule || !*rule->ignores) return;
  std::string dropped;
  const auto drop = [&](const char* key, auto clear) {
    if (!rs.contains(key) || !RuleIgnores(v.name, type, key)) return;
    clear();
    dropped += fmt::format("{}{}", dropped.empty() ? "" : ", ", key);
  };
  drop("attention_factor", [&] { s->attention_factor = SchemeSpec{}.attention_factor; });
  drop("mscale", [&] { s->mscale = SchemeSpec{}.mscale; });
  drop("mscale_all_dim", [&] { s->mscale_all_dim = SchemeSpec{}.mscale_all_dim; });
  drop("truncate", [&] { s->truncate = true; });
  drop("factor", [&] { s->factor = SchemeSpec{}.factor; });
  drop("max_trained_positions", [] {});
  drop("attn_factor", [] {});
  drop("short_mscale", [] {});
  drop("long_mscale", [] {});
  if (!dropped.empty())
    notes->push_back(fmt::format("--semantics {}: {} {} never reads rope_parameters {} of {} ({}): ignored, as the "
                                 "engine ignores it",
                                 v.name, v.engine, v.release, dropped, type, rule->formula));
}

void ApplyRopeBlock(const json& rs, bool scaling, SchemeSpec* s, const std::string& what,
                    std::vector<std::string>* notes, const std::string& model_type) {
  if (!rs.is_object()) return;
  // -1 is pe's "not given" and lies outside every one of these parameters'
  // domains: a config that states it is refused here, by its key, where
  // the domain check downstream would take it for an absent value.
  auto Num = [&](const json& o, const char* key) -> std::optional<double> {
    const auto v = ::pe::Num(o, key);
    if (v && *v == -1)
      ThrowInput(what, fmt::format("{}: -1: out of its domain (docs/schemes.md, \"Parameter domains\")", key));
    return v;
  };
  auto Int = [&](const json& o, const char* key) -> std::optional<std::int64_t> {
    const auto v = ::pe::Int(o, key);
    if (v && *v == -1)
      ThrowInput(what, fmt::format("{}: -1: out of its domain (docs/schemes.md, \"Parameter domains\")", key));
    return v;
  };
  if (auto v = Num(rs, "rope_theta")) s->base = *v;
  if (auto v = Num(rs, "partial_rotary_factor")) s->partial_rotary_factor = *v;
  if (!scaling) return;
  std::string type = Str(rs, "rope_type");
  if (type.empty()) type = Str(rs, "type");
  if (!type.empty()) {
    if (type == "default") type = "none";
    if (type == "su") type = "longrope";  // transformers' legacy name
    if (type == "mrope") type = "none";   // Qwen2-VL: default frequencies, mrope_section splits them by axis
    // vLLM's DeepSeek-V2/V3 model file (deepseek_v2.py) renames any scaled
    // rope_type "deepseek_yarn": DeepseekScalingRotaryEmbedding.
    if (type == "yarn" && SemanticsFamily(s->semantics) == EngineFamily::kVllm &&
        (model_type == "deepseek_v2" || model_type == "deepseek_v3"))
      type = "deepseek_yarn";
    if (type == "deepseek_yarn") s->layout = "interleaved";  // get_rope(..., is_neox_style=False)
    s->rope_scaling = type;
  }
  if (auto v = Num(rs, "factor")) s->factor = *v;
  if (auto v = Int(rs, "original_max_position_embeddings")) s->original_max_position_embeddings = *v;
  if (auto v = Num(rs, "beta_fast")) s->beta_fast = *v;
  if (auto v = Num(rs, "beta_slow")) s->beta_slow = *v;
  if (auto v = Num(rs, "mscale")) s->mscale = *v;
  if (auto v = Num(rs, "mscale_all_dim")) s->mscale_all_dim = *v;
  if (auto v = Num(rs, "attention_factor")) s->attention_factor = *v;
  if (auto v = Num(rs, "low_freq_factor")) s->low_freq_factor = *v;
  if (auto v = Num(rs, "high_freq_factor")) s->high_freq_factor = *v;
  if (rs.contains("truncate") && rs["truncate"].is_boolean()) s->truncate = rs["truncate"].get<bool>();
  if (rs.contains("short_factor")) s->short_factor = HfFactorList(rs["short_factor"], what, "short_factor");
  if (rs.contains("long_factor")) s->long_factor = HfFactorList(rs["long_factor"], what, "long_factor");
  if (auto v = Num(rs, "alpha")) s->alpha = *v;  // dynamic NTK-alpha (Hunyuan)
  // M-RoPE's position sections (Qwen2-VL's rope_scaling, Qwen3-VL's
  // rope_parameters): the text positions' tables are 1-D RoPE's; the
  // sections are part of the plan so that two artifacts of one model
  // compare them.
  if (rs.contains("mrope_section")) {
    const json& m = rs["mrope_section"];
    if (!m.is_array() || m.size() != 3)
      ThrowInput(what, "mrope_section must be a list of 3 section sizes (t, h, w)");
    std::string text;
    for (const auto& v : m) {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > kMaxWidth)
        ThrowInput(what, "mrope_section must be a list of 3 section sizes (t, h, w)");
      text += (text.empty() ? "" : ",") + std::to_string(v.get<std::int64_t>());
    }
    s->mrope_section = text;
  }
  if (rs.contains("mrope_interleaved") && rs["mrope_interleaved"].is_boolean())
    s->mrope_interleaved = rs["mrope_interleaved"].get<bool>();
  ApplyEngineKeys(rs, s, notes, [&](const char* key) { return Num(rs, key); });
}

std::int64_t PositiveInt(const json& c, const char* key, std::int64_t fallback, std::int64_t max, const std::string& what) {
  if (!c.contains(key) || c[key].is_null()) return fallback;
  if (!c[key].is_number_integer() || c[key].get<std::int64_t>() < 1 || c[key].get<std::int64_t>() > max)
    ThrowInput(what, fmt::format("{} must be an integer in [1, {}]", key, max));
  return c[key].get<std::int64_t>();
}

// The first of `keys` the config holds as a positive integer, with its key.
std::optional<std::pair<std::int64_t, std::string>> FirstInt(const json& c, std::initializer_list<const char*> keys,
                                                             const std::string& what) {
  for (const char* k : keys)
    if (c.contains(k) && !c[k].is_null()) return std::make_pair(PositiveInt(c, k, 0, std::int64_t{1} << 40, what), std::string(k));
  return std::nullopt;
}

// Model types whose rotary module is not a 1-D table of token positions:
// the scheme that computes them.
const char* VisionScheme(const std::string& type) {
  static const std::set<std::string> kAxial = {"sam2_video",        "sam3_tracker_video", "sam3_vit_model",
                                               "sam2_vision_model", "sam3_vision_model",  "kimi_k25_vision",
                                               "mlcd_vision_model", "mlcd",               "video_llama_3_vision",
                                               "efficientloftr",    "pixtral",            "dinov3_vit",
                                               "edgetam_video",     "glm5_next_vision"};
  return kAxial.count(type) ? "vision-rope" : nullptr;
}

}  // namespace

const std::vector<FamilyRule>& FamilyRules() {
  static const std::vector<FamilyRule> kRules = MakeRules();
  return kRules;
}

const FamilyRule* FindFamilyRule(const std::string& model_type) {
  for (const FamilyRule& r : FamilyRules())
    if (model_type == r.model_type) return &r;
  if (model_type.size() > 5 && model_type.compare(model_type.size() - 5, 5, "_text") == 0)
    return FindFamilyRule(model_type.substr(0, model_type.size() - 5));
  for (const FamilyRule& r : FamilyRules())  // "gemma3" for "gemma3_text"
    if (model_type + "_text" == r.model_type) return &r;
  return nullptr;
}

const PlanGroup& FlatGroup(const PePlan& plan, const std::string& what) {
  if (plan.groups.empty()) {
    std::string why;  // a switch that turned RoPE off (Zamba2's use_mem_rope)
    for (const PlanSetting& s : plan.settings)
      if ((s.value == "false" && s.key == "use_mem_rope") || (s.key == "position_embedding_type" && s.value != "rope"))
        why = fmt::format(": {} is {} ({})", s.key, s.value, s.source);
    ThrowInput(what, "no layer of this model has RoPE (every layer is NoPE)" + why);
  }
  for (const PlanLayer& l : plan.layers)
    if (l.group != PlanLayer::kNoPE && l.layer_type == "full_attention") return plan.groups[l.group];
  return plan.groups.front();
}

namespace {

// The text model's config inside a composite one, as transformers'
// get_text_config() finds it: text_config (ReadHfConfigJson takes it),
// decoder (T5Gemma), decoder_config (Dia), thinker_config.text_config
// (Qwen2.5-Omni).
const json& TextConfig(const json& top) {
  const json* c = &top;
  for (int depth = 0; depth < 4; ++depth) {
    bool own = false;
    for (const char* k : {"rope_parameters", "rope_scaling", "rope_theta", "head_dim", "hidden_size", "num_attention_heads"})
      own = own || (c->contains(k) && !(*c)[k].is_null());
    if (own) break;
    const json* next = nullptr;
    for (const char* k : {"text_config", "decoder", "decoder_config", "thinker_config"})
      if (!next && c->contains(k) && (*c)[k].is_object()) next = &(*c)[k];
    if (!next) break;
    c = next;
  }
  return *c;
}

}  // namespace

std::vector<ConfigLint> LintRopeConfig(const json& top) {
  std::vector<ConfigLint> out;
  if (!top.is_object()) return out;
  const json& c = TextConfig(top);
  const std::string prefix = &c == &top ? "config.json " : "config.json text_config.";
  // transformers' ROPE_INIT_FUNCTIONS, its legacy names ("su", Qwen2-VL's
  // "mrope"), Gemma 4's "proportional" and the vision configs' "axial".
  static const std::set<std::string> kKnown = {"default", "linear",   "dynamic",      "yarn", "longrope",
                                               "llama3",  "su",       "proportional", "mrope", "axial"};
  const auto text = [](const json& v) { return Clip(v.dump()); };
  const auto lint_block = [&](const json& b, const std::string& at) {
    if (!b.is_object()) return;
    std::string type_key = b.contains("rope_type") ? "rope_type" : b.contains("type") ? "type" : "";
    std::string type = "default";
    if (!type_key.empty()) {
      if (!b[type_key].is_string()) {
        out.push_back({fmt::format("{}{}: {}: not a rope type name", at, type_key, text(b[type_key]))});
        return;
      }
      type = b[type_key].get<std::string>();
      if (!kKnown.count(type)) {
        out.push_back({fmt::format("{}{}: '{}' is not a rope type transformers knows (default, linear, dynamic, yarn, "
                                   "longrope, llama3): transformers warns and has no frequencies for it",
                                   at, type_key, Clip(type))});
        return;
      }
    }
    const auto num = [&](const char* key) -> std::optional<double> {
      if (b.contains(key) && b[key].is_number()) return b[key].get<double>();
      return std::nullopt;
    };
    const bool scaled = type == "linear" || type == "dynamic" || type == "yarn" || type == "llama3" ||
                        type == "longrope" || type == "su";
    if (scaled)
      if (auto f = num("factor"); f && *f < 1)
        out.push_back({fmt::format("{}factor: {}: must be at least 1 for rope_type {} (a factor below 1 shrinks the "
                                   "context; transformers warns)",
                                   at, *f, type)});
    if (type == "yarn" || type == "longrope" || type == "su")
      if (auto a = num("attention_factor"); a && *a < 0)
        out.push_back({fmt::format("{}attention_factor: {}: must be at least 0 (transformers warns)", at, *a)});
    if (type == "yarn") {
      const double fast = num("beta_fast").value_or(32), slow = num("beta_slow").value_or(1);
      if (fast < slow)
        out.push_back({fmt::format("{}beta_fast: {} is below {}beta_slow {} (defaults 32 and 1): the ramp is inverted "
                                   "(transformers warns)",
                                   at, fast, at, slow)});
    }
    if (type == "llama3") {
      const auto lo = num("low_freq_factor"), hi = num("high_freq_factor");
      if (lo && hi && *hi < *lo)
        out.push_back({fmt::format("{}low_freq_factor: {} is above {}high_freq_factor {}: the smoothed band is "
                                   "inverted (transformers warns)",
                                   at, *lo, at, *hi)});
      else if (lo && hi && *hi == *lo)
        out.push_back({fmt::format("{}low_freq_factor = {}high_freq_factor = {}: no band is smoothed (transformers "
                                   "warns, and computes it: each frequency is either scaled or kept)",
                                   at, at, *lo),
                       false});
    }
  };
  if (c.contains("rope_scaling")) lint_block(c["rope_scaling"], prefix + "rope_scaling.");
  if (c.contains("rope_parameters") && c["rope_parameters"].is_object()) {
    const json& p = c["rope_parameters"];
    bool keyed = !p.empty() && !p.contains("rope_type") && !p.contains("type") && !p.contains("rope_theta");
    for (auto it = p.begin(); keyed && it != p.end(); ++it) keyed = it.value().is_object();
    if (keyed) {
      for (auto it = p.begin(); it != p.end(); ++it)
        lint_block(it.value(), prefix + "rope_parameters." + Clip(it.key()) + ".");
    } else {
      lint_block(p, prefix + "rope_parameters.");
    }
  }
  return out;
}

namespace {

// What the steps of PlanFromConfigJson share: the text config, its family
// rule, and the plan whose settings (each value and its source) they add to.
struct ConfigReader {
  const json& c;
  const FamilyRule& rule;
  const std::string& model_type;
  const std::string& what;
  PePlan& plan;
  std::string cls;  // the rule's config class, named in defaults' sources
  void Setting(const std::string& key, const std::string& value, const std::string& source) {
    plan.settings.push_back({key, value, source});
  }
};

// The config's rope blocks: 4.x rope_scaling, 5.x rope_parameters, and the
// latter when it is keyed by layer type.
struct RopeBlocks {
  const json* v4 = nullptr;
  const json* v5 = nullptr;
  const json* per_type = nullptr;
};

RopeBlocks FindRopeBlocks(const json& c) {
  RopeBlocks b;
  b.v4 = c.contains("rope_scaling") && c["rope_scaling"].is_object() ? &c["rope_scaling"] : nullptr;
  b.v5 = c.contains("rope_parameters") && c["rope_parameters"].is_object() ? &c["rope_parameters"] : nullptr;
  const json* v5 = b.v5;
  if (v5 && !v5->empty() && !v5->contains("rope_type") && !v5->contains("type") && !v5->contains("rope_theta")) {
    bool keyed = true;
    for (auto it = v5->begin(); it != v5->end(); ++it) keyed = keyed && it.value().is_object();
    if (keyed) b.per_type = v5;
  }
  return b;
}

std::int64_t LayerCount(ConfigReader& r) {
  const json& c = r.c;
  std::int64_t n = 0;
  if (auto v = FirstInt(c, {"num_hidden_layers", "n_layer", "num_layers"}, r.what)) {
    n = v->first;
  } else if (c.contains("layer_types") && c["layer_types"].is_array() && !c["layer_types"].empty()) {
    n = static_cast<std::int64_t>(c["layer_types"].size());
  } else {
    n = 1;
    r.Setting("num_layers", "1", "absent from the config: one layer assumed (the plan of every layer is the same)");
  }
  if (n > kMaxPlanLayers) ThrowInput(r.what, fmt::format("num_hidden_layers must be at most {}", kMaxPlanLayers));
  return n;
}

// The head dimension of the rotary part, into base.d_model.
void ReadHeadDim(ConfigReader& r, SchemeSpec& base) {
  const json& c = r.c;
  const FamilyRule& rule = r.rule;
  const std::string& what = r.what;
  const auto hidden = FirstInt(c, {"hidden_size", "n_embd", "d_model"}, what);
  const auto heads = FirstInt(c, {"num_attention_heads", "n_head", "n_heads", "decoder_num_attention_heads"}, what);
  std::string head_src;
  const std::string rule_key = rule.head_dim_key;
  // Rows whose class computes the rotary width from another key.
  if (rule_key == "kv_channels" || rule_key == "attention_head_dim" || rule_key == "qk_nope_head_dim+qk_rope_head_dim" ||
      rule_key == "head_dim x partial_rotary_factor") {
    if (rule_key == "qk_nope_head_dim+qk_rope_head_dim") {
      // Mistral4Config.__post_init__: head_dim = qk_nope_head_dim + qk_rope_head_dim (defaults 64 + 64).
      const std::int64_t nope = PositiveInt(c, "qk_nope_head_dim", 64, kMaxWidth, what);
      const std::int64_t rope = PositiveInt(c, "qk_rope_head_dim", 64, kMaxWidth, what);
      base.d_model = nope + rope;
      head_src = fmt::format("qk_nope_head_dim + qk_rope_head_dim ({} + {}, {}.__post_init__)", nope, rope, r.cls);
    } else if (rule_key == "attention_head_dim" && Int(c, "attention_head_dim")) {
      base.d_model = PositiveInt(c, "attention_head_dim", 0, kMaxWidth, what);
      head_src = "config.json attention_head_dim";
    } else if (rule_key == "attention_head_dim") {
      // Zamba2Config: attention_head_dim = 2 * hidden_size // num_attention_heads.
      if (!hidden || !heads) ThrowInput(what, "no attention_head_dim (nor hidden_size and num_attention_heads) in the config");
      base.d_model = 2 * hidden->first / heads->first;
      head_src = fmt::format("attention_head_dim absent: 2 x {} / {} ({})", hidden->second, heads->second, r.cls);
    } else if (rule_key == "kv_channels") {
      base.d_model = PositiveInt(c, "kv_channels", 128, kMaxWidth, what);
      head_src = Int(c, "kv_channels") ? "config.json kv_channels (the class's head_dim)"
                                       : fmt::format("kv_channels absent: default of {}", r.cls);
    } else {
      // DeepSeek-V4: head_dim (512); the rotary part is head_dim x partial_rotary_factor.
      base.d_model = PositiveInt(c, "head_dim", rule.head_dim, kMaxWidth, what);
      head_src = Int(c, "head_dim") ? "config.json head_dim" : fmt::format("head_dim absent: default of {}", r.cls);
    }
  } else if (auto v = Int(c, "qk_rope_head_dim"); v && *v > 0) {
    base.d_model = *v;  // MLA (DeepSeek-V2/V3 ...): RoPE covers the qk_rope_head_dim part of each head
    head_src = "config.json qk_rope_head_dim";
  } else if (rule_key == "qk_rope_head_dim" && rule.head_dim > 0) {
    base.d_model = rule.head_dim;
    head_src = fmt::format("qk_rope_head_dim absent: default of {}", r.cls);
  } else if (auto h = Int(c, "head_dim"); h && *h > 0 && rule_key != "hidden/heads") {
    base.d_model = *h;
    head_src = "config.json head_dim";
  } else if (auto kv = Int(c, "kv_channels"); kv && *kv > 0 && r.model_type == "chatglm") {
    base.d_model = *kv;
    head_src = "config.json kv_channels";
  } else if (rule.head_dim > 0 && rule_key != "hidden/heads") {
    // The config class sets head_dim when the file has none (Gemma3TextConfig
    // 256, Llama4TextConfig 128), and the attention reads config.head_dim:
    // the class default wins over hidden_size / num_attention_heads.
    base.d_model = rule.head_dim;
    head_src = fmt::format("head_dim absent: default of {}", r.cls);
  } else if (hidden && heads) {
    base.d_model = hidden->first / heads->first;
    head_src = fmt::format("config.json {} / {}", hidden->second, heads->second);
  } else {
    ThrowInput(what, "no head_dim (nor hidden_size and num_attention_heads) in the config");
  }
  if (base.d_model < 2 || base.d_model > kMaxWidth)
    ThrowInput(what, fmt::format("head dimension {} is outside [2, {}]", base.d_model, kMaxWidth));
  r.Setting("head_dim", fmt::format("{}", base.d_model), head_src);
}

// Where theta and the partial rotary factor came from (the settings are
// added after the layers' own reads).
struct RotarySources {
  std::string theta, partial;
};

// Theta, partial rotary factor, rotary dim: the config's top level (4.x),
// then the rope block (5.x), else the class default.
RotarySources ReadRotary(ConfigReader& r, const RopeBlocks& b, SchemeSpec& base) {
  const json& c = r.c;
  const FamilyRule& rule = r.rule;
  const std::string& model_type = r.model_type;
  RotarySources src;
  base.base = rule.theta;
  src.theta = fmt::format("rope_theta absent: default of {}", r.cls);
  for (const char* key : {"rope_theta", "rotary_emb_base", "global_rope_theta"})
    if (auto v = Num(c, key)) {
      base.base = *v;
      src.theta = std::string("config.json ") + key;
      break;
    }
  if (b.v5 && !b.per_type && Num(*b.v5, "rope_theta")) src.theta = "config.json rope_parameters.rope_theta";
  base.partial_rotary_factor = rule.partial;
  src.partial = rule.partial != 1 ? fmt::format("partial_rotary_factor absent: default of {}", r.cls) : "";
  if (std::string(rule.head_dim_key) == "qk_nope_head_dim+qk_rope_head_dim") {
    // Mistral4Config: rope_parameters.setdefault("partial_rotary_factor", qk_rope_head_dim / head_dim).
    const double rope = static_cast<double>(PositiveInt(c, "qk_rope_head_dim", 64, kMaxWidth, r.what));
    base.partial_rotary_factor = rope / static_cast<double>(base.d_model);
    src.partial = fmt::format("partial_rotary_factor absent: qk_rope_head_dim / head_dim ({}.__post_init__)", r.cls);
  }
  if (auto v = Num(c, "partial_rotary_factor")) base.partial_rotary_factor = *v, src.partial = "config.json partial_rotary_factor";
  else if (auto v2 = Num(c, "rotary_pct")) base.partial_rotary_factor = *v2, src.partial = "config.json rotary_pct";
  // GPT-J / CodeGen's rotary_dim (other classes that hold a rotary_dim,
  // MiniMax-M3's, do not pass it to their rotary module).
  if (auto v = Int(c, "rotary_dim"); v && (model_type == "gptj" || model_type == "codegen")) {
    if (*v <= 0) ThrowInput(r.what, fmt::format("rotary_dim: {}: must be a positive integer", *v));
    base.rotary_dim = *v;
    r.Setting("rotary_dim", fmt::format("{}", *v), "config.json rotary_dim");
  }
  if (model_type == "chatglm" && base.rotary_dim <= 0) base.rotary_dim = base.d_model / 2;
  if (auto v = Num(c, "rope_ratio"); v && model_type == "chatglm") {
    if (!(*v > 0)) ThrowInput(r.what, fmt::format("rope_ratio: {}: must be a finite number above 0", *v));
    base.rope_ratio = *v;
  }  // ChatGLM: base x rope_ratio
  if (auto v = Int(c, "max_position_embeddings")) base.max_position_embeddings = *v;
  base.rope_scaling = "none";
  return src;
}

// Layout: the module's cos/sin columns (the tables pe writes, into
// base.layout unless the flags gave one) and the attention's channel pairs
// (returned: shown and compared between artifacts).
std::string ReadLayout(ConfigReader& r, const SchemeSpec& spec, SchemeSpec& base) {
  const json& c = r.c;
  const std::string& model_type = r.model_type;
  std::string pairing = r.rule.pairing;
  if ((model_type == "deepseek_v3" || model_type == "deepseek_v32" || model_type == "youtu" || model_type == "mistral4") &&
      c.contains("rope_interleave") &&
      c["rope_interleave"].is_boolean() && !c["rope_interleave"].get<bool>())
    pairing = "half";  // DeepseekV3Attention: apply_rotary_pos_emb_interleave only when rope_interleave
  if (spec.layout.empty()) base.layout = r.rule.table;
  // DeepSeek-V3.2: the MLA part rotates as V3 (interleaved when
  // rope_interleave); its lightning indexer rotates its own rope part with
  // the same cos/sin and rotate_half pairs (DeepseekV32Indexer:
  // apply_rotary_pos_emb): one table, two pairings.
  if (model_type == "deepseek_v32")
    r.Setting("indexer.pairing", "half",
              "models/deepseek_v32/modeling_deepseek_v32.py DeepseekV32Indexer (apply_rotary_pos_emb, rotate_half) on "
              "the same cos/sin");
  return pairing;
}

// Each layer's type: layer_types, EXAONE 4's string pattern, or the
// sliding-window pattern of the rule (empty when none applies).
std::vector<std::string> LayerTypes(const ConfigReader& r, std::int64_t n) {
  const json& c = r.c;
  const std::string& what = r.what;
  std::vector<std::string> types;
  if (c.contains("layer_types") && !c["layer_types"].is_null()) {
    const json& v = c["layer_types"];
    if (!v.is_array()) ThrowInput(what, "layer_types must be a list of strings");
    if (static_cast<std::int64_t>(v.size()) != n)
      ThrowInput(what, fmt::format("layer_types lists {} layers but num_hidden_layers is {}", v.size(), n));
    for (const auto& t : v) {
      if (!t.is_string() || t.get<std::string>().empty() || t.get<std::string>().size() > 64)
        ThrowInput(what, "layer_types must be a list of layer type names");
      const std::string s = t.get<std::string>();
      if (!std::all_of(s.begin(), s.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }))
        ThrowInput(what, fmt::format("layer_types holds '{}', not a layer type name", Clip(s)));
      types.push_back(s);
    }
  } else if (c.contains("sliding_window_pattern") && c["sliding_window_pattern"].is_string()) {
    // EXAONE 4 (4.x): a string such as "LLLG", L = local (sliding), G = global, repeated over the layers.
    const std::string pat = c["sliding_window_pattern"].get<std::string>();
    if (pat.empty() || pat.size() > 64 || pat.find_first_not_of("LG") != std::string::npos)
      ThrowInput(what, "sliding_window_pattern must be a number or a string of L (sliding) and G (global)");
    for (std::int64_t i = 0; i < n; ++i)
      types.push_back(pat[static_cast<std::size_t>(i) % pat.size()] == 'L' ? "sliding_attention" : "full_attention");
  } else if (*r.rule.block_types_key && c.contains(r.rule.block_types_key)) {
    // Zamba2: layers_block_type ("mamba" / "hybrid") names each layer's block.
    const json& v = c[r.rule.block_types_key];
    if (!v.is_array() || static_cast<std::int64_t>(v.size()) != n)
      ThrowInput(what, fmt::format("{} must list one block type per layer ({})", r.rule.block_types_key, n));
    for (const auto& t : v) {
      if (!t.is_string() || t.get<std::string>().empty() || t.get<std::string>().size() > 64)
        ThrowInput(what, fmt::format("{} must be a list of block type names", r.rule.block_types_key));
      types.push_back(t.get<std::string>());
    }
  } else if (r.model_type == "cohere2_moe" && (r.rule.pattern > 0 || c.contains("sliding_window_pattern"))) {
    // Cohere2MoeConfig: the first first_k_dense_replace layers follow
    // prefix_dense_sliding_window_pattern (1), the rest sliding_window_pattern (4).
    const std::int64_t k = std::clamp<std::int64_t>(Int(c, "first_k_dense_replace").value_or(0), 0, n);
    const std::int64_t prefix = PositiveInt(c, "prefix_dense_sliding_window_pattern", 1, kMaxPlanLayers, what);
    const std::int64_t pattern = PositiveInt(c, "sliding_window_pattern", r.rule.pattern, kMaxPlanLayers, what);
    for (std::int64_t i = 0; i < k; ++i) types.push_back((i + 1) % prefix ? "sliding_attention" : "full_attention");
    for (std::int64_t i = 0; i < n - k; ++i) types.push_back((i + 1) % pattern ? "sliding_attention" : "full_attention");
  } else if (r.rule.pattern > 0 || c.contains("sliding_window_pattern")) {
    // "sliding_attention" if bool((i + 1) % sliding_window_pattern) else "full_attention"
    const std::int64_t pattern = PositiveInt(c, "sliding_window_pattern", r.rule.pattern > 0 ? r.rule.pattern : 1,
                                             kMaxPlanLayers, what);
    for (std::int64_t i = 0; i < n; ++i) types.push_back((i + 1) % pattern ? "sliding_attention" : "full_attention");
  }
  return types;
}

// Which layers rotate: no_rope_layers (1 = RoPE, 0 = NoPE), Llama 4's and
// SmolLM3's interval, the rule's layer types. Fills `types` when empty.
std::vector<bool> RotatingLayers(const ConfigReader& r, std::int64_t n, bool llama4, std::vector<std::string>& types) {
  const json& c = r.c;
  const FamilyRule& rule = r.rule;
  const std::string& what = r.what;
  std::vector<bool> rope(static_cast<std::size_t>(n), true);
  bool listed = false;
  if (c.contains("no_rope_layers") && !c["no_rope_layers"].is_null()) {
    const json& v = c["no_rope_layers"];
    if (!v.is_array()) ThrowInput(what, "no_rope_layers must be a list of 0/1");
    if (!(v.empty() && llama4)) {  // Llama 4: `if self.no_rope_layers` (an empty list is falsy)
      if (static_cast<std::int64_t>(v.size()) != n)
        ThrowInput(what, fmt::format("no_rope_layers lists {} layers but num_hidden_layers is {}", v.size(), n));
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_number_integer() || (v[i].get<std::int64_t>() != 0 && v[i].get<std::int64_t>() != 1))
          ThrowInput(what, "no_rope_layers entries must be 0 (NoPE) or 1 (RoPE)");
        rope[i] = v[i].get<std::int64_t>() == 1;
      }
      listed = true;
    }
  }
  if (!listed && (llama4 || std::string(rule.model_type) == "smollm3")) {
    const std::int64_t every = PositiveInt(c, "no_rope_layer_interval", 4, kMaxPlanLayers, what);
    for (std::int64_t i = 0; i < n; ++i) rope[i] = (i + 1) % every != 0;
  }
  if (types.empty())
    for (std::int64_t i = 0; i < n; ++i)
      // Llama4TextConfig: "chunked_attention" on RoPE layers, else "full_attention".
      types.push_back(llama4 && rope[i] ? "chunked_attention" : "full_attention");
  // Zamba2: `if self.config.use_mem_rope` (default false) around the rotation.
  // GraniteMoeHybrid: position_embedding_type == "rope" (a "key=value" switch).
  bool switched_on = true;
  if (*rule.rope_switch) {
    const std::string sw = rule.rope_switch;
    const std::size_t eq = sw.find('=');
    const std::string key = sw.substr(0, eq);
    if (eq == std::string::npos)
      switched_on = c.contains(key) && c[key].is_boolean() && c[key].get<bool>();
    else
      switched_on = Str(c, key.c_str()) == sw.substr(eq + 1);
    const std::string value = eq == std::string::npos ? (switched_on ? "true" : "false")
                              : c.contains(key) && c[key].is_string() ? c[key].get<std::string>()
                                                                      : "none";
    r.plan.settings.push_back({key, value,
                               c.contains(key) && !c[key].is_null()
                                   ? std::string("config.json ") + key
                                   : fmt::format("{} absent: default of {} ({})", key, r.cls,
                                                 eq == std::string::npos ? "false" : "None")});
  }
  // Cohere2MoeAttention.force_rope: the dense prefix layers rotate when
  // prefix_dense_sliding_window_pattern is 1, whatever their layer type.
  std::vector<bool> forced(static_cast<std::size_t>(n), false);
  if (r.model_type == "cohere2_moe" && PositiveInt(c, "prefix_dense_sliding_window_pattern", 1, kMaxPlanLayers, what) == 1) {
    if (c.contains("mlp_layer_types") && c["mlp_layer_types"].is_array()) {
      const json& m = c["mlp_layer_types"];
      for (std::size_t i = 0; i < m.size() && static_cast<std::int64_t>(i) < n; ++i)
        forced[i] = m[i].is_string() && m[i].get<std::string>() == "dense";
    } else {
      const std::int64_t k = std::clamp<std::int64_t>(Int(c, "first_k_dense_replace").value_or(0), 0, n);
      for (std::int64_t i = 0; i < k; ++i) forced[i] = true;
    }
  }
  for (std::int64_t i = 0; i < n; ++i) {
    const std::string& t = types[i];
    if (!switched_on) rope[i] = false;
    if (t == "linear_attention" || InList(rule.nope_types, t)) rope[i] = false;
    // EXAONE 4: `if self.sliding_window is None or self.is_sliding` rotates; without a
    // sliding window every layer does.
    const bool exaone_all = r.model_type == "exaone4" && c.contains("sliding_window") && c["sliding_window"].is_null();
    if (*rule.rope_types && !InList(rule.rope_types, t) && !exaone_all && !forced[i]) rope[i] = false;
  }
  return rope;
}

// The spec of the layers of one type: base with the type's head, theta and
// rope block.
SchemeSpec SpecForType(ConfigReader& r, const RopeBlocks& b, const SchemeSpec& base, const std::string& theta_src,
                       const std::string& type) {
  const json& c = r.c;
  const FamilyRule& rule = r.rule;
  const std::string& what = r.what;
  SchemeSpec s = base;
  const bool full = type != "sliding_attention" && type != "hybrid_sliding";
  if (*rule.full_head_dim_key && type == "full_attention") {
    // Gemma 4: full-attention layers have their own (larger) head.
    s.d_model = 512;
    std::string src = fmt::format("{} absent: default of {}", rule.full_head_dim_key, r.cls);
    if (auto v = Int(c, rule.full_head_dim_key); v && *v > 0) s.d_model = *v, src = std::string("config.json ") + rule.full_head_dim_key;
    r.Setting(type + ".head_dim", fmt::format("{}", s.d_model), src);
  }
  if (b.per_type) {
    // DeepSeek-V4 keys its blocks by rope label (main / compress), the others by layer type.
    const std::string label = RopeLabel(rule, type);
    const std::string key = label.empty() ? type : label;
    if (!b.per_type->contains(key))
      ThrowInput(what, fmt::format("rope_parameters has no entry for {} '{}'", label.empty() ? "layer type" : "rope label",
                                   Clip(key)));
    ApplyRopeBlock((*b.per_type)[key], true, &s, what, &r.plan.notes, r.model_type);
    if (!Num((*b.per_type)[key], "rope_theta") && !full && rule.local_theta > 0) s.base = rule.local_theta;
    std::string theta_from = theta_src;
    if (Num((*b.per_type)[key], "rope_theta"))
      theta_from = "config.json rope_parameters." + key + ".rope_theta";
    if (!label.empty())
      theta_from = fmt::format("rope_parameters.{}.rope_theta as {} builds it (rope_parameters.{}, else {}, default {})",
                               key, r.cls, key, key == "main" ? "rope_theta" : "compress_rope_theta",
                               key == "main" ? "10000" : "160000");
    r.Setting(key + ".rope_theta", NumText(s.base), theta_from);
    return s;
  }
  const bool scaled = !*rule.scaled_types || InList(rule.scaled_types, type);
  if (!full && (*rule.local_theta_key || rule.local_theta > 0)) {
    // Gemma 3 (4.x): sliding layers use rope_local_base_freq, unscaled.
    s.base = rule.local_theta;
    std::string src = fmt::format("{} absent: default of {}", *rule.local_theta_key ? rule.local_theta_key : "local theta", r.cls);
    if (*rule.local_theta_key)
      if (auto v = Num(c, rule.local_theta_key)) s.base = *v, src = std::string("config.json ") + rule.local_theta_key;
    if (b.v5)
      if (auto v = Num(*b.v5, "partial_rotary_factor")) s.partial_rotary_factor = *v;
    r.Setting(type + ".rope_theta", NumText(s.base), src);
    return s;
  }
  if (b.v4) ApplyRopeBlock(*b.v4, scaled, &s, what, &r.plan.notes, r.model_type);
  if (b.v5) ApplyRopeBlock(*b.v5, scaled, &s, what, &r.plan.notes, r.model_type);
  // Qwen3-VL / Qwen3.5: the rotary module applies apply_interleaved_mrope
  // whatever the config's mrope_interleaved says.
  if (!s.mrope_section.empty() && (r.model_type.rfind("qwen3_vl", 0) == 0 || r.model_type.rfind("qwen3_5", 0) == 0 ||
                                     r.model_type.rfind("qwen4_exp", 0) == 0 || r.model_type == "cosmos3_edge_text"))
    s.mrope_interleaved = true;
  // vLLM's bailing_moe.py (@c8a6e27, BailingAttention): partial_rotary_factor
  // = config.rotary_dim / head_dim.
  if (SemanticsFamily(s.semantics) == EngineFamily::kVllm && r.model_type == "bailing_moe")
    if (auto v = Int(c, "rotary_dim"); v && *v > 0 && s.d_model > 0)
      s.partial_rotary_factor = static_cast<double>(*v) / static_cast<double>(s.d_model);
  // Phi-3 keeps original_max_position_embeddings at the top level.
  if (s.rope_scaling == "longrope" && s.original_max_position_embeddings < 0)
    if (auto v = Int(c, "original_max_position_embeddings")) s.original_max_position_embeddings = *v;
  return s;
}

// What the model does to attention beside the rotary tables: Ministral 3 /
// Mistral 4's query scale (a note), Llama 4's temperature on NoPE layers.
void ReadAttentionExtras(ConfigReader& r, const RopeBlocks& b, bool llama4) {
  const json& c = r.c;
  PePlan& plan = r.plan;
  for (const json* blk : {b.v4, b.v5})
    if (blk && Num(*blk, "llama_4_scaling_beta"))
      plan.notes.push_back(fmt::format("llama_4_scaling_beta = {}: the model also scales its queries by position "
                                       "(get_llama_4_attn_scale); pe's cos/sin tables do not include that scale",
                                       *Num(*blk, "llama_4_scaling_beta")));
  // attn_temperature_tuning is a bool in the class, an int (4) in the
  // published configs: truthy.
  if (!llama4) return;
  bool on = true;
  if (c.contains("attn_temperature_tuning")) {
    const json& t = c["attn_temperature_tuning"];
    if (t.is_boolean()) on = t.get<bool>();
    else if (t.is_number()) on = t.get<double>() != 0;
    else if (!t.is_null()) ThrowInput(r.what, "attn_temperature_tuning must be a bool or a number");
  }
  plan.temperature.floor_scale = Num(c, "floor_scale").value_or(8192);
  plan.temperature.attn_scale = Num(c, "attn_scale").value_or(0.1);
  for (PlanLayer& l : plan.layers) l.temperature = on && l.group == PlanLayer::kNoPE;
}

}  // namespace

namespace {

// DeepseekV4Config.__post_init__ (configuration_deepseek_v4.py, transformers
// PR #45643): a copy of the config with rope_parameters = {main, compress}
// and layer_types, as the class computes them. partial_rotary_factor: the
// key, else the legacy qk_rope_head_dim / head_dim, else 64 / 512. A nested
// {main, compress} block is kept; otherwise the rope block (5.x
// rope_parameters or 4.x rope_scaling, the YaRN of the compressed layers)
// becomes compress with rope_theta = compress_rope_theta (160000) and, for
// YaRN, attention_factor 1.0 unless given ("the V4 reference does NOT
// multiply cos/sin by YaRN's computed mscale"); main is the default rope at
// rope_theta (10000). layer_types: the key, else the legacy compress_ratios
// (0 sliding, 4 CSA, 128 HCA), else 2 HCA then CSA / HCA alternating;
// truncated to num_hidden_layers (a checkpoint lists its MTP layer too).
json DeepseekV4Config(const json& c, const std::string& what) {
  json out = c;
  const double head_dim = static_cast<double>(Int(c, "head_dim").value_or(512));
  double partial = 64.0 / 512.0;
  if (auto v = Num(c, "partial_rotary_factor")) partial = *v;
  else if (auto q = Int(c, "qk_rope_head_dim"); q && *q > 0) partial = static_cast<double>(*q) / head_dim;
  out["partial_rotary_factor"] = partial;
  json rp = c.contains("rope_parameters") && c["rope_parameters"].is_object() ? c["rope_parameters"]
            : c.contains("rope_scaling") && c["rope_scaling"].is_object()     ? c["rope_scaling"]
                                                                              : json::object();
  if (!(rp.contains("main") && rp["main"].is_object() && rp.contains("compress") && rp["compress"].is_object())) {
    json yarn = json::object();
    for (auto it = rp.begin(); it != rp.end(); ++it)
      if (it.key() != "main" && it.key() != "compress") yarn[it.key()] = it.value();
    if (yarn.contains("type") && !yarn.contains("rope_type")) yarn["rope_type"] = yarn["type"];
    yarn.erase("type");
    json main = {{"rope_type", "default"}, {"rope_theta", Num(c, "rope_theta").value_or(10000.0)},
                 {"partial_rotary_factor", partial}};
    json compress = yarn;
    compress["rope_theta"] = Num(c, "compress_rope_theta").value_or(160000.0);
    compress["partial_rotary_factor"] = partial;
    if (!compress.contains("rope_type")) compress["rope_type"] = "default";
    if (compress["rope_type"] == "yarn" && !compress.contains("attention_factor")) compress["attention_factor"] = 1.0;
    rp = {{"main", main}, {"compress", compress}};
  } else {
    rp = {{"main", rp["main"]}, {"compress", rp["compress"]}};
  }
  out["rope_parameters"] = rp;
  out.erase("rope_scaling");
  out.erase("rope_theta");  // each block holds its own
  const std::int64_t n = PositiveInt(c, "num_hidden_layers", 43, kMaxPlanLayers, what);
  json types = json::array();
  if (c.contains("layer_types") && c["layer_types"].is_array()) {
    types = c["layer_types"];
  } else if (c.contains("compress_ratios") && c["compress_ratios"].is_array()) {
    for (const json& v : c["compress_ratios"]) {
      const std::int64_t k = v.is_number_integer() ? v.get<std::int64_t>() : -1;
      if (k != 0 && k != 4 && k != 128)
        ThrowInput(what, fmt::format("compress_ratios holds {}: DeepSeek-V4's ratios are 0 (sliding), 4 (CSA) and 128 "
                                     "(HCA)",
                                     Clip(v.dump())));
      types.push_back(k == 0 ? "sliding_attention" : k == 4 ? "compressed_sparse_attention" : "heavily_compressed_attention");
    }
  } else {
    for (std::int64_t i = 0; i < n; ++i)
      types.push_back(i < 2 ? "heavily_compressed_attention"
                            : ((i - 2) % 2 ? "compressed_sparse_attention" : "heavily_compressed_attention"));
  }
  if (static_cast<std::int64_t>(types.size()) > n) types.erase(types.begin() + n, types.end());
  out["layer_types"] = types;
  return out;
}

}  // namespace

namespace {

// A rotary feature only the engine's own class computes (EngineOnlyTypes():
// vLLM's dual-chunk, FoPE and ERNIE-4.5-VL classes): refused under that
// engine's --semantics, by the class, where the config names it.
void RefuseEngineOnlyFeatures(const json& text, const std::string& model_type, const std::string& semantics,
                              const std::string& what) {
  const EngineVersion& v = FindEngineVersion(semantics);
  const auto refuse = [&](const char* feature, const std::string& where) {
    if (const EngineOnlyType* t = FindEngineOnlyType(v.engine, feature))
      ThrowInput(what, fmt::format("{}: under --semantics {} this is {}'s {}: pe has no rule for it", where, v.name,
                                   v.engine, t->what));
  };
  if (text.contains("dual_chunk_attention_config") && !text["dual_chunk_attention_config"].is_null())
    refuse("dual_chunk_attention_config", "dual_chunk_attention_config");
  for (const char* key : {"rope_parameters", "rope_scaling"})
    if (text.contains(key) && text[key].is_object() && text[key].contains("use_fope") &&
        text[key]["use_fope"].is_boolean() && text[key]["use_fope"].get<bool>())
      refuse("use_fope", std::string(key) + ".use_fope");
  if (model_type.rfind("ernie4_5_vl", 0) == 0) refuse("ernie", "model_type '" + Clip(model_type) + "'");
  if (model_type == "llama4_vision_model") refuse("mllama4", "model_type 'llama4_vision_model'");
}

}  // namespace

std::string GenericRuleNote(const std::string& model_type) {
  return fmt::format("model_type '{}' has no rule in pe; planned by the generic rule, unchecked (rotate_half pairs, "
                     "head_dim or hidden_size / num_attention_heads, rope_theta 10000 when absent, every layer type but "
                     "linear_attention rotates; docs/models.md, \"Model families\")",
                     Clip(model_type.empty() ? std::string("(none)") : model_type));
}

PePlan PlanFromConfigJson(const json& top, const SchemeSpec& spec, const std::string& what) {
  if (!top.is_object()) ThrowInput(what, "expected a JSON object (a model's config.json)");
  const json& text = TextConfig(top);
  std::string model_type = Str(text, "model_type");
  if (model_type.empty()) model_type = Str(top, "model_type");
  if (const char* scheme = VisionScheme(model_type))
    ThrowInput(what, fmt::format("model_type '{}' has a 2-D (axial) rotary embedding of image patches, not a table of "
                                 "token positions: use --scheme {}",
                                 Clip(model_type), scheme));
  // transformers' vision configs name their 2-D rotary rope_type "axial".
  for (const char* key : {"rope_parameters", "rope_scaling"})
    if (text.contains(key) && text[key].is_object() && (Str(text[key], "rope_type") == "axial" || Str(text[key], "type") == "axial"))
      ThrowInput(what, fmt::format("{}.rope_type 'axial' is a 2-D (axial) rotary embedding of image patches, not a "
                                   "table of token positions: use --scheme vision-rope",
                                   key));
  RefuseEngineOnlyFeatures(text, model_type, spec.semantics, what);
  PePlan plan;
  plan.source = model_type.empty() ? "unknown" : model_type;
  const FamilyRule* found = FindFamilyRule(model_type);
  // A composite's text model under its own name (Dia's dia_decoder,
  // T5Gemma's t5_gemma_module): the composite's row.
  if (!found && !Str(top, "model_type").empty()) found = FindFamilyRule(Str(top, "model_type"));
  const FamilyRule& rule = found ? *found : kGeneric;
  const json standardised = *rule.rope_labels ? DeepseekV4Config(text, what) : json();
  const json& c = *rule.rope_labels ? standardised : text;
  ConfigReader r{c, rule, model_type, what, plan, rule.config_class};
  if (!found) {
    plan.unchecked = fmt::format("model_type '{}' has no rule in pe; planned by the generic rule",
                                 Clip(model_type.empty() ? std::string("(none)") : model_type));
    plan.notes.push_back(GenericRuleNote(model_type));
  } else {
    r.Setting("family_rule", rule.model_type, rule.source);
  }
  const std::int64_t n = LayerCount(r);
  SchemeSpec base = spec;
  base.scheme = "rope";
  base.hf_config.clear();
  base.tensor.clear();
  ReadHeadDim(r, base);
  const RopeBlocks blocks = FindRopeBlocks(c);
  const RotarySources src = ReadRotary(r, blocks, base);
  const std::string pairing = ReadLayout(r, spec, base);
  // Errors about a value from the config name the config, not a flag.
  for (const char* flag : {"--head-dim", "--base", "--factor", "--rotary-dim", "--partial-rotary-factor",
                           "--rope-scaling", "--max-position-embeddings", "--original-max-position-embeddings",
                           "--low-freq-factor/--high-freq-factor", "--beta-fast/--beta-slow", "--attention-factor",
                           "--floor-scale", "--attn-scale", "--alpha", "--rope-ratio"})
    base.origin[flag] = fmt::format("{} (config value for {})", what, flag);
  std::vector<std::string> types = LayerTypes(r, n);
  const bool llama4 = std::string(rule.model_type) == "llama4_text";
  const std::vector<bool> rope = RotatingLayers(r, n, llama4, types);
  r.Setting("rope_theta", NumText(base.base), src.theta);
  if (!src.partial.empty()) r.Setting("partial_rotary_factor", NumText(base.partial_rotary_factor), src.partial);
  for (std::int64_t i = 0; i < n; ++i) {
    PlanLayer layer;
    layer.layer_type = types[i];
    if (rope[i]) {
      layer.group = AddPlanGroup(&plan, types[i], SpecForType(r, blocks, base, src.theta, types[i]), RopeLabel(rule, types[i]));
      if (pairing != base.layout && spec.layout.empty()) plan.groups[layer.group].pairing = pairing;
    }
    plan.layers.push_back(layer);
  }
  // DeepSeek-V4's rotary module builds every label's tables, used by a
  // layer or not (the default config has no sliding layer, so no "main"
  // group): a table read that names an unused label gets its group, with
  // no layer.
  if (*rule.rope_labels && blocks.per_type)
    if (const auto slash = spec.tensor.find('/'); slash != std::string::npos) {
      const std::string label = spec.tensor.substr(0, slash);
      const bool grouped = std::any_of(plan.groups.begin(), plan.groups.end(), [&](const PlanGroup& g) { return g.name == label; });
      const bool used_type = std::any_of(types.begin(), types.end(), [&](const std::string& t) { return t == label; });
      if (!grouped && !used_type && blocks.per_type->contains(label)) {
        std::string any_type;  // a layer type that reads this label
        for (const char* t : {"sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"})
          if (any_type.empty() && RopeLabel(rule, t) == label) any_type = t;
        if (!any_type.empty()) {
          PlanGroup g{label, SpecForType(r, blocks, base, src.theta, any_type), "", {}};
          if (pairing != base.layout && spec.layout.empty()) g.pairing = pairing;
          plan.groups.push_back(std::move(g));
        }
      }
    }
  ReadAttentionExtras(r, blocks, llama4);
  if (std::string(rule.rope_slice) == "trailing") {
    // DeepSeek-V4 (modeling_deepseek_v4.py): the tables are the rope part's;
    // what the attention does with them beside the usual rotation.
    r.Setting("rope_slice", "trailing",
              "models/deepseek_v4/modeling_deepseek_v4.py apply_rotary_pos_emb: x[..., -rope_dim:] rotated, each head "
              "laid out [nope | rope]");
    r.Setting("attention_output", "rotated back: apply_rotary_pos_emb(out, cos, -sin) at the query position",
              "models/deepseek_v4/modeling_deepseek_v4.py DeepseekV4Attention.forward (K = V: the values carry the "
              "rotation)");
    r.Setting("indexer", "compress tables on the trailing rope part of index_head_dim",
              "models/deepseek_v4/modeling_deepseek_v4.py DeepseekV4Indexer (rope_layer_type = \"compress\")");
  }
  return plan;
}

namespace {

std::mutex note_mutex;
std::function<void(const std::string&)> note_sink;

}  // namespace

void SetPlanNoteSink(std::function<void(const std::string&)> sink) {
  std::lock_guard<std::mutex> lock(note_mutex);
  note_sink = std::move(sink);
}

void ReportPlanNotes(const PePlan& plan) {
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(note_mutex);
  for (const std::string& n : plan.notes) {
    if (!said.insert(n).second) continue;
    if (note_sink) note_sink(n);
    else std::fprintf(stderr, "pe: warning: %s\n", n.c_str());
  }
}

PePlan PlanFromHfConfig(const SchemeSpec& spec) {
  const std::string what = fmt::format("--hf-config '{}'", spec.hf_config);
  return PlanFromConfigJson(ReadHfConfigJson(spec.hf_config, what, true), spec, what);
}

}  // namespace pe
