// The positions each engine admits for a plan, and the cos/sin cache it
// builds to serve them (docs/models.md, "Admitted length").
//
// An engine either keeps a cos/sin cache and indexes it by position (vLLM:
// `cos_sin_cache.index_select(0, positions)`), or computes the angles of
// each position as it comes (transformers' rotary modules per forward,
// llama.cpp's ggml_rope_ext per position). A cached engine that admits a
// position at or past its cache's rows reads past the cache: an IndexError,
// a device-side assert, or garbage. Every engine, cached or not, can also be
// asked for positions past the length the scaling was planned for
// (PlannedLengthOf): the model then runs outside what it was scaled to.
//
// The engines and their rules are one table (kEngineLengthRules in the
// .cc), each row citing the engine's code it was read from; an engine
// version is a row. Pure: reads the plan only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/spec/pe_plan.h"

namespace pe {

/// The length a group's scaling was planned for, as the config states it.
struct PlannedLength {
  std::int64_t length = -1;  ///< tokens; -1 when the config states no length
  std::string what;          ///< how: "original_max_position_embeddings 32768 x factor 4"
};

/// The planned length of `spec` (a plan group's rope spec): yarn:
/// original x factor; linear, dynamic, ntk: max_position_embeddings x
/// factor; llama3, longrope, none and the others: max_position_embeddings
/// (vLLM's _get_and_verify_max_len, the one place an engine writes the rule
/// down). `context_length` (the artifact's, -1 unstated) stands in when the
/// spec carries no max_position_embeddings.
PlannedLength PlannedLengthOf(const SchemeSpec& spec, std::int64_t context_length = -1);

/// One engine's cache and admitted positions for one plan group.
struct EngineLength {
  std::string group;      ///< plan group ("full_attention")
  std::string engine;     ///< "transformers", "vllm", "llama.cpp"
  std::string semantics;  ///< the --semantics its rules are (docs/schemes.md)
  /// Rows of the cos/sin cache it builds; -1: none, computed per position.
  std::int64_t cache_rows = -1;
  /// The cache row position 0 reads (vLLM's longrope long half: the
  /// original length, after the short cache).
  std::int64_t cache_offset = 0;
  std::string cache;      ///< what it keeps, in words, with the class that builds it
  /// The length it admits when not told (vLLM: the derived max_model_len;
  /// llama.cpp: n_ctx_train); -1: no limit of its own.
  std::int64_t default_length = -1;
  std::string default_what;
  /// The length it admits at the requested max_model_len (the default when
  /// none was requested); -1: no limit.
  std::int64_t admitted = -1;
  std::string admitted_what;  ///< what it does with the request ("refused unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")
  std::string source;         ///< the engine's file and commit the rule was read from
};

/// Every engine of the table for every group of `plan`, at `max_model_len`
/// (-1: each engine's default). `context_length`: the artifact's trained
/// length (-1 unstated).
std::vector<EngineLength> EngineLengths(const PePlan& plan, std::int64_t context_length, std::int64_t max_model_len);

/// The engines of the table, in order ("transformers", "vllm", "llama.cpp").
std::vector<std::string> EngineLengthEngines();

}  // namespace pe
