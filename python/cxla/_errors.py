"""cxla's errors: cxla.Error and one subclass per cxla_status of include/cxla.h, made in one
place (error()) from a status code and the library's message.

Status mirrors the C enum by hand (tests/python/test_layout.py compares it with the header);
the names ("parse error", ...) are the library's own (cxla_status_str), filled in when the
library is loaded."""
from __future__ import annotations

import enum
from typing import ClassVar, Dict, Optional, Type


class Status(enum.IntEnum):
    """cxla_status: the kind of a failure, as the C library numbers it."""

    OK = 0
    INVALID_ARGUMENT = 1
    PARSE = 2
    VERIFY = 3
    UNSUPPORTED = 4
    OUT_OF_MEMORY = 5
    IO = 6
    DEVICE = 7
    COMPILE = 8
    RUNTIME = 9
    INTERNAL = 10


# Status -> the library's name for it (cxla_status_str); set by _core once the library is loaded.
STATUS_NAMES: Dict[int, str] = {}


class Error(Exception):
    """An error from cxla: the library's message (file:line:col first for text it could not
    parse). `code` is its cxla_status (a Status, an int) and `status` the library's name for it
    ("parse error", "invalid argument", ...). Each status has its subclass; catching
    cxla.Error catches them all."""

    _code: ClassVar[Optional[Status]] = None

    code: Optional[int]
    status: Optional[str]
    message: str

    def __init__(self, message: str, status: Optional[str] = None, code: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code if code is not None else type(self)._code
        if status is None and self.code is not None:
            status = STATUS_NAMES.get(int(self.code))
        self.status = status


class InvalidArgumentError(Error):
    """CXLA_ERR_INVALID_ARGUMENT: a bad argument to a call (a wrong shape or dtype, a donated
    buffer used again, an executable used after close()), also when this package finds it."""

    _code = Status.INVALID_ARGUMENT


class ParseError(Error):
    """CXLA_ERR_PARSE: malformed HLO text; the message starts with FILE:LINE:COL."""

    _code = Status.PARSE


class VerifyError(Error):
    """CXLA_ERR_VERIFY: a module that parses but is ill-formed (shapes, names, attributes)."""

    _code = Status.VERIFY


class UnsupportedError(Error):
    """CXLA_ERR_UNSUPPORTED: valid, but not implemented by the chosen backend."""

    _code = Status.UNSUPPORTED


class OutOfMemoryError(Error, MemoryError):
    """CXLA_ERR_OUT_OF_MEMORY; also a MemoryError."""

    _code = Status.OUT_OF_MEMORY


class FileError(Error):
    """CXLA_ERR_IO: a file could not be read or written, or its format is bad (.hlo, .npy).
    (Not named IOError: that is Python's OSError.)"""

    _code = Status.IO


class DeviceError(Error):
    """CXLA_ERR_DEVICE: a device is missing or failed."""

    _code = Status.DEVICE


class CompileError(Error):
    """CXLA_ERR_COMPILE: code generation failed."""

    _code = Status.COMPILE


class ExecutionError(Error):
    """CXLA_ERR_RUNTIME: execution failed (a loop-iteration limit, ...)."""

    _code = Status.RUNTIME


class InternalError(Error):
    """CXLA_ERR_INTERNAL: a bug in cxla (please report it)."""

    _code = Status.INTERNAL


_CLASS_OF: Dict[int, Type[Error]] = {
    cls._code: cls
    for cls in (InvalidArgumentError, ParseError, VerifyError, UnsupportedError, OutOfMemoryError, FileError,
                DeviceError, CompileError, ExecutionError, InternalError)
    if cls._code is not None
}


def error(code: int, message: str) -> Error:
    """The exception for a status the library returned: its class, its code and name. A code
    this package does not know (a newer library) is a plain cxla.Error carrying it."""
    cls = _CLASS_OF.get(code, Error)
    try:
        known: int = Status(code)
    except ValueError:
        known = code
    return cls(message, STATUS_NAMES.get(code) or "status %d" % code, known)
