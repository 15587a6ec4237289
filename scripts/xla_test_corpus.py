#!/usr/bin/env python3
"""Measure how cxla reads the HLO text XLA's own C++ tests write (issue 8 §3).

Three modes (python3, standard library only):

  extract GIT_DIR_OR_CHECKOUT [--rev REV] [--out build/xla-corpus]
      Finds XLA's C++ test files (*_test.cc) and writes every C++ raw string
      (R"( ... )", R"hlo( ... )hlo", ...) that holds an HLO module, one file per
      module: <test path with / as __>.<index>.hlo.  Works on a checkout or on a
      bare git dir such as the one `fetch` gives (read with git cat-file).
      XLA's text is XLA's: the output goes under build/ and is never committed.

  summary LOG
      The summary of a run's --log file (also while the run goes on).

  run [--corpus build/xla-corpus] [--cxla build/h8m/cxla] [--jobs 2]
      [--timeout 20] [--backend cpu] [--limit N] [--filter SUBSTR] [--log FILE]
      For each module: `cxla fmt FILE` (parse and verify), then `cxla run FILE
      --random-inputs --backend=cpu --check` (compile, run, compare with the
      interpreter).  Classifies each module and prints a summary with the top
      causes of each kind of failure.  --log writes one tab-separated line per
      module (file, kind, cause, first message line) for later digging.
      Modules run in a fixed shuffled order (--seed), so a partial run is a
      uniform sample.
"""

import argparse
import collections
import concurrent.futures
import os
import random
import re
import subprocess
import sys

RAW = re.compile(r'R"([^()\\\s"]{0,16})\((.*?)\)\1"', re.S)
TEST_FILE = re.compile(r'(^|/)[^/]*_test\.cc$')


def git(gitdir, *args, data=None):
    return subprocess.run(['git', '--git-dir=' + gitdir, *args], input=data,
                          stdout=subprocess.PIPE, check=True).stdout


def git_dir_of(path):
    """The git dir of a checkout, or path itself when it is a bare git dir."""
    if os.path.isdir(os.path.join(path, '.git')):
        return os.path.join(path, '.git')
    if os.path.isfile(os.path.join(path, 'HEAD')):
        return path
    sys.exit('%s: neither a checkout nor a git dir' % path)


def test_sources(gitdir, rev):
    """Yields (path, text) of every *_test.cc at rev, via one cat-file --batch."""
    listing = git(gitdir, 'ls-tree', '-r', rev).decode('utf-8', 'replace')
    blobs = []
    for line in listing.splitlines():
        meta, path = line.split('\t', 1)
        mode, kind, sha = meta.split()
        if kind == 'blob' and TEST_FILE.search(path):
            blobs.append((path, sha))
    out = git(gitdir, 'cat-file', '--batch',
              data=''.join(sha + '\n' for _, sha in blobs).encode())
    pos = 0
    for path, sha in blobs:
        nl = out.index(b'\n', pos)
        header = out[pos:nl].split()
        if len(header) < 3:  # "<sha> missing": a file the snapshot lacks
            pos = nl + 1
            continue
        size = int(header[2])
        body = out[nl + 1:nl + 1 + size]
        pos = nl + 1 + size + 1
        yield path, body.decode('utf-8', 'replace')


def strip_comments_head(text):
    """The text from its first line that is neither blank nor a // comment."""
    lines = text.splitlines()
    i = 0
    while i < len(lines) and (not lines[i].strip() or
                              lines[i].strip().startswith('//')):
        i += 1
    return '\n'.join(lines[i:])


def is_module(text):
    """XLA's parser reads a module with an HloModule line, or a bare ENTRY
    computation (ParseAndReturnUnverifiedModule accepts both)."""
    head = strip_comments_head(text).lstrip()
    if head.startswith('HloModule'):
        return True
    return re.search(r'^\s*ENTRY\b', text, re.M) is not None


