/** The outcome of running a task's tests (SWE-bench's rule). */
export interface TestOutcome {
  /** Every FAIL_TO_PASS test passes and every PASS_TO_PASS test still passes. */
  success: boolean;
  /**
   * Partial credit in [0, 1]: (FAIL_TO_PASS passing / FAIL_TO_PASS) × (PASS_TO_PASS passing / PASS_TO_PASS),
   * each factor 1 when its list is empty. 1 exactly when `success`.
   */
  score: number;
  failToPass: { passed: string[]; failed: string[] };
  passToPass: { passed: string[]; failed: string[] };
}

/**
 * The test ids pytest reports as passed in its `-rA` summary (`PASSED tests/test_a.py::test_x`). Anything
 * else — FAILED, ERROR, SKIPPED, XFAIL, XPASS, or a test missing from the report — is not a pass, so a
 * skipped FAIL_TO_PASS test counts as failed (SWE-bench).
 */
export function parsePytestPassed(output: string): Set<string> {
  const passed = new Set<string>();
  for (const line of output.split('\n')) {
    const m = /^PASSED (\S+)/.exec(line.trim());
    if (m) passed.add(m[1] as string);
  }
  return passed;
}

/** Grades a test run against a task's FAIL_TO_PASS and PASS_TO_PASS lists. */
export function gradeTests(passed: ReadonlySet<string>, failToPass: readonly string[], passToPass: readonly string[]): TestOutcome {
  const split = (ids: readonly string[]): { passed: string[]; failed: string[] } => ({
    passed: ids.filter((t) => passed.has(t)),
    failed: ids.filter((t) => !passed.has(t)),
  });
  const f2p = split(failToPass);
  const p2p = split(passToPass);
  const frac = (s: { passed: string[]; failed: string[] }): number => {
    const n = s.passed.length + s.failed.length;
    return n === 0 ? 1 : s.passed.length / n;
  };
  const success = f2p.failed.length === 0 && p2p.failed.length === 0;
  return { success, score: success ? 1 : frac(f2p) * frac(p2p), failToPass: f2p, passToPass: p2p };
}
