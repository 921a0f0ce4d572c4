import type { DomainProfile } from '../../core/profiles/profile.js';
import type { Trajectory, TrajectoryStep } from '../../core/trajectory.js';
import type { RubricDefinition } from '../types.js';

/**
 * The judge prompt: one request per step. The system prompt holds the role, the rubrics with their
 * scales and the output format (it depends only on the rubric set, so providers can cache it); the
 * user message holds the task, the domain's tools, a bounded window of earlier steps and the step
 * being judged. Later steps are never shown: a step is judged on what the agent knew when it acted
 * plus the observation it got back.
 *
 * Bump {@link JUDGE_PROMPT_VERSION} whenever the wording or layout changes: it is part of the cache key,
 * so old verdicts are not reused for a different prompt.
 */
export const JUDGE_PROMPT_VERSION = 'judge-step-v1';

/** Bounds of the prompt, in characters (not tokens: no tokenizer is needed to enforce them). */
export interface PromptLimits {
  /** Earlier steps shown before the judged one (default 3). */
  historySteps: number;
  /** Longest thought / action / observation of an earlier step (default 400). */
  historyFieldChars: number;
  /** Longest thought / action / observation of the judged step (default 2000). */
  stepFieldChars: number;
  /** Longest task instruction (default 4000). */
  instructionChars: number;
}

/** Default {@link PromptLimits}: roughly 2–4 k tokens per request at most. */
export const DEFAULT_PROMPT_LIMITS: PromptLimits = { historySteps: 3, historyFieldChars: 400, stepFieldChars: 2000, instructionChars: 4000 };

/** The two messages of a judge request. */
export interface JudgePrompt {
  system: string;
  user: string;
}

/**
 * Shortens `text` to at most about `max` characters, keeping its head and tail (errors and results
 * are often at the end of an observation) and saying how much was cut.
 */
export function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = (n: number): string => `\n…[${n} chars omitted]…\n`;
  const keep = Math.max(0, max - marker(text.length).length);
  const head = Math.ceil(keep * 0.6);
  const tail = keep - head;
  return text.slice(0, head) + marker(text.length - keep) + (tail > 0 ? text.slice(text.length - tail) : '');
}

/** The system prompt for a rubric set. */
export function judgeSystemPrompt(rubrics: readonly RubricDefinition[]): string {
  const lines: string[] = [
    'You are a strict, careful judge of an AI agent that solves tasks by calling tools, one step at a time.',
    'You grade exactly ONE step, the one under "CURRENT STEP", on each rubric below.',
    'Judge the step by what the agent knew when it acted (the task and the earlier steps) and use the observation it received to see what the action actually did.',
    'Later steps are not shown and must not be guessed at.',
    '',
    'Each rubric gets a score between 0 and 1 (intermediate values such as 0.25 or 0.8 are allowed; 1 is best) and a one- or two-sentence rationale that cites the evidence. Write the rationale first, then decide the score.',
    'Be calibrated: reserve 1 for steps you would not improve and 0 for steps that are clearly wrong.',
    '',
    'Rubrics:',
  ];
  for (const r of rubrics) {
    lines.push(`- ${r.name}: ${r.description}`);
    for (const [level, meaning] of Object.entries(r.scale ?? {}).sort(([a], [b]) => Number(b) - Number(a) || a.localeCompare(b))) {
      lines.push(`    ${level}: ${meaning}`);
    }
  }
  const shape = rubrics.map((r) => `"${r.name}": {"rationale": "...", "score": <number 0..1>}`).join(', ');
  lines.push('', `Give your verdict as one JSON object with exactly these keys: {${shape}}. Output only that JSON object.`);
  return lines.join('\n');
}

function renderAction(step: TrajectoryStep): string {
  return `${step.action.tool} ${JSON.stringify(step.action.params)}`;
}

function renderStep(step: TrajectoryStep, maxChars: number): string[] {
  const out: string[] = [];
  if (step.thought !== undefined && step.thought.trim() !== '') out.push(`Thought: ${truncateMiddle(step.thought, maxChars)}`);
  out.push(`Action: ${truncateMiddle(renderAction(step), maxChars)}`);
  if (step.error) out.push(`Error: ${step.error.code}: ${truncateMiddle(step.error.message, maxChars)}`);
  out.push(`Observation: ${truncateMiddle(step.observation, maxChars)}`);
  return out;
}

/**
 * Builds the prompt for the step at array position `position` of the trajectory.
 *
 * @example
 * ```ts
 * const { system, user } = buildStepPrompt(trajectory, 4, profile, weightedJudgeRubrics(profile));
 * ```
 */
export function buildStepPrompt(
  trajectory: Trajectory,
  position: number,
  profile: DomainProfile,
  rubrics: readonly RubricDefinition[],
  limits: PromptLimits = DEFAULT_PROMPT_LIMITS,
): JudgePrompt {
  const step = trajectory.steps[position];
  if (!step) throw new RangeError(`buildStepPrompt: trajectory ${trajectory.id} has no step at position ${position}`);
  const lines: string[] = [
    '# Task',
    `Domain: ${trajectory.task.domain}`,
    'Instruction:',
    truncateMiddle(trajectory.task.instruction, limits.instructionChars),
    '',
    '# Tools available',
  ];
  for (const tool of profile.tools) {
    const terminal = profile.terminalTools.includes(tool.name) ? ', ends the episode' : '';
    lines.push(`- ${tool.name} (${tool.category}${terminal}): ${truncateMiddle(tool.description, 300)}`);
  }
  const from = Math.max(0, position - limits.historySteps);
  lines.push('');
  if (position === 0) lines.push('# Earlier steps', '(none: this is the first step)');
  else {
    lines.push(from > 0 ? `# Earlier steps (the last ${position - from} of ${position}; ${from} older step(s) omitted)` : '# Earlier steps');
    for (let i = from; i < position; i++) {
      const s = trajectory.steps[i] as TrajectoryStep;
      lines.push(`## Step ${s.index}`, ...renderStep(s, limits.historyFieldChars));
    }
  }
  lines.push('', `# CURRENT STEP (step ${step.index})`, ...renderStep(step, limits.stepFieldChars));
  return { system: judgeSystemPrompt(rubrics), user: lines.join('\n') };
}
