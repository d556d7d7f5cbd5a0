#include "core/analysis/verify/resize_diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/numerics/upsample.h"
#include "core/schemes/resize_rules.h"

namespace pe::resize {
namespace {

struct Setting {
  Mode mode;
  bool antialias, align_corners;
  std::int64_t prefix;
};

// The settings a rule resolves to (as ApplyRule resolves them).
Setting Resolved(const ResizeOptions& o) {
  static const struct {
    const char* name;
    Mode mode;
    bool aa;
    std::int64_t prefix;
  } rules[] = {{"hf-vit", Mode::kBicubic, false, 1},  {"siglip2", Mode::kBilinear, true, 0},
               {"timm", Mode::kBicubic, true, 1},     {"dinov2", Mode::kBicubic, false, 1},
               {"hf-dinov2", Mode::kBicubic, false, 1}, {"linear", Mode::kLinear, false, 0},
               {"linear-torch2", Mode::kLinear, false, 0}};
  Setting s{Mode::kBicubic, false, false, 0};
  for (const auto& r : rules)
    if (o.rule == r.name) s = {r.mode, r.aa, false, r.prefix};
  if (!o.mode.empty())
    if (auto m = ModeFromName(o.mode)) s.mode = *m;
  if (o.antialias) s.antialias = *o.antialias;
  if (o.align_corners) s.align_corners = *o.align_corners;
  if (o.prefix_tokens >= 0) s.prefix = o.prefix_tokens;
  return s;
}

}  // namespace

TableCompare CompareTables(const float* a, std::int64_t rows, std::int64_t cols, const float* b, std::int64_t b_rows,
                           std::int64_t b_cols, double bound) {
  TableCompare c;
  c.same_shape = rows == b_rows && cols == b_cols;
  if (!c.same_shape) return c;
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    const bool nan_mismatch = std::isnan(a[i]) != std::isnan(b[i]);
    if (a[i] != b[i] && !(std::isnan(a[i]) && std::isnan(b[i]))) {
      ++c.differing;
      if (d > c.max_abs || nan_mismatch || c.worst_row < 0) {
        c.max_abs = nan_mismatch ? INFINITY : std::max(c.max_abs, d);
        c.worst_row = i / cols;
        c.worst_col = i % cols;
      }
    }
  }
  c.bit_exact = c.differing == 0;
  c.within_bound = c.bit_exact || c.max_abs <= bound;
  return c;
}

