// pe/model.h: a model artifact's positional encoding, as `pe inspect MODEL`
// and `pe verify --model A [--model B]` show it (docs/models.md).
//
// A model artifact is a file or folder a model is shipped as: a Hugging
// Face folder (config.json, with its safetensors or checkpoint files), a
// GGUF file, an ONNX graph, a PyTorch checkpoint of several tensors, an
// .npz. Every kind yields the same things: the positional-encoding plan its
// metadata states (per RoPE group: layers, theta, head and rotary dim,
// layout, scaling; NoPE layers; or an absolute embedding, or ALiBi), each
// plan-relevant setting with the key it came from, the context lengths
// where the plan changes, and the stored positional tensors, each checked
// against the plan. An ONNX graph's cos/sin caches are identified from
// their values (base and rotary dim) when its metadata states no plan.
//
// Artifacts are untrusted (docs/security.md): readers validate every size
// before allocating, never follow a path outside the file or the model's
// folder, and never run code from the file.
//
// Reports are data, as in pe/analysis.h: the fields, the full document as
// JSON (`pe inspect MODEL --json`: schema "pe.inspect-model/1"; `pe verify
// --model --json`: "pe.verify/1", its reference of kind "model"), and the text
// and JUnit renderings the CLI prints.
//
// Thread safety: the functions keep no state but the plan-note sink;
// distinct calls may run at once.
//
// Example:
//   pe::ModelInspection m = pe::InspectModel("Llama-3.1-8B/");
//   for (const pe::ModelRopeGroup& g : m.plan->groups) use(g.rope_theta, g.rotary_dim);
//   pe::ModelVerifyResult v = pe::VerifyModels({{"Llama-3.1-8B/", "llama-3.1-8b.gguf"}});
//   std::fputs(pe::ModelVerifyText(v).c_str(), stdout);   // as pe verify --model A --model B
#pragma once

#include <pe/export.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pe/analysis.h>
#include <pe/error.h>
#include <pe/text.h>
#include <pe/types.h>

