#include "core/containers/onnx_wire.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cstring>
#include <optional>
#include <string_view>

#include "core/base/error.h"

namespace pe {

static_assert(std::endian::native == std::endian::little, "the ONNX reader copies little-endian bytes as they are");

std::string OnnxDataTypeName(std::int32_t t) {
  static const char* const kNames[] = {"UNDEFINED", "FLOAT",     "UINT8",      "INT8",          "UINT16",
                                       "INT16",     "INT32",     "INT64",      "STRING",        "BOOL",
                                       "FLOAT16",   "DOUBLE",    "UINT32",     "UINT64",        "COMPLEX64",
                                       "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                       "FLOAT8E5M2FNUZ", "UINT4", "INT4",      "FLOAT4E2M1"};
  if (t >= 0 && t < static_cast<std::int32_t>(sizeof(kNames) / sizeof(kNames[0]))) return kNames[t];
  return fmt::format("type {}", t);
}

bool OnnxDTypeOf(std::int32_t t, DType* out) {
  switch (t) {
    case kOnnxFloat: *out = DType::kFloat32; return true;
    case kOnnxFloat16: *out = DType::kFloat16; return true;
    case kOnnxDouble: *out = DType::kFloat64; return true;
    case kOnnxBFloat16: *out = DType::kBFloat16; return true;
    default: return false;
  }
}

int OnnxTypedField(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 10;
    case DType::kFloat16:
    case DType::kBFloat16: return 5;
  }
  return 0;
}

bool IsOnnxRopeOp(std::string_view op_type) {
  return op_type == "RotaryEmbedding" || op_type == "GroupQueryAttention";
}

namespace {

// A span of the buffer being read: [pos, end), offsets from `base`.
struct Cursor {
  const std::uint8_t* base;
  std::uint64_t pos;
  std::uint64_t end;
  bool done() const { return pos >= end; }
};

class Parser {
 public:
  Parser(const std::byte* data, std::size_t size, const std::string& what, std::vector<OnnxNode>* rope_nodes)
      : base_(reinterpret_cast<const std::uint8_t*>(data)), size_(size), what_(what), rope_nodes_(rope_nodes) {}

  std::vector<OnnxTensor> Run() {
    Cursor c{base_, 0, size_};
    bool graph = false;
    while (!c.done()) {
      const auto [field, wt] = Tag(c);
      if (field == 7 && wt == 2) {
        Cursor g = Sub(c);
        ParseGraph(g, 0, "");
        graph = true;
      } else {
        Skip(c, wt);
      }
    }
    if (!graph) Fail("no graph (ModelProto field 7): not an ONNX model");
    return std::move(tensors_);
  }

 private:
  [[noreturn]] void Fail(const std::string& why) const { ThrowInput(what_, why); }

  std::uint64_t Varint(Cursor& c) {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (c.pos >= c.end) Fail(fmt::format("truncated varint at byte {} (malformed or truncated protobuf)", c.pos));
      const std::uint8_t b = base_[c.pos++];
      if (shift == 63 && b > 1) Fail(fmt::format("varint over 64 bits at byte {}", c.pos - 1));
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    Fail(fmt::format("varint longer than 10 bytes at byte {}", c.pos));
  }

  std::pair<std::uint32_t, int> Tag(Cursor& c) {
    const std::uint64_t at = c.pos;
    const std::uint64_t t = Varint(c);
    const std::uint64_t field = t >> 3;
    if (field == 0 || field > 536870911) Fail(fmt::format("invalid field number {} at byte {}", field, at));
    return {static_cast<std::uint32_t>(field), static_cast<int>(t & 7)};
  }

  // A length-delimited payload as its own cursor (the length checked
  // against the enclosing message); `c` moves past it.
  Cursor Sub(Cursor& c) {
    const std::uint64_t at = c.pos;
    const std::uint64_t len = Varint(c);
    if (len > c.end - c.pos)
      Fail(fmt::format("a field at byte {} claims {} bytes but its message has {} left (malformed or truncated)", at,
                       len, c.end - c.pos));
    Cursor s{base_, c.pos, c.pos + len};
    c.pos += len;
    return s;
  }

