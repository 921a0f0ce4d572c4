import { describe, expect, it } from 'vitest';
import { makeRunReport } from './benchmark.js';
import { gradeScore, gradeStatusMap, testCommand, testDirectives, type GradedInstance } from './harness.js';
import type { SweInstance } from './instances.js';
import type { StatusMap, TestStatus } from './log-parsers.js';

const map = (o: Record<string, TestStatus>): StatusMap => new Map(Object.entries(o));

describe('gradeStatusMap (SWE-bench: get_eval_tests_report, FULL resolution)', () => {
  it('resolves when every FAIL_TO_PASS test passes (PASSED or XFAIL) and every PASS_TO_PASS test is kept (PASSED, XFAIL, SKIPPED)', () => {
    const g = gradeStatusMap(map({ a: 'PASSED', b: 'XFAIL', c: 'PASSED', d: 'SKIPPED' }), ['a', 'b'], ['c', 'd']);
    expect(g.resolved).toBe(true);
    expect(g.tests.FAIL_TO_PASS).toEqual({ success: ['a', 'b'], failure: [] });
    expect(gradeScore(g.tests)).toBe(1);
  });

  it('fails a FAIL_TO_PASS test that errored, failed, was skipped or is missing; a PASS_TO_PASS test that failed, errored or is missing', () => {
    const g = gradeStatusMap(map({ a: 'ERROR', b: 'SKIPPED', c: 'FAILED', p: 'PASSED', q: 'ERROR' }), ['a', 'b', 'c', 'gone', 'ok'], ['p', 'q', 'lost']);
    expect(g.resolved).toBe(false);
    expect(g.tests.FAIL_TO_PASS.failure).toEqual(['a', 'b', 'c', 'gone', 'ok']);
    expect(g.tests.PASS_TO_PASS).toEqual({ success: ['p'], failure: ['q', 'lost'] });
    expect(gradeScore(gradeStatusMap(map({ a: 'PASSED', p: 'PASSED' }), ['a', 'b'], ['p', 'q']).tests)).toBe(0.25);
  });
});

describe('test directives', () => {
  const testPatch = ['diff --git a/tests/test_a.py b/tests/test_a.py', 'diff --git a/tests/data/x.json b/tests/data/x.json', 'diff --git a/tests/auth/tests.py b/tests/auth/tests.py', 'diff --git a/docs/a.py b/docs/a.py', ''].join('\n');
  it('are the test patch\'s files less data files; django module names of test files', () => {
    expect(testDirectives({ testPatch }, { test_directives: 'files' })).toEqual(['tests/test_a.py', 'tests/auth/tests.py', 'docs/a.py']);
    expect(testDirectives({ testPatch }, { test_directives: 'django' })).toEqual(['test_a', 'auth.tests']);
    expect(testDirectives({ testPatch }, { test_directives: 'none' })).toEqual([]);
    expect(testCommand({ testPatch: 'diff --git a/t x.py b/t x.py\n' }, { test_cmd: 'pytest -rA', test_directives: 'files' })).toBe("pytest -rA 't x.py'");
  });
});

describe('makeRunReport (SWE-bench schema 2)', () => {
  it('sorts the outcomes into ids and counts; an instance without a prediction is incomplete', () => {
    const inst = (id: string): SweInstance => ({ instanceId: id }) as SweInstance;
    const g = (id: string, outcome: GradedInstance['outcome']): GradedInstance => ({ instanceId: id, outcome, report: { patch_is_None: false, patch_exists: true, patch_successfully_applied: true, resolved: outcome === 'resolved' }, log: '', imageMs: 0, gradeMs: 0, imageBuilt: false });
    const preds = ['r', 'u', 'e', 'x'].map((id) => ({ instance_id: id, model_name_or_path: 'm', model_patch: 'd' }));
    const report = makeRunReport([inst('r'), inst('u'), inst('e'), inst('x'), inst('n')], preds, [g('r', 'resolved'), g('u', 'unresolved'), g('e', 'error'), g('x', 'empty_patch')]);
    expect(report).toEqual({
      total_instances: 5,
      submitted_instances: 4,
      completed_instances: 2,
      resolved_instances: 1,
      unresolved_instances: 1,
      empty_patch_instances: 1,
      error_instances: 1,
      completed_ids: ['r', 'u'],
      incomplete_ids: ['n'],
      empty_patch_ids: ['x'],
      submitted_ids: ['e', 'r', 'u', 'x'],
      resolved_ids: ['r'],
      unresolved_ids: ['u'],
      error_ids: ['e'],
      schema_version: 2,
    });
  });
});
