#include "core/spec/position_list.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <filesystem>

#include "core/base/error.h"
#include "core/base/table.h"
#include "core/formats/format.h"

namespace pe {

// Position ids as torch keeps them: an integer .npy (int64 from
// torch.save / numpy, int32, int16, int8), shape [L], [1, L] (a batch of
// one), [3, L] or [3, 1, L] (Qwen2-VL's position_ids for one sequence).
// The table readers take floating-point data only; this reads the NPY
// header (format 1.0-3.0, little-endian integers, C order) itself, bounded.
bool ReadIntegerNpyIds(const std::string& path, const std::string& what, std::int64_t max_count,
                       std::vector<std::int64_t>* shape, std::vector<std::int64_t>* values) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;  // the table reader says why
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  char head[12] = {};
  f.read(head, 10);
  if (f.gcount() != 10 || std::string(head, 6) != "\x93NUMPY") return false;
  const int major = static_cast<unsigned char>(head[6]);
  std::uint32_t hlen = 0;
  if (major == 1) {
    hlen = static_cast<unsigned char>(head[8]) | (static_cast<std::uint32_t>(static_cast<unsigned char>(head[9])) << 8);
  } else if (major == 2 || major == 3) {
    f.read(head + 10, 2);
    if (f.gcount() != 2) return false;
    for (int i = 3; i >= 0; --i) hlen = (hlen << 8) | static_cast<unsigned char>(head[8 + i]);
  } else {
    return false;
  }
  if (hlen > (1u << 16)) ThrowInput(what, fmt::format("NPY header of {} bytes (at most 65536)", hlen));
  std::string h(hlen, '\0');
  f.read(h.data(), hlen);
  if (static_cast<std::uint32_t>(f.gcount()) != hlen) ThrowInput(what, "NPY header cut short");
  const auto field = [&](const char* key) -> std::string {
    const auto k = h.find(fmt::format("'{}':", key));
    return k == std::string::npos ? std::string() : h.substr(k + std::char_traits<char>::length(key) + 3);
  };
  std::string descr = field("descr");
  const auto q0 = descr.find('\'');
  const auto q1 = q0 == std::string::npos ? q0 : descr.find('\'', q0 + 1);
  if (q1 == std::string::npos) return false;
  descr = descr.substr(q0 + 1, q1 - q0 - 1);
  int size = 0;
  if (descr == "<i8") size = 8;
  else if (descr == "<i4") size = 4;
  else if (descr == "<i2") size = 2;
  else if (descr == "|i1") size = 1;
  else if (descr.size() >= 2 && (descr[1] == 'i' || descr[1] == 'u'))
    ThrowInput(what, fmt::format("integer dtype '{}': position ids are read as little-endian signed int8/16/32/64",
                                 descr.substr(0, 16)));
  else
    return false;  // floating point: the table reader
  const std::string order = field("fortran_order");
  const std::string sh = field("shape");
  const auto p0 = sh.find('('), p1 = sh.find(')');
  if (p0 == std::string::npos || p1 == std::string::npos || p1 < p0) ThrowInput(what, "NPY header without a shape");
  shape->clear();
  std::int64_t count = 1;
  for (std::size_t i = p0 + 1; i < p1;) {
    while (i < p1 && (sh[i] == ' ' || sh[i] == ',')) ++i;
    if (i >= p1) break;
    std::int64_t d = 0;
    const auto [end, ec] = std::from_chars(sh.data() + i, sh.data() + p1, d);
    if (ec != std::errc() || d < 0 || d > max_count || shape->size() >= 4)
      ThrowInput(what, fmt::format("NPY shape is not a short list of sizes within {}", max_count));
    shape->push_back(d);
    count *= d;
    if (count > max_count) ThrowInput(what, fmt::format("more than {} position ids", max_count));
    i = static_cast<std::size_t>(end - sh.data());
  }
  if (order.rfind("True", 0) == 0 && shape->size() > 1)
    ThrowInput(what, "a Fortran-order NPY of position ids: save it in C order (numpy's default)");
  std::vector<char> raw(static_cast<std::size_t>(count) * size);
  f.read(raw.data(), static_cast<std::streamsize>(raw.size()));
  if (static_cast<std::size_t>(f.gcount()) != raw.size())
    ThrowInput(what, fmt::format("NPY data cut short: {} of {} bytes", f.gcount(), raw.size()));
  values->resize(static_cast<std::size_t>(count));
  for (std::int64_t k = 0; k < count; ++k) {
    std::uint64_t u = 0;
    for (int b = size - 1; b >= 0; --b) u = (u << 8) | static_cast<unsigned char>(raw[k * size + b]);
    const int shift = 64 - 8 * size;  // sign-extend
    (*values)[k] = static_cast<std::int64_t>(u << shift) >> shift;
  }
  return true;
}

