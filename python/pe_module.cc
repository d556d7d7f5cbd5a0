// pe._pe: the compiled half of the `pe` Python package (python/pe/__init__.py
// is the public half: keyword names, dtypes, torch). Over the public C++ API
// (include/pe/) only.
//
// Arrays: a generated or read tensor is produced straight into a buffer
// this module allocates; the numpy array returned views that buffer and
// owns it through a capsule (arr.base), so nothing is copied, and the
// buffer is freed with the last array that views it. bfloat16 comes back
// as uint16 (numpy has no bfloat16); the Python side says so.
//
// Errors: pe::Error becomes one of the package's exception classes
// (python/pe/__init__.py hands them over with set_error_classes): a missing
// file pe.FileNotFound (a FileNotFoundError), a refused one
// pe.PermissionDenied (a PermissionError), another operating-system
// refusal pe.IOFailure (an OSError), a bad argument pe.UsageError and a
// malformed file pe.InputError (ValueErrors); every one a pe.Error with
// `kind` ("usage", "input", "io") and `hint`. The message is the library's,
// with the CLI's flags spelled as Python keywords (--d-model -> d_model).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <tuple>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pe/pe.h>

#include <unistd.h>
#include <cstdio>

namespace py = pybind11;

namespace {

// A buffer owned by a capsule.
struct Buffer {
  std::unique_ptr<std::byte[]> bytes;
  std::size_t size = 0;
};

py::dtype NumpyDType(pe::DType d) {
  switch (d) {
    case pe::DType::kFloat16: return py::dtype("float16");
    case pe::DType::kBFloat16: return py::dtype("uint16");
    case pe::DType::kFloat32: return py::dtype("float32");
    case pe::DType::kFloat64: return py::dtype("float64");
  }
  return py::dtype("float64");
}

pe::DType DTypeOf(const std::string& name) { return pe::ParseDType(name); }

// Text from pe for Python: the bytes as a str when they are UTF-8, else
// escaped as the CLI prints them (pe::EscapeText: \xNN), never a
// UnicodeDecodeError.
py::str PyText(const std::string& s) {
  if (PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), nullptr))
    return py::reinterpret_steal<py::str>(o);
  PyErr_Clear();
  return py::str(pe::EscapeText(s));
}

// A Python str as UTF-8 for pe; `what` names it in the refusal of a lone
// surrogate ("\udcff" cannot be UTF-8) and of text over `max_bytes`
// (checked on its length before it is encoded or copied).
std::string Utf8Of(py::handle s, const std::string& what, std::size_t max_bytes = SIZE_MAX) {
  if (!PyUnicode_Check(s.ptr())) return py::str(s).cast<std::string>();
  const Py_ssize_t chars = PyUnicode_GET_LENGTH(s.ptr());
  if (static_cast<std::size_t>(chars) > max_bytes)
    throw pe::Error(pe::ErrorKind::kUsage,
                    what + ": " + std::to_string(chars) + " characters; pe takes at most " +
                        std::to_string(max_bytes) + " bytes");
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(s.ptr(), &size);
  if (!utf8) {
    PyErr_Clear();
    Py_ssize_t at = 0;
    Py_UCS4 c = 0;
    for (; at < chars; ++at) {
      c = PyUnicode_ReadChar(s.ptr(), at);
      if (c >= 0xD800 && c <= 0xDFFF) break;
    }
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(c));
    throw pe::Error(pe::ErrorKind::kUsage, what + ": holds a lone surrogate " + std::string(code) + " at index " +
                                               std::to_string(at) + " (not text: it has no UTF-8 form)");
  }
  if (static_cast<std::size_t>(size) > max_bytes)
    throw pe::Error(pe::ErrorKind::kUsage, what + ": " + std::to_string(size) + " bytes of UTF-8; pe takes at most " +
                                               std::to_string(max_bytes));
  return std::string(utf8, static_cast<std::size_t>(size));
}

// Arrays are built in memory: a result larger than half of this machine's
// memory is refused before anything is allocated (a file is streamed
// instead: pe generate -o FILE).
std::uint64_t MemoryCap() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return std::uint64_t{1} << 40;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 2;
}

std::string Gib(long double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes / (1ull << 30)));
  return buf;
}

void CheckFitsInMemory(long double bytes, const std::string& what) {
  const std::uint64_t cap = MemoryCap();
  if (bytes <= static_cast<long double>(cap)) return;
  throw pe::Error(pe::ErrorKind::kUsage, what + " needs " + Gib(bytes) +
                                             " of memory; pe builds arrays of at most half this machine's memory (" +
                                             Gib(cap) + ")",
                  "write it to a file instead: pe generate -o FILE streams it row block by row block");
}

std::string ShapeText(const pe::TensorInfo& t) {
  std::string s;
  for (auto d : t.shape) s += (s.empty() ? "" : " x ") + std::to_string(d);
  return s + " " + std::string(pe::DTypeName(t.dtype));
}