  void Fixed(Cursor& c, std::uint64_t n) {
    if (n > c.end - c.pos) Fail(fmt::format("truncated fixed-width field at byte {}", c.pos));
    c.pos += n;
  }

  void Skip(Cursor& c, int wt) {
    switch (wt) {
      case 0: Varint(c); return;
      case 1: Fixed(c, 8); return;
      case 2: Sub(c); return;
      case 5: Fixed(c, 4); return;
      default: Fail(fmt::format("wire type {} at byte {} (groups and unknown types are not used by ONNX)", wt, c.pos));
    }
  }

  // A string field as a view of the buffer: nothing is copied unless kept.
  std::string_view Str(Cursor& c) {
    Cursor s = Sub(c);
    return std::string_view(reinterpret_cast<const char*>(base_ + s.pos), s.end - s.pos);
  }
  // A string the result keeps (a tensor's name, an external location): bounded one by one and
  // charged to the metadata budget.
  std::string Keep(std::string_view v, const char* what) {
    if (v.size() > kMaxOnnxNameBytes)
      Fail(fmt::format("{} of {} bytes (at most {} are read); refused", what, v.size(), kMaxOnnxNameBytes));
    Charge(v.size());
    return std::string(v);
  }
  // What the parse holds in memory beyond the file (tensor records, names, labels, typed-field
  // entries), so that it grows with the file's bytes and never past kMaxOnnxMetadataBytes.
  void Charge(std::uint64_t bytes) {
    held_ += bytes;
    if (held_ > kMaxOnnxMetadataBytes)
      Fail(fmt::format("its tensor records, names and labels take more than {} MiB (at most {} MiB are read); refused",
                       kMaxOnnxMetadataBytes >> 20, kMaxOnnxMetadataBytes >> 20));
  }
  // A name shown inside a label: its first bytes only, so a label stays short however long the
  // names in the file are.
  static std::string Short(std::string_view v) {
    constexpr std::size_t kShown = 64;
    return v.size() <= kShown ? std::string(v) : std::string(v.substr(0, kShown)) + "...";
  }

  void Add(OnnxTensor t) {
    if (tensors_.size() >= kMaxOnnxTensors)
      Fail(fmt::format("more than {} tensors (initializers and Constant nodes); refused", kMaxOnnxTensors));
    Charge(sizeof(OnnxTensor) + t.origin.size() + t.dims.size() * sizeof(std::int64_t));
    tensors_.push_back(std::move(t));
  }

  void ParseGraph(Cursor g, int depth, const std::string& where) {
    if (depth > kMaxOnnxGraphDepth)
      Fail(fmt::format("subgraphs nested deeper than {} levels (If/Loop/Scan bodies); refused", kMaxOnnxGraphDepth));
    while (!g.done()) {
      const auto [field, wt] = Tag(g);
      if (field == 1 && wt == 2) {
        ParseNode(Sub(g), depth, where);
      } else if (field == 5 && wt == 2) {
        OnnxTensor t = ParseTensor(Sub(g));
        t.depth = depth;
        t.origin = where.empty() ? "initializer" : where + " initializer";
        Add(std::move(t));
      } else {
        Skip(g, wt);
      }
    }
  }

  void ParseNode(Cursor n, int depth, const std::string& where) {
    std::string_view output0, name, op_type, domain;
    bool has_output = false;
    std::vector<Cursor> attributes;
    std::vector<std::string_view> inputs;  // views of the buffer; kept only for a RoPE op
    while (!n.done()) {
      const auto [field, wt] = Tag(n);
      if (field == 1 && wt == 2) {
        Charge(sizeof(std::string_view));
        inputs.push_back(Str(n));
      } else if (field == 7 && wt == 2) {
        domain = Str(n);
      } else if (field == 2 && wt == 2) {
        const std::string_view o = Str(n);
        if (!has_output) output0 = o;
        has_output = true;
      } else if (field == 3 && wt == 2) {
        name = Str(n);
      } else if (field == 4 && wt == 2) {
        op_type = Str(n);
      } else if (field == 5 && wt == 2) {
        Charge(sizeof(Cursor));
        attributes.push_back(Sub(n));
      } else {
        Skip(n, wt);
      }
    }
    if (rope_nodes_ && IsOnnxRopeOp(op_type)) KeepRopeNode(attributes, inputs, op_type, domain, name, depth);
    held_ -= inputs.size() * sizeof(std::string_view);
    for (Cursor a : attributes) ParseAttribute(a, depth, where, output0, name, op_type);
    held_ -= attributes.size() * sizeof(Cursor);
  }

