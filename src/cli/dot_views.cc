#include "cli/dot_views.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "cli/inline_spec.h"
#include "cli/scheme_flags.h"
#include "core/analysis/relative_views.h"
#include "core/analysis/rope_views.h"
#include "core/analysis/table_views.h"
#include "core/api/spec_params.h"
#include "core/error.h"
#include "core/format.h"
#include "core/output.h"
#include "core/plot/view_plot.h"
#include "core/schemes/more_schemes.h"
#include "core/table_set.h"

namespace pe::cli {
namespace {

// One input of a view: a spec (inline or the flags) or a file.
struct Input {
  std::string name;
  std::optional<SchemeSpec> spec;
  std::string path;
  bool from_flags = false;  ///< the --scheme flags, not an argument
};

std::string BaseName(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Tensor(const DotOptions& o) { return o.dataset.empty() ? o.spec.extra.tensor : o.dataset; }

bool FlagSeries(const DotOptions& o) {
  return o.spec.d_model != 0 || o.spec.max_len != 0 || !o.spec.grid.empty() || o.spec.extra.heads != 0;
}

std::vector<Input> Inputs(const DotOptions& o) {
  std::vector<Input> all;
  for (const std::string& in : o.inputs) {
    Input i;
    if (const auto inline_spec = ParseInlineSpec(in)) {
      i.spec = BuildInline(in, [&] { return ToSpec(inline_spec->flags); });
      i.name = in;
    } else {
      i.path = in;
      i.name = BaseName(in);
    }
    all.push_back(std::move(i));
  }
  if (FlagSeries(o)) {
    CheckSchemeFlags(o.spec, o.spec.scheme, {"--tensor"});
    Input i;
    i.spec = ToSpec(o.spec);
    i.name = fmt::format("{} (flags)", i.spec->scheme);
    i.from_flags = true;
    all.push_back(std::move(i));
  }
  if (all.empty()) ThrowUsage("pe dot", "needs an input: a table file, an inline spec, or --scheme flags");
  return all;
}

bool HasTensor(const std::vector<std::string>& names, const char* n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

bool IsRopeFile(const std::string& path) {
  std::vector<std::string> names;
  try {
    names = ListTensorNames(path);
  } catch (const Error&) {
    return false;  // not readable as a multi-tensor file: the decay path reports it
  }
  return HasTensor(names, "inv_freq") || (HasTensor(names, "cos") && HasTensor(names, "sin"));
}

// The info of a file's first tensor (every tensor of a pe file carries the
// scheme's parameters in its metadata); empty when the file cannot be opened,
// which the view or decay path then reports.
TableInfo FirstTensorInfo(const std::string& path) {
  try {
    const std::vector<std::string> names = ListTensorNames(path);
    OpenOptions oo;
    if (names.size() > 1) oo.dataset = names.front();
    return OpenTable(path, oo)->info();
  } catch (const Error&) {
    return {};
  }
}

DenseTable ReadTensor(const std::string& path, const std::string& tensor) {
  OpenOptions oo;
  oo.dataset = tensor;
  auto t = OpenTable(path, oo);
  return ReadAll(*t);
}

RopeSource RopeOf(const Input& in) {
  // A usage error of a spec names the input it came from.
  if (in.spec) return BuildInline(in.name, [&] { return RopeSourceFromSpec(*in.spec, in.name); });
  const std::vector<std::string> names = ListTensorNames(in.path);
  if (HasTensor(names, "inv_freq")) {
    const DenseTable f = ReadTensor(in.path, "inv_freq");
    RopeSource s = RopeSourceFromTables(&f, nullptr, nullptr, in.name);
    if (HasTensor(names, "cos")) {  // the context and attention factor from the tables
      const DenseTable c = ReadTensor(in.path, "cos"), sn = ReadTensor(in.path, "sin");
      const RopeSource t = RopeSourceFromTables(nullptr, &c, &sn, in.name);
      s.context = t.context;
      s.attention_factor = t.attention_factor;
      s.original_context = t.original_context;
    }
    return s;
  }
  if (HasTensor(names, "cos") && HasTensor(names, "sin")) {
    const DenseTable c = ReadTensor(in.path, "cos"), sn = ReadTensor(in.path, "sin");
    return RopeSourceFromTables(nullptr, &c, &sn, in.name);
  }
  ThrowUsage(fmt::format("input '{}'", in.name),
             "has no inv_freq tensor nor cos and sin tensors: a rotary view needs a RoPE file or spec");
}

DenseTable TableOf(const Input& in, const DotOptions& o) {
  if (in.spec) {
    auto g = BuildInline(in.name, [&] { return MakeGenerator(*in.spec); });
    return ReadAll(*g);
  }
  return ReadTensor(in.path, Tensor(o));
}

std::pair<double, double> ParseLimits(const std::string& text, const char* flag) {
  double a = 0, b = 0;
  char comma = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%lf%c%lf%c", &a, &comma, &b, &extra) != 3 || (comma != ',' && comma != ':') ||
      !std::isfinite(a) || !std::isfinite(b) || !(b > a))
    ThrowUsage(fmt::format("{} '{}'", flag, text), "expected LO,HI with LO < HI, e.g. 0,1.5");
  return {a, b};
}

}  // namespace

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
  if (!std::isnan(c.vmin) && !std::isnan(c.vmax) && !(c.vmax > c.vmin))
    ThrowUsage("--vmin/--vmax", fmt::format("need vmin < vmax, got {} and {}", c.vmin, c.vmax));
  if (!o.cmap.empty()) c.cmap = plot::ParseColorMap(o.cmap, "--cmap");
  std::tie(c.width, c.height) = ParseSize(o.size);
  if (!std::isnan(o.train_len)) {
    if (!(o.train_len >= 0) || !std::isfinite(o.train_len))
      ThrowUsage("--train-len", fmt::format("must be a position (0 or more), got {}", o.train_len));
    c.train_len = o.train_len;
  }
  return c;
}

// Heads × offsets from a file: an ALiBi set (its slopes), or a kerple /
// sandwich table (HeadBiasFromTable).
HeadBias HeadBiasOfFile(const Input& in, std::int64_t max_d) {
  const std::vector<std::string> names = ListTensorNames(in.path);
  if (HasTensor(names, "slopes")) {
    std::vector<double> slopes = ReadTensor(in.path, "slopes").values;
    if (slopes.size() > 4096) ThrowInput(fmt::format("'{}'", in.name), "more than 4096 slopes");
    return AlibiHeadBias(in.name, slopes, max_d);
  }
  return HeadBiasFromTable(in.name, ReadTensor(in.path, ""), max_d);
}

// The exact (float64) values of a precision input: its spec in float64;
// for a file, the --scheme flags when given, else the recipe its metadata
// records (as pe verify resolves it), one tensor of a multi-tensor scheme.
DenseTable ExactOf(const Input& in, const DotOptions& o, const std::optional<SchemeSpec>& flags, std::string* recipe) {
  if (!in.spec && Tensor(o).empty()) {
    const std::vector<std::string> names = ListTensorNames(in.path);
    if (names.size() > 1) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      ThrowUsage("--view precision", fmt::format("'{}' holds several tensors ({}): name one with --tensor", in.name, list));
    }
  }
  std::optional<SchemeSpec> e = in.spec ? in.spec : flags;
  if (!e) {
    OpenOptions oo;
    oo.dataset = Tensor(o);
    const auto t = OpenTable(in.path, oo);
    std::vector<std::string> notes;
    e = BuildReferenceSpec(t->info(), std::nullopt, in.name, &notes);
    if (!e)
      ThrowUsage("--view precision",
                 fmt::format("'{}' records no scheme in its metadata: give its recipe with the --scheme flags (e.g. "
                             "--scheme rope --d-model 64 --max-len 4096) or as a spec",
                             in.name));
  }
  if (!in.spec) {
    e->tensor = Tensor(o);
    // What the picture compares with, said in its subtitle.
    const bool scaled = !e->rope_scaling.empty() && e->rope_scaling != "none";
    *recipe = fmt::format("{}{}{}{} (from {})", e->scheme, e->d_model > 0 ? fmt::format(" d_model={}", e->d_model) : "",
                          scaled ? fmt::format(" {} ×{}", e->rope_scaling, e->factor) : "",
                          e->tensor.empty() ? "" : " " + e->tensor, flags ? "the --scheme flags" : "its metadata");
  }
  e->dtype = DType::kFloat64;
  return BuildInline(in.name, [&] {
    if (e->tensor.empty()) return ReadAll(*MakeGenerator(*e));
    TableSet set = MakeTableSet(*e);
    return ReadAll(*set.Take(e->tensor));
  });
}

