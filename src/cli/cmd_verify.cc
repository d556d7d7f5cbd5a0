#include "cli/cmd_verify.h"
#include "cli/cmd_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <cstdio>

#include "core/analysis/properties.h"
#include "core/base/error.h"
#include "core/formats/format.h"
#include "core/base/output.h"
#include "cli/inline_spec.h"
#include "cli/progress.h"
#include "cli/scheme_flags.h"
#include "cli/tensor_set_view.h"
#include "cli/stdin_table.h"
#include "cli/verify_text.h"
#include "core/analysis/resize_diagnose.h"

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

std::optional<Format> ForcedFormat(const std::string& name, const char* flag) {
  if (name.empty()) return std::nullopt;
  auto f = FormatFromName(name);
  if (!f) ThrowUsage(fmt::format("{} '{}'", flag, name), fmt::format("unknown format (known: {})", FormatNames()));
  return f;
}

bool Given(const VerifyCliOptions& o, const std::string& name) {
  const CLI::Option* opt = o.cmd ? o.cmd->get_option_no_throw(name) : nullptr;
  return opt && opt->count() > 0;
}

// The reference spec: metadata, then flags over it. The common fields go
// through core's ResolveReferenceSpec; every other scheme parameter flag
// (--layout, --padding-idx, ...) is matched to the metadata key of the same
// name, so schemes added to the registry need no change here.
std::optional<SchemeSpec> BuildSpec(const VerifyCliOptions& o, const TableInfo& info, std::vector<std::string>* notes) {
  static const std::vector<std::string> kCommon = {"scheme", "d-model", "max-len", "base", "start", "dtype", "help"};
  CLI::App probe;
  SpecFlags probe_flags;
  AddSpecFlags(probe, probe_flags);
  std::vector<std::string> args;
  bool extra_given = false;
  // Scheme-specific metadata belongs to the file's scheme: when --scheme
  // names another one, only the common fields (d_model, base, ...) carry over.
  const MetaValue* meta_scheme = info.meta.Find("scheme");
  const bool other_scheme = Given(o, "--scheme") && meta_scheme && MetaToString(*meta_scheme) != FindScheme(o.spec.scheme).name;
  bool skipped_meta = false;
  std::map<std::string, std::string> origin;  // flag -> the metadata value behind it
  for (const CLI::Option* opt : probe.get_options()) {
    if (opt->get_lnames().empty()) continue;
    const std::string ln = opt->get_lnames()[0];
    if (std::find(kCommon.begin(), kCommon.end(), ln) != kCommon.end()) continue;
    std::string key = ln;
    std::replace(key.begin(), key.end(), '-', '_');
    const MetaValue* meta = info.meta.Find(key);
    const bool is_flag = opt->get_expected_min() == 0;
    const CLI::Option* mine = o.cmd->get_option_no_throw("--" + ln);
    if (ln == "tensor" && !o.reference_dataset.empty())  // --reference-tensor names the scheme's tensor
      mine = o.cmd->get_option_no_throw("--reference-tensor");
    else if (ln == "tensor" && [&] {  // FILE's named tensor (a container): its metadata says which scheme tensor it is
               const auto f = o.format.empty() ? FormatFromExtension(o.file) : FormatFromName(o.format);
               return f && HoldsSeveralTensors(*f) && !info.name.empty() && info.name != "pe";
             }())
      mine = nullptr;
    if (mine && mine->count() > 0) {
      extra_given = true;
      std::string joined;
      for (const auto& r : mine->results()) {
        joined += (joined.empty() ? "" : ",") + r;
        args.push_back(is_flag ? "--" + ln : "--" + ln + "=" + r);
      }
      if (meta && !is_flag && MetaToString(*meta) != joined)
        notes->push_back(fmt::format("{} {} overrides the file's metadata {} = {}",
                                     mine->get_lnames().empty() ? "--" + ln : "--" + mine->get_lnames()[0], joined, key,
                                     MetaToString(*meta)));
    } else if (meta && other_scheme) {
      skipped_meta = true;
    } else if (meta) {
      const std::string v = MetaToString(*meta);
      std::vector<std::string> one;
      if (is_flag) {
        if (v == "1" || v == "true") one.push_back("--" + ln);
      } else {
        one.push_back("--" + ln + "=" + v);
      }
      if (one.empty()) continue;
      // A metadata value the flag refuses is reported and left out.
      CLI::App check;
      SpecFlags check_flags;
      AddSpecFlags(check, check_flags);
      try {
        std::vector<std::string> rev(one.rbegin(), one.rend());
        check.parse(rev);
        args.insert(args.end(), one.begin(), one.end());
        origin["--" + ln] = fmt::format("'{}': metadata {}={}", o.file, key, v);  // errors name the file, not a flag
      } catch (const CLI::ParseError&) {
        // Present but invalid: an input error naming the file and key, never
        // silently left out (the default would then be verified instead).
        ThrowInput(fmt::format("'{}': metadata {}={}", o.file, key, v), fmt::format("not a valid value of --{}", ln));
      }
    }
  }
  if (skipped_meta)
    notes->push_back(fmt::format("the file's {}-specific metadata is not applied to --scheme {}", MetaToString(*meta_scheme),
                                 o.spec.scheme));
  SpecOverrides ov;
  ov.path = o.file;
  // A scheme flag alone keeps the file's scheme; with no scheme in the metadata it
  // describes the default (sinusoidal) one.
  if (Given(o, "--scheme") || (extra_given && !meta_scheme)) ov.scheme = o.spec.scheme;
  if (Given(o, "--d-model")) ov.d_model = o.spec.d_model;
  if (Given(o, "--max-len")) ov.max_len = o.spec.max_len;
  if (Given(o, "--base")) ov.base = o.spec.base;
  if (Given(o, "--start")) ov.start = o.spec.start;
  if (Given(o, "--dtype")) ov.dtype = o.spec.dtype;
  auto common = ResolveReferenceSpec(info, ov, notes);
  if (!common) return std::nullopt;
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    probe.parse(rev);
  } catch (const CLI::ParseError& e) {
    ThrowUsage("scheme parameters", e.what());
  }
  probe_flags.scheme = common->scheme;
  SchemeSpec spec = ToSpec(probe_flags);
  spec.scheme = common->scheme;
  spec.d_model = common->d_model;
  spec.max_len = common->max_len;
  spec.base = common->base;
  spec.start = common->start;
  spec.dtype = common->dtype;
  spec.origin = common->origin;
  spec.origin.insert(origin.begin(), origin.end());
  return spec;
}

