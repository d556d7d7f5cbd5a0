#include "core/plot/dot_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include <pe/text.h>

#include "core/base/error.h"
#include "core/plot/canvas.h"
#include "core/plot/chart.h"
#include "core/plot/heatmap.h"
#include "core/plot/term_chart.h"

namespace pe {

std::pair<int, int> ParseSize(const std::string& text) {
  if (text.empty()) return {960, 600};
  int w = 0, h = 0;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || (x != 'x' && x != 'X') || w < 200 ||
      h < 150 || w > 10000 || h > 10000)
    ThrowUsage(fmt::format("--size '{}'", text), "expected WIDTHxHEIGHT, each 200..10000 (150.. for height)");
  return {w, h};
}

std::pair<double, double> ParseLimits(const std::string& text, const char* flag) {
  double a = 0, b = 0;
  char comma = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%lf%c%lf%c", &a, &comma, &b, &extra) != 3 || (comma != ',' && comma != ':') ||
      !std::isfinite(a) || !std::isfinite(b) || !(b > a))
    ThrowUsage(fmt::format("{} '{}'", flag, text), "expected LO,HI with LO < HI, e.g. 0,1.5");
  return {a, b};
}

namespace plot {
namespace {

std::string BaseName(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
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

std::string MeasureLabel(bool cosine) { return cosine ? "cosine similarity" : "dot product"; }

// --title, --log-x/--log-y, --xlim/--ylim and --train-len on the decay chart.
void ApplyControls(const DotRequest& o, ChartSpec* spec) {
  if (!o.title.empty()) spec->title = o.title;
  spec->log_x = o.log_x;
  spec->log_y = o.log_y && !o.linear_y;
  if (!o.xlim.empty()) std::tie(spec->x_min, spec->x_max) = ParseLimits(o.xlim, "--xlim");
  if (!o.ylim.empty()) std::tie(spec->y_min, spec->y_max) = ParseLimits(o.ylim, "--ylim");
  if (!std::isnan(o.train_len)) {
    if (!(o.train_len >= 0) || !std::isfinite(o.train_len))
      ThrowUsage("--train-len", fmt::format("must be a position (0 or more), got {}", o.train_len));
    spec->shade_from = o.train_len;
    spec->shade_label = fmt::format("beyond the training length {}", o.train_len);
  }
}

}  // namespace

void DrawDecayChart(const std::vector<DotSeries>& all, const DotRequest& o) {
  ChartSpec spec;
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
    const DotSeries& s = all[0];
    spec.subtitle = (s.labelled ? s.name + ": " : s.is_file ? s.name + " · " : "") + Parameters(s.table->info());
  } else {
    std::int64_t k_max = 0;
    for (const DotSeries& s : all)
      k_max = std::max<std::int64_t>(k_max, anchor ? static_cast<std::int64_t>(s.anchor.offset.size())
                                                   : static_cast<std::int64_t>(s.curve.mean.size()) - 1);
    spec.subtitle = anchor ? fmt::format("{} tables", all.size())
                           : fmt::format("{} tables · offsets 0..{}", all.size(), k_max);
    // Labelled series: the legend names them, the subtitle says what each is.
    if (!o.labels.empty())
      for (const DotSeries& s : all) spec.subtitle += fmt::format(" · {}: {}", s.name, s.source);
  }
  bool has_closed_form = false;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const DotSeries& s = all[i];
    const Rgb color = SeriesColor(i);
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
      closed.color = all.size() == 1 ? Rgb{1.0, 0.55, 0.1} : color;
      closed.alpha = all.size() == 1 ? 0.55 : 0.3;
      spec.series.push_back(closed);
    }
  }
  if (spec.series.size() == 1) spec.series[0].name.clear();
  if (has_closed_form && all.size() > 1)
    spec.note += std::string(spec.note.empty() ? "" : " · ") + "pale wide: Σᵢ cos(k·ωᵢ)" + (o.cosine ? " / (d/2)" : "");
  ApplyControls(o, &spec);
  RenderLineChart(spec, o.plot, "--plot");
}

void DrawSimilarityHeatmap(const DotSeries& s, const SimilarityMatrix& m, const std::string& path, const DotRequest& o,
                           const char* flag) {
  const TableInfo& info = s.table->info();
  HeatmapSpec spec;
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
  spec.map = o.cmap.empty() ? ColorMap::kViridis : ParseColorMap(o.cmap, "--cmap");
  spec.symmetric = IsDiverging(spec.map) && std::isnan(o.vmin) && std::isnan(o.vmax);
  spec.vmin = o.vmin;
  spec.vmax = o.vmax;
  if (!o.title.empty()) spec.title = o.title;
  spec.square_cells = true;
  // A square picture unless --size asks for another.
  std::tie(spec.width, spec.height) = o.size.empty() ? std::pair<int, int>{860, 800} : ParseSize(o.size);
  RenderHeatmap(spec, path, flag);
}

std::string DecayTermChart(const std::vector<DotSeries>& all, const DotRequest& o, bool color) {
  TermChartSpec spec;
  spec.color = color;
  const bool anchor = o.from >= 0;
  spec.title = anchor ? fmt::format("{} of row {} with row {}+k", MeasureLabel(o.cosine), o.from, o.from)
                      : fmt::format("mean {} of positions p and p+k", MeasureLabel(o.cosine));
  spec.x_label = "offset k";
  for (const DotSeries& s : all) {
    if (s.qk) continue;  // a q·k matrix input has no decay curve
    TermSeries t;
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
  std::string out = RenderTermChart(spec);
  for (const DotSeries& s : all) {
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

}  // namespace plot
}  // namespace pe
