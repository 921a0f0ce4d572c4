import { Ajv } from 'ajv';
import { GymflowError } from './errors.js';
import { Rng } from './rng.js';
import { sampleFromSchema } from './schema-sample.js';
import type { Action, AgentEnv, TimeStep } from './types.js';
import { isDone, TOOL_CATEGORIES } from './types.js';

/** One conformance check and its result. */
export interface CheckResult {
  name: string;
  ok: boolean;
  /** What was wrong (or a short note when ok). */
  message: string;
}

/** The checker's verdict on an environment. */
export interface EnvCheckReport {
  ok: boolean;
  checks: CheckResult[];
}

/** Options for {@link checkEnv}. */
export interface CheckEnvOptions {
  /** Seed of the probe episodes. Default 0. */
  seed?: number;
  /** Most steps taken per probe episode before giving up on reaching its end. Default 50. */
  maxSteps?: number;
}

/** Thrown by {@link assertEnv}; lists every failed check. */
export class EnvCheckError extends GymflowError {
  constructor(readonly report: EnvCheckReport) {
    super(
      'ENV_CHECK_FAILED',
      `environment failed ${report.checks.filter((c) => !c.ok).length} conformance check(s):\n` +
        report.checks
          .filter((c) => !c.ok)
          .map((c) => `  - ${c.name}: ${c.message}`)
          .join('\n'),
    );
  }
}

type Trace = { observation: string; reward: number; terminated: boolean; truncated: boolean }[];

/**
 * Checks that an environment follows the gymflow protocol (Gymnasium's `check_env`, for tool-call
 * environments): tool specs are valid, `step` before `reset` and after the end throw typed errors,
 * invalid actions are observations not exceptions, time steps are well-formed with exact
 * terminated/truncated flags and a `reason`, the same seed and task give the same episode (on the same
 * instance and on a fresh one), and `close` is idempotent.
 *
 * `makeEnv` must build a fresh instance each call (the check uses three).
 *
 * @example
 * ```ts
 * const report = await checkEnv(() => make('acme/maze-v0'));
 * if (!report.ok) console.error(report.checks.filter((c) => !c.ok));
 * ```
 */
export async function checkEnv(makeEnv: () => AgentEnv | Promise<AgentEnv>, options: CheckEnvOptions = {}): Promise<EnvCheckReport> {
  const seed = options.seed ?? 0;
  const maxSteps = options.maxSteps ?? 50;
  const checks: CheckResult[] = [];
  const record = (name: string, fn: () => string | undefined): void => {
    try {
      const problem = fn();
      checks.push({ name, ok: problem === undefined, message: problem ?? 'ok' });
    } catch (err) {
      checks.push({ name, ok: false, message: `threw ${describe(err)}` });
    }
  };
  const recordAsync = async (name: string, fn: () => Promise<string | undefined>): Promise<void> => {
    try {
      const problem = await fn();
      checks.push({ name, ok: problem === undefined, message: problem ?? 'ok' });
    } catch (err) {
      checks.push({ name, ok: false, message: `threw ${describe(err)}` });
    }
  };

  const env = await makeEnv();
  try {
    record('tools', () => checkTools(env));
    record('domain', () => (typeof env.domain === 'string' && env.domain.length > 0 ? undefined : `domain must be a non-empty string, got ${JSON.stringify(env.domain)}`));
    await recordAsync('step before reset throws', async () => {
      try {
        await env.step({ tool: env.tools[0]?.name ?? 'noop', params: {} });
        return 'step() before reset() returned instead of throwing ResetNeededError';
      } catch (err) {
        return err instanceof GymflowError && err.code === 'RESET_NEEDED' ? undefined : `expected ResetNeededError, got ${describe(err)}`;
      }
    });

    await recordAsync('reset', async () => {
      const ts = await env.reset({ seed });
      const shape = checkTimeStep(ts, 'reset');
      if (shape) return shape;
      const task = ts.info.task as Record<string, unknown> | undefined;
      if (!task || typeof task.id !== 'string' || typeof task.instruction !== 'string' || typeof task.domain !== 'string') {
        return 'reset() must report info.task = { id, domain, instruction }';
      }
      if (isDone(ts)) return 'reset() returned a finished time step';
      return undefined;
    });

    await recordAsync('invalid actions are observations', async () => {
      await env.reset({ seed });
      const unknown = await env.step({ tool: '__no_such_tool__', params: {} });
      if (!unknown.info.error) return 'unknown tool: info.error not set';
      if (!unknown.observation) return 'unknown tool: empty observation';
      const withRequired = env.tools.find((t) => Array.isArray(t.parameters.required) && (t.parameters.required as unknown[]).length > 0);
      if (withRequired && !isDone(unknown)) {
        const bad = await env.step({ tool: withRequired.name, params: {} });
        if (!bad.info.error) return `params {} for '${withRequired.name}' (which has required params): info.error not set`;
      }
      return undefined;
    });

    // Probe episode: seeded actions sampled from the tool schemas, ending with the terminal tool.
    let taskId: string | undefined;
    let trace: Trace = [];
    await recordAsync('episode contract', async () => {
      const run = await probeEpisode(env, seed, undefined, maxSteps);
      taskId = run.taskId;
      trace = run.trace;
      if (run.problem) return run.problem;
      if (!run.ended) return `episode did not end within ${maxSteps} steps, even with terminal tools`;
      try {
        await env.step(sampleAction(env, new Rng(seed)));
        return 'step() after the episode ended returned instead of throwing EpisodeEndedError';
      } catch (err) {
        return err instanceof GymflowError && err.code === 'EPISODE_ENDED' ? undefined : `after the end: expected EpisodeEndedError, got ${describe(err)}`;
      }
    });

    await recordAsync('deterministic under a seed (same instance)', async () => {
      const again = await probeEpisode(env, seed, undefined, maxSteps);
      return compareTraces(trace, again.trace);
    });

    await recordAsync('deterministic under a seed (fresh instance)', async () => {
      const fresh = await makeEnv();
      try {
        const again = await probeEpisode(fresh, seed, undefined, maxSteps);
        const problem = compareTraces(trace, again.trace);
        if (problem || taskId === undefined) return problem;
        // The same seed and an explicit task id give the same episode too.
        const a = await probeEpisode(fresh, seed + 7, taskId, maxSteps);
        const b = await probeEpisode(env, seed + 7, taskId, maxSteps);
        return compareTraces(a.trace, b.trace);
      } finally {
        await fresh.close();
      }
    });
  } finally {
    await recordAsync('close is idempotent', async () => {
      await env.close();
      await env.close();
      return undefined;
    });
  }
  return { ok: checks.every((c) => c.ok), checks };
}

