#include "core/plot/canvas.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/error.h"
#include "core/base/output.h"
#include "core/base/text_escape.h"
#include "core/plot/colormap_data.h"

namespace pe::plot {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// cairo's stream callback: bytes go to the AtomicFile's temporary file. The
// first failure's errno is kept: cairo's PDF surface does not report a
// failed write in its status (a PDF to /dev/full finished "successfully").
struct FileStream {
  std::FILE* file = nullptr;
  int error = 0;
};

cairo_status_t WriteToFile(void* closure, const unsigned char* data, unsigned int length) {
  auto* out = static_cast<FileStream*>(closure);
  if (out->error != 0) return CAIRO_STATUS_WRITE_ERROR;
  if (std::fwrite(data, 1, length, out->file) == length) return CAIRO_STATUS_SUCCESS;
  out->error = errno != 0 ? errno : EIO;
  return CAIRO_STATUS_WRITE_ERROR;
}

cairo_status_t WriteToString(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

// SVG text: DrawText records each string here (the cairo context's user
// data) instead of drawing glyph outlines; Finish() appends them as <text>.
struct SvgText {
  double font_size = 12;
  bool bold = false;
  std::string elements;
};
const cairo_user_data_key_t kSvgTextKey{};

SvgText* SvgTextOf(cairo_t* cr) { return static_cast<SvgText*>(cairo_get_user_data(cr, &kSvgTextKey)); }

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        // Control bytes are not allowed in XML 1.0: a space stands in.
        out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
    }
  }
  return out;
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
  std::string svg;  // the SVG document, completed with the text on Finish()
  SvgText text;
  FileStream stream;
  Impl(ImageFormat f, const std::string& path) : format(f), file(path) { stream.file = file.file(); }
};

namespace {

// cairo numbers the ids of an SVG document (surface126, image211) from
// counters that live as long as the process: the same picture drawn after
// others in a Python session or a C++ caller would carry other ids than
// `pe` writes. Each kind of id is renumbered from 1 in order of first
// appearance, as cairo numbers them in a fresh process.
void NumberSvgIds(std::string& svg) {
  static constexpr std::string_view kKinds[] = {"surface", "image", "source", "pattern", "linear",
                                                "radial",  "clip",  "mask",   "glyph",   "filter"};
  std::vector<std::pair<std::string, std::string>> seen;  // (kind + old number, new number)
  std::vector<std::pair<std::string_view, int>> next;
  for (std::string_view k : kKinds) next.push_back({k, 0});
  std::string out;
  out.reserve(svg.size());
  std::size_t i = 0;
  while (i < svg.size()) {
    std::size_t at = std::string::npos;
    if (svg.compare(i, 4, "id=\"") == 0) at = i + 4;
    else if (svg[i] == '#') at = i + 1;
    if (at == std::string::npos) {
      out += svg[i++];
      continue;
    }
    std::size_t j = at;
    while (j < svg.size() && svg[j] >= 'a' && svg[j] <= 'z') ++j;
    std::size_t k = j;
    while (k < svg.size() && svg[k] >= '0' && svg[k] <= '9') ++k;
    const std::string_view kind(svg.data() + at, j - at);
    auto n = std::find_if(next.begin(), next.end(), [&](const auto& e) { return e.first == kind; });
    if (n == next.end() || k == j) {
      out.append(svg, i, at - i);
      i = at;
      continue;
    }
    const std::string key = std::string(kind) + svg.substr(j, k - j);
    auto f = std::find_if(seen.begin(), seen.end(), [&](const auto& e) { return e.first == key; });
    if (f == seen.end()) {
      seen.push_back({key, std::to_string(++n->second)});
      f = seen.end() - 1;
    }
    out.append(svg, i, j - i);
    out += f->second;
    i = k;
  }
  svg = std::move(out);
}

// cairo resolves a font face (fontconfig's hinting for it) once per
// process, with the options of the first surface that draws text in it,
// and later scaled fonts of that face inherit "no hinting" from it: a PNG
// drawn after an SVG or a PDF in the same process (a Python session, a C++
// caller) came out with other glyph pixels than the same PNG drawn alone.
// The faces pe draws with are resolved first by an image surface, as a
// PNG drawn alone resolves them, whatever is drawn first; vector surfaces
// still ask for no hinting themselves (their bytes are unchanged).
void ResolveFontsAsPng() {
  static const bool resolved = [] {
    cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
    cairo_t* cr = cairo_create(surface);
    for (const cairo_font_weight_t weight : {CAIRO_FONT_WEIGHT_NORMAL, CAIRO_FONT_WEIGHT_BOLD}) {
      cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, weight);
      cairo_set_font_size(cr, 12);
      cairo_text_extents_t extents;
      cairo_text_extents(cr, "0", &extents);
    }
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
    return true;
  }();
  (void)resolved;
}

}  // namespace

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
      impl_->surface = cairo_svg_surface_create_for_stream(WriteToString, &impl_->svg, width, height);
      break;
    case ImageFormat::kPdf:
      impl_->surface = cairo_pdf_surface_create_for_stream(WriteToFile, &impl_->stream, width, height);
      // A fixed date keeps the same command's output byte-identical.
      cairo_pdf_surface_set_metadata(impl_->surface, CAIRO_PDF_METADATA_CREATE_DATE,
                                     "2000-01-01T00:00:00Z");
      cairo_pdf_surface_set_metadata(impl_->surface, CAIRO_PDF_METADATA_CREATOR, "pe");
      break;
  }
  if (cairo_surface_status(impl_->surface) != CAIRO_STATUS_SUCCESS)
    ThrowIo(fmt::format("'{}'", path), cairo_status_to_string(cairo_surface_status(impl_->surface)));
  cr_ = cairo_create(impl_->surface);
  if (format == ImageFormat::kSvg) cairo_set_user_data(cr_, &kSvgTextKey, &impl_->text, nullptr);
  ResolveFontsAsPng();
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
    status = cairo_surface_write_to_png_stream(impl_->surface, WriteToFile, &impl_->stream);
  } else {
    cairo_surface_finish(impl_->surface);  // flushes the SVG/PDF stream
    status = cairo_surface_status(impl_->surface);
    if (status == CAIRO_STATUS_SUCCESS && impl_->format == ImageFormat::kSvg) {
      // The recorded text goes last (on top of everything, as drawn last).
      std::string& svg = impl_->svg;
      const auto end = svg.rfind("</svg>");
      if (end == std::string::npos) ThrowIo(fmt::format("'{}'", target), "cairo wrote no SVG document");
      svg.insert(end, impl_->text.elements);
      NumberSvgIds(svg);
      if (std::fwrite(svg.data(), 1, svg.size(), impl_->file.file()) != svg.size())
        ThrowIo(fmt::format("cannot write '{}'", EscapeText(target)), std::strerror(errno != 0 ? errno : EIO));
    }
  }
  if (impl_->stream.error != 0)
    ThrowIo(fmt::format("cannot write '{}'", EscapeText(target)), std::strerror(impl_->stream.error));
  if (status != CAIRO_STATUS_SUCCESS)
    ThrowIo(fmt::format("'{}'", target), cairo_status_to_string(status));
  cairo_surface_destroy(impl_->surface);
  impl_->surface = nullptr;
  if (impl_->stream.error != 0)  // written while the surface was destroyed
    ThrowIo(fmt::format("cannot write '{}'", EscapeText(target)), std::strerror(impl_->stream.error));
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
  const std::array<Rgb, 256>* listed = map == ColorMap::kViridis ? &kViridisData
                                       : map == ColorMap::kMagma ? &kMagmaData
                                       : map == ColorMap::kCividis ? &kCividisData
                                                                   : nullptr;
  if (listed != nullptr) return (*listed)[std::min<std::size_t>(255, static_cast<std::size_t>(t * 256))];
  if (map == ColorMap::kDiverging) t = 1 - t;  // RdBu_r: blue low, red high
  const double x = t * static_cast<double>(kRdBuData.size() - 1);
  const std::size_t i = std::min(static_cast<std::size_t>(x), kRdBuData.size() - 2);
  const double f = x - static_cast<double>(i);
  const Rgb& a = kRdBuData[i];
  const Rgb& b = kRdBuData[i + 1];
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

