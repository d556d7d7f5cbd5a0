#include "cli/dot_views.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include "cli/inline_spec.h"
#include "cli/resize_flags.h"
#include "cli/scheme_flags.h"
#include "core/plot/view_compute.h"
#include "core/analysis/relative_views.h"
#include "core/analysis/rope_views.h"
#include "core/analysis/table_views.h"
#include "core/spec/params.h"
#include <pe/error.h>

#include "cli/exit_codes.h"
#include "core/formats/format.h"
#include "core/base/output.h"
#include "core/plot/view_plot.h"
#include "core/schemes/more_schemes.h"
#include "core/base/table_set.h"

namespace pe::cli {
namespace {

std::string Tensor(const DotOptions& o) { return o.dataset.empty() ? o.spec.extra.tensor : o.dataset; }

bool FlagSeries(const DotOptions& o) {
  return o.spec.d_model != 0 || o.spec.max_len != 0 || !o.spec.grid.empty() || o.spec.extra.heads != 0;
}

std::vector<ViewInput> Inputs(const DotOptions& o, ViewKind view) {
  std::vector<ViewInput> all = ViewInputsOf(o.inputs);
  // The grid view of inputs: --grid (and --cls-token) are their grids,
  // not a sincos-2d series of their own, unless --d-model asks for one.
  const bool grid_of_inputs = view == ViewKind::kGrid && !all.empty() && o.spec.d_model == 0 && o.spec.max_len == 0;
  if (FlagSeries(o) && !grid_of_inputs) {
    CheckSchemeFlags(o.spec, o.spec.scheme, {"--tensor"});
    ViewInput i;
    i.spec = ToSpec(o.spec);
    i.name = i.params = SpecSummary(*i.spec);  // the flags' parameters, not "(flags)"
    i.from_flags = true;
    all.push_back(std::move(i));
  }
  if (all.empty()) ThrowUsage("pe dot", "needs an input: a table file, an inline spec, or --scheme flags");
  ApplyLabels(o.labels, all.size(), [&](std::size_t k, const std::string& label) { all[k].name = label; });
  return all;
}

std::pair<double, double> ParseLimits(const std::string& text, const char* flag) {
  double a = 0, b = 0;
  char comma = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%lf%c%lf%c", &a, &comma, &b, &extra) != 3 || (comma != ',' && comma != ':') ||
      !std::isfinite(a) || !std::isfinite(b) || !(b > a))
    ThrowUsage(fmt::format("{} '{}'", flag, text), "expected LO,HI with LO < HI, e.g. 0,1.5");
  return {a, b};
}

bool Given(const CLI::App* cmd, const char* name) {
  const CLI::Option* opt = cmd ? cmd->get_option_no_throw(name) : nullptr;
  return opt && opt->count() > 0;
}

// The first resize flag given, or "": with one, pe dot draws each table
// beside its resized versions (the flags of pe generate --resize-from).
std::string ResizeFlagGiven(const DotOptions& o) {
  for (const char* f : {"--resize-from", "--resize-rule", "--mode", "--antialias", "--no-antialias", "--align-corners",
                        "--no-align-corners", "--offset", "--from-grid", "--interpolate-offset"})
    if (Given(o.resize.cmd, f)) return f;
  return "";
}

// The tables to resize (the file inputs and --resize-from), each followed
// by one resized version per rule of --resize-rule (a comma list), with
// their grids and prefix rows: the rows the rule kept before the grid.
std::vector<ViewInput> ResizedInputs(const DotOptions& o) {
  std::vector<std::string> sources = o.inputs;
  if (!o.resize.from.empty()) sources.push_back(o.resize.from);
  if (sources.empty()) ThrowUsage("pe dot", "needs a learned table to resize: a file input or --resize-from SRC");
  if (o.spec.grid.empty()) ThrowUsage("--grid", "is required with --resize-rule: the target grid HxW, e.g. 24x24");
  std::vector<std::string> rules;
  for (std::size_t a = 0; a <= o.resize.rule.size();) {
    const std::size_t b = std::min(o.resize.rule.find(',', a), o.resize.rule.size());
    rules.push_back(o.resize.rule.substr(a, b - a));
    a = b + 1;
  }
  SchemeSpec to;
  ParseGrid(o.spec.grid, &to);
  std::vector<ViewInput> all;
  for (const std::string& src : sources) {
    if (ParseInlineSpec(src))
      ThrowUsage(fmt::format("input '{}'", src), "is a spec; --resize-rule resizes a learned table (a file)");
    const LearnedTable t = ReadLearnedTable(src, "input");
    std::string base = src;
    if (const auto slash = base.find_last_of('/'); slash != std::string::npos && slash + 1 < base.size())
      base = base.substr(slash + 1);
    ViewInput orig;
    orig.name = base;
    std::vector<ViewInput> resized;
    std::int64_t prefix = -1;
    for (const std::string& rule : rules) {
      if (rule == "bert-tile" || rule == "linear" || rule == "qwen3-vl")
        ThrowUsage(fmt::format("--resize-rule {}", rule),
                   rule == "qwen3-vl" ? "gives rows in spatial-merge order, not a row-major grid: no --view grid"
                                      : "resizes a 1-D table: no grid to draw");
      ResizeFlags f = o.resize;
      f.rule = rule;
      const ResizeOptions ro = ResizeOptionsFrom(f, t, o.spec.grid, 0, 1, 0);
      const ResizedTable r = Resize(t.values.data(), t.rows, t.cols, ro);
      const std::int64_t pre = r.rows - to.grid_h * to.grid_w;  // the prefix rows the rule kept
      if (prefix >= 0 && pre != prefix)
        ThrowUsage("--resize-rule", fmt::format("the rules keep different prefix rows ({} and {}): give --prefix-tokens N", prefix, pre));
      prefix = pre;
      auto d = std::make_shared<DenseTable>();
      d->info.name = "position_embeddings";
      d->info.rows = r.rows;
      d->info.cols = r.cols;
      d->info.dtype = DType::kFloat32;
      d->values.assign(r.values.begin(), r.values.end());
      ViewInput in;
      in.name = fmt::format("{} → {}", base, rule.empty() ? std::string("resized") : rule);
      in.table = std::move(d);
      in.grid = fmt::format("{}x{}", to.grid_h, to.grid_w);
      resized.push_back(std::move(in));
    }
    auto d = std::make_shared<DenseTable>();
    d->info.rows = t.rows;
    d->info.cols = t.cols;
    d->values.assign(t.values.begin(), t.values.end());
    orig.table = std::move(d);
    orig.grid = o.resize.from_grid;  // else the square after the prefix rows
    orig.prefix_tokens = prefix;
    for (ViewInput& in : resized) in.prefix_tokens = prefix;
    all.push_back(std::move(orig));
    for (ViewInput& in : resized) all.push_back(std::move(in));
  }
  return all;
}

}  // namespace

