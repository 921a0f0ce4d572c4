import { describe, expect, it } from 'vitest';
import { getProfile } from '../../core/profiles/registry.js';
import { trajectory, type StepSpec } from '../__fixtures__/trajectories.js';
import { prepareRuleContext } from './context.js';
import { InformationUseCode, informationUseRule, scoreInformationUse } from './information-use.js';

const coding = getProfile('coding');
const toolUse = getProfile('tool-use');

function column(specs: readonly StepSpec[], instruction = 'Fix the tests.', profile = coding): ReturnType<typeof scoreInformationUse> {
  return scoreInformationUse(prepareRuleContext(trajectory(specs, { instruction }), profile));
}

function run(specs: readonly StepSpec[], instruction?: string, profile = coding): (number | null)[] {
  return [...column(specs, instruction, profile).scores].map((s) => (Number.isNaN(s) ? null : s));
}

describe('information-use rule', () => {
  it('credits an action that uses a token an earlier observation revealed', () => {
    expect(run([['search', { pattern: 'timeout' }, 'src/net/client.py:12: retry_count = 3'], ['file_read', { path: 'src/net/client.py' }]])).toEqual([null, 1]);
  });

  it('matches paths however they are prefixed', () => {
    expect(run([['shell', { command: 'ls' }, 'see ./src/app.py.'], ['file_read', { path: '/src/app.py' }]])).toEqual([null, 1]);
  });

  it('credits numbers of two or more digits, not single digits', () => {
    expect(run([['calculator', { expression: '17 * 23' }, '391'], ['submit', { answer: '391' }]], 'What is 17 times 23?', toolUse)).toEqual([null, 1]);
    expect(run([['calculator', { expression: '2 + 2' }, '4'], ['submit', { answer: '4' }]], 'What is 2 + 2?', toolUse)).toEqual([null, null]);
  });

  it('scores 0 when observations revealed something but the action uses none of it', () => {
    const col = column([['file_read', { path: 'a.py' }, 'def handler_one(): pass'], ['file_read', { path: 'zzz/other_file.py' }]]);
    expect([...col.scores]).toEqual([Number.NaN, 0]);
    expect(col.codes[1]).toBe(InformationUseCode.IGNORES);
  });

  it('does not count tokens from the instruction as revealed', () => {
    expect(run([['file_read', { path: 'a.py' }, 'bug in parse_config at line 40'], ['search', { pattern: 'parse_config', path: 'lib/utils.py' }]], 'The bug is in parse_config.')).toEqual([null, 0]);
  });

  it('does not apply to an action that acts on the task as stated, and scores a repeat of one 0', () => {
    // The expert of tool-use: the second lookup names the instruction's company and the attribute its
    // first lookup asked for. It needs no observation, and it is the optimal next step.
    const question = 'How many years passed between the founding of Quillon Motors and the founding of Saltgrave Mineral Company?';
    const col = column(
      [
        ['lookup', { entity: 'Quillon Motors', attribute: 'founded' }, 'Quillon Motors (company) — founded: 1968'],
        ['lookup', { entity: 'Saltgrave Mineral Company', attribute: 'founded' }, 'Saltgrave Mineral Company (company) — founded: 1811'],
        // a token of its own (`employees`) and none of the revealed ones: 0
        ['lookup', { entity: 'Saltgrave Mineral Company', attribute: 'employees' }, 'Saltgrave Mineral Company (company) — employees: 310'],
        // the same words again, in another order: nothing of the task is new to the actions, so 0
        ['lookup', { attribute: 'founded', entity: 'Quillon Motors' }, 'Quillon Motors (company) — founded: 1968'],
        ['calculator', { expression: 'abs(1968 - 1811)' }, 'Result: 157'],
        ['submit', { answer: '157' }, 'Correct.'],
      ],
      question,
      toolUse,
    );
    expect([...col.scores]).toEqual([Number.NaN, Number.NaN, 0, 0, 1, 1]);
    expect([...col.codes]).toEqual([
      InformationUseCode.NOTHING_REVEALED,
      InformationUseCode.ACTS_ON_TASK,
      InformationUseCode.IGNORES,
      InformationUseCode.IGNORES,
      InformationUseCode.USES,
      InformationUseCode.USES,
    ]);
    expect(informationUseRule.rationale(col.codes[1] ?? 0, col.refs[1] ?? -1, col.counts[1] ?? 0, (p) => p)).toBe(
      'acts on words of the instruction that no earlier action used, and brings in nothing new (not applicable)',
    );
  });

  it('judges a token repeated within one action as new', () => {
    // `fresh_name` is first seen in step 1's action, twice: it is that action's own, so the step is judged.
    expect(run([['search', { pattern: 'x' }, 'found alpha_one'], ['file_write', { path: 'fresh_name', content: 'fresh_name' }]])).toEqual([null, 0]);
  });

  it('credits a revealed token next to the instruction’s', () => {
    expect(run([['lookup', { name: 'customer_alice' }, 'account_7731'], ['lookup', { name: 'customer_alice', account: 'account_7731' }]], 'Find customer_alice.', toolUse)).toEqual([null, 1]);
  });

  it('does not count tokens the agent introduced, even when an observation echoes them', () => {
    expect(run([['file_write', { path: 'a.py', content: 'magic_value = 42' }, 'wrote magic_value = 42 to a.py'], ['search', { pattern: 'magic_value' }, 'a.py:1: magic_value = 42'], ['file_read', { path: 'a.py' }]])).toEqual([
      null,
      0,
      0,
    ]);
  });

  it('does not apply before anything was revealed, or to actions without content', () => {
    expect(run([['file_read', { path: 'a.py' }, ''], ['file_read', { path: 'b.py' }, 'found_token here'], ['submit', {}]])).toEqual([null, null, null]);
  });

  it('counts what an invalid action’s error message revealed', () => {
    expect(
      run([
        ['file_read', { path: 'a.py' }, 'error: no such file; did you mean src/a_module.py?', { error: { code: 'tool_failed', message: 'no such file' } }],
        ['file_read', { path: 'src/a_module.py' }],
      ]),
    ).toEqual([null, 1]);
  });

  it('reads tokens from nested params and numbers', () => {
    expect(run([['search', { pattern: 'x' }, 'order 8842 for user u_77'], ['git', { subcommand: 'log', args: ['--grep', 'u_77'] }], ['file_read', { path: 'a.py', start_line: 8842 }]])).toEqual([null, 1, 1]);
  });

  it('explains its verdicts', () => {
    const col = column([['search', { pattern: 'x' }, 'alpha_one beta_two'], ['search', { pattern: 'alpha_one beta_two' }]]);
    expect(informationUseRule.rationale(col.codes[1] ?? 0, col.refs[1] ?? -1, col.counts[1] ?? 0, (p) => p)).toBe('uses 2 tokens revealed by earlier observations (first from step 0)');
  });

  it('stays exact on long trajectories', () => {
    const n = 20_000;
    const specs: StepSpec[] = Array.from({ length: n }, (_, i) => ['search', { pattern: i === 0 ? 'start' : `token_${i - 1}` }, `next is token_${i}`]);
    const s = run(specs);
    expect(s[0]).toBeNull();
    expect(s.slice(1).every((x) => x === 1)).toBe(true);
    const blind: StepSpec[] = Array.from({ length: n }, (_, i) => ['search', { pattern: `query_${i}` }, `result_${i}`]);
    const b = run(blind);
    expect(b.slice(1).every((x) => x === 0)).toBe(true);
  });

  it('keeps the first-seen step of a token when a repeated observation is skipped', () => {
    // Step 1 repeats step 0's observation (scanned once); its tokens stay revealed at step 0.
    const obs = 'def handler_one(): return retry_count';
    const col = column([
      ['file_read', { path: 'a.py' }, obs],
      ['file_read', { path: 'a.py' }, obs],
      ['search', { pattern: 'retry_count' }, 'nothing new'],
      ['file_read', { path: 'zzz/other_file.py' }],
    ]);
    expect([...col.scores]).toEqual([Number.NaN, 0, 1, 0]);
    expect(col.refs[2]).toBe(0);
    // The steps that use nothing name the first observation that revealed something.
    expect([col.refs[1], col.refs[3]]).toEqual([0, 0]);
    expect(informationUseRule.rationale(col.codes[3] ?? 0, col.refs[3] ?? -1, col.counts[3] ?? 0, (p) => p)).toBe('uses none of the tokens earlier observations revealed (the first at step 0)');
  });

  it('credits a token revealed long before the action that first uses it, and only then', () => {
    const col = column([
      // reveals `config_loader` (used at step 3) and `unused_token` (never used)
      ['search', { pattern: 'load' }, 'config_loader unused_token'],
      // introduces `own_name`, which its own observation and the next one echo: never revealed
      ['file_write', { path: 'b.py', content: 'own_name = 1' }, 'wrote own_name'],
      ['shell', { command: 'grep own_name' }, 'b.py:1: own_name = 1'],
      ['file_read', { path: 'config_loader' }, 'last observation'],
    ]);
    expect([...col.scores]).toEqual([Number.NaN, 0, 0, 1]);
    expect([...col.codes]).toEqual([InformationUseCode.NOTHING_REVEALED, InformationUseCode.IGNORES, InformationUseCode.IGNORES, InformationUseCode.USES]);
    expect([col.refs[3], col.counts[3]]).toEqual([0, 1]);
  });

  it('needs an observation that revealed something, not only one that repeated known tokens', () => {
    // Step 0's observation only repeats the instruction's and its own action's tokens; step 1's reveals
    // `fresh_token`, so step 2 is judged and step 1 is not.
    const col = column(
      [
        ['file_read', { path: 'main.py' }, 'main.py: parse_config'],
        ['file_read', { path: 'lib.py' }, 'fresh_token'],
        ['file_read', { path: 'other.py' }],
      ],
      'The bug is in parse_config.',
    );
    expect([...col.codes]).toEqual([InformationUseCode.NOTHING_REVEALED, InformationUseCode.NOTHING_REVEALED, InformationUseCode.IGNORES]);
    expect(col.refs[2]).toBe(1);
  });
});
