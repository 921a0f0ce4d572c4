/**
 * Fuzz targets of the parsers of untrusted values that need no file or server: the trajectory validator, the
 * pipeline configuration (value and file), the policies' tool-call parsers, and the sandbox tools' parameter
 * validation with the sandbox configuration.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse as yamlParse } from 'yaml';
import { ConfigError, SchemaError } from '../../src/core/errors.js';
import { PACKAGE_ROOT } from '../../src/core/package-root.js';
import { ToolValidator } from '../../src/core/tool-validator.js';
import { checkTrajectory, checkTrajectoryJson, parseJsonlLines, parseTrajectory, type Trajectory } from '../../src/core/trajectory.js';
import type { Action, JsonSchema } from '../../src/core/types.js';
import { sandboxTools } from '../../src/envs/sandbox/env.js';
import { GIT_SUBCOMMANDS } from '../../src/envs/sandbox/tools.js';
import { parsePipelineConfig } from '../../src/loop/config.js';
import { INVALID_TOOL_CALL, parseAnthropicContent, parseOpenAIMessage, parseReActText, parseToolCallText, RAW_LIMIT, type ParsedCall } from '../../src/policy/tool-call-parsing.js';
import { isConversionProblem } from '../../src/recorder/adapter.js';
import { convertFile } from '../../src/recorder/convert.js';
import { FIXTURES } from '../../src/recorder/__fixtures__/fixtures.js';
import { loadPipelineConfig } from '../../src/runtime/config-file.js';
import { resolveConfig } from '../../src/sandbox/config.js';
import { byteMutations, expectTypedFailure, expectTypedFailureAsync, type FuzzTarget, jsonMutations, jsonValue, mutateBytes, mutateJson, timed } from './harness.js';

const TRAJECTORY_KEYS = ['schemaVersion', 'id', 'task', 'envId', 'agent', 'steps', 'outcome', 'reward', 'metadata', 'index', 'action', 'tool', 'params', 'observation', 'startedAt', 'durationMs', 'success', 'score', 'terminated', 'truncated', 'reason', 'domain', 'instruction', 'name', 'model'];

function trajectoryTargets(): FuzzTarget[] {
  const valid: Trajectory[] = [];
  const setup = async (): Promise<void> => {
    if (valid.length > 0) return;
    for (const file of ['openhands/events-basic-interactions-no-tools.json', 'swe-agent/v1-fc-testrepo-1c2844.traj', 'claude-code/session-v2.1.17-permission-denials.jsonl']) {
      for await (const item of convertFile(join(FIXTURES, file))) if (!isConversionProblem(item)) valid.push(JSON.parse(JSON.stringify(item)) as Trajectory);
    }
    if (valid.length === 0) throw new Error('no valid trajectory to mutate');
  };
  const check = (value: unknown, place: string): void => {
    const err = expectTypedFailure('checkTrajectory', () => checkTrajectory(value, place), [SchemaError], place);
    if (err instanceof SchemaError) {
      for (const issue of err.issues) if (!issue.startsWith(`${place} $`)) throw new Error(`an issue does not start with the place and a JSON path: ${issue}`);
    }
  };
  /** What a check answers: the result's members in order (undefined and -0 visible), or the error's issues. */
  const answer = (f: () => unknown): string => {
    try {
      return `ok ${JSON.stringify(f(), (_k, v: unknown) => (v === undefined ? '<undefined>' : typeof v === 'number' && Object.is(v, -0) ? '<-0>' : v))}`;
    } catch (err) {
      return `error ${err instanceof SchemaError ? err.issues.join('\n') : String(err)}`;
    }
  };
  /** `checkTrajectoryJson` (in place when it can) answers exactly as `checkTrajectory` on a JSONL line's value. */
  const sameInPlace = (line: string): void => {
    const slow = answer(() => checkTrajectory(JSON.parse(line), 'f.jsonl:2'));
    const fast = answer(() => checkTrajectoryJson(JSON.parse(line), 'f.jsonl:2'));
    if (fast !== slow) throw new Error(`checkTrajectoryJson differs from checkTrajectory:\n${fast.slice(0, 400)}\n${slow.slice(0, 400)}`);
  };
  return [
    {
      name: 'trajectory/in-place',
      setup,
      property: () =>
        fc.property(fc.nat(), jsonMutations(TRAJECTORY_KEYS), fc.boolean(), (pick, mutations, shuffle) => {
          const t = valid[pick % valid.length] as Trajectory;
          const m = mutateJson(t, mutations);
          const line = JSON.stringify(m) as string | undefined;
          if (line === undefined) return;
          sameInPlace(line);
          // The same members in another order: zod's result has the schema's order, so no check is in place.
          if (shuffle && m !== null && typeof m === 'object' && !Array.isArray(m)) sameInPlace(JSON.stringify(Object.fromEntries(Object.entries(m).reverse())));
        }),
    },
    {
      name: 'trajectory/arbitrary',
      property: () => fc.property(jsonValue(TRAJECTORY_KEYS, 5), (v) => check(v, 'fuzz.jsonl:7')),
    },
    {
      name: 'trajectory/mutated',
      ciShare: 0.4,
      setup,
      property: () =>
        fc.property(fc.nat(), jsonMutations(TRAJECTORY_KEYS), (pick, mutations) => {
          const t = valid[pick % valid.length] as Trajectory;
          check(mutateJson(t, mutations), 'fuzz.jsonl:3');
          // The schema alone (no id check) answers the same way.
          expectTypedFailure('parseTrajectory', () => parseTrajectory(mutateJson(t, mutations), 'x.jsonl:1'), [SchemaError], 'x.jsonl:1');
        }),
    },
    {
      name: 'trajectory/jsonl-lines',
      property: () =>
        fc.property(fc.array(fc.oneof(fc.string({ maxLength: 40 }), jsonValue(TRAJECTORY_KEYS, 3).map((v) => JSON.stringify(v))), { maxLength: 8 }), (lines) => {
          const records = timed('parseJsonlLines', () => [...parseJsonlLines(lines, 'f.jsonl', parseTrajectory)]);
          for (const r of records) {
            if (!r.ok) for (const e of r.errors) if (!e.startsWith(`f.jsonl:${r.line} $`)) throw new Error(`line ${r.line}: an error does not name file:line and a JSON path: ${e}`);
          }
        }),
    },
  ];
}