// Every tensor of `t` at once, checked before any is allocated.
void CheckTableFits(pe::Table& t) {
  long double total = 0;
  std::string shapes;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const pe::TensorInfo& info = t.tensor(i).info();
    long double n = pe::DTypeSize(info.dtype);
    for (auto d : info.shape) n *= static_cast<long double>(d);
    total += n;
    shapes += (shapes.empty() ? "" : ", ") + ("'" + info.name + "' " + ShapeText(info));
  }
  CheckFitsInMemory(total, "the table (" + shapes + ")");
}

// The whole tensor as a numpy array over a buffer of its own (no copy).
py::array TensorArray(pe::RowStream& s) {
  const pe::TensorInfo& t = s.info();
  auto* buf = new Buffer;
  py::capsule owner(buf, [](void* p) { delete static_cast<Buffer*>(p); });
  buf->size = t.byte_size();
  buf->bytes.reset(new std::byte[buf->size == 0 ? 1 : buf->size]);
  {
    py::gil_scoped_release unlocked;
    s.ReadAll(buf->bytes.get(), buf->size);
  }
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
  return py::array(NumpyDType(t.dtype), shape, buf->bytes.get(), owner);
}

py::object MetaToPython(const pe::MetaValue& v) {
  if (auto* i = std::get_if<std::int64_t>(&v)) return py::int_(*i);
  if (auto* d = std::get_if<double>(&v)) return py::float_(*d);
  return PyText(std::get<std::string>(v));
}

py::dict MetaDict(const pe::MetaList& meta) {
  py::dict d;
  for (const auto& [k, v] : meta) d[PyText(k)] = MetaToPython(v);
  return d;
}

pe::MetaList MetaFromPython(const py::object& meta) {
  pe::MetaList out;
  if (meta.is_none()) return out;
  if (py::len(meta) > pe::kMaxMetadataEntries)
    throw pe::Error(pe::ErrorKind::kUsage, "metadata: " + std::to_string(py::len(meta)) +
                                               " entries; pe writes at most " +
                                               std::to_string(pe::kMaxMetadataEntries));
  for (auto item : py::dict(meta)) {
    const std::string key = Utf8Of(py::str(item.first), "metadata key", pe::kMaxMetadataValueBytes);
    py::handle v = item.second;
    if (py::isinstance<py::bool_>(v)) out.emplace_back(key, std::int64_t{v.cast<bool>()});
    else if (py::isinstance<py::int_>(v)) out.emplace_back(key, v.cast<std::int64_t>());
    else if (py::isinstance<py::float_>(v)) out.emplace_back(key, v.cast<double>());
    else if (py::isinstance<py::str>(v))
      out.emplace_back(key, Utf8Of(v, "metadata '" + pe::EscapeText(key) + "'", pe::kMaxMetadataValueBytes));
    else
      throw pe::Error(pe::ErrorKind::kUsage,
                      "metadata '" + key + "': values must be int, float or str, not " +
                          std::string(py::str(py::type::of(v).attr("__name__"))));
  }
  return out;
}

// Tensors handed over by the Python side: [(name, C-contiguous array, dtype name)].
pe::Table WrapArrays(const py::list& tensors, const py::object& meta) {
  std::vector<pe::TensorView> views;
  for (auto item : tensors) {
    auto tup = item.cast<py::tuple>();
    auto arr = tup[1].cast<py::array>();
    pe::TensorView v;
    v.name = Utf8Of(tup[0], "tensor name", pe::kMaxMetadataValueBytes);
    v.dtype = DTypeOf(tup[2].cast<std::string>());
    if (static_cast<std::size_t>(arr.itemsize()) != pe::DTypeSize(v.dtype))
      throw pe::Error(pe::ErrorKind::kInternal, "array itemsize does not match its dtype");
    if (!(arr.flags() & py::array::c_style))
      throw pe::Error(pe::ErrorKind::kInternal, "array is not C-contiguous");
    for (py::ssize_t i = 0; i < arr.ndim(); ++i) v.shape.push_back(arr.shape(i));
    v.data = arr.data();
    views.push_back(std::move(v));
  }
  return pe::WrapTensors(views, MetaFromPython(meta));
}

pe::Spec MakeSpec(const std::string& scheme, const std::vector<std::pair<std::string, std::string>>& params) {
  pe::Spec spec(scheme);
  for (const auto& [k, v] : params) spec.Set(k, v);
  return spec;
}

// The table a verify/identify/dot call works on: a path, or wrapped arrays.
struct Source {
  std::optional<pe::Table> table;
  std::string name;
};

Source OpenSource(const py::object& src, const std::string& tensor, const std::string& format,
                  const py::object& meta) {
  Source s;
  if (py::isinstance<py::str>(src)) {
    s.name = src.cast<std::string>();
    pe::ReadOptions o;
    o.tensor = tensor;
    o.format = format;
    s.table.emplace(pe::OpenTableFile(s.name, o));
  } else {
    s.table.emplace(WrapArrays(src.cast<py::list>(), meta));
  }
  return s;
}

pe::RowStream& OneTensor(pe::Table& t, const std::string& tensor) {
  if (!tensor.empty()) return t.tensor(tensor);
  if (t.size() > 1) {
    std::string list;
    for (const auto& n : t.names()) list += (list.empty() ? "" : ", ") + n;
    throw pe::Error(pe::ErrorKind::kUsage, "tensor: the table holds several tensors (" + list + "); name one with tensor=");
  }
  return t.tensor(std::size_t{0});
}