// XML character data or attribute value for any bytes: the specials as
// entities, invalid UTF-8 and XML-illegal control characters spelled as
// text (XmlText), line breaks kept as character references.
std::string XmlEscape(const std::string& s) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t nl; (nl = s.find('\n', from)) != std::string::npos; from = nl + 1)
    out += XmlText(std::string_view(s).substr(from, nl - from)) + "&#10;";
  return out + XmlText(std::string_view(s).substr(from));
}

std::string JsonValueText(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());  // 8, not 8.0
  return v.dump();
}

// The parameters of the reference beyond the common ones, as the reference
// used them (a RoPE scaling and its values), then where they came from
// (--hf-config, --gguf, the file's metadata): "", or text starting ", ".
std::string UsedParameters(const VerifyReport& r) {
  std::string out;
  if (r.reference.contains("parameters") && r.reference["parameters"].is_object()) {
    const auto& p = r.reference["parameters"];
    const auto& s = r.reference["spec"];
    if (p.contains("rotary_dim") && p["rotary_dim"].is_number_integer() && s.contains("d_model") &&
        p["rotary_dim"] != s["d_model"])
      out += ", rotary_dim " + JsonValueText(p["rotary_dim"]);
    if (p.contains("rope_scaling") && p["rope_scaling"].is_string()) {
      const std::string scaling = p["rope_scaling"].get<std::string>();
      if (scaling == "none") {
        out += ", no scaling";
      } else {
        std::vector<std::string> kv;
        for (const char* k : {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings",
                              "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate", "alpha", "rope_ratio"})
          if (p.contains(k)) kv.push_back(fmt::format("{} {}", k, JsonValueText(p[k])));
        if (p.contains("attention_factor") && !(p["attention_factor"].is_number() && p["attention_factor"] == 1.0))
          kv.push_back("attention_factor " + JsonValueText(p["attention_factor"]));
        out += fmt::format(", {} scaling{}", scaling, kv.empty() ? "" : fmt::format(" ({})", fmt::join(kv, ", ")));
      }
    }
    if (p.contains("semantics") && p["semantics"].is_string() && p["semantics"] != "hf")
      out += ", semantics " + p["semantics"].get<std::string>();
  }
  if (r.reference.contains("sources") && r.reference["sources"].is_object()) {
    std::vector<std::pair<std::string, std::vector<std::string>>> by_source;  // in order of first use
    for (const auto& [key, v] : r.reference["sources"].items()) {
      // "--hf-config FILE", or "'t.h5': metadata base=500000" (the value is in the line already)
      std::string src = JsonValueText(v);
      if (const auto at = src.find(" metadata "); src.rfind("--", 0) != 0 && at != std::string::npos) {
        std::string file = src.substr(0, at);
        if (!file.empty() && file.back() == ':') file.pop_back();
        src = file + " metadata";
      }
      auto it = std::find_if(by_source.begin(), by_source.end(), [&](const auto& e) { return e.first == src; });
      if (it == by_source.end()) by_source.push_back({src, {key}});
      else it->second.push_back(key);
    }
    for (const auto& [src, keys] : by_source) out += fmt::format("; {} from {}", fmt::join(keys, ", "), src);
  }
  return out;
}

