"""The ctypes mirrors of include/cxla.h's structs (python/cxla/_lib.py) and of its status enum
(python/cxla/_errors.py) against the header itself: a C program compiled now prints each
struct's size and alignment and each field's offset and size, and the enum's values; the
fields' names and order are read from the header's text. A field reordered, retyped, added or
missing on either side fails here instead of corrupting memory at a call."""
import ctypes
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import cxla
from cxla._callbacks import HostCallbacks, HostValue
from cxla._lib import Arg, CompileOptions, MemoryStats, Shape  # (cxla._lib, the attribute, is the loaded library)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(ROOT, "include", "cxla.h")

# Each mirrored struct: the ctypes class and the header's typedef name.
MIRRORS = [(Shape, "cxla_shape"), (CompileOptions, "cxla_compile_options"), (Arg, "cxla_arg"),
           (MemoryStats, "cxla_memory_stats"), (HostValue, "cxla_host_value"), (HostCallbacks, "cxla_host_callbacks")]


def header_text():
    with open(HEADER) as f:
        return re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)  # comments out


def header_fields(text, name):
    """The field names of `typedef struct name {...} name;`, in order."""
    m = re.search(r"typedef\s+struct\s+%s\s*\{(.*?)\}\s*%s\s*;" % (name, name), text, re.S)
    if not m:
        raise AssertionError("include/cxla.h has no typedef struct %s" % name)
    fields = []
    for decl in m.group(1).split(";"):
        decl = re.sub(r"\[[^]]*\]", "", decl).strip()  # an array's [N]
        fn = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", decl)  # a function pointer: (*name)(...)
        if fn:
            fields.append(fn.group(1))
        elif decl:
            fields.append(re.findall(r"[A-Za-z_]\w*", decl)[-1])
    return fields


def header_enum(text, name):
    """The enumerator names of `typedef enum name {...} name;`, in order."""
    m = re.search(r"typedef\s+enum\s+%s\s*\{(.*?)\}\s*%s\s*;" % (name, name), text, re.S)
    if not m:
        raise AssertionError("include/cxla.h has no typedef enum %s" % name)
    return [re.match(r"\s*(\w+)", e).group(1) for e in m.group(1).split(",") if e.strip()]


def c_facts(text):
    """Compiles and runs the probe: {("struct", s): (size, align), ("field", s, f): (offset,
    size), ("enum", e): value}. None when there is no C compiler."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc or not shutil.which(cc.split()[0]):
        return None
    lines = ["#include <stdalign.h>", "#include <stddef.h>", "#include <stdio.h>", '#include "cxla.h"',
             "int main(void) {"]
    for _, name in MIRRORS:
        lines.append('  printf("struct %s %%zu %%zu\\n", sizeof(%s), alignof(%s));' % (name, name, name))
        for f in header_fields(text, name):
            lines.append('  printf("field %s %s %%zu %%zu\\n", offsetof(%s, %s), sizeof(((%s *)0)->%s));'
                         % (name, f, name, f, name, f))
    for e in header_enum(text, "cxla_status"):
        lines.append('  printf("enum %s %%d\\n", (int)%s);' % (e, e))
    lines += ["  return 0;", "}", ""]
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "layout.c"), os.path.join(d, "layout")
        with open(src, "w") as f:
            f.write("\n".join(lines))
        build = subprocess.run(cc.split() + ["-std=c11", "-I", os.path.join(ROOT, "include"), src, "-o", exe],
                               capture_output=True, text=True)
        if build.returncode:
            raise AssertionError("the layout probe does not compile:\n" + build.stderr)
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    facts = {}
    for line in out.splitlines():
        kind, *rest = line.split()
        nums = tuple(int(x) for x in rest if x.lstrip("-").isdigit())
        key = (kind,) + tuple(x for x in rest if not x.lstrip("-").isdigit())
        facts[key] = nums if len(nums) > 1 else nums[0]
    return facts


class Layout(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.text = header_text()
        cls.facts = c_facts(cls.text)

    def setUp(self):
        if self.facts is None:
            self.skipTest("no C compiler (cc) to compile include/cxla.h with")

    def test_structs_match_the_header(self):
        for cls, name in MIRRORS:
            with self.subTest(struct=name):
                names = [f[0] for f in cls._fields_]
                self.assertEqual(names, header_fields(self.text, name),
                                 "%s's fields (python/cxla/_lib.py) are not cxla.h's, in its order" % cls.__name__)
                self.assertEqual((ctypes.sizeof(cls), ctypes.alignment(cls)), self.facts[("struct", name)],
                                 "%s: (sizeof, alignof) differ from C's" % cls.__name__)
                for f in names:
                    field = getattr(cls, f)
                    self.assertEqual((field.offset, field.size), self.facts[("field", name, f)],
                                     "%s.%s: (offset, size) differ from C's" % (cls.__name__, f))

    def test_status_enum_matches_the_header(self):
        names = header_enum(self.text, "cxla_status")
        mine = ["CXLA_OK" if s.name == "OK" else "CXLA_ERR_" + s.name for s in cxla.Status]
        self.assertEqual(mine, names, "cxla.Status (python/cxla/_errors.py) is not cxla.h's cxla_status")
        for s, c in zip(cxla.Status, names):
            self.assertEqual(int(s), self.facts[("enum", c)], c)

    def test_the_probe_reads_the_header(self):
        # the parsing above must see what it checks: known fields, every status
        self.assertEqual(header_fields(self.text, "cxla_shape"), ["type", "rank", "dims", "ntuple", "elems"])
        self.assertEqual(header_fields(self.text, "cxla_host_callbacks"), ["call", "lookup", "user"])
        self.assertGreaterEqual(len(header_enum(self.text, "cxla_status")), 11)
        self.assertEqual(self.facts[("enum", "CXLA_ERR_PARSE")], 2)


if __name__ == "__main__":
    unittest.main()
