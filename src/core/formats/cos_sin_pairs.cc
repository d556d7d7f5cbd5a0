#include "core/formats/cos_sin_pairs.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "core/base/error.h"

namespace pe {
namespace {

// Logical shape without leading 1s.
std::vector<std::int64_t> Dims(const TableInfo& info) {
  std::vector<std::int64_t> d = LogicalShape(info);
  while (d.size() > 1 && d.front() == 1) d.erase(d.begin());
  return d;
}

// Reads component `which` of each position: a position's 2n elements are
// inner rows [r·q, (r+1)·q) (q = 2n / inner cols); pairs puts cos of
// frequency j at element 2j, halves at element j (sin at 2j+1, n+j).
class ComponentSource : public RowSource {
 public:
  ComponentSource(std::shared_ptr<RowSource> inner, const CosSinPairs& p, int k, TableInfo info)
      : inner_(std::move(inner)), n_(p.freqs), k_(k), halves_(p.form == "halves"), info_(std::move(info)) {
    q_ = 2 * n_ / inner_->info().cols;
  }
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::size_t el = Traits(info_.dtype).size;
    buf_.resize(static_cast<std::size_t>(count) * static_cast<std::size_t>(2 * n_) * el);
    inner_->ReadRows(first * q_, count * q_, buf_.data());
    for (std::int64_t r = 0; r < count; ++r) {
      const std::byte* row = buf_.data() + static_cast<std::size_t>(r * 2 * n_) * el;
      std::byte* dst = out + static_cast<std::size_t>(r * n_) * el;
      for (std::int64_t j = 0; j < n_; ++j) {
        const std::int64_t at = halves_ ? k_ * n_ + j : 2 * j + k_;
        std::memcpy(dst + static_cast<std::size_t>(j) * el, row + static_cast<std::size_t>(at) * el, el);
      }
    }
  }

 private:
  std::shared_ptr<RowSource> inner_;
  std::int64_t n_, q_ = 1;
  int k_;
  bool halves_;
  TableInfo info_;
  std::vector<std::byte> buf_;
};

}  // namespace

std::optional<CosSinPairs> MarkedCosSinPairs(const TableInfo& info) {
  const MetaValue* mark = info.meta.Find(kCosSinPairsKey);
  if (!mark) return std::nullopt;
  CosSinPairs p;
  p.form = MetaToString(*mark);
  const std::vector<std::int64_t> d = Dims(info);
  const std::string what = fmt::format("tensor '{}'", info.name);
  if (p.form == "halves") {
    if (d.size() != 2 || d[1] % 2 != 0 || d[1] < 2)
      ThrowInput(what, fmt::format("a cos|sin halves cache must be [L, 2n] with an even width; it has {} columns",
                                   info.cols));
    p.positions = d[0];
    p.freqs = d[1] / 2;
    p.description = fmt::format("[{}, {}]: the {} cos columns, then the {} sin columns of each row", p.positions,
                                d[1], p.freqs, p.freqs);
    return p;
  }
  if (d.size() != 3 || d[2] != 2)
    ThrowInput(what, fmt::format("a (cos, sin) pair cache must be [L, n, 2] (last axis cos, sin); its last axis is {}",
                                 d.empty() ? 0 : d.back()));
  p.positions = d[0];
  p.freqs = d[1];
  if (p.form == "packed")
    p.description = fmt::format("packed [{}, {}, 2]: (cos, sin) of each frequency on the last axis", p.positions,
                                p.freqs);
  else
    p.description = fmt::format("{} [{}, {}]: real = cos, imag = sin of each frequency (stored as [{}, {}, 2])",
                                p.form, p.positions, p.freqs, p.positions, p.freqs);
  return p;
}

bool MayBePackedPairs(const TableInfo& info) {
  if (info.meta.Find(kCosSinPairsKey)) return false;
  const std::vector<std::int64_t> d = Dims(info);
  return d.size() == 3 && d[2] == 2 && d[0] >= 2 && d[1] >= 1 && d[1] <= 65536;
}

