#include "core/formats/torch_checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/model_folder.h"
#include "core/formats/cos_sin_pairs.h"
#include "core/containers/zip_tensor_source.h"

namespace pe {
namespace {

// torch/serialization.py: MAGIC_NUMBER = 0x1950a86a20f9469cfc6c, pickled
// first (protocol 2: PROTO 2, LONG1 of 10 bytes) by the legacy format.
constexpr unsigned char kLegacyStart[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8,
                                          0x50, 0x19};

struct StorageDType {
  const char* storage;
  const char* torch_name;
  std::size_t size;
  std::optional<DType> dtype;  ///< of each float (a complex element is two)
  bool complex = false;        ///< (real, imag) pairs: read as [..., 2] (core/formats/cos_sin_pairs.h)
};
const StorageDType kStorages[] = {
    {"FloatStorage", "float32", 4, DType::kFloat32},   {"HalfStorage", "float16", 2, DType::kFloat16},
    {"BFloat16Storage", "bfloat16", 2, DType::kBFloat16}, {"DoubleStorage", "float64", 8, DType::kFloat64},
    {"LongStorage", "int64", 8, {}},  {"IntStorage", "int32", 4, {}},   {"ShortStorage", "int16", 2, {}},
    {"CharStorage", "int8", 1, {}},   {"ByteStorage", "uint8", 1, {}},  {"BoolStorage", "bool", 1, {}},
    {"ComplexFloatStorage", "complex64", 8, DType::kFloat32, true},
    {"ComplexDoubleStorage", "complex128", 16, DType::kFloat64, true},
    {"ComplexHalfStorage", "complex32", 4, {}},
};

// Fills entry.info/byte_offset or entry.problem.
void Describe(TorchTensorEntry& e, const ZipArchive& zip, const std::string& prefix) {
  const PickledTensor& t = e.tensor;
  const StorageDType* sd = nullptr;
  for (const auto& s : kStorages)
    if (t.storage_type == s.storage) sd = &s;
  if (!sd) {
    e.problem = fmt::format("storage type {} is not read", t.storage_type);
    return;
  }
  const std::string member = prefix + "/data/" + t.storage_key;
  e.member = zip.Find(member);
  if (!e.member) ThrowInput(zip.what(), fmt::format("tensor '{}' refers to storage '{}', which is not in the archive",
                                                     t.path, member));
  if (!sd->dtype) {
    e.problem = std::string(sd->torch_name) == "complex32"
                    ? "dtype complex32 (two float16 per element): pe reads complex64 and complex128 caches "
                      "(real = cos, imag = sin); a float16 cos/sin pair holds each value to 2^-11 only"
                    : fmt::format("dtype {}; pe reads float16, bfloat16, float32 and float64", sd->torch_name);
    return;
  }
  if (t.size.empty()) {
    e.problem = "a scalar (0-d tensor) is not a table";
    return;
  }
  // Span and contiguity (row-major: each stride is the product of the later sizes).
  unsigned __int128 numel = 1, expect = 1;
  bool contiguous = true;
  for (std::size_t k = t.size.size(); k-- > 0;) {
    if (t.size[k] < 0 || t.stride[k] < 0) ThrowInput(zip.what(), fmt::format("tensor '{}' has a negative size or stride", t.path));
    if (t.size[k] != 1 && static_cast<unsigned __int128>(t.stride[k]) != expect) contiguous = false;
    expect *= static_cast<unsigned __int128>(t.size[k]);
    numel *= static_cast<unsigned __int128>(t.size[k]);
    if (numel > (static_cast<unsigned __int128>(1) << 62)) ThrowInput(zip.what(), fmt::format("tensor '{}' is too large", t.path));
  }
  if (numel == 0) {
    e.problem = "the tensor is empty";
    return;
  }
  std::string shape, stride;
  for (std::size_t k = 0; k < t.size.size(); ++k) {
    shape += fmt::format("{}{}", k ? ", " : "", t.size[k]);
    stride += fmt::format("{}{}", k ? ", " : "", t.stride[k]);
  }
  if (!contiguous) {
    e.problem = fmt::format("not contiguous (size ({}), stride ({})); pe reads contiguous row-major tensors: save "
                            "tensor.contiguous()",
                            shape, stride);
    return;
  }
  if (t.offset < 0) ThrowInput(zip.what(), fmt::format("tensor '{}' has a negative storage offset", t.path));
  const unsigned __int128 end = (static_cast<unsigned __int128>(t.offset) + numel) * sd->size;
  if (end > e.member->size)
    ThrowInput(zip.what(), fmt::format("tensor '{}' (shape ({}), offset {}) needs {} bytes of storage '{}', which has {}",
                                       t.path, shape, t.offset, static_cast<std::uint64_t>(end), member,
                                       e.member->size));
  TableInfo info;
  info.name = t.path;
  info.dtype = *sd->dtype;
  std::vector<std::int64_t> dims = t.size;
  if (sd->complex) {
    // view_as_real: each complex element is (real, imag), a trailing axis of 2.
    if (dims.back() > (std::int64_t{1} << 61)) ThrowInput(zip.what(), fmt::format("tensor '{}' is too large", t.path));
    dims.push_back(2);
  }
  while (dims.size() > 2 && dims.front() == 1) dims.erase(dims.begin());
  if (sd->complex && dims.size() != 3) {
    e.problem = fmt::format("a {} tensor of shape ({}) is not a cos/sin cache (pe reads complex [L, n] tensors: "
                            "real = cos, imag = sin)",
                            sd->torch_name, shape);
    return;
  }
  info.rows = dims[0];
  info.cols = dims.size() >= 2 ? dims.back() : 1;
  for (std::size_t k = 1; k + 1 < dims.size(); ++k) info.rows *= dims[k];
  if (dims.size() != 2) info.shape = dims;
  if (sd->complex) info.meta.Set(kCosSinPairsKey, std::string(sd->torch_name));
  CheckedTableBytes(info.rows, info.cols, info.dtype);
  e.byte_offset = static_cast<std::uint64_t>(t.offset) * sd->size;
  e.info = std::move(info);
}

// The last dotted component of a tensor's path.
std::string LastName(const std::string& path) {
  const std::size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

// TensorRT-LLM's rotary_cos_sin as create_sinusoidal_positions_for_attention_plugin
// returns it, reshape(1, -1) of [L, d/2, 2]: flat. Its debug dump writes
// rope_inputs.pt beside rope_config.json (ROPEConfig.model_dump_json), whose
// rotary_embedding_dim d (and rotary_embedding_max_positions L) shape it as
// [L, d/2, 2]; without the config it stays one column (its shape unknown).
void ShapeTensorRtCosSin(TorchTensorEntry& e, const ModelFolder& folder, const std::string& what) {
  const std::string last = LastName(e.tensor.path);
  if ((last != "rotary_cos_sin" && last != "mrope_rotary_cos_sin") || !e.info || (e.info->cols != 1 && e.info->rows != 1) ||
      (!e.info->shape.empty() && e.info->shape.size() > 2))
    return;
  const std::optional<std::string> text = folder.ReadSmall("rope_config.json", what, 1 << 20);
  if (!text) return;
  const std::string cfg = folder.Shown("rope_config.json");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception&) {
    ThrowInput(fmt::format("'{}'", cfg), "not valid JSON");
  }
  auto integer = [&](const char* key) -> std::int64_t {
    if (!j.is_object() || !j.contains(key)) return -1;
    const auto& v = j[key];
    if (!v.is_number_integer() || v.get<std::int64_t>() <= 0 || v.get<std::int64_t>() > (std::int64_t{1} << 32))
      ThrowInput(fmt::format("'{}' {}", cfg, key), "must be a positive integer (at most 2^32)");
    return v.get<std::int64_t>();
  };
  const std::int64_t d = integer("rotary_embedding_dim"), l = integer("rotary_embedding_max_positions");
  if (d < 0) return;
  const std::int64_t n = e.info->rows * e.info->cols;  // [N] or [1, N]
  if (d % 2 != 0 || n % d != 0 || (l > 0 && n / d != l))
    ThrowInput(fmt::format("tensor '{}'", e.tensor.path),
               fmt::format("{} values are not rotary_embedding_max_positions {} x rotary_embedding_dim {} of {} "
                           "((cos, sin) for each of {} / 2 frequencies per position)",
                           n, l > 0 ? std::to_string(l) : std::string("?"), d, cfg, d));
  e.info->rows = n / d;
  e.info->cols = d;
  e.info->shape = {n / d, d / 2, 2};
  e.info->meta.Set(kCosSinPairsKey, std::string("packed"));
  e.info->meta.Set("cos_sin_shape_from", fmt::format("{} rotary_embedding_dim {}", cfg, d));
}

void RefuseLegacy(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;
  unsigned char b[sizeof kLegacyStart] = {};
  const bool legacy = ::pread(fd, b, sizeof b, 0) == static_cast<ssize_t>(sizeof b) &&
                      std::memcmp(b, kLegacyStart, sizeof b) == 0;
  const bool pickle = b[0] == 0x80;
  ::close(fd);
  if (legacy)
    ThrowInput(what, "a legacy PyTorch checkpoint (torch < 1.6 or _use_new_zipfile_serialization=False; magic number "
                     "0x1950a86a20f9469cfc6c): pe reads torch.save's zip format only; re-save it with a current "
                     "torch.save");
  if (pickle)
    ThrowInput(what, "a bare pickle, not a PyTorch zip checkpoint: pe reads torch.save's zip format only");
}

}  // namespace

TorchCheckpoint ReadTorchCheckpoint(const std::string& path) { return ReadTorchCheckpoint(path, ModelFolder::OfFile(path)); }

TorchCheckpoint ReadTorchCheckpoint(const std::string& path, const ModelFolder& beside) {
  const std::string what = fmt::format("'{}'", path);
  if (!LooksLikeZip(path)) RefuseLegacy(path, what);
  TorchCheckpoint ck;
  ck.zip = ZipArchive::Open(path, what);
  const ZipMember* pkl = nullptr;
  for (const auto& m : ck.zip->members()) {
    const auto slash = m.name.find('/');
    if (slash != std::string::npos && m.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      pkl = &m;
      ck.prefix = m.name.substr(0, slash);
      break;
    }
  }
  if (!pkl) {
    if (ck.zip->Find("model.onnx") || ck.zip->members().empty())
      ThrowInput(what, "not a PyTorch checkpoint (no <prefix>/data.pkl member)");
    ThrowInput(what, "not a PyTorch checkpoint (a zip archive without a <prefix>/data.pkl member)");
  }
  if (const ZipMember* bo = ck.zip->Find(ck.prefix + "/byteorder")) {
    const auto b = ck.zip->ReadWhole(*bo, 16);
    const std::string order(reinterpret_cast<const char*>(b.data()), b.size());
    if (order != "little")
      ThrowInput(what, fmt::format("byteorder is '{}'; pe reads little-endian checkpoints", order.substr(0, 16)));
  }
  const std::vector<std::byte> bytes = ck.zip->ReadWhole(*pkl, kMaxTorchPickleBytes);
  std::vector<PickledTensor> tensors =
      UnpickleTensors(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), what);
  for (auto& t : tensors) {
    TorchTensorEntry e;
    e.tensor = std::move(t);
    Describe(e, *ck.zip, ck.prefix);
    ShapeTensorRtCosSin(e, beside, what);
    ck.tensors.push_back(std::move(e));
  }
  return ck;
}

