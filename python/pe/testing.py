"""pe in a test suite: assertions whose failure message is pe's report, and
a pytest plugin (docs/ci.md, "pytest").

    from pe.testing import assert_table, assert_model

    def test_our_rope_table():
        dump_table("cos.npy")                                  # your code
        assert_table("cos.npy", "rope:head-dim=128,max-len=4096,base=500000,tensor=cos")

    def test_our_gguf_matches_the_checkpoint():
        assert_model("Llama-3.1-8B/", "llama-3.1-8b.gguf")

A failed check raises AssertionError carrying the text ``pe verify``
prints (every check, the diagnosis); pytest shows it as the failure.

The plugin (``pytest11`` entry point ``pe``, so installed with the package
it loads itself; else ``pytest_plugins = ["pe.testing"]`` in a
conftest.py) adds the fixture ``pe_verify``: ``pe_verify.table(path,
spec, **keywords)`` and ``pe_verify.model(a, b)`` are the two assertions,
and each report is kept in ``pe_verify.reports`` (the JSON documents) for
the test to look at.
"""
from typing import Any, Dict, List, Mapping, Optional, Union
import os as _os

import pe as _pe

__all__ = ["assert_table", "assert_model", "verify_table", "verify_model", "PeVerify"]

PathLike = Union[str, "_os.PathLike[str]"]


def _fail_text(report: Mapping[str, Any], what: str) -> str:
    text = report.get("text") or ""
    return f"pe verify {what}: FAIL\n{text}".rstrip()


def verify_table(path: Any, spec: Union[None, str, Mapping[str, Any]] = None, **keywords: Any) -> Dict[str, Any]:
    """The ``pe verify`` report of ``path`` against ``spec`` (see assert_table), not asserted."""
    if isinstance(spec, Mapping):
        params = dict(spec)
        scheme = params.pop("scheme", None)
        return _pe.verify(path, scheme, **params, **keywords)
    if isinstance(spec, str) and ":" not in spec and not _os.path.exists(spec):
        return _pe.verify(path, spec, **keywords)  # a scheme name, its parameters as keywords
    if spec is None:
        return _pe.verify(path, **keywords)        # the file's metadata names the scheme
    return _pe.verify(path, reference=_os.fspath(spec), **keywords)  # an inline spec or a reference file


def assert_table(path: Any, spec: Union[None, str, Mapping[str, Any]] = None, **keywords: Any) -> Dict[str, Any]:
    """Asserts that the table at ``path`` (a file, an array, a tensor) is ``spec``.

    ``spec``: an inline spec ("rope:head-dim=128,base=500000,tensor=cos"),
    a reference table file, a scheme name with its parameters as keywords
    (``assert_table(p, "sinusoidal", d_model=512)``), a dict {"scheme": ...,
    parameters}, or None (the file's metadata). Other keywords are
    :func:`pe.verify`'s (``max_ulp``, ``atol``, ``tensor``, ``dtype``, ...).
    Returns the report; raises AssertionError with pe's text report when
    the table fails, and pe.Error (exit 2's message) when the request is
    wrong.
    """
    __tracebackhide__ = True
    report = verify_table(path, spec, **keywords)
    if not report["pass"]:
        raise AssertionError(_fail_text(report, _name(path)))
    return report


def assert_model(model: PathLike, other: Optional[PathLike] = None, *, diagnose: bool = True,
                 allow_empty: bool = False) -> Dict[str, Any]:
    """Asserts ``pe verify --model MODEL [--model OTHER]``: a model folder,
    GGUF, ONNX or checkpoint whose positional encoding is what its config
    states, and with ``other`` the same plan as the first (a GGUF against
    its checkpoint's folder). Returns the report; raises AssertionError
    with pe's text report when a check fails.
    """
    __tracebackhide__ = True
    return _check_model(verify_model(model, other, diagnose=diagnose, allow_empty=allow_empty), model, other)


def verify_model(model: PathLike, other: Optional[PathLike] = None, *, diagnose: bool = True,
                 allow_empty: bool = False) -> Dict[str, Any]:
    """The ``pe verify --model`` report (see assert_model), not asserted."""
    models = [model] + ([other] if other is not None else [])
    return _pe.verify_models(*models, diagnose=diagnose, allow_empty=allow_empty)


def _check_model(report: Dict[str, Any], model: PathLike, other: Optional[PathLike]) -> Dict[str, Any]:
    __tracebackhide__ = True
    if not report["pass"]:
        models = [model] + ([other] if other is not None else [])
        raise AssertionError(_fail_text(report, " ".join(f"--model {_os.fspath(m)}" for m in models)))
    return report


def _name(path: Any) -> str:
    return _os.fspath(path) if isinstance(path, (str, _os.PathLike)) else type(path).__name__


class PeVerify:
    """The ``pe_verify`` fixture: the assertions, with the reports kept."""

    def __init__(self) -> None:
        self.reports: List[Dict[str, Any]] = []

    def table(self, path: Any, spec: Union[None, str, Mapping[str, Any]] = None, **keywords: Any) -> Dict[str, Any]:
        __tracebackhide__ = True
        report = verify_table(path, spec, **keywords)
        self.reports.append(report)
        if not report["pass"]:
            raise AssertionError(_fail_text(report, _name(path)))
        return report

    def model(self, model: PathLike, other: Optional[PathLike] = None, **keywords: Any) -> Dict[str, Any]:
        __tracebackhide__ = True
        report = verify_model(model, other, **keywords)
        self.reports.append(report)
        return _check_model(report, model, other)


try:  # the plugin part: only where pytest is (the assertions work without it)
    import pytest as _pytest

    @_pytest.fixture
    def pe_verify() -> PeVerify:
        """pe's verify as assertions: pe_verify.table(path, spec, ...), pe_verify.model(a, b)."""
        return PeVerify()

    def pytest_report_header(config: Any) -> str:
        return f"pe.testing: pe {_pe.__version__}"
except ImportError:  # pragma: no cover
    pass
