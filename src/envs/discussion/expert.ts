import type { Action, TaskInfo } from '../../core/types.js';
import { normalizeText } from '../conversation-kit/text.js';
import { ExpertFailed, ScriptedExpert, type Script } from '../shared/scripted-expert.js';
import { type Fact, factText, ruleChoice } from './facts.js';
import { type DiscussionTask, getDiscussionTask } from './tasks.js';
import { DECIDE_TOOL } from './tools.js';

/**
 * The expert of `gymflow/discussion-v0`: a facilitator who pools the committee's knowledge before deciding. It
 * knows the task's facts (from the task bank, as the household planner knows the house) only to recognise a
 * fact when a member tells one; what it decides on is what was said:
 *
 * 1. it asks the group about every topic (open members tell their facts; others keep quiet or argue);
 * 2. it addresses each member whose facts it has not heard, about every topic, and asks again — up to twice
 *    more — a member who held back;
 * 3. it posts a summary quoting every fact it heard;
 * 4. it applies the decision rule to the briefing and the facts it heard (hearsay and opinions are not facts)
 *    and decides, quoting the members' facts in the rationale.
 *
 * A member who tells nothing after three direct questions, or facts that decide nothing, make it give up:
 * it then names no option (`decide` with choice `none`, refused as `unknown_option`) until the step limit.
 */

const MAX_DIRECT = 3;

function* solve(task: DiscussionTask): Script {
  const topics = task.scenario.topics.map((t) => t.name);
  const about = `the ${topics.slice(0, -1).join(', the ')} and the ${topics[topics.length - 1] ?? ''}`;
  const heard = new Set<string>();
  const listen = (observation: string, from: string): void => {
    for (const line of observation.split('\n')) {
      if (!line.startsWith(`${from}: `) && from !== '*') continue;
      const speaker = line.slice(0, line.indexOf(':'));
      const p = task.participants.find((x) => x.name === speaker);
      if (!p) continue;
      const said = normalizeText(line);
      for (const f of p.facts) if (said.includes(normalizeText(f.cue))) heard.add(f.id);
    }
  };
  listen(yield { tool: 'ask_group', params: { question: `What do you all know about ${about} of each ${task.scenario.noun}?` } }, '*');
  for (const p of task.participants) {
    for (let ask = 0; ask < MAX_DIRECT && p.facts.some((f) => !heard.has(f.id)); ask++) {
      const message = ask === 0 ? `${p.name}, what do you know about ${about} of the ${task.scenario.noun}s?` : `${p.name}, it really matters: please tell me what you know about ${about}.`;
      listen(yield { tool: 'address', params: { participant: p.name, message } }, p.name);
    }
    if (p.facts.some((f) => !heard.has(f.id))) throw new ExpertFailed(`discussion expert: ${p.name} told nothing after ${MAX_DIRECT} questions`);
  }
  const told: Fact[] = task.participants.flatMap((p) => p.facts.filter((f) => heard.has(f.id)));
  const quote = (fs: readonly Fact[]): string => fs.map((f) => `${factText(f)}`).join('; ');
  yield { tool: 'summarise', params: { summary: `Besides the briefing, we heard: ${quote(told)}.` } };
  const choice = ruleChoice([...task.shared, ...told], task.options);
  if (choice === undefined) throw new ExpertFailed('discussion expert: the facts heard decide nothing');
  const action: Action = {
    tool: DECIDE_TOOL,
    params: { choice, rationale: `Pooling the briefing with what the members told — ${quote(told)} — ${choice} has the highest total under the rule; opinions and hearsay were not counted.` },
  };
  yield action;
}

/** The expert agent for `gymflow/discussion-v0` (see the module comment). */
export class DiscussionExpert extends ScriptedExpert {
  constructor() {
    super({ name: 'discussion-expert' }, { tool: DECIDE_TOOL, params: { choice: 'none', rationale: 'I could not pool the facts.' } });
  }

  /** The plan for the task. */
  protected start(task: TaskInfo): Script {
    return solve(getDiscussionTask(task.id));
  }
}
