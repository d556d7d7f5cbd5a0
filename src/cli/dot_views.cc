#include "dot_views.h"

#include <fmt/format.h>

#include <memory>
#include <string>

#include "resize_flags.h"

namespace pe::cli {
namespace {

bool Given(const CLI::App* cmd, const char* name) {
  const CLI::Option* opt = cmd ? cmd->get_option_no_throw(name) : nullptr;
  return opt && opt->count() > 0;
}

}  // namespace

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

void SetResizeRequest(const DotOptions& o, pe::DotRequest* r) {
  // The first resize flag given, or "": with one, pe dot draws each table
  // beside its resized versions (the flags of pe generate --resize-from).
  for (const char* f : {"--resize-from", "--resize-rule", "--mode", "--antialias", "--no-antialias", "--align-corners",
                        "--no-align-corners", "--offset", "--from-grid", "--interpolate-offset"})
    if (Given(o.resize.cmd, f)) {
      r->resize_flag = f;
      break;
    }
  r->resize_from = o.resize.from;
  r->resize_rule = o.resize.rule;
  r->from_grid = o.resize.from_grid;
  r->prefix_tokens = o.resize.prefix_tokens;
  const ResizeFlags flags = o.resize;
  const std::string grid = o.spec.grid;
  r->read_learned = [flags, grid](const std::string& src) {
    auto t = std::make_shared<const LearnedTable>(ReadLearnedTable(src, "input"));
    pe::DotLearnedTable out;
    out.rows = t->rows;
    out.cols = t->cols;
    out.values = t->values;
    out.options = [flags, grid, t](const std::string& rule) {
      ResizeFlags f = flags;
      f.rule = rule;
      return ResizeOptionsFrom(f, *t, grid, 0, 1, 0);
    };
    return out;
  };
}

}  // namespace pe::cli
