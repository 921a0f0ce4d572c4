import type { Outcome } from '../core/trajectory.js';
import { terminated, truncated, unfinished } from './outcome.js';
import type { JsonObject } from './values.js';
import { isRecord, omitKeys, str } from './values.js';

/**
 * OpenHands vocabulary shared by the event-stream and resolver-output adapters.
 *
 * When an action carries no function call (older CodeAct runs parsed `<execute_bash>` tags; resolver
 * output flattens events), the action type is mapped to the CodeAct function it corresponds to, so both
 * OpenHands formats name tools alike: `run` → `execute_bash {command}`, `run_ipython` →
 * `execute_ipython_cell {code}`, `finish` → `finish`, `think` → `think {thought}`. Other action types keep
 * their own name, with their arguments (minus `thought`) as params.
 */

/** Argument keys that are OpenHands bookkeeping, not part of the agent's call. */
const BOOKKEEPING = ['thought', 'action', 'action_risk', 'is_confirmed', 'security_risk', 'confirmation_state', 'impl_source', 'keep_prompt', 'blocking', 'hidden', 'kernel_init_code', 'translated_ipython_code', 'timeout'];

/** The tool call an OpenHands action without function-call metadata stands for. */
export function actionToCall(actionType: string, args: JsonObject): { tool: string; params: JsonObject } {
  switch (actionType) {
    case 'run':
      return { tool: 'execute_bash', params: pick(args, ['command']) };
    case 'run_ipython':
      return { tool: 'execute_ipython_cell', params: pick(args, ['code']) };
    case 'finish': {
      const params = omitKeys(args, BOOKKEEPING);
      if (isRecord(params.outputs) && Object.keys(params.outputs).length === 0) delete params.outputs;
      return { tool: 'finish', params };
    }
    case 'think':
      return { tool: 'think', params: { thought: str(args.thought) ?? '' } };
    default:
      return { tool: actionType, params: omitKeys(args, BOOKKEEPING) };
  }
}

/** The bookkeeping arguments of an action (kept in step metadata). */
export function actionBookkeeping(args: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of BOOKKEEPING) if (key !== 'thought' && args[key] !== undefined) out[key] = args[key];
  return out;
}

/**
 * Outcome of an OpenHands episode, which OpenHands only implies: a last step `finish` →
 * terminated/`finished`; else the last agent state: `awaiting_user_input` or `finished` → terminated
 * with that reason, `rejected` → terminated/`rejected`, `error` → truncated/`error`, `stopped`/`paused`
 * → truncated/`stopped`; else `incomplete` when a call has no observation, `unknown` otherwise.
 */
export function openHandsOutcome(
  lastTool: string | undefined,
  lastState: string | undefined,
  openCalls: number,
  verdict: { success?: boolean; score?: number } = {},
): Outcome {
  if (lastTool === 'finish') return terminated('finished', verdict);
  switch (lastState) {
    case 'awaiting_user_input':
    case 'finished':
    case 'rejected':
      return terminated(lastState, verdict);
    case 'error':
      return truncated('error', verdict);
    case 'stopped':
    case 'paused':
      return truncated('stopped', verdict);
    default:
      return unfinished(openCalls > 0 ? 'incomplete' : 'unknown', verdict);
  }
}

function pick(obj: JsonObject, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const key of keys) if (obj[key] !== undefined) out[key] = obj[key];
  return out;
}
