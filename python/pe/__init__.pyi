# Type stubs of the pe package (python/pe/__init__.py; docs/python.md).
from os import PathLike
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

class Error(ValueError):
    """pe's error: the message is pe's ("<what>: <why>"); kind is "usage", "input" or "io"."""
    kind: str

BFLOAT16_AS: type

Array = Any  # numpy.ndarray, or torch.Tensor with as_torch=True
Path = Union[str, PathLike[str]]
TableLike = Union[Path, np.ndarray, Any, Mapping[str, Any]]

def generate(scheme: str = ..., *, dtype: Optional[str] = ..., tensor: Optional[str] = ...,
             rope_scaling: Union[None, str, Mapping[str, Any]] = ..., as_torch: bool = ...,
             **params: Any) -> Union[Array, Dict[str, Array]]: ...
def read(path: Path, tensor: Optional[str] = ..., *, format: Optional[str] = ..., as_torch: bool = ...,
         with_metadata: bool = ...) -> Union[Array, Dict[str, Array],
                                             Tuple[Union[Array, Dict[str, Array]], Dict[str, Union[int, float, str]]]]: ...
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
def dot(table: Optional[TableLike] = ..., *, cosine: bool = ..., max_offset: Optional[int] = ...,
        mean_only: bool = ..., tensor: Optional[str] = ..., metadata: Optional[Mapping[str, Any]] = ...,
        format: Optional[str] = ..., dtype: Optional[str] = ..., scheme: Optional[str] = ...,
        rope_scaling: Union[None, str, Mapping[str, Any]] = ...,
        **params: Any) -> Dict[str, Optional[np.ndarray]]: ...
def schemes() -> List[Dict[str, Any]]: ...
def spec_keys() -> List[str]: ...