std::string ReferenceLine(const VerifyReport& r) {
  if (r.reference_kind == "scheme" && r.reference.contains("frequencies")) {
    const auto& s = r.reference["spec"];
    return fmt::format("scheme {}, {}, {} frequencies (head_dim {}, base {}{})", s["scheme"].get<std::string>(),
                       r.reference["tensor"].get<std::string>(), r.reference["frequencies"].get<std::int64_t>(),
                       s["d_model"].get<std::int64_t>(), s["base"].get<double>(), UsedParameters(r));
  }
  if (r.reference_kind == "scheme") {
    const auto& s = r.reference["spec"];
    return fmt::format("scheme {}{} (d_model {}, max_len {}, base {}, start {}{})", s["scheme"].get<std::string>(),
                       r.reference.contains("tensor") ? ", tensor " + r.reference["tensor"].get<std::string>() : "",
                       s["d_model"].get<std::int64_t>(), s["max_len"].get<std::int64_t>(), s["base"].get<double>(),
                       s["start"].get<std::int64_t>(), UsedParameters(r));
  }
  if (r.reference_kind == "file") return fmt::format("file {}", r.reference["path"].get<std::string>());
  return "no reference (property checks only)";
}

}  // namespace

std::string JUnitXml(const VerifyReport& r, const std::string& classname) {
  int failures = 0, skipped = 0;
  for (const auto& c : r.checks) {
    if (c.skipped) ++skipped;
    else if (!c.passed) ++failures;
  }
  const std::size_t tests = r.checks.size() + (r.nothing_compared.empty() ? 0 : 1);
  if (!r.nothing_compared.empty()) ++(r.allow_empty ? skipped : failures);
  const std::string suite = "pe verify " + r.file;
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += fmt::format("<testsuites name=\"pe verify\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n", tests,
                   failures, skipped);
  x += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n", XmlEscape(suite),
                   tests, failures, skipped);
  x += "    <properties>\n";
  x += fmt::format("      <property name=\"reference\" value=\"{}\"/>\n", XmlEscape(ReferenceLine(r)));
  x += fmt::format("      <property name=\"tolerance\" value=\"{}\"/>\n", XmlEscape(r.tolerance.why));
  x += fmt::format("      <property name=\"compared\" value=\"{}\"/>\n", XmlEscape(r.compared.Describe()));
  for (const auto& n : r.notes) x += fmt::format("      <property name=\"note\" value=\"{}\"/>\n", XmlEscape(n));
  x += "    </properties>\n";
  for (const auto& c : r.checks) {
    x += fmt::format("    <testcase classname=\"{}\" name=\"{}\" file=\"{}\">\n", XmlEscape(classname), XmlEscape(c.name),
                     XmlEscape(r.file));
    if (c.skipped) {
      x += fmt::format("      <skipped message=\"{}\"/>\n", XmlEscape(c.summary));
    } else if (!c.passed) {
      std::string body = fmt::format("{}\nmeasured {} against limit {}: {}\n", c.summary, c.measured, c.limit, c.limit_why);
      if (r.diagnosed) body += "diagnosis: " + r.diagnosis_text + "\n";
      x += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", XmlEscape(c.summary), XmlEscape(c.name),
                       XmlEscape(body));
    }
    x += fmt::format("      <system-out>{}</system-out>\n", XmlEscape(c.summary + "\nlimit: " + c.limit_why));
    x += "    </testcase>\n";
  }
  if (!r.nothing_compared.empty()) {
    // A report that compared nothing fails as a test case of its own (or is
    // skipped, with --allow-empty): a CI report must not be all green.
    const std::string msg = "nothing was compared: " + r.nothing_compared;
    x += fmt::format("    <testcase classname=\"{}\" name=\"compared\" file=\"{}\">\n", XmlEscape(classname),
                     XmlEscape(r.file));
    if (r.allow_empty) x += fmt::format("      <skipped message=\"{}\"/>\n", XmlEscape(msg));
    else x += fmt::format("      <failure message=\"{}\" type=\"compared\">{}</failure>\n", XmlEscape(msg), XmlEscape(msg));
    x += "    </testcase>\n";
  }
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

