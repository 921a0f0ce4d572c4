import { describe, expect, it } from 'vitest';
import { factText } from './facts.js';
import { GROUP_PREFIX, ScriptedParticipant, SUMMARY_PREFIX, type Trait } from './participant.js';
import { type DiscussionTask, listDiscussionTasks, type TaskParticipant } from './tasks.js';

const tasks = listDiscussionTasks('train');

/** A task with a participant of `trait`, that participant, and a scripted participant started for it. */
function withTrait(trait: Trait, seed = 1): { task: DiscussionTask; p: TaskParticipant; sim: ScriptedParticipant } {
  const task = tasks.find((t) => t.participants.some((p) => p.trait === trait)) as DiscussionTask;
  const p = task.participants.find((x) => x.trait === trait) as TaskParticipant;
  const sim = new ScriptedParticipant();
  sim.start({ instruction: p.hidden, opening: p.opening, script: p.script, seed });
  return { task, p, sim };
}

const topic = (p: TaskParticipant): string => p.facts[0]?.topic as string;
const other = (task: DiscussionTask, p: TaskParticipant): string => task.scenario.topics.find((t) => t.name !== topic(p))?.name as string;

describe('ScriptedParticipant', () => {
  it('open: tells its fact when its topic is asked, in the group or directly, and not for another topic', () => {
    const { task, p, sim } = withTrait('open');
    const fact = p.facts[0]!;
    expect(sim.answer(`${GROUP_PREFIX}What about the ${other(task, p)}?`)).not.toContain(fact.cue);
    expect(sim.answer(`${GROUP_PREFIX}What do you know about the ${topic(p)}?`)).toContain(factText(fact));
    expect(sim.toldFacts).toContain(fact.id);
    expect(sim.answer('Anything at all?')).toMatch(/Which aspect|What should we look at/);
  });

  it('reticent: quiet in the group, holds back at the first direct question, tells at the second', () => {
    const { p, sim } = withTrait('reticent');
    const fact = p.facts[0]!;
    expect(sim.answer(`${GROUP_PREFIX}What do you know about the ${topic(p)}?`)).not.toContain(fact.cue);
    expect(sim.answer(`What do you know about the ${topic(p)}?`)).not.toContain(fact.cue);
    expect(sim.answer(`Please, what do you know about the ${topic(p)}?`)).toContain(factText(fact));
  });

  it('opinionated: argues for the favourite in the group, passes on hearsay marked as such, tells its fact directly', () => {
    const { task, p, sim } = withTrait('opinionated');
    const fact = p.facts[0]!;
    const hearsay = p.hearsay!;
    const group = sim.answer(`${GROUP_PREFIX}What do you all know about the ${task.scenario.topics.map((t) => t.name).join(', ')}?`);
    expect(group).toContain(task.favourite);
    expect(group).not.toContain(fact.cue);
    expect(group).toContain(`I heard that ${factText(hearsay)}, but I haven't seen it myself.`);
    expect(sim.answer(`What do you know about the ${topic(p)}?`)).toContain(factText(fact));
  });

  it('checks a summary against what it told, and is deterministic for a seed', () => {
    const { p, sim } = withTrait('open', 4);
    const fact = p.facts[0]!;
    const q = `${GROUP_PREFIX}What do you know about the ${topic(p)}?`;
    const said = sim.answer(q);
    expect(sim.answer(`${SUMMARY_PREFIX}Nothing new.`)).toContain(factText(fact));
    expect(sim.answer(`${SUMMARY_PREFIX}We heard that ${factText(fact)}.`)).toMatch(/^(Agreed\.|That matches what I heard\.)/);
    const again = new ScriptedParticipant();
    again.start({ instruction: p.hidden, opening: p.opening, script: p.script, seed: 4 });
    expect(again.answer(q)).toBe(said);
  });
});