const CONFIG_KEYS = ['name', 'env', 'policy', 'init', 'tiny', 'serve', 'collect', 'episodes', 'reward', 'export', 'train', 'command', 'eval', 'phases', 'max_iterations', 'target', 'retention', 'task_queues', 'split', 'config', 'benchmarks', 'seed', 'agent', 'checkpoint', 'format', 'kind'];

function examples(): { name: string; text: string; value: unknown }[] {
  const dirs = [join(PACKAGE_ROOT, 'examples'), join(PACKAGE_ROOT, 'examples', 'learning')];
  return dirs.flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => {
        const text = readFileSync(join(dir, f), 'utf8');
        return { name: f, text, value: yamlParse(text) as unknown };
      }),
  );
}

function configTargets(): FuzzTarget[] {
  const all = examples();
  let dir: string | undefined;
  let n = 0;
  return [
    {
      name: 'pipeline-config/arbitrary',
      property: () => fc.property(jsonValue(CONFIG_KEYS, 5), (v) => void expectTypedFailure('parsePipelineConfig', () => parsePipelineConfig(v, 'fuzz.yaml'), [ConfigError], 'fuzz.yaml')),
    },
    {
      name: 'pipeline-config/mutated-examples',
      property: () =>
        fc.property(fc.nat(), jsonMutations(CONFIG_KEYS), (pick, mutations) => {
          const ex = all[pick % all.length] as (typeof all)[number];
          expectTypedFailure('parsePipelineConfig', () => parsePipelineConfig(mutateJson(ex.value, mutations), ex.name), [ConfigError], ex.name);
        }),
    },
    {
      name: 'pipeline-config/mutated-files',
      ciShare: 0.25,
      cleanup: async () => {
        if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
        dir = undefined;
      },
      property: () =>
        fc.asyncProperty(fc.nat(), byteMutations(), async (pick, mutations) => {
          const ex = all[pick % all.length] as (typeof all)[number];
          dir ??= mkdtempSync(join(tmpdir(), 'gymflow-fuzz-config-'));
          const file = join(dir, `${n++}-${ex.name}`);
          writeFileSync(file, mutateBytes(Buffer.from(ex.text), mutations));
          try {
            const err = await expectTypedFailureAsync('loadPipelineConfig', () => loadPipelineConfig(file), [ConfigError], file);
            // Every problem of a file names its line.
            if (err !== undefined) {
              const lines = err.message.split('\n');
              const problems = lines[0]?.startsWith('invalid pipeline configuration') ? lines.slice(1).map((l) => l.trim()) : [lines[0] as string];
              for (const p of problems) if (!p.startsWith(`${file}:`) || !/^\d+[ :]/.test(p.slice(file.length + 1))) throw new Error(`a problem does not name file:line: ${p}`);
            }
          } finally {
            rmSync(file, { force: true });
          }
        }),
    },
  ];
}

