"""pe: exact positional-encoding tables for numpy and PyTorch.

The Python face of the pe library (docs/python.md). Every value ``generate``
returns is the exact value of the scheme's formula correctly rounded to the
dtype: the same bytes ``pe generate`` writes.

    >>> import pe
    >>> t = pe.generate("sinusoidal", d_model=512, max_len=4096)
    >>> rope = pe.generate("rope", head_dim=128, max_len=8192, rope_theta=500000.0,
    ...                    rope_scaling={"rope_type": "llama3", "factor": 8.0,
    ...                                  "low_freq_factor": 1.0, "high_freq_factor": 4.0,
    ...                                  "original_max_position_embeddings": 8192})
    >>> rope["cos"].shape
    (8192, 128)
    >>> pe.verify(t, scheme="sinusoidal", d_model=512)["pass"]
    True

Arrays are returned without copying: the array views the buffer the C++
library filled, and owns it (``arr.base``). numpy has no bfloat16:
bfloat16 tables come back as ``uint16`` arrays of the raw bits (the upper
half of a float32), or as ``torch.bfloat16`` tensors with ``as_torch=True``.

``generate`` and ``read`` always return a :class:`Tables`: a dict name ->
array (``t["cos"]``), with ``t.table`` for the one array of a single-tensor
table, ``t.dtypes`` and ``t.metadata``; hand it back to ``verify``,
``identify``, ``dot`` or ``write`` and its dtypes (bfloat16 included) and
metadata go with it.

Errors raise a :class:`pe.Error` subclass with pe's message, keywords named
as in Python (``d_model: must be at least 1, got 0 (...)``):
:class:`FileNotFound` (a ``FileNotFoundError``), :class:`PermissionDenied`
(a ``PermissionError``), :class:`IOFailure` (an ``OSError``),
:class:`UsageError` (a bad argument) and :class:`InputError` (a malformed
file), both ``ValueError``. ``err.kind`` is "usage", "input" or "io";
``err.hint`` says what to change, when known.
"""

from __future__ import annotations

import json as _json
import os as _os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as _np

from . import _pe

__all__ = ["Error", "UsageError", "InputError", "FileNotFound", "PermissionDenied", "IOFailure", "Tables",
           "__version__", "generate", "read", "write", "verify", "identify", "inspect", "dot", "inspect_model", "verify_models", "verify_engine", "view", "View", "view_names",
           "schemes", "spec_keys", "BFLOAT16_AS", "resize", "probe", "Probe", "verify_probe"]

#: The library's version (``pe --version``).
__version__: str = _pe.__version__


class Error(Exception):
    """pe's exceptions: the message is pe's ("<what>: <why>"); ``kind`` is
    "usage", "input" or "io"; ``hint`` what to change ("" when unknown)."""

    kind: str = "usage"
    hint: str = ""


class UsageError(Error, ValueError):
    """A bad argument: a value out of its domain, an unknown keyword or scheme, a keyword the scheme does not take."""

    kind = "usage"


class InputError(Error, ValueError):
    """An input file or array pe cannot read as a table (malformed, unsupported)."""

    kind = "input"


class FileNotFound(Error, FileNotFoundError):
    """A file that does not exist."""

    kind = "input"


class PermissionDenied(Error, PermissionError):
    """A file the operating system refuses to read or write."""

    kind = "io"


class IOFailure(Error, OSError):
    """Another refusal of the operating system (a full disk, a failed write)."""

    kind = "io"


_pe.set_error_classes({c.__name__: c for c in (Error, UsageError, InputError, FileNotFound, PermissionDenied,
                                                IOFailure)})


def _usage(message: str) -> UsageError:
    return UsageError(_pe.keyword_spelling(message))


class Tables(dict):
    """What :func:`generate` and :func:`read` return, always: a dict name -> array.

    ``t["cos"]`` is one tensor; ``t.table`` the only one of a single-tensor
    table (sinusoidal: "pe"; a .npy file); ``t.dtypes`` pe's dtype name of
    each ("bfloat16" for the uint16 bits); ``t.metadata`` the table's
    metadata. Passed to :func:`verify`, :func:`identify`, :func:`dot` or
    :func:`write`, its dtypes and metadata go with it.
    """

    def __init__(self, arrays: Mapping[str, Any], dtypes: Mapping[str, str], metadata: Mapping[str, Any]):
        super().__init__(arrays)
        self.dtypes: Dict[str, str] = dict(dtypes)
        self.metadata: Dict[str, Any] = dict(metadata)

    @property
    def table(self):
        """The one tensor of a single-tensor table; a multi-tensor one raises :class:`UsageError` naming its tensors."""
        if len(self) != 1:
            raise _usage(f"table: {len(self)} tensors ({', '.join(self)}); take one by name, t['{next(iter(self))}']")
        return next(iter(self.values()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}: {getattr(v, 'shape', '?')} {self.dtypes.get(k, '')}" for k, v in self.items())
        return f"pe.Tables({{{inner}}})"

#: How bfloat16 tensors come back without torch: the raw bits as this numpy dtype.
BFLOAT16_AS = _np.uint16

# Hugging Face config names -> pe's spec keys (the CLI's flags).
_HF_NAMES = {
    "rope_theta": "base",
    "head_dim": "d_model",
    "max_seq_len": "max_len",
}
# rope_scaling's keys that pe takes (transformers' modeling_rope_utils.py).
_ROPE_SCALING_KEYS = {
    "factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
    "attention_factor", "low_freq_factor", "high_freq_factor", "short_factor", "long_factor", "truncate",
}
_ROPE_TYPES = {"default": "none", None: "none"}


def _text(key: str, value: Any) -> str:
    """A keyword's value as the CLI's flag text."""
    if isinstance(value, bool) or isinstance(value, _np.bool_):
        return "true" if value else "false"
    if isinstance(value, (int, _np.integer)):
        return str(int(value))
    if isinstance(value, (float, _np.floating)):
        return repr(float(value))
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple, _np.ndarray)):
        return ",".join(_text(key, v) for v in value)
    raise _usage(f"{key}={value!r}: expected a number, a string, a bool or a list, not {type(value).__name__}")


