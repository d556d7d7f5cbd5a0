#include "cmd_generate.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include <pe/error.h>
#include <pe/resize.h>

#include "exit_codes.h"
#include "progress.h"
#include "scheme_flags.h"

namespace pe::cli {

namespace {

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

void AddSpecFlags(CLI::App& cmd, SpecFlags& f) {
  f.cmd = &cmd;
  // CLI11 saturates integers that overflow (99999999999999999999 becomes
  // 2^63-1); refuse them with the number the user typed.
  const CLI::Validator in_int64(
      [](std::string& text) -> std::string {
        std::int64_t v;
        const char* b = text.data() + (!text.empty() && text[0] == '+');
        const auto [p, ec] = std::from_chars(b, text.data() + text.size(), v);
        (void)p;
        return ec == std::errc::result_out_of_range ? "'" + text + "' is beyond the 64-bit integer range" : "";
      },
      "", "int64");
  // The common flags bind to SpecFlags' own fields; names, help and
  // defaults are the library's (pe::SpecParams).
  const std::vector<pe::SpecParamInfo> params = pe::SpecParams();
  const auto common = [&](std::string_view key, auto& field) {
    const auto r = std::find_if(params.begin(), params.end(), [&](const pe::SpecParamInfo& p) { return p.key == key; });
    CLI::Option* o = cmd.add_option(r->flag, field, r->help)->type_name(r->metavar);
    if (r->show_default) o->capture_default_str();
    if (r->type == SpecParamType::kInteger) o->check(in_int64);
  };
  // Which of --d-model/--max-len a scheme needs is checked with the scheme
  // (t5-bucket has no --d-model, sincos-2d takes --grid instead of --max-len).
  common("d_model", f.d_model);
  common("max_len", f.max_len);
  cmd.add_option("--scheme", f.scheme, "Encoding scheme (see 'pe schemes')")->type_name("NAME")->capture_default_str();
  common("base", f.base);
  common("start", f.start);
  common("dtype", f.dtype);
  AddSchemeParamFlags(cmd, f);
}

void SetupGenerate(CLI::App* cmd, GenerateOptions& o) {
  AddSpecFlags(*cmd, o.spec);
  cmd->add_option("-o,--output", o.output, "Output file; '-' or absent: standard output")->type_name("PATH");
  cmd->add_option("--output-format,--format", o.format,
                  "Output format: " + Joined(pe::WritableTableFormats()) + " (default: from the extension; CSV on stdout)")
      ->type_name("FMT");
  cmd->add_option("--threads", o.threads, "Threads that compute rows (default: all cores)")
      ->type_name("N")->check(CLI::Range(1, 1024));
  cmd->add_option("--compress", o.compress, "HDF5 only: gzip level 1-9 (default: none, fastest)")
      ->type_name("LEVEL")->check(CLI::Range(1, 9));
  AddResizeFlags(*cmd, o.resize);
  cmd->add_flag("--fsync", o.fsync,
                "Flush the file to the disk before renaming it into place (durable across a power loss; "
                "slower on a slow disk)");
  cmd->add_flag("--json", o.json,
                "After writing -o FILE, print one line of JSON saying what was written (schema pe.generate/1)");
  cmd->footer(R"(Every float32 value is the exact value of the formula rounded to the nearest
float32; float64 values are within 1 ulp. Column j uses frequency index
floor(j/2), so an odd --d-model ends with an unpaired sin column.
Other schemes ('pe schemes' lists them, docs/schemes.md has the formulas):
rope, xpos and alibi make several tensors, written together to
.safetensors, .h5 and .json; NPY and CSV take one: --tensor NAME.

Examples:
  pe generate --d-model 512 --max-len 4096 -o pe.h5
  pe generate --d-model 4096 --max-len 1048576 -o big.h5 --compress 4 --threads 2
  pe generate --d-model 8 --max-len 16                 # CSV on stdout
  pe generate --d-model 64 --max-len 1000 --dtype float64 -o pe.npy
  pe generate --d-model 512 --max-len 4096 -o pe.npy --json   # {"schema":"pe.generate/1",...}
  pe generate --d-model 16 --max-len 4 --start 1000000 --output-format json
  pe generate --scheme fairseq --d-model 512 --max-len 1026 -o fairseq.npy
  pe generate --scheme rope --head-dim 128 --base 500000 --max-len 8192 \
      --rope-scaling llama3 --factor 8 -o rope.safetensors
  pe generate --scheme rope --head-dim 128 --max-len 4096 --rope-scaling yarn --factor 4 \
      --original-max-position-embeddings 4096 --semantics llama.cpp -o yarn.safetensors
  pe generate --scheme alibi --heads 12 --max-len 512 --tensor slopes -o slopes.csv
  pe generate --scheme rope-plan --hf-config gemma-3-4b-it/config.json --max-len 8192 -o gemma3.h5
  pe generate --scheme rope --gguf Meta-Llama-3.1-8B-Q4_K_M.gguf --max-len 8192 -o rope.safetensors
  pe generate --scheme rope-plan --gguf gemma-3-4b-it-Q4_K_M.gguf --max-len 8192 -o gemma3.h5
  pe generate --scheme rope-plan --head-dim 128 --num-layers 36 --no-rope-interval 4 \
      --base 5e6 --max-len 4096 --tensor full_attention/cos -o smollm3_cos.npy
  pe generate --scheme sincos-2d --d-model 768 --grid 14x14 --cls-token -o mae.npy
  pe generate --scheme mrope --head-dim 128 --base 1000000 --mrope-section 16,24,24 \
      --mrope-layout "text:5,image:1x4x6,text:3" -o qwen2vl.safetensors
  pe generate --scheme vision-rope --variant pixtral --head-dim 64 --grid 64x64 -o pixtral.h5
  pe generate --resize-from vit-base-patch16-224 --grid 24x24 -o pos384.npy
  pe generate --resize-from pos.npy --resize-rule timm --grid 32x32 --no-antialias -o t.npy
  pe generate --resize-from roberta-base --resize-rule bert-tile --max-len 4098 -o long.safetensors
)");
}

namespace {

bool GivenFlag(const CLI::App* cmd, const char* name) {
  const CLI::Option* opt = cmd ? cmd->get_option_no_throw(name) : nullptr;
  return opt && opt->count() > 0;
}

void CheckNoResizeKnobs(const GenerateOptions& o) {
  for (const char* f : {"--resize-rule", "--mode", "--antialias", "--no-antialias", "--align-corners",
                        "--no-align-corners", "--prefix-tokens", "--offset", "--from-grid", "--interpolate-offset"})
    if (GivenFlag(o.resize.cmd, f)) ThrowUsage(f, "applies to a resized table: add --resize-from SRC");
}

// The format of -o (pe::OutputFormat), --output-format named in its refusal.
std::string OutputFormatOf(const GenerateOptions& o) {
  if (!o.format.empty() && !pe::KnownTableFormat(o.format))
    ThrowUsage(fmt::format("--output-format '{}'", o.format),
               fmt::format("unknown format (known: {})", Joined(pe::WritableTableFormats())));
  return pe::OutputFormat(o.output, o.format);
}

pe::WriteOptions WriteOptionsOf(const GenerateOptions& o) {
  pe::WriteOptions w;
  w.format = o.format;
  w.threads = o.threads;
  w.gzip_level = o.compress;
  w.fsync = o.fsync;
  return w;
}

// --resize-from: the learned table resized by its rule, written like a
// generated one.
int RunResize(const GenerateOptions& o, Console& console) {
  if (GivenFlag(o.spec.cmd, "--scheme"))
    ThrowUsage("--scheme", "not with --resize-from (the table comes from SRC, the rule from --resize-rule)");
  const std::string format = OutputFormatOf(o);
  if (o.compress > 0 && format != "hdf5")
    ThrowUsage(fmt::format("--compress {}", o.compress), "applies to HDF5 output only (-o FILE.h5)");
  const LearnedTable table = ReadLearnedTable(o.resize.from, "--resize-from");
  const std::int64_t merge =
      GivenFlag(o.spec.cmd, "--spatial-merge-size") ? SpecFlag<std::int64_t>(o.spec, "spatial_merge_size") : 0;
  const ResizeOptions ro =
      ResizeOptionsFrom(o.resize, table, o.spec.grid, o.spec.max_len, SpecFlag<std::int64_t>(o.spec, "frames"), merge);
  const ResizedTable r = Resize(table.values.data(), table.rows, table.cols, ro);
  console.Info(r.description);
  pe::Table resized = ResizedTableOf(r, table.source);
  pe::WriteTableFile(resized, o.output, WriteOptionsOf(o));
  return kExitOk;
}

// The --json summary: what was written, from the table's public description.
std::string Summary(const GenerateOptions& o, const std::string& format, pe::Table& table) {
  nlohmann::ordered_json summary;
  summary["schema"] = "pe.generate/1";
  summary["output"] = o.output;
  summary["format"] = format;
  summary["scheme"] = pe::DescribeScheme(o.spec.scheme).name;
  summary["tensors"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < table.size(); ++i) {
    const TensorInfo& ti = table.tensor(i).info();
    summary["tensors"].push_back(
        {{"name", ti.name}, {"shape", {ti.rows, ti.cols}}, {"dtype", std::string(pe::DTypeName(ti.dtype))}});
  }
  return summary.dump() + "\n";
}

}  // namespace

int RunGenerate(const GenerateOptions& o, Console& console) {
  if (!o.resize.from.empty()) return RunResize(o, console);
  CheckNoResizeKnobs(o);
  // The scheme takes every flag given, and every value parses.
  const pe::Spec spec = pe::CheckSpec(SpecOf(o.spec));
  // Validate everything before any work or any file is created.
  const std::string format = OutputFormatOf(o);
  // Multi-tensor schemes (rope, xpos, alibi) give several tensors; NPY and
  // CSV take one (--tensor), the others hold them all.
  pe::Table table = pe::GenerateTable(spec);
  if (o.json && o.output == "-")
    ThrowUsage("--json", "standard output carries the table; give -o FILE to have the summary on standard output");
  const std::string summary = o.json ? Summary(o, format, table) : std::string();
  ProgressBar bar(console.stderr_is_tty() && !console.quiet(),
                  o.output == "-" ? std::string("generating") : "writing " + o.output);
  pe::WriteOptions w = WriteOptionsOf(o);
  w.progress = [&bar](std::int64_t done, std::int64_t total) { bar.Update(done, total); };
  pe::WriteTableFile(table, o.output, w);
  if (o.json) WriteStdout(summary);
  return kExitOk;
}

}  // namespace pe::cli
