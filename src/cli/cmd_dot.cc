#include "cli/cmd_dot.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "core/analysis/decay.h"
#include "core/analysis/identify_rope.h"
#include "core/analysis/blocks.h"
#include "core/analysis/rope_views.h"
#include "core/plot/view_compute.h"
#include <pe/error.h>

#include "cli/exit_codes.h"
#include "core/formats/format.h"
#include "core/base/output.h"
#include "core/plot/chart.h"
#include "core/plot/heatmap.h"
#include "core/plot/term_chart.h"
#include "core/plot/view_plot.h"
#include "core/report/decay_curves.h"
#include "cli/dot_views.h"
#include "cli/inline_spec.h"
#include "cli/progress.h"
#include "cli/scheme_flags.h"
#include "cli/tensor_set_view.h"

namespace pe::cli {
namespace {

// One input: a file or a scheme spec, and what was computed for it.
struct Series {
  std::string name;    // legend and CSV `series` column
  std::string source;  // the path, or the spec as typed
  std::unique_ptr<RowSource> table;
  DecayCurve curve;
  AnchorCurve anchor;
  // A RoPE input drawn by --matrix: its q·k (from its frequencies), not the
  // dot products of cos rows; `qk_rows` positions.
  std::optional<RopeSource> qk;
  std::int64_t qk_rows = 0;
  bool rope_rows = false;  // a RoPE cos/sin tensor named on purpose: its rows
  std::string rope_kind;   // "cos" / "sin" when known
  bool labelled = false;   // `name` is a --label
  bool is_file = false;
};

std::string BaseName(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string SpecName(const SchemeSpec& s) {
  std::string name = fmt::format("{} d={} L={}", s.scheme, s.d_model, s.max_len);
  if (s.base != 10000.0) name += fmt::format(" base={}", s.base);
  if (s.start != 0) name += fmt::format(" start={}", s.start);
  if (s.dtype != DType::kFloat32) name += fmt::format(" {}", Traits(s.dtype).name);
  for (const std::string* v : {&s.layout, &s.denominator, &s.odd_rule, &s.tensor})
    if (!v->empty()) name += " " + *v;
  return name;
}

// "sinusoidal · d_model=512 · max_len=4096 · base=10000 · float32", or the
// shape when the table carries no scheme metadata.
std::string Parameters(const TableInfo& info) {
  std::string out;
  if (const MetaValue* scheme = info.meta.Find("scheme")) {
    out = MetaToString(*scheme);
    for (const char* key : {"d_model", "max_len", "base", "start"}) {
      const MetaValue* v = info.meta.Find(key);
      if (v == nullptr) continue;
      const std::string text = MetaToString(*v);
      if (std::string(key) == "start" && text == "0") continue;
      out += fmt::format(" · {}={}", key, text);
    }
  } else {
    out = fmt::format("{} × {}", info.rows, info.cols);
  }
  return out + " · " + std::string(Traits(info.dtype).name);
}

double MaxOf(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, x);
  return m;
}

// The series as the curve writers take them (core/report/decay_curves.h).
std::vector<DecaySeries> CurveSeries(const std::vector<Series>& all) {
  std::vector<DecaySeries> out;
  for (const Series& s : all) out.push_back({s.name, s.source, &s.table->info(), &s.curve, &s.anchor});
  return out;
}

void WriteCurves(ByteSink& sink, const std::vector<Series>& all, const std::string& format, const DotOptions& o) {
  if (format == "json") WriteDecayJson(sink, CurveSeries(all), o.cosine, o.from >= 0);
  else WriteDecayCsv(sink, CurveSeries(all), o.from >= 0);
}

std::string MeasureLabel(bool cosine) { return cosine ? "cosine similarity" : "dot product"; }

// --title, --log-x/--log-y, --xlim/--ylim and --train-len on the decay chart.
void ApplyControls(const DotOptions& o, plot::ChartSpec* spec) {
  if (!o.title.empty()) spec->title = o.title;
  spec->log_x = o.log_x;
  spec->log_y = o.log_y && !o.linear_y;
  auto limits = [](const std::string& text, const char* flag, double* lo, double* hi) {
    if (text.empty()) return;
    char comma = 0, extra = 0;
    if (std::sscanf(text.c_str(), "%lf%c%lf%c", lo, &comma, hi, &extra) != 3 || (comma != ',' && comma != ':') ||
        !std::isfinite(*lo) || !std::isfinite(*hi) || !(*hi > *lo))
      ThrowUsage(fmt::format("{} '{}'", flag, text), "expected LO,HI with LO < HI, e.g. 0,1.5");
  };
  limits(o.xlim, "--xlim", &spec->x_min, &spec->x_max);
  limits(o.ylim, "--ylim", &spec->y_min, &spec->y_max);
  if (!std::isnan(o.train_len)) {
    if (!(o.train_len >= 0) || !std::isfinite(o.train_len))
      ThrowUsage("--train-len", fmt::format("must be a position (0 or more), got {}", o.train_len));
    spec->shade_from = o.train_len;
    spec->shade_label = fmt::format("beyond the training length {}", o.train_len);
  }
}

void DrawPlot(const std::vector<Series>& all, const DotOptions& o) {
  using plot::ChartSeries;
  plot::ChartSpec spec;
  std::tie(spec.width, spec.height) = ParseSize(o.size);
  const bool anchor = o.from >= 0;
  const std::string measure = MeasureLabel(o.cosine);
  if (anchor) {
    spec.title = fmt::format("{} of row {} with every row", o.cosine ? "Cosine similarity" : "Dot product", o.from);
    spec.x_label = fmt::format("offset k = q − {}", o.from);
    spec.y_label = o.cosine ? "cos(PE(P), PE(P+k))" : "PE(P) · PE(P+k)";
  } else {
    spec.title = fmt::format("{} vs. distance", o.cosine ? "Cosine similarity" : "Dot product");
    spec.x_label = "offset k = q − p";
    spec.y_label = o.cosine ? "cos(PE(p), PE(p+k))" : "PE(p) · PE(p+k)";
    spec.note = o.mean_only ? "line: mean over p" : "line: mean over p · shaded: min–max over p";
  }
  if (all.size() == 1) {
    const Series& s = all[0];
    spec.subtitle = (s.labelled ? s.name + ": " : s.is_file ? s.name + " · " : "") + Parameters(s.table->info());
  } else {
    std::int64_t k_max = 0;
    for (const Series& s : all)
      k_max = std::max<std::int64_t>(k_max, anchor ? static_cast<std::int64_t>(s.anchor.offset.size())
                                                   : static_cast<std::int64_t>(s.curve.mean.size()) - 1);
    spec.subtitle = anchor ? fmt::format("{} tables", all.size())
                           : fmt::format("{} tables · offsets 0..{}", all.size(), k_max);
    // Labelled series: the legend names them, the subtitle says what each is.
    if (!o.labels.empty())
      for (const Series& s : all) spec.subtitle += fmt::format(" · {}: {}", s.name, s.source);
  }
  bool has_closed_form = false;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Series& s = all[i];
    const plot::Rgb color = plot::SeriesColor(i);
    ChartSeries line;
    line.name = all.size() == 1 && !anchor ? "mean" : s.name;
    if (all.size() == 1 && anchor) line.name = measure;
    line.color = color;
    std::vector<double> cf;
    if (anchor) {
      for (auto k : s.anchor.offset) line.x.push_back(static_cast<double>(k));
      line.y = s.anchor.value;
      cf = s.anchor.closed_form;
    } else {
      for (std::size_t k = 0; k < s.curve.mean.size(); ++k) line.x.push_back(static_cast<double>(k));
      line.y = s.curve.mean;
      line.band_lo = s.curve.min;
      line.band_hi = s.curve.max;
      cf = s.curve.closed_form;
    }
    spec.series.push_back(line);
    if (!cf.empty()) {
      ChartSeries closed;
      // One series: its own legend entry; several: one line in the note.
      closed.name = all.size() == 1 ? "closed form Σᵢ cos(k·ωᵢ)" : "";
      if (o.cosine && all.size() == 1) closed.name += " / (d/2)";
      has_closed_form = true;
      closed.x = line.x;
      closed.y = cf;
      // A wide pale line under the mean: where they agree the mean runs
      // inside it; a deviation shows as the two lines parting.
      closed.under = true;
      closed.line_width = 5;
      closed.color = all.size() == 1 ? plot::Rgb{1.0, 0.55, 0.1} : color;
      closed.alpha = all.size() == 1 ? 0.55 : 0.3;
      spec.series.push_back(closed);
    }
  }
  if (spec.series.size() == 1) spec.series[0].name.clear();
  if (has_closed_form && all.size() > 1)
    spec.note += std::string(spec.note.empty() ? "" : " · ") + "pale wide: Σᵢ cos(k·ωᵢ)" + (o.cosine ? " / (d/2)" : "");
  ApplyControls(o, &spec);
  plot::RenderLineChart(spec, o.plot, "--plot");
}

// --matrix FILE.csv: the matrix's numbers, long format p,q,value.
void WriteMatrixCsv(const SimilarityMatrix& m, const std::string& path) {
  AtomicFile file(path);
  FileSink file_sink(file.file(), fmt::format("'{}'", path), file.replaces());
  ByteSink& sink = file_sink;
  sink.Write("p,q,value\n");
  const std::size_t n = m.positions.size();
  std::string buf;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) buf += fmt::format("{},{},{}\n", m.positions[i], m.positions[j], m.values[i * n + j]);
    if (buf.size() > (1 << 16)) sink.Write(buf), buf.clear();
  }
  sink.Write(buf);
  file_sink.Flush();
  file.Commit();
}