def _params(kwargs: Mapping[str, Any], rope_scaling: Any = None) -> List[Tuple[str, str]]:
    """Keyword arguments as [(spec key, text)]: the CLI's names, and Hugging Face's."""
    out: List[Tuple[str, str]] = []
    for key, value in kwargs.items():
        if value is None:
            continue
        if key in ("rope_scaling", "rope_parameters") and isinstance(value, Mapping):
            rope_scaling = value
            continue
        out.append((_HF_NAMES.get(key, key), _text(key, value)))
    if rope_scaling is not None:
        if isinstance(rope_scaling, str):
            out.append(("rope_scaling", _ROPE_TYPES.get(rope_scaling, rope_scaling)))
        elif isinstance(rope_scaling, Mapping):
            kind = rope_scaling.get("rope_type", rope_scaling.get("type"))
            out.append(("rope_scaling", _ROPE_TYPES.get(kind, kind) if isinstance(kind, str) or kind is None
                        else _text("rope_type", kind)))
            for key, value in rope_scaling.items():
                if key in ("rope_type", "type") or value is None:
                    continue
                if key == "rope_theta":
                    out.append(("base", _text(key, value)))
                    continue
                if key not in _ROPE_SCALING_KEYS:
                    raise _usage(f"rope_scaling['{key}']: not a key pe reads (it reads: "
                                f"{', '.join(sorted(_ROPE_SCALING_KEYS))})")
                out.append((key, _text(key, value)))
        else:
            raise _usage(f"rope_scaling={rope_scaling!r}: expected a dict (Hugging Face's rope_scaling) or a type name")
    return out


def _torch():
    try:
        import torch  # noqa: PLC0415
    except ImportError as e:  # pragma: no cover - torch is optional
        raise _usage(f"as_torch=True: torch is not importable ({e})") from None
    return torch


def _dtype_name(dtype: Any) -> Optional[str]:
    """A dtype keyword as pe's name: "float16", np.float16, np.dtype("float16"), torch.float16, "bf16", ..."""
    if dtype is None or isinstance(dtype, str):
        return dtype
    if type(dtype).__module__.startswith("torch"):
        return str(dtype).replace("torch.", "")
    try:
        return _np.dtype(dtype).name
    except TypeError:
        raise _usage(f"dtype={dtype!r}: not a dtype (give float16, bfloat16, float32 or float64, "
                     f"as a name or a numpy dtype)") from None


def _finish(arrays: Dict[str, _np.ndarray], dtypes: Dict[str, str], meta: Dict[str, Any], as_torch: bool) -> Tables:
    """Arrays as returned: numpy (bfloat16 as uint16 bits) or torch tensors, in a Tables."""
    if not as_torch:
        return Tables(arrays, dtypes, meta)
    torch = _torch()
    out = {}
    for name, arr in arrays.items():
        if dtypes[name] == "bfloat16":
            out[name] = torch.from_numpy(arr.view(_np.int16)).view(torch.bfloat16)
        else:
            out[name] = torch.from_numpy(arr)
    return Tables(out, dtypes, meta)


def generate(scheme: Optional[str] = None, *, dtype: Optional[str] = None, tensor: Optional[str] = None,
             rope_scaling: Any = None, as_torch: bool = False, **params: Any):
    """Build an exact positional-encoding table.

    ``scheme`` is any name of ``pe schemes`` ("sinusoidal", "rope", "alibi",
    ...); None: sinusoidal. Keyword names are the CLI's flags with underscores (``d_model``,
    ``max_len``, ``base``, ``start``, ``layout``, ``heads``, ``grid="14x14"``,
    ``cls_token=True``, ...) or Hugging Face's (``rope_theta``, ``head_dim``,
    ``partial_rotary_factor``, ``max_position_embeddings``, and
    ``rope_scaling={"rope_type": "yarn", "factor": 4.0, ...}``).
    ``dtype``: "float32" (default), "float64", "float16" or "bfloat16".

    ``dtype`` may also be a numpy dtype (``np.float16``).

    Returns a :class:`Tables` (always): name -> array, ``.table`` for a
    single-tensor scheme (sinusoidal: "pe"), ``["cos"]`` for the tensors of
    multi-tensor schemes (rope: cos, sin, inv_freq; alibi: slopes, bias);
    ``tensor="cos"`` keeps that one. The arrays own the C++ buffers (no
    copy). bfloat16: uint16 bits, or a torch tensor with ``as_torch=True``
    (every dtype becomes a torch tensor then, sharing the buffer).

    Raises :class:`pe.UsageError` with pe's message for a bad parameter, as
    ``pe generate`` refuses the same flags (a keyword the scheme does not
    take included).
    """
    p = _params(params, rope_scaling)
    dtype = _dtype_name(dtype)
    if dtype is not None:
        p.append(("dtype", dtype))
    if tensor is not None:
        p.append(("tensor", tensor))
    arrays, dtypes, meta = _pe.generate(scheme or "", p)  # "": the default scheme (sinusoidal)
    return _finish(arrays, dtypes, meta, as_torch)


def read(path: Union[str, _os.PathLike], tensor: Optional[str] = None, *, format: Optional[str] = None,
         as_torch: bool = False, with_metadata: bool = False):
    """Read a table file pe reads (.npy .h5 .safetensors .json .csv).

    Returns a :class:`Tables` (always): every tensor of the file, or the one
    named ``tensor``; ``.table`` for a single-tensor file, ``.metadata`` the
    file's metadata. With ``with_metadata=True``, returns
    ``(tables, metadata_dict)``. bfloat16 and torch as in :func:`generate`.
    Raises :class:`pe.FileNotFound` for a missing file, :class:`pe.InputError`
    for a malformed one (both naming the file).
    """
    arrays, dtypes, meta = _pe.read(_os.fspath(path), tensor or "", format or "")
    result = _finish(arrays, dtypes, meta, as_torch)
    return (result, meta) if with_metadata else result