ResizeDiagnosis DiagnoseResize(const float* original, std::int64_t rows, std::int64_t cols, const ResizeOptions& o,
                               const float* port, std::int64_t port_rows, std::int64_t port_cols) {
  ResizeDiagnosis d;
  float peak = 0;
  for (std::int64_t i = 0; i < rows * cols; ++i)
    if (std::isfinite(original[i])) peak = std::max(peak, std::fabs(original[i]));
  d.bound = std::ldexp(static_cast<double>(peak), -18);
  d.expected = ApplyRule(original, rows, cols, o);
  d.result = CompareTables(port, port_rows, port_cols, d.expected.values.data(), d.expected.rows, d.expected.cols, d.bound);
  if (d.result.within_bound) return d;
  auto matches = [&](const ResizeOptions& alt, const std::string& name) {
    ResizedTable t;
    try {
      t = ApplyRule(original, rows, cols, alt);
    } catch (const Error&) {
      return;  // a variant the rule cannot make (a knob the mode refuses)
    }
    const TableCompare c = CompareTables(port, port_rows, port_cols, t.values.data(), t.rows, t.cols, d.bound);
    if (c.within_bound) d.faults.push_back(fmt::format("{} ({}: {})", name, c.bit_exact ? "bit-exact" : "within the bound", t.description));
  };
  const Setting s = Resolved(o);
  const bool grid_rule = o.rule != "qwen3-vl" && o.rule != "bert-tile";
  if (grid_rule) {
    for (Mode m : {Mode::kBilinear, Mode::kBicubic, Mode::kNearest}) {
      if (m == s.mode || s.mode == Mode::kLinear) continue;
      for (int aa = 0; aa < 2; ++aa) {
        ResizeOptions alt = o;
        alt.mode = std::string(ModeName(m));
        alt.antialias = aa ? !s.antialias : s.antialias;
        if (m == Mode::kNearest) alt.antialias = false, alt.align_corners = false;
        std::string name = fmt::format("{} where {} was meant", ModeName(m), ModeName(s.mode));
        if (aa && m != Mode::kNearest) name += s.antialias ? ", antialias missing" : ", antialias added";
        if (!aa || m != Mode::kNearest) matches(alt, name);
      }
    }
    if (s.mode == Mode::kBilinear || s.mode == Mode::kBicubic) {
      ResizeOptions alt = o;
      alt.antialias = !s.antialias;
      matches(alt, s.antialias ? "antialias missing" : "antialias added");
    }
    if (s.mode != Mode::kNearest) {
      ResizeOptions alt = o;
      alt.align_corners = !s.align_corners;
      matches(alt, fmt::format("align_corners flipped (align_corners={} where {} was meant)", !s.align_corners, s.align_corners));
    }
    if (o.rule == "dinov2") {
      ResizeOptions alt = o;
      const double off = o.interpolate_offset.value_or(0.1);
      alt.interpolate_offset = off != 0 ? 0.0 : 0.1;
      matches(alt, off != 0 ? "DINOv2's +0.1 missing (resized by size, not by scale factor (n + 0.1) / M)"
                            : "DINOv2's +0.1 added (resized by scale factor (n + 0.1) / M, not by size)");
    }
    if (o.rule == "hf-dinov2") {  // the original repository's rule in a transformers port
      ResizeOptions alt = o;
      alt.rule = "dinov2";
      matches(alt, "resized by the original DINOv2 repository's scale factor (n + 0.1) / M where transformers' "
                   "size was meant (--resize-rule dinov2)");
    }
    if (o.rule == "hf-vit") {  // transformers before 4.45 resized by DINO's scale factor
      ResizeOptions alt = o;
      alt.rule = "dinov2";
      matches(alt, "resized by scale factor (n + 0.1) / M (older transformers / DINO) where size was meant");
    }
  }
  // The other torch kernel of a 1-D linear resize (a port run on torch 2.x
  // against the 1.13 rule, or the reverse).
  if (o.rule == "linear" || o.rule == "linear-torch2") {
    ResizeOptions alt = o;
    alt.rule = o.rule == "linear" ? "linear-torch2" : "linear";
    matches(alt, o.rule == "linear" ? "torch 2.x's linear kernel (float coordinates; --resize-rule linear-torch2)"
                                    : "torch 1.13's linear kernel (double coordinates; --resize-rule linear)");
  }
  // Prefix rows changed while the grid is right.
  if (s.prefix > 0 && grid_rule && d.result.same_shape) {
    const std::int64_t p = std::min(s.prefix, port_rows);
    const TableCompare head = CompareTables(port, p, cols, original, p, cols, 0);
    const TableCompare rest = CompareTables(port + p * cols, port_rows - p, cols, d.expected.values.data() + p * cols,
                                            d.expected.rows - p, cols, d.bound);
    if (!head.bit_exact && rest.within_bound) {
      d.prefix_changed = true;
      d.faults.push_back(fmt::format("the {} prefix row(s) (CLS{}) were changed, e.g. interpolated with the grid; the grid rows are right",
                                     s.prefix, s.prefix > 1 ? ", registers" : ""));
    }
  }
  // A fault that reproduces the table bit for bit names it; those that only
  // come within the bound are then left out (bilinear upscaling is the same
  // with and without antialias).
  if (std::any_of(d.faults.begin(), d.faults.end(), [](const std::string& f) { return f.find("(bit-exact") != std::string::npos; }))
    d.faults.erase(std::remove_if(d.faults.begin(), d.faults.end(),
                                  [](const std::string& f) { return f.find("(within the bound") != std::string::npos; }),
                   d.faults.end());
  return d;
}

}  // namespace pe::resize
