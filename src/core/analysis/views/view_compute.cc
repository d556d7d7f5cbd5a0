#include "core/analysis/views/view_compute.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <tuple>

#include "core/analysis/identify/identify_rope.h"
#include "core/analysis/verify/reference_spec.h"
#include "core/analysis/views/relative_views.h"
#include "core/analysis/views/rope_views.h"
#include "core/analysis/stats.h"
#include "core/analysis/views/table_views.h"
#include "core/spec/params.h"
#include "core/base/error.h"
#include "core/formats/format.h"
#include "core/base/output.h"
#include "core/schemes/inline_spec.h"
#include "core/base/table_set.h"

namespace pe {
namespace {

bool HasTensor(const std::vector<std::string>& names, const char* n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}



DenseTable ReadTensor(const std::string& path, const std::string& tensor) {
  OpenOptions oo;
  oo.dataset = tensor;
  auto t = OpenTable(path, oo);
  return ReadAll(*t);
}

}  // namespace

RopeSource RopeSourceOf(const ViewInput& in) {
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
  if (names.size() <= 1) {
    // One table: the frequencies of its identification as RoPE (a bare cos
    // or sin table, as pe inspect reads it).
    const auto t = OpenTable(in.path, OpenOptions{});
    const TableStats stats = ComputeStats(*t);
    const RopeIdentification id = IdentifyRope(*t, stats);
    if (id.detected && id.matched) return RopeSourceFromSpec(id.spec, in.name);
    if (id.detected && !id.omega.empty()) {  // measured, unexplained by a recipe: the measured ω
      RopeSource s;
      s.name = in.name;
      s.theta = id.omega;
      std::sort(s.theta.begin(), s.theta.end(), std::greater<>());
      s.attention_factor = id.amplitude;
      s.context = static_cast<double>(t->info().rows);
      return s;
    }
    if (id.detected)
      ThrowUsage(fmt::format("input '{}'", in.name),
                 fmt::format("reads as {} but its frequencies were not measured ({}): give its recipe as a spec, "
                             "e.g. rope:head-dim={}{}",
                             id.Describe(), id.reason.empty() ? "no recipe matched" : id.reason,
                             id.spec.d_model > 0 ? id.spec.d_model : id.shape.rotary_dim,
                             id.spec.base > 0 ? fmt::format(",base={}", id.spec.base) : std::string()));
  }
  ThrowUsage(fmt::format("input '{}'", in.name),
             "has no inv_freq tensor nor cos and sin tensors and does not read as a RoPE cos or sin table: a rotary "
             "view needs a RoPE file or spec");
}

namespace {

DenseTable TableOf(const ViewInput& in, const ViewOptions& o) {
  if (in.table) return *in.table;
  if (in.spec) {
    auto g = BuildInline(in.name, [&] { return MakeGenerator(*in.spec); });
    return ReadAll(*g);
  }
  return ReadTensor(in.path, o.tensor);
}

// Heads × offsets from a file: an ALiBi set (its slopes), or a kerple /
// sandwich table (HeadBiasFromTable).
HeadBias HeadBiasOfFile(const ViewInput& in, std::int64_t max_d) {
  const std::vector<std::string> names = ListTensorNames(in.path);
  if (HasTensor(names, "slopes")) {
    std::vector<double> slopes = ReadTensor(in.path, "slopes").values;
    if (slopes.size() > 4096) ThrowInput(fmt::format("'{}'", in.name), "more than 4096 slopes");
    return AlibiHeadBias(in.name, slopes, max_d);
  }
  return HeadBiasFromTable(in.name, ReadTensor(in.path, ""), max_d);
}

// The rows (max_len), and the columns (d_model) where not given, of a
// scheme spec that stands beside table file `in`: the file's shape. Only
// for a tensor whose columns are the model's (the whole table, cos, sin).
void FillFromFile(SchemeSpec* spec, const ViewInput& in, const std::string& tensor) {
  if (spec->max_len != 0 && spec->d_model != 0) return;
  OpenOptions oo;
  oo.dataset = tensor;
  const TableInfo info = OpenTable(in.path, oo)->info();
  if (spec->max_len == 0) spec->max_len = info.rows;
  if (spec->d_model == 0 && (tensor.empty() || tensor == "cos" || tensor == "sin")) spec->d_model = info.cols;
}

// The exact (float64) values of a precision input: its spec in float64;
// for a file, the --scheme flags when given, else the recipe its metadata
// records (as pe verify resolves it), one tensor of a multi-tensor scheme.
DenseTable ExactOf(const ViewInput& in, const ViewOptions& o, const std::optional<SchemeSpec>& flags, std::string* recipe) {
  if (!in.spec && o.tensor.empty()) {
    const std::vector<std::string> names = ListTensorNames(in.path);
    if (names.size() > 1) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      ThrowUsage("--view precision", fmt::format("'{}' holds several tensors ({}): name one with --tensor", in.name, list));
    }
  }
  std::optional<SchemeSpec> e = in.spec ? in.spec : flags;
  if (!in.spec && flags && flags->max_len != 0) {  // the one real conflict: the recipe's rows are not the file's
    OpenOptions oo;
    oo.dataset = o.tensor;
    const std::int64_t rows = OpenTable(in.path, oo)->info().rows;
    if (flags->max_len != rows)
      ThrowUsage(fmt::format("--max-len {}", flags->max_len),
                 fmt::format("conflicts with '{}', which has {} rows (the precision view compares them row by row; "
                             "leave --max-len out to take the file's)",
                             in.name, rows));
  }
  if (!e) {
    OpenOptions oo;
    oo.dataset = o.tensor;
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
    e->tensor = o.tensor;
    // The recipe's rows, and its columns when it names none, are the file's
    // (a different --max-len or --d-model is refused by PrecisionView).
    FillFromFile(&*e, in, o.tensor);
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

// What input `in` is, for a subtitle: the spec as written, or the file's
// name, shape and dtype with the scheme its metadata records.
std::string InputParams(const ViewInput& in) {
  if (!in.params.empty()) return in.params;
  if (in.spec) return SpecSummary(*in.spec);
  const auto slash = in.path.find_last_of('/');
  std::string out = slash == std::string::npos ? in.path : in.path.substr(slash + 1);
  const TableInfo info = FirstTensorInfo(in.path);
  if (info.rows > 0) out += fmt::format(" · {} × {} {}", info.rows, info.cols, Traits(info.dtype).name);
  if (const std::string scheme = MetaText(info.meta, "scheme"); !scheme.empty()) {
    out += " · " + scheme;
    for (const char* key : {"d_model", "max_len", "base", "grid"})
      if (const std::string v = MetaText(info.meta, key); !v.empty()) out += fmt::format(" {}={}", key, v);
  }
  return out;
}

// The subtitle of a view that set none: the parameters of its input (with
// its label, when the legend shows a label), or of each labelled input.
std::string InputsSubtitle(const std::vector<ViewInput>& inputs) {
  std::string out;
  for (const ViewInput& in : inputs) {
    const std::string params = InputParams(in);
    const bool labelled = in.name != params && in.name != in.path.substr(in.path.find_last_of('/') + 1);
    if (inputs.size() > 1 && !labelled) continue;  // the legend already names it
    out += (out.empty() ? "" : " · ") + (labelled ? in.name + ": " + params : params);
  }
  if (out.empty()) {  // several inputs the legend names: their parameters when they fit a line
    for (const ViewInput& in : inputs) out += (out.empty() ? "" : " · ") + InputParams(in);
    if (out.size() > 120) out = fmt::format("{} inputs, named in the legend", inputs.size());
  }
  return out;
}

// The rotary parameters a q·k / bound / spectrum picture depends on:
// the pairs and their wavelength range, the context.
std::string RopeParams(const RopeSource& s) {
  double lo = INFINITY, hi = 0;
  for (double t : s.theta)
    if (t > 0) lo = std::min(lo, 2 * M_PI / t), hi = std::max(hi, 2 * M_PI / t);
  std::string out = fmt::format("{} pairs (d = {})", s.theta.size(), 2 * s.theta.size());
  if (hi > 0) out += fmt::format(" · wavelengths {:.3g}…{:.3g}", lo, hi);
  if (s.context > 0) out += fmt::format(" · context {}", s.context);
  return out;
}

}  // namespace

std::string SpecSummary(const SchemeSpec& s) {
  const bool rotary = s.scheme == "rope" || s.scheme == "xpos";
  std::string out = s.scheme;
  auto add = [&out](const std::string& key, const std::string& value) { out += " · " + key + "=" + value; };
  if (s.d_model > 0) add(rotary ? "head_dim" : "d_model", fmt::format("{}", s.d_model));
  if (s.max_len > 0) add("max_len", fmt::format("{}", s.max_len));
  if (s.grid_h > 0) add("grid", fmt::format("{}x{}", s.grid_h, s.grid_w));
  if (s.heads > 0) add("heads", fmt::format("{}", s.heads));
  if (s.given.count("base") || rotary || s.scheme == "sinusoidal" || s.scheme == "sincos-2d")
    add("base", fmt::format("{}", s.base));
  if (s.start != 0) add("start", fmt::format("{}", s.start));
  if (!s.rope_scaling.empty() && s.rope_scaling != "none")
    add("rope_scaling", s.rope_scaling + (s.factor > 0 ? fmt::format(" ×{}", s.factor) : ""));
  if (s.cls_token) out += " · cls_token";
  for (const auto& [key, v] : {std::pair{"layout", &s.layout}, {"tensor", &s.tensor}, {"variant", &s.variant},
                               {"r1", &s.r1}, {"r2", &s.r2}, {"mrope_section", &s.mrope_section},
                               {"convention", &s.convention}})
    if (!v->empty()) add(key, *v);
  // The scheme's other parameters, when given (their defaults go unsaid).
  const std::pair<const char*, std::string> given[] = {
      {"kerple_form", s.kerple_form},
      {"alibi_bias", s.alibi_bias},
      {"max_bias", fmt::format("{}", s.max_bias)},
      {"num_buckets", fmt::format("{}", s.num_buckets)},
      {"max_distance", fmt::format("{}", s.max_distance)},
      {"bucket_size", fmt::format("{}", s.bucket_size)},
      {"max_position", fmt::format("{}", s.max_position)},
      {"max_relative_position", fmt::format("{}", s.max_relative_position)},
      {"scale_base", fmt::format("{}", s.scale_base)},
      {"original_max_position_embeddings", fmt::format("{}", s.original_max_position_embeddings)},
      {"seed", fmt::format("{}", s.seed)},
      {"sigma", fmt::format("{}", s.sigma)},
      {"bidirectional", s.bidirectional ? "true" : "false"},
  };
  for (const auto& [key, value] : given)
    if (s.given.count(key)) add(key, value);
  if (s.dtype != DType::kFloat32) add("dtype", std::string(Traits(s.dtype).name));
  return out;
}

namespace {

// The rotary views (qk, bound, spectrum, ratio, temperature) of RoPE inputs.
ViewData RotaryViewOf(ViewKind view, const std::string& vname, const ViewOptions& o,
                      const std::vector<ViewInput>& inputs) {
  std::vector<RopeSource> src;
  for (const ViewInput& in : inputs) {
    if (in.spec && in.spec->scheme != "rope" && in.spec->scheme != "xpos")
      ThrowUsage(fmt::format("--view {}", vname),
                 fmt::format("needs a rotary input (rope); '{}' is scheme '{}'", in.name, in.spec->scheme));
    src.push_back(RopeSourceOf(in));
  }
  std::int64_t max_k = o.max_offset;
  if (max_k < 0) {
    double ctx = 0;
    for (const RopeSource& s : src) ctx = std::max(ctx, s.context);
    max_k = ctx > 1 ? static_cast<std::int64_t>(ctx) - 1 : 4095;
  }
  if (max_k > (std::int64_t{1} << 40)) ThrowUsage("--max-offset", "too large (at most 2^40)");
  ViewData v = view == ViewKind::kQk          ? RopeDecayView(src, max_k, true, false)
               : view == ViewKind::kBound     ? RopeDecayView(src, max_k, false, true)
               : view == ViewKind::kSpectrum  ? RopeSpectrumView(src)
               : view == ViewKind::kRatio     ? RopeRatioView(src)
                                              : TemperatureView(src, max_k);
  // One input: what it is and the rotary numbers the curve depends on.
  if (src.size() == 1) v.subtitle = InputsSubtitle(inputs) + " · " + RopeParams(src[0]);
  return v;
}

// The per-head bias views (heads, offsets, bias panels) of one input; offsets
// also takes a learned bias table with the t5-bucket spec that indexes it.
ViewData HeadBiasViewOf(ViewKind view, const std::string& vname, const ViewOptions& o,
                        const std::vector<ViewInput>& inputs) {
  // A learned table and the t5-bucket spec that indexes it.
  if (inputs.size() == 2 && !inputs[0].spec && inputs[1].spec) {
    const DenseTable w = TableOf(inputs[0], o);
    const NamedSpec b{inputs[1].name, *inputs[1].spec};
    const std::int64_t max_r =
        o.max_offset >= 0 ? o.max_offset : (b.spec.scheme == "t5-bucket" ? DefaultBucketReach(b.spec) : 1);
    return LearnedBucketView(inputs[0].name, w, b, max_r);
  }
  if (inputs.size() != 1)
    ThrowUsage(fmt::format("--view {}", vname),
               view == ViewKind::kOffsets ? "takes one input (one model's heads), or a learned bias table and "
                                            "the t5-bucket spec that indexes it"
                                          : "takes one input (one model's heads)");
  const ViewInput& in = inputs[0];
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

// The bucket view: one file, or any number of bucketed specs.
ViewData BucketViewOf(const ViewOptions& o, const std::vector<ViewInput>& inputs) {
  std::vector<NamedSpec> specs;
  for (const ViewInput& in : inputs) {
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

// The grid view: one 2-D table, or several side by side (each with its
// grid and prefix rows).
ViewData GridViewOf(const ViewOptions& o, const std::vector<ViewInput>& inputs) {
  // --grid: one HxW for every input, or one per input ("14x14,24x24").
  std::vector<std::string> grids;
  for (std::size_t a = 0; !o.grid.empty() && a <= o.grid.size();) {
    const std::size_t b = std::min(o.grid.find(',', a), o.grid.size());
    grids.push_back(o.grid.substr(a, b - a));
    a = b + 1;
  }
  if (grids.size() > 1 && grids.size() != inputs.size())
    ThrowUsage(fmt::format("--grid '{}'", o.grid),
               fmt::format("give one HxW for every input or one per input ({} inputs, {} grids)", inputs.size(),
                           grids.size()));
  if (o.cls_token && o.prefix_tokens >= 0 && o.prefix_tokens != 1)
    ThrowUsage("--cls-token", fmt::format("is one prefix row; given with --prefix-tokens {}", o.prefix_tokens));
  const bool prefix_given = o.prefix_tokens >= 0 || o.cls_token;
  const std::int64_t prefix = o.prefix_tokens >= 0 ? o.prefix_tokens : (o.cls_token ? 1 : 0);
  std::vector<DenseTable> tables;
  tables.reserve(inputs.size());
  std::vector<GridTable> grid_tables;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const ViewInput& in = inputs[i];
    SchemeSpec g;
    std::int64_t pre = in.prefix_tokens >= 0 ? in.prefix_tokens : prefix;
    if (!in.grid.empty()) {
      ParseGrid(in.grid, &g);
    } else if (in.table) {
      // a table made in memory: its grid is inferred below
    } else if (in.spec) {
      if (in.spec->scheme != "sincos-2d" && in.spec->scheme != "vision-rope")
        ThrowUsage("--view grid", fmt::format("needs a 2-D encoding (sincos-2d, vision-rope) or a table file; '{}' is "
                                              "scheme '{}'",
                                              in.name, in.spec->scheme));
      g = *in.spec;
      if (g.cls_token) pre = 1;
    } else if (!grids.empty()) {
      ParseGrid(grids.size() == 1 ? grids[0] : grids[i], &g);
    } else if (const TableInfo m = FirstTensorInfo(in.path); !MetaText(m.meta, "grid").empty()) {
      ParseGrid(MetaText(m.meta, "grid"), &g);  // a sincos-2d / vision-rope file records its grid as --grid takes it
      if (!prefix_given) pre = MetaText(m.meta, "cls_token") == "1" ? 1 : 0;
    }
    tables.push_back(TableOf(in, o));
    if (g.grid_h <= 0 || g.grid_w <= 0)  // a learned table: a square grid after the prefix rows
      std::tie(g.grid_h, g.grid_w) = InferSquareGrid(in.name, tables.back().info.rows, pre);
    grid_tables.push_back({{in.name, &tables.back()}, g.grid_h, g.grid_w, pre});
  }
  ViewData v = grid_tables.size() == 1 ? GridView(grid_tables[0], o.patches) : GridCompareView(grid_tables, o.patches);
  v.subtitle = InputsSubtitle(inputs);
  return v;
}

// The views of a table's values (columns, collisions, precision).
ViewData TableValuesViewOf(ViewKind view, const ViewOptions& o, const std::vector<ViewInput>& inputs) {
  std::vector<DenseTable> tables;
  std::vector<DenseTable> exact;
  std::vector<ViewInput> used = inputs;
  std::vector<std::string> recipes;
  if (view == ViewKind::kPrecision) {
    // With a file, the --scheme flags are the file's recipe (its exact
    // values), not a series of their own.
    const auto flags = std::find_if(used.begin(), used.end(), [](const ViewInput& i) { return i.from_flags; });
    std::optional<SchemeSpec> flag_spec;
    if (flags != used.end() && std::any_of(used.begin(), used.end(), [](const ViewInput& i) { return !i.spec; })) {
      flag_spec = flags->spec;
      used.erase(flags);
    }
    for (const ViewInput& in : used) exact.push_back(ExactOf(in, o, flag_spec, &recipes.emplace_back()));
  }
  if (view != ViewKind::kPrecision) {  // the --scheme flags beside a file: a series as long as the file
    const auto file = std::find_if(used.begin(), used.end(), [](const ViewInput& i) { return !i.spec; });
    if (file != used.end())
      for (ViewInput& in : used)
        if (in.from_flags && in.spec) FillFromFile(&*in.spec, *file, o.tensor);
  }
  for (const ViewInput& in : used) tables.push_back(TableOf(in, o));
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

ViewData ComputeViewOf(ViewKind view, const ViewOptions& o, const std::vector<ViewInput>& inputs) {
  const std::string vname = ViewKindName(view);
  switch (view) {
    case ViewKind::kQk:
    case ViewKind::kBound:
    case ViewKind::kSpectrum:
    case ViewKind::kRatio:
    case ViewKind::kTemperature:
      return RotaryViewOf(view, vname, o, inputs);
    case ViewKind::kOffsets:
    case ViewKind::kHeads:
    case ViewKind::kBias:
      return HeadBiasViewOf(view, vname, o, inputs);
    case ViewKind::kBuckets:
      return BucketViewOf(o, inputs);
    case ViewKind::kGrid:
      return GridViewOf(o, inputs);
    case ViewKind::kColumns:
    case ViewKind::kCollisions:
    case ViewKind::kPrecision:
      return TableValuesViewOf(view, o, inputs);
    case ViewKind::kDecay:
      break;
  }
  ThrowUsage("--view", "decay is drawn by pe dot itself");
}

}  // namespace

ViewData ComputeView(ViewKind view, const ViewOptions& o, const std::vector<ViewInput>& inputs) {
  ViewData v = ComputeViewOf(view, o, inputs);
  // Every picture says what it shows: a view that set no subtitle gets its
  // inputs' parameters.
  if (v.subtitle.empty()) v.subtitle = InputsSubtitle(inputs);
  return v;
}

std::vector<ViewInput> ViewInputsOf(const std::vector<std::string>& texts) {
  std::vector<ViewInput> all;
  for (const std::string& text : texts) {
    ViewInput i;
    if (auto parsed = ParseInlineSpecText(text)) {
      i.spec = std::move(parsed->spec);
      i.name = text;
      i.params = text;
    } else {
      i.path = text;
      const auto slash = text.find_last_of('/');
      i.name = slash == std::string::npos ? text : text.substr(slash + 1);
    }
    all.push_back(std::move(i));
  }
  return all;
}

ViewKind ChooseView(const std::string& first_input, const std::string& tensor, const std::string& flags_scheme) {
  std::string scheme;
  if (!first_input.empty()) {
    if (const auto s = ParseInlineSpecText(first_input)) scheme = s->spec.scheme;
    else if (tensor.empty() && IsRopeFile(first_input)) return ViewKind::kQk;
    else scheme = MetaText(FirstTensorInfo(first_input).meta, "scheme");  // a file pe wrote names its scheme
  } else {
    scheme = flags_scheme;
  }
  if (scheme.empty()) return ViewKind::kDecay;
  std::string canon;
  try {
    canon = std::string(FindScheme(scheme).name);
  } catch (const Error&) {
    return ViewKind::kDecay;  // reported by the decay path
  }
  return DefaultView(canon, !tensor.empty());
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

}  // namespace pe
