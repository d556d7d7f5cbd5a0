// A PyTorch checkpoint (torch.save's zip format) read as a model artifact:
// the tensors whose names are positional (inv_freq, cos_cached/sin_cached,
// embed_positions, position_embeddings, wpe, ...; core/models/tensor_role.h),
// found through the restricted unpickler (core/formats/torch_checkpoint.h).
// A checkpoint states no plan: when a config.json sits beside it, the notes
// say to read the folder (the Hugging Face folder reader takes the plan
// from the config).
#include <fmt/format.h>
#include <sys/stat.h>

#include <memory>

#include "core/base/error.h"
#include "core/base/model_folder.h"
#include "core/formats/torch_checkpoint.h"
#include "core/models/artifact.h"
#include "core/models/cos_sin_tensors.h"
#include "core/models/positional_by_value.h"
#include "core/models/tensor_role.h"

namespace pe {

namespace {

// Every "open" spelling of the checkpoint in `text` shown as `shown`.
std::string Shown(std::string text, const std::string& open, const std::string& shown) {
  if (open == shown) return text;
  for (std::size_t at = text.find(open); at != std::string::npos; at = text.find(open, at + shown.size()))
    text.replace(at, open.size(), shown);
  return text;
}

}  // namespace

void ReadCheckpointTensors(const std::string& open_path, const std::string& shown, ModelArtifact& a,
                           const ModelFolder* beside) {
  std::shared_ptr<TorchCheckpoint> ck;
  try {
    ck = std::make_shared<TorchCheckpoint>(beside ? ReadTorchCheckpoint(open_path, *beside)
                                                  : ReadTorchCheckpoint(open_path));
  } catch (const Error& e) {
    throw Error(e.kind(), Shown(e.what(), open_path, shown), e.hint());
  }
  const std::string from = open_path == shown ? "" : shown + ": ";  // notes of a folder's checkpoint name it
  std::size_t others = 0;
  ValueScan by_value;
  for (std::size_t i = 0; i < ck->tensors.size(); ++i) {
    const TorchTensorEntry& e = ck->tensors[i];
    // cos and sin in one tensor (complex freqs_cis, TensorRT-LLM's rotary_cos_sin): its two components.
    if (e.info && AppendCosSinPairTensors(e.tensor.path, *e.info, [ck, i]() { return OpenTorchEntry(*ck, ck->tensors[i]); },
                                          &a))
      continue;
    if (const std::size_t dot = e.tensor.path.rfind('.');
        e.tensor.path.substr(dot == std::string::npos ? 0 : dot + 1) == "rotary_cos_sin") {
      a.notes.push_back(fmt::format("{}tensor '{}' has the name of TensorRT-LLM's (cos, sin) cache but is not read as "
                                    "one: neither [L, d/2, 2] with position 0 = (a, 0), nor flat with a "
                                    "rope_config.json beside it to shape it; not checked",
                                    from, e.tensor.path));
      continue;
    }
    std::string role = RoleFromTensorName(e.tensor.path);
    if (role.empty() && e.info)
      role = by_value.Try(e.tensor.path, *e.info, [ck, i]() { return OpenTorchEntry(*ck, ck->tensors[i]); });
    if (role.empty()) {
      ++others;
      continue;
    }
    if (!e.info) {
      a.notes.push_back(fmt::format("{}tensor '{}' ({}) is not read: {}", from, e.tensor.path, role, e.problem));
      continue;
    }
    ArtifactTensor t;
    t.name = e.tensor.path;
    t.role = role;
    t.info = *e.info;
    t.open = [ck, i]() { return OpenTorchEntry(*ck, ck->tensors[i]); };
    a.tensors.push_back(std::move(t));
  }
  if (const std::string note = by_value.Note(); !note.empty()) a.notes.push_back(note);
  if (others > 0)
    a.notes.push_back(fmt::format("{}{} other tensor{} (weights, positional neither by name nor by value)", from,
                                  others, others == 1 ? "" : "s"));
}

ModelArtifact ReadTorchArtifact(const std::string& path) {
  ModelArtifact a;
  a.path = path;
  a.kind = "torch";
  ReadCheckpointTensors(path, path, a);
  const ModelFolder folder = ModelFolder::OfFile(path);
  if (folder.Has("config.json"))
    a.notes.push_back(fmt::format("{} sits beside the checkpoint: inspect the folder for the model's plan",
                                  folder.Shown("config.json")));
  else
    a.notes.push_back("a checkpoint states no positional-encoding plan (no config.json beside it)");
  return a;
}

}  // namespace pe