void ApplyLabels(const std::vector<std::string>& labels, std::size_t inputs,
                 const std::function<void(std::size_t, const std::string&)>& set) {
  if (labels.empty()) return;
  if (labels.size() != inputs)
    ThrowUsage("--label", fmt::format("give it once per input, in input order ({} inputs, {} --label)", inputs,
                                      labels.size()));
  for (std::size_t k = 0; k < labels.size(); ++k) {
    if (labels[k].empty()) ThrowUsage("--label", fmt::format("label {} is empty", k + 1));
    set(k, labels[k]);
  }
}

std::pair<int, int> ParseSize(const std::string& text) {
  if (text.empty()) return {960, 600};
  int w = 0, h = 0;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || (x != 'x' && x != 'X') || w < 200 ||
      h < 150 || w > 10000 || h > 10000)
    ThrowUsage(fmt::format("--size '{}'", text), "expected WIDTHxHEIGHT, each 200..10000 (150.. for height)");
  return {w, h};
}

namespace {

plot::PlotControls Controls(const DotOptions& o) {
  plot::PlotControls c;
  c.title = o.title;
  if (o.log_x) c.log_x = true;
  if (o.log_y) c.log_y = true;
  if (o.linear_y) c.log_y = false;
  if (!o.xlim.empty()) std::tie(c.x_min, c.x_max) = ParseLimits(o.xlim, "--xlim");
  if (!o.ylim.empty()) std::tie(c.y_min, c.y_max) = ParseLimits(o.ylim, "--ylim");
  c.vmin = o.vmin;
  c.vmax = o.vmax;
  c.train_len = o.train_len;
  plot::CheckPlotControls(c, "--");
  if (!o.cmap.empty()) c.cmap = plot::ParseColorMap(o.cmap, "--cmap");
  std::tie(c.width, c.height) = ParseSize(o.size);
  return c;
}

}  // namespace

