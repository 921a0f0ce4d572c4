/**
 * Asynchronous RL's configuration (`rl.async`) and the loop's decisions about it: which iterations overlap the next
 * collection with their training, and the staleness rule an iteration's export applies.
 */
import { describe, expect, it } from 'vitest';
import { parsePipelineConfig } from './config.js';
import { overlapsNextCollection, stalenessRule } from './plan.js';

/** An SFT phase (1 iteration) then RL, with `extra` on top. */
const raw = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'async',
  env: 'gymflow/tool-use-v0',
  policy: { init: { tiny: {} } },
  phases: [
    { name: 'sft', iterations: 1, collect: { agent: 'expert' }, export: { success_only: true }, train: { command: 'sft' } },
    { name: 'rl', collect: { agent: 'policy', group_size: 2 }, train: { command: 'rl' } },
  ],
  max_iterations: 4,
  ...extra,
});

describe('rl.async', () => {
  it('fills its defaults: one version of staleness, stale trajectories dropped', () => {
    expect(parsePipelineConfig(raw({ rl: { async: {} } }), 'inline').rl).toEqual({ async: { max_staleness: 1, on_stale: 'drop' } });
    expect(parsePipelineConfig(raw(), 'inline').rl).toBeUndefined();
  });

  it('names the field of every wrong value', () => {
    const problems = (extra: Record<string, unknown>): string => {
      try {
        parsePipelineConfig(raw(extra), 'loop.yaml');
      } catch (err) {
        return (err as Error).message;
      }
      return 'no error';
    };
    expect(problems({ rl: { async: { max_staleness: 0 } } })).toContain('loop.yaml $.rl.async.max_staleness: at least 1 (0 is the synchronous loop: leave rl.async out)');
    expect(problems({ rl: { async: { on_stale: 'keep' } } })).toMatch(/loop\.yaml \$\.rl\.async\.on_stale: .*"drop"\|"fail"/);
    expect(problems({ rl: { async: { staleness: 2 } } })).toContain('loop.yaml $.rl.async: Unrecognized key: "staleness"');
    expect(problems({ rl: { sync: true } })).toContain('loop.yaml $.rl: Unrecognized key: "sync"');
    const sftOnly = { phases: [{ name: 'sft', collect: { agent: 'expert' }, train: { command: 'sft' } }] };
    expect(problems({ ...sftOnly, rl: { async: {} } })).toContain('loop.yaml $.rl.async: asynchronous mode overlaps the collection of an rl iteration with the training before it, and no phase trains with rl');
    expect(problems({ rl: { async: {} }, policy: { init: { tiny: {} }, serve: {} } })).toContain('loop.yaml $.rl.async: not with policy.serve');
  });

  it('overlaps the collection of every rl iteration but the first with the training before it', () => {
    const c = parsePipelineConfig(raw({ rl: { async: { max_staleness: 2, on_stale: 'fail' } } }), 'inline');
    // Iteration 1 (sft) precedes rl iteration 2, which collects for itself; 4 is the last.
    expect([0, 1, 2, 3, 4].map((i) => overlapsNextCollection(c, i))).toEqual([false, false, true, true, false]);
    expect(stalenessRule(c, 1, { iteration: 0 })).toBeUndefined(); // sft: no correction, no rule
    expect(stalenessRule(c, 3, { iteration: 2 })).toEqual({ policy_version: 2, max_staleness: 2, on_stale: 'fail', field: '$.rl.async.max_staleness' });
    const sync = parsePipelineConfig(raw(), 'inline');
    expect([1, 2, 3].map((i) => overlapsNextCollection(sync, i))).toEqual([false, false, false]);
    expect(stalenessRule(sync, 3, { iteration: 2 })).toBeUndefined();
  });
});
