#include "core/containers/gguf.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/base/error.h"

namespace pe {
namespace {

// Type ids and block sizes: gguf-py/gguf/constants.py (GGMLQuantizationType,
// GGML_QUANT_SIZES) at ggml-org/llama.cpp 00342301. Ids 4, 5, 31-33 and
// 36-38 were removed from ggml and are refused as unknown.
constexpr GgmlTypeTraits kGgmlTypes[] = {
    {0, "F32", 1, 4},        {1, "F16", 1, 2},         {2, "Q4_0", 32, 18},     {3, "Q4_1", 32, 20},
    {6, "Q5_0", 32, 22},     {7, "Q5_1", 32, 24},      {8, "Q8_0", 32, 34},     {9, "Q8_1", 32, 36},
    {10, "Q2_K", 256, 84},   {11, "Q3_K", 256, 110},   {12, "Q4_K", 256, 144},  {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},  {15, "Q8_K", 256, 292},   {16, "IQ2_XXS", 256, 66}, {17, "IQ2_XS", 256, 74},
    {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},  {20, "IQ4_NL", 32, 18},  {21, "IQ3_S", 256, 110},
    {22, "IQ2_S", 256, 82},  {23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},        {25, "I16", 1, 2},
    {26, "I32", 1, 4},       {27, "I64", 1, 8},        {28, "F64", 1, 8},       {29, "IQ1_M", 256, 56},
    {30, "BF16", 1, 2},      {34, "TQ1_0", 256, 54},   {35, "TQ2_0", 256, 66},  {39, "MXFP4", 32, 17},
};

// Items of arrays kept in memory, over the whole file; beyond it arrays are
// counted and skipped (a vocabulary of 256k tokens is not needed).
constexpr std::uint64_t kStoredItemBudget = 1 << 18;
constexpr std::uint64_t kMaxStoredArray = 1 << 16;
// Keys and tensor names: ggml limits names to 63 bytes (GGML_MAX_NAME 64);
// keys have no stated limit, 64 KiB is far above any.
constexpr std::uint64_t kMaxKey = 1 << 16;
constexpr std::uint64_t kMaxTensorName = 63;

std::size_t MinSize(GgufType t) {
  switch (t) {
    case GgufType::kU8: case GgufType::kI8: case GgufType::kBool: return 1;
    case GgufType::kU16: case GgufType::kI16: return 2;
    case GgufType::kU32: case GgufType::kI32: case GgufType::kF32: return 4;
    case GgufType::kU64: case GgufType::kI64: case GgufType::kF64: case GgufType::kString: return 8;
    case GgufType::kArray: return 12;
  }
  return 1;
}

bool ValidType(std::uint32_t t) { return t <= 12; }

class Parser {
 public:
  Parser(GgufBytes& bytes, const std::string& what) : bytes_(bytes), what_(what), size_(bytes.size()) {}

  std::uint64_t pos() const { return pos_; }
  std::uint64_t left() const { return size_ - pos_; }

  [[noreturn]] void Fail(const std::string& why) const { ThrowInput(what_, why); }

  void Need(std::uint64_t n, const char* item) {
    if (n > left())
      Fail(fmt::format("truncated GGUF: {} at byte {} needs {} bytes, {} left (file of {} bytes)", item, pos_, n,
                       left(), size_));
  }
  void Take(void* dst, std::size_t n, const char* item) {
    Need(n, item);
    auto* out = static_cast<unsigned char*>(dst);
    while (n > 0) {
      if (pos_ < buf_start_ || pos_ >= buf_start_ + buf_.size()) Fill();
      const std::size_t off = static_cast<std::size_t>(pos_ - buf_start_);
      const std::size_t k = std::min(n, buf_.size() - off);
      std::memcpy(out, buf_.data() + off, k);
      out += k;
      n -= k;
      pos_ += k;
    }
  }
  void Skip(std::uint64_t n, const char* item) {
    Need(n, item);
    pos_ += n;
  }
  template <typename T>
  T Get(const char* item) {
    unsigned char b[sizeof(T)];
    Take(b, sizeof(T), item);
    std::uint64_t v = 0;
    for (int k = static_cast<int>(sizeof(T)) - 1; k >= 0; --k) v = (v << 8) | b[k];
    T out;
    if constexpr (sizeof(T) == 8) {
      std::memcpy(&out, &v, 8);
    } else {
      const auto narrow = static_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t,
                                                         std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>>(v);
      std::memcpy(&out, &narrow, sizeof(T));
    }
    return out;
  }
  std::string String(std::uint64_t max, const char* item) {
    const auto n = Get<std::uint64_t>(item);
    if (n > left())
      Fail(fmt::format("truncated GGUF: {} of {} bytes at byte {} runs past the end of the file ({} bytes)", item, n,
                       pos_, size_));
    if (n > max) Fail(fmt::format("{} of {} bytes at byte {} is longer than {} bytes", item, n, pos_, max));
    std::string s(static_cast<std::size_t>(n), '\0');
    Take(s.data(), s.size(), item);
    return s;
  }

