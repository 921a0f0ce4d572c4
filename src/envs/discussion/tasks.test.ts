import { describe, expect, it } from 'vitest';
import { TaskError } from '../../core/errors.js';
import { factText, ruleChoice } from './facts.js';
import { PARTICIPANT_NAMES, SCENARIOS } from './scenarios.js';
import { DISCUSSION_TASK_COUNTS, discussionTaskInfo, getDiscussionTask, listDiscussionTasks } from './tasks.js';

describe('discussion tasks', () => {
  it('has 240 training and 60 held-out tasks with 2-4 participants of every trait', () => {
    for (const split of ['train', 'heldout'] as const) {
      const tasks = listDiscussionTasks(split);
      expect(tasks).toHaveLength(DISCUSSION_TASK_COUNTS[split]);
      expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
      for (const k of [2, 3, 4]) expect(tasks.filter((t) => t.participants.length === k).length, `${split} k=${k}`).toBeGreaterThan(tasks.length / 6);
      const share = (trait: string): number => tasks.filter((t) => t.participants.some((p) => p.trait === trait)).length / tasks.length;
      expect(share('reticent')).toBeGreaterThan(0.3);
      expect(share('opinionated')).toBeGreaterThan(0.3);
      expect(tasks.every((t) => t.participants[0]?.trait === 'open' || t.participants.some((p) => p.trait === 'open'))).toBe(true);
    }
  });

  it('is a hidden profile: the briefing favours a wrong option, all the facts the right one, and every participant is needed', () => {
    for (const t of listDiscussionTasks()) {
      const all = [...t.shared, ...t.participants.flatMap((p) => p.facts)];
      expect(ruleChoice(t.shared, t.options), t.id).toBe(t.favourite);
      expect(t.favourite).not.toBe(t.correct);
      expect(ruleChoice(all, t.options), t.id).toBe(t.correct);
      // Without any one participant's facts, the rule decides nothing (the right option ties the favourite).
      for (const p of t.participants) expect(ruleChoice(all.filter((f) => !p.facts.includes(f)), t.options), `${t.id} without ${p.name}`).toBeUndefined();
      // Each participant holds one decisive fact: for the right option or against the favourite.
      expect(t.decisive).toHaveLength(t.participants.length);
      for (const [i, p] of t.participants.entries()) expect(p.facts[0]).toBe(t.decisive[i]);
      for (const f of t.decisive) expect(f.option === t.correct ? f.sign : -f.sign, t.id).toBe(1);
      // Hearsay, were it counted, would undo the decision; only an opinionated participant passes it on.
      for (const p of t.participants.filter((x) => x.hearsay)) {
        expect(p.trait).toBe('opinionated');
        expect(ruleChoice([...all, p.hearsay!], t.options)).toBeUndefined();
      }
      const cues = [...all, ...t.participants.flatMap((p) => (p.hearsay ? [p.hearsay] : []))].map((f) => f.cue);
      expect(new Set(cues).size, t.id).toBe(cues.length);
    }
  });

  it('holds out scenarios and participants no training task has, so no hidden instruction repeats', () => {
    const train = listDiscussionTasks('train');
    const heldout = listDiscussionTasks('heldout');
    expect(SCENARIOS.train.filter((s) => SCENARIOS.heldout.some((h) => h.id === s.id || h.options.some((o) => s.options.includes(o))))).toEqual([]);
    expect(PARTICIPANT_NAMES.train.filter((n) => PARTICIPANT_NAMES.heldout.includes(n))).toEqual([]);
    const hidden = new Set(train.flatMap((t) => t.participants.map((p) => p.hidden)));
    const trainCues = new Set(train.flatMap((t) => [...t.shared, ...t.decisive].map((f) => f.cue)));
    for (const t of heldout) {
      for (const p of t.participants) expect(hidden.has(p.hidden)).toBe(false);
      for (const f of t.decisive) expect(trainCues.has(f.cue)).toBe(false);
    }
    expect(new Set(heldout.map((t) => t.participants.map((p) => p.hidden).join('\n'))).size).toBe(heldout.length);
  });

  it('tells the agent the briefing, the members and the rule, never who knows what or the answer', () => {
    for (const t of listDiscussionTasks('heldout')) {
      const info = discussionTaskInfo(t);
      expect(info).toMatchObject({ id: t.id, domain: 'discussion', split: 'heldout', metadata: { scenario: t.scenario.id, options: t.options } });
      for (const f of t.shared) expect(info.instruction).toContain(`- ${factText(f)}.`);
      expect(info.instruction).toMatch(/The decision rule: every fact/);
      const text = JSON.stringify(info);
      for (const p of t.participants) for (const f of p.facts) expect(text).not.toContain(f.cue);
      expect(text).not.toMatch(/reticent|opinionated|correct/);
    }
  });

  it('regenerates a task from its id alone and refuses unknown ids', () => {
    const t = getDiscussionTask('discussion-heldout-00007');
    expect(t).toBe(getDiscussionTask('discussion-heldout-00007'));
    expect(t.scenario.id).toBe(SCENARIOS.heldout[7 % 2]?.id);
    expect(() => getDiscussionTask('discussion-test-00001')).toThrow(TaskError);
    expect(() => getDiscussionTask('discussion-heldout-00060')).toThrow(/out of range: heldout has 60 tasks/);
  });
});
