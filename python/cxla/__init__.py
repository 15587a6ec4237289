"""cxla from Python: compile XLA HLO with cxla and call it on numpy arrays without copies.

    import cxla, numpy as np
    f = cxla.compile(open("model.hlo").read(), backend="cpu", threads=2)
    y = f(np.ones((2, 3), np.float32))          # numpy in, numpy out, no copies either way

    @cxla.jit                                    # a JAX (or TensorFlow) function, run on cxla
    def step(params, x): ...

The library is found in the source tree's build folder, installed on the system, or at
$CXLA_LIBRARY (cxla.library_path says which). Failures raise cxla.Error's subclasses, one
per cxla_status (cxla.ParseError, ...). docs/python.md has the details.
"""
from ._buffer import Buffer, device_put, memory_stats
from ._core import Executable, FlagValue, HloSource, compile, library_path
from ._core import lib as _lib
from ._errors import (CompileError, DeviceError, Error, ExecutionError, FileError, InternalError, InvalidArgumentError,
                      OutOfMemoryError, ParseError, Status, UnsupportedError, VerifyError)
from ._grad import Grad, grad, value_and_grad
from ._jit import Jitted, jit

__all__ = ["compile", "jit", "grad", "value_and_grad", "Executable", "Jitted", "Grad", "Buffer", "device_put",
           "memory_stats", "version", "library_path",
           "HloSource", "FlagValue", "Status", "Error", "InvalidArgumentError", "ParseError", "VerifyError",
           "UnsupportedError", "OutOfMemoryError", "FileError", "DeviceError", "CompileError", "ExecutionError",
           "InternalError"]

__version__: str = _lib.cxla_version().decode()


def version() -> str:
    """The version of the loaded cxla library ("MAJOR.MINOR.PATCH")."""
    return __version__