std::optional<CosSinPairs> PackedByValue(RowSource& source) {
  const TableInfo& info = source.info();
  if (!MayBePackedPairs(info)) return std::nullopt;
  const std::vector<std::int64_t> d = Dims(info);
  const std::int64_t n = d[1];
  // Positions 0 and 1: inner rows [0, 2n) of 2 columns.
  std::vector<std::byte> buf(static_cast<std::size_t>(4 * n) * Traits(info.dtype).size);
  source.ReadRows(0, 2 * n, buf.data());
  auto v = [&](std::int64_t i) { return LoadAsDouble(buf.data(), info.dtype, static_cast<std::size_t>(i)); };
  const double a = v(0);
  if (!(a > 0) || !std::isfinite(a)) return std::nullopt;
  const double tol = info.dtype == DType::kFloat32 || info.dtype == DType::kFloat64 ? 1e-5 : 1e-2;
  bool moved = false;
  for (std::int64_t j = 0; j < n; ++j) {
    if (std::fabs(v(2 * j) - a) > tol * a || v(2 * j + 1) != 0) return std::nullopt;
    const double c = v(2 * n + 2 * j), s = v(2 * n + 2 * j + 1);
    if (!std::isfinite(c) || !std::isfinite(s) || std::fabs(std::hypot(c, s) - a) > 4 * tol * a) return std::nullopt;
    moved = moved || s != 0;
  }
  if (!moved) return std::nullopt;
  CosSinPairs p;
  p.form = "packed";
  p.positions = d[0];
  p.freqs = n;
  p.description = fmt::format("packed [{}, {}, 2]: (cos, sin) of each frequency on the last axis (found by its "
                              "values: position 0 is ({:g}, 0), position 1 on the circle of radius {:g})",
                              p.positions, n, a, a);
  return p;
}

std::optional<CosSinPairs> CosSinPairsOf(RowSource& source) {
  if (auto p = MarkedCosSinPairs(source.info())) return p;
  return PackedByValue(source);
}

std::string CosSinComponentName(const std::string& base, const std::string& which) {
  return base.empty() || base == "pe" ? which : base + "." + which;
}

bool ParseCosSinComponentName(const std::string& name, std::string* base, std::string* which) {
  for (const char* w : {"cos", "sin"}) {
    const std::string s = w;
    if (name == s) {
      *base = "";
      *which = s;
      return true;
    }
    if (name.size() > s.size() + 1 && name.compare(name.size() - s.size() - 1, std::string::npos, "." + s) == 0) {
      *base = name.substr(0, name.size() - s.size() - 1);
      *which = s;
      return true;
    }
  }
  return false;
}

std::unique_ptr<RowSource> CosSinComponent(std::shared_ptr<RowSource> inner, const CosSinPairs& p,
                                           const std::string& which) {
  const TableInfo& in = inner->info();
  const std::int64_t width = 2 * p.freqs;
  if (p.freqs <= 0 || in.cols <= 0 || width % in.cols != 0 || in.rows != p.positions * (width / in.cols))
    ThrowInput(fmt::format("tensor '{}'", in.name),
               fmt::format("its {} x {} elements do not hold {} positions of {} (cos, sin) pairs", in.rows, in.cols,
                           p.positions, p.freqs));
  TableInfo info;
  info.name = CosSinComponentName(in.name, which);
  info.rows = p.positions;
  info.cols = p.freqs;
  info.dtype = in.dtype;
  for (const auto& [k, v] : in.meta.entries())
    if (k != kCosSinPairsKey) info.meta.Set(k, v);  // the component is a plain [L, n] table
  info.meta.Set("tensor", which);
  info.meta.Set("layout", std::string("cache"));
  info.meta.Set("cos_sin_source", fmt::format("{} of '{}', {}", which, in.name, p.description));
  CheckedTableBytes(info.rows, info.cols, info.dtype);
  return std::make_unique<ComponentSource>(std::move(inner), p, which == "cos" ? 0 : 1, std::move(info));
}

}  // namespace pe