bool IsCsvPath(const std::string& path) {
  return path.size() >= 4 && (path.compare(path.size() - 4, 4, ".csv") == 0 || path.compare(path.size() - 4, 4, ".CSV") == 0);
}

void DrawMatrix(Series& s, const std::string& path, const DotOptions& o, const char* flag) {
  const SimilarityMatrix m = s.qk ? RopeQkMatrix(*s.qk, s.qk_rows, o.matrix_size)
                                  : ComputeSimilarityMatrix(*s.table, o.cosine, o.matrix_size);
  if (IsCsvPath(path)) return WriteMatrixCsv(m, path);
  const TableInfo& info = s.table->info();
  plot::HeatmapSpec spec;
  const auto n = static_cast<std::int64_t>(m.positions.size());
  const std::int64_t rows = s.qk ? s.qk_rows : info.rows;
  if (s.qk) {
    // Unit vectors: q·k is also their cosine similarity (--cosine changes nothing).
    spec.title = "RoPE q·k between positions (unit all-ones q and k)";
    const std::string what = s.source.find('/') != std::string::npos ? BaseName(s.source) : s.source;
    spec.subtitle = fmt::format("{} · {} pairs (d = {})", what, s.qk->theta.size(), 2 * s.qk->theta.size());
    if (s.labelled) spec.subtitle = s.name + ": " + spec.subtitle;
    spec.value_label = "q·k = (1/(d/2))·Σᵢ cos((q − p)·θᵢ)";
  } else {
    spec.title = fmt::format("{} between positions", o.cosine ? "Cosine similarity" : "Dot product");
    spec.subtitle = (s.labelled ? s.name + ": " : "") + Parameters(info);
    spec.value_label = o.cosine ? "cos(PE(p), PE(q))" : "PE(p) · PE(q)";
    if (s.rope_rows) {
      // The rows of one RoPE tensor: say so, it is not what attention sees.
      const std::string k = s.rope_kind.empty() ? info.name : s.rope_kind;
      spec.title = fmt::format("{} of RoPE {}-table rows (not q·k)", o.cosine ? "Cosine similarity" : "Dot product", k);
      spec.value_label = o.cosine ? fmt::format("cos({0}(p), {0}(q))", k) : fmt::format("{0}(p) · {0}(q)", k);
    }
  }
  if (n < rows) spec.subtitle += fmt::format(" · {} of {} positions, evenly spread", n, rows);
  spec.x_label = "position q (row)";
  spec.y_label = "position p (row)";
  spec.rows = spec.cols = n;
  spec.values = m.values;
  spec.x_first = spec.y_first = static_cast<double>(m.positions.front());
  spec.x_last = spec.y_last = static_cast<double>(m.positions.back());
  spec.map = o.cmap.empty() ? plot::ColorMap::kViridis : plot::ParseColorMap(o.cmap, "--cmap");
  spec.symmetric = plot::IsDiverging(spec.map) && std::isnan(o.vmin) && std::isnan(o.vmax);
  spec.vmin = o.vmin;
  spec.vmax = o.vmax;
  if (!o.title.empty()) spec.title = o.title;
  spec.square_cells = true;
  // A square picture unless --size asks for another.
  std::tie(spec.width, spec.height) = o.size.empty() ? std::pair<int, int>{860, 800} : ParseSize(o.size);
  plot::RenderHeatmap(spec, path, flag);
}