std::unique_ptr<RowSource> OpenTorchEntry(const TorchCheckpoint& ck, const TorchTensorEntry& e) {
  if (!e.info) ThrowInput(ck.zip->what(), fmt::format("tensor '{}': {}", e.tensor.path, e.problem));
  return MakeZipTensorSource(ck.zip, *e.member, e.byte_offset, *e.info, false, false);
}

std::vector<std::string> ListTorch(const std::string& path) {
  std::vector<std::string> names;
  for (const auto& e : ReadTorchCheckpoint(path).tensors)
    if (e.info) names.push_back(e.tensor.path);
  return names;
}

std::unique_ptr<RowSource> OpenTorch(const std::string& path, const std::string& name) {
  TorchCheckpoint ck = ReadTorchCheckpoint(path);
  std::string names;
  const TorchTensorEntry* only = nullptr;
  std::size_t readable = 0;
  for (const auto& e : ck.tensors) {
    names += (names.empty() ? "" : ", ") + e.tensor.path;
    if (e.info) {
      ++readable;
      only = &e;
    }
    if (!name.empty() && e.tensor.path == name) return OpenTorchEntry(ck, e);
  }
  if (names.size() > 2000) names = names.substr(0, 2000) + ", ...";
  if (ck.tensors.empty()) ThrowInput(ck.zip->what(), "the checkpoint holds no tensor");
  if (!name.empty()) ThrowInput(ck.zip->what(), fmt::format("no tensor '{}' (the checkpoint has: {})", name, names));
  if (readable == 1) return OpenTorchEntry(ck, *only);
  if (ck.tensors.size() == 1) return OpenTorchEntry(ck, ck.tensors[0]);  // throws why it is not readable
  ThrowInput(ck.zip->what(), fmt::format("holds several tensors ({}); name the one to read (--dataset; --tensor with "
                                         "--init-from)",
                                         names));
}

}  // namespace pe
