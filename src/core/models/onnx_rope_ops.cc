#include "core/models/onnx_rope_ops.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

namespace pe {
namespace {

const OnnxAttribute* Find(const OnnxNode& n, const char* name) {
  const OnnxAttribute* found = nullptr;
  for (const auto& a : n.attributes)
    if (a.name == name) found = &a;  // protobuf's rule: the last occurrence
  return found;
}

std::string ValueText(const OnnxAttribute& a) {
  if (a.has_s || a.type == 3) return a.s;
  if (a.has_f || a.type == 1) return fmt::format("{}", a.f);
  return fmt::format("{}", a.i);
}

// A name from the file inside a message: its first bytes only.
std::string Short(const std::string& v) { return v.size() <= 64 ? v : v.substr(0, 64) + "..."; }

std::string Shape(const std::vector<std::int64_t>& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// The shape of tensor `name` of the graph (empty when it is computed, not stored).
std::vector<std::int64_t> ShapeOf(const std::vector<OnnxTensorInfo>& tensors, const std::string& name) {
  for (const auto& t : tensors)
    if (t.info.name == name) return t.info.shape;
  return {};
}

std::string Pairing(int interleaved, std::int64_t r) {
  if (r <= 0) return interleaved ? "(2i, 2i+1)" : "(i, i+R/2): split at the rotary width R, not the head";
  const std::int64_t h = r / 2;
  if (interleaved) return fmt::format("(2i, 2i+1) for i < {}", h);
  return fmt::format("(i, i+{}) for i < {}: split at the rotary width {}, not the head", h, h, r);
}

void Caches(const OnnxNode& n, std::size_t cos_at, const std::vector<OnnxTensorInfo>& tensors, ArtifactRopeOp* op) {
  if (n.inputs.size() > cos_at) op->cos_cache = n.inputs[cos_at];
  if (n.inputs.size() > cos_at + 1) op->sin_cache = n.inputs[cos_at + 1];
  op->cos_shape = ShapeOf(tensors, op->cos_cache);
  op->sin_shape = ShapeOf(tensors, op->sin_cache);
}

// The rotary width and the checks of the caches against it.
void WidthAndChecks(const OnnxNode& n, bool contrib_rotary, std::int64_t context_length, ArtifactRopeOp* op) {
  const std::string who = fmt::format("{}{}", op->op, n.name.empty() ? "" : " '" + Short(n.name) + "'");
  const bool cos_known = op->cos_shape.size() == 2;
  const std::int64_t width = cos_known ? op->cos_shape[1] : -1;
  const OnnxAttribute* rd = op->op.ends_with("RotaryEmbedding") ? Find(n, "rotary_embedding_dim") : nullptr;
  if (rd && rd->i > 0) {
    op->rotary_dim = rd->i;
    op->rotary_dim_source = "rotary_embedding_dim";
  } else if (width > 0) {
    op->rotary_dim = 2 * width;
    op->rotary_dim_source = rd ? "rotary_embedding_dim 0: the whole head, 2 x cos_cache width"
                               : "2 x cos_cache width";
  }
  const std::int64_t r = op->rotary_dim;
  op->pairing = Pairing(op->interleaved, r);
  if (r > 0 && r % 2 == 1)
    op->warnings.push_back(fmt::format(
        "{}: rotary_embedding_dim {} is odd: ONNX Runtime 1.30 accepts it, pairs {} and outputs zeros for channel {} "
        "(neither rotated nor passed through)",
        who, r, op->interleaved ? fmt::format("(2i, 2i+1) for i < {}", r / 2) : fmt::format("(i, i+{})", r / 2),
        r - 1));
  if (contrib_rotary)
    if (const OnnxAttribute* s = Find(n, "scale"); s && s->f != 1.0)
      op->warnings.push_back(fmt::format("{}: scale {} is ignored by ONNX Runtime 1.30 (the output is unscaled)", who,
                                         ValueText(*s)));
  if (rd && rd->i > 0 && width >= 0 && width != r / 2)
    op->warnings.push_back(fmt::format("{}: cos_cache '{}' is {} wide but rotary_embedding_dim {} needs {}: ONNX "
                                       "Runtime refuses it at run time",
                                       who, Short(op->cos_cache), width, r, r / 2));
  if (cos_known && op->sin_shape != op->cos_shape)
    op->warnings.push_back(fmt::format("{}: sin_cache '{}' {} differs from cos_cache '{}' {}: ONNX Runtime refuses it "
                                       "at run time",
                                       who, Short(op->sin_cache), op->sin_shape.empty() ? "(computed)" : Shape(op->sin_shape),
                                       Short(op->cos_cache), Shape(op->cos_shape)));
  if (cos_known) {
    const std::int64_t rows = op->cos_shape[0];
    op->notes.push_back(fmt::format("positions 0..{} ({} cache rows); ONNX Runtime refuses a later position at run time",
                                    rows - 1, rows));
    if (context_length > rows)
      op->warnings.push_back(fmt::format("{}: the context length {} passes the cache's {} rows: ONNX Runtime will "
                                         "refuse positions {} and later",
                                         who, context_length, rows, rows));
  } else if (!op->cos_shape.empty()) {
    op->warnings.push_back(fmt::format("{}: cos_cache '{}' is {}, not [rows, R/2]: ONNX Runtime refuses it at run time",
                                       who, Short(op->cos_cache), Shape(op->cos_shape)));
  } else if (!op->cos_cache.empty()) {
    op->notes.push_back(fmt::format("cos_cache '{}' is computed in the graph (not an initializer or Constant)",
                                    Short(op->cos_cache)));
  }
}

}  // namespace

std::vector<ArtifactRopeOp> DescribeRopeOps(const std::vector<OnnxNode>& nodes,
                                            const std::vector<OnnxTensorInfo>& tensors, std::int64_t context_length) {
  std::vector<ArtifactRopeOp> out;
  for (const OnnxNode& n : nodes) {
    const bool ms = n.domain == "com.microsoft";
    const bool onnx = n.domain.empty() || n.domain == "ai.onnx";
    const bool gqa = n.op_type == "GroupQueryAttention";
    if (!(ms || (onnx && !gqa))) continue;  // another domain's op of the same name: not ONNX Runtime's
    ArtifactRopeOp op;
    op.op = (ms ? "com.microsoft." : "ai.onnx.") + n.op_type;
    op.node = n.name;
    op.inputs = n.inputs;
    for (const auto& a : n.attributes) op.attributes.emplace_back(a.name, ValueText(a));
    const OnnxAttribute* inter = Find(n, gqa ? "rotary_interleaved" : "interleaved");
    op.interleaved = inter && inter->i != 0 ? 1 : 0;
    if (gqa) {
      const OnnxAttribute* dr = Find(n, "do_rotary");
      op.rotary = dr && dr->i != 0;
      if (!op.rotary) {
        op.pairing = "none (do_rotary 0: the op does not rotate)";
        out.push_back(std::move(op));
        continue;
      }
    }
    Caches(n, gqa ? 7 : ms ? 2 : 1, tensors, &op);
    WidthAndChecks(n, ms && !gqa, context_length, &op);
    out.push_back(std::move(op));
  }
  return out;
}

}  // namespace pe
