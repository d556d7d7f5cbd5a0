#include "core/containers/restricted_unpickler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <set>
#include <unordered_map>

#include "core/base/error.h"

namespace pe {
namespace {

// Bounds (a state dict of a 1000-layer model has ~100k objects). Each opcode byte makes at
// most one object or memo entry, so those also stay below the pickle's size; the fixed caps
// keep the whole unpickle (objects ~72 bytes, items 4, memo entries ~40, tensors with their
// shapes and paths) to a few hundred MiB whatever the pickle does.
constexpr std::size_t kMaxObjects = std::size_t{1} << 21;
constexpr std::size_t kMaxMemo = std::size_t{1} << 21;
// Container items: every item costs an opcode except those OrderedDict(pairs) copies, so a
// real pickle has fewer items than bytes; twice that leaves room and stops a memoised list
// from being copied into dicts again and again.
constexpr std::size_t kMaxItems = std::size_t{1} << 23;
constexpr std::size_t kItemsPerByte = 2;
constexpr std::size_t kMaxStack = std::size_t{1} << 20;
constexpr std::size_t kMaxMarks = 10000;
constexpr int kMaxNesting = 200;                   // containers inside containers
constexpr std::size_t kMaxWalkVisits = std::size_t{1} << 22;
// The dotted paths the walk builds, all together: a long key shared by many paths (or nested
// many levels deep) would otherwise cost its length at every visit.
constexpr std::size_t kMaxPathBytes = std::size_t{64} << 20;
constexpr std::size_t kMaxTensors = std::size_t{1} << 17;
constexpr std::size_t kMaxDims = 32;

enum class K {
  kNone, kBool, kInt, kFloat, kStr, kBytes, kTuple, kList, kDict,
  kGlobal,   // an allowed callable or storage type; s = "module.name"
  kStorage,  // a persistent-id storage; s = key, s2 = type name, i = numel
  kTensor,   // i = index into tensors_
};

// Strings are views: of the pickle's bytes (which outlive the unpickle) or of an interned
// global name, so an object costs the same whatever string it holds.
struct Obj {
  K k = K::kNone;
  int depth = 0;
  std::int64_t i = 0;
  std::string_view s, s2;
  std::vector<std::uint32_t> items;  // tuple/list elements; dict key, value, key, value...
};

const char* const kStorageTypes[] = {
    "FloatStorage", "HalfStorage", "BFloat16Storage", "DoubleStorage", "LongStorage", "IntStorage",
    "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage", "ComplexFloatStorage", "ComplexDoubleStorage", "ComplexHalfStorage",
    "QInt8Storage", "QUInt8Storage", "QInt32Storage",
};

// The allow-list (see the header); false for everything else.
bool Allowed(const std::string& module, const std::string& name) {
  if (module == "collections" && name == "OrderedDict") return true;
  if (module == "torch._utils" &&
      (name == "_rebuild_tensor_v2" || name == "_rebuild_parameter" || name == "_rebuild_parameter_with_state"))
    return true;
  if (module == "torch._tensor" && name == "_rebuild_from_type_v2") return true;
  // Types named as the second argument of _rebuild_from_type_v2 (never called).
  if ((module == "torch" && name == "Tensor") || (module == "torch.nn.parameter" && name == "Parameter")) return true;
  if (module == "torch" && name == "Size") return true;
  if (module == "torch.storage" && (name == "UntypedStorage" || name == "TypedStorage")) return true;
  if (module == "torch")
    for (const char* t : kStorageTypes)
      if (name == t) return true;
  return false;
}

std::string Shown(std::string_view s) {
  std::string out;
  for (unsigned char c : s.substr(0, 120)) {
    if (c < 0x20 || c >= 0x7f || c == '\\') out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  return s.size() > 120 ? out + "..." : out;
}

class Unpickler {
 public:
  Unpickler(std::string_view b, const std::string& what) : b_(b), what_(what) {}

  std::vector<PickledTensor> Run() {
    const std::uint32_t root = Load();
    // Counted over the shared graph first, so a subtree shared 2^60 ways is refused in time
    // linear in the pickle instead of after kMaxWalkVisits string-building visits.
    path_counts_.assign(objs_.size(), 0);
    if (CountPaths(root, 0) > kMaxWalkVisits)
      Fail(fmt::format("the object tree has more than {} paths", kMaxWalkVisits));
    Walk(root, "", 0);
    return std::move(found_);
  }

 private:
  [[noreturn]] void Fail(const std::string& why) { ThrowInput(what_, "data.pkl: " + why); }

  const unsigned char* Take(std::size_t n) {
    if (b_.size() - p_ < n) Fail("the pickle is truncated");
    const auto* q = reinterpret_cast<const unsigned char*>(b_.data() + p_);
    p_ += n;
    return q;
  }
  std::uint64_t ULe(std::size_t n) {
    const unsigned char* q = Take(n);
    std::uint64_t v = 0;
    for (std::size_t k = n; k-- > 0;) v = (v << 8) | q[k];
    return v;
  }
  std::string Line() {
    const std::size_t end = b_.substr(p_, 257).find('\n');  // never a scan of the rest of the pickle
    if (end == std::string_view::npos) Fail("a GLOBAL opcode without a short name line");
    std::string s(b_.substr(p_, end));
    p_ += end + 1;
    return s;
  }

  std::uint32_t New(K k) {
    if (objs_.size() >= kMaxObjects) Fail(fmt::format("more than {} objects", kMaxObjects));
    objs_.emplace_back();
    objs_.back().k = k;
    return static_cast<std::uint32_t>(objs_.size() - 1);
  }
  void Push(std::uint32_t o) {
    if (stack_.size() >= kMaxStack) Fail(fmt::format("the stack exceeds {} entries", kMaxStack));
    stack_.push_back(o);
  }
  std::uint32_t Pop() {
    if (stack_.size() <= Floor()) Fail("stack underflow");
    const std::uint32_t o = stack_.back();
    stack_.pop_back();
    return o;
  }
  std::uint32_t Top() {
    if (stack_.size() <= Floor()) Fail("stack underflow");
    return stack_.back();
  }
  std::size_t Floor() const { return marks_.empty() ? 0 : marks_.back(); }
  // The objects above the last mark, which is removed.
  std::vector<std::uint32_t> PopMark() {
    if (marks_.empty()) Fail("an opcode needs a MARK and there is none");
    const std::size_t m = marks_.back();
    marks_.pop_back();
    std::vector<std::uint32_t> out(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return out;
  }
  void AddItem(std::uint32_t container, std::uint32_t item) {
    Obj& c = objs_[container];
    const int d = objs_[item].depth + 1;
    if (d > kMaxNesting) Fail(fmt::format("containers nested deeper than {}", kMaxNesting));
    if (++items_ > std::min(kMaxItems, kItemsPerByte * b_.size() + 1024))
      Fail(fmt::format("the containers hold more than {} items (the same objects referred to again and again)",
                       std::min(kMaxItems, kItemsPerByte * b_.size() + 1024)));
    c.depth = std::max(c.depth, d);
    c.items.push_back(item);
  }
  std::uint32_t Tuple(const std::vector<std::uint32_t>& items) {
    const std::uint32_t t = New(K::kTuple);
    for (auto o : items) AddItem(t, o);
    return t;
  }
  void Memo(std::uint64_t key) {
    if (memo_.size() >= kMaxMemo && !memo_.count(key)) Fail(fmt::format("more than {} memo entries", kMaxMemo));
    memo_[key] = Top();
  }
  std::uint32_t Get(std::uint64_t key) {
    const auto it = memo_.find(key);
    if (it == memo_.end()) Fail(fmt::format("memo index {} is out of range (never stored)", key));
    return it->second;
  }
  std::int64_t IntOf(std::uint32_t o, const char* what) {
    if (objs_[o].k != K::kInt && objs_[o].k != K::kBool) Fail(fmt::format("{} is not an integer", what));
    return objs_[o].i;
  }
  std::vector<std::int64_t> IntTuple(std::uint32_t o, const char* what) {
    if (objs_[o].k != K::kTuple && objs_[o].k != K::kList) Fail(fmt::format("{} is not a tuple", what));
    if (objs_[o].items.size() > kMaxDims) Fail(fmt::format("{} has more than {} dimensions", what, kMaxDims));
    std::vector<std::int64_t> out;
    for (auto e : objs_[o].items) out.push_back(IntOf(e, what));
    return out;
  }

  // REDUCE / NEWOBJ of an allowed callable (never anything else: only
  // allowed globals exist as objects).
  std::uint32_t Call(std::uint32_t fn, std::uint32_t args) {
    if (objs_[fn].k != K::kGlobal) Fail("REDUCE of something that is not a global");
    if (objs_[args].k != K::kTuple) Fail("REDUCE arguments are not a tuple");
    // References stay valid: objs_ is a deque, and only new objects are added to.
    const std::string_view name = objs_[fn].s;
    const std::vector<std::uint32_t>& a = objs_[args].items;
    if (name == "collections.OrderedDict") {
      const std::uint32_t d = New(K::kDict);
      if (a.size() == 1 && (objs_[a[0]].k == K::kList || objs_[a[0]].k == K::kTuple)) {
        const std::vector<std::uint32_t>& pairs = objs_[a[0]].items;
        for (auto pr : pairs) {
          if (objs_[pr].k != K::kTuple || objs_[pr].items.size() != 2) Fail("OrderedDict of something not pairs");
          const auto& kv = objs_[pr].items;
          AddItem(d, kv[0]);
          AddItem(d, kv[1]);
        }
      } else if (!a.empty()) {
        Fail("OrderedDict with unexpected arguments");
      }
      return d;
    }
    if (name == "torch.Size") {
      if (a.size() != 1 || objs_[a[0]].k != K::kTuple) Fail("torch.Size with unexpected arguments");
      return a[0];
    }
    if (name == "torch._tensor._rebuild_from_type_v2") {
      // (func, new_type, args, state): func(*args), the type and state dropped.
      if (a.size() < 3) Fail("_rebuild_from_type_v2 with fewer than 3 arguments");
      return Call(a[0], a[2]);
    }
    if (name == "torch._utils._rebuild_parameter" || name == "torch._utils._rebuild_parameter_with_state") {
      if (a.empty() || objs_[a[0]].k != K::kTensor) Fail("_rebuild_parameter of something that is not a tensor");
      return a[0];
    }
    if (name == "torch._utils._rebuild_tensor_v2") {
      if (a.size() < 4) Fail("_rebuild_tensor_v2 with fewer than 4 arguments");
      if (objs_[a[0]].k != K::kStorage) Fail("_rebuild_tensor_v2 of something that is not a storage");
      if (tensors_.size() >= kMaxTensors) Fail(fmt::format("more than {} tensors", kMaxTensors));
      PickledTensor t;
      t.storage_key = std::string(objs_[a[0]].s);
      t.storage_type = std::string(objs_[a[0]].s2);
      t.storage_numel = objs_[a[0]].i;
      t.offset = IntOf(a[1], "the storage offset");
      t.size = IntTuple(a[2], "the size");
      t.stride = IntTuple(a[3], "the stride");
      if (t.size.size() != t.stride.size()) Fail("size and stride differ in length");
      tensors_.push_back(std::move(t));
      const std::uint32_t o = New(K::kTensor);
      objs_[o].i = static_cast<std::int64_t>(tensors_.size() - 1);
      return o;
    }
    Fail(fmt::format("calling {} is not supported", name));
  }

  // torch.save's persistent id: ('storage', storage type, key, location, numel).
  std::uint32_t PersistentLoad(std::uint32_t pid) {
    const Obj& t = objs_[pid];
    if (t.k != K::kTuple || t.items.size() < 5 || objs_[t.items[0]].k != K::kStr || objs_[t.items[0]].s != "storage")
      Fail("a persistent id that is not ('storage', type, key, location, numel)");
    const Obj& type = objs_[t.items[1]];
    const Obj& key = objs_[t.items[2]];
    if (type.k != K::kGlobal) Fail("a persistent id whose storage type is not a global");
    if (key.k != K::kStr) Fail("a persistent id whose key is not a string");
    if (key.s.empty() || key.s.size() > 64 ||
        key.s.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_") != std::string::npos)
      Fail(fmt::format("storage key '{}' is not a plain name", Shown(key.s)));
    if (type.s.find("Storage") == std::string::npos) Fail(fmt::format("{} is not a storage type", type.s));
    const std::int64_t numel = IntOf(t.items[4], "the storage size");
    if (numel < 0) Fail("a negative storage size");
    const std::string_view tname = type.s.substr(type.s.rfind('.') + 1);
    const std::string_view k = key.s;
    const std::uint32_t o = New(K::kStorage);
    objs_[o].s = k;
    objs_[o].s2 = tname;
    objs_[o].i = numel;
    return o;
  }

  std::uint32_t Global(std::string_view module, std::string_view name) {
    const std::string m(module), n(name);
    if (!Allowed(m, n))
      ThrowInput(what_, fmt::format("refuses to load global {}.{} (only tensor and container types are allowed)",
                                    Shown(module), Shown(name)));
    const std::uint32_t o = New(K::kGlobal);
    objs_[o].s = *globals_.insert(m + "." + n).first;  // the allow-list is short: few distinct names
    return o;
  }

  std::uint32_t Str(std::size_t n, K k = K::kStr) {
    if (b_.size() - p_ < n) Fail("the pickle is truncated (a string runs past its end)");
    const std::uint32_t o = New(k);
    objs_[o].s = b_.substr(p_, n);
    p_ += n;
    return o;
  }

  std::uint32_t Int(std::int64_t v) {
    const std::uint32_t o = New(K::kInt);
    objs_[o].i = v;
    return o;
  }

  std::uint32_t Load() {
    for (;;) {
      const unsigned char op = *Take(1);
      switch (op) {
        case 0x80: {  // PROTO
          const unsigned v = *Take(1);
          if (v > 5) Fail(fmt::format("pickle protocol {} is not supported (2-5 are)", v));
          break;
        }
        case 0x95: Take(8); break;  // FRAME (a hint)
        case '.': {                 // STOP
          if (stack_.size() != 1 || !marks_.empty()) Fail("STOP with a malformed stack");
          return stack_.back();
        }
        case '(':
          if (marks_.size() >= kMaxMarks) Fail(fmt::format("more than {} open MARKs", kMaxMarks));
          marks_.push_back(stack_.size());
          break;
        case '}': Push(New(K::kDict)); break;
        case ']': Push(New(K::kList)); break;
        case ')': Push(New(K::kTuple)); break;
        case 't': Push(Tuple(PopMark())); break;
        case 0x85: { auto a = Pop(); Push(Tuple({a})); break; }
        case 0x86: { auto b = Pop(), a = Pop(); Push(Tuple({a, b})); break; }
        case 0x87: { auto c = Pop(), b = Pop(), a = Pop(); Push(Tuple({a, b, c})); break; }
        case 'l': {
          auto items = PopMark();
          const std::uint32_t l = New(K::kList);
          for (auto o : items) AddItem(l, o);
          Push(l);
          break;
        }
        case 'd': {
          auto items = PopMark();
          if (items.size() % 2) Fail("DICT with an odd number of items");
          const std::uint32_t d = New(K::kDict);
          for (auto o : items) AddItem(d, o);
          Push(d);
          break;
        }
        case 'a': {
          const auto v = Pop();
          const auto l = Top();
          if (objs_[l].k != K::kList) Fail("APPEND to something that is not a list");
          AddItem(l, v);
          break;
        }
        case 'e': {
          auto items = PopMark();
          const auto l = Top();
          if (objs_[l].k != K::kList) Fail("APPENDS to something that is not a list");
          for (auto o : items) AddItem(l, o);
          break;
        }
        case 's': {
          const auto v = Pop(), k = Pop();
          const auto d = Top();
          if (objs_[d].k != K::kDict) Fail("SETITEM on something that is not a dict");
          AddItem(d, k);
          AddItem(d, v);
          break;
        }
        case 'u': {
          auto items = PopMark();
          const auto d = Top();
          if (objs_[d].k != K::kDict) Fail("SETITEMS on something that is not a dict");
          if (items.size() % 2) Fail("SETITEMS with an odd number of items");
          for (auto o : items) AddItem(d, o);
          break;
        }
        case 'J': Push(Int(static_cast<std::int32_t>(ULe(4)))); break;
        case 'K': Push(Int(static_cast<std::int64_t>(ULe(1)))); break;
        case 'M': Push(Int(static_cast<std::int64_t>(ULe(2)))); break;
        case 0x8a: {  // LONG1
          const std::size_t n = *Take(1);
          if (n > 8) Fail("an integer wider than 64 bits");
          std::uint64_t v = n ? ULe(n) : 0;
          if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~std::uint64_t{0} << (8 * n);  // sign-extend
          Push(Int(static_cast<std::int64_t>(v)));
          break;
        }
        case 'G':  // BINFLOAT (8 bytes, big-endian): no tensor needs its value
          Take(8);
          Push(New(K::kFloat));
          break;
        case 'N': Push(New(K::kNone)); break;
        case 0x88: case 0x89: { const auto o = New(K::kBool); objs_[o].i = op == 0x88; Push(o); break; }
        case 'X': Push(Str(ULe(4))); break;
        case 0x8c: Push(Str(ULe(1))); break;
        case 0x8d: { const std::uint64_t n = ULe(8); if (n > b_.size()) Fail("the pickle is truncated"); Push(Str(n)); break; }
        case 'T': Push(Str(ULe(4))); break;   // BINSTRING (protocol 1 str)
        case 'U': Push(Str(ULe(1))); break;   // SHORT_BINSTRING
        case 'B': Push(Str(ULe(4), K::kBytes)); break;
        case 'C': Push(Str(ULe(1), K::kBytes)); break;
        case 0x8e: { const std::uint64_t n = ULe(8); if (n > b_.size()) Fail("the pickle is truncated"); Push(Str(n, K::kBytes)); break; }
        case 'c': {  // GLOBAL "module\nname\n"
          const std::string module = Line();
          const std::string name = Line();
          Push(Global(module, name));
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          const auto name = Pop(), module = Pop();
          if (objs_[name].k != K::kStr || objs_[module].k != K::kStr) Fail("STACK_GLOBAL of something not strings");
          Push(Global(objs_[module].s, objs_[name].s));
          break;
        }
        case 'q': Memo(ULe(1)); break;
        case 'r': Memo(ULe(4)); break;
        case 0x94: Memo(memo_.size()); break;
        case 'h': Push(Get(ULe(1))); break;
        case 'j': Push(Get(ULe(4))); break;
        case 'Q': Push(PersistentLoad(Pop())); break;
        case 'R':
        case 0x81: {  // REDUCE, NEWOBJ
          const auto args = Pop(), fn = Pop();
          Push(Call(fn, args));
          break;
        }
        case 'b': {  // BUILD: a dict's attributes (a state dict's _metadata) or a tensor's state; kept out
          Pop();
          const auto o = Top();
          if (objs_[o].k != K::kDict && objs_[o].k != K::kTensor) Fail("BUILD on an object that is not a dict or tensor");
          break;
        }
        case '0': Pop(); break;
        case '1': PopMark(); break;
        case '2': Push(Top()); break;
        default:
          Fail(fmt::format("pickle opcode 0x{:02x} at byte {} is not allowed (pe reads tensors and containers only)",
                           op, p_ - 1));
      }
    }
  }

  // How many nodes Walk(o) would visit, saturated just above kMaxWalkVisits. A container met
  // again while its own count is under way holds itself (APPEND can build that): refused as
  // nesting without end, as Walk would after kMaxNesting levels.
  std::uint64_t CountPaths(std::uint32_t o, int depth) {
    constexpr std::uint64_t kCounting = ~std::uint64_t{0}, kCap = kMaxWalkVisits + 1;
    if (depth > kMaxNesting + 1) Fail("containers nested too deeply");
    std::uint64_t& memo = path_counts_[o];
    if (memo == kCounting) Fail("containers nested too deeply (a container holds itself)");
    if (memo != 0) return memo;
    memo = kCounting;
    std::uint64_t n = 1;
    const Obj& x = objs_[o];
    auto add = [&](std::uint32_t child) { n = std::min(kCap, n + CountPaths(child, depth + 1)); };
    if (x.k == K::kDict) {
      for (std::size_t k = 0; k + 1 < x.items.size() && n < kCap; k += 2) {
        const K key = objs_[x.items[k]].k;
        if (key == K::kStr || key == K::kInt) add(x.items[k + 1]);
      }
    } else if (x.k == K::kList || x.k == K::kTuple) {
      for (std::size_t k = 0; k < x.items.size() && n < kCap; ++k) add(x.items[k]);
    }
    memo = n;  // path_counts_ never grows during the count, so the reference stays valid
    return n;
  }

  void Walk(std::uint32_t o, const std::string& path, int depth) {
    if (depth > kMaxNesting + 1) Fail("containers nested too deeply");
    if (++visits_ > kMaxWalkVisits) Fail(fmt::format("the object tree has more than {} paths", kMaxWalkVisits));
    const Obj& x = objs_[o];
    auto join = [&](std::string_view part) {
      path_bytes_ += path.size() + 1 + part.size();
      if (path_bytes_ > kMaxPathBytes)
        Fail(fmt::format("the tensor paths (dotted keys) total more than {} MiB", kMaxPathBytes >> 20));
      return path.empty() ? std::string(part) : path + "." + std::string(part);
    };
    // Only containers and tensors can lead to a tensor: no path is built for anything else.
    auto leads = [&](std::uint32_t child) {
      const K c = objs_[child].k;
      return c == K::kDict || c == K::kList || c == K::kTuple || c == K::kTensor;
    };
    switch (x.k) {
      case K::kTensor: {
        PickledTensor t = tensors_[static_cast<std::size_t>(x.i)];
        t.path = path.empty() ? "tensor" : path;
        if (found_.size() >= kMaxTensors) Fail(fmt::format("more than {} tensors", kMaxTensors));
        found_.push_back(std::move(t));
        break;
      }
      case K::kDict:
        for (std::size_t k = 0; k + 1 < x.items.size(); k += 2) {
          const Obj& key = objs_[x.items[k]];
          if (!leads(x.items[k + 1])) continue;
          std::string part;
          if (key.k == K::kStr) part = key.s;
          else if (key.k == K::kInt) part = std::to_string(key.i);
          else continue;  // keys of other types hold no named tensors pe would find
          Walk(x.items[k + 1], join(part), depth + 1);
        }
        break;
      case K::kList:
      case K::kTuple:
        for (std::size_t k = 0; k < x.items.size(); ++k)
          if (leads(x.items[k])) Walk(x.items[k], join(std::to_string(k)), depth + 1);
        break;
      default: break;
    }
  }

  std::string_view b_;
  std::size_t p_ = 0;
  std::string what_;
  std::deque<Obj> objs_;
  std::set<std::string> globals_;  // interned "module.name" of allowed globals
  std::vector<std::uint32_t> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, std::uint32_t> memo_;
  std::vector<PickledTensor> tensors_;
  std::vector<PickledTensor> found_;
  std::size_t visits_ = 0;
  std::size_t items_ = 0;       // container items added, all containers together
  std::size_t path_bytes_ = 0;  // bytes of the paths Walk built
  std::vector<std::uint64_t> path_counts_;  // CountPaths' memo: 0 unknown, ~0 under way
};

}  // namespace

std::vector<PickledTensor> UnpickleTensors(std::string_view bytes, const std::string& what) {
  return Unpickler(bytes, what).Run();
}

}  // namespace pe
