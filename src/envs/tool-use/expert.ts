import type { Agent, AgentContext, AgentDecision } from '../../core/agent.js';
import { GymflowError } from '../../core/errors.js';
import type { Action, TaskInfo } from '../../core/types.js';
import type { AgentInfo } from '../../core/wrappers/recorder.js';
import { COLLECTIONS } from './extended-lookup.js';
import { aggregateCode, countCode, dateDiffCode, joinedCollection, rankCode, reverseCode, tableColumns, weekdayCode } from './python-code.js';
import type { PythonTaskSpec, TableQuery } from './python-tasks.js';
import { fromPythonRepr, parsePythonValue } from './python-tool.js';
import { getBankTask, isPythonTask } from './task-bank.js';
import type { EntityRef, ToolTaskSpec, ValueRef } from './tasks.js';

/**
 * A scripted solver for `gymflow/tool-use-v0` (and `gymflow/tool-use-python-v0`) that works only through the
 * tools. From the task id it recovers the task's *plan* (which entities, links, attributes and operation — what a
 * careful reader gets from the question), never its answer: every value comes from parsing `lookup`, `search`,
 * `calculator` and `python` observations, and arithmetic is done by the calculator tool — or, for the python
 * kinds, by Python code written over the tools' text (a table observation pasted in as a string, looked-up dates
 * and names: `python-code.ts`).
 */

/** A script: yields actions, receives each action's observation, ends after yielding `submit`. */
type Script<T> = Generator<Action, T, string>;

/** The value text after `— attribute:` in a lookup observation, or `undefined` for a miss. */
export function parseLookupObservation(observation: string): string | undefined {
  const m = /^.+ \((?:city|company|product|person)\) — [a-z0-9_]+: (.+)$/.exec(observation.trim());
  return m?.[1];
}

/** The name of the best-ranked search result of the given kind (`Velmora` from `… Velmora (city) — …`). */
export function parseSearchObservation(observation: string, kind: string): string | undefined {
  for (const line of observation.split('\n')) {
    const m = /^\d+\. \[[^\]]+\] (.+) \(([a-z]+)\) — /.exec(line);
    if (m && m[2] === kind) return m[1];
  }
  return undefined;
}

/** The number after `Result:` in a calculator observation. */
export function parseCalculatorObservation(observation: string): string | undefined {
  return /^Result: (\S+)$/.exec(observation.trim())?.[1];
}

/** The leading number of a value text (`42.50 crowns` → `42.50`). */
function leadingNumber(text: string): string | undefined {
  return /^-?\d+(?:\.\d+)?/.exec(text)?.[0];
}

class ScriptFailed extends GymflowError {
  constructor(message: string) {
    super('EXPERT_FAILED', message);
  }
}

function* resolveName(from: EntityRef): Script<string> {
  if ('entity' in from) return from.entity;
  const observation = yield { tool: 'search', params: { query: from.clue } };
  const name = parseSearchObservation(observation, from.kind);
  if (name === undefined) throw new ScriptFailed(`no ${from.kind} in search results for "${from.clue}"`);
  return name;
}

function* lookup(entity: string, attribute: string): Script<string> {
  const observation = yield { tool: 'lookup', params: { entity, attribute } };
  const value = parseLookupObservation(observation);
  if (value === undefined) throw new ScriptFailed(`lookup ${entity}.${attribute} failed: ${observation}`);
  return value;
}

function* resolveValue(ref: ValueRef): Script<string> {
  let name = yield* resolveName(ref.from);
  if (ref.via !== undefined) name = yield* lookup(name, ref.via);
  return yield* lookup(name, ref.attribute);
}

function* resolveNumber(ref: ValueRef): Script<string> {
  const text = yield* resolveValue(ref);
  const n = leadingNumber(text);
  if (n === undefined) throw new ScriptFailed(`expected a number, got '${text}'`);
  return n;
}

function* calculator(expression: string): Script<string> {
  const observation = yield { tool: 'calculator', params: { expression } };
  const result = parseCalculatorObservation(observation);
  if (result === undefined) throw new ScriptFailed(`calculator failed: ${observation}`);
  return result;
}

