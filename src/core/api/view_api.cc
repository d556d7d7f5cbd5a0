// The public API's views (include/pe/view.h) over the core: ComputeView
// (core/analysis/views/view_compute.h), the writers of core/analysis/views/view_data.h
// and RenderView (core/plot/view_plot.h), the code `pe dot --view` runs.
#include <fmt/format.h>

#include <cmath>

#include <pe/view.h>

#include "core/analysis/views/view_compute.h"
#include "core/analysis/views/view_data.h"
#include "core/schemes/registry.h"
#include "core/spec/params.h"
#include "core/base/error.h"
#include "core/formats/format.h"
#include "core/base/output.h"
#include "core/plot/view_plot.h"

namespace pe {
namespace {

constexpr ViewKind kViews[] = {ViewKind::kQk,      ViewKind::kBound,   ViewKind::kSpectrum, ViewKind::kRatio,
                               ViewKind::kTemperature, ViewKind::kHeads, ViewKind::kBias,   ViewKind::kOffsets,
                               ViewKind::kBuckets, ViewKind::kGrid,    ViewKind::kColumns,  ViewKind::kPrecision,
                               ViewKind::kCollisions};

View FromCore(ViewData d) {
  View v = std::move(static_cast<View&>(d));
  v.name = ViewKindName(d.kind);
  return v;
}

ViewData ToCore(const View& v) {
  ViewData d;
  static_cast<View&>(d) = v;
  d.kind = ParseViewKind(v.name);
  return d;
}

// The recipe as the --scheme flags would give it: a series named by its
// parameters (as the CLI names it), the file's recipe for the precision view.
ViewInput RecipeInput(const Spec& recipe) {
  SchemeSpec s;
  s.scheme = std::string(FindScheme(recipe.scheme).name);
  for (const auto& [k, v] : recipe.params) SetSpecParam(s, k, v);
  ViewInput i;
  i.name = i.params = SpecSummary(s);
  i.spec = std::move(s);
  i.from_flags = true;
  return i;
}

}  // namespace

std::vector<std::string> ViewNames() {
  std::vector<std::string> out;
  for (ViewKind k : kViews) out.push_back(ViewKindName(k));
  return out;
}

std::string DefaultViewName(const std::vector<std::string>& inputs, const ViewRequest& request) {
  return ViewKindName(ChooseView(inputs.empty() ? std::string() : inputs[0], request.tensor,
                                 request.recipe ? request.recipe->scheme : std::string()));
}

View ComputeView(const std::string& name, const std::vector<std::string>& inputs, const ViewRequest& request) {
  const ViewKind kind = ParseViewKind(name.empty() ? DefaultViewName(inputs, request) : name);
  if (kind == ViewKind::kDecay)
    ThrowUsage("view 'decay'", "the decay curve of table rows is not a view: draw it with pe dot's picture "
                               "(Python: pe.dot(table, plot='decay.png'); C++: pe::RunDot with DotRequest::plot)");
  std::vector<ViewInput> in = ViewInputsOf(inputs);
  if (request.recipe) in.push_back(RecipeInput(*request.recipe));
  if (in.empty()) ThrowUsage("view", "needs an input: a table file, an inline spec, or a recipe");
  return FromCore(ComputeView(kind, request, in));  // a ViewRequest is the ViewOptions core reads
}

std::string ViewCsv(const View& view) {
  StringSink sink;
  WriteViewCsv(sink, ToCore(view));
  return std::move(sink.out);
}

std::string ViewJson(const View& view) {
  StringSink sink;
  WriteViewJson(sink, ToCore(view));
  return std::move(sink.out);
}

void WriteViewFile(const View& view, const std::string& path, const std::string& format_in) {
  std::string format = format_in;
  if (format.empty()) {
    const auto f = FormatFromExtension(path);
    if (f == Format::kCsv) format = "csv";
    else if (f == Format::kJson) format = "json";
    else ThrowUsage(fmt::format("'{}'", path), "a view is written as .csv or .json; or give the format csv|json");
  }
  if (format != "csv" && format != "json")
    ThrowUsage(fmt::format("format '{}'", format), "a view is written as csv or json");
  const ViewData data = ToCore(view);
  AtomicFile file(path);
  FileSink sink(file.file(), fmt::format("'{}'", path), file.replaces());
  if (format == "json") WriteViewJson(sink, data);
  else WriteViewCsv(sink, data);
  sink.Flush();
  file.Commit();
}

void PlotView(const View& view, const std::string& path, const PlotOptions& options) {
  plot::PlotControls c;
  c.title = options.title;
  c.log_x = options.log_x;
  c.log_y = options.log_y;
  auto limits = [](double lo, double hi, const char* what) {
    if (std::isnan(lo) && std::isnan(hi)) return;
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo))
      ThrowUsage(what, fmt::format("expected finite LO < HI, got {} and {}", lo, hi));
  };
  limits(options.x_min, options.x_max, "xlim");
  limits(options.y_min, options.y_max, "ylim");
  c.x_min = options.x_min;
  c.x_max = options.x_max;
  c.y_min = options.y_min;
  c.y_max = options.y_max;
  c.vmin = options.vmin;
  c.vmax = options.vmax;
  c.train_len = options.train_len;
  plot::CheckPlotControls(c, "");
  if (!options.cmap.empty()) c.cmap = plot::ParseColorMap(options.cmap, "cmap");
  if (options.width < 200 || options.width > 10000 || options.height < 150 || options.height > 10000)
    ThrowUsage(fmt::format("size {}x{}", options.width, options.height),
               "expected WIDTHxHEIGHT, each 200..10000 (150.. for height)");
  c.width = options.width;
  c.height = options.height;
  plot::ImageFormatFromPath(path, "plot");
  plot::RenderView(ToCore(view), c, path, "plot");
}

}  // namespace pe