  GgufValue Value(GgufType type, int depth, const std::string& key) {
    GgufValue v;
    v.type = type;
    switch (type) {
      case GgufType::kU8: v.u = Get<std::uint8_t>("a u8 value"); break;
      case GgufType::kI8: v.i = Get<std::int8_t>("an i8 value"); break;
      case GgufType::kU16: v.u = Get<std::uint16_t>("a u16 value"); break;
      case GgufType::kI16: v.i = Get<std::int16_t>("an i16 value"); break;
      case GgufType::kU32: v.u = Get<std::uint32_t>("a u32 value"); break;
      case GgufType::kI32: v.i = Get<std::int32_t>("an i32 value"); break;
      case GgufType::kU64: v.u = Get<std::uint64_t>("a u64 value"); break;
      case GgufType::kI64: v.i = Get<std::int64_t>("an i64 value"); break;
      case GgufType::kF32: v.f = Get<float>("an f32 value"); break;
      case GgufType::kF64: v.f = Get<double>("an f64 value"); break;
      case GgufType::kBool: {
        const auto b = Get<std::uint8_t>("a bool value");
        if (b > 1) Fail(fmt::format("key '{}': bool value {} at byte {} is neither 0 nor 1", key, b, pos_ - 1));
        v.i = b;
        break;
      }
      case GgufType::kString: v.s = String(left(), "a string value"); break;
      case GgufType::kArray: {
        if (depth >= kMaxGgufArrayDepth)
          Fail(fmt::format("key '{}': arrays nest deeper than {} levels (corrupt or hostile)", key, kMaxGgufArrayDepth));
        const auto et = Get<std::uint32_t>("an array's element type");
        if (!ValidType(et)) Fail(fmt::format("key '{}': unknown array element type {}", key, et));
        v.elem = static_cast<GgufType>(et);
        v.count = Get<std::uint64_t>("an array's length");
        const std::uint64_t min = MinSize(v.elem);
        if (v.count > left() / min)
          Fail(fmt::format("key '{}': array of {} {} items at byte {} cannot fit in the {} bytes left", key, v.count,
                           GgufTypeName(v.elem), pos_, left()));
        v.stored = v.count <= kMaxStoredArray && stored_ + v.count <= kStoredItemBudget;
        if (v.stored) {
          stored_ += v.count;
          v.items.reserve(static_cast<std::size_t>(v.count));
          for (std::uint64_t k = 0; k < v.count; ++k) v.items.push_back(Value(v.elem, depth + 1, key));
        } else if (v.elem == GgufType::kString || v.elem == GgufType::kArray) {
          for (std::uint64_t k = 0; k < v.count; ++k) SkipValue(v.elem, depth + 1, key);
        } else {
          Skip(v.count * min, "an array's items");
        }
        break;
      }
    }
    return v;
  }

  void SkipValue(GgufType type, int depth, const std::string& key) {
    if (type == GgufType::kString) {
      const auto n = Get<std::uint64_t>("a string's length");
      if (n > left())
        Fail(fmt::format("truncated GGUF: a string of {} bytes at byte {} runs past the end of the file", n, pos_));
      pos_ += n;
    } else if (type == GgufType::kArray) {
      Value(type, depth, key);  // stored_ budget is spent: it skips
    } else {
      Skip(MinSize(type), "an array item");
    }
  }

 private:
  void Fill() {
    constexpr std::size_t kWindow = 1 << 16;
    buf_start_ = pos_;
    buf_.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kWindow, size_ - pos_)));
    bytes_.Read(buf_start_, buf_.size(), buf_.data());
  }

  GgufBytes& bytes_;
  const std::string& what_;
  std::uint64_t size_;
  std::uint64_t pos_ = 0;
  std::uint64_t buf_start_ = 0;
  std::vector<unsigned char> buf_;
  std::uint64_t stored_ = 0;
};

}  // namespace

std::string_view GgufTypeName(GgufType type) {
  static constexpr std::string_view kNames[] = {"u8",  "i8",   "u16",    "i16",   "u32", "i32", "f32",
                                                "bool", "string", "array", "u64", "i64", "f64"};
  const auto k = static_cast<std::uint32_t>(type);
  return k < 13 ? kNames[k] : "?";
}

const GgmlTypeTraits* FindGgmlType(std::uint32_t id) {
  for (const auto& t : kGgmlTypes)
    if (t.id == id) return &t;
  return nullptr;
}

std::optional<DType> GgmlTableDType(std::uint32_t id) {
  switch (id) {
    case 0: return DType::kFloat32;
    case 1: return DType::kFloat16;
    case 28: return DType::kFloat64;
    case 30: return DType::kBFloat16;
    default: return std::nullopt;
  }
}

