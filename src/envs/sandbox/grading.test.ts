import { describe, expect, it } from 'vitest';
import { gradeTests, parsePytestPassed } from './grading.js';

const report = `
..Fs
=========================== short test summary info ============================
PASSED tests/test_a.py::test_one
PASSED tests/test_a.py::test_two
FAILED tests/test_b.py::test_three - AssertionError: assert 1 == 2
SKIPPED [1] tests/test_b.py:9: not today
ERROR tests/test_c.py::test_four - NameError
1 failed, 2 passed, 1 skipped, 1 error in 0.05s
`;

describe('pytest grading', () => {
  it('reads PASSED lines only', () => {
    expect([...parsePytestPassed(report)].sort()).toEqual(['tests/test_a.py::test_one', 'tests/test_a.py::test_two']);
  });

  it('succeeds only when every FAIL_TO_PASS passes and no PASS_TO_PASS broke; partial score multiplies fractions', () => {
    const passed = parsePytestPassed(report);
    expect(gradeTests(passed, ['tests/test_a.py::test_one'], ['tests/test_a.py::test_two'])).toMatchObject({ success: true, score: 1 });
    const half = gradeTests(passed, ['tests/test_a.py::test_one', 'tests/test_b.py::test_three'], ['tests/test_a.py::test_two']);
    expect(half).toMatchObject({ success: false, score: 0.5 });
    // A skipped or missing FAIL_TO_PASS test is a failure.
    expect(gradeTests(passed, ['tests/test_b.py::test_skipped'], []).success).toBe(false);
    expect(gradeTests(passed, ['tests/test_a.py::test_one'], ['tests/test_c.py::test_four']).score).toBe(0);
  });
});