ViewData Compute(ViewKind view, const DotOptions& o, const std::vector<Input>& inputs) {
  const std::string vname = ViewKindName(view);
  switch (view) {
    case ViewKind::kQk:
    case ViewKind::kBound:
    case ViewKind::kSpectrum:
    case ViewKind::kRatio:
    case ViewKind::kTemperature: {
      std::vector<RopeSource> src;
      for (const Input& in : inputs) {
        if (in.spec && in.spec->scheme != "rope" && in.spec->scheme != "xpos")
          ThrowUsage(fmt::format("--view {}", vname),
                     fmt::format("needs a rotary input (rope); '{}' is scheme '{}'", in.name, in.spec->scheme));
        src.push_back(RopeOf(in));
      }
      std::int64_t max_k = o.max_offset;
      if (max_k < 0) {
        double ctx = 0;
        for (const RopeSource& s : src) ctx = std::max(ctx, s.context);
        max_k = ctx > 1 ? static_cast<std::int64_t>(ctx) - 1 : 4095;
      }
      if (max_k > (std::int64_t{1} << 40)) ThrowUsage("--max-offset", "too large (at most 2^40)");
      if (view == ViewKind::kQk) return RopeDecayView(src, max_k, true, false);
      if (view == ViewKind::kBound) return RopeDecayView(src, max_k, false, true);
      if (view == ViewKind::kSpectrum) return RopeSpectrumView(src);
      if (view == ViewKind::kRatio) return RopeRatioView(src);
      return TemperatureView(src, max_k);
    }
    case ViewKind::kOffsets:
      // A learned table and the t5-bucket spec that indexes it.
      if (inputs.size() == 2 && !inputs[0].spec && inputs[1].spec) {
        const DenseTable w = TableOf(inputs[0], o);
        const NamedSpec b{inputs[1].name, *inputs[1].spec};
        const std::int64_t max_r =
            o.max_offset >= 0 ? o.max_offset : (b.spec.scheme == "t5-bucket" ? DefaultBucketReach(b.spec) : 1);
        return LearnedBucketView(inputs[0].name, w, b, max_r);
      }
      [[fallthrough]];
    case ViewKind::kHeads:
    case ViewKind::kBias: {
      if (inputs.size() != 1)
        ThrowUsage(fmt::format("--view {}", vname),
                   view == ViewKind::kOffsets ? "takes one input (one model's heads), or a learned bias table and "
                                                "the t5-bucket spec that indexes it"
                                              : "takes one input (one model's heads)");
      const Input& in = inputs[0];
      const std::int64_t size = view == ViewKind::kBias ? 32 : 64;  // queries, or distances, by default
      // A spec's --max-len is its number of positions (small multiples: at
      // most 64 a side unless --max-offset asks for more).
      std::int64_t max_d = size - 1;
      if (o.max_offset >= 0) max_d = o.max_offset;
      std::int64_t len = in.spec ? in.spec->max_len : 0;
      if (!in.spec) len = MetaIntOr(FirstTensorInfo(in.path).meta, "max_len", 0);  // pe's ALiBi/KERPLE/Sandwich files record it
      if (o.max_offset < 0 && len > 0)
        max_d = (view == ViewKind::kBias ? std::min<std::int64_t>(len, 64) : len) - 1;
      if (max_d > 65535) ThrowUsage("--max-offset", fmt::format("at most 65535 for the {} view", vname));
      HeadBias bias;
      if (in.spec) {
        try {
          bias = HeadBiasFromSpec({in.name, *in.spec}, max_d);
        } catch (const Error& e) {  // name the view too
          if (e.kind() != ErrorKind::kUsage) throw;
          ThrowUsage(fmt::format("--view {}", vname), e.what());
        }
      } else {
        bias = HeadBiasOfFile(in, max_d);
      }
      if (view == ViewKind::kHeads) return HeadsView(bias);
      if (view == ViewKind::kOffsets) return OffsetsView(bias);
      return BiasPanelsView(bias, std::min<std::int64_t>(max_d + 1, bias.offsets.info.cols));
    }
    case ViewKind::kBuckets: {
      std::vector<NamedSpec> specs;
      for (const Input& in : inputs) {
        if (!in.spec) {
          if (inputs.size() != 1)
            ThrowUsage("--view buckets", fmt::format("'{}' is not an inline spec (SCHEME:KEY=VALUE,..., e.g. t5-bucket:): "
                                                     "the view draws one file, or any number of specs", in.name));
          return BucketsViewOfTable(in.name, ReadTensor(in.path, ""));
        }
        specs.push_back({in.name, *in.spec});
      }
      std::int64_t max_r = o.max_offset;
      if (max_r < 0) {
        max_r = 1;
        for (const NamedSpec& s : specs)
          if (HasBuckets(s.spec.scheme)) max_r = std::max(max_r, DefaultBucketReach(s.spec));
      }
      return BucketsView(specs, max_r);
    }
    case ViewKind::kGrid: {
      if (inputs.size() != 1) ThrowUsage("--view grid", "takes one input (one grid)");
      const Input& in = inputs[0];
      SchemeSpec g;
      if (in.spec) g = *in.spec;
      else if (!o.spec.grid.empty()) ParseGrid(o.spec.grid, &g);
      else if (const TableInfo m = FirstTensorInfo(in.path); !MetaText(m.meta, "grid").empty()) {
        ParseGrid(MetaText(m.meta, "grid"), &g);  // a sincos-2d / vision-rope file records its grid as --grid takes it
        g.cls_token = MetaText(m.meta, "cls_token") == "1";
      }
      if (in.spec && in.spec->scheme != "sincos-2d" && in.spec->scheme != "vision-rope")
        ThrowUsage("--view grid", fmt::format("needs a 2-D encoding (sincos-2d, vision-rope); '{}' is scheme '{}'",
                                              in.name, in.spec->scheme));
      if (g.grid_h <= 0 || g.grid_w <= 0)
        ThrowUsage("--view grid", fmt::format("needs the grid of '{}': give --grid HxW", in.name));
      const DenseTable t = TableOf(in, o);
      return GridView({in.name, &t}, g.grid_h, g.grid_w, g.cls_token || o.spec.extra.cls_token, o.patches);
    }
    case ViewKind::kColumns:
    case ViewKind::kCollisions:
    case ViewKind::kPrecision: {
      std::vector<DenseTable> tables;
      std::vector<DenseTable> exact;
      std::vector<Input> used = inputs;
      std::vector<std::string> recipes;
      if (view == ViewKind::kPrecision) {
        // With a file, the --scheme flags are the file's recipe (its exact
        // values), not a series of their own.
        const auto flags = std::find_if(used.begin(), used.end(), [](const Input& i) { return i.from_flags; });
        std::optional<SchemeSpec> flag_spec;
        if (flags != used.end() && std::any_of(used.begin(), used.end(), [](const Input& i) { return !i.spec; })) {
          flag_spec = flags->spec;
          used.erase(flags);
        }
        for (const Input& in : used) exact.push_back(ExactOf(in, o, flag_spec, &recipes.emplace_back()));
      }
      for (const Input& in : used) tables.push_back(TableOf(in, o));
      std::vector<NamedTable> named;
      for (std::size_t i = 0; i < used.size(); ++i) named.push_back({used[i].name, &tables[i]});
      if (view == ViewKind::kColumns) {
        std::vector<std::int64_t> cols = o.columns;
        if (cols.empty())
          for (std::int64_t c = 4; c < 8 && c < tables[0].info.cols; ++c) cols.push_back(c);
        if (cols.empty()) cols.push_back(0);
        if (cols.size() > 64) ThrowUsage("--columns", "at most 64 columns");
        return ColumnsView(named, cols);
      }
      if (view == ViewKind::kCollisions) {
        std::vector<DType> dtypes;
        for (const std::string& n : o.collision_dtypes) {
          const auto d = DTypeFromName(n);
          if (!d || (*d != DType::kBFloat16 && *d != DType::kFloat16))
            ThrowUsage(fmt::format("--collision-dtype '{}'", n), "expected bfloat16 or float16");
          dtypes.push_back(*d);
        }
        if (dtypes.empty()) dtypes = {DType::kBFloat16, DType::kFloat16};
        ViewData v = CollisionsView(named, dtypes, o.window);
        // RoPE specs: also the rows a model computes with its positions in
        // the low-precision type (where the collisions are).
        for (std::size_t i = 0; i < inputs.size(); ++i) {
          if (!inputs[i].spec || inputs[i].spec->scheme != "rope") continue;
          const RopeSource r = RopeSourceFromSpec(*inputs[i].spec, inputs[i].name);
          for (DType d : dtypes) {
            const DenseTable t = RopeRowsWithPositionsIn(r.theta, tables[i].info.rows, d);
            const std::string name = inputs[i].name + ", positions";  // + " in <dtype>"
            ViewData extra = CollisionsView({{name, &t}}, {d}, o.window);
            for (auto& s : extra.series) v.series.push_back(std::move(s));
          }
        }
        if (v.series.size() > 64) ThrowUsage("--view collisions", "at most 64 curves");
        return v;
      }
      std::vector<const DenseTable*> ex;
      for (const auto& e : exact) ex.push_back(&e);
      return PrecisionView(named, ex, recipes);
    }
    case ViewKind::kDecay:
      break;
  }
  ThrowUsage("--view", "decay is drawn by pe dot itself");
}

}  // namespace