bool IsMatrixView(const DotOptions& o) { return o.view == "matrix"; }

std::optional<ViewKind> PickDotView(const DotOptions& o) {
  if (const std::string flag = ResizeFlagGiven(o); !flag.empty()) {
    if (!o.view.empty() && ParseViewKind(o.view) != ViewKind::kGrid)
      ThrowUsage(flag, fmt::format("draws resized tables in --view grid, not --view {}", o.view));
    return ViewKind::kGrid;
  }
  if (IsMatrixView(o)) return std::nullopt;  // the decay path's heatmap (cmd_dot.cc)
  if (!o.view.empty()) {
    const ViewKind v = ParseViewKind(o.view);
    if (v == ViewKind::kDecay) return std::nullopt;
    return v;
  }
  if (o.from >= 0 || !o.matrix.empty()) return std::nullopt;  // the decay path's own modes
  const ViewKind v = ChooseView(o.inputs.empty() ? std::string() : o.inputs[0], Tensor(o),
                                FlagSeries(o) ? o.spec.scheme : std::string());
  if (v == ViewKind::kDecay) return std::nullopt;
  return v;
}

bool CurveToStdout(const DotOptions& o, bool stdout_tty, bool explicit_format) {
  if (IsStdStream(o.output)) return true;  // -o - asks for it
  if (!o.output.empty()) return false;
  // A picture was the point, unless --json or --output-format asks for the curve too.
  if (!o.plot.empty() || !o.matrix.empty()) return explicit_format;
  return !stdout_tty || explicit_format;
}

void AddPlotControlFlags(CLI::App& cmd, DotOptions& o) {
  const char* g = "Views and plot controls";
  cmd.add_option("--view", o.view,
                 "What to compute and draw (into --plot FILE): decay, matrix, qk, bound, spectrum, ratio, temperature, heads, bias, offsets, buckets, grid, "
                 "columns, precision, collisions (default by scheme: rope → qk, alibi/kerple/sandwich → heads, "
                 "t5-bucket/deberta-bucket/relative-index → buckets, sincos-2d → grid, else decay); e.g. "
                 "pe dot t5-bucket --view buckets --plot t5.png")
      ->type_name("VIEW")
      ->group(g);
  cmd.add_option("--title", o.title, "Plot title")->type_name("TEXT")->group(g);
  cmd.add_option("--label", o.labels,
                 "Name of a series in legends and the CSV/JSON 'series' (once per input, in input order; the "
                 "subtitle keeps its parameters)")
      ->type_name("TEXT")
      ->allow_extra_args(false)
      ->group(g);
  cmd.add_flag("--log-x", o.log_x, "Logarithmic x axis")->group(g);
  cmd.add_flag("--log-y", o.log_y, "Logarithmic y axis")->group(g);
  cmd.add_flag("--linear-y", o.linear_y, "Linear y axis (views that default to a log y axis)")->group(g);
  cmd.add_option("--xlim", o.xlim, "x axis range")->type_name("LO,HI")->group(g);
  cmd.add_option("--ylim", o.ylim, "y axis range")->type_name("LO,HI")->group(g);
  cmd.add_option("--vmin", o.vmin, "Colour range minimum (heatmaps)")->type_name("V")->group(g);
  cmd.add_option("--vmax", o.vmax, "Colour range maximum (heatmaps)")->type_name("V")->group(g);
  cmd.add_option("--cmap", o.cmap, "Colour map: viridis, magma, cividis, RdBu, RdBu_r (default: viridis for one-signed "
                                   "values, RdBu_r around 0 for signed)")
      ->type_name("NAME")
      ->group(g);
  cmd.add_option("--train-len", o.train_len, "Shade the region beyond this training length on any curve")
      ->type_name("L")
      ->group(g);
  cmd.add_option("--columns", o.columns, "view columns: the columns to draw (default 4,5,6,7)")
      ->type_name("C,...")
      ->delimiter(',')
      ->group(g);
  cmd.add_option("--window", o.window, "view collisions: positions per window")->type_name("W")->capture_default_str()->group(g);
  cmd.add_option("--collision-dtype", o.collision_dtypes, "view collisions: bfloat16 and/or float16 (default both)")
      ->type_name("TYPE")
      ->delimiter(',')
      ->group(g);
  cmd.add_option("--patches", o.patches, "view grid: grid cells i·W+j to compare with every cell (default: all, or 9 "
                                         "when the grid has over 256 cells; with several inputs, cells of the first "
                                         "input's grid, 4 by default, at the same relative place in the others)")
      ->type_name("N,...")
      ->delimiter(',')
      ->group(g);

}

