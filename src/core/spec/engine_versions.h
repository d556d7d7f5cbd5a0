// The engine versions `--semantics` names, and the scaling rules each one
// has, as data (docs/schemes.md, "Scaling rules and --semantics", is this
// table with its sources):
//
//   EngineVersions()  one row per engine version: its canonical name (what
//                     the metadata's "semantics" holds), the other names
//                     that select it ("vllm" = the newest vLLM), the family
//                     of rules, and the release and source it was read from.
//   ScalingRules()    one row per (rope_scaling type, engine version) where
//                     the version has a rule of its own: the rope_parameters
//                     keys that version's code reads, the keys it never
//                     reads (a config's value is dropped, as the engine
//                     drops it, with a note naming the version), and the
//                     formula in one line.
//   EngineOnlyTypes() rope_type names only an engine knows, with the class
//                     that computes them: a refusal names that class.
//
// The rules themselves are computed in core/schemes/rope_scaling.cc; what
// varies between versions of one engine is read from these rows (which keys
// are read), never from a second list.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pe {

enum class EngineFamily { kHf, kHf445, kVllm, kLlamaCpp, kMlxLm };

struct EngineVersion {
  const char* name;     ///< canonical --semantics name ("vllm@2026-09"), written in the metadata
  const char* aliases;  ///< other names that select it, comma-separated ("vllm")
  EngineFamily family;  ///< whose rules
  const char* engine;   ///< "transformers", "vllm", "llama.cpp", "mlx-lm"
  const char* release;  ///< the release or commit read, with its date
  const char* source;   ///< repository, path and commit of the rules
};

struct ScalingRule {
  const char* version;    ///< EngineVersion::name
  const char* rope_type;  ///< pe's rope_scaling type ("yarn", "dynamic", ...)
  const char* reads;      ///< rope_parameters keys the version reads, comma-separated
  const char* ignores;    ///< keys pe also reads for other versions that this one never reads
  const char* formula;    ///< the rule, one line
};

struct EngineOnlyType {
  const char* engine;     ///< EngineVersion::engine
  const char* rope_type;  ///< the config's rope_type (or feature key)
  const char* what;       ///< the class that computes it, and its file
};

/// Every engine version, in the order docs and diagnostics list them.
const std::vector<EngineVersion>& EngineVersions();

/// Every (scaling type, engine version) rule.
const std::vector<ScalingRule>& ScalingRules();

/// The rope_type names (and rotary features) only an engine's own class computes.
const std::vector<EngineOnlyType>& EngineOnlyTypes();

/// The version `name` selects (canonical name or alias; "" = hf); throws
/// pe::Error (usage) naming --semantics and listing the names otherwise.
const EngineVersion& FindEngineVersion(std::string_view name);

/// The family of `name` without throwing (kHf for an unknown name: the
/// caller that needs the check calls FindEngineVersion).
EngineFamily SemanticsFamily(std::string_view name);

/// The rule of `version` for `rope_type`, or nullptr when it has none.
const ScalingRule* FindScalingRule(std::string_view version, std::string_view rope_type);

/// Whether `version`'s rule for `rope_type` reads `key` / never reads it.
bool RuleReads(std::string_view version, std::string_view rope_type, std::string_view key);
bool RuleIgnores(std::string_view version, std::string_view rope_type, std::string_view key);

/// The engine-only type `rope_type` of `engine`, or nullptr.
const EngineOnlyType* FindEngineOnlyType(std::string_view engine, std::string_view rope_type);

/// The canonical names, comma-separated ("hf, hf-4.45, ...").
std::string EngineVersionNames();

}  // namespace pe
