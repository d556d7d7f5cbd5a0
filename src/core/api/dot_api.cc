// pe::RunDot (include/pe/dot.h), the code of `pe dot`: the request checked
// whole before any work, then either a view (dot_view_api.cc) or the decay
// curve of table rows — files and specs opened as RowSources, each curve
// streamed by core/analysis/decay/decay.h, written by core/report/decay_curves.h
// and drawn by core/plot/dot_plot.h — with one heatmap per --matrix (RoPE
// inputs as q·k, core/analysis/views/rope_views.h).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include <pe/dot.h>
#include <pe/text.h>

#include "core/analysis/blocks.h"
#include "core/analysis/decay/decay.h"
#include "core/analysis/identify/identify_rope.h"
#include "core/api/dot_run.h"
#include "core/base/error.h"
#include "core/base/output.h"
#include "core/formats/format.h"
#include "core/plot/canvas.h"
#include "core/plot/dot_plot.h"
#include "core/analysis/views/view_compute.h"
#include "core/report/decay_curves.h"
#include "core/schemes/inline_spec.h"
#include "core/schemes/registry.h"
#include "core/spec/params.h"

namespace pe {
namespace {

// What the checks of the request settled: the curve's output and the
// flag that asked for the heatmaps.
struct CurvePlan {
  DotOutputPlan out;
  const char* matrix_flag = "--matrix";  ///< --plot with --view matrix
  std::string tensor;                    ///< of multi-tensor files: --tensor or --dataset
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

bool IsCsvPath(const std::string& path) {
  return path.size() >= 4 && (path.compare(path.size() - 4, 4, ".csv") == 0 || path.compare(path.size() - 4, 4, ".CSV") == 0);
}

// --view matrix --plot FILE is --matrix FILE: one picture, one input.
// Every flag validated and every output named before the long work.
CurvePlan CheckCurveRequest(DotRequest& o) {
  const bool matrix_view = IsMatrixView(o);
  if (matrix_view) {
    if (o.plot.empty()) ThrowUsage("--view matrix", "draws into --plot FILE (.png, .svg or .pdf)");
    if (!o.matrix.empty()) ThrowUsage("--view matrix", "draws into --plot FILE; --matrix FILE is the same picture (give one)");
    if (o.from >= 0) ThrowUsage("--from", "belongs to the decay curve, not --view matrix");
    o.matrix = {o.plot};
    o.plot.clear();
  }
  if (o.prefix_tokens >= 0) ThrowUsage("--prefix-tokens", "applies to --view grid (rows left out before the grid)");
  CurvePlan plan;
  plan.out = PlanDotOutput(o, true);
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
  if (!o.cmap.empty()) {  // a heatmap's colours: refused where no heatmap is drawn
    plot::ParseColorMap(o.cmap, "--cmap");
    const bool heatmap = std::any_of(o.matrix.begin(), o.matrix.end(), [](const std::string& m) { return !IsCsvPath(m); });
    if (!heatmap)
      ThrowUsage("--cmap", "colours a heatmap (--matrix FILE, --view matrix --plot FILE, or a grid view); the decay "
                           "curve has none");
  }
  if (matrix_view) plan.matrix_flag = "--plot";
  for (const auto& m : o.matrix)
    if (!IsCsvPath(m)) plot::ImageFormatFromPath(m, plan.matrix_flag);
  plan.tensor = o.tensor;
  if (!o.dataset.empty()) {
    if (!plan.tensor.empty() && plan.tensor != o.dataset)
      ThrowUsage(fmt::format("--dataset '{}'", o.dataset), fmt::format("conflicts with --tensor '{}' (give one)", plan.tensor));
    plan.tensor = o.dataset;
  }
  return plan;
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

// --matrix of a spec: a rope spec with no tensor named is drawn as q·k;
// xPos (whose q·k also decays by its scale) is refused; a named cos/sin
// tensor of either draws its rows, said so in the title.
void MatrixOfSpec(const SchemeSpec& spec, const std::string& text, DotSeries* s) {
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

// A table file: its one table of positions (or the tensor named), a RoPE
// table alone refused for --matrix (its rows' dot products are not q·k).
void OpenFileSeries(const std::string& in, const DotRequest& o, const std::string& tensor, DotSeries* s) {
  OpenOptions oo;
  oo.dataset = tensor;
  if (tensor.empty() && o.pick_tensor) oo.dataset = o.pick_tensor(in);
  s->table = OpenTable(in, oo);
  s->name = BaseName(in);
  s->is_file = true;
  if (!tensor.empty() && s->table->info().name == tensor) s->name += "[" + tensor + "]";
  if (const std::string kind = o.matrix.empty() ? "" : RopeTensorKind(*s->table); !kind.empty()) {
    if (tensor.empty())
      ThrowUsage(fmt::format("--matrix '{}'", in),
                 fmt::format("a RoPE {} table alone is not q·k (the dot products of its rows are not what "
                             "attention scores)", kind),
                 fmt::format("give the sin table too (a file with cos and sin, or inv_freq) or the spec "
                             "(rope:head-dim=...) for q·k; or --tensor {} to draw the {} rows' dot products",
                             kind, kind));
    s->rope_rows = true;
    s->rope_kind = kind;
  }
}

// One positional input: an inline spec, a RoPE file drawn as q·k, or a
// table file.
DotSeries OpenInputSeries(const std::string& in, const DotRequest& o, const std::string& tensor) {
  DotSeries s;
  s.source = in;
  if (std::optional<ParsedInlineSpec> parsed = ParseInlineSpecText(in)) {
    s.table = BuildInline(in, [&] { return MakeGenerator(parsed->spec); });
    s.name = in;  // the spec as written: variants side by side stay distinguishable
    if (!o.matrix.empty()) MatrixOfSpec(parsed->spec, in, &s);
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
    OpenFileSeries(in, o, tensor, &s);
  }
  return s;
}

// The inputs, in order: positional ones, then the scheme flags' series;
// their names settled (--label, duplicates numbered).
std::vector<DotSeries> OpenSeries(const DotRequest& o, const CurvePlan& plan) {
  std::vector<DotSeries> all;
  for (const std::string& in : o.inputs) all.push_back(OpenInputSeries(in, o, plan.tensor));
  if (FlagSeriesGiven(o, false)) {
    if (FlagInt(o.flags, "d_model") == 0) ThrowUsage("--d-model", "is required with --max-len (a scheme series)");
    // sincos-2d takes its rows from --grid, as pe generate does.
    if (FlagInt(o.flags, "max_len") == 0 && FindScheme(FlagsScheme(o)).needs_max_len)
      ThrowUsage("--max-len", "is required with --d-model (a scheme series)");
    CheckFlagsGiven(o);
    const SchemeSpec spec = FlagsSpec(o);
    DotSeries s;
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
  for (const DotSeries& s : all)
    if (s.qk && (plan.out.to_file || IsStdStream(o.output) || plan.out.explicit_format || !o.plot.empty() || o.from >= 0))
      ThrowUsage(fmt::format("--matrix of '{}'", s.source),
                 "draws RoPE q·k; its curve against distance is the qk view, not the decay of --plot/-o/--from",
                 fmt::format("pe dot {} --view qk --plot qk.png -o qk.csv", s.source));
  // Two series of the same name get their position appended.
  for (std::size_t i = 0; i < all.size(); ++i)
    for (std::size_t j = i + 1; j < all.size(); ++j)
      if (all[j].name == all[i].name) all[j].name += fmt::format(" #{}", j + 1);
  return all;
}

// One series' curve over every pair, streamed by row blocks and column
// panels: any size, bounded memory; the observer told as it goes.
void ComputeCurve(DotSeries& s, const DecayOptions& options, const DotRequest& o) {
  DotObserver none;
  DotObserver& observer = o.observer ? *o.observer : none;
  observer.Begin(s.name);
  DecayStreamOptions stream;
  stream.progress = [&observer](std::int64_t done, std::int64_t total) { observer.Update(done, total); };
  DecayStreamOptions::Timing timing;
  if (o.timing) stream.timing = &timing;
  s.curve = ComputeDecay(*s.table, options, stream);
  std::string where;
  if (o.timing)
    where = fmt::format("{}: read {:.3f} s, fft {:.3f} s, gram {:.3f} s, mean passes {}, segment rows {}{}",
                        EscapeText(s.name), timing.read, timing.fft, timing.gram, timing.passes, timing.segment_rows,
                        timing.read_ahead ? ", read ahead (read overlaps fft)" : "");
  std::vector<std::string> warnings;
  if (s.curve.zero_rows > 0)
    warnings.push_back(
        fmt::format("{}: {} rows have norm 0; their cosine similarity is taken as 0", s.name, s.curve.zero_rows));
  observer.End(where, warnings);
}

void ComputeCurves(std::vector<DotSeries>& all, const DotRequest& o) {
  DecayOptions options;
  options.cosine = o.cosine;
  options.max_offset = o.max_offset;
  options.mean_only = o.mean_only;
  options.single_precision = o.fast;
  for (DotSeries& s : all) {
    if (s.qk) continue;
    if (o.from >= 0) s.anchor = ComputeAnchor(*s.table, o.from, options);
    else ComputeCurve(s, options, o);
  }
}

void WriteCurves(ByteSink& sink, const std::vector<DotSeries>& all, const std::string& format, const DotRequest& o) {
  std::vector<DecaySeries> series;
  for (const DotSeries& s : all) series.push_back({s.name, s.source, &s.table->info(), &s.curve, &s.anchor});
  if (format == "json") WriteDecayJson(sink, series, o.cosine, o.from >= 0);
  else WriteDecayCsv(sink, series, o.from >= 0);
}

// --matrix FILE: the heatmap of one series, or its numbers (.csv).
void WriteMatrix(const DotSeries& s, const std::string& path, const DotRequest& o, const char* flag) {
  const SimilarityMatrix m = s.qk ? RopeQkMatrix(*s.qk, s.qk_rows, o.matrix_size)
                                  : ComputeSimilarityMatrix(*s.table, o.cosine, o.matrix_size);
  if (!IsCsvPath(path)) return plot::DrawSimilarityHeatmap(s, m, path, o, flag);
  AtomicFile file(path);
  FileSink sink(file.file(), fmt::format("'{}'", path), file.replaces());
  WriteSimilarityCsv(sink, m);
  sink.Flush();
  file.Commit();
}

// Outputs: files first (atomic), then what goes to the terminal.
DotOutput WriteOutputs(const std::vector<DotSeries>& all, const DotRequest& o, const CurvePlan& plan) {
  const bool data_to_stdout = CurveToStdout(o, plan.out.explicit_format);
  if (plan.out.to_file) {
    AtomicFile file(o.output);
    FileSink sink(file.file(), fmt::format("'{}'", o.output), file.replaces());
    WriteCurves(sink, all, plan.out.format, o);
    sink.Flush();
    file.Commit();
  }
  if (!o.plot.empty()) plot::DrawDecayChart(all, o);
  for (std::size_t i = 0; i < o.matrix.size(); ++i) WriteMatrix(all[i], o.matrix[i], o, plan.matrix_flag);

  DotOutput result;
  if (data_to_stdout) {
    StringSink sink;
    WriteCurves(sink, all, plan.out.format, o);
    result.data = std::move(sink.out);
  }
  if (o.term || (o.stdout_is_terminal && !data_to_stdout)) {
    // The chart is for people: on stdout unless stdout carries the data.
    result.chart_on_stdout = !data_to_stdout;
    const bool color = result.chart_on_stdout ? o.stdout_is_terminal && o.color : o.color;
    result.chart = plot::DecayTermChart(all, o, color);  // "": only q·k matrices, no curve to chart
  }
  if (o.stdout_is_terminal && !data_to_stdout && o.output.empty() && o.plot.empty() && o.matrix.empty())
    result.hint = "the full curve: add -o curve.csv (or .json), or pipe stdout";
  return result;
}

}  // namespace

DotOutputPlan PlanDotOutput(const DotRequest& o, bool json_conflicts) {
  DotOutputPlan plan;
  plan.format = o.format;
  if (o.json) {
    if (json_conflicts && !plan.format.empty() && plan.format != "json")
      ThrowUsage("--json", fmt::format("conflicts with --output-format {}", plan.format));
    plan.format = "json";
  }
  if (!plan.format.empty() && plan.format != "csv" && plan.format != "json")
    ThrowUsage(fmt::format("--output-format '{}'", plan.format), "pe dot writes csv or json");
  plan.discard = o.output == "/dev/null";
  plan.to_file = !o.output.empty() && !IsStdStream(o.output) && !plan.discard;
  if (plan.format.empty() && plan.to_file) {
    const auto f = FormatFromExtension(o.output);
    if (f == Format::kCsv) plan.format = "csv";
    else if (f == Format::kJson) plan.format = "json";
    else ThrowUsage(fmt::format("-o '{}'", o.output), "pe dot writes .csv or .json; or give --output-format csv|json");
  }
  plan.explicit_format = !plan.format.empty();
  if (plan.format.empty()) plan.format = "csv";
  return plan;
}

std::string FlagText(const Spec& flags, std::string_view key) {
  const std::string want = CanonicalSpecKey(key);
  std::string value;
  for (const auto& [k, v] : flags.params)
    if (CanonicalSpecKey(k) == want) value = v;
  return value;
}

std::int64_t FlagInt(const Spec& flags, std::string_view key) {
  const std::string text = FlagText(flags, key);
  std::int64_t v = 0;
  const char* b = text.data() + (!text.empty() && text[0] == '+');
  const auto [p, ec] = std::from_chars(b, text.data() + text.size(), v);
  return ec == std::errc() && p == text.data() + text.size() ? v : 0;
}

bool FlagSeriesGiven(const DotRequest& r, bool views) {
  return FlagInt(r.flags, "d_model") != 0 || FlagInt(r.flags, "max_len") != 0 || !FlagText(r.flags, "grid").empty() ||
         (views && FlagInt(r.flags, "heads") != 0);
}

std::string FlagsScheme(const DotRequest& r) { return r.flags.scheme.empty() ? "sinusoidal" : r.flags.scheme; }

void CheckFlagsGiven(const DotRequest& r) {
  std::vector<std::string> given;
  for (const auto& [k, v] : r.flags.params) {
    if (CanonicalSpecKey(k) == "tensor") continue;  // also the files' tensor
    std::string flag = "--" + k;
    std::replace(flag.begin(), flag.end(), '_', '-');
    given.push_back(flag);
  }
  CheckFlagsApply(given, FlagsScheme(r), !r.flags.scheme.empty());
}

SchemeSpec FlagsSpec(const DotRequest& r) {
  SchemeSpec spec;
  spec.scheme = std::string(FindScheme(FlagsScheme(r)).name);
  for (const auto& [k, v] : r.flags.params) SetSpecParam(spec, k, v);
  if (!r.tensor.empty()) SetSpecParam(spec, "tensor", r.tensor);
  return spec;
}

DotOutput RunDot(const DotRequest& request) {
  DotRequest o = request;
  // A caller that sets a resize field but names no flag asks for the resize all the same.
  if (o.resize_flag.empty())
    for (const auto& [flag, value] : {std::pair{"--resize-from", &o.resize_from}, std::pair{"--resize-rule", &o.resize_rule},
                                      std::pair{"--from-grid", &o.from_grid}})
      if (!value->empty()) {
        o.resize_flag = flag;
        break;
      }
  if (const auto view = PickDotView(o)) return RunDotView(*view, o);
  const CurvePlan plan = CheckCurveRequest(o);
  std::vector<DotSeries> all = OpenSeries(o, plan);
  ComputeCurves(all, o);
  return WriteOutputs(all, o, plan);
}

}  // namespace pe