// The CLI's flags in `text` spelled as the keywords of the Python functions:
// "--d-model" -> "d_model", "--rope-scaling" -> "rope_scaling".
std::string KeywordSpelling(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const bool flag = text.compare(i, 2, "--") == 0 && i + 2 < text.size() &&
                      std::islower(static_cast<unsigned char>(text[i + 2])) &&
                      (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1])));
    if (!flag) {
      out += text[i++];
      continue;
    }
    i += 2;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '-')) {
      out += text[i] == '-' ? '_' : text[i];
      ++i;
    }
  }
  return out;
}

// The exception classes of python/pe/__init__.py, by name.
py::dict& ErrorClasses() {
  static py::dict* classes = new py::dict();  // never destroyed: lives as long as the interpreter
  return *classes;
}

void RaisePython(const pe::Error& e) {
  const std::string message = pe::EscapeText(KeywordSpelling(e.what()));
  const char* kind = pe::ErrorKindName(e.kind());
  std::string cls = "UsageError";
  int err = 0;
  if (e.kind() == pe::ErrorKind::kInput || e.kind() == pe::ErrorKind::kIo) {
    cls = e.kind() == pe::ErrorKind::kIo ? "IOFailure" : "InputError";
    for (int code : {ENOENT, ENOTDIR, EACCES, EPERM}) {
      if (message.find(std::strerror(code)) == std::string::npos) continue;
      err = code;
      cls = code == ENOENT || code == ENOTDIR ? "FileNotFound" : "PermissionDenied";
      break;
    }
  }
  py::dict& classes = ErrorClasses();
  if (!classes.contains(cls)) cls = "Error";
  py::object type = classes.contains(cls) ? py::object(classes[py::str(cls)]) : py::object(py::handle(PyExc_ValueError).cast<py::object>());
  py::object exc = type(py::str(message));
  exc.attr("kind") = kind;
  exc.attr("hint") = pe::EscapeText(KeywordSpelling(e.hint()));
  if (err != 0) exc.attr("errno") = err;
  PyErr_SetObject(type.ptr(), exc.ptr());
}

// The partner of a RoPE cos (sin) tensor in the same table: its sin (cos), as `pe inspect` pairs them.
pe::RowStream* PairOf(pe::Table& t, const pe::RowStream& s) {
  const std::string& name = s.info().name;
  if (name != "cos" && name != "sin") return nullptr;
  const std::string other = name == "cos" ? "sin" : "cos";
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t.tensor(i).info().name == other && t.tensor(i).info().rows == s.info().rows &&
        t.tensor(i).info().cols == s.info().cols)
      return &t.tensor(i);
  return nullptr;
}

// The package's exception classes, the memory cap and the errors' translation.
void BindErrors(py::module_& m) {
  m.def(
      "set_error_classes", [](const py::dict& classes) { ErrorClasses() = classes; }, py::arg("classes"),
      "The package's exception classes by name (Error, UsageError, InputError, FileNotFound, PermissionDenied, "
      "IOFailure)");
  m.def(
      "check_fits", [](double bytes, const std::string& what) { CheckFitsInMemory(bytes, what); }, py::arg("bytes"),
      py::arg("what"), "Raises pe.UsageError when an array of `bytes` would pass the module's memory cap");
  m.def("keyword_spelling", &KeywordSpelling, py::arg("text"), "The CLI's flags in text as Python keywords");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const pe::Error& e) {
      RaisePython(e);
    } catch (const std::bad_alloc&) {
      RaisePython(pe::Error(pe::ErrorKind::kIo, "out of memory: the call needed more memory than is available (or "
                                                "than the limit allows: ulimit -v, a container)"));
    } catch (const std::length_error& e) {
      RaisePython(pe::Error(pe::ErrorKind::kIo, std::string("out of memory: ") + e.what()));
    }
  });
}

// Tables: generate, read and write (pe/table.h).
void BindTables(py::module_& m) {
  m.def(
      "generate",
      [](const std::string& scheme, const std::vector<std::pair<std::string, std::string>>& params) {
        pe::Table t = pe::GenerateTable(MakeSpec(scheme, params));
        CheckTableFits(t);
        py::dict arrays;
        for (std::size_t i = 0; i < t.size(); ++i) arrays[PyText(t.tensor(i).info().name)] = TensorArray(t.tensor(i));
        py::dict dtypes;
        for (std::size_t i = 0; i < t.size(); ++i)
          dtypes[PyText(t.tensor(i).info().name)] = std::string(pe::DTypeName(t.tensor(i).info().dtype));
        return py::make_tuple(arrays, dtypes, MetaDict(t.metadata()));
      },
      py::arg("scheme"), py::arg("params"),
      "generate(scheme, [(key, value), ...]) -> ({name: array}, {name: dtype}, metadata)");

  m.def(
      "read",
      [](const std::string& path, const std::string& tensor, const std::string& format) {
        pe::ReadOptions o;
        o.tensor = tensor;
        o.format = format;
        pe::Table t = pe::OpenTableFile(path, o);
        CheckTableFits(t);
        py::dict arrays, dtypes;
        for (std::size_t i = 0; i < t.size(); ++i) {
          arrays[PyText(t.tensor(i).info().name)] = TensorArray(t.tensor(i));
          dtypes[PyText(t.tensor(i).info().name)] = std::string(pe::DTypeName(t.tensor(i).info().dtype));
        }
        return py::make_tuple(arrays, dtypes, MetaDict(t.metadata()));
      },
      py::arg("path"), py::arg("tensor") = "", py::arg("format") = "",
      "read(path, tensor, format) -> ({name: array}, {name: dtype}, metadata)");

  m.def(
      "write",
      [](const std::string& path, const py::list& tensors, const py::object& meta, const std::string& format) {
        pe::Table t = WrapArrays(tensors, meta);
        pe::WriteOptions o;
        o.format = format;
        py::gil_scoped_release unlocked;
        pe::WriteTableFile(t, path, o);
      },
      py::arg("path"), py::arg("tensors"), py::arg("metadata"), py::arg("format") = "",
      "write(path, [(name, array, dtype)], metadata, format)");
}

