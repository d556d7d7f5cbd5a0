#include "core/spec/gguf_rope_type.h"

namespace pe {

const std::vector<std::pair<std::string_view, GgufRopeType>>& GgufRopeTypeTable() {
  using T = GgufRopeType;
  static const std::vector<std::pair<std::string_view, GgufRopeType>> table = {
      // "these models do not use RoPE"
      {"clip", T::kNone}, {"gpt2", T::kNone}, {"gptj", T::kNone}, {"mpt", T::kNone}, {"refact", T::kNone},
      {"bloom", T::kNone}, {"mamba", T::kNone}, {"mamba2", T::kNone}, {"jamba", T::kNone},
      {"jina-bert-v2", T::kNone}, {"t5", T::kNone}, {"t5encoder", T::kNone}, {"jais", T::kNone},
      {"rwkv6", T::kNone}, {"rwkv6qwen2", T::kNone}, {"rwkv7", T::kNone}, {"arwkv7", T::kNone},
      {"wavtokenizer-dec", T::kNone}, {"nemotron_h", T::kNone}, {"nemotron_h_moe", T::kNone},
      {"kimi-linear", T::kNone},
      // "normal RoPE, operating on pairs of consecutive head values"
      {"llama", T::kNorm}, {"llada", T::kNorm}, {"llama4", T::kNorm}, {"deci", T::kNorm},
      {"baichuan", T::kNorm}, {"starcoder", T::kNorm}, {"internlm2", T::kNorm}, {"minicpm", T::kNorm},
      {"xverse", T::kNorm}, {"command-r", T::kNorm}, {"cohere2", T::kNorm}, {"cohere2moe", T::kNorm},
      {"olmo", T::kNorm}, {"arctic", T::kNorm}, {"deepseek", T::kNorm}, {"deepseek2", T::kNorm},
      {"deepseek2-ocr", T::kNorm}, {"deepseek32", T::kNorm}, {"deepseek4", T::kNorm}, {"plm", T::kNorm},
      {"chatglm", T::kNorm}, {"granite", T::kNorm}, {"granitemoe", T::kNorm}, {"granitehybrid", T::kNorm},
      {"chameleon", T::kNorm}, {"bailingmoe", T::kNorm}, {"neo-bert", T::kNorm}, {"smollm3", T::kNorm},
      {"arcee", T::kNorm}, {"ernie4_5", T::kNorm}, {"ernie4_5-moe", T::kNorm}, {"mistral3", T::kNorm},
      {"eagle3", T::kNorm}, {"mistral4", T::kNorm}, {"llama-embed", T::kNorm}, {"maincoder", T::kNorm},
      {"glm-dsa", T::kNorm}, {"nanbeige", T::kNorm},
      // "the pairs of head values are offset by n_rot/2"
      {"falcon", T::kNeox}, {"falcon-h1", T::kNeox}, {"grok", T::kNeox}, {"dbrx", T::kNeox}, {"bert", T::kNeox},
      {"jina-bert-v3", T::kNeox}, {"modern-bert", T::kNeox}, {"nomic-bert", T::kNeox},
      {"nomic-bert-moe", T::kNeox}, {"eurobert", T::kNeox}, {"stablelm", T::kNeox}, {"bitnet", T::kNeox},
      {"qwen", T::kNeox}, {"qwen2", T::kNeox}, {"dream", T::kNeox}, {"qwen2moe", T::kNeox}, {"qwen3", T::kNeox},
      {"qwen3moe", T::kNeox}, {"llada-moe", T::kNeox}, {"rnd1", T::kNeox}, {"olmo2", T::kNeox},
      {"olmoe", T::kNeox}, {"phi2", T::kNeox}, {"phi3", T::kNeox}, {"phimoe", T::kNeox}, {"plamo", T::kNeox},
      {"plamo2", T::kNeox}, {"plamo3", T::kNeox}, {"gemma", T::kNeox}, {"gemma2", T::kNeox},
      {"gemma3", T::kNeox}, {"gemma3n", T::kNeox}, {"gemma4", T::kNeox}, {"gemma4-assistant", T::kNeox},
      {"gemma-embedding", T::kNeox}, {"starcoder2", T::kNeox}, {"openelm", T::kNeox}, {"gptneox", T::kNeox},
      {"codeshell", T::kNeox}, {"orion", T::kNeox}, {"nemotron", T::kNeox}, {"exaone", T::kNeox},
      {"exaone4", T::kNeox}, {"exaone-moe", T::kNeox}, {"minicpm3", T::kNeox}, {"bailingmoe2", T::kNeox},
      {"dots1", T::kNeox}, {"hunyuan-moe", T::kNeox}, {"jais2", T::kNeox}, {"gpt-oss", T::kNeox},
      {"hunyuan-dense", T::kNeox}, {"hy_v3", T::kNeox}, {"lfm2", T::kNeox}, {"lfm2moe", T::kNeox},
      {"smallthinker", T::kNeox}, {"seed_oss", T::kNeox}, {"grovemoe", T::kNeox}, {"apertus", T::kNeox},
      {"minimax-m2", T::kNeox}, {"minimax-m3", T::kNeox}, {"cogvlm", T::kNeox}, {"pangu-embedded", T::kNeox},
      {"afmoe", T::kNeox}, {"laguna", T::kNeox}, {"qwen3next", T::kNeox}, {"mimo2", T::kNeox},
      {"step35", T::kNeox}, {"talkie", T::kNeox}, {"mellum", T::kNeox},
      // M-RoPE (NEOX pairs, position sections)
      {"qwen2vl", T::kMrope}, {"paddleocr", T::kMrope},
      // interleaved M-RoPE
      {"qwen3vl", T::kImrope}, {"qwen3vlmoe", T::kImrope}, {"qwen35", T::kImrope}, {"qwen35moe", T::kImrope},
      // hparams.use_mrope() ? MROPE : the type given
      {"glm4", T::kNorm}, {"glm4moe", T::kNeox}, {"hunyuan_vl", T::kNeox},
  };
  return table;
}

bool GgufArchMropeWhenSections(std::string_view architecture) {
  return architecture == "glm4" || architecture == "glm4moe" || architecture == "hunyuan_vl";
}

std::optional<GgufRopeType> GgufArchRopeType(std::string_view architecture) {
  for (const auto& [name, type] : GgufRopeTypeTable())
    if (name == architecture) return type;
  return std::nullopt;
}

std::string_view GgufRopeTypeName(GgufRopeType type) {
  switch (type) {
    case GgufRopeType::kNone: return "none";
    case GgufRopeType::kNorm: return "norm";
    case GgufRopeType::kNeox: return "neox";
    case GgufRopeType::kMrope: return "mrope";
    case GgufRopeType::kImrope: return "imrope";
    case GgufRopeType::kVision: return "vision";
  }
  return "?";
}

std::string_view GgufRopeTypeSource() {
  return "llama.cpp src/llama-model.cpp llama_model_rope_type as in Agusx1211/llama-cpp-ds4f-m2-ultra "
         "@ 0642994d61ae69df35db2fa2a1d641b1c499782b (a fork of ggml-org/llama.cpp)";
}

}  // namespace pe
