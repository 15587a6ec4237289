"""Element types: cxla's (by the names the library gives them) to numpy's and back, and the
shapes of parameters and results as this package keeps them."""
from __future__ import annotations

import ctypes
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

# HLO type names to numpy dtypes; bf16 only where ml_dtypes (jax's dtype package) is installed.
_NUMPY_OF_NAME: Dict[str, np.dtype[Any]] = {
    "pred": np.dtype(np.bool_),
    "s8": np.dtype(np.int8),
    "s16": np.dtype(np.int16),
    "s32": np.dtype(np.int32),
    "s64": np.dtype(np.int64),
    "u8": np.dtype(np.uint8),
    "u16": np.dtype(np.uint16),
    "u32": np.dtype(np.uint32),
    "u64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "c64": np.dtype(np.complex64),
    "c128": np.dtype(np.complex128),
}
try:
    import ml_dtypes

    _NUMPY_OF_NAME["bf16"] = np.dtype(ml_dtypes.bfloat16)
    # the 2-, 4- and 8-bit types, one per byte in both libraries; a name ml_dtypes lacks stays unmapped
    for _name, _ml in (("s4", "int4"), ("u4", "uint4"), ("f8e4m3fn", "float8_e4m3fn"), ("f8e5m2", "float8_e5m2"),
                       ("f8e4m3fnuz", "float8_e4m3fnuz"), ("f8e5m2fnuz", "float8_e5m2fnuz"),
                       ("f8e4m3b11fnuz", "float8_e4m3b11fnuz"), ("f8e4m3", "float8_e4m3"), ("f8e3m4", "float8_e3m4"),
                       ("f4e2m1fn", "float4_e2m1fn"), ("s2", "int2"), ("u2", "uint2"),
                       ("f8e8m0fnu", "float8_e8m0fnu")):
        if hasattr(ml_dtypes, _ml):
            _NUMPY_OF_NAME[_name] = np.dtype(getattr(ml_dtypes, _ml))
except ImportError:  # bf16 results then come back widened to float32 (a copy), as cxla run writes them
    pass


class Types:
    """The library's element types: code <-> HLO name <-> numpy dtype."""

    def __init__(self, lib: Any) -> None:
        self.name: Dict[int, str] = {}
        self.code: Dict[str, int] = {}
        t = 1
        while True:
            n = lib.cxla_type_name(t)
            if not n:
                break
            self.name[t] = n.decode()
            self.code[self.name[t]] = t
            t += 1
        self.tuple = self.code.get("tuple")
        self.numpy: Dict[int, Optional[np.dtype[Any]]] = {c: _NUMPY_OF_NAME.get(n) for c, n in self.name.items()}
        self.of_numpy: Dict[np.dtype[Any], int] = {d: c for c, d in self.numpy.items() if d is not None}

    def code_of(self, dtype: np.dtype[Any]) -> Optional[int]:
        """The cxla type of a numpy dtype, or None."""
        return self.of_numpy.get(dtype)


class Spec:
    """A parameter's or result's shape: an array (code, dtype, shape) or a tuple of Specs."""

    __slots__ = ("code", "name", "dtype", "shape", "nbytes", "dims", "cbuf", "elems")

    code: int
    name: str
    dtype: Optional[np.dtype[Any]]  # None: a tuple, a token, or bf16 without ml_dtypes
    shape: Optional[Tuple[int, ...]]  # None for a tuple
    nbytes: int
    dims: Any  # the shape as a ctypes int64 array, for cxla_arg
    cbuf: Any  # the ctypes type a result leaf's memory is seen through
    elems: Optional[List[Spec]]  # a tuple's elements

    def __init__(self, types: Types, c_shape: Any) -> None:
        self.code = c_shape.type
        self.name = types.name.get(self.code, "?")
        self.elems = None
        if self.code == types.tuple:
            self.elems = [Spec(types, c_shape.elems[i]) for i in range(c_shape.ntuple)]
            self.shape = None
            self.dtype = None
            return
        self.shape = tuple(c_shape.dims[i] for i in range(c_shape.rank))
        self.dtype = types.numpy.get(self.code)
        size = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        width = np.dtype(np.uint16).itemsize if self.name == "bf16" else (self.dtype.itemsize if self.dtype else 0)
        self.nbytes = size * width
        self.dims = (ctypes.c_int64 * max(len(self.shape), 1))(*self.shape)
        self.cbuf = ctypes.c_char * self.nbytes  # the ctypes type a result leaf's memory is seen through

    def __str__(self) -> str:
        if self.elems is not None:
            return "(" + ", ".join(str(e) for e in self.elems) + ")"
        return "%s[%s]" % (self.name, ",".join(str(d) for d in self.shape or ()))

    def leaves(self) -> List[Spec]:
        if self.elems is None:
            return [self]
        return [leaf for e in self.elems for leaf in e.leaves()]