bool GgufValue::is_number() const {
  return type != GgufType::kString && type != GgufType::kArray;
}

std::optional<double> GgufValue::number() const {
  switch (type) {
    case GgufType::kU8: case GgufType::kU16: case GgufType::kU32: case GgufType::kU64: return static_cast<double>(u);
    case GgufType::kI8: case GgufType::kI16: case GgufType::kI32: case GgufType::kI64: case GgufType::kBool:
      return static_cast<double>(i);
    case GgufType::kF32: case GgufType::kF64: return f;
    default: return std::nullopt;
  }
}

std::optional<std::int64_t> GgufValue::integer() const {
  switch (type) {
    case GgufType::kU8: case GgufType::kU16: case GgufType::kU32: case GgufType::kU64:
      if (u > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<std::int64_t>(u);
    case GgufType::kI8: case GgufType::kI16: case GgufType::kI32: case GgufType::kI64: case GgufType::kBool: return i;
    case GgufType::kF32: case GgufType::kF64:
      if (std::isfinite(f) && std::floor(f) == f && std::fabs(f) < 9e18) return static_cast<std::int64_t>(f);
      return std::nullopt;
    default: return std::nullopt;
  }
}

std::string GgufValue::ToText(std::size_t max_items) const {
  switch (type) {
    case GgufType::kString: return s;
    case GgufType::kBool: return i ? "true" : "false";
    case GgufType::kF32: return fmt::format("{}", static_cast<float>(f));
    case GgufType::kF64: return fmt::format("{}", f);
    case GgufType::kArray: {
      if (!stored) return fmt::format("[{} {} items]", count, GgufTypeName(elem));
      std::string out = "[";
      for (std::size_t k = 0; k < items.size() && k < max_items; ++k)
        out += (k ? ", " : "") + items[k].ToText(max_items);
      if (items.size() > max_items) out += fmt::format(", ... ({} items)", items.size());
      return out + "]";
    }
    default: {
      const auto n = integer();
      return n ? fmt::format("{}", *n) : fmt::format("{}", u);
    }
  }
}

const GgufValue* GgufFile::Find(const std::string& key) const {
  const auto it = kv_index.find(key);
  return it == kv_index.end() ? nullptr : &kv[it->second].second;
}

const GgufTensorInfo* GgufFile::FindTensor(const std::string& name) const {
  const auto it = tensor_index.find(name);
  return it == tensor_index.end() ? nullptr : &tensors[it->second];
}

GgufFile ParseGguf(GgufBytes& bytes, const std::string& what) {
  Parser p(bytes, what);
  GgufFile f;
  f.file_size = bytes.size();
  if (f.file_size < 4) p.Fail(fmt::format("not a GGUF file ({} bytes, shorter than the magic \"GGUF\")", f.file_size));
  char magic[4];
  p.Take(magic, 4, "the magic");
  if (std::memcmp(magic, "GGUF", 4) != 0) {
    if (std::memcmp(magic, "FUGG", 4) == 0) p.Fail("a GGUF file with its magic byte-swapped: not a GGUF file pe reads");
    p.Fail("not a GGUF file (no \"GGUF\" magic)");
  }
  f.version = p.Get<std::uint32_t>("the version");
  if (f.version == 1) p.Fail("GGUF version 1 (32-bit counts, before August 2023) is not read: convert the model again");
  if ((f.version & 0xFFFF) == 0 && f.version != 0) {
    const std::uint32_t swapped = __builtin_bswap32(f.version);
    if (swapped >= 1 && swapped <= 3)
      p.Fail(fmt::format("a big-endian GGUF file (version {} byte-swapped): pe reads little-endian GGUF only",
                         swapped));
  }
  if (f.version != 2 && f.version != 3)
    p.Fail(fmt::format("GGUF version {} is not read (pe reads versions 2 and 3)", f.version));
  const auto n_tensors = p.Get<std::uint64_t>("the tensor count");
  const auto n_kv = p.Get<std::uint64_t>("the metadata count");
  // Minimum sizes: a key-value is 8 + 4 + 1 bytes, a tensor info 8 + 4 + 4 + 8.
  if (n_kv > p.left() / 13)
    p.Fail(fmt::format("metadata count {} cannot fit in the {} bytes of the file", n_kv, f.file_size));
  if (n_tensors > p.left() / 24)
    p.Fail(fmt::format("tensor count {} cannot fit in the {} bytes of the file", n_tensors, f.file_size));
  f.kv.reserve(static_cast<std::size_t>(n_kv));
  for (std::uint64_t k = 0; k < n_kv; ++k) {
    std::string key = p.String(kMaxKey, "a metadata key");
    if (key.empty()) p.Fail(fmt::format("metadata key {} is empty", k));
    const auto t = p.Get<std::uint32_t>("a value type");
    if (!ValidType(t)) p.Fail(fmt::format("key '{}': unknown value type {}", key, t));
    GgufValue v = p.Value(static_cast<GgufType>(t), 0, key);
    if (!f.kv_index.emplace(key, f.kv.size()).second) p.Fail(fmt::format("duplicate metadata key '{}'", key));
    f.kv.emplace_back(std::move(key), std::move(v));
  }
  if (const GgufValue* a = f.Find("general.alignment")) {
    const auto n = a->integer();
    if (a->type != GgufType::kU32 && a->type != GgufType::kU64 && a->type != GgufType::kI32)
      p.Fail(fmt::format("general.alignment has type {}, expected u32", GgufTypeName(a->type)));
    if (!n || *n <= 0 || (*n & (*n - 1)) != 0 || *n > (1 << 30))
      p.Fail(fmt::format("general.alignment {} is not a power of two in [1, 2^30]", a->ToText()));
    f.alignment = static_cast<std::uint64_t>(*n);
  }
  f.tensors.reserve(static_cast<std::size_t>(n_tensors));
  for (std::uint64_t k = 0; k < n_tensors; ++k) {
    GgufTensorInfo t;
    t.name = p.String(kMaxTensorName, "a tensor name");
    const auto n_dims = p.Get<std::uint32_t>("a tensor's n_dims");
    if (n_dims < 1 || n_dims > kMaxGgufDims)
      p.Fail(fmt::format("tensor '{}' has {} dimensions (GGUF allows 1 to {})", t.name, n_dims, kMaxGgufDims));
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      const auto n = p.Get<std::uint64_t>("a tensor dimension");
      if (n > static_cast<std::uint64_t>(INT64_MAX))
        p.Fail(fmt::format("tensor '{}' dimension {} is {} (above 2^63-1)", t.name, d, n));
      if (n != 0 && t.elements > static_cast<std::uint64_t>(INT64_MAX) / n)
        p.Fail(fmt::format("tensor '{}': the element count overflows 63 bits", t.name));
      t.elements *= n;
      t.ne.push_back(n);
    }
    t.type = p.Get<std::uint32_t>("a tensor type");
    const GgmlTypeTraits* tt = FindGgmlType(t.type);
    if (!tt) p.Fail(fmt::format("tensor '{}' has unknown ggml type {}", t.name, t.type));
    if (t.ne[0] % tt->block != 0)
      p.Fail(fmt::format("tensor '{}': row length {} is not a multiple of the {} block size {}", t.name, t.ne[0],
                         tt->name, tt->block));
    const std::uint64_t blocks = t.elements / tt->block;
    if (blocks > UINT64_MAX / tt->bytes) p.Fail(fmt::format("tensor '{}': the byte size overflows 64 bits", t.name));
    t.nbytes = blocks * tt->bytes;
    t.offset = p.Get<std::uint64_t>("a tensor offset");
    if (t.offset % f.alignment != 0)
      p.Fail(fmt::format("tensor '{}' offset {} is not a multiple of the alignment {}", t.name, t.offset, f.alignment));
    if (!f.tensor_index.emplace(t.name, f.tensors.size()).second)
      p.Fail(fmt::format("duplicate tensor name '{}'", t.name));
    f.tensors.push_back(std::move(t));
  }
  // The data section starts at the next multiple of the alignment.
  const std::uint64_t end = p.pos();
  const std::uint64_t pad = (f.alignment - end % f.alignment) % f.alignment;
  f.data_start = end + pad;
  if (f.tensors.empty()) {
    f.data_start = std::min(f.data_start, f.file_size);
    return f;
  }
  if (f.data_start > f.file_size)
    p.Fail(fmt::format("truncated GGUF: the data section would start at byte {}, past the end ({} bytes)",
                       f.data_start, f.file_size));
  const std::uint64_t data_size = f.file_size - f.data_start;
  std::vector<const GgufTensorInfo*> order;
  for (const auto& t : f.tensors) {
    if (t.offset > data_size || t.nbytes > data_size - t.offset)
      p.Fail(fmt::format("tensor '{}' ({} bytes at data offset {}) runs past the end of the file (data section of {} "
                         "bytes; truncated?)",
                         t.name, t.nbytes, t.offset, data_size));
    order.push_back(&t);
  }
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (std::size_t k = 1; k < order.size(); ++k)
    if (order[k - 1]->offset + order[k - 1]->nbytes > order[k]->offset && order[k - 1]->nbytes && order[k]->nbytes)
      p.Fail(fmt::format("tensors '{}' and '{}' overlap in the data section (offsets {} and {})", order[k - 1]->name,
                         order[k]->name, order[k - 1]->offset, order[k]->offset));
  return f;
}

}  // namespace pe
