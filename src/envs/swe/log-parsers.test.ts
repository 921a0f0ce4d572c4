import { describe, expect, it } from 'vitest';
import { parseDjango, parsePytest, parsePytestOptions, parsePytestV2, parseSympy, parseTestLog, REPO_LOG_PARSERS } from './log-parsers.js';

// Output of pytest 7.2.1 (the sandbox image's) on a file with a parametrised test, a failure whose message holds
// " - ", a fixture that raises (an error, not a failure), a skip and an xfail: `-rA`, then `-v`.
const PYTEST_RA = `tests/test_x.py ..FEsx                                                   [100%]
=========================== short test summary info ============================
PASSED tests/test_x.py::test_p[1-2]
PASSED tests/test_x.py::test_p[x y-z]
SKIPPED [1] tests/test_x.py:17: later
XFAIL tests/test_x.py::test_xf
ERROR tests/test_x.py::test_err - RuntimeError: setup broke
FAILED tests/test_x.py::test_fail - AssertionError: boom - with dash
========== 1 failed, 2 passed, 1 skipped, 1 xfailed, 1 error in 0.06s ==========
`;
const PYTEST_V = `tests/test_x.py::test_p[1-2] PASSED                                      [ 16%]
tests/test_x.py::test_fail FAILED                                        [ 50%]
tests/test_x.py::test_err ERROR                                          [ 66%]
tests/test_x.py::test_skip SKIPPED (later)                               [ 83%]
tests/test_x.py::test_xf XFAIL                                           [100%]
`;

describe('pytest log parser (SWE-bench rules)', () => {
  it('reads -rA summary lines: parametrised ids, FAILED and ERROR with their " - message", XFAIL; ignores the skip summary', () => {
    expect(Object.fromEntries(parsePytest(PYTEST_RA))).toEqual({
      'tests/test_x.py::test_p[1-2]': 'PASSED',
      // Cut at the first space, as the harness cuts it (the data set's ids are cut the same way).
      'tests/test_x.py::test_p[x': 'PASSED',
      'tests/test_x.py::test_xf': 'XFAIL',
      'tests/test_x.py::test_err': 'ERROR',
      'tests/test_x.py::test_fail': 'FAILED',
    });
  });

  it('reads -v lines (id first), SKIPPED included', () => {
    expect(Object.fromEntries(parsePytest(PYTEST_V))).toEqual({
      'tests/test_x.py::test_p[1-2]': 'PASSED',
      'tests/test_x.py::test_fail': 'FAILED',
      'tests/test_x.py::test_err': 'ERROR',
      'tests/test_x.py::test_skip': 'SKIPPED',
      'tests/test_x.py::test_xf': 'XFAIL',
    });
  });

  it('pytest-options keeps only the last part of an absolute path in an id; pytest-v2 drops colour codes', () => {
    expect([...parsePytestOptions('PASSED tests/test_io.py::test_read[/tmp/pytest-1/data/a.dcm]\n').keys()]).toEqual(['tests/test_io.py::test_read[/a.dcm]']);
    expect(Object.fromEntries(parsePytestV2('\x1b[32mPASSED\x1b[0m tests/test_a.py::test_ok\n\x1b[31mFAILED\x1b[0m tests/test_a.py::test_bad - assert 0\n'))).toEqual({
      'tests/test_a.py::test_ok': 'PASSED',
      'tests/test_a.py::test_bad': 'FAILED',
    });
  });
});

describe('django / unittest log parser', () => {
  // python3 -m unittest -v (Python 3.11) on a test case with an ok, a failure, an error and a skip.
  const LOG = `test_a (tests.test_w.WordsTest.test_a) ... ok
test_b (tests.test_w.WordsTest.test_b) ... FAIL
test_c (tests.test_w.WordsTest.test_c) ... ERROR
test_d (tests.test_w.WordsTest.test_d) ... skipped 'no'
test_e (tests.test_w.WordsTest.test_e) ... printed something
ok

======================================================================
ERROR: test_c (tests.test_w.WordsTest.test_c)
----------------------------------------------------------------------
`;
  it('reads " ... ok|FAIL|ERROR|skipped", an ok on a later line, and the failure headers', () => {
    expect(Object.fromEntries(parseDjango(LOG))).toEqual({
      'test_a (tests.test_w.WordsTest.test_a)': 'PASSED',
      'test_b (tests.test_w.WordsTest.test_b)': 'FAILED',
      'test_c (tests.test_w.WordsTest.test_c)': 'ERROR',
      'test_d (tests.test_w.WordsTest.test_d)': 'SKIPPED',
      'test_e (tests.test_w.WordsTest.test_e)': 'PASSED',
      test_c: 'ERROR',
    });
  });
});

describe('sympy log parser and the defaults', () => {
  it('reads "test_x ok|F|E" lines and failure headers', () => {
    const log = 'test_add ok\ntest_mul F\ntest_pow E\n________________ sympy/core/tests/test_basic.py:test_mul ________________\n';
    expect(Object.fromEntries(parseSympy(log))).toEqual({ test_add: 'PASSED', test_mul: 'FAILED', test_pow: 'ERROR', 'sympy/core/tests/test_basic.py:test_mul': 'FAILED' });
  });

  it("names SWE-bench's parser for its repositories", () => {
    expect(REPO_LOG_PARSERS['django/django']).toBe('django');
    expect(REPO_LOG_PARSERS['sympy/sympy']).toBe('sympy');
    expect(REPO_LOG_PARSERS['astropy/astropy']).toBe('pytest-v2');
    expect([...parseTestLog('pytest', 'PASSED a.py::t\n')]).toEqual([['a.py::t', 'PASSED']]);
  });
});