CLI::App* SetupVerify(CLI::App& app, VerifyCliOptions& o) {
  auto* cmd = app.add_subcommand("verify", "Check a table against the exact reference or another table; exit 1 if it differs");
  o.cmd = cmd;
  cmd->add_option("FILE", o.files,
                  "Tables to verify (.csv .json .npy .h5 ...); several: one report for all; '-': standard input "
                  "(with --input-format csv|json|npy)")
      ->type_name("FILE");
  cmd->parse_complete_callback([&o] {
    if (o.files.size() == 1) o.file = o.files[0];
  });
  cmd->add_option("--model", o.models, "A model folder or file to verify (twice: compare the two plans)")->type_name("MODEL");
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
  cmd->add_option("--input-format,--format", o.format, "Format of FILE: " + FormatNames() + " (default: from the extension)")->type_name("FMT");
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
  cmd->footer(cmd->get_footer() + kModelVerifyHelp);  // pe verify --model (cli/cmd_model.h)
  return cmd;
}

// pe verify FILE --resize-from ORIG: FILE against ORIG resized by the
// rule; when they differ, the porting faults that reproduce FILE.
int RunResizeVerify(const VerifyCliOptions& o, Console& console) {
  if (o.file.empty()) ThrowUsage("verify", "FILE is required (the resized table to check against --resize-from)");
  const LearnedTable orig = ReadLearnedTable(o.resize.from, "--resize-from");
  const LearnedTable port = ReadLearnedTable(o.dataset.empty() ? o.file : o.file + ":" + o.dataset, "FILE");
  const ResizeOptions ro = ResizeOptionsFrom(o.resize, orig, o.spec.grid, o.spec.max_len, o.spec.extra.frames,
                                             Given(o, "--spatial-merge-size") ? o.spec.extra.spatial_merge_size : 0);
  const resize::ResizeDiagnosis d =
      resize::DiagnoseResize(orig.values.data(), orig.rows, orig.cols, ro, port.values.data(), port.rows, port.cols);
  const auto& c = d.result;
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
int RunVerifyOne(const VerifyCliOptions& o, Console& console);
int RunVerifyMany(const VerifyCliOptions& o, Console& console);
}  // namespace

