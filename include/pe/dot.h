// pe/dot.h: `pe dot` as one request: the similarity of positions against
// their distance for files and specs, the views, the heatmaps, and every
// file and text the command makes of them.
//
// A DotRequest is `pe dot`'s command line as data: the inputs (table files
// and inline specs), the scheme flags as a pe::Spec, and each flag as a
// field of the same name. RunDot checks the whole request first (every
// flag, every output named), then computes — the decay curve of table rows
// (pe/analysis.h ComputeDot's numbers, streamed), one input's similarity
// heatmap (--matrix: RoPE inputs as q·k), or a view (pe/view.h) — then
// writes the files asked for (-o, --plot, --matrix; each atomically) and
// returns what belongs on the terminal. The CLI parses its flags into this
// struct, prints what RunDot returns and nothing else, so a C++ or Python
// caller gets `pe dot`'s files byte for byte and its error messages word
// for word. Errors name the flags as `pe dot` spells them ("--xlim '1,0':
// expected LO,HI with LO < HI, e.g. 0,1.5").
//
// Thread safety: RunDot keeps no state; distinct calls may run at once
// (their outputs should be distinct files).
//
// Example:
//   pe::DotRequest r;
//   r.inputs = {"sinusoidal:d-model=64,max-len=512,base=100", "pe.npy"};
//   r.output = "curves.csv";                  // pe dot ... -o curves.csv --plot decay.svg
//   r.plot = "decay.svg";
//   pe::DotOutput out = pe::RunDot(r);        // both files written; out.data empty
#pragma once

#include <pe/export.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <pe/error.h>
#include <pe/resize.h>
#include <pe/table.h>

namespace pe {

/// Told about each decay curve as it is computed (a long table takes
/// seconds to minutes). The default does nothing.
class PE_API DotObserver {
 public:
  virtual ~DotObserver() = default;
  /// Series `name`'s curve begins.
  virtual void Begin(const std::string& name) { (void)name; }
  /// (work done, work in all) in rows of the table; the last call is (rows, rows).
  virtual void Update(std::int64_t done, std::int64_t total) { (void)done, (void)total; }
  /// The curve is done. `timing`: where the time went, one line
  /// ("NAME: read 0.120 s, fft 0.300 s, ...") when DotRequest::timing, else
  /// empty. `warnings`: one line each ("NAME: 3 rows have norm 0; ...").
  virtual void End(const std::string& timing, const std::vector<std::string>& warnings) {
    (void)timing, (void)warnings;
  }
};

/// A learned table to draw beside its resized versions (--resize-rule),
/// as DotRequest::read_learned gives it.
struct DotLearnedTable {
  std::int64_t rows = 0, cols = 0;
  std::vector<float> values;  ///< rows × cols, row-major
  /// The pe::Resize options of one rule of --resize-rule for this table
  /// (the resize flags over what the source's config says). Throws
  /// pe::Error (kUsage) naming the flag at fault.
  std::function<ResizeOptions(const std::string& rule)> options;
};

/// `pe dot`'s flags (docs/dot.md). Unset fields are the flags' defaults.
struct DotRequest {
  static constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();

  // ---- inputs
  /// Table files and inline specs ("rope:head-dim=64,max-len=256"), one
  /// series each, in order.
  std::vector<std::string> inputs;
  /// The scheme flags given (--scheme, --d-model, --max-len, --grid, ...;
  /// keys as the flags without dashes), the scheme empty when --scheme was
  /// not given (then sinusoidal). One more series after the inputs when
  /// they set d_model, max_len or grid (a view's: or heads); with --view
  /// grid of files and no d_model/max_len, grid and cls_token are the
  /// files' grid instead. A flag the scheme does not take is refused as
  /// `pe generate` refuses it.
  Spec flags{""};
  std::string tensor;   ///< --tensor: of multi-tensor files, and of the flags' series
  std::string dataset;  ///< --dataset: the same as --tensor (give one name)

  // ---- the decay curve
  bool cosine = false;           ///< --cosine
  std::int64_t from = -1;        ///< --from P: row P against every row; -1: all pairs
  std::int64_t max_offset = -1;  ///< --max-offset K; -1: rows - 1 (views: their default)
  bool mean_only = false;        ///< --mean-only
  bool fast = false;             ///< --fast: min/max/std from float32 Gram blocks

