// A restricted unpickler for PyTorch checkpoints: it reads the pickle that
// torch.save writes as data.pkl (protocol 2; opcodes of protocols 2-5) and
// rebuilds only the tensors and the containers that hold them. It never
// executes anything: each GLOBAL is checked against an allow-list when it
// is read, and the only "calls" are the handful of constructors below,
// which pe evaluates itself.
//
// The opcodes follow CPython's Lib/pickletools.py (the opcode table, 3.11);
// the allow-list idea follows PyTorch's torch/_weights_only_unpickler.py
// (read at 00f730b66e58769f9698d9236f58cd46c3794115)
// (torch.load(weights_only=True)), reduced to what a state dict needs:
//   collections.OrderedDict            dicts (state dicts and their _metadata)
//   torch._utils._rebuild_tensor_v2    (storage, offset, size, stride, ...)
//   torch._utils._rebuild_parameter    (tensor, requires_grad, hooks)
//   torch._utils._rebuild_parameter_with_state  (tensor, requires_grad, hooks, state)
//   torch._tensor._rebuild_from_type_v2 (func, type, args, state): func(*args)
//   torch.Tensor, torch.nn.parameter.Parameter  (only as that type argument)
//   torch.Size                         a tuple
//   torch.<T>Storage                   storage types in persistent ids
//                                      (Float, Half, BFloat16, Double, Long,
//                                      Int, Short, Char, Byte, Bool, Complex*)
//   torch.storage.UntypedStorage, torch.storage.TypedStorage
// Any other global (os.system, builtins.exec, subprocess.Popen, ...) is
// refused with its name. Persistent ids ('storage', type, key, location,
// numel) become references to the archive member data/<key>.
//
// Bounds: objects, memo entries, stack and mark depth, container nesting
// and the walk over the result are all limited (see the .cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pe {

/// A tensor found in the unpickled object tree.
struct PickledTensor {
  std::string path;          ///< dotted path through dicts and lists: "model.layers.0.self_attn.rotary_emb.inv_freq"
  std::string storage_type;  ///< "FloatStorage", "HalfStorage", "BFloat16Storage", "DoubleStorage", ...
  std::string storage_key;   ///< the archive member data/<key>
  std::int64_t storage_numel = 0;  ///< elements, as the persistent id states
  std::int64_t offset = 0;   ///< storage offset, in elements
  std::vector<std::int64_t> size;
  std::vector<std::int64_t> stride;
};

/// Unpickles `bytes` and returns every tensor reachable from the root, in
/// the order a depth-first walk meets them. Throws pe::Error (input)
/// prefixed with `what`: a refused global ("refuses to load global
/// os.system (only tensor and container types are allowed)"), an opcode
/// outside the supported set, malformed or truncated data, a bound
/// exceeded.
std::vector<PickledTensor> UnpickleTensors(std::string_view bytes, const std::string& what);

}  // namespace pe