namespace pe {

/// True when `pe inspect PATH` shows PATH as a model rather than a table: a
/// folder with config.json, a .gguf or .onnx file, or a checkpoint holding
/// several tensors (a checkpoint of one tensor, and an .npz, stay tables).
/// Never throws: a file that cannot be read is left to the table reader.
PE_API bool IsModelArtifact(const std::string& path);

/// One plan-relevant value as the artifact states it.
struct ModelSetting {
  std::string name;    ///< normalised: "rope_theta", "rope_type", "rope_scaling.factor", ...
  std::string value;   ///< as text ("500000", "neox", "yarn")
  std::string source;  ///< where it came from: "llama.rope.freq_base", "config.json: rope_theta"
};

/// One distinct RoPE encoding of a plan and the layers that use it.
struct ModelRopeGroup {
  std::string name;                  ///< the first layer type using it ("full_attention")
  std::vector<std::int64_t> layers;  ///< layer indices, ascending
  double rope_theta = 0;
  std::int64_t head_dim = 0;
  std::int64_t rotary_dim = 0;       ///< channels rotated (head_dim times partial_rotary_factor)
  std::string layout;                ///< the channel pairs the attention rotates ("half", "interleaved")
  std::string cos_layout;            ///< the columns of the rotary module's cos/sin, where they differ
  std::string scaling;               ///< "none", "linear", "dynamic", "yarn", "llama3", "longrope", ...
  std::string scaling_text;          ///< the type with every parameter: "llama3 (factor 8, original 8192, ...)"
};

/// The plan the artifact's metadata states.
struct ModelPlan {
  std::string source;                     ///< the config's model_type, or the reader ("gguf")
  std::int64_t num_layers = 0;
  std::vector<std::string> layer_plan;    ///< per layer: "nope" or its group's name
  std::vector<std::int64_t> nope_layers;  ///< layers without a positional encoding
  /// Llama 4's attention temperature on NoPE layers, when it applies:
  /// scale(p) = ln(floor((p + 1) / floor_scale) + 1) · attn_scale + 1.
  bool temperature = false;
  double floor_scale = 0, attn_scale = 0;
  std::vector<ModelRopeGroup> groups;
};

/// An absolute position embedding the metadata states (GPT-2, BERT, BART,
/// Marian): learned, or a fixed sinusoid stored as weights.
struct ModelAbsoluteEmbedding {
  std::string kind;         ///< "learned" or "sinusoidal"
  std::string scheme;       ///< pe's scheme of its table ("learned", "marian", ...)
  std::int64_t d_model = 0, rows = 0;
  std::int64_t offset = 0;  ///< rows before position 0 (BART/OPT/RoBERTa: 2)
  std::string source;
};

/// A context length where the plan's encoding changes (docs/models.md,
/// "Where the plan changes").
struct ModelPlanChange {
  std::string group;      ///< plan group
  std::string scaling;    ///< "longrope", "dynamic", "yarn", "llama3"
  std::string semantics;  ///< "all", or the one --semantics this change is for
  std::int64_t length = 0;
  std::string what;       ///< one line
};

/// One engine's cos/sin cache and the positions it admits, for one plan
/// group (docs/models.md, "Admitted length"): transformers and llama.cpp
/// compute each position's angles as it comes; vLLM indexes a cache built
/// at load time, and a position at or past its rows reads past it.
struct ModelEngineLength {
  std::string group;       ///< plan group
  std::string engine;      ///< "transformers", "vllm", "llama.cpp"
  std::string semantics;   ///< the --semantics of its rules
  std::int64_t planned = -1;       ///< the length the group's scaling was planned for; -1 unstated
  std::string planned_what;        ///< "original_max_position_embeddings 32768 x factor 4"
  std::int64_t cache_rows = -1;    ///< rows its cache holds for positions from cache_offset; -1 no cache
  std::int64_t cache_offset = 0;   ///< the cache row of position 0 (vLLM longrope's long half: original)
  std::string cache;               ///< in words, with the class that builds it
  std::int64_t default_length = -1;  ///< what it admits when not told; -1 no limit of its own
  std::string default_what;
  std::int64_t admitted = -1;      ///< what it admits at the requested length (InspectModel: the default)
  std::string admitted_what;
  std::string source;              ///< the engine's file and commit the rule was read from
};

/// A stored tensor that is (or may be) positional, with its checks against
/// the plan (empty when nothing checks it).
struct ModelTensor {
  std::string name;                 ///< as stored: "rope_freqs.weight", "model.embed_positions.weight"
  std::string role;                 ///< "rope_freqs", "cos_cache", "inv_freq", "position_embedding", ...; "" unknown
  std::vector<std::int64_t> shape;
  DType dtype = DType::kFloat32;
  std::vector<CheckResult> checks;  ///< named NAME or NAME:ASPECT ("inv_freq:dtype")
};

/// What `pe inspect MODEL` shows.
struct ModelInspection {
  std::string path;          ///< as given
  std::string kind;          ///< "gguf", "hf-folder", "onnx", "torch", "npz", "safetensors"
  std::string architecture;  ///< "llama", "qwen2", ...; empty when unstated
  std::int64_t context_length = -1;        ///< the trained context length; -1 unstated
  std::optional<ModelPlan> plan;           ///< the RoPE/NoPE plan, when stated
  std::optional<ModelAbsoluteEmbedding> absolute;
  std::vector<double> alibi_slopes;        ///< when the artifact states ALiBi heads (and max bias)
  std::vector<ModelSetting> settings;
  std::vector<ModelPlanChange> changes;
  std::vector<ModelEngineLength> lengths;  ///< per plan group, per engine: cache rows and admitted positions
  std::vector<ModelTensor> tensors;        ///< the first 256 positional tensors
  std::size_t tensors_summarised = 0;      ///< positional tensors beyond those, described in a note
  std::vector<std::string> notes;          ///< what the reader could not use and why
  std::vector<std::string> problems;       ///< values stated outside their parameter's domain (warnings)
  /// What to run next when there was no plan to check the tensors against
  /// (a file, not a folder): `pe inspect FILE --tensor NAME`; else empty.
  std::string hint;
  std::string json;  ///< the `pe inspect MODEL --json` document
  /// The artifact behind the fields, for ModelInspectText.
  struct Details;
  std::shared_ptr<const Details> details;
};

/// Reads the artifact at `path` and checks its stored positional tensors
/// against its plan. Throws pe::Error (kInput) naming the file when it is
/// unreadable, malformed or unsafe (a link out of the folder, a size past
/// its bounds), (kIo) when a read is refused. A tensor that fails its check
/// is a result, not an exception.
PE_API ModelInspection InspectModel(const std::string& path);

/// The text of `pe inspect MODEL` (without the hint, which the CLI prints on
/// stderr): the plan, ALiBi slopes, where the plan changes, the settings,
/// each positional tensor with its checks, notes and warnings. Every text
/// from the artifact is escaped (pe/text.h).
PE_API std::string ModelInspectText(const ModelInspection& inspection, const TextStyle& style = {});

/// What `pe verify --model` compares.
struct ModelVerifyRequest {
  /// One artifact (its tensors against its own plan) or two (each one's
  /// tensors, then the second's plan against the first's).
  std::vector<std::string> models;
  bool diagnose = true;      ///< identify a tensor that fails its check
  bool allow_empty = false;  ///< pass when nothing was compared (as VerifyRequest::allow_empty)
  /// >= 1: also check serving this many positions (`--max-model-len N`):
  /// per RoPE group, N within the length its scaling was planned for and
  /// within each engine's cos/sin cache ("admitted:GROUP:vllm"). -1: not checked.
  std::int64_t max_model_len = -1;
};

/// The report of `pe verify --model`.
struct ModelVerifyResult {
  /// The verdict, every check (plan values named with both sources:
  /// "rope_theta: a/config.json rope_theta = 500000, model.gguf
  /// llama.rope.freq_base = 10000"), the readers' notes and the JSON
  /// document; VerifyJUnit(result.report) is `--junit`.
  VerifyResult report;
  /// Each artifact as the report's first line names it: "PATH (KIND, ARCH)".
  std::vector<std::string> models;
};

/// Verifies the artifacts of `request`. Throws pe::Error (kUsage) for no
/// model or more than two; (kInput/kIo) as InspectModel.
PE_API ModelVerifyResult VerifyModels(const ModelVerifyRequest& request);

/// The text of `pe verify --model`: "verify model A (...) against B (...)",
/// the notes, one line per check, and the last line "result: ...".
PE_API std::string ModelVerifyText(const ModelVerifyResult& result, const TextStyle& style = {});

/// Where the notes of a config reader go: assumptions it made (a model_type
/// with no family rule, read with the generic one). Each note is said once
/// per process; by default as a line "pe: warning: ..." on stderr. The CLI
/// passes its warning line (which --quiet silences).
PE_API void SetPlanNoteSink(std::function<void(const std::string&)> sink);

}  // namespace pe
