#include "core/plot/canvas.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/error.h"
#include "core/output.h"

namespace pe::plot {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// cairo's stream callback: bytes go to the AtomicFile's temporary file.
cairo_status_t WriteToFile(void* closure, const unsigned char* data, unsigned int length) {
  auto* file = static_cast<std::FILE*>(closure);
  return std::fwrite(data, 1, length, file) == length ? CAIRO_STATUS_SUCCESS
                                                      : CAIRO_STATUS_WRITE_ERROR;
}

}  // namespace

ImageFormat ImageFormatFromPath(const std::string& path, const std::string& flag) {
  const std::string p = Lower(path);
  if (EndsWith(p, ".png")) return ImageFormat::kPng;
  if (EndsWith(p, ".svg")) return ImageFormat::kSvg;
  if (EndsWith(p, ".pdf")) return ImageFormat::kPdf;
  ThrowUsage(fmt::format("{} '{}'", flag, path),
             "unknown image type; use a .png, .svg or .pdf file name");
}

struct Canvas::Impl {
  ImageFormat format;
  AtomicFile file;
  cairo_surface_t* surface = nullptr;
  Impl(ImageFormat f, const std::string& path) : format(f), file(path) {}
};

Canvas::Canvas(const std::string& path, const std::string& flag, int width, int height)
    : width_(width), height_(height) {
  if (IsStdStream(path)) ThrowUsage(flag, "needs a file name (.png, .svg or .pdf), not '-'");
  const ImageFormat format = ImageFormatFromPath(path, flag);
  impl_ = std::make_unique<Impl>(format, path);
  switch (format) {
    case ImageFormat::kPng:
      impl_->surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
      break;
    case ImageFormat::kSvg:
      impl_->surface = cairo_svg_surface_create_for_stream(WriteToFile, impl_->file.file(), width, height);
      break;
    case ImageFormat::kPdf:
      impl_->surface = cairo_pdf_surface_create_for_stream(WriteToFile, impl_->file.file(), width, height);
      // A fixed date keeps the same command's output byte-identical.
      cairo_pdf_surface_set_metadata(impl_->surface, CAIRO_PDF_METADATA_CREATE_DATE,
                                     "2000-01-01T00:00:00Z");
      cairo_pdf_surface_set_metadata(impl_->surface, CAIRO_PDF_METADATA_CREATOR, "pe");
      break;
  }
  if (cairo_surface_status(impl_->surface) != CAIRO_STATUS_SUCCESS)
    ThrowIo(fmt::format("'{}'", path), cairo_status_to_string(cairo_surface_status(impl_->surface)));
  cr_ = cairo_create(impl_->surface);
  // White background everywhere (PNG would otherwise be transparent).
  cairo_set_source_rgb(cr_, 1, 1, 1);
  cairo_paint(cr_);
}

Canvas::~Canvas() {
  if (cr_ != nullptr) cairo_destroy(cr_);
  if (impl_ && impl_->surface != nullptr) cairo_surface_destroy(impl_->surface);
}

void Canvas::Finish() {
  const std::string target = impl_->file.target();
  if (cairo_status(cr_) != CAIRO_STATUS_SUCCESS)
    ThrowIo(fmt::format("'{}'", target), cairo_status_to_string(cairo_status(cr_)));
  cairo_destroy(cr_);
  cr_ = nullptr;
  cairo_status_t status;
  if (impl_->format == ImageFormat::kPng) {
    status = cairo_surface_write_to_png_stream(impl_->surface, WriteToFile, impl_->file.file());
  } else {
    cairo_surface_finish(impl_->surface);  // flushes the SVG/PDF stream
    status = cairo_surface_status(impl_->surface);
  }
  if (status != CAIRO_STATUS_SUCCESS)
    ThrowIo(fmt::format("'{}'", target), cairo_status_to_string(status));
  cairo_surface_destroy(impl_->surface);
  impl_->surface = nullptr;
  impl_->file.Commit();
}

