// Drawing surfaces for pe's plots: one cairo drawing path that renders to
// PNG, SVG or PDF (chosen by the file extension), written atomically.
//
// Why cairo: a well-kept Debian library (libcairo2-dev) that gives PNG, SVG
// and PDF from the same calls, with antialiasing and real fonts (DejaVu Sans
// through fontconfig), so pe never rasterises by hand.
//
// Also here: the pieces every chart shares (nice tick values, tick labels,
// colour maps, the series palette).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

typedef struct _cairo cairo_t;

namespace pe::plot {

enum class ImageFormat { kPng, kSvg, kPdf };

/// The image format for a path's extension (.png, .svg, .pdf, any case).
/// Throws pe::Error (usage) naming `flag` for anything else.
ImageFormat ImageFormatFromPath(const std::string& path, const std::string& flag);

/// A drawing surface of width × height units (pixels for PNG, points for
/// SVG/PDF) that becomes the file `path` on Finish(). The file appears only
/// when complete (AtomicFile); without Finish() nothing is left behind.
class Canvas {
 public:
  /// Throws pe::Error (usage) for an unknown extension, (io) when the target
  /// folder cannot be written.
  Canvas(const std::string& path, const std::string& flag, int width, int height);
  ~Canvas();
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  cairo_t* cr() const { return cr_; }
  int width() const { return width_; }
  int height() const { return height_; }
  /// Renders, writes and renames the file into place. Throws pe::Error (io).
  void Finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  cairo_t* cr_ = nullptr;
  int width_, height_;
};

/// An RGB colour, components in [0, 1].
struct Rgb {
  double r, g, b;
};

/// The i-th colour of the series palette (Tableau 10; cycles).
Rgb SeriesColor(std::size_t i);

enum class ColorMap {
  kViridis,    ///< sequential, perceptually uniform (similarity matrices)
  kDiverging,  ///< RdBu reversed: blue (low) - white - red (high), around 0
  kMagma,      ///< sequential (matplotlib magma)
  kCividis,    ///< sequential, colour-vision-deficiency friendly
  kRdBu,       ///< ColorBrewer RdBu as published: red (low) - white - blue (high)
};

/// The colour of t in [0, 1] (clamped; NaN = 0) under `map`. The listed maps
/// (viridis, magma, cividis) look up entry min(255, floor(256·t)) exactly as
/// matplotlib's ListedColormap does; RdBu interpolates its 11 ColorBrewer
/// classes linearly (matplotlib's LinearSegmentedColormap).
Rgb MapColor(ColorMap map, double t);

/// The map named `name` (viridis, magma, cividis, RdBu, RdBu_r; any case).
/// Throws pe::Error (usage) naming `flag` for anything else.
ColorMap ParseColorMap(const std::string& name, const std::string& flag);
/// True for the maps meant for signed data (RdBu, RdBu_r).
bool IsDiverging(ColorMap map);

/// About `target` round tick values covering [lo, hi] (1, 2, 2.5, 5 × 10^n
/// steps), inside the range.
std::vector<double> NiceTicks(double lo, double hi, int target);

/// A tick label: integers without a point, others with the digits the step
/// needs, large/small magnitudes in exponent form ("1e+05").
std::string TickLabel(double value, double step);

// Text helpers on a cairo context (DejaVu Sans).
enum class Align { kLeft, kCenter, kRight };
void SetFont(cairo_t* cr, double size, bool bold = false);
/// Draws `text` with its baseline at y, aligned at x. On an SVG canvas the
/// text becomes a real <text> element (editable, searchable) placed where
/// cairo would have drawn it; on PNG/PDF cairo draws the glyphs.
void DrawText(cairo_t* cr, double x, double y, const std::string& text, Align align);
/// Draws `text` rotated 90° counter-clockwise, centred at (x, y).
void DrawTextVertical(cairo_t* cr, double x, double y, const std::string& text);
double TextWidth(cairo_t* cr, const std::string& text);
/// Sets the font to `size`, or smaller (down to 6) until `text` fits in
/// `width`: a title or label never runs off the picture. False when even
/// the smallest size does not fit (then the caller leaves the text out).
bool FitFont(cairo_t* cr, const std::string& text, double size, double width, bool bold = false);

}  // namespace pe::plot
