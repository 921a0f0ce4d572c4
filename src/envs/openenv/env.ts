import { BaseEnv } from '../../core/base-env.js';
import { TaskError } from '../../core/errors.js';
import { TaskSchema } from '../../core/trajectory.js';
import type { Action, ResetOptions, Split, TaskInfo, TimeStep, ToolSpec } from '../../core/types.js';
import { actionMappingFrom, actionPayload, type ActionMapping } from './action-schema.js';
import { OpenEnvConnectionError, OpenEnvServerError } from './errors.js';
import { timeStepFrom, type ObservationReading } from './observation.js';
import type { OpenEnvOptions } from './options.js';
import { parseWire, StepResultSchema } from './protocol.js';
import type { OpenEnvServerInfo } from './server-info.js';
import { OpenEnvSession } from './session.js';
import { WS_ERROR_CODES } from './protocol.js';
import { z } from 'zod';
import { defined } from '../../core/defined.js';

/** The first reset seed of the held-out tasks made from `tasks.heldout` (training tasks start at 0). */
export const HELDOUT_SEED_BASE = 1_000_000;

/** A task made from a reset seed (`tasks` option), for a server without task lists. */
interface SeedTask {
  info: TaskInfo;
  seed: number;
}

/**
 * An environment played on an OpenEnv server: each instance holds one WebSocket session (`/ws`), which is one
 * environment on the server, and plays its episodes there. Build it with `make('gymflow/openenv-v0', { kwargs: {
 * url } })` or `registerOpenEnv` (src/envs/openenv/register.ts), which describe the server first.
 *
 * - Tools: from the server's action schema (`action-schema.ts`); actions are checked against them here, so an
 *   invalid one is an observation and never reaches the server. An action the server still refuses
 *   (`VALIDATION_ERROR`) is an invalid-action observation too; one whose execution failed (`EXECUTION_ERROR`) an
 *   observation with `info.error.code` `tool_failed`.
 * - Time steps: `observation.ts`. `reset({ seed })` sends the seed as it is; without one, a seed drawn from the
 *   environment's RNG. `info.task` is the gymflow server's task, else `{ id: '<name>-seed-<seed>', instruction: the
 *   first observation }` (or the task's id, with the `tasks` option).
 * - A server that goes away, or does not answer within `timeoutMs`, ends the episode: a truncated time step with
 *   `info.reason` `server_gone` or `timeout` and the cause in the observation and `info.error`. The next `reset`
 *   connects again. A malformed answer throws an `OpenEnvProtocolError` naming what was wrong.
 */
export class OpenEnvEnv extends BaseEnv {
  readonly domain: string;
  readonly tools: readonly ToolSpec[];
  /** The environment's name: a gymflow server's env id, else the server's metadata name. */
  readonly name: string;
  private readonly mapping: ActionMapping;
  private readonly reading: ObservationReading;
  private session: OpenEnvSession | undefined;
  /** The seed the current `reset` was called with. */
  private requestedSeed: number | undefined;
  private readonly seedTasks: Map<string, SeedTask> | undefined;

  constructor(
    /** The server, as `describeOpenEnv` found it. */
    readonly server: OpenEnvServerInfo,
    private readonly options: OpenEnvOptions,
  ) {
    super();
    this.name = server.gymflow?.env_id ?? server.metadata.name;
    this.mapping = actionMappingFrom(
      server.schema.action,
      { envName: this.name, ...defined({ toolName: options.toolName, category: options.category }) },
      `GET ${server.baseUrl}/schema $.action`,
    );
    this.tools = this.mapping.tools;
    this.domain = options.domain ?? server.gymflow?.domain ?? 'generic';
    this.reading = {
      gymflow: server.gymflow !== undefined,
      successThreshold: options.successThreshold,
      ...defined({ observationField: options.observationField }),
    };
    // zod's optional fields admit `undefined`; TaskSchema's are the TaskInfo fields.
    const described = server.gymflow?.tasks as Record<Split, TaskInfo[]> | undefined;
    if (described !== undefined) {
      this.listTasks = (split?: Split) => (split === undefined ? [...described.train, ...described.heldout] : [...described[split]]);
    } else if (options.tasks !== undefined) {
      this.seedTasks = seedTasks(this.name, this.domain, options.tasks);
      const all = [...this.seedTasks.values()].map((t) => t.info);
      this.listTasks = (split?: Split) => all.filter((t) => split === undefined || t.split === split);
    }
  }

  override async reset(options: ResetOptions = {}): Promise<TimeStep> {
    this.requestedSeed = options.seed;
    return super.reset(options);
  }

  /** The server's state of this session's environment (the `state` message: `episode_id`, `step_count`, …). */
  async state(): Promise<Record<string, unknown>> {
    const session = await this.liveSession();
    const data = await session.request('state', undefined, this.options.timeoutMs);
    return parseWire(z.record(z.string(), z.unknown()), data, `${session.url} answer to 'state' $.data`);
  }