Rgb SeriesColor(std::size_t i) {
  static constexpr std::array<Rgb, 10> kTab10 = {{
      {0.122, 0.467, 0.706}, {1.000, 0.498, 0.055}, {0.173, 0.627, 0.173},
      {0.839, 0.153, 0.157}, {0.580, 0.404, 0.741}, {0.549, 0.337, 0.294},
      {0.890, 0.467, 0.761}, {0.498, 0.498, 0.498}, {0.737, 0.741, 0.133},
      {0.090, 0.745, 0.812},
  }};
  return kTab10[i % kTab10.size()];
}

Rgb MapColor(ColorMap map, double t) {
  if (!(t >= 0)) t = 0;  // also NaN
  if (t > 1) t = 1;
  // Control points, linearly interpolated: viridis (matplotlib) and RdBu_r
  // (ColorBrewer), 9 and 11 stops.
  static const std::vector<Rgb> kViridis = {
      {0.267, 0.005, 0.329}, {0.283, 0.141, 0.458}, {0.254, 0.265, 0.530},
      {0.207, 0.372, 0.553}, {0.164, 0.471, 0.558}, {0.128, 0.567, 0.551},
      {0.135, 0.659, 0.518}, {0.267, 0.749, 0.441}, {0.478, 0.821, 0.318},
      {0.741, 0.873, 0.150}, {0.993, 0.906, 0.144}};
  static const std::vector<Rgb> kRdBu = {
      {0.020, 0.188, 0.380}, {0.129, 0.400, 0.675}, {0.263, 0.576, 0.765},
      {0.573, 0.773, 0.871}, {0.820, 0.898, 0.941}, {0.969, 0.969, 0.969},
      {0.992, 0.859, 0.780}, {0.957, 0.647, 0.510}, {0.839, 0.376, 0.302},
      {0.698, 0.094, 0.169}, {0.404, 0.000, 0.122}};
  const auto& stops = map == ColorMap::kViridis ? kViridis : kRdBu;
  const double x = t * static_cast<double>(stops.size() - 1);
  const std::size_t i = std::min(static_cast<std::size_t>(x), stops.size() - 2);
  const double f = x - static_cast<double>(i);
  const Rgb& a = stops[i];
  const Rgb& b = stops[i + 1];
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

std::vector<double> NiceTicks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!std::isfinite(lo) || !std::isfinite(hi)) return ticks;
  if (hi <= lo) {
    ticks.push_back(lo);
    return ticks;
  }
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  // The round step whose tick count is closest to the target.
  double step = mag;
  double best = 1e300;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    const double miss = std::abs((hi - lo) / (m * mag) - target);
    if (miss < best) {
      best = miss;
      step = m * mag;
    }
  }
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (int i = 0; i < 1000; ++i) {
    double v = first + i * step;
    if (v > hi + step * 1e-9) break;
    if (std::abs(v) < step * 1e-9) v = 0;  // no "-0" or 1e-17
    ticks.push_back(v);
  }
  return ticks;
}

std::string TickLabel(double value, double step) {
  if (value == 0) return "0";
  const double a = std::abs(value);
  if (a >= 1e6 || a < 1e-4) return fmt::format("{:.3g}", value);
  int decimals = 0;
  if (step > 0 && step < 1) decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  // 2.5 steps need one more digit (0.25, 0.75).
  if (step > 0 && std::abs(step / std::pow(10.0, -decimals) - std::round(step / std::pow(10.0, -decimals))) > 1e-6)
    ++decimals;
  std::string s = fmt::format("{:.{}f}", value, decimals);
  if (s[0] == '-') s = "\u2212" + s.substr(1);  // a real minus sign
  return s;
}

void SetFont(cairo_t* cr, double size, bool bold) {
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

double TextWidth(cairo_t* cr, const std::string& text) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, text.c_str(), &e);
  return e.x_advance;
}

void DrawText(cairo_t* cr, double x, double y, const std::string& text, Align align) {
  const double w = TextWidth(cr, text);
  const double x0 = align == Align::kLeft ? x : align == Align::kCenter ? x - w / 2 : x - w;
  cairo_move_to(cr, x0, y);
  cairo_show_text(cr, text.c_str());
}

void DrawTextVertical(cairo_t* cr, double x, double y, const std::string& text) {
  cairo_save(cr);
  cairo_translate(cr, x, y);
  cairo_rotate(cr, -M_PI / 2);
  DrawText(cr, 0, 0, text, Align::kCenter);
  cairo_restore(cr);
}

}  // namespace pe::plot