  // ---- outputs
  /// -o: the curve file (.csv or .json); "-": standard
  /// output (DotOutput::data); "/dev/null": none; empty: standard output
  /// unless a picture is asked for without a format (see DotOutput::data).
  std::string output;
  std::string format;  ///< --output-format: "csv" or "json"; empty: by -o's extension, else csv
  bool json = false;   ///< --json: format "json"
  std::string plot;    ///< --plot FILE (.png/.svg/.pdf): the view's picture (the heatmap with view "matrix")
  /// --matrix FILE, one per input: its similarity heatmap (.png/.svg/.pdf),
  /// or its numbers (.csv: p,q,value). A RoPE input draws q·k.
  std::vector<std::string> matrix;
  std::int64_t matrix_size = 512;  ///< --matrix-size: positions per heatmap side, 1..4096
  std::string size;                ///< --size WxH; empty: the picture's default
  bool term = false;               ///< --term: the Unicode chart even when stdout is not a terminal

  // ---- views and plot controls
  std::string view;                 ///< --view; empty: by the first input's scheme (pe::DefaultViewName)
  std::string title;                ///< --title
  std::vector<std::string> labels;  ///< --label, one per input (series names in legends and files)
  bool log_x = false, log_y = false, linear_y = false;
  std::string xlim, ylim;           ///< --xlim/--ylim "LO,HI"
  double vmin = kUnset, vmax = kUnset;
  std::string cmap;                 ///< --cmap
  double train_len = kUnset;        ///< --train-len
  std::vector<std::int64_t> columns;          ///< --columns (view columns)
  std::int64_t window = 64;                   ///< --window (view collisions)
  std::vector<std::string> collision_dtypes;  ///< --collision-dtype
  std::vector<std::int64_t> patches;          ///< --patches (view grid)

  // ---- resized learned tables (view grid)
  /// The first resize flag given ("--resize-rule", "--mode", ...), named
  /// in errors; empty: "--resize-from", "--resize-rule" or "--from-grid"
  /// when that field is set, else no resize. With one, the inputs and
  /// resize_from are learned tables, drawn in --view grid beside one
  /// resized version per rule of resize_rule.
  std::string resize_flag;
  std::string resize_from;   ///< --resize-from SRC: one more learned table
  std::string resize_rule;   ///< --resize-rule: a comma list of rules (pe/resize.h)
  std::string from_grid;     ///< --from-grid HxW of the learned tables; empty: the square after the prefix
  std::int64_t prefix_tokens = -1;  ///< --prefix-tokens: rows before the grid (view grid); -1: the rule's
  /// Reads a learned table to resize (a file, FILE:TENSOR, a model folder)
  /// with its options per rule. Required with resize_flag.
  std::function<DotLearnedTable(const std::string& source)> read_learned;
  /// The tensor to draw of a file with several when none is named (its one
  /// table of positions, or a usage error listing them); null: the file's
  /// only tensor (opening a file of several is refused, listing them).
  std::function<std::string(const std::string& path)> pick_tensor;

  // ---- the terminal
  bool stdout_is_terminal = false;  ///< the Unicode chart and hints are for a person there
  bool color = false;               ///< ANSI colours in the chart
  bool timing = false;              ///< DotObserver::End gets where the time went
  DotObserver* observer = nullptr;  ///< not owned; null: none
};

/// What `pe dot` prints, after RunDot wrote its files.
struct DotOutput {
  /// The curve (or view) as CSV/JSON for standard output, when it goes
  /// there: -o - ; or no -o and a format asked for (--json,
  /// --output-format); or neither picture nor format, and stdout not a
  /// terminal. Else empty.
  std::string data;
  /// The Unicode chart of the curves (--term, or stdout a terminal that
  /// does not carry the data); empty when none.
  std::string chart;
  bool chart_on_stdout = false;  ///< else it belongs on standard error (not with --quiet)
  std::string hint;              ///< one line for a person at the terminal; empty: none
};

/// Runs `request`: checks every flag and output first, computes, writes
/// -o, --plot and --matrix files (each atomically), and returns what goes
/// to the terminal. Throws pe::Error (kUsage) naming the flag for a bad
/// or conflicting flag, an input a flag does not apply to, or a missing
/// input ("pe dot: needs an input: ..."); (kInput/kIo) when a table cannot
/// be read or a file written.
PE_API DotOutput RunDot(const DotRequest& request);

}  // namespace pe
