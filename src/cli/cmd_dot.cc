#include "cmd_dot.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pe/dot.h>
#include <pe/text.h>

#include "dot_views.h"
#include "exit_codes.h"
#include "progress.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include "scheme_flags.h"
#include "tensor_set_view.h"

namespace pe::cli {
namespace {

// The progress bar of each curve, then its timing line and warnings.
class DotProgress : public pe::DotObserver {
 public:
  DotProgress(bool bar, const Console& console) : bar_enabled_(bar), console_(console) {}
  void Begin(const std::string& name) override { bar_.emplace(bar_enabled_, "dot " + EscapeText(name)); }
  void Update(std::int64_t done, std::int64_t total) override {
    bar_->Update(done, total);
    StopIfReaderGone();
  }
  void End(const std::string& timing, const std::vector<std::string>& warnings) override {
    bar_.reset();  // erased before the lines below
    if (!timing.empty()) std::fprintf(stderr, "pe: dot timing: %s\n", timing.c_str());
    for (const std::string& w : warnings) console_.Warning(w);
  }

 private:
  // `pe dot ... | head`: the curve is written when it is complete, which
  // for min/max/std is O(L^2) work; a pipe whose reader has gone (poll
  // says POLLERR) ends the run now, as the write would (EPIPE: quietly).
  void StopIfReaderGone() {
    if (!stdout_is_pipe_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_poll_ < std::chrono::milliseconds(20)) return;
    last_poll_ = now;
    struct pollfd p = {STDOUT_FILENO, 0, 0};
    if (::poll(&p, 1, 0) == 1 && (p.revents & POLLERR)) throw pe::Error(pe::ErrorKind::kBrokenPipe, "broken pipe");
  }
  static bool StdoutIsPipe() {
    struct stat st;
    return ::fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode);
  }

  bool bar_enabled_;
  const Console& console_;
  std::optional<ProgressBar> bar_;
  bool stdout_is_pipe_ = StdoutIsPipe();
  std::chrono::steady_clock::time_point last_poll_{};
};

}  // namespace