/** A parse result must be a well-formed action; an unreadable call is the invalid-call action with its error. */
function checkParsed(what: string, r: ParsedCall): void {
  const { action } = r;
  if (typeof action.tool !== 'string' || action.tool.trim() === '' || action.tool !== action.tool.trim()) throw new Error(`${what}: tool ${JSON.stringify(action.tool)}`);
  if (action.params === null || typeof action.params !== 'object' || Array.isArray(action.params)) throw new Error(`${what}: params is not an object`);
  if (action.tool === INVALID_TOOL_CALL) {
    if (typeof r.error !== 'string' || r.error === '' || action.params.error !== r.error) throw new Error(`${what}: an invalid call without its error`);
    if (typeof action.params.raw !== 'string' || action.params.raw.length > RAW_LIMIT + 1) throw new Error(`${what}: raw output not kept within ${RAW_LIMIT} characters`);
  } else if (r.error !== undefined) throw new Error(`${what}: a valid call with an error`);
}

const TAGGY = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom('<tool_call>', '</tool_call>', '```json\n', '```', 'Thought: ', 'Action: ', 'Action Input: ', '\n', '{"name": "x", "arguments": {}}', '{"name":'),
);
const modelText = fc.array(TAGGY, { maxLength: 10 }).map((parts) => parts.join(''));

function toolCallTargets(): FuzzTarget[] {
  const argsValue = fc.dictionary(fc.string({ maxLength: 8 }), jsonValue([], 3), { maxKeys: 4 });
  return [
    {
      name: 'tool-calls/text',
      property: () =>
        fc.property(modelText, (text) => {
          checkParsed('parseToolCallText', timed('parseToolCallText', () => parseToolCallText(text)));
          checkParsed('parseReActText', timed('parseReActText', () => parseReActText(text)));
        }),
    },
    {
      name: 'tool-calls/round-trip',
      property: () =>
        // The format the trainer renders (ARCHITECTURE §6): text, then `<tool_call>{"name","arguments"}</tool_call>`.
        fc.property(fc.string({ maxLength: 30 }), fc.string({ minLength: 1, maxLength: 20 }), argsValue, (thought, name, args) => {
          fc.pre(name.trim() !== '' && !thought.includes('<tool_call>') && !JSON.stringify(args).includes('<tool_call>'));
          const r = parseToolCallText(`${thought}<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`);
          checkParsed('round trip', r);
          if (r.action.tool !== name.trim() || JSON.stringify(r.action.params) !== JSON.stringify(args)) throw new Error(`round trip gave ${JSON.stringify(r.action)}`);
        }),
    },
    {
      name: 'tool-calls/openai-anthropic',
      property: () =>
        fc.property(jsonValue(['content', 'tool_calls', 'type', 'function', 'name', 'arguments'], 4), jsonValue(['type', 'text', 'thinking', 'name', 'input', 'id', 'tool_use'], 4), (m, blocks) => {
          // What an SDK hands back is typed by the SDK, not checked: any JSON may arrive.
          const message = (m !== null && typeof m === 'object' && !Array.isArray(m) ? m : { content: m }) as Parameters<typeof parseOpenAIMessage>[0];
          checkParsed('parseOpenAIMessage', timed('parseOpenAIMessage', () => parseOpenAIMessage(message)));
          const content = (Array.isArray(blocks) ? blocks : [blocks]).filter((b) => b !== null && typeof b === 'object' && !Array.isArray(b) && typeof (b as { type?: unknown }).type === 'string');
          checkParsed('parseAnthropicContent', timed('parseAnthropicContent', () => parseAnthropicContent(content as Parameters<typeof parseAnthropicContent>[0])));
        }),
    },
  ];
}