int RunVerify(const VerifyCliOptions& o, Console& console) {
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

namespace {

int RunVerifyOne(const VerifyCliOptions& o, Console& console) {
  if (!o.models.empty()) {  // pe verify --model A [--model B] (cli/cmd_model.h)
    if (!o.file.empty()) ThrowUsage("--model", fmt::format("verifies models; give the table '{}' to a separate pe verify", o.file));
    return RunModelVerify(o.models, o.json, o.junit, o.no_diagnose, o.allow_empty, console);
  }
  if (o.file.empty()) ThrowUsage("verify", "FILE is required (a table to verify), or --model MODEL");
  // A file of several tensors: each one the metadata describes (cli/verify_text.h).
  const std::string& path = o.open_path.empty() ? o.file : o.open_path;
  if (!o.report_out)
    if (auto names = WholeFileTensors(path, o.dataset, o.format); !names.empty()) return RunVerifySet(o, console, names);
  OpenOptions oo;
  oo.format = ForcedFormat(o.format, "--format");
  oo.dataset = o.dataset;
  auto table = OpenTable(path, oo);
  const TableInfo& info = table->info();

  VerifyOptions vo;
  std::unique_ptr<RowSource> ref_file;
  const std::optional<InlineSpec> inline_ref = ParseInlineSpec(o.reference);
  if (inline_ref) {
    // A reference computed from an inline spec: the shape and dtype the
    // spec leaves out are the file's (as with metadata).
    if (Given(o, "--scheme") || Given(o, "--d-model") || Given(o, "--base") || Given(o, "--start"))
      ThrowUsage("--reference", "is an inline spec; give its parameters inside it, not as --scheme/--d-model/--base/--start");
    SpecFlags f = inline_ref->flags;
    const SchemeInfo& si = FindScheme(f.scheme);
    if (!inline_ref->given.count("max-len") && si.needs_max_len) f.max_len = info.rows;
    if (!inline_ref->given.count("d-model") && si.needs_d_model) f.d_model = info.cols;
    if (!inline_ref->given.count("dtype")) f.dtype = Traits(info.dtype).name;
    if (!inline_ref->given.count("tensor") && !si.tensors.empty() && !info.name.empty())
      for (auto t : si.tensors)
        if (t == info.name) f.extra.tensor = info.name;
    vo.spec = BuildInline(o.reference, [&] {
      SchemeSpec spec = ToSpec(f);
      MakeTableSet(spec);  // validates it here, so an error names the inline spec
      return spec;
    });
  } else if (!o.reference.empty()) {
    OpenOptions ro;
    ro.dataset = o.reference_dataset;
    ref_file = OpenTable(o.reference, ro);
    vo.reference_file = ref_file.get();
    vo.reference_path = o.reference;
    if (Given(o, "--scheme") || Given(o, "--d-model") || Given(o, "--base") || Given(o, "--start"))
      ThrowUsage("--reference", "compares with a file; scheme flags (--scheme, --d-model, --base, --start) cannot be combined with it");
  } else {
    vo.spec = BuildSpec(o, info, &vo.notes);
    if (vo.spec) CheckSchemeFlags(o.spec, vo.spec->scheme);
  }
  if (!o.checks.empty()) {
    vo.checks_given = true;
    if (o.checks == "all") vo.checks = PropertyCheckNames();
    else if (o.checks != "none") vo.checks = SplitList(o.checks);
  }
  for (const auto& k : SplitList(o.offsets)) {
    std::size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(k, &used);
    } catch (const std::exception&) {
    }
    if (used != k.size() || v < 1) ThrowUsage(fmt::format("--offsets '{}'", o.offsets), "expected positive integers, comma-separated");
    vo.offsets.push_back(v);
  }
  // --dtype: judge the table in this dtype (a CSV of float32 numbers written
  // with 9 digits reads as float64).
  DType judged = info.dtype;
  if (Given(o, "--dtype")) {
    auto d = DTypeFromName(o.spec.dtype);
    if (!d) ThrowUsage(fmt::format("--dtype '{}'", o.spec.dtype), fmt::format("unknown type (known: {})", DTypeNames()));
    judged = *d;
    if (vo.reference_file && judged != info.dtype)
      vo.notes.push_back(fmt::format("--dtype {}: the {} file is judged as a {} table (tolerance and ulps in {})",
                                     o.spec.dtype, Traits(info.dtype).name, o.spec.dtype, o.spec.dtype));
  }
  vo.tolerance = DefaultTolerance(judged);
  if (o.atol || o.rtol || o.max_ulp) {
    for (auto [name, v] : {std::pair{"--atol", o.atol}, {"--rtol", o.rtol}, {"--max-ulp", o.max_ulp}})
      if (v && !(*v >= 0)) ThrowUsage(fmt::format("{} {}", name, *v), "must be a number >= 0");
    vo.tolerance = ExplicitTolerance(judged, o.atol.value_or(0), o.rtol.value_or(0),
                                     o.max_ulp.value_or(o.atol || o.rtol ? 0 : 1));
  }
  vo.diagnose = !o.no_diagnose;
  vo.allow_empty = o.allow_empty;
  if (!vo.spec && !vo.reference_file && vo.checks.empty()) {
    ThrowUsage(fmt::format("'{}'", o.file),
               vo.checks_given ? "--check none leaves nothing to verify: the file has no scheme metadata"
                               : "nothing to verify against: the file has no scheme metadata; give --scheme/--d-model "
                                 "(see 'pe inspect' to identify it), --reference REF, or --check");
  }
  // The JUnit target is checked before the work (fail before the long part).
  std::unique_ptr<AtomicFile> junit;
  const bool junit_stdout = IsStdStream(o.junit);
  if (junit_stdout && o.json) ThrowUsage("--junit -", "standard output carries the --json report; give --junit a file");
  if (!o.junit.empty() && !junit_stdout) junit = std::make_unique<AtomicFile>(o.junit);
  if (o.json_out || o.junit_out) junit.reset();

  // Progress of the entry-by-entry comparison (the long part), on a terminal.
  ProgressBar bar(console.stderr_is_tty() && !console.quiet() && !o.json, "verifying " + o.file);
  const std::int64_t rows = table->info().rows;
  vo.on_rows = [&bar, rows](std::int64_t done) { bar.Update(done, rows); };
  const VerifyReport rep = Verify(*table, o.file, vo);
  bar.Finish();
  if (o.report_out) {
    *o.report_out = rep;
    if (o.reference_line_out) *o.reference_line_out = ReferenceLine(rep);
    return rep.passed ? kExitOk : kExitCheckFailed;
  }

  if (junit) {
    const std::string xml = JUnitXml(rep);
    if (std::fwrite(xml.data(), 1, xml.size(), junit->file()) != xml.size())
      ThrowIo(fmt::format("cannot write '{}'", o.junit), "write failed");
    junit->Commit();
  }
  const int verdict = rep.passed ? kExitOk : kExitCheckFailed;
  if (o.junit_out) *o.junit_out = JUnitXml(rep, o.junit_classname);
  if (o.json_out) {
    *o.json_out = rep.ToJson();
    return verdict;
  }
  // The verdict stands when the reader of the report goes away
  // (`pe verify x | head -3` under pipefail must still fail a bad table).
  try {
    if (junit_stdout) {
      WriteStdout(JUnitXml(rep));
    } else if (o.json) {
      WriteStdout(JsonText(rep.ToJson(), 2) + "\n");
    } else {
      PrintVerifyText(rep, ReferenceLine(rep), console);
    }
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kBrokenPipe) return verdict;
    throw;
  }
  return verdict;
}

