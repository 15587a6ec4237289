"""run_tests.py FILE.py... — runs the unittest tests in the given files, one line per test
("ok   name", "FAIL name", "skip name: reason"), and ends with "N passed, N failed" like every
part of tests/run_all.sh. Exit status 1 if a test failed or errored."""
import importlib.util
import os
import sys
import time
import unittest


class Result(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.passed = 0
        self.start = 0.0

    def startTest(self, test):
        super().startTest(test)
        self.start = time.perf_counter()

    def _name(self, test):
        return test.id().split(".", 1)[-1]

    def addSuccess(self, test):
        self.passed += 1
        print("ok   %s (%.2fs)" % (self._name(test), time.perf_counter() - self.start), flush=True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        print("FAIL %s\n%s" % (self._name(test), self._exc_info_to_string(err, test)), flush=True)

    def addError(self, test, err):
        super().addError(test, err)
        print("FAIL %s (error)\n%s" % (self._name(test), self._exc_info_to_string(err, test)), flush=True)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            print("FAIL %s %s\n%s" % (self._name(test), subtest._subDescription(), self._exc_info_to_string(err, test)),
                  flush=True)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        print("skip %s: %s" % (self._name(test), reason), flush=True)


def main(paths):
    suite = unittest.TestSuite()
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        suite.addTests(unittest.defaultTestLoader.loadTestsFromModule(module))
    result = Result()
    suite.run(result)
    failed = len(result.failures) + len(result.errors)
    if result.skipped:
        print("%d skipped" % len(result.skipped))
    print("%d passed, %d failed" % (result.passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