std::optional<ViewKind> PickDotView(const DotOptions& o) {
  if (!o.view.empty()) {
    const ViewKind v = ParseViewKind(o.view);
    if (v == ViewKind::kDecay) return std::nullopt;
    return v;
  }
  if (o.from >= 0 || !o.matrix.empty()) return std::nullopt;  // the decay path's own modes
  std::string scheme;
  if (!o.inputs.empty()) {
    if (const auto s = ParseInlineSpec(o.inputs[0])) scheme = s->flags.scheme;
    else if (Tensor(o).empty() && IsRopeFile(o.inputs[0])) return ViewKind::kQk;
    else scheme = MetaText(FirstTensorInfo(o.inputs[0]).meta, "scheme");  // a file pe wrote names its scheme
  } else if (FlagSeries(o)) {
    scheme = o.spec.scheme;
  }
  if (scheme.empty()) return std::nullopt;
  std::string canon;
  try {
    canon = std::string(FindScheme(scheme).name);
  } catch (const Error&) {
    return std::nullopt;  // reported by the decay path
  }
  const ViewKind v = DefaultView(canon, !Tensor(o).empty());
  if (v == ViewKind::kDecay) return std::nullopt;
  return v;
}

bool CurveToStdout(const DotOptions& o, bool stdout_tty, bool explicit_format) {
  if (IsStdStream(o.output)) return true;  // -o - asks for it
  if (!o.output.empty()) return false;
  if (!o.plot.empty() || !o.matrix.empty()) return false;  // a picture was the point
  return !stdout_tty || explicit_format;
}