def extract(args):
    gitdir = git_dir_of(args.xla)
    os.makedirs(args.out, exist_ok=True)
    for old in os.listdir(args.out):
        if old.endswith('.hlo'):
            os.remove(os.path.join(args.out, old))
    files = modules = 0
    for path, text in test_sources(gitdir, args.rev):
        found = [m.group(2) for m in RAW.finditer(text) if is_module(m.group(2))]
        if not found:
            continue
        files += 1
        stem = path.replace('/', '__')[:-len('.cc')]
        for i, body in enumerate(found):
            with open(os.path.join(args.out, '%s.%d.hlo' % (stem, i)), 'w') as f:
                f.write(body.strip('\n') + '\n')
            modules += 1
    commit = git(gitdir, 'rev-parse', args.rev).decode().strip()
    with open(os.path.join(args.out, 'SOURCE'), 'w') as f:
        f.write('%s %s\n' % (os.path.abspath(gitdir), commit))
    print('%d modules from %d test files of %s at %s into %s'
          % (modules, files, gitdir, commit, args.out))


# ---- run mode ---------------------------------------------------------------

# What the C++ fills in before parsing: absl::Substitute's $0 and $name,
# StrFormat's %s, and the <<TYPE>> / TYPE markers of StrReplaceAll.
PLACEHOLDER = re.compile(r'\$\d|\$\{?[A-Za-z_]+|%[sdu]\b|%\d*\$|\{\{\w|<<\w+>>|'
                         r'\bTYPE\b|\bDTYPE\b')
TEMPLATED = '(templated: $0/%s/<<T>> placeholder) '


def is_templated(path):
    try:
        with open(path, errors='replace') as f:
            return PLACEHOLDER.search(f.read()) is not None
    except OSError:
        return False
WORDS = re.compile(r'[A-Za-z_][-A-Za-z0-9_.]*|[^\sA-Za-z_]')


def first_error(out):
    """The first 'error:' line of a message, without file:line:col."""
    for line in out.splitlines():
        m = re.search(r'error:\s*(.*)', line)
        if m:
            return m.group(1).strip()
    lines = [l for l in out.splitlines() if l.strip()]
    return lines[0].strip() if lines else '(no message)'


def cause_of(msg, words=5):
    """Groups messages by their first words, names and numbers blanked out."""
    # Names vary; a short token, an element type or an opcode is the cause.
    msg = re.sub(r"(type |opcode |)'([^']*)'",
                 lambda m: m.group(0) if m.group(1) or len(m.group(2)) <= 3
                 else "'_'", msg)
    msg = re.sub(r'"[^"]*"', '"_"', msg)
    msg = re.sub(r'\b\d+\b', 'N', msg)
    return ' '.join(WORDS.findall(msg)[:words])


def refused_cause(msg):
    """'not supported: <op> ...' grouped by op."""
    m = re.search(r"not supported:(?:\s*\d+ instructions?:)?\s*(?:\S+:\d+:\d+\s+)?(?:opcode )?"
                  r"([-\w]+)(?: '[^']*' \(target ([^:)]+))?", msg)
    if m:
        return m.group(1) + (' ' + m.group(2) if m.group(2) else '')
    return cause_of(msg, 6)


def sh(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout)
        return p.returncode, p.stdout.decode('utf-8', 'replace')
    except subprocess.TimeoutExpired:
        return None, ''