// Analyses of a table: verify, identify, inspect (pe/analysis.h, pe/inspect.h).
void BindAnalysis(py::module_& m) {
  m.def(
      "verify",
      [](const py::object& src, const std::string& tensor, const std::string& format, const py::object& meta,
         const std::optional<std::string>& scheme, const std::vector<std::pair<std::string, std::string>>& params,
         const py::object& reference, const std::string& reference_tensor,
         const std::optional<std::vector<std::string>>& checks, const std::vector<std::int64_t>& offsets,
         std::optional<double> atol, std::optional<double> rtol, std::optional<double> max_ulp,
         const std::optional<std::string>& judge_as, bool diagnose, bool allow_empty) {
        Source s = OpenSource(src, tensor, format, meta);
        pe::VerifyRequest r;
        // tensor= as the CLI's --tensor: a file of one unnamed tensor (.npy,
        // .csv: "pe") is that tensor, and tensor= says which of the scheme's
        // tensors it is (reference_tensor=, when given, names the scheme's).
        std::string own = tensor;
        std::vector<std::pair<std::string, std::string>> spec_params = params;
        if (!tensor.empty() && s.table->size() == 1) {
          const std::string n = s.table->tensor(std::size_t{0}).info().name;
          if ((n.empty() || n == "pe") && n != tensor) {
            own.clear();
            if (reference.is_none() && reference_tensor.empty()) spec_params.emplace_back("tensor", tensor);
          }
        }
        if (reference.is_none() && !reference_tensor.empty()) r.reference_tensor = reference_tensor;
        if (scheme || !spec_params.empty()) r.spec = MakeSpec(scheme.value_or(""), spec_params);
        Source ref;
        if (py::isinstance<py::str>(reference) && pe::IsInlineSpec(reference.cast<std::string>())) {
          r.reference_source = reference.cast<std::string>();  // the table an inline spec generates
        } else if (!reference.is_none()) {
          ref = OpenSource(reference, reference_tensor, "", py::none());
          r.reference = &OneTensor(*ref.table, reference_tensor);
        }
        r.checks = checks;
        r.offsets = offsets;
        r.atol = atol;
        r.rtol = rtol;
        r.max_ulp = max_ulp;
        if (judge_as) r.judge_as = DTypeOf(*judge_as);
        r.diagnose = diagnose;
        r.allow_empty = allow_empty;
        r.name = s.name;
        std::pair<std::string, std::string> out;  // the JSON document and the text report
        if (own.empty() && s.table->size() > 1 && !r.reference) {  // every tensor, as `pe verify FILE`
          py::gil_scoped_release unlocked;
          const pe::VerifySetResult set = pe::VerifyTableSet(*s.table, r);
          out = {set.json, pe::VerifyText(set)};
        } else {
          pe::RowStream& t = OneTensor(*s.table, own);
          py::gil_scoped_release unlocked;
          const pe::VerifyResult one = pe::VerifyTable(t, r);
          out = {one.json, pe::VerifyText(one)};
        }
        return py::make_tuple(PyText(out.first), PyText(out.second));
      },
      py::arg("src"), py::arg("tensor"), py::arg("format"), py::arg("metadata"), py::arg("scheme"),
      py::arg("params"), py::arg("reference"), py::arg("reference_tensor"), py::arg("checks"), py::arg("offsets"),
      py::arg("atol"), py::arg("rtol"), py::arg("max_ulp"), py::arg("judge_as"), py::arg("diagnose"),
      py::arg("allow_empty") = false, "verify(...) -> (the pe.verify/1 report as JSON text, the text report of pe verify)");
  m.def(
      "parse_positions", [](const std::string& text) { return pe::ParsePositionList(text, "positions"); },
      py::arg("text"), "A positions list as --positions parses it");
  m.def("max_probe_entries", [] { return pe::kMaxProbeEntries; }, "The most entries L*d*d a probe may hold");
  m.def(
      "verify_probe",
      [](const py::object& src, const std::string& tensor, const std::string& scheme,
         const std::vector<std::pair<std::string, std::string>>& params, const std::vector<std::int64_t>& positions,
         std::optional<double> atol, std::optional<double> rtol, std::optional<double> max_ulp,
         const std::optional<std::string>& judge_as, bool diagnose) {
        Source s = OpenSource(src, tensor, "", py::none());
        pe::ProbeRequest r;
        r.spec = MakeSpec(scheme, params);
        r.positions = positions;
        r.atol = atol;
        r.rtol = rtol;
        r.max_ulp = max_ulp;
        if (judge_as) r.judge_as = DTypeOf(*judge_as);
        r.diagnose = diagnose;
        r.name = s.name.empty() ? "probe" : s.name;
        pe::RowStream& t = OneTensor(*s.table, tensor);
        pe::ProbeVerifyResult res;
        {
          py::gil_scoped_release nogil;
          res = pe::VerifyProbe(t, r);
        }
        return py::make_tuple(PyText(res.json), PyText(pe::ProbeVerifyText(res)));
      },
      py::arg("src"), py::arg("tensor"), py::arg("scheme"), py::arg("params"), py::arg("positions"),
      py::arg("atol"), py::arg("rtol"), py::arg("max_ulp"), py::arg("judge_as"), py::arg("diagnose"),
      "verify_probe(...) -> (the pe.verify-probe/1 report as JSON text, the text report of pe verify --probe)");

  m.def(
      "identify",
      [](const py::object& src, const std::string& tensor, const std::string& format, const py::object& meta) {
        Source s = OpenSource(src, tensor, format, meta);
        pe::RowStream& t = OneTensor(*s.table, tensor);
        pe::RowStream* pair = PairOf(*s.table, t);
        std::optional<pe::Table> other;  // a file's cos+sin pair: the other tensor, when present (as pe inspect)
        if (!pair && py::isinstance<py::str>(src) && (t.info().name == "cos" || t.info().name == "sin")) {
          pe::ReadOptions o;
          o.tensor = t.info().name == "cos" ? "sin" : "cos";
          o.format = format;
          try {
            other.emplace(pe::OpenTableFile(s.name, o));
            pair = PairOf(*other, t);
          } catch (const pe::Error&) {
            other.reset();
          }
        }
        std::string json;
        {
          py::gil_scoped_release unlocked;
          json = pe::IdentifyTable(t, pair).json;
        }
        return PyText(json);
      },
      py::arg("src"), py::arg("tensor"), py::arg("format"), py::arg("metadata"),
      "identify(...) -> the identification as JSON text");

  m.def(
      "inspect",
      [](const std::string& path, const std::string& tensor, const std::string& format, const std::string& rows,
         const std::string& cols, std::int64_t preview, const std::string& identify, bool json,
         const std::string& plot, const std::string& group, const std::string& cmap) {
        pe::InspectRequest r;
        r.path = path;
        r.plot = plot;
        r.group = group;
        r.cmap = cmap;
        r.tensor = tensor;
        r.format = format;
        r.rows = rows;
        r.cols = cols;
        r.preview = preview;
        if (identify == "always") r.identify = pe::InspectRequest::Identify::kAlways;
        else if (identify == "never") r.identify = pe::InspectRequest::Identify::kNever;
        std::string text;
        {
          py::gil_scoped_release unlocked;
          const pe::InspectResult in = pe::InspectFile(r);
          text = json ? pe::InspectJson(in) : pe::InspectText(in);
        }
        return PyText(text);
      },
      py::arg("path"), py::arg("tensor"), py::arg("format"), py::arg("rows"), py::arg("cols"), py::arg("preview"),
      py::arg("identify"), py::arg("json"), py::arg("plot") = "", py::arg("group") = "auto", py::arg("cmap") = "",
      "inspect(...) -> the pe inspect report (JSON or text); plot: its heatmap as pe inspect --plot");
}