void AddPlotControlFlags(CLI::App& cmd, DotOptions& o) {
  const char* g = "Views and plot controls";
  cmd.add_option("--view", o.view,
                 "What to compute and draw: decay, qk, bound, spectrum, ratio, temperature, heads, bias, offsets, buckets, grid, "
                 "columns, precision, collisions (default by scheme: rope → qk, alibi/kerple/sandwich → heads, "
                 "t5-bucket/deberta-bucket/relative-index → buckets, sincos-2d → grid, else decay); e.g. "
                 "pe dot t5-bucket --view buckets --plot t5.png")
      ->type_name("VIEW")
      ->group(g);
  cmd.add_option("--title", o.title, "Plot title")->type_name("TEXT")->group(g);
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
                                         "when the grid has over 256 cells)")
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
    ThrowUsage(fmt::format("--format '{}'", format), "pe dot writes csv or json");
  const bool discard = o.output == "/dev/null";
  if (format.empty() && !o.output.empty() && !IsStdStream(o.output) && !discard) {
    const auto f = FormatFromExtension(o.output);
    if (f == Format::kCsv) format = "csv";
    else if (f == Format::kJson) format = "json";
    else ThrowUsage(fmt::format("-o '{}'", o.output), "pe dot writes .csv or .json; or give --format csv|json");
  }
  const bool explicit_format = !format.empty();
  if (format.empty()) format = "csv";
  if (!o.matrix.empty()) ThrowUsage("--matrix", fmt::format("draws the decay view's matrix, not --view {}", ViewKindName(view)));
  if (o.from >= 0) ThrowUsage("--from", fmt::format("belongs to the decay view, not --view {}", ViewKindName(view)));
  const plot::PlotControls controls = Controls(o);
  if (!o.plot.empty()) plot::ImageFormatFromPath(o.plot, "--plot");

  const std::vector<Input> inputs = Inputs(o);
  const ViewData data = Compute(view, o, inputs);

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
  if (!o.plot.empty()) plot::RenderView(data, controls, o.plot, "--plot");
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