void SetupDot(CLI::App* cmd, DotOptions& o) {
  o.cmd = cmd;
  cmd->add_option("inputs", o.inputs,
                  "Table files (any format pe reads) and/or inline specs like "
                  "sinusoidal:d-model=64,max-len=128,base=100")
      ->type_name("INPUT...");
  AddSpecFlags(*cmd, o.spec);
  AddPlotControlFlags(*cmd, o);
  AddResizeFlags(*cmd, o.resize);  // the inputs resized and drawn beside them (--view grid; cli/dot_views.cc)
  // --tensor (a scheme flag, above) also names the tensor read from
  // multi-tensor files; --dataset is its spelling in inspect and verify.
  if (CLI::Option* t = cmd->get_option_no_throw("--tensor"))
    t->each([&o](const std::string& name) { o.tensor = name; })
        ->group("Options")->description("Tensor of multi-tensor input files (rope.safetensors: cos|sin|inv_freq) and of the generated "
                   "series (rope: cos|sin|inv_freq; alibi: slopes|bias; xpos: cos|sin|scale|inv_freq)");
  cmd->add_option("--dataset", o.dataset,
                  "Tensor/dataset of multi-tensor input files (HDF5, safetensors, JSON); same as --tensor")
      ->type_name("NAME");
  cmd->add_flag("--cosine", o.cosine, "Cosine similarity instead of the dot product");
  cmd->add_option("--from", o.from, "Single-anchor curve: row P against every row")->type_name("P");
  cmd->add_option("--max-offset", o.max_offset, "Largest offset k (default: rows - 1)")->type_name("K");
  cmd->add_flag("--mean-only", o.mean_only, "Only the mean curve, by FFT: O(d·L log L), no min/max/std");
  cmd->add_flag("--fast", o.fast, "min/max/std from float32 Gram blocks (2x faster, ~1e-6 relative)");
  cmd->add_option("-o,--output", o.output, "Curve file (.csv or .json); '-': standard output (absent: standard output unless --plot/--matrix "
                 "without --json/--output-format); "
                 "/dev/null: none")->type_name("PATH");
  cmd->add_option("--output-format,--format", o.format,
                  "Curve format: csv or json (default: from the extension; CSV on stdout); given, the curve also "
                  "reaches standard output beside --plot/--matrix when -o names no file")
      ->type_name("FMT");
  cmd->add_flag("--json", o.json, "Same as --output-format json");
  cmd->add_option("--plot", o.plot,
                  "Draw the view's picture into FILE (.png, .svg or .pdf): the curves (decay and the other views), "
                  "the similarity heatmap with --view matrix")
      ->type_name("FILE");
  cmd->add_option("--matrix", o.matrix,
                  "Draw the position × position similarity heatmap into FILE (.png/.svg/.pdf; .csv: its numbers, "
                  "p,q,value); give it once per input (one input: same as --view matrix --plot FILE). A RoPE input "
                  "(spec, or a file with cos and sin or inv_freq) draws q·k, not the dot products of its cos rows")
      ->type_name("FILE");
  cmd->add_option("--matrix-size", o.matrix_size, "Largest number of positions per heatmap side")
      ->type_name("N")
      ->capture_default_str();
  cmd->add_option("--size", o.size,
                  "Plot size in pixels (points for SVG/PDF): default 960x600, 860x800 for the matrix; e.g. --size 640x400")
      ->type_name("WxH");
  cmd->add_flag("--term", o.term, "Draw a Unicode chart of the curve (default when stdout is a terminal)");
  cmd->footer(R"(For each offset k = 0..K, over every p with p+k in the table, of
PE(p)·PE(p+k): mean (FFT autocorrelation), min, max and std (blocked Gram
products). For the sinusoid, the closed form Σ cos(k·ω_i) and the deviation
from it. CSV columns: series,offset,pairs,mean,min,max,std,closed_form,
mean_deviation,max_deviation; with --from: series,offset,row,value,
closed_form,deviation. See docs/dot.md.

Examples:
  pe dot --d-model 512 --max-len 4096 --plot decay.png
  pe dot pe.h5 theirs.npy --plot compare.svg -o curves.csv
  pe dot sinusoidal:d-model=64,max-len=512,base=100 sinusoidal:d-model=64,max-len=512 --plot bases.png
  pe dot pe.npy --from 0 --cosine --json
  pe dot rope.safetensors --tensor cos --plot rope-cos.png
  pe dot --d-model 128 --max-len 256 --view matrix --plot sim.png
  pe dot rope:head-dim=64,max-len=256 --matrix qk.png      # RoPE: q·k, not cos rows
  pe dot ours.npy theirs.npy --label ours --label theirs --plot compare.svg
  pe dot rope:head-dim=128,max-len=32768 rope:head-dim=128,max-len=32768,rope-scaling=llama3,factor=8 --plot qk.png
  pe dot rope:head-dim=128,rope-scaling=yarn,factor=4 --view ratio --plot ratio.svg -o ratio.csv
  pe dot --scheme sincos-2d --d-model 64 --grid 14x14 --plot vit.png
  pe dot vit.npy --resize-rule hf-vit,siglip2 --prefix-tokens 1 --grid 24x24 --plot resized.png
  pe dot t5-bucket: --plot t5-buckets.png
  pe dot alibi:heads=8 --view bias --max-offset 23 --plot alibi.png
  pe dot t5_bias.npy t5-bucket:bidirectional --view offsets --plot learned.png
  pe dot table-bf16.safetensors --view precision --plot error.png
Views (--view; docs/dot.md): decay matrix qk bound spectrum ratio temperature heads
bias offsets buckets grid columns precision collisions.
)");
}

int RunDot(const DotOptions& o, Console& console) {
  pe::DotRequest request = o;  // the flags bound to the request's fields
  request.flags = GivenSpecFlags(o.spec);
  SetResizeRequest(o, &request);
  request.pick_tensor = PickDotTensor;  // the file's one table of positions, or a question listing them
  request.stdout_is_terminal = ::isatty(STDOUT_FILENO) == 1;
  request.color = console.color();
  // PE_DOT_TIMING=1: where the time went, for bench/run and profiling.
  const char* timing = std::getenv("PE_DOT_TIMING");
  request.timing = timing != nullptr && *timing != '\0';
  DotProgress progress(console.stderr_is_tty() && !console.quiet() && !o.json, console);
  request.observer = &progress;
  const pe::DotOutput out = pe::RunDot(request);
  WriteStdout(out.data);
  if (out.chart_on_stdout) WriteStdout(out.chart);
  else if (!out.chart.empty() && !console.quiet()) std::fputs(out.chart.c_str(), stderr);
  if (!out.hint.empty()) console.Hint(out.hint);
  return kExitOk;
}

}  // namespace pe::cli