  protected async onReset(options: { task?: string }): Promise<TimeStep> {
    let seed = this.requestedSeed ?? this.rng.nextUint32();
    let task: SeedTask | undefined;
    if (options.task !== undefined && this.server.gymflow === undefined) {
      // A task of the tasks option, or the id an earlier episode reported (`<name>-seed-<n>`): both name a seed.
      const seeded = new RegExp(`^${slug(this.name)}-seed-(\\d+)$`).exec(options.task);
      task = this.seedTasks?.get(options.task) ?? (seeded ? { seed: Number(seeded[1]), info: { id: options.task, domain: this.domain, instruction: '' } } : undefined);
      if (task === undefined) {
        const known = this.seedTasks === undefined ? '' : `${[...this.seedTasks.keys()].slice(0, 2).join(', ')}, …, or `;
        throw new TaskError(`${this.name}: unknown task '${options.task}': expected ${known}${slug(this.name)}-seed-<n> (reset with seed n)`);
      }
      seed = task.seed;
    }
    const data: Record<string, unknown> = { seed, ...(options.task !== undefined && this.server.gymflow !== undefined ? { task: options.task } : {}) };
    const session = await this.liveSession();
    const place = `${session.url} answer to 'reset'`;
    let ts: TimeStep;
    try {
      ts = timeStepFrom(parseWire(StepResultSchema, await session.request('reset', data, this.options.timeoutMs), `${place} $.data`), this.reading, place);
      if (this.server.gymflow !== undefined) parseWire(TaskSchema, ts.info.task, `${place} $.data.observation.info.task`);
    } catch (err) {
      await this.dropSession();
      throw err;
    }
    if (this.server.gymflow === undefined) {
      const info: TaskInfo = task?.info ?? { id: `${slug(this.name)}-seed-${seed}`, domain: this.domain, instruction: ts.observation };
      ts.info.task = { ...info, instruction: ts.observation };
    }
    return ts;
  }

  protected async onStep(action: Action): Promise<TimeStep> {
    const session = this.session;
    if (session === undefined || !session.usable) {
      return lost(new OpenEnvConnectionError('server_gone', `${this.server.wsUrl}: the session ended before this step`));
    }
    try {
      const data = await session.request('step', actionPayload(this.mapping, action), this.options.timeoutMs);
      const place = `${session.url} answer to 'step'`;
      return timeStepFrom(parseWire(StepResultSchema, data, `${place} $.data`), this.reading, place);
    } catch (err) {
      if (err instanceof OpenEnvServerError && err.serverCode === WS_ERROR_CODES.validation) {
        return this.observe(`Error: the server refused the action: ${err.message}`, 0, { error: { code: 'invalid_params', message: err.message } });
      }
      if (err instanceof OpenEnvServerError && err.serverCode === WS_ERROR_CODES.execution) {
        return this.observe(`Error: the action failed on the server: ${err.message}`, 0, { error: { code: 'tool_failed', message: err.message } });
      }
      await this.dropSession();
      if (err instanceof OpenEnvConnectionError) return lost(err);
      throw err;
    }
  }

  protected override async onClose(): Promise<void> {
    await this.dropSession();
  }

  private async liveSession(): Promise<OpenEnvSession> {
    if (this.session?.usable) return this.session;
    await this.dropSession();
    this.session = await OpenEnvSession.open(this.server.wsUrl, { connectTimeoutMs: this.options.connectTimeoutMs });
    return this.session;
  }

  private async dropSession(): Promise<void> {
    const s = this.session;
    this.session = undefined;
    await s?.close();
  }
}

/** The time step of an episode the server could not carry on. */
function lost(err: OpenEnvConnectionError): TimeStep {
  return {
    observation: `The episode ended: ${err.message}`,
    reward: 0,
    terminated: false,
    truncated: true,
    info: { reason: err.reason, error: { code: err.reason, message: err.message } },
  };
}

function seedTasks(name: string, domain: string, counts: { train: number; heldout: number }): Map<string, SeedTask> {
  const out = new Map<string, SeedTask>();
  for (const split of ['train', 'heldout'] as const) {
    for (let i = 0; i < counts[split]; i++) {
      const seed = (split === 'heldout' ? HELDOUT_SEED_BASE : 0) + i;
      const id = `${slug(name)}-${split}-${String(i).padStart(5, '0')}`;
      out.set(id, { seed, info: { id, domain, split, instruction: `${name}, reset with seed ${seed}`, metadata: { seed } } });
    }
  }
  return out;
}

/** A name as the start of a task id: lower case, runs of other characters as one '-'. */
function slug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'openenv';
}
