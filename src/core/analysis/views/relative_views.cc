#include "core/analysis/views/relative_views.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <variant>

#include "core/base/error.h"
#include "core/schemes/alibi.h"
#include "core/schemes/t5_bucket.h"
#include "core/schemes/relative.h"

namespace pe {
namespace {

// Validates `spec` by its scheme's own rules; the view needs no rows, so a
// missing --max-len (needed only for a table) is filled with 1. With
// `both_directions` T5 is checked as bidirectional (both are drawn; the
// encoder's halves are the tighter limit).
SchemeSpec Validated(const NamedSpec& in, bool both_directions) {
  SchemeSpec s = in.spec;
  if (s.max_len < 1) s.max_len = 1;
  if (both_directions) s.bidirectional = true;
  s.key_len = -1;
  s.given.erase("key_len");  // reset to "not given"
  const SchemeInfo& info = FindScheme(s.scheme);
  try {
    if (info.validate) info.validate(s);
  } catch (const Error& e) {
    ThrowUsage(fmt::format("input '{}'", in.name), e.what());
  }
  return s;
}

ViewSeries Staircase(const std::string& name, std::int64_t max_r, const std::function<std::int64_t(std::int64_t)>& at) {
  ViewSeries s;
  s.name = name;
  ViewColumn b{"index", {}, true, false, ""};
  for (std::int64_t r = -max_r; r <= max_r; ++r) {
    s.x.push_back(static_cast<double>(r));
    b.values.push_back(static_cast<double>(at(r)));
  }
  s.columns.push_back(std::move(b));
  return s;
}

ViewData BucketsFrame() {
  ViewData v;
  v.kind = ViewKind::kBuckets;
  v.title = "Relative position → bucket index";
  v.x_label = "relative position r = j − i (key − query)";
  v.y_label = "bucket / index";
  v.x_name = "relative_position";
  v.steps = true;
  return v;
}

}  // namespace

bool HasBuckets(const std::string& scheme) {
  return scheme == "t5-bucket" || scheme == "deberta-bucket" || scheme == "relative-index";
}

std::int64_t DefaultBucketReach(const SchemeSpec& s) {
  if (s.scheme == "t5-bucket") return s.max_distance + s.max_distance / 2;
  if (s.scheme == "deberta-bucket") return s.max_position;
  if (s.convention == "hf-bert") return s.max_position_embeddings < 0 ? 512 : s.max_position_embeddings;
  return std::max<std::int64_t>(2 * s.max_relative_position + 8, 16);
}

ViewData BucketsView(const std::vector<NamedSpec>& specs, std::int64_t max_r) {
  if (max_r < 1) ThrowUsage("--max-offset", fmt::format("the buckets view needs at least 1, got {}", max_r));
  if (max_r > (std::int64_t{1} << 20)) ThrowUsage("--max-offset", "at most 2^20 for the buckets view");
  ViewData v = BucketsFrame();
  const bool many = specs.size() > 1;
  for (const NamedSpec& in : specs) {
    // Name the input only where two inputs share a scheme (its label
    // already names the scheme).
    const bool shared = std::count_if(specs.begin(), specs.end(),
                                      [&](const NamedSpec& o) { return o.spec.scheme == in.spec.scheme; }) > 1;
    if (!HasBuckets(in.spec.scheme))
      ThrowUsage("--view buckets", fmt::format("needs t5-bucket, deberta-bucket or relative-index; '{}' is scheme '{}'",
                                               in.name, in.spec.scheme));
    const SchemeSpec s = Validated(in, true);
    const std::string pre = shared ? in.name + " · " : std::string();
    if (s.scheme == "t5-bucket") {
      const std::int64_t nb = s.num_buckets, md = s.max_distance;
      v.series.push_back(Staircase(pre + "T5 bidirectional (encoder)", max_r,
                                   [&](std::int64_t r) { return T5Bucket(r, true, nb, md); }));
      v.series.push_back(Staircase(pre + "T5 causal (decoder)", max_r,
                                   [&](std::int64_t r) { return T5Bucket(r, false, nb, md); }));
      v.markers.push_back({static_cast<double>(-md), "−max_distance"});
      v.markers.push_back({static_cast<double>(md), fmt::format("max_distance {}", md)});
      if (!many) v.subtitle = fmt::format("T5 · num_buckets {} · max_distance {}", nb, md);
    } else if (s.scheme == "deberta-bucket") {
      const bool f64 = s.convention == "microsoft";
      const std::int64_t b = s.bucket_size, mp = s.max_position;
      v.series.push_back(Staircase(pre + fmt::format("DeBERTa-v2 ({})", f64 ? "microsoft float64" : "HF float32"),
                                   max_r, [&](std::int64_t r) { return DebertaBucket(-r, b, mp, f64); }));
      v.markers.push_back({static_cast<double>(-(b / 2)), "±bucket_size/2"});
      v.markers.push_back({static_cast<double>(b / 2), ""});
      if (!many) v.subtitle = fmt::format("DeBERTa-v2 · bucket_size {} · max_position {}", b, mp);
    } else if (s.convention == "hf-bert") {
      const std::int64_t p = s.max_position_embeddings < 0 ? 512 : s.max_position_embeddings;
      v.series.push_back(Staircase(pre + "HF BERT relative_key", max_r, [&](std::int64_t r) { return -r + p - 1; }));
      if (!many) v.subtitle = fmt::format("HF BERT relative_key: i − j + {} − 1", p);
    } else {
      const std::int64_t k = s.max_relative_position;
      v.series.push_back(Staircase(pre + fmt::format("Shaw clip k = {}", k), max_r,
                                   [&](std::int64_t r) { return ShawIndex(0, r, k); }));
      v.markers.push_back({static_cast<double>(-k), "−k"});
      v.markers.push_back({static_cast<double>(k), "k"});
      if (!many) v.subtitle = fmt::format("Shaw et al. (tensor2tensor): clamp(j − i, −{0}, {0}) + {0}", k);
    }
  }
  // Markers explain one scheme; with several they crowd each other out. A
  // marker outside the drawn offsets would stretch the axis.
  if (many) v.markers.clear();
  std::vector<std::pair<double, std::string>> kept;
  for (const auto& m : v.markers)
    if (std::abs(m.first) < static_cast<double>(max_r) &&
        std::none_of(kept.begin(), kept.end(), [&](const auto& k) { return k.first == m.first; }))
      kept.push_back(m);
  v.markers = std::move(kept);
  return v;
}

ViewData BucketsViewOfTable(const std::string& name, const DenseTable& t) {
  if (MetaText(t.info.meta, "scheme") != "t5-bucket")
    ThrowUsage("--view buckets",
               fmt::format("'{}' is not a t5-bucket table (its metadata names no scheme t5-bucket); give the scheme "
                           "as a spec, e.g. t5-bucket: or deberta-bucket:bucket-size=256,max-position=512",
                           name));
  const std::int64_t start = MetaIntOr(t.info.meta, "start", 0);
  const bool bidirectional = MetaIntOr(t.info.meta, "bidirectional", 0) != 0;
  if (t.info.cols != 1)
    ThrowInput(fmt::format("'{}'", name),
               fmt::format("a t5-bucket table has one column (the bucket of each relative position), not {}",
                           t.info.cols));
  ViewData v = BucketsFrame();
  v.subtitle = fmt::format("{}: rows are r = {}..{}", name, start, start + t.info.rows - 1);
  ViewSeries s;
  s.name = fmt::format("{} ({})", name, bidirectional ? "bidirectional" : "causal");
  ViewColumn b{"index", {}, true, false, ""};
  for (std::int64_t r = 0; r < t.info.rows; ++r) {
    s.x.push_back(static_cast<double>(start + r));
    b.values.push_back(t.at(r, 0));
  }
  s.columns.push_back(std::move(b));
  v.series.push_back(std::move(s));
  return v;
}

HeadBias AlibiHeadBias(const std::string& name, const std::vector<double>& slopes, std::int64_t max_d) {
  if (slopes.empty()) ThrowInput(fmt::format("'{}'", name), "no ALiBi slopes (no heads)");
  HeadBias b;
  b.name = name;
  b.scheme = "ALiBi";
  b.formula = "−m_h·k";
  b.causal = true;
  b.offsets.info.rows = static_cast<std::int64_t>(slopes.size());
  b.offsets.info.cols = max_d + 1;
  for (double m : slopes) {
    b.head_labels.push_back(fmt::format("m = {:.4g}", m));
    // 0 - m·d, not -m·d: the diagonal is +0, never a "-0" in the CSV.
    for (std::int64_t d = 0; d <= max_d; ++d) b.offsets.values.push_back(0.0 - m * static_cast<double>(d));
  }
  return b;
}

HeadBias HeadBiasFromSpec(const NamedSpec& in, std::int64_t max_d) {
  if (max_d < 1 || max_d > 65535) ThrowUsage("--max-offset", fmt::format("must be 1..65535 here, got {}", max_d));
  if (in.spec.scheme == "alibi") {
    if (in.spec.heads < 1 || in.spec.heads > 4096) ThrowUsage("--heads", "alibi needs 1..4096 heads");
    std::vector<double> slopes;
    for (auto m : AlibiSlopes(in.spec.heads, in.spec.max_bias)) slopes.push_back(static_cast<double>(m));
    return AlibiHeadBias(in.name, slopes, max_d);
  }
  if (in.spec.scheme != "kerple" && in.spec.scheme != "sandwich")
    ThrowUsage(fmt::format("input '{}'", in.name),
               fmt::format("needs ALiBi, KERPLE or Sandwich (alibi, kerple, sandwich: per-head biases), not scheme '{}'",
                           in.spec.scheme));
  // The scheme's own offsets form: [heads, distances 0..max_d].
  SchemeSpec s = in.spec;
  s.rel_form = "offsets";
  s.max_len = max_d + 1;
  s.dtype = DType::kFloat64;
  HeadBias b;
  b.name = in.name;
  try {
    b.offsets = ReadAll(*MakeGenerator(s));
  } catch (const Error& e) {
    ThrowUsage(fmt::format("input '{}'", in.name), e.what());
  }
  if (s.scheme == "kerple") {
    b.scheme = "KERPLE";
    b.formula = s.kerple_form == "power" ? "−r1·k^r2" : "−r1·log(1 + r2·k)";
    // Each head's parameters in its label (one value stands for every head).
    const std::vector<double> r1 = ParseHeadList(s.r1, "--r1"), r2 = ParseHeadList(s.r2, "--r2");
    for (std::int64_t h = 0; h < b.offsets.info.rows; ++h) {
      const auto pick = [h](const std::vector<double>& v) { return v[v.size() == 1 ? 0 : static_cast<std::size_t>(h)]; };
      b.head_labels.push_back(fmt::format("r1 = {:.4g}, r2 = {:.4g}", pick(r1), pick(r2)));
    }
  } else {
    b.scheme = "Sandwich";
    b.formula = "(Σᵢcos(k·ωᵢ) − d/2)/(8h/H)";
  }
  return b;
}

HeadBias HeadBiasFromTable(const std::string& name, const DenseTable& t, std::int64_t max_d) {
  const std::string scheme = MetaText(t.info.meta, "scheme");
  if (scheme != "kerple" && scheme != "sandwich")
    ThrowUsage("--view heads",
               fmt::format("'{}' has no 'slopes' tensor (ALiBi) and its metadata names no kerple or sandwich table; "
                           "give the scheme as a spec, e.g. alibi:heads=12",
                           name));
  HeadBias b;
  b.name = name;
  b.scheme = scheme == "kerple" ? "KERPLE" : "Sandwich";
  b.formula = "b_h(k)";
  DenseTable& off = b.offsets;
  const auto& shape = t.info.shape;
  if (shape.size() == 3) {
    // The last query sees every key before it (a causal table masks the
    // keys after the query): b_h(k) = M[h, Q-1, Q-1-k].
    const std::int64_t q = shape[1];
    if (q > shape[2]) ThrowInput(fmt::format("'{}'", name), fmt::format("{} queries but only {} keys", q, shape[2]));
    off.info.rows = shape[0];
    off.info.cols = std::min<std::int64_t>(q, max_d + 1);
    for (std::int64_t h = 0; h < shape[0]; ++h)
      for (std::int64_t d = 0; d < off.info.cols; ++d) off.values.push_back(t.at(h * q + q - 1, q - 1 - d));
  } else {
    off.info.rows = t.info.rows;
    off.info.cols = std::min<std::int64_t>(t.info.cols, max_d + 1);
    for (std::int64_t h = 0; h < t.info.rows; ++h)
      for (std::int64_t d = 0; d < off.info.cols; ++d) off.values.push_back(t.at(h, d));
  }
  return b;
}

ViewData HeadsView(const HeadBias& bias) {
  const DenseTable& t = bias.offsets;
  if (t.info.rows < 1) ThrowInput(fmt::format("'{}'", bias.name), "no heads");
  ViewData v;
  v.kind = ViewKind::kHeads;
  v.title = fmt::format("{} bias {}: {} heads × {} offsets", bias.scheme, bias.formula, t.info.rows, t.info.cols);
  v.subtitle = bias.name;
  v.row_label = "head h";
  v.col_label = "offset k = i − j";
  v.value_label = "bias " + bias.formula;
  v.x_name = "offset";
  ViewPanel p;
  p.title = "heads × offsets";
  p.rows = t.info.rows;
  p.cols = t.info.cols;
  p.values = t.values;
  v.panels.push_back(std::move(p));
  // Signed data gets a diverging map around 0; one-signed a sequential one.
  v.signed_values = std::any_of(t.values.begin(), t.values.end(), [](double y) { return y < -1e-300; }) &&
                    std::any_of(t.values.begin(), t.values.end(), [](double y) { return y > 1e-300; });
  // The same numbers as curves: one series per head.
  for (std::int64_t h = 0; h < t.info.rows; ++h) {
    ViewSeries s;
    s.name = h < static_cast<std::int64_t>(bias.head_labels.size())
                 ? fmt::format("head {} ({})", h, bias.head_labels[static_cast<std::size_t>(h)])
                 : fmt::format("head {}", h);
    ViewColumn c{"bias", {}, true, false, ""};
    for (std::int64_t d = 0; d < t.info.cols; ++d) {
      s.x.push_back(static_cast<double>(d));
      c.values.push_back(t.at(h, d));
    }
    s.columns.push_back(std::move(c));
    v.series.push_back(std::move(s));
  }
  return v;
}

ViewData OffsetsView(const HeadBias& bias) {
  ViewData v = HeadsView(bias);
  v.kind = ViewKind::kOffsets;
  v.panels.clear();
  v.title = fmt::format("{} bias {} per head", bias.scheme, bias.formula);
  v.x_label = "offset k = i − j";
  v.y_label = "bias " + bias.formula;
  return v;
}

ViewData LearnedBucketView(const std::string& name, const DenseTable& w, const NamedSpec& buckets, std::int64_t max_r) {
  if (buckets.spec.scheme != "t5-bucket")
    ThrowUsage(fmt::format("input '{}'", buckets.name),
               fmt::format("a learned bias table is indexed by t5-bucket buckets, not scheme '{}'", buckets.spec.scheme));
  if (max_r < 1 || max_r > (std::int64_t{1} << 20)) ThrowUsage("--max-offset", "must be 1..2^20");
  const SchemeSpec s = Validated(buckets, false);
  const std::int64_t nb = s.num_buckets;
  // HF's nn.Embedding(num_buckets, n_heads) weight is [num_buckets, heads];
  // a transposed [heads, num_buckets] table is read the other way.
  const bool heads_first = w.info.rows != nb && w.info.cols == nb;
  const std::int64_t heads = heads_first ? w.info.rows : w.info.cols;
  if (w.info.rows != nb && !heads_first)
    ThrowInput(fmt::format("'{}'", name),
               fmt::format("is {} × {}: neither axis has num_buckets = {} entries (a [num_buckets, heads] table, "
                           "e.g. T5's relative_attention_bias.weight)",
                           w.info.rows, w.info.cols, nb));
  if (heads > 256) ThrowInput(fmt::format("'{}'", name), fmt::format("{} heads: at most 256 curves", heads));
  ViewData v;
  v.kind = ViewKind::kOffsets;
  v.title = "Learned relative bias per head, through T5's buckets";
  v.subtitle = fmt::format("{} · {} · num_buckets {} · max_distance {}", name,
                           s.bidirectional ? "bidirectional" : "causal", nb, s.max_distance);
  v.x_label = "relative position r = j − i (key − query)";
  v.y_label = "bias b_h(bucket(r))";
  v.x_name = "relative_position";
  v.steps = true;
  for (std::int64_t h = 0; h < heads; ++h) {
    ViewSeries series;
    series.name = fmt::format("head {}", h);
    ViewColumn c{"bias", {}, true, false, ""}, b{"bucket", {}, false, false, ""};
    for (std::int64_t r = -max_r; r <= max_r; ++r) {
      const std::int64_t k = T5Bucket(r, s.bidirectional, nb, s.max_distance);
      series.x.push_back(static_cast<double>(r));
      c.values.push_back(heads_first ? w.at(h, k) : w.at(k, h));
      b.values.push_back(static_cast<double>(k));
    }
    series.columns = {std::move(c), std::move(b)};
    v.series.push_back(std::move(series));
  }
  return v;
}

ViewData BiasPanelsView(const HeadBias& bias, std::int64_t size) {
  const DenseTable& t = bias.offsets;
  if (size < 2 || size > t.info.cols)
    ThrowUsage("--max-offset", fmt::format("the bias view draws 2..{} queries and keys, got {}", t.info.cols, size));
  if (t.info.rows > 64)
    ThrowUsage("--view bias", fmt::format("'{}' has {} heads; small multiples take at most 64 (--view heads draws "
                                          "them all)", bias.name, t.info.rows));
  ViewData v;
  v.kind = ViewKind::kBias;
  v.title = fmt::format("{} bias {} per head, {} queries × {} keys", bias.scheme, bias.formula, size, size);
  v.subtitle = bias.causal ? bias.name + " · keys after the query are masked (causal)" : bias.name;
  v.row_label = "query i";
  v.col_label = "key j";
  v.value_label = "bias " + bias.formula;
  bool neg = false, pos = false;
  for (std::int64_t h = 0; h < t.info.rows; ++h) {
    ViewPanel p;
    p.title = h < static_cast<std::int64_t>(bias.head_labels.size())
                  ? fmt::format("h{} {}", h, bias.head_labels[static_cast<std::size_t>(h)])
                  : fmt::format("head {}", h);
    p.rows = p.cols = size;
    for (std::int64_t i = 0; i < size; ++i)
      for (std::int64_t j = 0; j < size; ++j) {
        const double x = bias.causal && j > i ? std::nan("") : t.at(h, std::llabs(i - j));
        neg = neg || x < -1e-300;
        pos = pos || x > 1e-300;
        p.values.push_back(x);
      }
    v.panels.push_back(std::move(p));
  }
  v.signed_values = neg && pos;  // one-signed data: a sequential map
  return v;
}

}  // namespace pe
