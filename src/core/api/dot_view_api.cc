// The views of pe::RunDot (include/pe/dot.h, `pe dot --view`): the inputs
// (files, inline specs, the scheme flags' series, or learned tables beside
// their resized versions), computed by core/analysis/views/view_compute.h, written as
// CSV/JSON (core/analysis/views/view_data.h) and drawn by core/plot/view_plot.h.
// Which view a request gets by default is PickDotView's choice: RoPE (a
// rope spec, or a file with cos and sin or inv_freq and no --tensor) → qk
// with RoFormer's bound; ALiBi → heads; sincos-2d and vision-rope → grid;
// anything else → the decay curve (dot_api.cc).
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <tuple>

#include "core/api/dot_run.h"
#include "core/base/error.h"
#include "core/base/output.h"
#include "core/base/table_set.h"
#include "core/plot/canvas.h"
#include "core/plot/dot_plot.h"
#include "core/analysis/views/view_compute.h"
#include "core/plot/view_plot.h"
#include "core/schemes/inline_spec.h"
#include "core/spec/params.h"

namespace pe {
namespace {

std::string Tensor(const DotRequest& o) { return o.dataset.empty() ? o.tensor : o.dataset; }

std::vector<ViewInput> Inputs(const DotRequest& o, ViewKind view) {
  std::vector<ViewInput> all = ViewInputsOf(o.inputs);
  // The grid view of inputs: --grid (and --cls-token) are their grids,
  // not a sincos-2d series of their own, unless --d-model asks for one.
  const bool grid_of_inputs =
      view == ViewKind::kGrid && !all.empty() && FlagInt(o.flags, "d_model") == 0 && FlagInt(o.flags, "max_len") == 0;
  if (FlagSeriesGiven(o, true) && !grid_of_inputs) {
    CheckFlagsGiven(o);
    ViewInput i;
    i.spec = FlagsSpec(o);
    i.name = i.params = SpecSummary(*i.spec);  // the flags' parameters, not "(flags)"
    i.from_flags = true;
    all.push_back(std::move(i));
  }
  if (all.empty()) ThrowUsage("pe dot", "needs an input: a table file, an inline spec, or --scheme flags");
  ApplyLabels(o.labels, all.size(), [&](std::size_t k, const std::string& label) { all[k].name = label; });
  return all;
}

std::shared_ptr<DenseTable> Dense(std::int64_t rows, std::int64_t cols, const std::vector<float>& values) {
  auto d = std::make_shared<DenseTable>();
  d->info.rows = rows;
  d->info.cols = cols;
  d->values.assign(values.begin(), values.end());
  return d;
}

// One learned table `src`, then one resized version per rule, with their
// grids and prefix rows: the rows the rules kept before the grid.
void AddResized(const DotRequest& o, const std::string& src, const std::vector<std::string>& rules,
                const SchemeSpec& to, std::vector<ViewInput>* all) {
  if (ParseInlineSpecText(src))
    ThrowUsage(fmt::format("input '{}'", src), "is a spec; --resize-rule resizes a learned table (a file)");
  if (!o.read_learned) ThrowUsage(o.resize_flag, "needs DotRequest::read_learned to read the tables to resize");
  const DotLearnedTable t = o.read_learned(src);
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
    const ResizedTable r = Resize(t.values.data(), t.rows, t.cols, t.options(rule));
    const std::int64_t pre = r.rows - to.grid_h * to.grid_w;  // the prefix rows the rule kept
    if (prefix >= 0 && pre != prefix)
      ThrowUsage("--resize-rule", fmt::format("the rules keep different prefix rows ({} and {}): give --prefix-tokens N", prefix, pre));
    prefix = pre;
    std::shared_ptr<DenseTable> d = Dense(r.rows, r.cols, r.values);
    d->info.name = "position_embeddings";
    d->info.dtype = DType::kFloat32;
    ViewInput in;
    in.name = fmt::format("{} → {}", base, rule.empty() ? std::string("resized") : rule);
    in.table = std::move(d);
    in.grid = fmt::format("{}x{}", to.grid_h, to.grid_w);
    resized.push_back(std::move(in));
  }
  orig.table = Dense(t.rows, t.cols, t.values);
  orig.grid = o.from_grid;  // else the square after the prefix rows
  orig.prefix_tokens = prefix;
  for (ViewInput& in : resized) in.prefix_tokens = prefix;
  all->push_back(std::move(orig));
  for (ViewInput& in : resized) all->push_back(std::move(in));
}

// The tables to resize (the file inputs and --resize-from), each followed
// by one resized version per rule of --resize-rule (a comma list).
std::vector<ViewInput> ResizedInputs(const DotRequest& o) {
  std::vector<std::string> sources = o.inputs;
  if (!o.resize_from.empty()) sources.push_back(o.resize_from);
  if (sources.empty()) ThrowUsage("pe dot", "needs a learned table to resize: a file input or --resize-from SRC");
  const std::string grid = FlagText(o.flags, "grid");
  if (grid.empty()) ThrowUsage("--grid", "is required with --resize-rule: the target grid HxW, e.g. 24x24");
  std::vector<std::string> rules;
  for (std::size_t a = 0; a <= o.resize_rule.size();) {
    const std::size_t b = std::min(o.resize_rule.find(',', a), o.resize_rule.size());
    rules.push_back(o.resize_rule.substr(a, b - a));
    a = b + 1;
  }
  SchemeSpec to;
  ParseGrid(grid, &to);
  std::vector<ViewInput> all;
  for (const std::string& src : sources) AddResized(o, src, rules, to, &all);
  return all;
}

plot::PlotControls Controls(const DotRequest& o) {
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

void WriteView(ByteSink& sink, const ViewData& data, const std::string& format) {
  if (format == "json") WriteViewJson(sink, data);
  else WriteViewCsv(sink, data);
}

// Several tables' grids, one row of panels each: without --size, a
// picture as tall as the rows of square panels need.
void FitPanels(const ViewData& data, const DotRequest& o, plot::PlotControls* c) {
  if (!o.size.empty() || data.panels.empty() || data.panels[0].series.empty()) return;
  std::size_t ncol = 0;
  while (ncol < data.panels.size() && data.panels[ncol].series == data.panels[0].series) ++ncol;
  const std::size_t nrow = (data.panels.size() + ncol - 1) / ncol;
  const double cell = (c->width - 160.0) / static_cast<double>(ncol);
  c->height = std::clamp(static_cast<int>(70 + cell * static_cast<double>(nrow) + 45), 300, 2000);
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

bool IsMatrixView(const DotRequest& o) { return o.view == "matrix"; }

std::optional<ViewKind> PickDotView(const DotRequest& o) {
  if (!o.resize_flag.empty()) {
    if (!o.view.empty() && ParseViewKind(o.view) != ViewKind::kGrid)
      ThrowUsage(o.resize_flag, fmt::format("draws resized tables in --view grid, not --view {}", o.view));
    return ViewKind::kGrid;
  }
  if (IsMatrixView(o)) return std::nullopt;  // the decay path's heatmap (dot_api.cc)
  if (!o.view.empty()) {
    const ViewKind v = ParseViewKind(o.view);
    if (v == ViewKind::kDecay) return std::nullopt;
    return v;
  }
  if (o.from >= 0 || !o.matrix.empty()) return std::nullopt;  // the decay path's own modes
  const ViewKind v = ChooseView(o.inputs.empty() ? std::string() : o.inputs[0], Tensor(o),
                                FlagSeriesGiven(o, true) ? FlagsScheme(o) : std::string());
  if (v == ViewKind::kDecay) return std::nullopt;
  return v;
}

bool CurveToStdout(const DotRequest& o, bool explicit_format) {
  if (IsStdStream(o.output)) return true;  // -o - asks for it
  if (!o.output.empty()) return false;
  // A picture was the point, unless --json or --output-format asks for the curve too.
  if (!o.plot.empty() || !o.matrix.empty()) return explicit_format;
  return !o.stdout_is_terminal || explicit_format;
}

DotOutput RunDotView(ViewKind view, const DotRequest& o) {
  // Flags first, then the work, then the files.
  const DotOutputPlan out = PlanDotOutput(o, false);
  if (!o.matrix.empty()) ThrowUsage("--matrix", fmt::format("draws the decay view's matrix, not --view {}", ViewKindName(view)));
  if (o.from >= 0) ThrowUsage("--from", fmt::format("belongs to the decay view, not --view {}", ViewKindName(view)));
  if (o.prefix_tokens >= 0 && view != ViewKind::kGrid)
    ThrowUsage("--prefix-tokens", fmt::format("applies to --view grid, not --view {}", ViewKindName(view)));
  const plot::PlotControls controls = Controls(o);
  if (!o.plot.empty()) plot::ImageFormatFromPath(o.plot, "--plot");
  if (!o.cmap.empty() && o.plot.empty()) ThrowUsage("--cmap", "colours --plot; give --plot FILE");

  const std::vector<ViewInput> inputs = o.resize_flag.empty() ? Inputs(o, view) : ResizedInputs(o);
  ViewOptions vo;
  vo.max_offset = o.max_offset;
  vo.tensor = Tensor(o);
  vo.columns = o.columns;
  vo.window = o.window;
  vo.collision_dtypes = o.collision_dtypes;
  vo.patches = o.patches;
  if (o.resize_flag.empty()) vo.grid = FlagText(o.flags, "grid");  // resized: each input's own
  if (const std::string cls = FlagText(o.flags, "cls_token"); !cls.empty()) {
    SchemeSpec s;
    SetSpecParam(s, "cls_token", cls);
    vo.cls_token = s.cls_token;
  }
  vo.prefix_tokens = o.prefix_tokens;
  const ViewData data = ComputeView(view, vo, inputs);

  if (out.to_file) {
    AtomicFile file(o.output);
    FileSink sink(file.file(), fmt::format("'{}'", o.output), file.replaces());
    WriteView(sink, data, out.format);
    sink.Flush();
    file.Commit();
  }
  if (!o.plot.empty()) {
    plot::PlotControls c = controls;
    FitPanels(data, o, &c);
    plot::RenderView(data, c, o.plot, "--plot");
  }
  DotOutput result;
  if (CurveToStdout(o, out.explicit_format)) {
    StringSink sink;
    WriteView(sink, data, out.format);
    result.data = std::move(sink.out);
  } else if (o.stdout_is_terminal && o.plot.empty() && o.output.empty()) {
    result.hint = fmt::format("--view {}: add --plot view.png, or -o view.csv (or .json)", ViewKindName(view));
  }
  return result;
}

}  // namespace pe
