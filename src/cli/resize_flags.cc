#include "resize_flags.h"

#include <pe/error.h>

namespace pe::cli {

void AddResizeFlags(CLI::App& cmd, ResizeFlags& f) {
  f.cmd = &cmd;
  const std::string g = "Resizing a learned table";
  cmd.add_option("--resize-from", f.from,
                 "Learned table to resize: a file, FILE:TENSOR, or a model folder (docs/schemes.md)")
      ->type_name("SRC")->group(g);
  cmd.add_option("--resize-rule", f.rule, "hf-vit, siglip2, timm, dinov2, hf-dinov2, qwen3-vl, bert-tile, linear, linear-torch2 "
                                          "(default: from the folder's config model_type)")
      ->type_name("RULE")->group(g);
  cmd.add_option("--mode", f.mode, "Interpolation: nearest, linear, bilinear, bicubic (default: the rule's)")
      ->type_name("MODE")->group(g);
  cmd.add_flag("--antialias", f.antialias, "Antialias (F.interpolate antialias=True)")->group(g);
  cmd.add_flag("--no-antialias", f.no_antialias, "No antialias")->group(g);
  cmd.add_flag("--align-corners", f.align_corners, "align_corners=True")->group(g);
  cmd.add_flag("--no-align-corners", f.no_align_corners, "align_corners=False")->group(g);
  cmd.add_option("--prefix-tokens", f.prefix_tokens, "Rows kept before the grid (CLS, registers; default: the rule's)")
      ->type_name("N")->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))->group(g);
  cmd.add_option("--offset", f.offset, "bert-tile: rows before position 0 (RoBERTa 2)")
      ->type_name("N")->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))->group(g);
  cmd.add_option("--from-grid", f.from_grid, "Source grid HxW (default: square, or config image_size/patch_size)")
      ->type_name("HxW")->group(g);
  cmd.add_option("--interpolate-offset", f.interpolate_offset, "dinov2: added to the target before the scale factor (0: by size)")
      ->type_name("X")->group(g)->each([&f](const std::string&) { f.interpolate_offset_given = true; });
}

ResizeOptions ResizeOptionsFrom(const ResizeFlags& f, const LearnedTable& t, const std::string& grid,
                                std::int64_t max_len, std::int64_t frames, std::int64_t merge_size) {
  ResizeOptions o;
  o.rule = f.rule.empty() ? ResizeRuleOf(t.model_type) : f.rule;
  o.offset = f.offset;
  o.mode = f.mode;
  if (f.antialias && f.no_antialias) ThrowUsage("--antialias", "given with --no-antialias");
  if (f.align_corners && f.no_align_corners) ThrowUsage("--align-corners", "given with --no-align-corners");
  if (f.antialias) o.antialias = true;
  if (f.no_antialias) o.antialias = false;
  if (f.align_corners) o.align_corners = true;
  if (f.no_align_corners) o.align_corners = false;
  o.prefix_tokens = f.prefix_tokens;
  if (f.interpolate_offset_given) o.interpolate_offset = f.interpolate_offset;
  o.length = max_len;
  o.frames = frames;
  o.merge_size = merge_size;
  return ResizeOptionsFor(o, t, grid, f.from_grid);
}

}  // namespace pe::cli