  // A RoPE op's node as OnnxNode: its domain, inputs and INT/FLOAT/STRING attributes, each string
  // bounded and charged like a tensor name.
  void KeepRopeNode(const std::vector<Cursor>& attributes, const std::vector<std::string_view>& inputs,
                    std::string_view op_type, std::string_view domain, std::string_view name, int depth) {
    if (rope_nodes_->size() >= kMaxOnnxRopeNodes)
      Fail(fmt::format("more than {} RotaryEmbedding/GroupQueryAttention nodes; refused", kMaxOnnxRopeNodes));
    OnnxNode node;
    node.op_type = Keep(op_type, "an op type");
    node.domain = Keep(domain, "an op domain");
    node.name = Keep(name, "a node name");
    node.depth = depth;
    Charge(sizeof(OnnxNode));
    for (std::string_view in : inputs) {
      Charge(sizeof(std::string));
      node.inputs.push_back(Keep(in, "a node input name"));
    }
    for (Cursor a : attributes) {
      OnnxAttribute at;
      while (!a.done()) {
        const auto [field, wt] = Tag(a);
        if (field == 1 && wt == 2) {
          at.name = Keep(Str(a), "an attribute name");
        } else if (field == 2 && wt == 5) {
          float f;
          const std::uint64_t p = a.pos;
          Fixed(a, 4);
          std::memcpy(&f, base_ + p, 4);
          at.f = f, at.has_f = true;
        } else if (field == 3 && wt == 0) {
          at.i = static_cast<std::int64_t>(Varint(a)), at.has_i = true;
        } else if (field == 4 && wt == 2) {
          at.s = Keep(Str(a), "a string attribute"), at.has_s = true;
        } else if (field == 20 && wt == 0) {
          at.type = static_cast<int>(Varint(a) & 0xff);
        } else {
          Skip(a, wt);
        }
      }
      Charge(sizeof(OnnxAttribute));
      node.attributes.push_back(std::move(at));
    }
    rope_nodes_->push_back(std::move(node));
  }

  void ParseAttribute(Cursor a, int depth, const std::string& where, std::string_view output0,
                      std::string_view node_name, std::string_view op_type) {
    std::string_view name;
    std::optional<Cursor> tensor;  // the last one (protobuf: the last occurrence of a singular field)
    std::vector<Cursor> graphs;
    while (!a.done()) {
      const auto [field, wt] = Tag(a);
      if (field == 1 && wt == 2) {
        name = Str(a);
      } else if (field == 5 && wt == 2) {
        tensor = Sub(a);
      } else if ((field == 6 || field == 11) && wt == 2) {
        Charge(sizeof(Cursor));
        graphs.push_back(Sub(a));
      } else {
        Skip(a, wt);
      }
    }
    if (op_type == "Constant" && name == "value" && tensor) {
      OnnxTensor t = ParseTensor(*tensor);
      if (!output0.empty()) t.name = Keep(output0, "a Constant node's output name");  // the value's name in the graph
      t.depth = depth;
      t.origin = where.empty() ? "Constant node" : where + " Constant node";
      Add(std::move(t));
    }
    for (Cursor g : graphs) {
      const std::string label =
          fmt::format("{} subgraph '{}' of {}", where.empty() ? "" : where + " >", Short(name),
                      node_name.empty() ? Short(op_type) + " node" : Short(op_type) + " '" + Short(node_name) + "'");
      // Every tensor of the subgraph repeats its label: the innermost 240 bytes are kept.
      std::string l = label.front() == ' ' ? label.substr(1) : label;
      if (l.size() > 240) l = "..." + l.substr(l.size() - 237);
      Charge(l.size());
      ParseGraph(g, depth + 1, l);
      held_ -= l.size();
    }
    held_ -= graphs.size() * sizeof(Cursor);
  }