def classify(path, args):
    """(kind, cause, message) of one module."""
    rc, out = sh([args.cxla, 'fmt', path], args.timeout)
    if rc is None:
        return 'timeout', 'fmt (parse+verify)', ''
    if rc != 0:
        msg = first_error(out)
        if rc < 0:
            return 'crash', 'fmt signal %d' % -rc, msg
        # Syntax errors name what the parser wanted; the rest are the
        # verifier's (shape inference and op rules), reported by fmt the same way.
        if re.search(r'expected|unexpected|unknown|undefined|unterminated|'
                     r'character|duplicate|cannot be left out|not a |not an ', msg):
            kind = 'parse error'
        else:
            kind = 'verify error'
        return kind, cause_of(msg), msg
    # cxla's own watchdog fires first and says what was running (a compile
    # phase, a loop that keeps iterating, a compiled kernel, or the reference
    # interpreter); the hard limit is a backstop.
    rc, out = sh([args.cxla, 'run', path, '--random-inputs',
                  '--backend=' + args.backend, '--check', '--threads=1',
                  '--timeout=%g' % args.timeout], args.timeout + 10)
    if rc is None:
        return 'timeout', 'run (watchdog did not fire)', ''
    if rc == 0:
        return 'pass', '', ''
    msg = first_error(out)
    m = re.match(r'timed out after \S+ s (.*?): (a slow compile|a slow kernel|a slow reference run|an endless loop)', msg) \
        or re.match(r'timed out after \S+ s (in a while loop)', msg)
    if m:
        what = m.group(2) if m.lastindex >= 2 else 'a while loop that keeps iterating'
        return 'timeout', what, msg
    if rc < 0:
        return 'crash', 'run signal %d' % -rc, msg
    if 'not supported' in msg or 'unsupported' in msg:
        return 'refused', refused_cause(msg), msg
    m = re.search(r'^\[\d+\] .*MISMATCH: max abs err.*$', out, re.M)
    if m:
        return 'mismatch', mismatch_cause(m.group(0)), m.group(0)
    return 'run error', cause_of(msg), msg


def mismatch_cause(line):
    """'f32, rel err < 1e-2' from a leaf line of --check."""
    m = re.match(r'\[\d+\] (\w+)\[.*?max rel err (\S+)', line)
    if not m:
        return 'differs'
    rel = float(m.group(2)) if re.match(r'[-+0-9.e]+$|inf|nan', m.group(2)) else float('nan')
    for bound in (1e-4, 1e-2, 1):
        if rel < bound:
            return '%s, max rel err < %g' % (m.group(1), bound)
    return '%s, max rel err >= 1 (or nan)' % m.group(1)


ORDER = ['pass', 'parse error', 'verify error', 'refused', 'multi-device',
         'run error', 'mismatch', 'timeout', 'crash']


def refine(kind, cause, msg, path):
    """Sorts messages that name their own kind, whichever step gave them (so a
    --log written before a rule changed is summarised by the current rules)."""
    if kind in ('parse error', 'verify error', 'run error'):
        cause = cause_of(msg)
    if kind in ('parse error', 'verify error', 'run error', 'refused'):
        if 'differs from interp' in msg:
            return 'mismatch', cause_of(msg, 4)
        m = re.search(r"run it with --replicas|groups have \d+ devices in this run|but this run has|"
                      r"^module \S+ is for \d+", msg)
        if m:
            op = re.match(r"([-\w]+) '", msg)
            return 'multi-device', (op.group(1) if op else 'module') + \
                ': needs several devices (--replicas)'
        if 'not supported' in msg or 'unsupported' in msg:
            return 'refused', ('(at parse) ' if kind != 'run error' and
                               kind != 'refused' else '') + refused_cause(msg)
    if kind == 'mismatch' and 'MISMATCH' in msg:
        return kind, mismatch_cause(msg)
    if kind == 'parse error' and is_templated(path):
        return kind, TEMPLATED + cause
    return kind, cause


