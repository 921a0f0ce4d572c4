import { GymflowError } from '../errors.js';
import type { Trajectory, TrajectoryStep } from '../trajectory.js';
import { makeTrajectory } from '../trajectory.js';
import type { Action, ActionErrorInfo, AgentEnv, ResetOptions, StepMeta, TaskInfo, TimeStep } from '../types.js';
import { isDone } from '../types.js';
import { Wrapper } from './wrapper.js';

/** Who is acting, as written into the trajectory. */
export interface AgentInfo {
  name: string;
  model?: string;
  checkpoint?: string;
}

/**
 * Records the current episode as a standard trajectory. The agent's thought, token ids and log-probs
 * come from the `meta` argument of `step`.
 *
 * @example
 * ```ts
 * const env = new Recorder(make('gymflow/text-math-v0'), { envId: 'gymflow/text-math-v0', agent: { name: 'expert' } });
 * await env.reset({ seed: 1 });
 * await env.step({ tool: 'submit', params: { answer: '42' } }, { thought: 'six times seven' });
 * const trajectory = env.getTrajectory();
 * ```
 */
export class Recorder extends Wrapper {
  private task: TaskInfo | undefined;
  private steps: TrajectoryStep[] = [];
  private last: TimeStep | undefined;
  private agent: AgentInfo;
  private readonly envId: string;

  constructor(
    env: AgentEnv,
    options: { envId: string; agent: AgentInfo; now?: () => number },
  ) {
    super(env);
    this.envId = options.envId;
    this.agent = options.agent;
    if (options.now) this.now = options.now;
  }

  private now: () => number = Date.now;

  /** Changes the agent named in later trajectories (e.g. after a policy update). */
  setAgent(agent: AgentInfo): void {
    this.agent = agent;
  }

  override async reset(options?: ResetOptions): Promise<TimeStep> {
    const ts = await this.env.reset(options);
    const task = ts.info.task as TaskInfo | undefined;
    if (!task || typeof task.id !== 'string') {
      throw new GymflowError('PROTOCOL_ERROR', `Recorder: ${this.envId} reset() did not report info.task`);
    }
    this.task = task;
    this.steps = [];
    this.last = ts;
    return ts;
  }

  override async step(action: Action, meta?: StepMeta): Promise<TimeStep> {
    const started = this.now();
    const ts = await this.env.step(action, meta);
    const step: TrajectoryStep = {
      index: this.steps.length,
      action: { tool: String(action.tool), params: { ...(action.params ?? {}) } },
      observation: ts.observation,
      envReward: ts.reward,
      startedAt: new Date(started).toISOString(),
      durationMs: Math.max(0, this.now() - started),
    };
    if (meta?.thought !== undefined) step.thought = meta.thought;
    if (meta?.tokens !== undefined) step.tokens = meta.tokens;
    if (meta?.logprobs !== undefined) step.logprobs = meta.logprobs;
    const error = ts.info.error as ActionErrorInfo | undefined;
    if (error) step.error = { code: String(error.code), message: String(error.message) };
    this.steps.push(step);
    this.last = ts;
    return ts;
  }

  /** Whether the recorded episode has ended. */
  get episodeDone(): boolean {
    return this.last !== undefined && isDone(this.last) && this.steps.length > 0;
  }

  /**
   * The episode so far as a validated trajectory. An unfinished episode is reported with
   * `reason: 'incomplete'` and neither flag set.
   */
  getTrajectory(metadata: Record<string, unknown> = {}): Trajectory {
    if (!this.task || !this.last) throw new GymflowError('PROTOCOL_ERROR', 'Recorder: no episode recorded yet (call reset first)');
    const last = this.last;
    const done = isDone(last);
    const success = done && last.info.success === true;
    const rawScore = typeof last.info.score === 'number' ? last.info.score : success ? 1 : 0;
    const confidence = last.info.confidence;
    return makeTrajectory({
      task: this.task,
      envId: this.envId,
      agent: { ...this.agent },
      steps: this.steps.map((s) => ({ ...s })),
      outcome: {
        success,
        score: rawScore,
        terminated: last.terminated,
        truncated: last.truncated && !last.terminated,
        reason: done ? String(last.info.reason ?? (last.terminated ? 'finished' : 'truncated')) : 'incomplete',
        // The agent's stated confidence, when the environment read one off its answer.
        ...(done && typeof confidence === 'number' && confidence >= 0 && confidence <= 1 ? { confidence } : {}),
      },
      metadata,
    });
  }
}