// The decay curve of `pe dot` (pe/analysis.h ComputeDot).
void BindDot(py::module_& m) {
  m.def(
      "dot",
      [](const py::object& src, const std::string& tensor, const std::string& format, const py::object& meta,
         bool cosine, std::int64_t max_offset, bool mean_only) {
        Source s = OpenSource(src, tensor, format, meta);
        pe::RowStream& t = OneTensor(*s.table, tensor);
        pe::DotOptions o;
        o.cosine = cosine;
        o.max_offset = max_offset;
        o.mean_only = mean_only;
        pe::DotCurve c;
        {
          py::gil_scoped_release unlocked;
          c = pe::ComputeDot(t, o);
        }
        py::dict d;
        d["offset"] = py::array_t<std::int64_t>(c.offset.size(), c.offset.data());
        d["pairs"] = py::array_t<std::int64_t>(c.pairs.size(), c.pairs.data());
        for (auto [name, v] : {std::pair{"mean", &c.mean}, {"min", &c.min}, {"max", &c.max}, {"std", &c.std},
                               {"closed_form", &c.closed_form}})
          d[name] = v->empty() ? py::object(py::none()) : py::object(py::array_t<double>(v->size(), v->data()));
        return d;
      },
      py::arg("src"), py::arg("tensor"), py::arg("format"), py::arg("metadata"), py::arg("cosine"),
      py::arg("max_offset"), py::arg("mean_only"), "dot(...) -> {offset, pairs, mean, min, max, std, closed_form}");

  m.def(
      "generate_dot",
      [](const std::string& scheme, const std::vector<std::pair<std::string, std::string>>& params,
         const std::string& tensor, bool cosine, std::int64_t max_offset, bool mean_only) {
        pe::Table t = pe::GenerateTable(MakeSpec(scheme, params));
        pe::RowStream& s = OneTensor(t, tensor);
        pe::DotOptions o;
        o.cosine = cosine;
        o.max_offset = max_offset;
        o.mean_only = mean_only;
        pe::DotCurve c;
        {
          py::gil_scoped_release unlocked;
          c = pe::ComputeDot(s, o);
        }
        py::dict d;
        d["offset"] = py::array_t<std::int64_t>(c.offset.size(), c.offset.data());
        d["pairs"] = py::array_t<std::int64_t>(c.pairs.size(), c.pairs.data());
        for (auto [name, v] : {std::pair{"mean", &c.mean}, {"min", &c.min}, {"max", &c.max}, {"std", &c.std},
                               {"closed_form", &c.closed_form}})
          d[name] = v->empty() ? py::object(py::none()) : py::object(py::array_t<double>(v->size(), v->data()));
        return d;
      },
      py::arg("scheme"), py::arg("params"), py::arg("tensor"), py::arg("cosine"), py::arg("max_offset"),
      py::arg("mean_only"), "generate_dot(...): dot() of a spec, computed without a file");
  m.def(
      "run_dot",
      [](const std::vector<std::string>& inputs, const std::optional<std::string>& scheme,
         const std::vector<std::pair<std::string, std::string>>& params, const std::string& tensor, bool cosine,
         std::int64_t max_offset, bool mean_only, const std::string& plot, const std::vector<std::string>& matrix,
         std::int64_t matrix_size, const std::string& view, const std::string& title, const std::string& size,
         const std::vector<std::string>& labels, bool log_x, bool log_y, const std::string& xlim,
         const std::string& ylim, double train_len, const std::string& cmap) {
        // pe dot's request (pe/dot.h): the pictures are the CLI's, byte for byte.
        pe::DotRequest r;
        r.inputs = inputs;
        if (scheme) r.flags = MakeSpec(*scheme, params);
        r.tensor = tensor;
        r.cosine = cosine;
        r.max_offset = max_offset;
        r.mean_only = mean_only;
        r.output = "/dev/null";
        r.plot = plot;
        r.matrix = matrix;
        r.matrix_size = matrix_size;
        r.view = view;
        r.title = title;
        r.size = size;
        r.labels = labels;
        r.log_x = log_x;
        r.log_y = log_y;
        r.xlim = xlim;
        r.ylim = ylim;
        r.train_len = train_len;
        r.cmap = cmap;
        pe::DotOutput out;
        {
          py::gil_scoped_release unlocked;
          out = pe::RunDot(r);
        }
        return PyText(out.hint);
      },
      py::arg("inputs"), py::arg("scheme"), py::arg("params"), py::arg("tensor"), py::arg("cosine"),
      py::arg("max_offset"), py::arg("mean_only"), py::arg("plot"), py::arg("matrix"), py::arg("matrix_size"),
      py::arg("view"), py::arg("title"), py::arg("size"), py::arg("labels"), py::arg("log_x"), py::arg("log_y"),
      py::arg("xlim"), py::arg("ylim"), py::arg("train_len"), py::arg("cmap"),
      "run_dot(...): pe dot's pictures (--plot, --matrix) through pe::RunDot");

}