/** Like {@link checkEnv} but throws an {@link EnvCheckError} listing every failed check. */
export async function assertEnv(makeEnv: () => AgentEnv | Promise<AgentEnv>, options: CheckEnvOptions = {}): Promise<void> {
  const report = await checkEnv(makeEnv, options);
  if (!report.ok) throw new EnvCheckError(report);
}

function checkTools(env: AgentEnv): string | undefined {
  if (!Array.isArray(env.tools) || env.tools.length === 0) return 'tools must be a non-empty array';
  const ajv = new Ajv({ strict: true, strictRequired: false });
  const seen = new Set<string>();
  for (const tool of env.tools) {
    if (typeof tool.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(tool.name)) return `invalid tool name ${JSON.stringify(tool.name)}`;
    if (seen.has(tool.name)) return `duplicate tool name '${tool.name}'`;
    seen.add(tool.name);
    if (!tool.description) return `tool '${tool.name}' has no description`;
    if (!(TOOL_CATEGORIES as readonly string[]).includes(tool.category)) {
      return `tool '${tool.name}' has category '${tool.category}', expected one of ${TOOL_CATEGORIES.join(', ')}`;
    }
    if (tool.parameters?.type !== 'object') return `tool '${tool.name}': parameters schema must have type "object"`;
    try {
      ajv.compile(tool.parameters);
    } catch (err) {
      return `tool '${tool.name}': invalid JSON Schema: ${(err as Error).message}`;
    }
  }
  if (!env.tools.some((t) => t.category === 'submit')) return 'no tool has category "submit": an agent could never end the task';
  return undefined;
}

function checkTimeStep(ts: TimeStep, where: string): string | undefined {
  if (ts === null || typeof ts !== 'object') return `${where} returned ${describe(ts)}, not a TimeStep`;
  if (typeof ts.observation !== 'string') return `${where}: observation must be a string`;
  if (typeof ts.reward !== 'number' || !Number.isFinite(ts.reward)) return `${where}: reward must be a finite number, got ${String(ts.reward)}`;
  if (typeof ts.terminated !== 'boolean' || typeof ts.truncated !== 'boolean') return `${where}: terminated and truncated must be booleans`;
  if (ts.terminated && ts.truncated) return `${where}: terminated and truncated are both true`;
  if (ts.info === null || typeof ts.info !== 'object') return `${where}: info must be an object`;
  if (isDone(ts) && (typeof ts.info.reason !== 'string' || ts.info.reason === '')) return `${where}: episode ended without info.reason`;
  return undefined;
}

function sampleAction(env: AgentEnv, rng: Rng, preferTerminal = false): Action {
  const pool = preferTerminal ? env.tools.filter((t) => t.category === 'submit') : env.tools.filter((t) => t.category !== 'submit');
  const tool = rng.pick(pool.length ? pool : env.tools);
  return { tool: tool.name, params: sampleFromSchema(tool.parameters, rng) as Record<string, unknown> };
}

async function probeEpisode(
  env: AgentEnv,
  seed: number,
  task: string | undefined,
  maxSteps: number,
): Promise<{ taskId: string | undefined; trace: Trace; ended: boolean; problem?: string }> {
  const rng = new Rng(seed + 1);
  const first = await env.reset(task === undefined ? { seed } : { seed, task });
  const taskId = (first.info.task as { id?: string } | undefined)?.id;
  const trace: Trace = [pick(first)];
  for (let i = 0; i < maxSteps; i++) {
    // Explore for a few steps, then try to finish with a terminal tool.
    const ts = await env.step(sampleAction(env, rng, i >= 3));
    const problem = checkTimeStep(ts, `step ${i}`);
    trace.push(pick(ts));
    if (problem) return { taskId, trace, ended: isDone(ts), problem };
    if (isDone(ts)) return { taskId, trace, ended: true };
  }
  return { taskId, trace, ended: false };
}

function pick(ts: TimeStep): Trace[number] {
  return { observation: ts.observation, reward: ts.reward, terminated: ts.terminated, truncated: ts.truncated };
}

function compareTraces(a: Trace, b: Trace): string | undefined {
  if (a.length !== b.length) return `same seed gave episodes of ${a.length - 1} and ${b.length - 1} steps`;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as Trace[number];
    const y = b[i] as Trace[number];
    for (const key of ['observation', 'reward', 'terminated', 'truncated'] as const) {
      if (x[key] !== y[key]) {
        return `same seed diverged at ${i === 0 ? 'reset' : `step ${i - 1}`} in ${key}: ${JSON.stringify(x[key]).slice(0, 80)} vs ${JSON.stringify(y[key]).slice(0, 80)}`;
      }
    }
  }
  return undefined;
}

function describe(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  return JSON.stringify(value) ?? String(value);
}
