#include "core/analysis/verify/axis_rotary_verify.h"
#include "core/analysis/verify/rope_verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "core/analysis/blocks.h"
#include "core/base/dtype.h"

namespace pe {

AxisRotaryDiagnosis DiagnoseAxisRotary(RowSource& table, const AxisRotarySource& ref, const Tolerance& tol,
                                       const std::string& tensor, const std::string& scheme, double base) {
  AxisRotaryDiagnosis out;
  const TableInfo& info = table.info();
  const std::vector<double> w = ref.ColumnOmega();
  const std::int64_t cols = info.cols;
  if (static_cast<std::int64_t>(w.size()) != cols || info.rows <= 0 || !ref.unscaled() || (tensor != "cos" && tensor != "sin")) {
    out.text = fmt::format("the table differs from the declared {} {} beyond the float32 recipe's tolerance", scheme, tensor);
    return out;
  }
  const bool cosine = tensor == "cos";
  const auto f = [](bool c, double x) { return c ? std::cos(x) : std::sin(x); };
  struct Hypothesis {
    std::string name, cause;
    std::function<double(std::int64_t id, double omega)> value;
    double ratio = 0;
  };
  const auto bf16 = [](double x) { return BFloat16BitsToDouble(DoubleToBFloat16Bits(x)); };
  const auto half = [](double x) { return HalfBitsToDouble(DoubleToHalfBits(x)); };
  std::vector<Hypothesis> hs = {
      {"declared", "", [&](std::int64_t id, double o) { return f(cosine, static_cast<double>(id) * o); }},
      {"bf16_inv_freq", "inv_freq was rounded to bfloat16 before the product id·ω (the table matches the declared ids and "
                        "frequencies with ω in bfloat16)",
       [&](std::int64_t id, double o) { return f(cosine, static_cast<double>(id) * bf16(o)); }},
      {"f16_inv_freq", "inv_freq was rounded to float16 before the product id·ω",
       [&](std::int64_t id, double o) { return f(cosine, static_cast<double>(id) * half(o)); }},
      {"ids_plus_one", "every id is one more than declared (positions from 1, not 0)",
       [&](std::int64_t id, double o) { return f(cosine, static_cast<double>(id + 1) * o); }},
      {"ids_minus_one", "every id is one less than declared",
       [&](std::int64_t id, double o) { return f(cosine, static_cast<double>(id - 1) * o); }},
      {"other_tensor", fmt::format("this is the {} tensor, not {}: add {} {}", cosine ? "sin" : "cos", tensor,
                                   TensorFlagFor(info), cosine ? "sin" : "cos"),
       [&](std::int64_t id, double o) { return f(!cosine, static_cast<double>(id) * o); }},
  };
  // Another base b': ω = base^(-e) is then ω^(ln b' / ln base).
  if (base > 1) {
    for (double b : {100.0, 1000.0, 10000.0, 20000.0, 100000.0, 500000.0, 1000000.0, 5000000.0, 10000000.0, 2 * base,
                     base / 2}) {
      if (b == base || !(b > 1)) continue;
      const double k = std::log(b) / std::log(base);
      hs.push_back({fmt::format("base_{}", b), fmt::format("base {}, not {}: add --base {}", b, base, b),
                    [&, k](std::int64_t id, double o) { return f(cosine, static_cast<double>(id) * std::pow(o, k)); }});
    }
  }
  // A sample of rows: the first, the last and evenly spaced ones (at most 2048).
  const std::int64_t n = std::min<std::int64_t>(info.rows, 2048);
  std::vector<std::byte> scratch;
  std::vector<double> row;
  std::vector<std::int64_t> ids(static_cast<std::size_t>(cols));
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t r = n == 1 ? 0 : k * (info.rows - 1) / (n - 1);
    ReadRowsAsDouble(table, r, 1, &scratch, &row);
    ref.EntryIds(r, ids.data());
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::int64_t id = ids[static_cast<std::size_t>(j)];
      const double o = w[static_cast<std::size_t>(j)];
      const double x = row[static_cast<std::size_t>(j)];
      const double want = hs[0].value(id, o);
      const double lim = tol.Limit(want, std::fabs(static_cast<double>(id) * o), o);
      for (Hypothesis& h : hs) {
        const double e = std::fabs(x - h.value(id, o));
        h.ratio = std::max(h.ratio, std::isfinite(e) ? e / lim : HUGE_VAL);
      }
    }
  }
  for (const Hypothesis& h : hs) out.json[h.name] = std::isfinite(h.ratio) ? nlohmann::ordered_json(h.ratio) : nlohmann::ordered_json();
  const std::string what = fmt::format("{} {} table, {} rows", scheme, tensor, info.rows);
  if (hs[0].ratio <= 1) {
    out.text = fmt::format("the sampled rows are the declared {} {} within tolerance; the entries over it lie elsewhere "
                           "[{}]",
                           scheme, tensor, what);
    return out;
  }
  // The fitting hypothesis that explains the table best.
  const Hypothesis* best = nullptr;
  for (std::size_t i = 1; i < hs.size(); ++i)
    if (hs[i].ratio <= 1 && (!best || hs[i].ratio < best->ratio)) best = &hs[i];
  if (best) {
    out.json["cause"] = best->name;
    out.text = fmt::format("{} [{}]", best->cause, what);
    return out;
  }
  out.text = fmt::format(
      "not the declared {} {} and none of the common faults (inv_freq in bfloat16 or float16, ids off by one, the other "
      "tensor, a common base) explains it: check the sections or grid and the positions [{}; worst error {:.4g} of "
      "the tolerance on the sampled rows]",
      scheme, tensor, what, hs[0].ratio);
  return out;
}

}  // namespace pe
