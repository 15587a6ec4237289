"""Packaging for the pure-Python cxla package (metadata is in pyproject.toml).

The version is not written here: it is read from include/cxla.h (CXLA_VERSION_*), the one place
it lives. The installed package also records which source tree it came from, so that it finds
the library built there (build/libcxla.so) before looking for an installed one.
"""
import os
import re

from setuptools import setup
from setuptools.command.build_py import build_py

TREE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def header_version():
    with open(os.path.join(TREE, "include", "cxla.h")) as f:
        text = f.read()
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(r"^#define CXLA_VERSION_%s\s+(\d+)" % part, text, re.M)
        if not m:
            raise RuntimeError("include/cxla.h has no CXLA_VERSION_%s" % part)
        parts.append(m.group(1))
    return ".".join(parts)


class BuildPy(build_py):
    def run(self):
        super().run()
        path = os.path.join(self.build_lib, "cxla", "_installed.py")
        with open(path, "w") as f:
            f.write("# Written when the package was built (python/setup.py).\n")
            f.write("VERSION = %r\nSOURCE_TREE = %r\n" % (header_version(), TREE))


setup(version=header_version(), cmdclass={"build_py": BuildPy})
