import { z } from 'zod';
import { ConfigError } from '../../core/errors.js';
import type { Action, ActionErrorInfo, Split, TaskInfo, TimeStep } from '../../core/types.js';
import { ConversationEnv } from '../conversation-kit/conversation-env.js';
import { missingOutputs } from '../conversation-kit/text.js';
import type { UserTurn } from '../conversation-kit/user.js';
import { createUser, UserOptionsSchema } from '../conversation-kit/user-spec.js';
import { RetailToolError, runRetailTool } from './actions.js';
import { cloneDb, dbDiff, type RetailDb, sameDb } from './database.js';
import { PolicyGuard } from './policy.js';
import { CONVERSATION_DOMAIN, getRetailTask, listRetailTasks, RETAIL_TASK_COUNTS, type RetailTask, retailTaskId, retailTaskInfo } from './tasks.js';
import { RETAIL_TOOLS, TRANSFER_TOOL } from './tools.js';

/** The registered id of this environment. */
export const CONVERSATION_ENV_ID = 'gymflow/conversation-v0';

/** Step limit applied by `make` (tau-bench's retail runs allow 30 agent actions; compound tasks here need up to ~30). */
export const CONVERSATION_MAX_STEPS = 40;

/** Keyword arguments of the environment: the simulated user (`conversation-kit/user-spec.ts`). */
export const RetailEnvOptionsSchema = UserOptionsSchema.strict();

/** Options accepted by {@link RetailEnv}. */
export type RetailEnvOptions = z.input<typeof RetailEnvOptionsSchema>;

/**
 * `gymflow/conversation-v0`: customer service in a retail store, after tau-bench's retail domain. The agent
 * serves a simulated customer (`respond`) with the store's tools (`tools.ts`) under a written policy
 * (`policy.ts`) that its task instruction states; the customer's goal is hidden (`tasks.ts`).
 *
 * Reward (tau-bench's): when the conversation ends — the customer ends it (reason `user_stop`, or
 * `user_gave_up`) or the agent transfers it to a human (`transferred`) — **1** when all three terms hold,
 * else **0**; every other step earns 0. The terms, in `info.terms`:
 *
 * - `db_match`: the store equals the task's gold state, the initial store after the task's gold calls (and the
 *   conversation was transferred exactly when the gold calls transfer it); `info.db_diff` lists the users and
 *   orders that differ;
 * - `outputs`: every required output (what the customer asked to be told) appears in the agent's messages
 *   (`info.outputs.missing` lists the rest);
 * - `policy`: no call was refused by the policy guard (`info.violations`): no call before authentication or
 *   for another customer, no change without the customer's yes to it.
 *
 * A call the store refuses (`Error: …`, `info.error` with the store's code) or the guard refuses
 * (`Refused by policy: …`, code `policy_violation`) changes nothing. A simulated user that fails truncates the
 * episode (reason `user_error`). The `MaxSteps` wrapper truncates at 40 steps (reason `max_steps`).
 */
export class RetailEnv extends ConversationEnv {
  readonly domain = CONVERSATION_DOMAIN;
  readonly tools = RETAIL_TOOLS;
  private task: RetailTask | undefined;
  private db: RetailDb = { users: {}, orders: {} };
  private guard = new PolicyGuard();
  private transferred = false;

  /** Throws a `ConfigError` when `options` fail {@link RetailEnvOptionsSchema} or name no known user. */
  constructor(options: RetailEnvOptions | Record<string, unknown> = {}, env: Record<string, string | undefined> = process.env) {
    const parsed = RetailEnvOptionsSchema.safeParse(options);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(options)'}: ${i.message}`).join('; ');
      throw new ConfigError(`${CONVERSATION_ENV_ID}: invalid options: ${issues}`);
    }
    super(createUser(parsed.data, env));
  }

  /** The store as it is now (for tests and debugging). */
  get database(): RetailDb {
    return this.db;
  }

  protected begin(taskId: string | undefined): { task: TaskInfo; user: { instruction: string; opening: string; script: RetailTask['script'] } } {
    // The same draw as `rng.pick(listRetailTasks('train'))`, without generating the whole split.
    const task = getRetailTask(taskId ?? retailTaskId('train', this.rng.int(0, RETAIL_TASK_COUNTS.train - 1)));
    this.task = task;
    this.db = cloneDb(task.db);
    this.guard = new PolicyGuard();
    this.transferred = false;
    return { task: retailTaskInfo(task), user: { instruction: task.hidden, opening: task.opening, script: task.script } };
  }

  protected override onUserTurn(agentMessage: string, turn: UserTurn): void {
    this.guard.onUserTurn(agentMessage, turn.text);
  }

  protected onTool(action: Action): TimeStep {
    if (action.tool === 'think') return this.observe('Thought recorded.');
    const violation = this.guard.check(action, this.db, this.transcript.userMessages(), this.stepCount);
    if (violation) return this.refuse(violation.message);
    if (action.tool === TRANSFER_TOOL) {
      this.transferred = true;
      return this.conclude('Transfer successful.', 'transferred');
    }
    let result: string;
    try {
      result = runRetailTool(this.db, action);
    } catch (err) {
      if (!(err instanceof RetailToolError)) throw err;
      const error: ActionErrorInfo = { code: err.code, message: err.message };
      return this.observe(`Error: ${err.message}`, 0, { error });
    }
    const late = this.guard.ran(action, result, this.stepCount);
    if (late) return this.refuse(late.message);
    return this.observe(result);
  }

  protected outcome(): { reward: number; success: boolean; info: Record<string, unknown> } {
    const task = this.task as RetailTask;
    const dbMatch = sameDb(this.db, task.goldDb) && this.transferred === task.goldTransferred;
    const missing = missingOutputs(this.transcript.agentMessages(), task.outputs);
    const policy = this.guard.violations.length === 0;
    const success = dbMatch && missing.length === 0 && policy;
    const diff = dbMatch ? [] : [...dbDiff(this.db, task.goldDb), ...(this.transferred !== task.goldTransferred ? ['transferred'] : [])];
    return {
      reward: success ? 1 : 0,
      success,
      info: {
        terms: { db_match: dbMatch, outputs: missing.length === 0, policy },
        db_diff: diff,
        outputs: { required: task.outputs, missing },
        violations: this.guard.violations,
      },
    };
  }

  /** The tasks of a split, or of both splits when omitted. */
  override listTasks(split?: Split): TaskInfo[] {
    return listRetailTasks(split).map(retailTaskInfo);
  }

  /** The number of tasks of a split (or both), without generating them. */
  override countTasks(split?: Split): number {
    return split ? RETAIL_TASK_COUNTS[split] : RETAIL_TASK_COUNTS.train + RETAIL_TASK_COUNTS.heldout;
  }

  private refuse(message: string): TimeStep {
    const error: ActionErrorInfo = { code: 'policy_violation', message };
    return this.observe(`Refused by policy: ${message}`, 0, { error });
  }
}