/** Whether `v` has the JSON Schema type `type` (what `dispatchTool` casts to after validation). */
function hasType(v: unknown, schema: JsonSchema): boolean {
  switch (schema.type) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'array':
      return Array.isArray(v) && v.every((x) => (schema.items ? hasType(x, schema.items as JsonSchema) : true));
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return true;
  }
}

function sandboxTargets(): FuzzTarget[] {
  const tools = sandboxTools();
  const validator = new ToolValidator(tools);
  const keys = [...new Set(tools.flatMap((t) => Object.keys((t.parameters.properties ?? {}) as object)))];
  const paramValue = fc.oneof(jsonValue([], 2), fc.constantFrom(...GIT_SUBCOMMANDS, '../etc/passwd', '/work', -1, 0, 1e9, 3.5, ['--output=x'], ['--', 'a']));
  return [
    {
      name: 'sandbox/tool-params',
      property: () =>
        fc.property(fc.constantFrom(...tools.map((t) => t.name), 'exec', ''), fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 6 })), paramValue, { maxKeys: 5 }), (tool, params) => {
          const action: Action = { tool, params };
          const problem = timed('ToolValidator.check', () => validator.check(action));
          const spec = tools.find((t) => t.name === tool);
          if (problem !== undefined) {
            if (!problem.message.includes(`'${tool}'`)) throw new Error(`the error does not name the tool: ${problem.message}`);
            return;
          }
          if (spec === undefined) throw new Error(`unknown tool ${tool} accepted`);
          // Accepted params have the types dispatchTool casts them to.
          const props = (spec.parameters.properties ?? {}) as Record<string, JsonSchema>;
          for (const [k, v] of Object.entries(params)) {
            const s = props[k];
            if (s === undefined) throw new Error(`${tool}: unknown param ${k} accepted`);
            if (!hasType(v, s)) throw new Error(`${tool}.${k}: ${JSON.stringify(v)} accepted for type ${String(s.type)}`);
          }
          if (tool === 'git' && !(GIT_SUBCOMMANDS as readonly unknown[]).includes(params.subcommand)) throw new Error(`git subcommand ${JSON.stringify(params.subcommand)} accepted`);
        }),
    },
    {
      name: 'sandbox/config',
      property: () =>
        fc.property(jsonValue(['memoryMiB', 'cpus', 'workDirMiB', 'tmpMiB', 'execTimeoutS', 'outputCapBytes', 'pidsLimit', 'capDrop', 'labels', 'seccompProfile', 'image', 'network', 'user'], 2), (v) => {
          const overrides = (v !== null && typeof v === 'object' && !Array.isArray(v) ? v : { memoryMiB: v }) as Record<string, unknown>;
          expectTypedFailure('resolveConfig', () => resolveConfig(overrides), [ConfigError], 'sandbox config');
        }),
    },
  ];
}

/** The parsers' fuzz targets. */
export function parserTargets(): FuzzTarget[] {
  return [...trajectoryTargets(), ...configTargets(), ...toolCallTargets(), ...sandboxTargets()];
}