function* solve(spec: ToolTaskSpec, numeric: boolean): Script<void> {
  const [a, b] = spec.refs;
  let answer: string;
  if (!a) throw new ScriptFailed('task without values');
  switch (spec.op.op) {
    case 'value': {
      const text = yield* resolveValue(a);
      answer = numeric ? (leadingNumber(text) ?? text) : text;
      break;
    }
    case 'sum':
    case 'diff': {
      if (!b) throw new ScriptFailed('binary operation with one value');
      const x = yield* resolveNumber(a);
      const y = yield* resolveNumber(b);
      answer = yield* calculator(spec.op.op === 'sum' ? `${x} + ${y}` : `abs(${x} - ${y})`);
      break;
    }
    case 'discount': {
      const price = yield* resolveNumber(a);
      answer = yield* calculator(`round(${price} * ${spec.op.quantity} * (100 - ${spec.op.percent}) / 100, 2)`);
      break;
    }
  }
  yield { tool: 'submit', params: { answer } };
}

/** Runs code with the python tool; returns its value (a string's repr unquoted). */
function* python(code: string): Script<string> {
  const observation = yield { tool: 'python', params: { code } };
  const value = parsePythonValue(observation);
  if (value === undefined) throw new ScriptFailed(`python failed: ${observation.split('\n')[0] ?? ''}`);
  return fromPythonRepr(value);
}

/** Looks a table up (`cities` with the columns wanted) and returns the observation. */
function* table(collection: string, columns: readonly string[]): Script<string> {
  const observation = yield { tool: 'lookup', params: { entity: collection, attribute: columns.join(', ') } };
  if (!observation.startsWith('Table of ')) throw new ScriptFailed(`lookup of the ${collection} table failed: ${observation}`);
  return observation;
}

function* tables(q: TableQuery): Script<{ main: string; linked?: string }> {
  const main = yield* table(COLLECTIONS[q.collection].name, tableColumns(q));
  const other = joinedCollection(q.filter);
  if (other === undefined || q.filter === undefined) return { main };
  return { main, linked: yield* table(other, [q.filter.attribute]) };
}

function* solvePython(spec: PythonTaskSpec): Script<void> {
  let answer: string;
  switch (spec.kind) {
    case 'table-aggregate': {
      const { main, linked } = yield* tables(spec.table);
      answer = yield* python(aggregateCode(spec.table, spec.agg, main, linked));
      break;
    }
    case 'table-rank': {
      const { main, linked } = yield* tables(spec.table);
      answer = yield* python(rankCode(spec.table, spec.rank, spec.order, main, linked));
      break;
    }
    case 'date-diff': {
      const a = yield* resolveValue(spec.refs[0]);
      const b = yield* resolveValue(spec.refs[1]);
      answer = yield* python(dateDiffCode(a, b));
      break;
    }
    case 'date-weekday':
      answer = yield* python(weekdayCode(yield* resolveValue(spec.refs[0])));
      break;
    case 'string-count':
      answer = yield* python(countCode(yield* resolveValue(spec.refs[0]), spec.letter));
      break;
    case 'string-reverse':
      answer = yield* python(reverseCode(yield* resolveValue(spec.refs[0])));
      break;
  }
  yield { tool: 'submit', params: { answer } };
}

/** The expert agent for `gymflow/tool-use-v0` and `gymflow/tool-use-python-v0`. */
export class ToolUseExpert implements Agent {
  readonly info: AgentInfo = { name: 'tool-use-expert' };
  private script: Script<void> | undefined;
  private taskId: string | undefined;

  /** Starts the script for the task's plan (an unknown task id makes the agent submit `unknown`). */
  reset(task: TaskInfo): void {
    this.taskId = task.id;
    try {
      const t = getBankTask(task.id);
      this.script = isPythonTask(t) ? solvePython(t) : solve(t, t.answerType === 'number');
    } catch (err) {
      if (!(err instanceof GymflowError)) throw err;
      this.script = undefined;
    }
  }

  /** Feeds the latest observation to the script and returns its next tool call. */
  async act(ctx: AgentContext): Promise<AgentDecision> {
    // Callers that skip `reset` (or reuse the agent across tasks) still get a fresh script.
    if (this.taskId !== ctx.task.id || ctx.stepIndex === 0) this.reset(ctx.task);
    const script = this.script;
    const giveUp: AgentDecision = { action: { tool: 'submit', params: { answer: 'unknown' } } };
    if (!script) return giveUp;
    try {
      const next = ctx.stepIndex === 0 ? script.next() : script.next(ctx.observation);
      if (next.done) return giveUp;
      return { action: next.value };
    } catch (err) {
      if (!(err instanceof ScriptFailed)) throw err;
      this.script = undefined;
      return { ...giveUp, meta: { thought: err.message } };
    }
  }
}
