// pe/resize.h: resize a learned position table exactly as a model does.
//
// A learned table (ViT's [1 + 14*14, 768] pos_embed, RoBERTa's [514, 768]
// position_embeddings) has to be resized when a model sees another image
// size or a longer text, and each model family does it its own way. A rule
// names one of them; every number it uses (mode, antialias, align_corners,
// prefix rows kept, DINOv2's +0.1) can be overridden, which is how a port's
// mistake is reproduced and named (pe verify --resize-from). The
// interpolation is torch's F.interpolate on CPU in float32, transcribed
// weight for weight and sum for sum (docs/schemes.md, "Resizing learned
// tables"): the result is the bytes the model's own code makes.
//
// Rules ("pe generate --resize-rule"; sources in docs/schemes.md):
//   hf-vit    transformers ViT/DeiT/CLIP/SigLIP interpolate_pos_encoding:
//             bicubic to the target grid, no antialias, the CLS row kept
//   siglip2   transformers Siglip2 resize_positional_embeddings: bilinear,
//             antialias, no prefix; rows past the grid (`length`) = row 0
//   timm      timm resample_abs_pos_embed: bicubic, antialias, prefix
//             tokens kept (1 by default)
//   dinov2    the original DINOv2 repository's interpolate_pos_encoding:
//             bicubic by scale factor (to + 0.1) / from, the CLS row kept
//   hf-dinov2 transformers' Dinov2Embeddings.interpolate_pos_encoding:
//             bicubic by size, the CLS row kept (a dinov2 config.json's rule)
//   qwen3-vl  transformers Qwen3-VL fast_pos_embed_interpolate: bilinear on
//             linspace(0, G-1, n), then the spatial-merge order
//   bert-tile the Longformer recipe: rows before `offset` kept, the rest
//             tiled to `length` rows
//   linear    F.interpolate(mode="linear") along the positions to `length`,
//             torch 1.13's kernel (bit-exact with Debian's python3-torch)
//   linear-torch2 the same with torch 2.x's taps (coordinates and weights
//             in float: UpSample.h's opmath_t); docs/schemes.md says which
//             torch versions each rule is exact for
//   ""        no rule: F.interpolate of the grid with the knobs given
//
// Example:
//   pe::ResizeOptions o;
//   o.rule = "hf-vit";
//   o.to_h = o.to_w = 24;                               // 384 / 16
//   pe::ResizedTable t = pe::Resize(vit.data(), 197, 768, o);  // 577 x 768
#pragma once

#include <pe/export.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pe/error.h>
#include <pe/table.h>