std::vector<std::int64_t> ParsePositionIds(const std::string& text, const std::string& what, std::int64_t max_count) {
  std::error_code ec;
  if (!text.empty() && std::filesystem::is_regular_file(text, ec)) {  // a file of ids [L]
    std::vector<std::int64_t> shape, ids;
    if (ReadIntegerNpyIds(text, fmt::format("{} '{}'", what, text), max_count, &shape, &ids)) {
      if (shape.size() == 2 && shape[0] == 1) shape = {shape[1]};  // a batch of one
      if (shape.size() != 1)
        ThrowUsage(fmt::format("{} '{}'", what, text), "a file of positions holds one vector [L]");
      for (std::int64_t v : ids)
        if (v > (std::int64_t{1} << 40) || v < -(std::int64_t{1} << 40))
          ThrowUsage(fmt::format("{} '{}'", what, text), fmt::format("{} is beyond ±2^40", v));
      return ids;
    }
    std::unique_ptr<RowSource> s = OpenTable(text);
    const TableInfo& info = s->info();
    if (info.cols != 1 && info.rows != 1)
      ThrowUsage(fmt::format("{} '{}'", what, text), "a file of positions holds one vector [L]");
    if (info.rows * info.cols > max_count)
      ThrowUsage(fmt::format("{} '{}'", what, text), fmt::format("more than {} positions", max_count));
    const DenseTable dense = ReadAll(*s);
    std::vector<std::int64_t> out;
    for (double v : dense.values) {
      if (v != std::floor(v) || std::fabs(v) > 0x1p40)
        ThrowUsage(fmt::format("{} '{}'", what, text), fmt::format("{} is not an integer position", v));
      out.push_back(static_cast<std::int64_t>(v));
    }
    return out;
  }
  std::vector<std::int64_t> out;
  const auto bad = [&](const std::string& item) {
    ThrowUsage(fmt::format("{} '{}'", what, text),
               fmt::format("'{}': expected P, START:STOP[:STEP] (STOP excluded) or A-B (inclusive), comma-separated", item));
  };
  const auto num = [&](const std::string& s, const std::string& item) -> std::int64_t {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(s, &used);
    } catch (const std::exception&) {
      bad(item);
    }
    if (used != s.size() || v > (1LL << 40) || v < -(1LL << 40)) bad(item);
    return v;
  };
  std::string cur;
  for (char ch : text + ",") {
    if (ch == ' ') continue;
    if (ch != ',') {
      cur += ch;
      continue;
    }
    if (cur.empty()) bad(cur);
    const std::string item = cur;
    cur.clear();
    std::int64_t a = 0, b = 0, step = 1;
    const auto c1 = item.find(':');
    const auto dash = item.find('-', 1);
    if (c1 != std::string::npos) {
      const auto c2 = item.find(':', c1 + 1);
      a = num(item.substr(0, c1), item);
      b = num(item.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1), item);
      if (c2 != std::string::npos) step = num(item.substr(c2 + 1), item);
      if (step <= 0 || b <= a) bad(item);
    } else if (dash != std::string::npos) {
      a = num(item.substr(0, dash), item);
      b = num(item.substr(dash + 1), item) + 1;
      if (b <= a) bad(item);
    } else {
      a = num(item, item);
      b = a + 1;
    }
    for (std::int64_t p = a; p < b; p += step) {
      out.push_back(p);
      if (static_cast<std::int64_t>(out.size()) > max_count)
        ThrowUsage(fmt::format("{} '{}'", what, text), fmt::format("more than {} positions", max_count));
    }
  }
  return out;
}

}  // namespace pe