  // A numeric field's occurrence: packed (wire type 2) or one element.
  void TypedField(Cursor& c, int field, int wt, int scalar_wt, OnnxTensor& t) {
    if (wt == 2) {
      Cursor s = Sub(c);
      Charge(sizeof(OnnxField));
      t.typed.push_back({field, s.pos, s.end - s.pos, 2});
    } else if (wt == scalar_wt) {
      const std::uint64_t at = c.pos;
      Skip(c, wt);
      Charge(sizeof(OnnxField));  // one entry per unpacked value: a file of them would hold 5x its size
      t.typed.push_back({field, at, c.pos - at, wt});
    } else {
      Skip(c, wt);
    }
  }

  OnnxTensor ParseTensor(Cursor c) {
    OnnxTensor t;
    std::vector<std::uint64_t> dims;
    auto add_dim = [&](std::uint64_t v) {
      if (dims.size() >= kMaxOnnxRank) Fail(fmt::format("a tensor with more than {} dimensions", kMaxOnnxRank));
      dims.push_back(v);
    };
    std::int64_t location = 0;
    while (!c.done()) {
      const auto [field, wt] = Tag(c);
      if (field == 1 && wt == 0) {
        add_dim(Varint(c));
      } else if (field == 1 && wt == 2) {
        Cursor s = Sub(c);
        while (!s.done()) add_dim(Varint(s));
      } else if (field == 2 && wt == 0) {
        t.data_type = static_cast<std::int32_t>(Varint(c));
      } else if (field == 8 && wt == 2) {
        const std::string_view v = Str(c);
        Charge(0 - static_cast<std::uint64_t>(t.name.size()));  // a repeated name replaces the last
        t.name = Keep(v, "a tensor name");
      } else if (field == 9 && wt == 2) {
        Cursor s = Sub(c);
        t.has_raw = true;
        t.raw_offset = s.pos;
        t.raw_size = s.end - s.pos;
      } else if (field == 4) {
        TypedField(c, 4, wt, 5, t);
      } else if (field == 5) {
        TypedField(c, 5, wt, 0, t);
      } else if (field == 10) {
        TypedField(c, 10, wt, 1, t);
      } else if (field == 13 && wt == 2) {
        Cursor e = Sub(c);
        std::string_view key, value;
        while (!e.done()) {
          const auto [f, w] = Tag(e);
          if (f == 1 && w == 2) key = Str(e);
          else if (f == 2 && w == 2) value = Str(e);
          else Skip(e, w);
        }
        if (key == "location") {
          Charge(0 - static_cast<std::uint64_t>(t.location.size()));
          t.location = Keep(value, "an external data location");
        } else if (key == "offset" || key == "length") {
          // onnx/external_data_helper.py writes them as decimal integers.
          std::uint64_t v = 0;
          if (value.empty() || value.size() > 19 || value.find_first_not_of("0123456789") != std::string::npos)
            Fail(fmt::format("external data {} '{}' is not a non-negative integer", key, Short(value)));
          for (char ch : value) v = v * 10 + static_cast<std::uint64_t>(ch - '0');
          if (key == "offset") t.has_offset = true, t.ext_offset = v;
          else t.has_length = true, t.ext_length = v;
        }
      } else if (field == 14 && wt == 0) {
        location = static_cast<std::int64_t>(Varint(c));
      } else {
        Skip(c, wt);
      }
    }
    t.external = location == 1;
    // dims: int64 on the wire; a negative one arrives as a huge varint.
    bool zero = false;
    for (std::uint64_t d : dims) {
      const auto sd = static_cast<std::int64_t>(d);
      if (sd < 0) Fail(fmt::format("tensor '{}' has a negative dimension ({})", t.name, sd));
      zero = zero || d == 0;
      t.dims.push_back(sd);
    }
    std::uint64_t n = 1;
    if (zero) {
      n = 0;
    } else {
      for (std::uint64_t d : dims) {
        if (n > (std::uint64_t{1} << 60) / d)
          Fail(fmt::format("tensor '{}': its dimensions multiply beyond 2^60 elements", t.name));
        n *= d;
      }
    }
    t.elements = static_cast<std::int64_t>(n);
    return t;
  }

