// pe/engine.h: an engine's rope, run live. `pe verify --engine
// llama.cpp=LIBDIR --model model.gguf` loads the user's ggml from LIBDIR
// (dlopen, its C API only: src/core/engines/ggml_library.h says what is
// loaded and the ABI it assumes), runs ggml_rope_ext (ggml_rope_multi for
// M-RoPE) on the basis q = I with the parameters llama.cpp derives for the
// GGUF, and verifies the probe it gives (pe/probe.h) against the GGUF's own
// plan and, for each further plan (a Hugging Face model folder), against
// that one. docs/verify.md, "llama.cpp probed directly".
//
// Code is loaded only from the folder named in `engine`, never from a path
// a model file names (docs/security.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pe/export.h>
#include <pe/probe.h>
#include <pe/text.h>

namespace pe {

/// The engines `--engine NAME=LIBDIR` takes: "llama.cpp".
PE_API std::vector<std::string> EngineNames();

/// A probe run by an engine.
struct EngineProbeRequest {
  std::string engine;  ///< "llama.cpp=LIBDIR"
  std::string model;   ///< the GGUF whose rope the engine runs
  /// The positions; empty: 0..15 and a spread up to the context length
  /// (ProbeDefaultPositions), or `start`..start+63 when start is set.
  std::vector<std::int64_t> positions;
  std::optional<std::int64_t> start;
};

struct EngineProbe {
  std::vector<float> data;               ///< [L, d, d] row-major: data[(r·d + j)·d + k]
  std::int64_t dim = 0;                  ///< d, the head dim
  std::vector<std::int64_t> positions;   ///< L
  std::string engine, lib_dir;           ///< "llama.cpp", the folder loaded from
  std::vector<std::string> libraries;    ///< the files loaded, by name
  std::string ggml_version, ggml_commit, cpu_library, device;
  std::string params_source;             ///< where the parameters came from, in words
  std::string call;                      ///< the rope call, in words
  std::vector<std::string> notes;        ///< e.g. a ggml version other than the tested one
  /// The absolute tolerance VerifyEngine uses by default: the bound of
  /// ggml's float32 recipe at the largest position (its angle recurrence
  /// costs about one rounding per pair index, times |θ|).
  double recipe_atol = 0;
};

/// The default positions of a probe of a model whose context is `context`
/// tokens (0: unknown, 4096 then): 0..15, then 16 positions spaced
/// geometrically up to context - 1.
PE_API std::vector<std::int64_t> ProbeDefaultPositions(std::int64_t context);

/// Runs the engine. Throws pe::Error (kUsage, naming --engine) for an
/// unknown engine, a folder without the libraries or symbols pe needs, a
/// ggml of another ABI; (kInput) for a GGUF without a RoPE plan.
PE_API EngineProbe ProbeEngine(const EngineProbeRequest& request);

/// What to verify against, and how.
struct EngineVerifyRequest {
  EngineProbeRequest probe;
  std::vector<std::string> plans;  ///< further plans: Hugging Face model folders (config.json)
  std::optional<double> atol, rtol, max_ulp;
  bool diagnose = true;
};

struct EngineVerifyResult {
  bool passed = false;                      ///< every plan's checks passed
  EngineProbe probe;                        ///< what ran (data included)
  std::vector<std::string> plan_names;      ///< the GGUF, then each folder
  std::vector<ProbeVerifyResult> results;   ///< one per plan, in that order
  std::string json;                         ///< schema pe.verify-engine/1
};

/// Runs the engine and verifies its probe against each plan.
PE_API EngineVerifyResult VerifyEngine(const EngineVerifyRequest& request);

/// The human report: the engine lines ("engine:", "loaded:", "parameters:",
/// "call:"), then each plan's probe report as ProbeVerifyText gives it, and
/// with several plans a last "result:" line over all.
PE_API std::string EngineVerifyText(const EngineVerifyResult& r, const TextStyle& style = {});

/// JUnit XML: one testsuite per plan (classname `classname`).
PE_API std::string EngineVerifyJUnit(const EngineVerifyResult& r, const std::string& classname = "pe.verify.engine");

}  // namespace pe
