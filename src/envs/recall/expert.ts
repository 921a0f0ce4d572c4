import type { Agent, AgentContext, AgentDecision } from '../../core/agent.js';
import { ConfigError } from '../../core/errors.js';
import { mixSeed, Rng } from '../../core/rng.js';
import type { AgentInfo } from '../../core/wrappers/recorder.js';
import { getRecallTask, recallAnswer } from './tasks.js';

/**
 * The scripted solver of `gymflow/recall-v0`: it regenerates the task from its id (the generator the environment
 * uses) and submits the asked name's number. A task id the bank does not know is a `TaskError`.
 */
export class RecallExpert implements Agent {
  readonly info: AgentInfo = { name: 'recall-expert' };

  async act(ctx: AgentContext): Promise<AgentDecision> {
    const answer = recallAnswer(getRecallTask(ctx.task.id));
    return { action: { tool: 'submit', params: { answer } } };
  }
}

/** The number words the flawed demonstrator answers with ({@link RecallWordsDemonstrator}). */
export const NUMBER_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'] as const;

/** Share of the tasks the registered `flawed` agent answers in words. */
export const FLAWED_WORD_SHARE = 0.6;

/**
 * Whether the flawed demonstrator answers task `taskId` in words: a seeded draw from the task id alone (FNV-1a of
 * its characters, then {@link mixSeed}), so every collection of a task gets the same answer, whatever its episode
 * seed, and about `share` of any set of tasks is answered in words.
 */
export function answersInWords(taskId: string, share: number): boolean {
  let h = 0x811c9dc5;
  for (let i = 0; i < taskId.length; i++) h = Math.imul(h ^ taskId.charCodeAt(i), 0x01000193);
  return new Rng(mixSeed(0, h >>> 0)).next() < share;
}

/**
 * A flawed demonstrator of `gymflow/recall-v0` (the registered agent `flawed`): the expert's answer, but on a
 * share of the tasks ({@link FLAWED_WORD_SHARE} by default; {@link answersInWords}) written as a word
 * (`{"answer": "seven"}`), which the environment's exact match scores 0. A policy trained on its episodes copies the
 * asked number as a digit or as a word by a learnt prior, and greedy decoding follows the majority: it leaves
 * headroom that RL closes from the reward alone (docs/trainer.md, "RL that learns"; the demo's SFT iteration).
 */
export class RecallWordsDemonstrator implements Agent {
  readonly info: AgentInfo;
  private readonly share: number;

  constructor(options: { share?: number } = {}) {
    const share = options.share ?? FLAWED_WORD_SHARE;
    if (!(share >= 0 && share <= 1)) throw new ConfigError(`recall flawed demonstrator: share must be in [0, 1], got ${String(options.share)}`);
    this.share = share;
    this.info = { name: `recall-flawed-${share}` };
  }

  async act(ctx: AgentContext): Promise<AgentDecision> {
    const digit = recallAnswer(getRecallTask(ctx.task.id));
    const answer = answersInWords(ctx.task.id, this.share) ? (NUMBER_WORDS[Number(digit)] ?? digit) : digit;
    return { action: { tool: 'submit', params: { answer } } };
  }
}