def run(args):
    names = sorted(n for n in os.listdir(args.corpus) if n.endswith('.hlo'))
    if args.filter:
        names = [n for n in names if args.filter in n]
    if args.files:
        with open(args.files) as f:
            wanted = set(l.split('\t')[0].strip() for l in f)
        names = [n for n in names if n in wanted]
    # A fixed shuffle, so that a run cut short (or --limit) is a uniform
    # sample of the corpus rather than its first test files.
    random.Random(args.seed).shuffle(names)
    if args.limit:
        names = names[:args.limit]
    paths = [os.path.join(args.corpus, n) for n in names]
    results = {}
    log = open(args.log, 'w') if args.log else None
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futs = {pool.submit(classify, p, args): p for p in paths}
        for done, fut in enumerate(concurrent.futures.as_completed(futs), 1):
            p = futs[fut]
            results[p] = fut.result()
            if log:
                kind, cause, msg = results[p]
                log.write('%s\t%s\t%s\t%s\n' % (os.path.basename(p), kind, cause,
                                                msg.replace('\t', ' ')[:300]))
                log.flush()
            if done % 500 == 0:
                print('... %d/%d' % (done, len(paths)), file=sys.stderr)
    if log:
        log.close()
    report(results)


def summary(args):
    """The summary of a --log file, also of a run still going on."""
    results = {}
    with open(args.log) as f:
        for line in f:
            parts = line.rstrip('\n').split('\t')
            if len(parts) == 4:
                results[os.path.join(args.corpus, parts[0])] = tuple(parts[1:])
    report(results)


def report(results):
    results = {p: refine(*r, p) + (r[2],) for p, r in results.items()}
    n = len(results)
    kinds = collections.Counter(k for k, _, _ in results.values())
    pct = lambda c: '%5.1f%%' % (100.0 * c / n if n else 0)
    parsed = n - kinds['parse error'] - sum(
        1 for k, c, _ in results.values()
        if (k in ('timeout', 'crash') and c.startswith('fmt')) or c.startswith('(at parse)'))
    verified = parsed - kinds['verify error']
    print('\n%d modules' % n)
    print('%-28s %6s %7s' % ('', 'count', 'share'))
    print('%-28s %6d %7s' % ('parse', parsed, pct(parsed)))
    print('%-28s %6d %7s' % ('parse + verify', verified, pct(verified)))
    ran = kinds['pass'] + kinds['mismatch']
    print('%-28s %6d %7s' % ('ran on interp and cpu', ran, pct(ran)))
    print('%-28s %6d %7s' % ('  ... and agree', kinds['pass'], pct(kinds['pass'])))
    templated = sum(1 for k, c, _ in results.values() if c.startswith(TEMPLATED))
    print('(%d parse errors are C++ templates with placeholders the test fills in,'
          ' not HLO as written)' % templated)
    print()
    print('%-28s %6s %7s' % ('outcome', 'count', 'share'))
    for k in ORDER:
        if kinds[k]:
            print('%-28s %6d %7s' % (k, kinds[k], pct(kinds[k])))
    for k in ORDER[1:]:
        causes = collections.Counter(c for kk, c, _ in results.values() if kk == k)
        if not causes:
            continue
        print('\ntop causes: %s (%d)' % (k, kinds[k]))
        for cause, c in causes.most_common(15):
            print('  %6d  %s' % (c, cause))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='mode', required=True)
    e = sub.add_parser('extract')
    e.add_argument('xla', help='XLA checkout or bare git dir')
    e.add_argument('--rev', default='HEAD')
    e.add_argument('--out', default='build/xla-corpus')
    r = sub.add_parser('run')
    r.add_argument('--corpus', default='build/xla-corpus')
    r.add_argument('--cxla', default='build/cxla')
    r.add_argument('--backend', default='cpu')
    r.add_argument('--jobs', type=int, default=2)
    r.add_argument('--timeout', type=float, default=20)
    r.add_argument('--limit', type=int, default=0)
    r.add_argument('--filter', default='')
    r.add_argument('--log', default='')
    r.add_argument('--files', default='',
                   help='only the modules named first on the lines of this file (e.g. a --log)')
    r.add_argument('--seed', type=int, default=0, help='of the shuffled order')
    s = sub.add_parser('summary')
    s.add_argument('log', help='a --log file of run')
    s.add_argument('--corpus', default='build/xla-corpus')
    args = ap.parse_args()
    {'extract': extract, 'run': run, 'summary': summary}[args.mode](args)


if __name__ == '__main__':
    main()
