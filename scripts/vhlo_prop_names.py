#!/usr/bin/env python3
"""Writes src/stablehlo/vhlo_props.c: for each VHLO op, the names of the attributes its MLIR
properties hold, in the order the bytecode stores them (ODS keeps an op's attributes sorted by
name). The names are facts of StableHLO's VhloOps.td; run with that file:

  git -C /work/.mirror/openxla+stablehlo/repo show \
      e6f81ebd06b3509f2c7fa6175430aadbd4d724ca:stablehlo/dialect/VhloOps.td > /tmp/VhloOps.td
  python3 scripts/vhlo_prop_names.py /tmp/VhloOps.td > src/stablehlo/vhlo_props.c
"""
import re
import sys


def ident(op):
    """A C name for an op name (cross-replica-sum_v1 has hyphens)."""
    return op.replace("-", "_")


def ops_of(td):
    for m in re.finditer(r'def (VHLO_\w+)\s*:\s*VHLO_Op<"([\w-]+)"', td):
        nxt = td.find('\ndef ', m.end())
        body = td[m.end(): nxt if nxt > 0 else len(td)]
        args = re.search(r'let arguments = \(\s*ins(.*?)\);', body, re.S)
        names = []
        if args:
            for a in re.finditer(r'([\w<>]+)\s*:\s*\$(\w+)', args.group(1)):
                kind, name = a.group(1), a.group(2)
                if 'Attr' in kind:
                    names.append(name)
                elif 'Type' not in kind:
                    sys.exit('cannot tell whether %s of %s is an attribute' % (name, m.group(2)))
        yield m.group(2), sorted(names)


def main():
    ops = sorted(ops_of(open(sys.argv[1]).read()))
    out = ['/* vhlo_props.c — written by scripts/vhlo_prop_names.py from StableHLO\'s VhloOps.td (the',
           ' * commit jaxlib 0.10.2 uses): the attribute names each vhlo op keeps in its MLIR properties,',
           ' * in stored order (sorted by name). The bytecode stores only the values, so these names are',
           ' * what gives them meaning. Do not edit; rerun the script. */',
           '#include <stdlib.h>',
           '#include <string.h>',
           '#include "stablehlo/bytecode_int.h"',
           '']
    for op, names in ops:
        if names:
            out.append('static const char *const p_%s[] = {%s};' % (ident(op), ', '.join('"%s"' % n for n in names)))
    out += ['', 'static const struct {', '  const char *op;', '  int n;', '  const char *const *names;',
            '} ops[] = {']
    for op, names in ops:
        out.append('    {"%s", %d, %s},' % (op, len(names), 'p_' + ident(op) if names else 'NULL'))
    out += ['};', '',
            'static int cmp(const void *k, const void *e) {',
            '  return strcmp((const char *)k, *(const char *const *)e);',
            '}', '',
            'int cx_vhlo_prop_names(const char *opname, const char *const **names) {',
            '  if (strncmp(opname, "vhlo.", 5) != 0) return -1;',
            '  const void *e = bsearch(opname + 5, ops, sizeof ops / sizeof ops[0], sizeof ops[0], cmp);',
            '  if (!e) return -1;',
            '  size_t i = (size_t)((const char *)e - (const char *)ops) / sizeof ops[0];',
            '  *names = ops[i].names;',
            '  return ops[i].n;',
            '}']
    print('\n'.join(out))


main()
