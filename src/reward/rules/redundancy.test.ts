import { describe, expect, it } from 'vitest';
import { getProfile } from '../../core/profiles/registry.js';
import { trajectory, type StepSpec } from '../__fixtures__/trajectories.js';
import { prepareRuleContext } from './context.js';
import { RedundancyCode, redundancyRule, scoreRedundancy } from './redundancy.js';

const coding = getProfile('coding');
const generic = getProfile('generic');

function run(specs: readonly StepSpec[], profile = coding): (number | null)[] {
  const col = scoreRedundancy(prepareRuleContext(trajectory(specs), profile));
  return [...col.scores].map((s) => (Number.isNaN(s) ? null : s));
}

const invalid = { error: { code: 'tool_failed', message: 'no such file' } };

describe('redundancy rule', () => {
  it('flags a repeated read with nothing changed, whatever the key order', () => {
    expect(run([['file_read', { path: 'a.py', start_line: 1, end_line: 9 }], ['file_read', { end_line: 9, start_line: 1, path: 'a.py' }]])).toEqual([1, 0]);
  });

  it('ignores undefined members and a leading ./ in the target', () => {
    expect(run([['file_read', { path: 'a.py' }], ['file_read', { path: 'a.py', start_line: undefined }]])).toEqual([1, 0]);
    // The params differ literally, so it is another call (the rule compares params, not resolved files).
    expect(run([['file_read', { path: 'a.py' }], ['file_read', { path: './a.py' }]])).toEqual([1, 1]);
  });

  it('does not flag a re-read after an edit of the same file', () => {
    expect(run([['file_read', { path: 'a.py' }], ['file_write', { path: 'a.py', content: 'x' }], ['file_read', { path: 'a.py' }]])).toEqual([1, 1, 1]);
  });

  it('flags a re-read after an edit of another file (per-target invalidation)', () => {
    expect(run([['file_read', { path: 'a.py' }], ['file_write', { path: 'b.py', content: 'x' }], ['file_read', { path: 'a.py' }]])).toEqual([1, 1, 0]);
  });

  it('does not flag a different range of the same file', () => {
    expect(run([['file_read', { path: 'a.py', start_line: 1, end_line: 10 }], ['file_read', { path: 'a.py', start_line: 11, end_line: 20 }]])).toEqual([1, 1]);
  });

  it('lets an untargeted execute invalidate every read, but not a read-only one', () => {
    expect(run([['file_read', { path: 'a.py' }], ['shell', { command: 'python fix.py' }], ['file_read', { path: 'a.py' }]])).toEqual([1, 1, 1]);
    expect(run([['file_read', { path: 'a.py' }], ['shell', { command: 'cat a.py | head -3' }], ['file_read', { path: 'a.py' }]])).toEqual([1, 1, 0]);
    expect(run([['file_read', { path: 'a.py' }], ['git', { subcommand: 'status' }], ['file_read', { path: 'a.py' }]])).toEqual([1, 1, 0]);
  });

  it('invalidates searches on any write, even a targeted one', () => {
    expect(run([['search', { pattern: 'foo' }], ['file_write', { path: 'z.py', content: 'foo' }], ['search', { pattern: 'foo' }]])).toEqual([1, 1, 1]);
    expect(run([['search', { pattern: 'foo' }], ['file_read', { path: 'z.py' }], ['search', { pattern: 'foo' }]])).toEqual([1, 1, 0]);
  });

  it('flags re-running a command with nothing changed since, and a no-op rewrite', () => {
    expect(run([['shell', { command: 'pytest -q' }], ['file_read', { path: 'a.py' }], ['shell', { command: 'pytest -q' }]])).toEqual([1, 1, 0]);
    expect(run([['shell', { command: 'pytest -q' }], ['file_write', { path: 'a.py', content: 'y' }], ['shell', { command: 'pytest -q' }]])).toEqual([1, 1, 1]);
    expect(run([['file_write', { path: 'a.py', content: 'y' }], ['file_write', { path: 'b.py', content: 'z' }], ['file_write', { path: 'a.py', content: 'y' }]])).toEqual([1, 1, 0]);
    expect(run([['file_write', { path: 'a.py', content: 'y' }], ['file_write', { path: 'a.py', content: 'z' }], ['file_write', { path: 'a.py', content: 'y' }]])).toEqual([1, 1, 1]);
  });

  it('treats think steps as neutral unless a thought is repeated verbatim', () => {
    expect(run([['think', { thought: 'plan' }], ['think', { thought: 'other' }], ['think', { thought: 'plan' }]], generic)).toEqual([null, null, 0]);
  });

  it('repeated messages and submissions are redundant when nothing changed', () => {
    expect(run([['respond', { content: 'hi' }], ['respond', { content: 'hi' }]], generic)).toEqual([1, 0]);
  });

  it('judges invalid actions: the first is not a repeat, an identical retry is; they change nothing', () => {
    expect(run([['file_read', { path: 'x.py' }, 'no such file', invalid], ['file_read', { path: 'x.py' }, 'no such file', invalid]])).toEqual([1, 0]);
    expect(
      run([
        ['file_read', { path: 'a.py' }],
        ['file_write', { path: 'a.py', content: 'q' }, 'permission denied', invalid],
        ['file_read', { path: 'a.py' }],
      ]),
    ).toEqual([1, 1, 0]);
  });

  it('works with tools the profile does not know (converted logs)', () => {
    expect(
      run([
        ['Read', { file_path: 'a.py' }],
        ['Read', { file_path: 'a.py' }],
        ['Edit', { file_path: 'a.py', old_string: 'x', new_string: 'y' }],
        ['Read', { file_path: 'a.py' }],
        ['str_replace_editor', { command: 'view', path: 'a.py' }],
        ['str_replace_editor', { command: 'view', path: 'a.py' }],
      ]),
    ).toEqual([1, 0, 1, 1, 1, 0]);
  });

  it('explains its verdicts, naming the repeated step', () => {
    const t = trajectory([['file_read', { path: 'a.py' }], ['file_write', { path: 'a.py', content: 'x' }], ['file_read', { path: 'a.py' }], ['file_read', { path: 'a.py' }]]);
    const col = scoreRedundancy(prepareRuleContext(t, coding));
    expect([...col.codes]).toEqual([RedundancyCode.FIRST, RedundancyCode.FIRST, RedundancyCode.AFTER_CHANGE, RedundancyCode.REPEAT]);
    const label = (p: number): number => p;
    expect(redundancyRule.rationale(col.codes[3] ?? 0, col.refs[3] ?? -1, 0, label)).toBe('repeats step 2; nothing it depends on changed since, so it can return nothing new');
  });

  it('stays exact on long trajectories (linear bookkeeping, no rescans)', () => {
    const n = 20_000;
    const alternating: StepSpec[] = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? ['file_read', { path: 'a.py' }] : ['file_write', { path: 'a.py', content: `v${i}` }]));
    expect(run(alternating).every((s) => s === 1)).toBe(true);
    const same: StepSpec[] = Array.from({ length: n }, () => ['file_read', { path: 'a.py' }]);
    const s = run(same);
    expect(s[0]).toBe(1);
    expect(s.slice(1).every((x) => x === 0)).toBe(true);
    const many: StepSpec[] = Array.from({ length: n }, (_, i) => ['file_read', { path: `f${i % 5000}.py` }]);
    const m = run(many);
    expect(m.slice(0, 5000).every((x) => x === 1)).toBe(true);
    expect(m.slice(5000).every((x) => x === 0)).toBe(true);
  });
});