ColorMap ParseColorMap(const std::string& name, const std::string& flag) {
  const std::string n = Lower(name);
  if (n == "viridis") return ColorMap::kViridis;
  if (n == "magma") return ColorMap::kMagma;
  if (n == "cividis") return ColorMap::kCividis;
  if (n == "rdbu") return ColorMap::kRdBu;
  if (n == "rdbu_r") return ColorMap::kDiverging;
  ThrowUsage(fmt::format("{} '{}'", flag, name), "expected viridis, magma, cividis, RdBu or RdBu_r");
}

bool IsDiverging(ColorMap map) { return map == ColorMap::kDiverging || map == ColorMap::kRdBu; }

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
  if (SvgText* t = SvgTextOf(cr)) {
    t->font_size = size;
    t->bold = bold;
  }
}

// Text from files (a name that is not UTF-8, a control byte) is drawn as
// the terminal shows it: cairo refuses a string that is not UTF-8 (and an
// SVG must be UTF-8), so every drawn string is escaped first.
double TextWidth(cairo_t* cr, const std::string& raw) {
  const std::string text = EscapeText(raw);
  cairo_text_extents_t e;
  cairo_text_extents(cr, text.c_str(), &e);
  return e.x_advance;
}

bool FitFont(cairo_t* cr, const std::string& text, double size, double width, bool bold) {
  SetFont(cr, size, bold);
  const double w = TextWidth(cr, text);
  if (w > width && w > 0) SetFont(cr, std::max(6.0, size * width / w * 0.98), bold);
  return TextWidth(cr, text) <= width;
}

void DrawText(cairo_t* cr, double x, double y, const std::string& raw, Align align) {
  const std::string text = EscapeText(raw);
  const double w = TextWidth(cr, text);
  const double x0 = align == Align::kLeft ? x : align == Align::kCenter ? x - w / 2 : x - w;
  if (SvgText* t = SvgTextOf(cr)) {
    // Where cairo would have put the glyphs: the user point in device
    // space, and the rotation of the current matrix (vertical labels).
    double dx = x0, dy = y;
    cairo_user_to_device(cr, &dx, &dy);
    cairo_matrix_t m;
    cairo_get_matrix(cr, &m);
    const double angle = std::atan2(m.yx, m.xx) * 180 / M_PI;
    double r = 0, g = 0, b = 0, a = 1;
    cairo_pattern_get_rgba(cairo_get_source(cr), &r, &g, &b, &a);
    std::string e = fmt::format(
        R"svg(<text x="{:.2f}" y="{:.2f}" font-family="DejaVu Sans" font-size="{:.2f}"{} fill="rgb({},{},{})")svg", dx, dy,
        t->font_size, t->bold ? R"svg( font-weight="bold")svg" : "", std::lround(r * 255), std::lround(g * 255),
        std::lround(b * 255));
    if (a < 1) e += fmt::format(R"svg( fill-opacity="{:.3f}")svg", a);
    if (std::abs(angle) > 1e-9) e += fmt::format(R"svg( transform="rotate({:.2f} {:.2f} {:.2f})")svg", angle, dx, dy);
    e += ">" + XmlEscape(text) + "</text>\n";
    t->elements += e;
    return;
  }
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
