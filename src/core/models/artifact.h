// A model artifact: a file or folder a model is shipped as (a GGUF file, a
// Hugging Face model folder, an ONNX graph, a PyTorch checkpoint, an .npz),
// read for its positional encoding. Every artifact kind yields the same
// thing, so `pe inspect MODEL` and `pe verify --model A --model B` work on
// any of them and compare any two:
//
//   plan       the positional-encoding plan its metadata states (per layer;
//              core/spec/pe_plan.h), when it states one
//   settings   each plan-relevant value as the artifact spells it, with the
//              key it came from ("llama.rope.freq_base" = 500000), so a
//              finding can name both sides of a mismatch
//   tensors    the stored tensors that are (or may be) positional: RoPE
//              caches, rope_freqs, inv_freq, learned position embeddings,
//              ALiBi slopes; each with its role and how to open it
//
// Artifacts are untrusted (docs/security.md): readers validate every size
// before allocating, never follow a path outside the file or the model's
// folder, and never run code from the file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <utility>

#include "core/spec/pe_plan.h"
#include "core/base/table.h"

namespace pe {

/// One plan-relevant value of an artifact, as the artifact states it.
struct ArtifactSetting {
  std::string name;    ///< normalized name: "rope_theta", "rope_type", "rotary_dim", "context_length", "rope_scaling.factor", ...
  std::string value;   ///< as text ("500000", "neox", "yarn")
  std::string source;  ///< where it came from: "llama.rope.freq_base", "config.json: rope_theta", "architecture llama (llama_model_rope_type)"
};

/// A stored tensor of an artifact that may be positional.
struct ArtifactTensor {
  std::string name;  ///< as stored: "rope_freqs.weight", "model.embed_positions.weight", "cos_cache"
  std::string role;  ///< "rope_freqs", "rope_factors_long", "cos_cache", "sin_cache", "inv_freq", "position_embedding", "alibi_slopes", or "" (unknown)
  TableInfo info;    ///< shape and dtype (rows/cols as read)
  /// Opens the tensor for block reading (validated; throws pe::Error input).
  std::function<std::unique_ptr<RowSource>()> open;
};

/// An absolute position embedding a config states (encoder-decoder and
/// GPT-2/BERT-style models): learned, or a fixed sinusoid stored as weights.
struct AbsolutePositions {
  std::string kind;         ///< "learned" or "sinusoidal"
  SchemeSpec spec;          ///< learned: d_model, max_len = rows; sinusoidal: the exact scheme (marian, fairseq)
  std::int64_t offset = 0;  ///< rows before position 0 (BART/OPT/RoBERTa: 2)
  std::string source;       ///< "config.json model_type bart (BartLearnedPositionalEmbedding, offset 2)"
};

/// A RoPE op of an ONNX graph (RotaryEmbedding of ONNX opset 23 or
/// com.microsoft, com.microsoft.GroupQueryAttention) and what its
/// attributes and inputs imply (core/models/onnx_rope_ops.h).
struct ArtifactRopeOp {
  std::string op;    ///< "com.microsoft.RotaryEmbedding", "ai.onnx.RotaryEmbedding", "com.microsoft.GroupQueryAttention"
  std::string node;  ///< the node's name ("" when unnamed)
  std::vector<std::string> inputs;
  std::vector<std::pair<std::string, std::string>> attributes;  ///< name, value as text, in file order
  bool rotary = true;             ///< false: GroupQueryAttention with do_rotary 0
  int interleaved = 0;
  std::int64_t rotary_dim = -1;   ///< R; -1 when nothing states it
  std::string rotary_dim_source;  ///< "rotary_embedding_dim", "2 x cos_cache width", ...
  std::string pairing;            ///< "(i, i+4) for i < 4: split at the rotary width, not the head"
  std::string cos_cache, sin_cache;                 ///< input names
  std::vector<std::int64_t> cos_shape, sin_shape;   ///< empty when not an initializer or Constant
  std::vector<std::string> notes;                   ///< what ONNX Runtime checks at run time
  std::vector<std::string> warnings;                ///< what ONNX Runtime 1.30 silently accepts, or will refuse
};

struct ModelArtifact {
  std::string path;          ///< as given
  std::string kind;          ///< "gguf", "hf-folder", "onnx", "torch", "npz", "safetensors"
  std::string architecture;  ///< "llama", "qwen2", "gemma3"; GGUF general.architecture or config model_type
  std::optional<PePlan> plan;         ///< the plan its metadata states (none for a bare checkpoint)
  std::int64_t context_length = -1;   ///< trained context length when stated
  std::vector<ArtifactSetting> settings;
  std::vector<ArtifactTensor> tensors;
  std::vector<std::string> notes;     ///< what the reader could not use and why (shown by inspect)
  /// Values the metadata states outside their parameter's domain (a
  /// negative rope_theta, a factor of 0), each naming the file: a failing
  /// check of `pe verify --model`, a warning of `pe inspect`. Filled by
  /// OpenModelArtifact for every kind that states a plan.
  std::vector<std::string> problems;
  std::optional<AbsolutePositions> absolute;  ///< an absolute position embedding the metadata states
  std::vector<ArtifactRopeOp> rope_ops;       ///< an ONNX graph's RoPE ops
  /// Positional tensors found beyond kMaxArtifactTensors: counted and
  /// summarised in a note, not listed in `tensors` nor checked.
  std::size_t tensors_summarised = 0;
  /// The value of setting `name` ("rope_theta", or "<group>.rope_theta"
  /// first when `group` is given), or nullptr.
  const ArtifactSetting* FindSetting(const std::string& name, const std::string& group = "") const;
};

/// The positional tensors of one artifact that are listed and checked one by
/// one; a file of more is summarised (SummariseArtifactTensors).
inline constexpr std::size_t kMaxArtifactTensors = 256;

/// Keeps the first kMaxArtifactTensors of `a->tensors`; the others are
/// counted in tensors_summarised and described in one note (their count by
/// role and by shape), so that a file of thousands of small positional
/// tensors costs the analysis of 256 however many it holds.
void SummariseArtifactTensors(ModelArtifact* a);

/// True when `path` is a model artifact rather than a single table file:
/// a directory holding config.json, or a .gguf/.onnx/.pt/.pth/.bin/.ckpt
/// /.npz file.
bool LooksLikeModelArtifact(const std::string& path);

/// Reads the artifact at `path`, choosing the reader by what it is (folder,
/// magic bytes, extension). Throws pe::Error (input) naming the file and
/// the reason when it is unreadable, malformed or unsafe.
ModelArtifact OpenModelArtifact(const std::string& path);

// One reader per artifact kind, each in its own file of core/models/ (the
// dispatcher, OpenModelArtifact, is in artifact.cc).
ModelArtifact ReadGgufArtifact(const std::string& path);      ///< gguf_artifact.cc
ModelArtifact ReadHfFolderArtifact(const std::string& path);  ///< hf_artifact.cc (a folder with config.json)
ModelArtifact ReadOnnxArtifact(const std::string& path);      ///< onnx_artifact.cc
ModelArtifact ReadTorchArtifact(const std::string& path);     ///< torch_artifact.cc (.pt/.pth/.bin/.ckpt zip checkpoints)
ModelArtifact ReadNpzArtifact(const std::string& path);       ///< npz_artifact.cc

/// The positional tensors of the PyTorch checkpoint at `open_path` (by name,
/// then by value) appended to `a->tensors`, with the readers' notes; errors
/// and notes name it `shown`. The folder reader passes the checkpoint it
/// opened under ModelFolder's rule as /proc/self/fd/N (the descriptor, not
/// the name again) and shows it as "<folder>/pytorch_model.bin".
/// torch_artifact.cc.
/// `beside`: the folder the checkpoint sits in, when open_path is a
/// descriptor (TensorRT-LLM's rotary_cos_sin is shaped from its
/// rope_config.json there; core/formats/torch_checkpoint.h).
class ModelFolder;
void ReadCheckpointTensors(const std::string& open_path, const std::string& shown, ModelArtifact& a,
                           const ModelFolder* beside = nullptr);

}  // namespace pe