def _as_table(name: str, value: Any, dtype: Optional[str]) -> Tuple[str, _np.ndarray, str]:
    """One tensor for the C++ side: (name, C-contiguous numpy array, pe dtype name)."""
    if type(value).__module__.startswith("torch"):
        torch = _torch()
        t = value.detach().cpu().contiguous()
        if t.dtype == torch.bfloat16:
            return name, t.view(torch.int16).numpy().view(_np.uint16), "bfloat16"
        value = t.numpy()
    arr = _np.asarray(value)
    if arr.ndim == 0:
        raise _usage(f"tensor '{name}': a 0-D (scalar) array is not a table")
    kinds = {_np.dtype(_np.float16): "float16", _np.dtype(_np.float32): "float32",
             _np.dtype(_np.float64): "float64"}
    if dtype == "bfloat16" or (dtype in ("bf16",)):
        if arr.dtype not in (_np.dtype(_np.uint16), _np.dtype(_np.int16)):
            raise _usage(f"tensor '{name}': dtype='bfloat16' needs the raw bits as a uint16 array, not {arr.dtype}")
        return name, _contiguous(name, arr.view(_np.uint16), _np.uint16), "bfloat16"
    native = arr.dtype.newbyteorder("=") if arr.dtype.byteorder not in ("=", "|") else arr.dtype
    if native not in kinds:
        raise _usage(f"tensor '{name}': dtype {arr.dtype} is not a table dtype; pe takes float16, bfloat16 "
                    f"(uint16 bits with dtype='bfloat16', or a torch.bfloat16 tensor), float32 and float64 "
                    f"(convert with .astype)")
    return name, _contiguous(name, arr, native), kinds[native]


def _contiguous(name: str, arr: _np.ndarray, dtype: Any) -> _np.ndarray:
    """arr as a C-contiguous array; a copy (a strided or zero-stride view) is sized before it is made."""
    if not arr.flags.c_contiguous or arr.dtype != dtype:
        shape = " x ".join(str(d) for d in arr.shape)
        _pe.check_fits(float(arr.size) * _np.dtype(dtype).itemsize, f"tensor '{name}': a contiguous copy of {shape}")
    try:
        return _np.ascontiguousarray(arr, dtype=dtype)
    except MemoryError:
        raise _usage(f"tensor '{name}': a contiguous copy of {arr.shape} does not fit in memory") from None


def _tables(value: Any, dtype: Optional[str] = None) -> List[Tuple[str, _np.ndarray, str]]:
    dtype = _dtype_name(dtype)
    if isinstance(value, Mapping):
        if not value:
            raise _usage("tensors: the dict is empty")
        known = getattr(value, "dtypes", {})  # a Tables: its bfloat16 bits are bfloat16
        return [_as_table(str(k), v, dtype or known.get(str(k))) for k, v in value.items()]
    return [_as_table("pe", value, dtype)]


def write(path: Union[str, _os.PathLike], data: Any, metadata: Optional[Mapping[str, Any]] = None, *,
          format: Optional[str] = None, dtype: Optional[str] = None) -> None:
    """Write an array (or a dict name -> array) to ``path``.

    The format comes from the extension (or ``format=``); the file appears
    complete or not at all (a temporary file renamed into place), as with
    ``pe generate -o``. NPY and CSV hold one tensor. ``metadata``: a dict of
    int, float or str values (HDF5 attributes, safetensors ``__metadata__``,
    JSON ``meta``); give ``scheme``, ``d_model`` ... and ``pe verify`` checks
    the file without flags. Accepts numpy arrays and torch tensors of
    float16, float32, float64 and bfloat16 (torch, or uint16 bits with
    ``dtype="bfloat16"``).
    """
    _pe.write(_os.fspath(path), _tables(data, dtype), _meta(data, metadata), format or "")


