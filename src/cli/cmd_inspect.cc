#include "cmd_inspect.h"
#include "model_artifacts.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <optional>

#include <pe/error.h>
#include <pe/inspect.h>
#include <pe/probe.h>
#include <pe/table.h>

#include "exit_codes.h"
#include "progress.h"
#include "stdin_table.h"

namespace pe::cli {
namespace {

using Json = nlohmann::ordered_json;

// "csv, json, npy, ...": the formats pe reads, for --help.
std::string FormatList() {
  std::string out;
  for (const std::string& f : TableFormats()) out += (out.empty() ? "" : ", ") + f;
  return out;
}

}  // namespace

void SetupInspect(CLI::App* cmd, InspectOptions& o) {
  cmd->add_option("FILE", o.files,
                  "Table files (.csv .json .npy .h5 ...) or model folders; several: one report; '-': standard input "
                  "(with --input-format csv|json|npy)")
      ->required()
      ->type_name("FILE");
  cmd->parse_complete_callback([&o] {
    if (o.files.size() == 1) o.file = o.files[0];
  });
  cmd->add_option("--tensor,--dataset", o.dataset,
                  "The file's tensor to show (HDF5 dataset path, a tensor of safetensors, JSON, .npz, a PyTorch checkpoint, GGUF or ONNX); default: every tensor")
      ->type_name("NAME");
  cmd->add_option("--input-format,--format", o.format, "Input format: " + FormatList() + " (default: from the extension)")->type_name("FMT");
  cmd->add_option("--rows", o.rows, "Print rows A:B (Python-style slice; negative counts from the end)")->type_name("A:B");
  cmd->add_option("--cols", o.cols, "Only columns A:B (in the slice and the preview)")->type_name("A:B");
  cmd->add_option("--preview", o.preview, "Rows shown at each end of the preview")->type_name("N")->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_flag("--json", o.json, "One JSON document on stdout (schema pe.inspect/1)");
  cmd->add_flag("--identify", o.identify, "Identify the table even when its metadata names a scheme");
  cmd->add_flag("--no-identify", o.no_identify, "Skip identification");
  cmd->add_option("--pair", o.pair,
                  "The other tensor of a RoPE cos+sin pair, from a second file (same shape): phases from both")
      ->type_name("FILE");
  cmd->add_option("--plot,--heatmap", o.heatmap,
                  "Also draw the table (positions × dimensions) into FILE (.png, .svg, .pdf)")
      ->type_name("FILE");
  cmd->add_option("--group", o.heatmap_group,
                  "--plot columns: auto (sincos for an interleaved sinusoid, by its metadata or identification; "
                  "else none), none (as stored), or sincos (even columns, then odd: sin block, cos block)")
      ->type_name("HOW")
      ->capture_default_str();
  cmd->add_option("--cmap", o.heatmap_cmap,
                  "--plot colour map: viridis, magma, cividis, RdBu, RdBu_r (default RdBu_r, centred on 0)")
      ->type_name("NAME");
  cmd->footer(R"(Identification (when the file has no 'scheme' metadata) finds the layout
(interleaved / concatenated), frequency denominator (d or d/2-1), base, first
position, zeroed padding rows and precision (exact, float16, bfloat16, float32
angles and which float32 recipe) of a sinusoid table. A RoPE tensor is
recognised first: a cos or sin table (half or interleaved layout, rotary dim,
first position, attention factor), a cos+sin pair (--dataset cos of a file
holding both) or an inv_freq vector, with its base and scaling (none, linear,
ntk, llama3, yarn, longrope) and precision (exact, HF float32 recipe, inv_freq
rounded to bfloat16, bfloat16 values). See docs/inspect.md.

Examples:
  pe inspect pe.h5
  pe inspect table.npy --json
  pe inspect tables/*.npy --json             # several files: one document, one entry each
  cat table.npy | pe inspect - --input-format npy   # a table on standard input
  pe inspect hf_cos.npy                       # a RoPE cos cache: layout, base, scaling
  pe inspect rope.safetensors                 # every tensor listed, then each
  pe inspect rope.safetensors --tensor cos    # one (cos+sin in one file)
  pe inspect cos.npy --pair sin.npy           # cos+sin in two files
  pe inspect table.npy --rows 100:104 --cols 0:8
  pe inspect model.h5 --dataset encoder/pe --no-identify
  pe inspect rope.npz --dataset cos                                  # numpy's np.savez
  pe inspect model.pt --dataset model.layers.0.self_attn.rotary_emb.inv_freq   # torch.save checkpoint
  pe inspect model.onnx --dataset cos_cache  # an ONNX initializer (no --dataset: lists them)
  pe inspect pe.h5 --plot table.png         # positions × dimensions picture
  pe inspect pe.h5 --plot table.png --group none     # columns as stored (interleaved sin/cos)
)");
  cmd->footer(cmd->get_footer() + kModelInspectHelp);  // pe inspect MODEL (cli/model_artifacts.h)
}

namespace {

// The flags as the library's request: `path` is what to open (standard
// input spooled to a file, read as the one table it holds).
InspectRequest RequestOf(const InspectOptions& o) {
  InspectRequest r;
  r.path = o.open_path.empty() ? o.file : o.open_path;
  r.name = o.file;
  r.one_table = !o.open_path.empty();
  r.format = o.format;
  r.tensor = o.dataset;
  r.rows = o.rows;
  r.cols = o.cols;
  r.preview = o.preview;
  r.identify = o.no_identify ? InspectRequest::Identify::kNever
               : o.identify  ? InspectRequest::Identify::kAlways
                             : InspectRequest::Identify::kAuto;
  r.pair = o.pair;
  r.plot = o.heatmap;
  r.group = o.heatmap_group;
  r.cmap = o.heatmap_cmap;
  return r;
}

int RunInspectOne(const InspectOptions& o, Console& console) {
  // A model folder or model file: its positional-encoding plan (cli/model_artifacts.h).
  if (o.dataset.empty() && o.format.empty() && o.rows.empty() && o.heatmap.empty() && o.pair.empty() &&
      InspectsAsModel(o.file))
    return RunModelInspect(o.file, o.json, console);
  InspectRequest request = RequestOf(o);
  // Progress of the statistics pass (the one that reads every row), on a terminal.
  ProgressBar bar(console.stderr_is_tty() && !console.quiet() && !o.json, "reading " + o.file);
  request.progress = [&bar](std::int64_t done, std::int64_t rows) {
    bar.Update(done, rows);
    if (done >= rows) bar.Finish();
  };
  const InspectResult result = InspectFile(request);
  bar.Finish();
  const auto write = [](std::string_view bytes) { WriteStdout(bytes); };
  // A rotation probe [L, d, d] (include/pe/probe.h): what it is, without a plan.
  // Only a file that holds one tensor is opened again to look (a file of
  // many tensors is never a probe: opening its 50,000 members twice would
  // double inspect's work).
  std::optional<ProbeStructure> probe;
  if (result.tensor_count <= 1 && IsProbeShape(result.info)) try {
    ReadOptions ro;
    ro.format = o.format;
    ro.tensor = o.dataset;
    Table t = OpenTableFile(request.path, ro);
    if (t.size() == 1 && IsProbeShape(t.tensor(0).info()) &&
        t.tensor(0).info().rows * t.tensor(0).info().cols <= kMaxProbeEntries) {
      ProbeStructure s = AnalyzeProbe(t.tensor(0));
      if (s.is_rotation) probe = std::move(s);
    }
  } catch (const Error&) {  // not a probe (InspectFile has read and described the file)
  }
  if (o.json) {
    if (!probe) {
      InspectJson(result, write);
    } else {
      std::string doc;
      InspectJson(result, [&doc](std::string_view b) { doc.append(b); });
      Json j = Json::parse(doc);
      j["probe"] = Json::parse(probe->json);
      WriteStdout(j.dump(2) + "\n");
    }
  } else {
    if (probe) WriteStdout(ProbeStructureText(*probe));
    InspectText(result, write);
  }
  return kExitOk;
}

}  // namespace

int RunInspect(const InspectOptions& o, Console& console) {
  if (o.files.size() <= 1) {
    if (o.file != "-" || !o.open_path.empty()) return RunInspectOne(o, console);
    InspectOptions one = o;
    one.open_path = TablePathOrStdin(o.file, o.format, "--input-format");
    return RunInspectOne(one, console);
  }
  // Several files: text sections, or one JSON document {"schema", "files":
  // [one pe.inspect/1 document each]}; a file that cannot be read is
  // reported (an error entry) and the run exits 2 after the others.
  if (!o.heatmap.empty()) ThrowUsage("--plot", "draws one table; give one FILE");
  if (!o.pair.empty()) ThrowUsage("--pair", "pairs one table; give one FILE");
  int errors = 0;
  if (o.json) WriteStdout("{\n  \"schema\": \"pe.inspect/1\",\n  \"files\": [\n");
  bool first = true;
  for (const std::string& f : o.files) {
    InspectOptions each = o;
    each.files.clear();
    each.file = f;
    if (o.json) {
      if (!first) WriteStdout(",\n");
    } else {
      if (!first) PrintLine("");
      PrintLine(fmt::format("== {} ==", f));
    }
    first = false;
    try {
      if (f == "-") each.open_path = TablePathOrStdin(f, o.format, "--input-format");
      // Errors come from opening the file (before any of its document is
      // written): the entry is then the error alone.
      RunInspectOne(each, console);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kBrokenPipe) throw;
      const std::string message = StdinNamed(e.what());
      console.Error(message);
      ++errors;
      if (o.json) WriteStdout(JsonText(Json{{"file", f}, {"error", message}}, 2));
      else PrintLine(fmt::format("error: {}", message));
    }
  }
  if (o.json) WriteStdout("\n  ]\n}\n");
  return errors ? kExitError : kExitOk;
}

}  // namespace pe::cli
