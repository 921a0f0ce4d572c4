import { describe, expect, it } from 'vitest';
import { getProfile } from '../../core/profiles/registry.js';
import { trajectory, type StepSpec } from '../__fixtures__/trajectories.js';
import { prepareRuleContext } from './context.js';
import { RegressionCode, regressionRule, scoreRegression } from './regression.js';

const coding = getProfile('coding');
const engineering = getProfile('engineering');
const conversation = getProfile('conversation');

function column(specs: readonly StepSpec[], profile = coding): ReturnType<typeof scoreRegression> {
  return scoreRegression(prepareRuleContext(trajectory(specs), profile));
}

function run(specs: readonly StepSpec[], profile = coding): (number | null)[] {
  return [...column(specs, profile).scores].map((s) => (Number.isNaN(s) ? null : s));
}

const write = (path: string, content: string): StepSpec => ['file_write', { path, content }];

describe('regression rule', () => {
  it('flags a write that restores content an earlier write replaced, and names that write', () => {
    const col = column([write('a.py', 'A'), write('a.py', 'B'), write('a.py', 'C'), write('a.py', 'A')]);
    expect([...col.scores]).toEqual([1, 1, 1, 0]);
    expect(col.refs[3]).toBe(1);
    expect(regressionRule.rationale(col.codes[3] ?? 0, col.refs[3] ?? -1, 0, (p) => p + 100)).toBe('restores a value that step 101 replaced: undoes that change');
  });

  it('does not call rewriting the current content, or content of another file, an undo', () => {
    expect(run([write('a.py', 'A'), write('a.py', 'A')])).toEqual([1, 1]);
    expect(column([write('a.py', 'A'), write('a.py', 'A')]).codes[1]).toBe(RegressionCode.SAME_VALUE);
    expect(run([write('a.py', 'A'), write('a.py', 'B'), write('b.py', 'A')])).toEqual([1, 1, 1]);
  });

  it('applies only to state-changing steps', () => {
    expect(run([['file_read', { path: 'a.py' }], ['search', { pattern: 'x' }], ['shell', { command: 'pytest' }], ['submit', {}]])).toEqual([null, null, null, null]);
    expect(run([write('a.py', 'A'), ['file_write', { path: 'a.py', content: 'B' }, 'denied', { error: { code: 'tool_failed', message: 'denied' } }], write('a.py', 'A')])).toEqual([1, null, 1]);
  });

  it('flags the exact reverse of an earlier edit', () => {
    expect(
      run([
        ['Edit', { file_path: 'a.py', old_string: 'x = 1', new_string: 'x = 2' }],
        ['Edit', { file_path: 'a.py', old_string: 'y', new_string: 'z' }],
        ['Edit', { file_path: 'a.py', old_string: 'x = 2', new_string: 'x = 1' }],
      ]),
    ).toEqual([1, 1, 0]);
  });

  it('treats content written back after an edit as a restore', () => {
    expect(run([write('a.py', 'A'), ['Edit', { file_path: 'a.py', old_string: 'A', new_string: 'B' }], write('a.py', 'A')])).toEqual([1, 1, 0]);
  });

  it('flags git checkout of a file the agent changed, through the git tool or a shell', () => {
    expect(run([write('a.py', 'A'), ['git', { subcommand: 'checkout', args: ['--', 'a.py'] }]])).toEqual([1, 0]);
    expect(run([write('a.py', 'A'), ['shell', { command: 'cd repo && git checkout -- ./a.py' }]])).toEqual([1, 0]);
    expect(run([write('a.py', 'A'), ['shell', { command: 'git restore a.py' }]])).toEqual([1, 0]);
  });

  it('does not flag a checkout that discards nothing of the agent’s', () => {
    expect(run([write('a.py', 'A'), ['git', { subcommand: 'checkout', args: ['main'] }]])).toEqual([1, 1]);
    expect(run([write('a.py', 'A'), ['git', { subcommand: 'checkout', args: ['-b', 'fix'] }]])).toEqual([1, 1]);
    expect(run([write('a.py', 'A'), ['git', { subcommand: 'commit', args: ['-am', 'fix'] }], ['git', { subcommand: 'checkout', args: ['--', 'a.py'] }]])).toEqual([1, null, 1]);
  });

  it('flags reset --hard, checkout . and stash while the agent has uncommitted writes', () => {
    const col = column([write('a.py', 'A'), write('b.py', 'B'), ['shell', { command: 'git reset --hard' }]]);
    expect([...col.scores]).toEqual([1, 1, 0]);
    expect(col.counts[2]).toBe(2);
    expect(run([write('a.py', 'A'), ['shell', { command: 'git checkout .' }]])).toEqual([1, 0]);
    expect(run([write('a.py', 'A'), ['shell', { command: 'git stash' }]])).toEqual([1, 0]);
    expect(run([write('a.py', 'A'), ['shell', { command: 'git stash list' }]])).toEqual([1, null]);
    expect(run([['shell', { command: 'git reset --hard' }]])).toEqual([1]);
  });

  it('treats rewriting content a checkout discarded as a restore', () => {
    expect(run([write('a.py', 'A'), ['git', { subcommand: 'checkout', args: ['--', 'a.py'] }], write('a.py', 'A')])).toEqual([1, 0, 0]);
  });

  it('restores the committed content, not the original, after a commit', () => {
    expect(
      run([
        write('a.py', 'A'),
        ['git', { subcommand: 'commit', args: ['-am', 'a'] }],
        write('a.py', 'B'),
        ['git', { subcommand: 'checkout', args: ['--', 'a.py'] }],
        write('a.py', 'B'),
        write('a.py', 'C'),
      ]),
    ).toEqual([1, null, 1, 0, 0, 1]);
  });

  it('tracks generic value slots: the same config key set back to an earlier value', () => {
    const edit = (key: string, value: string): StepSpec => ['edit_config', { service: 'checkout', key, value }];
    expect(run([edit('pool', '10'), edit('timeout', '5'), edit('pool', '20'), edit('pool', '10')], engineering)).toEqual([1, 1, 1, 0]);
    const update = (details: Record<string, unknown>): StepSpec => ['update_order', { order_id: 'O-1', operation: 'change_address', details }];
    expect(run([update({ city: 'Oslo' }), update({ city: 'Bergen' }), update({ city: 'Oslo' })], conversation)).toEqual([1, 1, 0]);
  });

  it('does not apply to writes it cannot name a slot for', () => {
    const household = getProfile('household');
    expect(run([['take', { object: 'apple' }], ['take', { object: 'knife' }], ['take', { object: 'apple' }]], household)).toEqual([null, null, null]);
  });

  it('stays exact on long trajectories', () => {
    const n = 20_000;
    const specs: StepSpec[] = Array.from({ length: n }, (_, i) => write('a.py', i % 2 === 0 ? 'A' : 'B'));
    const s = run(specs);
    expect(s.slice(0, 2)).toEqual([1, 1]);
    expect(s.slice(2).every((x) => x === 0)).toBe(true);
    const fresh: StepSpec[] = Array.from({ length: n }, (_, i) => write(`f${i % 100}.py`, `content ${i}`));
    expect(run(fresh).every((x) => x === 1)).toBe(true);
  });

  it('scores each trajectory on its own: nothing carries over from the one before', () => {
    // The rule reuses its tables across calls. Both trajectories intern `a.py` and their first contents to
    // the same ids, so anything left over (the file's value, a commit, an uncommitted write) would change
    // the second one's verdicts: a stale value would make its second write a restore, a stale commit or
    // dirty path would change what its checkout discards.
    const first: StepSpec[] = [write('a.py', 'A'), write('a.py', 'B'), ['git', { subcommand: 'commit', args: ['-am', 'b'] }], write('a.py', 'C')];
    const second: StepSpec[] = [write('a.py', 'B'), write('a.py', 'A'), ['git', { subcommand: 'checkout', args: ['--', 'a.py'] }], write('b.py', 'X')];
    const alone = column(second);
    const expected = { scores: [...alone.scores], codes: [...alone.codes], refs: [...alone.refs], counts: [...alone.counts] };
    expect(expected.scores).toEqual([1, 1, 0, 1]);
    column(first);
    const after = column(second);
    expect({ scores: [...after.scores], codes: [...after.codes], refs: [...after.refs], counts: [...after.counts] }).toEqual(expected);
  });
});