int RunDotView(ViewKind view, const DotOptions& o, Console& console) {
  (void)console;
  // Flags first, then the work, then the files.
  std::string format = o.format;
  if (o.json) format = "json";
  if (!format.empty() && format != "csv" && format != "json")
    ThrowUsage(fmt::format("--output-format '{}'", format), "pe dot writes csv or json");
  const bool discard = o.output == "/dev/null";
  if (format.empty() && !o.output.empty() && !IsStdStream(o.output) && !discard) {
    const auto f = FormatFromExtension(o.output);
    if (f == Format::kCsv) format = "csv";
    else if (f == Format::kJson) format = "json";
    else ThrowUsage(fmt::format("-o '{}'", o.output), "pe dot writes .csv or .json; or give --output-format csv|json");
  }
  const bool explicit_format = !format.empty();
  if (format.empty()) format = "csv";
  if (!o.matrix.empty()) ThrowUsage("--matrix", fmt::format("draws the decay view's matrix, not --view {}", ViewKindName(view)));
  if (o.from >= 0) ThrowUsage("--from", fmt::format("belongs to the decay view, not --view {}", ViewKindName(view)));
  if (o.resize.prefix_tokens >= 0 && view != ViewKind::kGrid)
    ThrowUsage("--prefix-tokens", fmt::format("applies to --view grid, not --view {}", ViewKindName(view)));
  const plot::PlotControls controls = Controls(o);
  if (!o.plot.empty()) plot::ImageFormatFromPath(o.plot, "--plot");

  const std::vector<ViewInput> inputs = ResizeFlagGiven(o).empty() ? Inputs(o, view) : ResizedInputs(o);
  ViewOptions vo;
  vo.max_offset = o.max_offset;
  vo.tensor = Tensor(o);
  vo.columns = o.columns;
  vo.window = o.window;
  vo.collision_dtypes = o.collision_dtypes;
  vo.patches = o.patches;
  if (ResizeFlagGiven(o).empty()) vo.grid = o.spec.grid;  // resized: each input's own
  vo.cls_token = o.spec.extra.cls_token;
  vo.prefix_tokens = o.resize.prefix_tokens;
  const ViewData data = ComputeView(view, vo, inputs);

  auto write = [&](ByteSink& sink) {
    if (format == "json") WriteViewJson(sink, data);
    else WriteViewCsv(sink, data);
  };
  if (!o.output.empty() && !IsStdStream(o.output) && !discard) {
    AtomicFile file(o.output);
    FileSink sink(file.file(), fmt::format("'{}'", o.output), file.replaces());
    write(sink);
    sink.Flush();
    file.Commit();
  }
  if (!o.plot.empty()) {
    plot::PlotControls c = controls;
    // Several tables' grids, one row of panels each: without --size, a
    // picture as tall as the rows of square panels need.
    if (o.size.empty() && !data.panels.empty() && !data.panels[0].series.empty()) {
      std::size_t ncol = 0;
      while (ncol < data.panels.size() && data.panels[ncol].series == data.panels[0].series) ++ncol;
      const std::size_t nrow = (data.panels.size() + ncol - 1) / ncol;
      const double cell = (c.width - 160.0) / static_cast<double>(ncol);
      c.height = std::clamp(static_cast<int>(70 + cell * static_cast<double>(nrow) + 45), 300, 2000);
    }
    plot::RenderView(data, c, o.plot, "--plot");
  }
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  if (CurveToStdout(o, tty, explicit_format)) {
    FileSink out(stdout, "standard output");
    write(out);
    out.Flush();
  } else if (tty && o.plot.empty() && o.output.empty()) {
    console.Hint(fmt::format("--view {}: add --plot view.png, or -o view.csv (or .json)", ViewKindName(view)));
  }
  return kExitOk;
}

}  // namespace pe::cli