// The views of `pe dot --view` (pe/view.h).
void BindViews(py::module_& m) {
  // ---- views (pe/view.h) ----------------------------------------------------------
  py::class_<pe::View>(m, "View", "A view of `pe dot --view` (pe/view.h); use pe.view()")
      .def_readonly("name", &pe::View::name)
      .def_readonly("title", &pe::View::title)
      .def_readonly("subtitle", &pe::View::subtitle)
      .def_readonly("x_label", &pe::View::x_label)
      .def_readonly("y_label", &pe::View::y_label)
      .def_readonly("value_label", &pe::View::value_label)
      .def_readonly("note", &pe::View::note)
      .def_readonly("x_name", &pe::View::x_name)
      .def_readonly("log_x", &pe::View::log_x)
      .def_readonly("log_y", &pe::View::log_y)
      .def_readonly("markers", &pe::View::markers)
      .def_readonly("markers_on_y", &pe::View::markers_on_y)
      .def_readonly("row_label", &pe::View::row_label)
      .def_readonly("col_label", &pe::View::col_label)
      .def_readonly("signed_values", &pe::View::signed_values)
      .def_property_readonly(
          "series",
          [](const pe::View& v) {
            // [(name, x, [(column, values, label, draw)])], arrays copied once from the view.
            py::list out;
            for (const auto& s : v.series) {
              py::list cols;
              for (const auto& c : s.columns)
                cols.append(py::make_tuple(c.name, py::array_t<double>(c.values.size(), c.values.data()), c.label,
                                           c.draw));
              out.append(py::make_tuple(s.name, py::array_t<double>(s.x.size(), s.x.data()), cols));
            }
            return out;
          })
      .def_property_readonly(
          "panels",
          [](const pe::View& v) {
            py::list out;
            for (const auto& p : v.panels) {
              py::array_t<double> a({static_cast<py::ssize_t>(p.rows), static_cast<py::ssize_t>(p.cols)});
              std::copy(p.values.begin(), p.values.end(), a.mutable_data());
              out.append(py::make_tuple(p.title, a, p.series, p.patch_row, p.patch_col));
            }
            return out;
          })
      .def("csv", &pe::ViewCsv)
      .def("json", &pe::ViewJson)
      .def(
          "write", [](const pe::View& v, const std::string& path, const std::string& format) { pe::WriteViewFile(v, path, format); },
          py::arg("path"), py::arg("format") = "")
      .def(
          "plot",
          [](const pe::View& v, const std::string& path, const std::string& title, std::optional<bool> log_x,
             std::optional<bool> log_y, std::optional<std::pair<double, double>> xlim,
             std::optional<std::pair<double, double>> ylim, std::optional<double> vmin, std::optional<double> vmax,
             const std::string& cmap, std::pair<int, int> size, std::optional<double> train_len) {
            pe::PlotOptions o;
            o.title = title;
            o.log_x = log_x;
            o.log_y = log_y;
            if (xlim) std::tie(o.x_min, o.x_max) = *xlim;
            if (ylim) std::tie(o.y_min, o.y_max) = *ylim;
            if (vmin) o.vmin = *vmin;
            if (vmax) o.vmax = *vmax;
            o.cmap = cmap;
            std::tie(o.width, o.height) = size;
            if (train_len) o.train_len = *train_len;
            py::gil_scoped_release unlocked;
            pe::PlotView(v, path, o);
          },
          py::arg("path"), py::arg("title"), py::arg("log_x"), py::arg("log_y"), py::arg("xlim"), py::arg("ylim"),
          py::arg("vmin"), py::arg("vmax"), py::arg("cmap"), py::arg("size"), py::arg("train_len"));

  m.def(
      "view",
      [](const std::string& name, const std::vector<std::string>& inputs, std::int64_t max_offset,
         const std::string& tensor, const std::vector<std::int64_t>& columns, std::int64_t window,
         const std::vector<std::string>& collision_dtypes, const std::vector<std::int64_t>& patches,
         const std::string& grid, bool cls_token, std::int64_t prefix_tokens,
         const std::optional<std::string>& recipe_scheme,
         const std::vector<std::pair<std::string, std::string>>& recipe_params) {
        pe::ViewRequest r;
        r.max_offset = max_offset;
        r.tensor = tensor;
        r.columns = columns;
        r.window = window;
        r.collision_dtypes = collision_dtypes;
        r.patches = patches;
        r.grid = grid;
        r.cls_token = cls_token;
        r.prefix_tokens = prefix_tokens;
        if (recipe_scheme) r.recipe = MakeSpec(*recipe_scheme, recipe_params);
        py::gil_scoped_release unlocked;
        return pe::ComputeView(name, inputs, r);
      },
      py::arg("name"), py::arg("inputs"), py::arg("max_offset"), py::arg("tensor"), py::arg("columns"),
      py::arg("window"), py::arg("collision_dtypes"), py::arg("patches"), py::arg("grid"), py::arg("cls_token"),
      py::arg("prefix_tokens"), py::arg("recipe_scheme"), py::arg("recipe_params"), "view(...) -> View (pe/view.h ComputeView)");
  m.def("view_names", &pe::ViewNames, "The view names");
  m.def(
      "default_view",
      [](const std::vector<std::string>& inputs, const std::string& tensor) {
        pe::ViewRequest r;
        r.tensor = tensor;
        return pe::DefaultViewName(inputs, r);
      },
      py::arg("inputs"), py::arg("tensor"), "The view pe dot draws for these inputs by default");

  m.def(
      "buffer_address",
      [](const py::capsule& c) {
        return reinterpret_cast<std::uintptr_t>(static_cast<Buffer*>(c.get_pointer())->bytes.get());
      },
      py::arg("capsule"), "The address of the buffer a returned array owns (arr.base): tests prove no copy");
}

