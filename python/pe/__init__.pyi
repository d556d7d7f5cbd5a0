# Type stubs of the pe package (python/pe/__init__.py; docs/python.md).
from os import PathLike
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

__version__: str

class Error(Exception):
    """pe's error: the message is pe's ("<what>: <why>"); kind is "usage", "input" or "io"."""
    kind: str
    hint: str
class UsageError(Error, ValueError): ...
class InputError(Error, ValueError): ...
class FileNotFound(Error, FileNotFoundError): ...
class PermissionDenied(Error, PermissionError): ...
class IOFailure(Error, OSError): ...

BFLOAT16_AS: type

Array = Any  # numpy.ndarray, or torch.Tensor with as_torch=True
Path = Union[str, PathLike[str]]
TableLike = Union[Path, np.ndarray, Any, Mapping[str, Any]]
DTypeLike = Union[None, str, type, np.dtype, Any]

class Tables(Dict[str, Array]):
    """What generate() and read() return: name -> array, .table for a single-tensor table."""
    dtypes: Dict[str, str]
    metadata: Dict[str, Union[int, float, str]]
    @property
    def table(self) -> Array: ...

def generate(scheme: Optional[str] = ..., *, dtype: DTypeLike = ..., tensor: Optional[str] = ...,
             rope_scaling: Union[None, str, Mapping[str, Any]] = ..., as_torch: bool = ...,
             **params: Any) -> Tables: ...
def read(path: Path, tensor: Optional[str] = ..., *, format: Optional[str] = ..., as_torch: bool = ...,
         with_metadata: bool = ...) -> Union[Tables, Tuple[Tables, Dict[str, Union[int, float, str]]]]: ...
def write(path: Path, data: Union[Array, Mapping[str, Array]],
          metadata: Optional[Mapping[str, Union[int, float, str]]] = ..., *, format: Optional[str] = ...,
          dtype: Optional[str] = ...) -> None: ...
def verify(table: TableLike, scheme: Optional[str] = ..., *, tensor: Optional[str] = ...,
           reference: Optional[TableLike] = ..., reference_tensor: Optional[str] = ...,
           checks: Union[None, str, Sequence[str]] = ..., offsets: Optional[Sequence[int]] = ...,
           atol: Optional[float] = ..., rtol: Optional[float] = ..., max_ulp: Optional[float] = ...,
           judge_as: Optional[str] = ..., diagnose: bool = ..., metadata: Optional[Mapping[str, Any]] = ...,
           format: Optional[str] = ..., dtype: Optional[str] = ...,
           rope_scaling: Union[None, str, Mapping[str, Any]] = ..., **params: Any) -> Dict[str, Any]: ...
def identify(table: TableLike, *, tensor: Optional[str] = ..., metadata: Optional[Mapping[str, Any]] = ...,
             format: Optional[str] = ..., dtype: Optional[str] = ...) -> Dict[str, Any]: ...
def inspect(path: Union[str, PathLike], *, tensor: Optional[str] = ..., format: Optional[str] = ...,
            rows: Optional[str] = ..., cols: Optional[str] = ..., preview: int = ...,
            identify: Optional[bool] = ..., text: bool = ..., plot: Union[None, str, PathLike] = ...,
            group: str = ..., cmap: Optional[str] = ...) -> Union[Dict[str, Any], str]: ...
def inspect_model(path: Union[str, PathLike]) -> Dict[str, Any]: ...
def verify_models(*models: Union[str, PathLike], diagnose: bool = ...,
                  allow_empty: bool = ...) -> Dict[str, Any]: ...
def verify_engine(engine: str, model: Union[str, PathLike], hf_model: Union[None, str, PathLike] = ..., *,
                  positions: Optional[Sequence[int]] = ..., start: Optional[int] = ...,
                  diagnose: bool = ...) -> Dict[str, Any]: ...
def dot(table: Optional[TableLike] = ..., *, cosine: bool = ..., max_offset: Optional[int] = ...,
        mean_only: bool = ..., tensor: Optional[str] = ..., metadata: Optional[Mapping[str, Any]] = ...,
        format: Optional[str] = ..., dtype: Optional[str] = ..., scheme: Optional[str] = ...,
        rope_scaling: Union[None, str, Mapping[str, Any]] = ..., plot: Union[None, str, PathLike] = ...,
        matrix: Union[None, str, PathLike] = ..., matrix_size: int = ..., view: Optional[str] = ...,
        title: Optional[str] = ..., size: Union[None, str, Tuple[int, int]] = ..., label: Optional[str] = ...,
        log_x: bool = ..., log_y: bool = ..., xlim: Optional[Tuple[float, float]] = ...,
        ylim: Optional[Tuple[float, float]] = ..., train_len: Optional[float] = ..., cmap: Optional[str] = ...,
        **params: Any) -> Dict[str, Optional[np.ndarray]]: ...
class View:
    name: str
    title: str
    subtitle: str
    x_label: str
    y_label: str
    value_label: str
    note: str
    x_name: str
    markers: List[Tuple[float, str]]
    series: Dict[str, Dict[str, np.ndarray]]
    panels: List[Dict[str, Any]]
    def to_csv(self, path: Optional[Path] = ...) -> Optional[str]: ...
    def to_json(self, path: Optional[Path] = ...) -> Optional[str]: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def plot(self, path: Path, *, title: Optional[str] = ..., log_x: Optional[bool] = ..., log_y: Optional[bool] = ...,
             xlim: Optional[Tuple[float, float]] = ..., ylim: Optional[Tuple[float, float]] = ...,
             vmin: Optional[float] = ..., vmax: Optional[float] = ..., cmap: Optional[str] = ...,
             size: Tuple[int, int] = ..., train_len: Optional[float] = ...) -> None: ...
def view(name: Optional[str] = ..., inputs: Union[Path, Sequence[Path]] = ..., *, max_offset: Optional[int] = ...,
         tensor: Optional[str] = ..., columns: Optional[Sequence[int]] = ..., window: int = ...,
         collision_dtypes: Union[None, str, Sequence[str]] = ..., patches: Optional[Sequence[int]] = ...,
         grid: Union[None, str, Tuple[int, int]] = ..., cls_token: bool = ..., scheme: Optional[str] = ...,
         rope_scaling: Union[None, str, Mapping[str, Any]] = ..., **params: Any) -> View: ...
def view_names() -> List[str]: ...
def schemes() -> List[Dict[str, Any]]: ...
def spec_keys() -> List[str]: ...

def resize(table: Any, rule: str = ..., grid: Any = ..., from_grid: Any = ..., max_len: int = ..., mode: str = ...,
           antialias: Optional[bool] = ..., align_corners: Optional[bool] = ..., prefix_tokens: int = ...,
           offset: int = ..., interpolate_offset: Optional[float] = ..., merge_size: int = ..., frames: int = ...,
           describe: bool = ...) -> Any: ...

class Probe:
    array: Any
    positions: Any
    def __init__(self, array: Any, positions: Any) -> None: ...

def probe(rotate: Any, *, head_dim: int, positions: Any = ..., max_len: Optional[int] = ..., start: int = ...,
          as_torch: Optional[bool] = ..., dtype: Any = ...) -> Probe: ...
def verify_probe(probe: Any, scheme: Optional[str] = ..., *, positions: Any = ..., tensor: Optional[str] = ...,
                 atol: Optional[float] = ..., rtol: Optional[float] = ..., max_ulp: Optional[float] = ...,
                 judge_as: Optional[str] = ..., diagnose: bool = ..., rope_scaling: Any = ...,
                 **params: Any) -> Dict[str, Any]: ...
