#include "model_artifacts.h"

#include <pe/analysis.h>
#include <pe/error.h>
#include <pe/model.h>
#include <pe/output.h>

#include <optional>

#include "exit_codes.h"

namespace pe::cli {

const char* const kModelInspectHelp = R"(
A model (a Hugging Face folder with config.json, a .gguf, .onnx, or a
checkpoint holding several tensors) shows its positional-encoding plan: per
layer type the scheme, theta, rotary dim, layout and scaling, NoPE layers,
the context lengths where the plan changes under each --semantics, and each
stored positional tensor checked against the plan (docs/models.md).
  pe inspect ./Llama-3.1-8B/            (a model folder)
  pe inspect model.gguf --json
)";

const char* const kModelVerifyHelp = R"(
Models: --model A checks every positional tensor stored in A against A's
own plan; --model A --model B also compares B's plan with A's (rope theta,
rotary dim, layout / rope type, scaling and its parameters, context length,
NoPE layers, rope_freqs against the llama3 formula), each finding named with
both sources (docs/models.md):
  pe verify --model ./Llama-3.1-8B/ --model llama-3.1-8b.gguf --junit r.xml
)";

bool InspectsAsModel(const std::string& path) { return IsModelArtifact(path); }

int RunModelInspect(const std::string& path, bool json, Console& console) {
  const ModelInspection m = InspectModel(path);
  if (json) {
    WriteStdout(m.json + "\n");
    return kExitOk;
  }
  WriteStdout(ModelInspectText(m, TextStyle{console.stdout_color()}));
  if (!m.hint.empty()) console.Hint(m.hint);
  return kExitOk;
}

int RunModelVerify(const std::vector<std::string>& models, bool json, const std::string& junit_path, bool no_diagnose,
                   bool allow_empty, Console& console) {
  const bool junit_stdout = junit_path == "-";
  if (junit_stdout && json) ThrowUsage("--junit -", "standard output carries the --json report; give --junit a file");
  std::optional<AtomicOutput> junit;
  if (!junit_path.empty() && !junit_stdout) junit.emplace(junit_path);
  const ModelVerifyResult result = VerifyModels({models, !no_diagnose, allow_empty});
  if (junit) {
    junit->Write(VerifyJUnit(result.report));
    junit->Commit();
  }
  const int verdict = result.report.passed ? kExitOk : kExitCheckFailed;
  try {
    if (junit_stdout) WriteStdout(VerifyJUnit(result.report));
    else if (json) WriteStdout(result.report.json + "\n");
    else WriteStdout(ModelVerifyText(result, TextStyle{console.stdout_color()}));
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kBrokenPipe) return verdict;
    throw;
  }
  return verdict;
}

}  // namespace pe::cli
