import type { Action, AgentEnv, ResetOptions, Split, StepMeta, TaskInfo, TimeStep, ToolSpec } from '../types.js';

/**
 * Base class of wrappers: delegates everything to the wrapped environment. A wrapper overrides the
 * one thing it changes, so wrappers compose in any order. Wrappers that observe an episode
 * (`Recorder`, `EpisodeStatistics`) see only what lies beneath them: put them outside the limits
 * (`MaxSteps`, `Timeout`) whose truncations they should record, as `runEpisode` does.
 */
export class Wrapper implements AgentEnv {
  constructor(readonly env: AgentEnv) {}

  get domain(): string {
    return this.env.domain;
  }

  get tools(): readonly ToolSpec[] {
    return this.env.tools;
  }

  /** The innermost environment. */
  get unwrapped(): AgentEnv {
    let env: AgentEnv = this.env;
    while (env instanceof Wrapper) env = env.env;
    return env;
  }

  reset(options?: ResetOptions): Promise<TimeStep> {
    return this.env.reset(options);
  }

  step(action: Action, meta?: StepMeta): Promise<TimeStep> {
    return this.env.step(action, meta);
  }

  close(): Promise<void> {
    return this.env.close();
  }

  listTasks(split?: Split): TaskInfo[] {
    return this.env.listTasks?.(split) ?? [];
  }

  countTasks(split?: Split): number {
    return this.env.countTasks?.(split) ?? this.env.listTasks?.(split).length ?? 0;
  }

  notes(): string[] {
    return this.env.notes?.() ?? [];
  }
}

/** Finds the first wrapper of a class in a stack (`findWrapper(env, Recorder)`). */
export function findWrapper<W extends Wrapper>(
  env: AgentEnv,
  cls: abstract new (...args: never[]) => W,
): W | undefined {
  let cur: AgentEnv = env;
  for (;;) {
    if (cur instanceof cls) return cur;
    if (!(cur instanceof Wrapper)) return undefined;
    cur = cur.env;
  }
}
