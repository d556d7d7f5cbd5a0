#include "cmd_verify.h"
#include "model_artifacts.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <cstdio>

#include <filesystem>
#include <optional>

#include <pe/pe.h>
#include <pe/engine.h>
#include <pe/probe.h>

#include "progress.h"
#include "scheme_flags.h"
#include "stdin_table.h"
#include <pe/error.h>

#include "exit_codes.h"

namespace pe::cli {
namespace {

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  return out;
}

bool IsStdStream(const std::string& path) { return path == "-"; }

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool Given(const VerifyCliOptions& o, const std::string& name) {
  const CLI::Option* opt = o.cmd ? o.cmd->get_option_no_throw(name) : nullptr;
  return opt && opt->count() > 0;
}

}  // namespace

void SetupVerify(CLI::App* cmd, VerifyCliOptions& o) {
  o.cmd = cmd;
  cmd->add_option("FILE", o.files,
                  "Tables to verify (.csv .json .npy .h5 ...); several: one report for all; '-': standard input "
                  "(with --input-format csv|json|npy)")
      ->type_name("FILE");
  cmd->parse_complete_callback([&o] {
    if (o.files.size() == 1) o.file = o.files[0];
  });
  cmd->add_option("--model", o.models, "A model folder or file to verify (twice: compare the two plans)")->type_name("MODEL");
  cmd->add_option("--probe", o.probe,
                  "A rotation probe [L, d, d] (an engine's rope applied to unit vectors; .npy .safetensors .h5) to check "
                  "against the plan of --scheme rope flags, --hf-config, --gguf or --model; positions from --start or --positions")
      ->type_name("FILE");
  cmd->add_option("--engine", o.engine,
                  "Run an engine's rope on unit vectors and verify that probe against --model model.gguf's plan (a "
                  "second --model HF_DIR: against its plan too): llama.cpp=LIBDIR, the folder of the user's "
                  "libggml-base.so, libggml.so, libggml-cpu*.so (loaded with dlopen; docs/verify.md)")
      ->type_name("ENGINE");
  AddSpecFlags(*cmd, o.spec);
  AddResizeFlags(*cmd, o.resize);
  cmd->add_option("--reference", o.reference,
                  "Compare with this table file, or with an inline spec such as "
                  "'rope:head-dim=128,base=500000,rope-scaling=llama3,factor=8' (see docs/cli.md)")
      ->type_name("REF");
  // --tensor/--dataset: FILE's tensor, as in every command. The
  // scheme's own --tensor (AddSpecFlags) is replaced by it: a file's tensor
  // named cos is checked against the scheme's cos, and for a file of one
  // unnamed tensor (.npy, .csv) --tensor says which of the scheme's tensors
  // it is. --reference-tensor names REF's tensor (or the scheme's, when it
  // differs); --reference-dataset is its old spelling.
  cmd->remove_option(cmd->get_option("--tensor"));
  cmd->add_option("--tensor,--dataset", o.dataset,
                  "FILE's tensor (HDF5 dataset, safetensors/JSON/npz... tensor; for a .npy/.csv, which of the scheme's "
                  "tensors it is: cos|sin|inv_freq...); default: every tensor the metadata describes")
      ->type_name("NAME")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // --tensor cos --dataset cos: one name, twice
  cmd->add_option("--reference-tensor,--reference-dataset", o.reference_dataset,
                  "REF's tensor, or the scheme tensor to compare with (default: the one named like FILE's)")
      ->type_name("NAME");
  cmd->add_option("--input-format,--format", o.format, "Format of FILE: " + Joined(pe::TableFormats()) + " (default: from the extension)")->type_name("FMT");
  cmd->add_option("--atol", o.atol, "Absolute tolerance (replaces the default rule)")->type_name("X");
  cmd->add_option("--rtol", o.rtol, "Relative tolerance (replaces the default rule)")->type_name("X");
  cmd->add_option("--max-ulp", o.max_ulp, "Tolerance in ulps of the file's dtype (replaces the default rule)")->type_name("N");
  cmd->add_option("--check", o.checks, "Property checks: rotation,shift,bounds,norm,unique | all | none")->type_name("LIST");
  cmd->add_option("--offsets", o.offsets, "Offsets k for rotation and shift (default 1,2,3,10,100,1000,10000)")->type_name("LIST");
  cmd->add_flag("--json", o.json, "One JSON document on stdout (schema pe.verify/1)");
  cmd->add_option("--junit", o.junit, "Also write a JUnit XML report to this file")->type_name("FILE");
  cmd->add_flag("--no-diagnose", o.no_diagnose, "Do not try to identify a failing table");
  cmd->add_flag("--allow-empty", o.allow_empty,
                "Pass when the checks compared nothing (no entry, no plan value, no property); default: fail");
  cmd->footer(R"(The reference comes from the file's metadata; flags override it (conflicts are
reported). Default tolerance per entry: 1 ulp of the file's dtype plus
2^-24·|θ|·(3 + 2|ln ω|) for a sinusoid entry at angle θ = pos·ω (float64
tables: 2^-53), i.e. what a float32 computation of the angles legitimately
costs. --atol/--rtol/--max-ulp replace it. See docs/verify.md.

Exit codes: 0 every check passed, 1 a check failed or nothing was compared
(every check skipped; --allow-empty passes that), 2 usage or input error.

Examples:
  pe verify pe.h5
  pe verify tables/*.npy --junit report.xml   # several files: one report, one testsuite each
  generate_table | pe verify - --input-format npy --d-model 512   # a table on standard input
  pe verify rope.safetensors                  # every tensor (cos, sin, inv_freq), one section each
  pe verify theirs.npy --scheme sinusoidal --d-model 512
  pe verify theirs.npy --reference ours.h5 --max-ulp 2
  pe verify cos.npy --reference rope:head-dim=128,base=500000,tensor=cos
  pe verify theirs.npy --check rotation,shift --json
  pe verify theirs.npy --d-model 512 --junit report.xml
  pe verify hf_cos.npy --scheme rope --head-dim 128 --base 500000 --tensor cos
  pe verify inv_freq.npy --scheme rope --head-dim 128 --base 500000 --tensor inv_freq
  pe verify rope.npz --scheme rope --head-dim 128 --max-len 4096 --tensor sin   # the file's 'sin'
  pe verify model.onnx --tensor cos_cache --scheme rope --head-dim 64 --max-len 4096 --layout cache --reference-tensor cos

A RoPE table that fails is diagnosed in RoPE terms ("columns are interleaved
pairs: add --layout interleaved", "positions start at 1: add --start 1");
an inv_freq is judged as a vector of frequencies (docs/verify.md).
)");
  cmd->footer(cmd->get_footer() + kModelVerifyHelp);  // pe verify --model (cli/model_artifacts.h)
}

// pe verify FILE --resize-from ORIG: FILE against ORIG resized by the
// rule; when they differ, the porting faults that reproduce FILE.
int RunResizeVerify(const VerifyCliOptions& o, Console& console) {
  if (o.file.empty()) ThrowUsage("verify", "FILE is required (the resized table to check against --resize-from)");
  const LearnedTable orig = ReadLearnedTable(o.resize.from, "--resize-from");
  const LearnedTable port = ReadLearnedTable(o.dataset.empty() ? o.file : o.file + ":" + o.dataset, "FILE");
  const std::int64_t merge =
      Given(o, "--spatial-merge-size") ? SpecFlag<std::int64_t>(o.spec, "spatial_merge_size") : 0;
  const ResizeOptions ro =
      ResizeOptionsFrom(o.resize, orig, o.spec.grid, o.spec.max_len, SpecFlag<std::int64_t>(o.spec, "frames"), merge);
  const pe::ResizeDiagnosis d =
      pe::DiagnoseResize(orig.values.data(), orig.rows, orig.cols, ro, port.values.data(), port.rows, port.cols);
  const auto& c = d;
  const bool pass = c.within_bound;
  std::string out = fmt::format("{}: {} x {} against {} resized by {}\n", port.source, port.rows, port.cols, orig.source,
                                d.expected.description);
  if (!c.same_shape)
    out += fmt::format("FAIL shape: {} x {}, the rule makes {} x {}\n", port.rows, port.cols, d.expected.rows, d.expected.cols);
  else if (c.bit_exact)
    out += "PASS values: bit-exact\n";
  else
    out += fmt::format("{} values: {} differ, max |diff| {:.9g} at row {} column {} (bound {:.3g})\n",
                       pass ? "PASS" : "FAIL", c.differing, c.max_abs, c.worst_row, c.worst_col, d.bound);
  if (!pass && !o.no_diagnose) {
    if (d.faults.empty())
      out += "diagnosis: none of the known faults (mode, antialias, align_corners, prefix rows, DINOv2's +0.1) reproduces it\n";
    for (const auto& f : d.faults) out += "diagnosis: " + f + "\n";
  }
  if (o.json) {
    nlohmann::json j = {{"schema", "pe.verify-resize/1"}, {"file", port.source}, {"original", orig.source},
                        {"rule", d.expected.description}, {"pass", pass}, {"bit_exact", c.bit_exact},
                        {"same_shape", c.same_shape}, {"differing", c.differing}, {"max_abs", c.max_abs},
                        {"bound", d.bound}, {"faults", d.faults}};
    WriteStdout(j.dump(2) + "\n");
  } else {
    WriteStdout(out);
  }
  (void)console;
  return pass ? kExitOk : kExitCheckFailed;
}

namespace {

// One file's verdict and its reports, rendered but not yet printed.
struct FileVerdict {
  int code = kExitOk;
  std::string text, json, junit;
  pe::VerifyJUnitSuite suite;  // the file's testsuite in a report of several files
};

// --input-format, checked here so the message names the flag.
void CheckInputFormat(const std::string& format) {
  if (format.empty() || pe::KnownTableFormat(format)) return;
  std::string known;
  for (const std::string& f : pe::TableFormats()) known += (known.empty() ? "" : ", ") + f;
  ThrowUsage(fmt::format("--input-format '{}'", format), fmt::format("unknown format (known: {})", known));
}

// The request the flags stand for: the library merges the flags with the
// file's metadata, resolves --reference and words every refusal.
pe::VerifyRequest RequestOf(const VerifyCliOptions& o, const std::string& opened_tensor) {
  pe::VerifyRequest r;
  r.name = o.file;
  pe::Spec given = GivenSpecFlags(o.spec);
  // --tensor selects FILE's tensor; for a file of one unnamed table (.npy,
  // .csv) it also says which of the scheme's tensors that table is, and
  // --reference-tensor names the scheme's tensor when it differs.
  r.ignore_flags = {"--tensor"};
  if (o.reference_dataset.empty() && !o.dataset.empty() && (opened_tensor.empty() || opened_tensor == "pe"))
    given.Set("tensor", o.dataset);
  r.reference_tensor = o.reference_dataset;
  if (!given.scheme.empty() || !given.params.empty()) r.spec = given;
  if (!o.reference.empty()) {
    r.reference_source = o.reference;
    if (r.spec) {  // only the fields that conflict with a reference are refused; the tensor is FILE's
      pe::Spec common("");
      common.scheme = r.spec->scheme;
      for (const auto& [k, v] : r.spec->params)
        if (k != "tensor") common.params.emplace_back(k, v);
      r.spec = common;
    }
  }
  if (!o.checks.empty()) {
    r.checks = std::vector<std::string>{};
    if (o.checks == "all" || o.checks == "none") r.checks->push_back(o.checks);
    else r.checks = SplitList(o.checks);
  }
  for (const auto& k : SplitList(o.offsets)) {
    std::size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(k, &used);
    } catch (const std::exception&) {
    }
    if (used != k.size() || v < 1) ThrowUsage(fmt::format("--offsets '{}'", o.offsets), "expected positive integers, comma-separated");
    r.offsets.push_back(v);
  }
  // --dtype: judge the table in this dtype (a CSV of float32 numbers written
  // with 9 digits reads as float64).
  if (Given(o, "--dtype")) {
    try {
      r.judge_as = pe::ParseDType(o.spec.dtype);
    } catch (const pe::Error& e) {  // "dtype 'x': ...", named by its flag here
      throw pe::Error(e.kind(), std::string("--") + e.what(), e.hint());
    }
  }
  r.atol = o.atol;
  r.rtol = o.rtol;
  r.max_ulp = o.max_ulp;
  r.diagnose = !o.no_diagnose;
  r.allow_empty = o.allow_empty;
  return r;
}

// `pe verify FILE` of one file (every tensor of a file of several),
// rendered as the flags ask; nothing printed.
FileVerdict VerifyFile(const VerifyCliOptions& o, const std::string& classname, Console& console) {
  if (o.file.empty()) ThrowUsage("verify", "FILE is required (a table to verify), or --model MODEL");
  const std::string& path = o.open_path.empty() ? o.file : o.open_path;
  CheckInputFormat(o.format);
  pe::ReadOptions ro;
  ro.format = o.format;
  ro.tensor = o.dataset;
  pe::Table table = pe::OpenTableFile(path, ro);
  const bool whole = table.size() > 1;  // a file of several tensors, none named: each one
  pe::VerifyRequest request = RequestOf(o, whole ? std::string() : table.tensor(0).info().name);
  // Progress of the entry-by-entry comparison (the long part), on a terminal.
  ProgressBar bar(console.stderr_is_tty() && !console.quiet() && !o.json, "verifying " + o.file);
  request.progress = [&bar](std::int64_t done, std::int64_t rows) { bar.Update(done, rows); };
  const pe::TextStyle style{console.stdout_color()};
  FileVerdict v;
  if (whole) {
    const pe::VerifySetResult set = pe::VerifyTableSet(table, request);
    bar.Finish();
    v.code = set.passed ? kExitOk : kExitCheckFailed;
    v.text = pe::VerifyText(set, style);
    v.json = set.json;
    v.junit = pe::VerifyJUnit(set, classname);
    v.suite = pe::VerifyJUnitFileSuite(set, classname);
  } else {
    const pe::VerifyResult one = pe::VerifyTable(table.tensor(0), request);
    bar.Finish();
    v.code = one.passed ? kExitOk : kExitCheckFailed;
    v.text = pe::VerifyText(one, style);
    v.json = one.json;
    v.junit = pe::VerifyJUnit(one, classname);
    v.suite = pe::VerifyJUnitFileSuite(one, classname);
  }
  return v;
}

int RunVerifyOne(const VerifyCliOptions& o, Console& console) {
  if (!o.models.empty()) {  // pe verify --model A [--model B] (cli/model_artifacts.h)
    if (!o.file.empty()) ThrowUsage("--model", fmt::format("verifies models; give the table '{}' to a separate pe verify", o.file));
    const std::int64_t mml = Given(o, "--max-model-len") ? SpecFlag<std::int64_t>(o.spec, "max_model_len") : -1;
    return RunModelVerify(o.models, o.json, o.junit, o.no_diagnose, o.allow_empty, mml, console);
  }
  // The JUnit target is checked before the work (fail before the long part).
  const bool junit_stdout = IsStdStream(o.junit);
  if (junit_stdout && o.json) ThrowUsage("--junit -", "standard output carries the --json report; give --junit a file");
  std::optional<pe::AtomicOutput> junit;
  if (!o.junit.empty() && !junit_stdout) junit.emplace(o.junit);
  const FileVerdict v = VerifyFile(o, "pe.verify", console);
  if (junit) {
    junit->Write(v.junit);
    junit->Commit();
  }
  // The verdict stands when the reader of the report goes away
  // (`pe verify x | head -3` under pipefail must still fail a bad table).
  try {
    WriteStdout(junit_stdout ? v.junit : o.json ? v.json + "\n" : v.text);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kBrokenPipe) return v.code;
    throw;
  }
  return v.code;
}

// `pe verify A B ...`: each file verified as `pe verify FILE` would (every
// tensor of a container), one report: text sections, one JSON document
// {"schema", "passed", "exit_code", "files": [one document per file]}, one
// JUnit file with one testsuite per file (classname: the file). A
// file that cannot be read is an error entry and the run exits 2 after the
// report is written; otherwise 1 when a check failed anywhere.
int RunVerifyMany(const VerifyCliOptions& o, Console& console) {
  const bool junit_stdout = IsStdStream(o.junit);
  if (junit_stdout && o.json) ThrowUsage("--junit -", "standard output carries the --json report; give --junit a file");
  std::optional<pe::AtomicOutput> junit_file;
  if (!o.junit.empty() && !junit_stdout) junit_file.emplace(o.junit);
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  std::vector<pe::VerifyJUnitSuite> suites;
  int failed_files = 0, error_files = 0;
  for (const std::string& f : o.files) {
    VerifyCliOptions each = o;
    each.files.clear();
    each.file = f;
    each.junit.clear();
    if (!o.json) PrintLine(fmt::format("== {} ==", f));
    FileVerdict v;
    try {
      if (f == "-") each.open_path = TablePathOrStdin(f, o.format, "--input-format");
      v = VerifyFile(each, f, console);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kBrokenPipe) throw;
      const std::string message = StdinNamed(e.what());
      console.Error(message);
      ++error_files;
      nlohmann::ordered_json doc = nlohmann::ordered_json::object();
      doc["file"] = f;
      doc["passed"] = false;
      doc["exit_code"] = ExitCodeFor(e.kind());
      doc["error"] = message;
      suites.push_back(pe::VerifyJUnitErrorSuite(f, message));
      if (o.json) files.push_back(std::move(doc));
      if (!o.json) PrintLine("");
      continue;
    }
    if (v.code != kExitOk) ++failed_files;
    if (o.json) {
      nlohmann::ordered_json doc = nlohmann::ordered_json::parse(v.json);
      doc["exit_code"] = v.code;
      files.push_back(std::move(doc));
    } else {
      WriteStdout(v.text);
      PrintLine("");
    }
    suites.push_back(std::move(v.suite));
  }
  const int verdict = error_files ? kExitError : failed_files ? kExitCheckFailed : kExitOk;
  const std::string junit = pe::VerifyJUnitReport(suites);
  if (junit_file) {
    junit_file->Write(junit);
    junit_file->Commit();
  }
  try {
    if (junit_stdout) {
      WriteStdout(junit);
    } else if (o.json) {
      nlohmann::ordered_json j;
      j["schema"] = "pe.verify/1";
      j["passed"] = verdict == kExitOk;
      j["exit_code"] = verdict;
      j["files"] = std::move(files);
      WriteStdout(JsonText(j, 2) + "\n");
    } else {
      const int n = static_cast<int>(o.files.size());
      WriteStdout("result: " + console.Status(verdict == kExitOk ? "PASS" : "FAIL") +
                  EscapeText(fmt::format(" ({} files: {} passed, {} failed{})", n, n - failed_files - error_files,
                                         failed_files, error_files ? fmt::format(", {} not read", error_files) : "")) +
                  "\n");
    }
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kBrokenPipe) return verdict;
    throw;
  }
  return verdict;
}

}  // namespace

// pe verify --probe FILE: an engine's rotation of unit vectors against the
// plan of the scheme flags (--scheme rope ..., --hf-config); include/pe/probe.h.
int RunProbeVerify(const VerifyCliOptions& o, Console& console) {
  if (!o.files.empty()) ThrowUsage("--probe", fmt::format("verifies a probe; give the table '{}' to a separate pe verify", o.files[0]));
  if (o.models.size() > 1) ThrowUsage("--model", "--probe checks against one model's plan; give --model once");
  if (!o.reference.empty()) ThrowUsage("--probe", "checks against the plan of the scheme flags; --reference is not taken");
  const bool junit_stdout = IsStdStream(o.junit);
  if (junit_stdout && o.json) ThrowUsage("--junit -", "standard output carries the --json report; give --junit a file");
  std::optional<pe::AtomicOutput> junit;
  if (!o.junit.empty() && !junit_stdout) junit.emplace(o.junit);  // checked before the work
  CheckInputFormat(o.format);
  pe::ReadOptions ro;
  ro.format = o.format;
  ro.tensor = o.dataset;
  pe::Table table = pe::OpenTableFile(o.probe, ro);
  std::size_t which = 0;
  if (table.size() > 1) {
    std::vector<std::size_t> probes;
    for (std::size_t i = 0; i < table.size(); ++i)
      if (pe::IsProbeShape(table.tensor(i).info())) probes.push_back(i);
    if (probes.size() != 1)
      ThrowUsage(fmt::format("--probe '{}'", o.probe),
                 fmt::format("holds {} tensors ({}); name the probe with --tensor", table.size(), Joined(table.names())));
    which = probes[0];
  }
  pe::ProbeRequest r;
  r.name = o.probe;
  pe::Spec given = GivenSpecFlags(o.spec);
  r.spec.scheme = given.scheme;
  for (const auto& [k, v] : given.params) {
    if (k == "positions") {
      r.positions = pe::ParsePositionList(v, "--positions");
      continue;
    }
    if (k == "tensor" || k == "dataset") continue;
    r.spec.params.emplace_back(k, v);
  }
  // --model M: the plan of M's config (a folder's config.json, as
  // --hf-config reads it; a GGUF's metadata, as --gguf).
  if (!o.models.empty()) {
    const std::string& m = o.models[0];
    for (const char* flag : {"--hf-config", "--gguf"})
      if (Given(o, flag)) ThrowUsage("--model", fmt::format("the plan comes from --model or from {}, not both", flag));
    const bool gguf = m.size() >= 5 && m.compare(m.size() - 5, 5, ".gguf") == 0;
    if (!gguf && !pe::IsModelArtifact(m))
      ThrowUsage(fmt::format("--model '{}'", m), "--probe takes a model folder (config.json) or a .gguf as its plan");
    if (!gguf && !std::filesystem::is_directory(m))
      ThrowUsage(fmt::format("--model '{}'", m),
                 "--probe takes the plan of a model folder (config.json) or a .gguf; this artifact is neither");
    r.spec.params.emplace_back(gguf ? "gguf" : "hf_config", m);
  }
  if (!r.positions.empty() && Given(o, "--start")) ThrowUsage("--positions", "give --start P or --positions LIST, not both");
  if (Given(o, "--dtype")) r.judge_as = pe::ParseDType(o.spec.dtype);
  r.atol = o.atol;
  r.rtol = o.rtol;
  r.max_ulp = o.max_ulp;
  r.diagnose = !o.no_diagnose;
  const pe::ProbeVerifyResult res = pe::VerifyProbe(table.tensor(which), r);
  const int code = res.passed ? kExitOk : kExitCheckFailed;
  if (junit) {
    junit->Write(pe::ProbeVerifyJUnit(res, "pe.verify.probe"));
    junit->Commit();
  }
  try {
    WriteStdout(junit_stdout ? pe::ProbeVerifyJUnit(res, "pe.verify.probe")
                : o.json     ? res.json + "\n"
                             : pe::ProbeVerifyText(res, pe::TextStyle{console.stdout_color()}));
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kBrokenPipe) return code;
    throw;
  }
  return code;
}

// pe verify --engine llama.cpp=LIBDIR --model model.gguf [--model HF_DIR]:
// the engine's rope of the GGUF, run live, against each model's plan
// (include/pe/engine.h).
int RunEngineVerify(const VerifyCliOptions& o, Console& console) {
  if (!o.probe.empty()) ThrowUsage("--engine", "runs the engine to make the probe; give --probe FILE to a separate pe verify");
  if (!o.files.empty()) ThrowUsage("--engine", fmt::format("verifies the engine's rope; give the table '{}' to a separate pe verify", o.files[0]));
  if (!o.reference.empty()) ThrowUsage("--engine", "checks against the models' plans; --reference is not taken");
  if (o.models.empty()) ThrowUsage("--engine", "needs --model model.gguf: the model whose rope the engine runs");
  if (o.models.size() > 2) ThrowUsage("--model", "--engine takes the GGUF and at most one model folder");
  const std::string& gguf = o.models[0];
  if (gguf.size() < 5 || gguf.compare(gguf.size() - 5, 5, ".gguf") != 0)
    ThrowUsage(fmt::format("--model '{}'", gguf), "--engine llama.cpp runs a GGUF model: give the .gguf first");
  if (o.models.size() == 2 && !std::filesystem::is_directory(o.models[1]))
    ThrowUsage(fmt::format("--model '{}'", o.models[1]), "the second --model is a model folder (config.json) whose plan is checked too");
  for (const char* flag : {"--hf-config", "--gguf", "--scheme"})
    if (Given(o, flag)) ThrowUsage(flag, "--engine checks against the --model plans; the scheme flags are not taken");
  const bool junit_stdout = IsStdStream(o.junit);
  if (junit_stdout && o.json) ThrowUsage("--junit -", "standard output carries the --json report; give --junit a file");
  std::optional<pe::AtomicOutput> junit;
  if (!o.junit.empty() && !junit_stdout) junit.emplace(o.junit);  // checked before the work
  pe::EngineVerifyRequest r;
  r.probe.engine = o.engine;
  r.probe.model = gguf;
  const pe::Spec given = GivenSpecFlags(o.spec);
  for (const auto& [k, v] : given.params) {
    if (k == "positions") r.probe.positions = pe::ParsePositionList(v, "--positions");
    else if (k == "start") r.probe.start = std::stoll(v);
    else ThrowUsage("--engine", "takes --positions or --start, not the scheme flags: the plan comes from --model");
  }
  if (o.models.size() == 2) r.plans.push_back(o.models[1]);
  r.atol = o.atol;
  r.rtol = o.rtol;
  r.max_ulp = o.max_ulp;
  r.diagnose = !o.no_diagnose;
  const pe::EngineVerifyResult res = pe::VerifyEngine(r);
  const int code = res.passed ? kExitOk : kExitCheckFailed;
  if (junit) {
    junit->Write(pe::EngineVerifyJUnit(res));
    junit->Commit();
  }
  try {
    WriteStdout(junit_stdout ? pe::EngineVerifyJUnit(res)
                : o.json     ? res.json + "\n"
                             : pe::EngineVerifyText(res, pe::TextStyle{console.stdout_color()}));
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kBrokenPipe) return code;
    throw;
  }
  return code;
}

int RunVerify(const VerifyCliOptions& o, Console& console) {
  if (!o.engine.empty()) return RunEngineVerify(o, console);
  if (!o.probe.empty()) return RunProbeVerify(o, console);
  if (!o.resize.from.empty()) return RunResizeVerify(o, console);
  if (o.files.size() > 1) {
    if (!o.models.empty()) ThrowUsage("--model", "verifies models; give the tables to a separate pe verify");
    return RunVerifyMany(o, console);
  }
  if (o.file == "-" && o.open_path.empty()) {
    VerifyCliOptions one = o;
    one.open_path = TablePathOrStdin(o.file, o.format, "--input-format");
    return RunVerifyOne(one, console);
  }
  return RunVerifyOne(o, console);
}

}  // namespace pe::cli