def _meta(table: Any, metadata: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The metadata given, else a Tables' own."""
    if metadata is not None:
        return dict(metadata)
    return dict(getattr(table, "metadata", None) or {})


def _source(table: Any, metadata: Optional[Mapping[str, Any]], dtype: Optional[str]):
    if isinstance(table, (str, _os.PathLike)):
        return _os.fspath(table)
    return _tables(table, dtype)


def verify(table: Any, scheme: Optional[str] = None, *, tensor: Optional[str] = None,
           reference: Any = None, reference_tensor: Optional[str] = None,
           checks: Optional[Union[str, Sequence[str]]] = None, offsets: Optional[Sequence[int]] = None,
           atol: Optional[float] = None, rtol: Optional[float] = None, max_ulp: Optional[float] = None,
           judge_as: Optional[str] = None, diagnose: bool = True, allow_empty: bool = False,
           metadata: Optional[Mapping[str, Any]] = None,
           format: Optional[str] = None, dtype: Optional[str] = None, rope_scaling: Any = None,
           **params: Any) -> Dict[str, Any]:
    """Verify a table against the exact reference, as ``pe verify --json``.

    ``table``: a path, a numpy array or torch tensor, or a dict of them (a
    :class:`Tables`). A file or dict of several tensors with no ``tensor=``
    is verified tensor by tensor, as ``pe verify FILE``: the report then
    has ``tensors`` (one report each; a tensor nothing describes is
    skipped). The reference is ``scheme`` with its parameters as keywords (the names
    of :func:`generate`), over the file's metadata; or ``reference=`` (a
    path, an array, or an inline spec such as "rope:head-dim=64,base=500000"
    whose shape and dtype default to the table's). ``checks``: "rotation,shift,bounds,norm,unique",
    "all", "none" or a list; None: the scheme's defaults. ``atol``/``rtol``/
    ``max_ulp`` replace the default tolerance. ``dtype="bfloat16"`` marks a
    uint16 array as bfloat16 bits; ``judge_as`` judges the table as another
    dtype. A verification whose checks compared nothing fails
    (``report["nothing_compared"]`` says why) unless ``allow_empty=True``.

    Returns the report (schema "pe.verify/1") as a dict: the document of
    ``pe verify --json`` plus ``report["pass"]``, the verdict (the same value
    as ``report["passed"]``), and ``report["text"]``, the report as
    ``pe verify`` prints it. A failed check is a report, not an exception; a bad
    argument or unreadable file raises :class:`pe.Error`.
    """
    if isinstance(table, Probe):  # pe.probe's result: verified as pe verify --probe
        return verify_probe(table, scheme, atol=atol, rtol=rtol, max_ulp=max_ulp, judge_as=judge_as,
                            diagnose=diagnose, rope_scaling=rope_scaling, **params)
    p = _params(params, rope_scaling)
    if isinstance(checks, str):
        checks = [c.strip() for c in checks.split(",") if c.strip()]
    # A path string may also be an inline spec ("rope:head-dim=64"): the library tells them apart.
    ref = None if reference is None else _source(reference, None, None)
    judge_as = _dtype_name(judge_as)
    text = _pe.verify(_source(table, metadata, dtype), tensor or "", format or "", _meta(table, metadata),
                      scheme, p, ref, reference_tensor or "", None if checks is None else list(checks),
                      list(offsets or []), atol, rtol, max_ulp, judge_as, diagnose, allow_empty)
    report = _json.loads(text[0])
    report["pass"] = report["passed"]  # the verdict under its short name too
    report["text"] = text[1]  # the report as `pe verify` prints it
    return report



class Probe:
    """A rotation probe made by :func:`probe`: ``array`` [L, d, d] (row
    ``array[r, j, :]`` is the engine's output for e_j at ``positions[r]``)
    and ``positions`` (int64 [L]). Hand it to :func:`verify` (or
    :func:`verify_probe`), or save ``array`` for ``pe verify --probe``."""

    def __init__(self, array: _np.ndarray, positions: _np.ndarray):
        self.array = array
        self.positions = positions

    def __repr__(self) -> str:
        L, d, _ = self.array.shape
        return f"pe.Probe({L} positions, head {d}, {self.array.dtype})"


def _probe_positions(positions: Any) -> _np.ndarray:
    if isinstance(positions, str):
        return _np.asarray(_pe.parse_positions(positions), dtype=_np.int64)
    if type(positions).__module__.startswith("torch"):
        positions = positions.detach().cpu().numpy()
    pos = _np.asarray(positions)
    if pos.ndim != 1 or pos.size == 0 or pos.dtype.kind not in "iu":
        raise _usage(f"positions: a non-empty 1-D list of integers is needed, not {pos.dtype} of shape {pos.shape}")
    return pos.astype(_np.int64)


def probe(rotate: Any, *, head_dim: int, positions: Any = None, max_len: Optional[int] = None,
          start: int = 0, as_torch: Optional[bool] = None, dtype: Any = None) -> "Probe":
    """Probe an engine's rope: call ``rotate(x, positions)`` on the basis.

    ``x`` is [L, d, d] with ``x[r, j, :]`` = e_j (each position's rows are
    the identity; d = ``head_dim``), ``positions`` the int64 [L] positions
    of the rows (``positions=`` a list, a 1-D array, or a string as
    ``--positions``: "0:16,4095-4096"; else ``start``..``start+max_len-1``).
    Both are numpy arrays, or torch tensors when ``as_torch=True`` (None:
    torch when ``rotate`` is defined in a module that imported torch is not
    guessed: numpy unless asked). ``dtype``: the basis' dtype (float32
    default). ``rotate`` returns the rotated rows, [L, d, d] (numpy or
    torch, float16/bfloat16/float32/float64, finite): ``out[r, j, :]`` is
    the engine's output for e_j at ``positions[r]``. The call convention in
    docs/python.md, "Probing an engine", with recipes for transformers,
    vLLM and llama.cpp.

    Returns a :class:`Probe`; :func:`verify` checks it against a plan. A
    result of the wrong type, shape or dtype, a non-finite value or an
    exception raised by ``rotate`` raises :class:`pe.Error`.
    """
    if not callable(rotate):
        raise _usage(f"rotate: a function rotate(x, positions) is needed, not {type(rotate).__name__}")
    d = int(head_dim)
    if d < 2 or d > 4096:
        raise _usage(f"head_dim: {head_dim} is outside 2..4096")
    if positions is None:
        if max_len is None:
            raise _usage("positions or max_len is needed")
        if int(max_len) < 1:
            raise _usage(f"max_len: {max_len} must be at least 1")
        pos = _np.arange(int(start), int(start) + int(max_len), dtype=_np.int64)
    else:
        pos = _probe_positions(positions)
    L = pos.size
    _pe.check_fits(float(L) * d * d * 8, f"a probe of {L} x {d} x {d}")
    if float(L) * d * d > float(_pe.max_probe_entries()):
        raise _usage(f"a probe of {L} x {d} x {d} exceeds {_pe.max_probe_entries()} entries")
    np_dtype = _np.dtype(dtype or _np.float32)
    basis = _np.ascontiguousarray(_np.broadcast_to(_np.eye(d, dtype=np_dtype), (L, d, d)))
    x, p = basis, pos
    if as_torch:
        torch = _torch()
        x, p = torch.from_numpy(basis), torch.from_numpy(pos.copy())
    try:
        out = rotate(x, p)
    except Error:
        raise
    except Exception as e:  # the user's function: its failure is reported, not re-raised raw
        raise InputError(f"probe: rotate(x, positions) raised {type(e).__name__}: {e}") from e
    return Probe(_probe_result(out, L, d), pos)


def _probe_result(out: Any, L: int, d: int) -> _np.ndarray:
    """The user's result as a float array [L, d, d], or pe.Error saying why not."""
    if isinstance(out, (tuple, list)) and len(out) > 0 and not isinstance(out[0], (int, float)):
        raise InputError(f"probe: rotate returned a {type(out).__name__} of {len(out)} items; return the rotated "
                         f"rows alone (e.g. q_rot of apply_rotary_pos_emb's (q_rot, k_rot))")
    if type(out).__module__.startswith("torch"):
        torch = _torch()
        t = out.detach().cpu()
        if t.dtype == torch.bfloat16 or t.dtype == torch.float16:
            t = t.float()
        if t.is_complex() or not t.is_floating_point():
            raise InputError(f"probe: rotate returned a torch tensor of dtype {t.dtype}; a real floating tensor "
                             f"[L, d, d] is needed")
        out = t.numpy()
    if not isinstance(out, _np.ndarray):
        raise InputError(f"probe: rotate returned {type(out).__name__}; a numpy array or torch tensor [L, d, d] "
                         f"is needed")
    if out.dtype.kind != "f":
        raise InputError(f"probe: rotate returned dtype {out.dtype}; float16, bfloat16, float32 or float64 is needed")
    if out.shape != (L, d, d):
        hint = ""
        if out.size == L * d * d:
            hint = f" (it has the right number of entries: reshape to [{L}, {d}, {d}], row r·d+j = e_j at position r)"
        raise InputError(f"probe: rotate returned shape {list(out.shape)}, the basis is [{L}, {d}, {d}]{hint}")
    arr = _np.ascontiguousarray(out)
    if arr.dtype not in (_np.dtype(_np.float32), _np.dtype(_np.float64), _np.dtype(_np.float16)):
        arr = arr.astype(_np.float64)
    if not _np.all(_np.isfinite(arr)):
        raise InputError("probe: rotate returned a NaN or infinity")
    return arr


def verify_probe(probe: Any, scheme: Optional[str] = None, *, positions: Any = None, tensor: Optional[str] = None,
                 atol: Optional[float] = None, rtol: Optional[float] = None, max_ulp: Optional[float] = None,
                 judge_as: Optional[str] = None, diagnose: bool = True, rope_scaling: Any = None,
                 **params: Any) -> Dict[str, Any]:
    """Verify a rotation probe against a plan, as ``pe verify --probe --json``.

    ``probe``: a :class:`Probe` (its positions are used), an array [L, d, d]
    or a path. The plan: ``scheme`` (default "rope") and its parameters as
    keywords (``head_dim``, ``base``, ``layout``, ``rotary_dim``,
    ``hf_config``, ``gguf``, ``rope_scaling``...). ``positions`` overrides
    the probe's (default 0..L-1, or ``start=``). Returns the report (schema
    "pe.verify-probe/1") plus ``report["pass"]`` and ``report["text"]``."""
    p = _params(params, rope_scaling)
    if isinstance(probe, Probe):
        pos = probe.positions if positions is None else _probe_positions(positions)
        src: Any = _tables(probe.array)
    else:
        pos = None if positions is None else _probe_positions(positions)
        src = _source(probe, None, None)
    text = _pe.verify_probe(src, tensor or "", scheme or "", p, [] if pos is None else [int(x) for x in pos],
                            atol, rtol, max_ulp, _dtype_name(judge_as), diagnose)
    report = _json.loads(text[0])
    report["pass"] = report["passed"]
    report["text"] = text[1]
    return report


def identify(table: Any, *, tensor: Optional[str] = None, metadata: Optional[Mapping[str, Any]] = None,
             format: Optional[str] = None, dtype: Optional[str] = None) -> Dict[str, Any]:
    """Identify which sinusoid variant a table is, from its numbers alone.

    ``table``: a path, an array, a torch tensor (or a dict with ``tensor=``).
    Returns the identification of ``pe inspect --json`` as a dict:
    ``matched``, ``verdict``, ``variant`` (layout, denominator, base, first
    position), ``precision``, ``recipes``, ...
    """
    return _json.loads(_pe.identify(_source(table, metadata, dtype), tensor or "", format or "",
                                    _meta(table, metadata)))


def inspect(path: Union[str, _os.PathLike], *, tensor: Optional[str] = None, format: Optional[str] = None,
            rows: Optional[str] = None, cols: Optional[str] = None, preview: int = 3,
            identify: Optional[bool] = None, text: bool = False, plot: Union[None, str, _os.PathLike] = None,
            group: str = "auto", cmap: Optional[str] = None) -> Union[Dict[str, Any], str]:
    """What a table file holds, as ``pe inspect`` shows it.

    The keywords are its flags: ``tensor`` (one tensor of a file of
    several), ``format``, ``rows``/``cols`` (slices as text, ``"100:104"``,
    ``"-2:"``), ``preview`` (rows at each end), ``identify`` (None: when the
    metadata names no scheme; True: always; False: never). Returns the
    ``pe inspect --json`` document as a dict (``stats``, ``identification``,
    ``preview`` or ``slice``; for a file of several tensors ``tensors`` and
    ``details``), or with ``text=True`` the human report, the bytes
    ``pe inspect`` prints. ``plot=``: also draw the table's heatmap into
    that .png/.svg/.pdf, as ``pe inspect --plot`` (``group``: the column
    order, "auto", "none" or "sincos"; ``cmap``: the colour map).
    """
    how = "auto" if identify is None else ("always" if identify else "never")
    out = _pe.inspect(_os.fspath(path), tensor or "", format or "", rows or "", cols or "", int(preview), how,
                      not text, "" if plot is None else _os.fspath(plot), group, cmap or "")
    return out if text else _json.loads(out)


def inspect_model(path: Union[str, _os.PathLike]) -> Dict[str, Any]:
    """A model artifact's positional encoding, as ``pe inspect MODEL --json``.

    ``path``: a Hugging Face folder (config.json), a .gguf or .onnx file, a
    checkpoint or .npz (docs/models.md). Returns the document (schema
    "pe.inspect-model/1") as a dict: ``plan`` (per RoPE group its layers,
    rope_theta, head_dim, rotary_dim, layout and scaling; NoPE layers),
    ``settings`` with their sources, ``switches`` (where the plan changes),
    ``tensors`` with their checks, ``notes``, ``problems``; plus
    ``report["text"]``, the text ``pe inspect MODEL`` prints, and
    ``report["hint"]``, its hint ("" when none). An unreadable or unsafe
    artifact raises :class:`pe.Error`.
    """
    doc, text, hint = _pe.inspect_model(_os.fspath(path))
    report = _json.loads(doc)
    report["text"] = text
    report["hint"] = hint
    return report


def verify_models(*models: Union[str, _os.PathLike], diagnose: bool = True,
                  allow_empty: bool = False, max_model_len: Optional[int] = None) -> Dict[str, Any]:
    """Check one model artifact's stored positional tensors against its own
    plan, or compare a second artifact's plan with the first's, as ``pe
    verify --model A [--model B] --json``.

    Returns the report (schema "pe.verify/1", ``reference["kind"]`` "model") as
    a dict, plus ``report["pass"]`` and ``report["text"]`` (the text ``pe
    verify --model`` prints). A verification that compared nothing fails
    unless ``allow_empty=True``. ``max_model_len=N`` also checks serving N
    positions against each engine's cos/sin cache and the length the scaling
    was planned for (``pe verify --model M --max-model-len N``; checks
    "admitted:GROUP:ENGINE"). A failed check is a report, not an
    exception; no model, more than two, an unreadable artifact or a
    max_model_len below 1 raise :class:`pe.Error`.
    """
    if max_model_len is not None and (isinstance(max_model_len, bool) or not isinstance(max_model_len, int)):
        raise Error("max_model_len: expected an integer length")
    if max_model_len is not None and max_model_len < 1:
        raise Error(f"max_model_len: {max_model_len}: must be a length of at least 1")
    doc, text = _pe.verify_models([_os.fspath(m) for m in models], diagnose, allow_empty,
                                  -1 if max_model_len is None else max_model_len)
    report = _json.loads(doc)
    report["pass"] = report["passed"]
    report["text"] = text
    return report


def verify_engine(engine: str, model: Union[str, _os.PathLike], hf_model: Union[None, str, _os.PathLike] = None, *,
                  positions: Optional[Sequence[int]] = None, start: Optional[int] = None,
                  diagnose: bool = True) -> Dict[str, Any]:
    """Run an engine's rope on the basis q = I with the parameters it
    derives for a GGUF, and verify that probe against the GGUF's plan (and
    ``hf_model``'s, a Hugging Face folder), as ``pe verify --engine
    llama.cpp=LIBDIR --model model.gguf [--model HF_DIR] --json``.

    ``engine`` is "llama.cpp=LIBDIR": the folder of the user's
    libggml-base.so / libggml.so / libggml-cpu*.so, loaded with dlopen (its C
    API only; docs/verify.md, "llama.cpp probed directly"). ``positions``
    (default: 0..15 and a spread up to the context length) or ``start``
    (start..start+63). Returns the report (schema "pe.verify-engine/1") as a
    dict, plus ``report["pass"]``, ``report["text"]`` and ``report["probe"]``
    (the float32 array [L, d, d]). A failed check is a report; an unknown
    engine, a folder without ggml or a GGUF without a RoPE plan raise
    :class:`pe.Error`.
    """
    if start is not None and (isinstance(start, bool) or not isinstance(start, int)):
        raise Error("start: expected an integer position")
    pos = [] if positions is None else [int(p) for p in positions]
    plans = [] if hf_model is None else [_os.fspath(hf_model)]
    doc, text, probe = _pe.verify_engine(engine, _os.fspath(model), plans, pos, start, diagnose)
    report = _json.loads(doc)
    report["pass"] = report["passed"]
    report["text"] = text
    report["probe"] = probe
    return report


def dot(table: Any = None, *, cosine: bool = False, max_offset: Optional[int] = None, mean_only: bool = False,
        tensor: Optional[str] = None, metadata: Optional[Mapping[str, Any]] = None, format: Optional[str] = None,
        dtype: Optional[str] = None, scheme: Optional[str] = None, rope_scaling: Any = None,
        plot: Union[None, str, _os.PathLike] = None,
        matrix: Union[None, str, _os.PathLike] = None, matrix_size: int = 512, view: Optional[str] = None,
        title: Optional[str] = None, size: Union[None, str, Tuple[int, int]] = None, label: Optional[str] = None,
        log_x: bool = False, log_y: bool = False, xlim: Optional[Tuple[float, float]] = None,
        ylim: Optional[Tuple[float, float]] = None, train_len: Optional[float] = None, cmap: Optional[str] = None,
        **params: Any) -> Dict[str, Optional[_np.ndarray]]:
    """Dot-product (or cosine) similarity as a function of the offset k.

    ``table``: a path, an array or torch tensor; or None with ``scheme=``
    and its parameters (as :func:`generate`) to compute the curve of a spec.
    Returns numpy arrays: ``offset`` (k = 0..K), ``pairs`` (rows - k),
    ``mean``, ``min``, ``max``, ``std`` over positions p of PE(p)·PE(p+k)
    (min/max/std None with ``mean_only``), and ``closed_form``
    (Σ cos(k·ω_i), when the metadata names a paired sinusoid; else None).

    Pictures, as ``pe dot`` draws them (the same bytes): ``plot=`` a
    .png/.svg/.pdf of the picture ``pe dot --plot`` makes — the decay
    curve, or with ``view=`` that view (a RoPE input draws q·k, as the CLI
    does); ``matrix=`` the similarity heatmap of ``pe dot --matrix``
    (``matrix_size`` positions a side; .csv: its numbers). The other
    keywords are the CLI's plot flags (``title``, ``size`` "WxH" or (w, h),
    ``label``, ``log_x``, ``log_y``, ``xlim``/``ylim`` (lo, hi),
    ``train_len``, ``cmap``). An array is drawn from a temporary .npy (its
    ``metadata`` is not kept: give a path for metadata-driven pictures).
    """
    if view is not None and plot is None:
        raise _usage("dot: view= chooses the picture of plot=; without one, use pe.view(name, inputs)")
    k = -1 if max_offset is None else int(max_offset)
    if table is None:
        if scheme is None:
            raise _usage("dot: give a table (path or array) or scheme= with its parameters")
        p = _params(params, rope_scaling)
        dtype_name = _dtype_name(dtype)
        if dtype_name is not None:
            p.append(("dtype", dtype_name))
        curve = _pe.generate_dot(scheme, p, tensor or "", cosine, k, mean_only)
    else:
        if scheme is not None or params:
            raise _usage("dot: scheme parameters apply to dot(scheme=...), not to a table")
        curve = _pe.dot(_source(table, metadata, dtype), tensor or "", format or "", _meta(table, metadata), cosine,
                        k, mean_only)
    if plot is not None or matrix is not None:
        _draw_dot(table, tensor, cosine, max_offset, mean_only, scheme, rope_scaling, params, dtype, plot, matrix,
                  matrix_size, view, title, size, label, log_x, log_y, xlim, ylim, train_len, cmap)
    return curve


def _lim(value: Any, flag: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    lo, hi = value
    return f"{float(lo)!r},{float(hi)!r}"


def _draw_dot(table, tensor, cosine, max_offset, mean_only, scheme, rope_scaling, params, dtype, plot, matrix,
              matrix_size, view, title, size, label, log_x, log_y, xlim, ylim, train_len, cmap) -> None:
    import tempfile
    if isinstance(size, (tuple, list)):
        size = f"{int(size[0])}x{int(size[1])}"
    with tempfile.TemporaryDirectory(prefix="pe-dot-") as tmp:
        inputs: List[str] = []
        spec_scheme = None
        spec: List[Tuple[str, str]] = []
        if table is None:
            if scheme is None:
                raise _usage("dot: give a table (path or array) or scheme= with its parameters")
            spec_scheme = scheme
            spec = _params(params, rope_scaling)
            if dtype is not None:
                spec.append(("dtype", _dtype_name(dtype)))
        elif isinstance(table, (str, _os.PathLike)):
            inputs = [_os.fspath(table)]
        else:
            arr = table.detach().cpu().numpy() if hasattr(table, "detach") else _np.asarray(table)
            path = _os.path.join(tmp, "table.npy")
            _np.save(path, _np.ascontiguousarray(arr))
            inputs = [path]
        _pe.run_dot(inputs, spec_scheme, spec, tensor or "", bool(cosine), -1 if max_offset is None else int(max_offset),
                    bool(mean_only), "" if plot is None else _os.fspath(plot),
                    [] if matrix is None else [_os.fspath(matrix)], int(matrix_size), view or "", title or "",
                    size or "", [] if label is None else [label], bool(log_x), bool(log_y), _lim(xlim, "xlim"),
                    _lim(ylim, "ylim"), float("nan") if train_len is None else float(train_len), cmap or "")


class View:
    """A view of ``pe dot --view`` (qk, spectrum, heads, grid, ...) as data; made by :func:`view`.

    ``series``: {series name: {x_name: x array, column: values array, ...}}
    (one series per input, named as written; files by their base name),
    ``panels``: [{"title", "values": 2-D array, "series", "patch"}] for
    heatmap views (heads, bias, grid); in a grid view of several tables,
    ``series`` is the table the panel belongs to and ``patch`` the (row,
    column) of the cell it compares with every cell (otherwise "" and
    None), ``markers``: [(x, label)] (L_orig), and the words of the
    picture (``title``, ``x_label``, ``y_label``, ...).
    ``to_csv()``/``to_json()`` give the bytes ``pe dot --view NAME -o x.csv``
    writes (a path writes the file); ``plot(path)`` draws it as ``--plot``.
    """

    def __init__(self, core: Any):
        self._core = core

    name = property(lambda self: self._core.name, doc="The view's name (qk, spectrum, ...)")
    title = property(lambda self: self._core.title)
    subtitle = property(lambda self: self._core.subtitle)
    x_label = property(lambda self: self._core.x_label)
    y_label = property(lambda self: self._core.y_label)
    value_label = property(lambda self: self._core.value_label)
    note = property(lambda self: self._core.note)
    x_name = property(lambda self: self._core.x_name, doc="The CSV/JSON name of x (offset, pair, position, ...)")
    markers = property(lambda self: list(self._core.markers))

    @property
    def series(self) -> Dict[str, Dict[str, _np.ndarray]]:
        out: Dict[str, Dict[str, _np.ndarray]] = {}
        for name, x, columns in self._core.series:
            d = {self.x_name: x}
            for col, values, _label, _draw in columns:
                d[col] = values
            key, n = name, 2
            while key in out:  # two inputs written alike
                key, n = f"{name} #{n}", n + 1
            out[key] = d
        return out

    @property
    def panels(self) -> List[Dict[str, Any]]:
        return [{"title": t, "values": v, "series": s, "patch": None if r < 0 else (r, c)}
                for t, v, s, r, c in self._core.panels]

    def to_csv(self, path: Union[None, str, _os.PathLike] = None) -> Optional[str]:
        """The CSV text, or with ``path`` the file (atomically) and None."""
        if path is None:
            return self._core.csv()
        self._core.write(_os.fspath(path), "csv")
        return None

    def to_json(self, path: Union[None, str, _os.PathLike] = None) -> Optional[str]:
        """The JSON text (schema "pe.view/1"), or with ``path`` the file and None."""
        if path is None:
            return self._core.json()
        self._core.write(_os.fspath(path), "json")
        return None

    def to_dict(self) -> Dict[str, Any]:
        """The JSON document as a dict."""
        return _json.loads(self._core.json())

    def plot(self, path: Union[str, _os.PathLike], *, title: Optional[str] = None, log_x: Optional[bool] = None,
             log_y: Optional[bool] = None, xlim: Optional[Tuple[float, float]] = None,
             ylim: Optional[Tuple[float, float]] = None, vmin: Optional[float] = None, vmax: Optional[float] = None,
             cmap: Optional[str] = None, size: Tuple[int, int] = (960, 600),
             train_len: Optional[float] = None) -> None:
        """Draw the view to ``path`` (.png, .svg with real <text>, .pdf), as ``pe dot --plot``.

        The keywords are the plot flags: ``title``, ``log_x``, ``log_y``
        (False: linear), ``xlim``/``ylim`` (lo, hi), ``vmin``/``vmax``,
        ``cmap`` (viridis, magma, cividis, RdBu, RdBu_r), ``size`` (w, h),
        ``train_len`` (shade the region beyond it).
        """
        self._core.plot(_os.fspath(path), title or "", log_x, log_y,
                        None if xlim is None else (float(xlim[0]), float(xlim[1])),
                        None if ylim is None else (float(ylim[0]), float(ylim[1])),
                        vmin, vmax, cmap or "", (int(size[0]), int(size[1])), train_len)

    def __repr__(self) -> str:
        return (f"<pe.View {self.name}: {len(self._core.series)} series, {len(self._core.panels)} panels; "
                f"{self.title!r}>")


def view(name: Optional[str] = None, inputs: Union[str, _os.PathLike, Sequence[Union[str, _os.PathLike]]] = (), *,
         max_offset: Optional[int] = None, tensor: Optional[str] = None, columns: Optional[Sequence[int]] = None,
         window: int = 64, collision_dtypes: Union[None, str, Sequence[str]] = None,
         patches: Optional[Sequence[int]] = None, grid: Union[None, str, Tuple[int, int]] = None,
         cls_token: bool = False, prefix_tokens: Optional[int] = None, scheme: Optional[str] = None,
         rope_scaling: Any = None, **params: Any) -> View:
    """Compute a view of ``pe dot --view`` (the same numbers, CSV and pictures).

    ``name``: qk, bound, spectrum, ratio, temperature, heads, bias, offsets,
    buckets, grid, columns, precision, collisions (:func:`view_names`);
    None: the view ``pe dot`` picks for the first input. ``inputs``: inline
    specs ("rope:head-dim=64,max-len=4096,rope-scaling=llama3,factor=8")
    and/or table file paths. The keywords are the CLI's flags: ``max_offset``,
    ``tensor``, ``columns``, ``window``, ``collision_dtypes``, ``patches``,
    ``grid`` ("14x14" or (14, 14)), ``cls_token``, ``prefix_tokens`` (rows
    before the grid's cells, left out; None: none, or 1 with ``cls_token``);
    ``scheme=`` with its
    parameters (as :func:`generate`) is the --scheme flags: a series of
    its own, or the recipe of a file for the precision view.

    Returns a :class:`View`. Raises :class:`pe.Error` with pe's message
    (``view grid: needs a 2-D encoding ...``) when the view does not apply.
    """
    if isinstance(inputs, (str, _os.PathLike)):
        inputs = [inputs]
    texts = [_os.fspath(i) for i in inputs]
    if isinstance(collision_dtypes, str):
        collision_dtypes = [d.strip() for d in collision_dtypes.split(",") if d.strip()]
    if isinstance(grid, (tuple, list)):
        grid = f"{int(grid[0])}x{int(grid[1])}"
    recipe_scheme = None
    recipe: List[Tuple[str, str]] = []
    if scheme is not None or params or rope_scaling is not None:
        recipe_scheme = scheme or "sinusoidal"
        recipe = _params(params, rope_scaling)
    core = _pe.view(name or "", texts, -1 if max_offset is None else int(max_offset), tensor or "",
                    [int(c) for c in (columns or [])], int(window), list(collision_dtypes or []),
                    [int(p) for p in (patches or [])], grid or "", bool(cls_token),
                    -1 if prefix_tokens is None else int(prefix_tokens), recipe_scheme, recipe)
    return View(core)


def view_names() -> List[str]:
    """Every view :func:`view` computes."""
    return _pe.view_names()


def schemes() -> List[Dict[str, Any]]:
    """Every scheme pe generates: name, summary, source, tensors and params (key, meaning, default)."""
    return _pe.schemes()


def spec_keys() -> List[str]:
    """Every parameter keyword :func:`generate` takes (the CLI's flags, underscore spelling)."""
    return _pe.spec_keys()


def _grid(text: Any, what: str) -> Tuple[int, int]:
    if text is None:
        return 0, 0
    if isinstance(text, int):
        return text, text
    if isinstance(text, str):
        h, sep, w = text.lower().partition("x")
        if not sep or not h.isdigit() or not w.isdigit():
            raise Error(f"{what} {text!r}: expected HxW, e.g. 24x24")
        return int(h), int(w)
    h, w = text
    return int(h), int(w)


def resize(table: Any, rule: str = "", grid: Any = None, from_grid: Any = None, max_len: int = 0,
           mode: str = "", antialias: Optional[bool] = None, align_corners: Optional[bool] = None,
           prefix_tokens: int = -1, offset: int = -1, interpolate_offset: Optional[float] = None,
           merge_size: int = 0, frames: int = 1, describe: bool = False) -> Any:
    """Resizes a learned position table as a model does (include/pe/resize.h).

    ``table``: [positions, channels] (a [1, N, C] tensor is squeezed; a
    one-tensor :class:`Tables` from :func:`read`), read as float32. ``rule``: "hf-vit", "siglip2", "timm", "dinov2", "hf-dinov2", "qwen3-vl",
    "bert-tile", "linear", "linear-torch2", or "" for F.interpolate with the knobs alone.
    ``grid``: target grid (24, "24x24" or (h, w)); ``from_grid``: source grid
    when not square; ``max_len``: rows of a 1-D result (bert-tile, linear) or
    siglip2's padded length. The other keywords override the rule's
    settings. Returns a float32 numpy array (and the description with
    ``describe=True``)."""
    if isinstance(table, Tables):
        if len(table) != 1:
            raise _usage(f"table: a set of {len(table)} tensors; pass one of them (table[name])")
        table = table.table
    a = _np.asarray(table.detach().cpu().numpy() if hasattr(table, "detach") else table)
    if a.ndim == 3 and a.shape[0] == 1:
        a = a[0]
    fh, fw = _grid(from_grid, "from_grid")
    th, tw = _grid(grid, "grid")
    try:
        out, text = _pe.resize(_np.ascontiguousarray(a, dtype=_np.float32), rule, fh, fw, th, tw, int(max_len), mode,
                               antialias, align_corners, int(prefix_tokens), int(offset), interpolate_offset,
                               int(merge_size), int(frames))
    except UsageError as e:
        # The library names the CLI's --resize-rule; this function's keyword is `rule`.
        msg = str(e)
        if msg.startswith("resize_rule"):
            raise UsageError("rule" + msg[len("resize_rule"):]) from None
        raise
    return (out, text) if describe else out