// Which tensor of a RoPE set the table `t` alone is ("cos", "sin"), or
// empty: its metadata names rope/xpos (and the tensor), or (none) its first
// rows have a RoPE cos or sin table's shape (identify_rope.h, step 1).
std::string RopeTensorKind(RowSource& t) {
  const TableInfo& info = t.info();
  const std::string scheme = MetaText(info.meta, "scheme");
  if (!scheme.empty()) {
    if (scheme != "rope" && scheme != "xpos") return "";
    const std::string tensor = MetaText(info.meta, "tensor");
    return tensor.empty() ? info.name : tensor;
  }
  if (info.rows < 2 || info.cols < 2 || info.cols > 65536) return "";
  const std::int64_t n = std::min<std::int64_t>(info.rows, std::max<std::int64_t>(3, std::min<std::int64_t>(512, (1 << 22) / info.cols)));
  std::vector<std::byte> scratch;
  std::vector<double> head;
  ReadRowsAsDouble(t, 0, n, &scratch, &head);
  for (double v : head)
    if (!std::isfinite(v)) return "";
  const RopeKind kind = DetectRopeShape(head, n, info.cols, info).kind;
  return kind == RopeKind::kCos || kind == RopeKind::kSin ? RopeKindName(kind) : "";
}

std::string TermChart(const std::vector<Series>& all, const DotOptions& o, bool color) {
  plot::TermChartSpec spec;
  spec.color = color;
  const bool anchor = o.from >= 0;
  spec.title = anchor ? fmt::format("{} of row {} with row {}+k", MeasureLabel(o.cosine), o.from, o.from)
                      : fmt::format("mean {} of positions p and p+k", MeasureLabel(o.cosine));
  spec.x_label = "offset k";
  for (const Series& s : all) {
    if (s.qk) continue;  // a q·k matrix input has no decay curve
    plot::TermSeries t;
    t.name = EscapeText(s.name);  // a file name: no control bytes on a terminal
    if (anchor) {
      for (auto k : s.anchor.offset) t.x.push_back(static_cast<double>(k));
      t.y = s.anchor.value;
    } else {
      for (std::size_t k = 0; k < s.curve.mean.size(); ++k) t.x.push_back(static_cast<double>(k));
      t.y = s.curve.mean;
    }
    spec.series.push_back(std::move(t));
  }
  if (spec.series.empty()) return "";
  std::string out = plot::RenderTermChart(spec);
  for (const Series& s : all) {
    if (s.qk) continue;
    const TableInfo& info = s.table->info();
    out += fmt::format("  {}: {} × {} {}", EscapeText(s.name), info.rows, info.cols, Traits(info.dtype).name);
    const auto& dev = anchor ? s.anchor.deviation
                             : (s.curve.max_deviation.empty() ? s.curve.mean_deviation : s.curve.max_deviation);
    if (!dev.empty())
      out += fmt::format(", largest |{} − Σcos(kω)| = {:.3g}", anchor ? "value" : o.mean_only ? "mean" : "dot", MaxOf(dev));
    out += "\n";
  }
  return out;
}

