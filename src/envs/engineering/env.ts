import { z } from 'zod';
import { ConfigError } from '../../core/errors.js';
import type { Action, ActionErrorInfo, Split, TaskInfo, TimeStep } from '../../core/types.js';
import { isAffirmative, isConfirmationRequest } from '../conversation-kit/confirmation.js';
import { ConversationEnv } from '../conversation-kit/conversation-env.js';
import { RESPOND_TOOL_NAME } from '../conversation-kit/respond-tool.js';
import type { UserEpisode, UserTurn } from '../conversation-kit/user.js';
import { createUser, UserOptionsSchema } from '../conversation-kit/user-spec.js';
import { type FleetState, FleetToolError, fleetHealthy, type HarmfulAction, initialState, runFleetTool, unhealthyServices } from './actions.js';
import { rootCauseMatches } from './fleet.js';
import { PINGS } from './stakeholder.js';
import { ENGINEERING_DOMAIN, ENGINEERING_TASK_COUNTS, type EngineeringTask, engineeringTaskId, engineeringTaskInfo, getEngineeringTask, listEngineeringTasks } from './tasks.js';
import { ENGINEERING_TOOLS, REMEDIATION_TOOLS, RESOLVE_TOOL } from './tools.js';

/** The registered id of this environment. */
export const ENGINEERING_ENV_ID = 'gymflow/engineering-v0';

/** Step limit applied by `make` (the expert needs about 12). */
export const ENGINEERING_MAX_STEPS = 40;

/** Tool calls in a row without a message to the commander after which the commander asks for an update. */
export const PING_EVERY = 10;

/** Keyword arguments of the environment: the simulated user (`conversation-kit/user-spec.ts`). */
export const EngineeringEnvOptionsSchema = UserOptionsSchema.strict();

/** Options accepted by {@link EngineeringEnv}. */
export type EngineeringEnvOptions = z.input<typeof EngineeringEnvOptionsSchema>;

/** A change to production refused because no approved request named its service. */
export interface Refusal {
  step: number;
  tool: string;
  service: string;
}

const LEFT = '(The incident commander has left the conversation. Resolve the incident once the fleet is healthy.)';
const REMEDIATIONS = new Set<string>(REMEDIATION_TOOLS);
const wordRe = (name: string): RegExp => new RegExp(`\\b${name}\\b`, 'i');

/**
 * `gymflow/engineering-v0`: incident response. A simulated fleet (`incident.ts`, `telemetry.ts`) has a hidden fault
 * — a bad deploy, a bad config change, a saturated dependency, a disk filling up or a leaked connection pool;
 * the agent investigates with read tools, fixes it with a remediation (`actions.ts`), keeps the incident commander
 * (a simulated user, `stakeholder.ts`) informed through `respond`, and ends the episode with `resolve {root_cause,
 * summary}`. A remediation needs the commander's approval: the yes to a confirmation request that names the
 * service (else it is refused: `Refused by policy: …`, code `policy_violation`, nothing changes). After
 * {@link PING_EVERY} tool calls without a message, the commander's ping for an update is added to the observation.
 *
 * A commander who ends the conversation (a model's `###STOP###`) only leaves it: the episode goes on until `resolve`.
 *
 * Reward when the episode ends — `resolve` (reason `resolved`), or the commander escalating (`user_gave_up`): **1**
 * when all three terms hold, else **0**; every other step earns 0. The terms, in `info.terms`:
 *
 * - `healthy`: every service passes its health check at the end (error rate ≤ 2%, p99 latency ≤ 3× its
 *   baseline, CPU ≤ 90%, disk ≤ 90%, database pool < 95% in use) — the fault's remedy was applied
 *   (`info.unhealthy` lists the services that fail);
 * - `root_cause`: `resolve` was called and its root cause names the faulty service first among the fleet's
 *   services and the fault's kind first among the kinds (`fleet.ts` `rootCauseMatches`; `info.fault` reveals
 *   the fault);
 * - `no_harm`: no harmful remediation ran (`info.harmful`): restarting a service not at fault, rolling back a deploy
 *   that did not cause the incident, changing a config key that did not (or the faulty key to anything but its
 *   previous value), scaling a service down.
 *
 * A simulated user that fails truncates the episode (reason `user_error`). The `MaxSteps` wrapper truncates at 40
 * steps (reason `max_steps`).
 */
export class EngineeringEnv extends ConversationEnv {
  readonly domain = ENGINEERING_DOMAIN;
  readonly tools = ENGINEERING_TOOLS;
  private task: EngineeringTask | undefined;
  private fleet: FleetState | undefined;
  private approved = new Set<string>();
  private harmful: HarmfulAction[] = [];
  private refusals: Refusal[] = [];
  private rootCause: string | undefined;
  private silentCalls = 0;
  private commanderLeft = false;