// Resizing learned tables (pe/resize.h).
void BindResize(py::module_& m) {
  m.def(
      "resize",
      [](py::array_t<float, py::array::c_style | py::array::forcecast> table, const std::string& rule,
         std::int64_t from_h, std::int64_t from_w, std::int64_t to_h, std::int64_t to_w, std::int64_t length,
         const std::string& mode, std::optional<bool> antialias, std::optional<bool> align_corners,
         std::int64_t prefix_tokens, std::int64_t offset, std::optional<double> interpolate_offset,
         std::int64_t merge_size, std::int64_t frames) {
        if (table.ndim() != 2) throw pe::Error(pe::ErrorKind::kUsage, "table: must be 2-D [positions, channels]");
        pe::ResizeOptions o;
        o.rule = rule;
        o.from_h = from_h;
        o.from_w = from_w;
        o.to_h = to_h;
        o.to_w = to_w;
        o.length = length;
        o.mode = mode;
        o.antialias = antialias;
        o.align_corners = align_corners;
        o.prefix_tokens = prefix_tokens;
        o.offset = offset;
        o.interpolate_offset = interpolate_offset;
        o.merge_size = merge_size;
        o.frames = frames;
        pe::ResizedTable r;
        {
          py::gil_scoped_release nogil;
          r = pe::Resize(table.data(), table.shape(0), table.shape(1), o);
        }
        py::array_t<float> out({static_cast<py::ssize_t>(r.rows), static_cast<py::ssize_t>(r.cols)});
        std::copy(r.values.begin(), r.values.end(), out.mutable_data());
        return py::make_tuple(out, r.description);
      },
      py::arg("table"), py::arg("rule"), py::arg("from_h"), py::arg("from_w"), py::arg("to_h"), py::arg("to_w"),
      py::arg("length"), py::arg("mode"), py::arg("antialias"), py::arg("align_corners"), py::arg("prefix_tokens"),
      py::arg("offset"), py::arg("interpolate_offset"), py::arg("merge_size"), py::arg("frames"),
      "pe::Resize (include/pe/resize.h)");
}