// --matrix of a spec: a rope spec with no tensor named is drawn as q·k;
// xPos (whose q·k also decays by its scale) is refused; a named cos/sin
// tensor of either draws its rows, said so in the title.
void MatrixOfSpec(const SchemeSpec& spec, const std::string& text, Series* s) {
  if (spec.scheme != "rope" && spec.scheme != "xpos") return;
  if (!spec.tensor.empty()) {
    s->rope_rows = true;
    s->rope_kind = spec.tensor;
    return;
  }
  if (spec.scheme == "xpos")
    ThrowUsage(fmt::format("--matrix of '{}'", text), "draws RoPE q·k; xPos's q·k also decays by its scale and is not drawn",
               "give tensor=cos (or --tensor cos) to draw the cos rows' dot products");
  s->qk = BuildInline(text, [&] { return RopeSourceFromSpec(spec, text); });
  s->qk_rows = spec.max_len;
}

}  // namespace

CLI::App* SetupDot(CLI::App& app, DotOptions& o) {
  auto* cmd = app.add_subcommand("dot", "Similarity of positions as a function of their distance: curves, plots, heatmaps");
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
    t->group("Options")->description("Tensor of multi-tensor input files (rope.safetensors: cos|sin|inv_freq) and of the generated "
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
  return cmd;
}

int RunDot(const DotOptions& given, Console& console) {
  if (const auto view = PickDotView(given)) return RunDotView(*view, given, console);
  // --view matrix --plot FILE is --matrix FILE: one picture, one input.
  DotOptions o = given;
  if (IsMatrixView(o)) {
    if (o.plot.empty()) ThrowUsage("--view matrix", "draws into --plot FILE (.png, .svg or .pdf)");
    if (!o.matrix.empty()) ThrowUsage("--view matrix", "draws into --plot FILE; --matrix FILE is the same picture (give one)");
    if (o.from >= 0) ThrowUsage("--from", "belongs to the decay curve, not --view matrix");
    o.matrix = {o.plot};
    o.plot.clear();
  }
  if (o.resize.prefix_tokens >= 0) ThrowUsage("--prefix-tokens", "applies to --view grid (rows left out before the grid)");
  // Validate every flag and name every output before the long work.
  std::string format = o.format;
  if (o.json) {
    if (!format.empty() && format != "json")
      ThrowUsage("--json", fmt::format("conflicts with --output-format {}", format));
    format = "json";
  }
  if (!format.empty() && format != "csv" && format != "json")
    ThrowUsage(fmt::format("--output-format '{}'", format), "pe dot writes csv or json");
  const bool discard = o.output == "/dev/null";
  const bool to_file = !o.output.empty() && !IsStdStream(o.output) && !discard;
  if (format.empty() && to_file) {
    const auto f = FormatFromExtension(o.output);
    if (f == Format::kCsv) format = "csv";
    else if (f == Format::kJson) format = "json";
    else ThrowUsage(fmt::format("-o '{}'", o.output), "pe dot writes .csv or .json; or give --output-format csv|json");
  }
  const bool explicit_format = !format.empty();
  if (format.empty()) format = "csv";
  if (o.from >= 0 && o.mean_only) ThrowUsage("--mean-only", "does not apply to --from (one value per offset)");
  if (o.from >= 0 && o.fast) ThrowUsage("--fast", "does not apply to --from (one value per offset)");
  if (o.max_offset < -1) ThrowUsage("--max-offset", fmt::format("must be at least 0, got {}", o.max_offset));
  if (o.from < -1) ThrowUsage("--from", fmt::format("must be a row (0 or more), got {}", o.from));
  if (o.matrix_size < 1 || o.matrix_size > 4096)
    ThrowUsage("--matrix-size", fmt::format("must be 1..4096, got {}", o.matrix_size));
  if (!o.plot.empty()) {
    plot::ImageFormatFromPath(o.plot, "--plot");
    ParseSize(o.size);
  }
  // The heatmap's flag as typed: --plot with --view matrix.
  const char* matrix_flag = IsMatrixView(o) ? "--plot" : "--matrix";
  for (const auto& m : o.matrix)
    if (!IsCsvPath(m)) plot::ImageFormatFromPath(m, matrix_flag);

  // The tensor of multi-tensor files: --tensor or --dataset (one name).
  std::string tensor = o.spec.extra.tensor;
  if (!o.dataset.empty()) {
    if (!tensor.empty() && tensor != o.dataset)
      ThrowUsage(fmt::format("--dataset '{}'", o.dataset), fmt::format("conflicts with --tensor '{}' (give one)", tensor));
    tensor = o.dataset;
  }

  // The inputs, in order: positional ones, then the generate flags.
  std::vector<Series> all;
  for (const std::string& in : o.inputs) {
    Series s;
    s.source = in;
    const std::optional<InlineSpec> inline_spec = ParseInlineSpec(in);
    if (inline_spec) {
      s.table = BuildInline(in, [&] { return MakeGenerator(ToSpec(inline_spec->flags)); });
      s.name = in;  // the spec as written: variants side by side stay distinguishable
      if (!o.matrix.empty()) {
        const SchemeSpec spec = ToSpec(inline_spec->flags);
        MatrixOfSpec(spec, in, &s);
      }
    } else if (!o.matrix.empty() && tensor.empty() && IsRopeFile(in)) {
      // A RoPE file: q·k from its frequencies (inv_freq, or cos and sin).
      ViewInput vi;
      vi.path = in;
      vi.name = BaseName(in);
      s.qk = RopeSourceOf(vi);
      // inv_freq alone has no context: --max-offset + 1 positions, else 4096.
      s.qk_rows = s.qk->context > 0 ? static_cast<std::int64_t>(s.qk->context)
                                    : o.max_offset >= 0 ? o.max_offset + 1 : 4096;
      OpenOptions oo;
      oo.dataset = ListTensorNames(in).front();
      s.table = OpenTable(in, oo);
      s.name = BaseName(in);
    } else {
      // A file with several tensors and none named is an input error that
      // lists them (OpenTable); one-tensor formats ignore the name.
      OpenOptions oo;
      oo.dataset = tensor;
      // None named: the file's one table of positions, or a question that lists them (cli/tensor_set_view.h).
      if (tensor.empty()) oo.dataset = PickDotTensor(in);
      s.table = OpenTable(in, oo);
      s.name = BaseName(in);
      s.is_file = true;
      if (!tensor.empty() && s.table->info().name == tensor) s.name += "[" + tensor + "]";
      if (const std::string kind = o.matrix.empty() ? "" : RopeTensorKind(*s.table); !kind.empty()) {
        if (tensor.empty())
          ThrowUsage(fmt::format("--matrix '{}'", in),
                     fmt::format("a RoPE {} table alone is not q·k (the dot products of its rows are not what "
                                 "attention scores)", kind),
                     fmt::format("give the sin table too (a file with cos and sin, or inv_freq) or the spec "
                                 "(rope:head-dim=...) for q·k; or --tensor {} to draw the {} rows' dot products",
                                 kind, kind));
        s.rope_rows = true;
        s.rope_kind = kind;
      }
    }
    all.push_back(std::move(s));
  }
  if (o.spec.d_model != 0 || o.spec.max_len != 0 || !o.spec.grid.empty()) {
    if (o.spec.d_model == 0) ThrowUsage("--d-model", "is required with --max-len (a scheme series)");
    // sincos-2d takes its rows from --grid, as pe generate does.
    if (o.spec.max_len == 0 && FindScheme(o.spec.scheme).needs_max_len)
      ThrowUsage("--max-len", "is required with --d-model (a scheme series)");
    // --tensor also names the tensor of the file inputs: not the series' flag alone.
    CheckSchemeFlags(o.spec, o.spec.scheme, {"--tensor"});
    const SchemeSpec spec = ToSpec(o.spec);
    Series s;
    s.table = MakeGenerator(spec);
    s.name = SpecName(spec);
    s.source = SpecSummary(spec);
    if (!o.matrix.empty()) MatrixOfSpec(spec, "the --scheme flags", &s);
    all.push_back(std::move(s));
  }
  if (all.empty())
    ThrowUsage("pe dot", "needs an input: a table file, an inline spec, or --d-model and --max-len");
  if (IsMatrixView(o) && all.size() != 1)
    ThrowUsage("--view matrix", fmt::format("draws one input's heatmap into --plot ({} inputs): give --matrix FILE once "
                                            "per input instead", all.size()));
  if (!o.matrix.empty() && o.matrix.size() != all.size())
    ThrowUsage("--matrix", fmt::format("give it once per input ({} inputs, {} --matrix)", all.size(), o.matrix.size()));
  ApplyLabels(o.labels, all.size(), [&](std::size_t k, const std::string& label) {
    all[k].name = label;
    all[k].labelled = true;
  });
  // A q·k matrix has no decay curve: its curve is the qk view.
  for (const Series& s : all)
    if (s.qk && (to_file || IsStdStream(o.output) || explicit_format || !o.plot.empty() || o.from >= 0))
      ThrowUsage(fmt::format("--matrix of '{}'", s.source),
                 "draws RoPE q·k; its curve against distance is the qk view, not the decay of --plot/-o/--from",
                 fmt::format("pe dot {} --view qk --plot qk.png -o qk.csv", s.source));
  // Two series of the same name get their position appended.
  for (std::size_t i = 0; i < all.size(); ++i)
    for (std::size_t j = i + 1; j < all.size(); ++j)
      if (all[j].name == all[i].name) all[j].name += fmt::format(" #{}", j + 1);

  // The analysis.
  DecayOptions options;
  options.cosine = o.cosine;
  options.max_offset = o.max_offset;
  options.mean_only = o.mean_only;
  options.single_precision = o.fast;
  for (Series& s : all) {
    if (s.qk) continue;
    if (o.from >= 0) {
      s.anchor = ComputeAnchor(*s.table, o.from, options);
    } else {
      // Streamed by row blocks and column panels: any size, bounded memory.
      ProgressBar bar(console.stderr_is_tty() && !console.quiet() && !o.json, "dot " + EscapeText(s.name));
      DecayStreamOptions stream;
      stream.progress = [&bar](std::int64_t done, std::int64_t total) { bar.Update(done, total); };
      // PE_DOT_TIMING=1: where the time went, for bench/run and profiling.
      DecayStreamOptions::Timing timing;
      const char* timing_env = std::getenv("PE_DOT_TIMING");
      if (timing_env != nullptr && *timing_env != '\0') stream.timing = &timing;
      s.curve = ComputeDecay(*s.table, options, stream);
      bar.Finish();
      if (stream.timing)
        std::fprintf(stderr,
                     "pe: dot timing: %s: read %.3f s, fft %.3f s, gram %.3f s, mean passes %lld, segment rows %lld%s\n",
                     EscapeText(s.name).c_str(), timing.read, timing.fft, timing.gram,
                     static_cast<long long>(timing.passes), static_cast<long long>(timing.segment_rows),
                     timing.read_ahead ? ", read ahead (read overlaps fft)" : "");
      if (s.curve.zero_rows > 0)
        console.Warning(fmt::format("{}: {} rows have norm 0; their cosine similarity is taken as 0",
                                    s.name, s.curve.zero_rows));
    }
  }

  // Outputs: files first (atomic), then stdout.
  const bool stdout_tty = ::isatty(STDOUT_FILENO) == 1;
  const bool data_to_stdout = CurveToStdout(o, stdout_tty, explicit_format);
  if (to_file) {
    AtomicFile file(o.output);
    FileSink sink(file.file(), fmt::format("'{}'", o.output), file.replaces());
    WriteCurves(sink, all, format, o);
    sink.Flush();
    file.Commit();
  }
  if (!o.plot.empty()) DrawPlot(all, o);
  for (std::size_t i = 0; i < o.matrix.size(); ++i) DrawMatrix(all[i], o.matrix[i], o, matrix_flag);

  const bool chart = o.term || (stdout_tty && !data_to_stdout);
  if (data_to_stdout) {
    FileSink out(stdout, "standard output");
    WriteCurves(out, all, format, o);
    out.Flush();
  }
  if (chart) {
    // The chart is for people: on stdout unless stdout carries the data.
    const bool to_stdout = !data_to_stdout;
    const bool color = to_stdout ? stdout_tty && console.color() : console.color();
    const std::string text = TermChart(all, o, color);
    if (text.empty()) {
      // Only q·k matrices: no decay curve to chart.
    } else if (to_stdout) {
      FileSink out(stdout, "standard output");
      out.Write(text.data(), text.size());
      out.Flush();
    } else if (!console.quiet()) {
      std::fputs(text.c_str(), stderr);
    }
  }
  if (stdout_tty && !data_to_stdout && o.output.empty() && o.plot.empty() && o.matrix.empty())
    console.Hint("the full curve: add -o curve.csv (or .json), or pipe stdout");
  return kExitOk;
}

}  // namespace pe::cli
