import type { Agent, AgentContext, AgentDecision } from '../core/agent.js';
import { entropySeed, Rng } from '../core/rng.js';
import { sampleObject } from '../core/schema-sample.js';
import type { JsonSchema, TaskInfo } from '../core/types.js';
import type { AgentInfo } from '../core/wrappers/recorder.js';

/**
 * A generic random agent for any environment: it picks a tool uniformly and fills its params from the
 * tool's JSON Schema. It is the floor every learned policy must beat, and a fuzzer for environments
 * (it sometimes produces invalid actions on purpose).
 */

/** Options for {@link RandomAgent}. */
export interface RandomAgentOptions {
  /** Seed of the agent's own RNG; episodes with the same seed repeat exactly. */
  seed?: number;
  /**
   * Probability that an action is deliberately broken (unknown tool, missing required param, extra
   * param, wrong type). Default 0.1.
   */
  invalidRate?: number;
}

/**
 * The random agent.
 *
 * @example
 * ```ts
 * const traj = await runEpisode(make('gymflow/tool-use-v0'), new RandomAgent({ seed: 7 }), { envId: 'gymflow/tool-use-v0', seed: 7 });
 * ```
 */
export class RandomAgent implements Agent {
  readonly info: AgentInfo = { name: 'random' };
  private readonly baseSeed: number;
  private readonly invalidRate: number;
  private rng: Rng;

  constructor(options: RandomAgentOptions = {}) {
    this.baseSeed = options.seed ?? entropySeed();
    this.invalidRate = options.invalidRate ?? 0.1;
    this.rng = new Rng(this.baseSeed);
  }

  /** With an episode seed the agent's stream restarts from (its seed, episode seed), so episodes replay. */
  reset(_task: TaskInfo, seed: number | undefined): void {
    if (seed !== undefined) this.rng = new Rng((Math.imul(this.baseSeed, 0x9e3779b1) ^ seed) >>> 0);
  }

  /** A uniformly chosen tool with schema-driven params, broken on purpose with probability `invalidRate`. */
  async act(ctx: AgentContext): Promise<AgentDecision> {
    const rng = this.rng;
    if (ctx.tools.length === 0) return { action: { tool: 'noop', params: {} } };
    const tool = rng.pick(ctx.tools);
    const params = sampleObject(tool.parameters as JsonSchema, rng);
    if (rng.next() >= this.invalidRate) return { action: { tool: tool.name, params } };
    // Deliberately broken actions exercise the environment's invalid-action path.
    const names = Object.keys(params);
    switch (rng.int(0, 3)) {
      case 0:
        return { action: { tool: `${tool.name}_typo`, params } };
      case 1:
        if (names.length > 0) delete params[rng.pick(names)];
        return { action: { tool: tool.name, params } };
      case 2:
        return { action: { tool: tool.name, params: { ...params, unexpected: rng.int(0, 9) } } };
      default:
        return { action: { tool: tool.name, params: Object.fromEntries(names.map((n) => [n, rng.int(0, 9)])) } };
    }
  }
}