// Model artifacts: inspect and verify (pe/model.h).
void BindModels(py::module_& m) {
  m.def(
      "inspect_model",
      [](const std::string& path) {
        std::string json, text, hint;
        {
          py::gil_scoped_release unlocked;
          const pe::ModelInspection inspection = pe::InspectModel(path);
          json = inspection.json;
          text = pe::ModelInspectText(inspection);
          hint = inspection.hint;
        }
        return py::make_tuple(PyText(json), PyText(text), PyText(hint));
      },
      py::arg("path"), "inspect_model(path) -> (the pe.inspect-model/1 JSON text, the text of pe inspect MODEL, the hint)");
  m.def(
      "verify_models",
      [](const std::vector<std::string>& models, bool diagnose, bool allow_empty, std::int64_t max_model_len) {
        std::string json, text;
        {
          py::gil_scoped_release unlocked;
          const pe::ModelVerifyResult r = pe::VerifyModels({models, diagnose, allow_empty, max_model_len});
          json = r.report.json;
          text = pe::ModelVerifyText(r);
        }
        return py::make_tuple(PyText(json), PyText(text));
      },
      py::arg("models"), py::arg("diagnose"), py::arg("allow_empty"), py::arg("max_model_len") = -1,
      "verify_models(...) -> (the pe.verify/1 JSON text, the text of pe verify --model)");
}

// A live engine's rope verified (pe/engine.h): pe verify --engine.
void BindEngines(py::module_& m) {
  m.def(
      "verify_engine",
      [](const std::string& engine, const std::string& model, const std::vector<std::string>& plans,
         const std::vector<std::int64_t>& positions, std::optional<std::int64_t> start, bool diagnose) {
        std::string json, text;
        std::vector<float> data;
        std::int64_t L = 0, d = 0;
        {
          py::gil_scoped_release unlocked;
          pe::EngineVerifyRequest r;
          r.probe.engine = engine;
          r.probe.model = model;
          r.probe.positions = positions;
          r.probe.start = start;
          r.plans = plans;
          r.diagnose = diagnose;
          pe::EngineVerifyResult res = pe::VerifyEngine(r);
          json = res.json;
          text = pe::EngineVerifyText(res);
          L = static_cast<std::int64_t>(res.probe.positions.size());
          d = res.probe.dim;
          data = std::move(res.probe.data);
        }
        py::array_t<float> probe({L, d, d});
        std::copy(data.begin(), data.end(), probe.mutable_data());
        return py::make_tuple(PyText(json), PyText(text), probe);
      },
      py::arg("engine"), py::arg("model"), py::arg("plans"), py::arg("positions"), py::arg("start"),
      py::arg("diagnose"), "verify_engine(...) -> (the pe.verify-engine/1 JSON text, its text report, the probe)");
}

// The schemes and their parameters (pe/table.h).
void BindSchemes(py::module_& m) {
  m.def("spec_keys", &pe::SpecKeys, "Every spec key (the CLI's flags, underscore spelling)");
  m.def(
      "schemes",
      [] {
        py::list out;
        for (const auto& s : pe::ListSchemes()) {
          py::dict d;
          d["name"] = s.name;
          d["summary"] = s.summary;
          d["source"] = s.source;
          d["tensors"] = s.tensors;
          py::list params;
          for (const auto& p : s.params) {
            py::dict pd;
            pd["key"] = p.key;
            pd["meaning"] = p.meaning;
            pd["default"] = p.fallback;
            params.append(pd);
          }
          d["params"] = params;
          out.append(d);
        }
        return out;
      },
      "Every scheme, as `pe schemes` lists it");
}

}  // namespace

// The module, one concern at a time (each Bind... above).
PYBIND11_MODULE(_pe, m) {
  m.doc() = "The compiled core of the pe package; use the functions of `pe` instead.";

  m.attr("__version__") = std::string(pe::Version());
  BindErrors(m);
  BindTables(m);
  BindAnalysis(m);
  BindDot(m);
  BindViews(m);
  BindResize(m);
  BindModels(m);
  BindEngines(m);
  BindSchemes(m);
}