namespace pe {

struct ResizeOptions {
  std::string rule;                  ///< see above; "" = the knobs alone
  std::int64_t from_h = 0, from_w = 0;  ///< source grid; 0: square, from the rows after the prefix
  std::int64_t to_h = 0, to_w = 0;      ///< target grid (2-D rules)
  std::int64_t length = 0;           ///< 1-D rules: rows of the result; siglip2: rows padded with row 0
  std::string mode;                  ///< "nearest", "linear", "bilinear", "bicubic"; "" = the rule's
  std::optional<bool> antialias;     ///< unset: the rule's
  std::optional<bool> align_corners; ///< unset: the rule's
  std::int64_t prefix_tokens = -1;   ///< rows kept before the grid (CLS, registers); -1: the rule's
  std::int64_t offset = -1;          ///< bert-tile: rows before position 0 (RoBERTa 2); -1: the rule's
  std::optional<double> interpolate_offset;  ///< dinov2: added to the target before the scale factor (0.1); 0 = by size
  std::int64_t merge_size = 0;       ///< qwen3-vl: spatial_merge_size (0: 2)
  std::int64_t frames = 1;           ///< qwen3-vl: frames t (the grid repeated)
};

struct ResizedTable {
  std::int64_t rows = 0, cols = 0;
  std::vector<float> values;  ///< rows * cols, row-major
  std::string description;    ///< "hf-vit: bicubic 14x14 -> 24x24, align_corners=false, antialias=false, 1 prefix row kept"
};

/// The largest table Resize builds (it is built in memory): 4 GiB.
inline constexpr std::uint64_t kMaxResizedBytes = std::uint64_t{4} << 30;

/// Resizes `table` [rows, cols] (float32, row-major). Throws pe::Error
/// (usage) naming the flag for an unknown rule or mode, a grid that does not
/// match the rows, a knob the mode refuses, or a result of more than
/// kMaxResizedBytes (checked before anything is allocated).
PE_API ResizedTable Resize(const float* table, std::int64_t rows, std::int64_t cols, const ResizeOptions& options);

/// The rule names, in the order above.
PE_API std::vector<std::string> ResizeRules();

/// `table` as a Table of one float32 tensor "position_embeddings" (the
/// values copied) whose metadata names the rule (resize: its description)
/// and `source` (resize_source), for WriteTableFile: the file
/// `pe generate --resize-from` writes.
PE_API Table ResizedTableOf(const ResizedTable& table, const std::string& source);

// ---- a learned table from a file or a model folder ----------------------------

/// A learned table as float32 rows, with where it came from.
struct LearnedTable {
  std::int64_t rows = 0, cols = 0;
  std::vector<float> values;  ///< rows * cols, row-major
  std::string source;         ///< "vit/model.safetensors: vit.embeddings.position_embeddings"
  /// From the folder's config.json (its vision_config when it has one): 0 / empty / -1 when absent.
  std::string model_type;
  std::int64_t image_size = 0, patch_size = 0, merge_size = 0, pad_token_id = -1;
};

/// Reads `src`: a table file (npy, safetensors, HDF5, .pt, npz, JSON, CSV),
/// FILE:TENSOR for a file of several, or a model folder (its one learned
/// position table found by name, or FOLDER:TENSOR; config.json gives
/// model_type, image_size, patch_size, spatial_merge_size, pad_token_id).
/// `what` names src in errors ("--resize-from" gives "--resize-from 'x':
/// no such file or folder"). Throws pe::Error (kInput) for a missing or
/// unreadable source, (kUsage) for a folder with no or several position
/// tables.
PE_API LearnedTable ReadLearnedTable(const std::string& src, const std::string& what);

/// The rule model family `model_type` (config.json) resizes its table by:
/// vit, deit, clip, siglip, vit_mae, beit: hf-vit; siglip2: siglip2;
/// dinov2: hf-dinov2 (transformers' rule: a config.json is a transformers
/// folder); qwen3_vl: qwen3-vl; bert, roberta, xlm-roberta, camembert:
/// bert-tile. Empty for an empty model_type. Throws pe::Error (kUsage)
/// "--resize-rule: config model_type 'x' has no known rule; name one".
PE_API std::string ResizeRuleOf(const std::string& model_type);

/// `given` completed from `table`'s config and the grids as text, as
/// `pe generate --resize-from` does: the rule from model_type when none is
/// given; bert-tile's offset from pad_token_id (BERT: 0) when not given;
/// the target grid from `grid` ("HxW" or "N"), the source grid from
/// `from_grid`, else image_size / patch_size (2-D rules); merge_size from
/// the config when not given. Throws pe::Error (kUsage) naming the flag
/// for a bad grid (--grid, --from-grid) or interpolate_offset
/// (--interpolate-offset: finite, >= 0), and as ResizeRuleOf.
PE_API ResizeOptions ResizeOptionsFor(const ResizeOptions& given, const LearnedTable& table, const std::string& grid = "",
                               const std::string& from_grid = "");

// ---- a port's resized table against the rule ---------------------------------

/// A port's resized table compared with the rule's (`pe verify PORT
/// --resize-from ORIG`), and when they differ, the usual porting faults
/// that reproduce it: each is the rule with one setting changed (bilinear
/// for bicubic, antialias dropped or added, align_corners flipped, DINOv2's
/// +0.1 dropped, nearest), recomputed and compared; prefix rows (CLS,
/// registers) interpolated or dropped are found directly.
struct ResizeDiagnosis {
  ResizedTable expected;       ///< the rule's table
  bool same_shape = false;
  bool bit_exact = false;      ///< every value equal (-0 == +0)
  bool within_bound = false;   ///< |port - expected| <= bound everywhere: the port passes
  std::int64_t differing = 0;  ///< values that differ
  double max_abs = 0;          ///< largest |port - expected|
  std::int64_t worst_row = -1, worst_col = -1;
  double bound = 0;            ///< 2^-18 * max|original|: the tolerance pe's own kernels need
  /// The faults whose recomputation matches the port's table, each with how it matched.
  std::vector<std::string> faults;
  bool prefix_changed = false;  ///< prefix rows differ while the grid rows are right
};

/// Resizes `original` [rows, cols] by `options` and compares `port`
/// [port_rows, port_cols] with it; when they differ, tries the faults.
/// Throws pe::Error as Resize.
PE_API ResizeDiagnosis DiagnoseResize(const float* original, std::int64_t rows, std::int64_t cols, const ResizeOptions& options,
                               const float* port, std::int64_t port_rows, std::int64_t port_cols);

}  // namespace pe