// One attribute's integer value in the first tag of a JUnit document.
int JUnitCount(const std::string& xml, const char* attr) {
  const std::string key = std::string(" ") + attr + "=\"";
  const auto at = xml.find(key);
  return at == std::string::npos ? 0 : std::atoi(xml.c_str() + at + key.size());
}

// `pe verify A B ...`: each file verified as `pe verify FILE` would (every
// tensor of a container), one report: text sections, one JSON document
// {"schema", "passed", "exit_code", "files": [one document per file]}, one
// JUnit file with the testsuites of every file (classname: the file). A
// file that cannot be read is an error entry and the run exits 2 after the
// report is written; otherwise 1 when a check failed anywhere.
int RunVerifyMany(const VerifyCliOptions& o, Console& console) {
  const bool junit_stdout = IsStdStream(o.junit);
  if (junit_stdout && o.json) ThrowUsage("--junit -", "standard output carries the --json report; give --junit a file");
  std::unique_ptr<AtomicFile> junit_file;
  if (!o.junit.empty() && !junit_stdout) junit_file = std::make_unique<AtomicFile>(o.junit);
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  std::string suites;
  int tests = 0, failures = 0, errors = 0, skipped = 0, failed_files = 0, error_files = 0;
  for (const std::string& f : o.files) {
    VerifyCliOptions each = o;
    each.files.clear();
    each.file = f;
    each.junit.clear();
    nlohmann::ordered_json doc;
    std::string xml;
    if (o.json) each.json_out = &doc;
    if (!o.junit.empty()) each.junit_out = &xml;
    each.junit_classname = f;
    if (!o.json) PrintLine(fmt::format("== {} ==", f));
    int rc = kExitError;
    try {
      if (f == "-") each.open_path = TablePathOrStdin(f, o.format, "--input-format");
      rc = RunVerifyOne(each, console);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kBrokenPipe) throw;
      console.Error(e.what());
      ++error_files;
      ++errors;
      ++tests;
      doc = nlohmann::ordered_json::object();
      doc["file"] = f;
      doc["passed"] = false;
      doc["exit_code"] = ExitCodeFor(e.kind());
      doc["error"] = e.what();
      suites += fmt::format(
          "  <testsuite name=\"{}\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n"
          "    <testcase classname=\"{}\" name=\"read\" file=\"{}\">\n      <error message=\"{}\" type=\"error\">{}</error>\n"
          "    </testcase>\n  </testsuite>\n",
          XmlEscape("pe verify " + f), XmlEscape(f), XmlEscape(f), XmlEscape(e.what()), XmlEscape(e.what()));
      if (o.json) files.push_back(std::move(doc));
      if (!o.json) PrintLine("");
      continue;
    }
    if (rc != kExitOk) ++failed_files;
    if (o.json) {
      doc["exit_code"] = rc;
      files.push_back(std::move(doc));
    } else {
      PrintLine("");
    }
    if (!xml.empty()) {
      tests += JUnitCount(xml, "tests");
      failures += JUnitCount(xml, "failures");
      skipped += JUnitCount(xml, "skipped");
      const auto b = xml.find("  <testsuite ");
      const auto e = xml.rfind("</testsuites>");
      if (b != std::string::npos && e != std::string::npos) suites += xml.substr(b, e - b);
    }
  }
  const int verdict = error_files ? kExitError : failed_files ? kExitCheckFailed : kExitOk;
  const std::string junit = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"pe verify\" tests=\"{}\" failures=\"{}\" "
      "errors=\"{}\" skipped=\"{}\">\n{}</testsuites>\n",
      tests, failures, errors, skipped, suites);
  if (junit_file) {
    if (std::fwrite(junit.data(), 1, junit.size(), junit_file->file()) != junit.size())
      ThrowIo(fmt::format("cannot write '{}'", o.junit), "write failed");
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

}  // namespace pe::cli
