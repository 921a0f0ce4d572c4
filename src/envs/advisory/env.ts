import { z } from 'zod';
import { ConfigError } from '../../core/errors.js';
import type { Action, ActionErrorInfo, Split, TaskInfo, TimeStep } from '../../core/types.js';
import { ConversationEnv } from '../conversation-kit/conversation-env.js';
import type { UserTurn } from '../conversation-kit/user.js';
import { createUser, UserOptionsSchema } from '../conversation-kit/user-spec.js';
import { AdvisoryToolError, runAdvisoryTool } from './actions.js';
import type { TripPlan } from './plan.js';
import { ElicitationTracker } from './policy.js';
import { scoreRecommendation } from './reward.js';
import { ADVISORY_DOMAIN, ADVISORY_TASK_COUNTS, type AdvisoryTask, advisoryTaskId, advisoryTaskInfo, getAdvisoryTask, listAdvisoryTasks } from './tasks.js';
import { ADVISORY_TOOLS, RECOMMEND_TOOL } from './tools.js';

/** The registered id of this environment. */
export const ADVISORY_ENV_ID = 'gymflow/advisory-v0';

/** Step limit applied by `make` (the expert needs 14: seven questions, four searches, a price check, the pitch and the recommendation). */
export const ADVISORY_MAX_STEPS = 30;

/** Keyword arguments of the environment: the simulated user (`conversation-kit/user-spec.ts`). */
export const AdvisoryEnvOptionsSchema = UserOptionsSchema.strict();

/** Options accepted by {@link AdvisoryEnv}. */
export type AdvisoryEnvOptions = z.input<typeof AdvisoryEnvOptionsSchema>;

/**
 * `gymflow/advisory-v0`: advice under constraints. A simulated client wants a trip (TravelPlanner-style:
 * flights, a hotel, activities) and reveals its hard constraints — where from, dates, party, budget, hotel
 * stars and amenities, flight preferences, activities — only when asked (`client.ts`). The agent asks
 * (`respond`), searches the market (`search_flights`, `search_hotels`, `search_activities`, `price_plan`)
 * and ends the episode with `recommend` (reason `recommended`).
 *
 * Reward (`reward.ts`), when the episode ends: `elicited × constraints × value`, where `elicited` holds when
 * the agent asked about every topic before recommending, `constraints` when every hard constraint holds
 * (`info.checks` lists each check), and `value` is the plan's value over the best plan's within the
 * constraints (computed by the env, `solver.ts`). Success: reward ≥ 0.95. A conversation that ends without a
 * recommendation (the client gives up, or a step limit) scores 0; a simulated user that fails truncates the
 * episode (reason `user_error`). The `MaxSteps` wrapper truncates at 30 steps (reason `max_steps`).
 */
export class AdvisoryEnv extends ConversationEnv {
  readonly domain = ADVISORY_DOMAIN;
  readonly tools = ADVISORY_TOOLS;
  private task: AdvisoryTask | undefined;
  private tracker = new ElicitationTracker();
  private plan: TripPlan | undefined;

  /** Throws a `ConfigError` when `options` fail {@link AdvisoryEnvOptionsSchema} or name no known user. */
  constructor(options: AdvisoryEnvOptions | Record<string, unknown> = {}, env: Record<string, string | undefined> = process.env) {
    const parsed = AdvisoryEnvOptionsSchema.safeParse(options);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(options)'}: ${i.message}`).join('; ');
      throw new ConfigError(`${ADVISORY_ENV_ID}: invalid options: ${issues}`);
    }
    super(createUser(parsed.data, env));
  }

  protected begin(taskId: string | undefined): { task: TaskInfo; user: { instruction: string; opening: string; script: AdvisoryTask['script'] } } {
    // The same draw as `rng.pick(listAdvisoryTasks('train'))`, without generating the whole split.
    const task = getAdvisoryTask(taskId ?? advisoryTaskId('train', this.rng.int(0, ADVISORY_TASK_COUNTS.train - 1)));
    this.task = task;
    this.tracker = new ElicitationTracker();
    this.plan = undefined;
    return { task: advisoryTaskInfo(task), user: { instruction: task.hidden, opening: task.opening, script: task.script } };
  }

  protected override onUserTurn(agentMessage: string, _turn: UserTurn): void {
    this.tracker.onAgentMessage(agentMessage);
  }

  protected onTool(action: Action): TimeStep {
    if (action.tool === 'think') return this.observe('Thought recorded.');
    if (action.tool === RECOMMEND_TOOL) {
      const p = action.params;
      this.plan = { outbound: String(p.outbound_flight), return: String(p.return_flight), hotel: String(p.hotel), activities: (p.activities as unknown[]).map(String) };
      return this.conclude('Your recommendation has been sent to the client.', 'recommended');
    }
    try {
      return this.observe(runAdvisoryTool((this.task as AdvisoryTask).world, action));
    } catch (err) {
      if (!(err instanceof AdvisoryToolError)) throw err;
      const error: ActionErrorInfo = { code: err.code, message: err.message };
      return this.observe(`Error: ${err.message}`, 0, { error });
    }
  }

  protected outcome(): { reward: number; success: boolean; info: Record<string, unknown> } {
    return scoreRecommendation(this.task as AdvisoryTask, this.plan, this.tracker.missing());
  }

  /** The tasks of a split, or of both splits when omitted. */
  override listTasks(split?: Split): TaskInfo[] {
    return listAdvisoryTasks(split).map(advisoryTaskInfo);
  }

  /** The number of tasks of a split (or both), without generating them. */
  override countTasks(split?: Split): number {
    return split ? ADVISORY_TASK_COUNTS[split] : ADVISORY_TASK_COUNTS.train + ADVISORY_TASK_COUNTS.heldout;
  }
}
