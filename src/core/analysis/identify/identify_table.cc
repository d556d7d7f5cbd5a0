#include "core/analysis/identify/identify_table.h"

#include <variant>
#include <vector>

namespace pe {

TableIdentification IdentifyTableReading(RowSource& source, const TableStats& stats, RowSource* partner) {
  const TableInfo& info = source.info();
  TableIdentification out;
  RopeIdentifyOptions ro;
  if (const MetaValue* s = info.meta.Find("start"))
    if (const auto* v = std::get_if<std::int64_t>(s)) ro.start_hint = *v;
  std::vector<double> head;  // read once, for both readings
  ro.keep_head = &head;
  out.rope = IdentifyRope(source, stats, ro, partner);
  if (!out.rope->detected) out.rope.reset();
  if (!out.rope || out.rope->shape.kind == RopeKind::kSin) {
    IdentifyOptions io;
    io.start_hint = ro.start_hint;
    io.head = &head;
    out.sinusoid = Identify(source, stats, io);
  }
  nlohmann::ordered_json ident;
  if (out.sinusoid) {
    ident = out.sinusoid->ToJson();
    out.matched = out.sinusoid->matched;
    out.verdict = out.sinusoid->verdict;
    out.precision = out.sinusoid->precision;
  }
  if (out.rope) {
    if (!out.sinusoid || !out.sinusoid->matched || out.rope->matched) {  // the RoPE reading is the answer
      ident["matched"] = out.rope->matched;
      ident["verdict"] = out.rope->verdict;
      if (!out.rope->matched) ident["reason"] = out.rope->reason;
      else ident.erase("reason");
      out.matched = out.rope->matched;
      out.verdict = out.rope->verdict;
      out.precision = out.rope->precision;
    }
    ident["kind"] = "rope";
    ident["rope"] = out.rope->ToJson();
  } else if (out.sinusoid) {
    ident["kind"] = "sinusoid";
  }
  out.json = std::move(ident);
  return out;
}

}  // namespace pe