  /** Throws a `ConfigError` when `options` fail {@link EngineeringEnvOptionsSchema} or name no known user. */
  constructor(options: EngineeringEnvOptions | Record<string, unknown> = {}, env: Record<string, string | undefined> = process.env) {
    const parsed = EngineeringEnvOptionsSchema.safeParse(options);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(options)'}: ${i.message}`).join('; ');
      throw new ConfigError(`${ENGINEERING_ENV_ID}: invalid options: ${issues}`);
    }
    super(createUser(parsed.data, env));
  }

  /** The fleet as it is now (for tests and debugging). */
  get state(): FleetState | undefined {
    return this.fleet;
  }

  protected begin(taskId: string | undefined): { task: TaskInfo; user: Omit<UserEpisode, 'seed'> } {
    const task = getEngineeringTask(taskId ?? engineeringTaskId('train', this.rng.int(0, ENGINEERING_TASK_COUNTS.train - 1)));
    this.task = task;
    this.fleet = initialState(task);
    this.approved = new Set();
    this.harmful = [];
    this.refusals = [];
    this.rootCause = undefined;
    this.silentCalls = 0;
    this.commanderLeft = false;
    return { task: engineeringTaskInfo(task), user: { instruction: task.hidden, opening: task.opening, script: task.script } };
  }

  /**
   * The incident ends with `resolve`, not when the commander is satisfied: a commander who ends the conversation
   * (a model's `###STOP###`) leaves it, and the agent can still fix and resolve; messages after that reach no one.
   * A commander who escalates (gives up) ends the episode.
   */
  protected override async onStep(action: Action): Promise<TimeStep> {
    if (action.tool === RESPOND_TOOL_NAME && this.commanderLeft) return this.ping(LEFT);
    const ts = await super.onStep(action);
    if (!ts.terminated || ts.info.reason !== 'user_stop') return ts;
    this.commanderLeft = true;
    return this.observe(`${ts.observation}\n\n${LEFT}`);
  }

  protected override onUserTurn(agentMessage: string, turn: UserTurn): void {
    this.silentCalls = 0;
    if (!isConfirmationRequest(agentMessage) || !isAffirmative(turn.text)) return;
    for (const s of (this.task as EngineeringTask).incident.services) if (wordRe(s.name).test(agentMessage)) this.approved.add(s.name);
  }

  protected onTool(action: Action): TimeStep {
    const task = this.task as EngineeringTask;
    const fleet = this.fleet as FleetState;
    if (action.tool === 'think') return this.observe('Thought recorded.');
    if (action.tool === RESOLVE_TOOL) {
      this.rootCause = String(action.params.root_cause);
      return this.conclude(`Incident resolved. Root cause recorded: ${this.rootCause}`, 'resolved');
    }
    const service = String(action.params.service);
    if (REMEDIATIONS.has(action.tool) && task.incident.services.some((s) => s.name === service) && !this.approved.has(service)) {
      this.refusals.push({ step: this.stepCount, tool: action.tool, service });
      const error: ActionErrorInfo = { code: 'policy_violation', message: `the incident commander has not approved a change to ${service}: ask them first, naming the service and the change` };
      return this.ping(`Refused by policy: ${error.message}`, { error });
    }
    try {
      const result = runFleetTool(task, fleet, action);
      if (result.harm) this.harmful.push({ step: this.stepCount, ...result.harm });
      return this.ping(result.observation);
    } catch (err) {
      if (!(err instanceof FleetToolError)) throw err;
      const error: ActionErrorInfo = { code: err.code, message: err.message };
      return this.ping(`Error: ${err.message}`, { error });
    }
  }

  /** The observation, with the commander's ping appended after {@link PING_EVERY} calls without a message. */
  private ping(observation: string, info: Record<string, unknown> = {}): TimeStep {
    this.silentCalls += 1;
    if (this.silentCalls < PING_EVERY) return this.observe(observation, 0, info);
    this.silentCalls = 0;
    const text = this.rng.pick(PINGS);
    const commander = (this.task as EngineeringTask).commander;
    this.transcript.add({ role: 'user', text });
    return this.observe(`${observation}\n\n[${commander}, incident commander] ${text}`, 0, info);
  }

  protected outcome(): { reward: number; success: boolean; info: Record<string, unknown> } {
    const task = this.task as EngineeringTask;
    const fleet = this.fleet as FleetState;
    const fault = task.incident.fault;
    const healthy = fleetHealthy(task, fleet);
    const rootCause = this.rootCause !== undefined && rootCauseMatches(this.rootCause, fault, task.incident.services.map((s) => s.name));
    const noHarm = this.harmful.length === 0;
    const success = healthy && rootCause && noHarm;
    return {
      reward: success ? 1 : 0,
      success,
      info: {
        terms: { healthy, root_cause: rootCause, no_harm: noHarm },
        fault: { kind: fault.kind, service: fault.service },
        stated_root_cause: this.rootCause ?? null,
        unhealthy: healthy ? [] : unhealthyServices(task, fleet),
        harmful: this.harmful,
        refusals: this.refusals,
      },
    };
  }

  /** The tasks of a split, or of both splits when omitted. */
  override listTasks(split?: Split): TaskInfo[] {
    return listEngineeringTasks(split).map(engineeringTaskInfo);
  }

  /** The number of tasks of a split (or both), without generating them. */
  override countTasks(split?: Split): number {
    return split ? ENGINEERING_TASK_COUNTS[split] : ENGINEERING_TASK_COUNTS.train + ENGINEERING_TASK_COUNTS.heldout;
  }
}