  const std::uint8_t* base_;
  std::size_t size_;
  const std::string& what_;
  std::vector<OnnxTensor> tensors_;
  std::vector<OnnxNode>* rope_nodes_;
  std::uint64_t held_ = 0;  // bytes charged (Charge)
};

}  // namespace

std::vector<OnnxTensor> ParseOnnxModel(const std::byte* data, std::size_t size, const std::string& what,
                                       std::vector<OnnxNode>* rope_nodes) {
  return Parser(data, size, what, rope_nodes).Run();
}

void DecodeOnnxTypedData(const std::byte* data, std::size_t size, const OnnxTensor& t, DType dtype,
                         std::vector<std::byte>* out, const std::string& what) {
  const int field = OnnxTypedField(dtype);
  const auto* base = reinterpret_cast<const std::uint8_t*>(data);
  const std::size_t esize = Traits(dtype).size;
  const char* field_name = field == 4 ? "float_data" : field == 10 ? "double_data" : "int32_data";
  // Count first (nothing allocated from an unchecked count).
  std::uint64_t count = 0;
  for (const OnnxField& f : t.typed) {
    if (f.field != field) continue;
    if (f.offset > size || f.size > size - f.offset) ThrowInput(what, "a typed field outside the buffer");
    if (field == 5) {
      if (f.wire_type == 0) {
        ++count;
      } else {
        std::uint64_t ends = 0;
        for (std::uint64_t k = 0; k < f.size; ++k) ends += (base[f.offset + k] & 0x80) == 0;
        if (f.size > 0 && (base[f.offset + f.size - 1] & 0x80))
          ThrowInput(what, fmt::format("tensor '{}': truncated varint in int32_data", t.name));
        count += ends;
      }
    } else {
      const std::size_t w = field == 4 ? 4 : 8;
      if (f.size % w) ThrowInput(what, fmt::format("tensor '{}': {} of {} bytes, not whole elements", t.name, field_name, f.size));
      count += f.size / w;
    }
  }
  if (count != static_cast<std::uint64_t>(t.elements))
    ThrowInput(what, fmt::format("tensor '{}' holds {} values in {} but its dims {} say {}", t.name, count,
                                 field_name, fmt::join(t.dims, "x"), t.elements));
  out->assign(static_cast<std::size_t>(count) * esize, std::byte{0});
  std::byte* w = out->data();
  for (const OnnxField& f : t.typed) {
    if (f.field != field) continue;
    if (field != 5) {
      std::memcpy(w, data + f.offset, f.size);
      w += f.size;
      continue;
    }
    std::uint64_t k = f.offset;
    const std::uint64_t end = f.offset + f.size;
    while (k < end) {
      std::uint64_t v = 0;
      int shift = 0;
      for (;;) {
        const std::uint8_t b = base[k++];
        if (shift < 64) v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) break;
        if (shift >= 70) ThrowInput(what, fmt::format("tensor '{}': a varint longer than 10 bytes in int32_data", t.name));
      }
      if (v > 0xffff)
        ThrowInput(what, fmt::format("tensor '{}': int32_data value {} is not a 16-bit {} pattern", t.name,
                                     static_cast<std::int64_t>(v), Traits(dtype).name));
      const std::uint16_t bits = static_cast<std::uint16_t>(v);
      std::memcpy(w, &bits, 2);
      w += 2;
    }
  }
}

}  // namespace pe
