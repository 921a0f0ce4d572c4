/**
 * The MCP server's contract, tool by tool, through the SDK's own `Client` over an in-memory transport: every tool has
 * a description and a strict input JSON Schema; missing, wrong-typed and unknown arguments, paths outside the root and
 * sandbox ids that do not exist come back as tool results with `isError` that name the argument — and the server
 * keeps answering. The real-server runs (stdio, HTTP, Docker, Temporal, the Python client) are tests/mcp*.test.ts.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trajectoryJsonSchema } from '../../core/trajectory.js';
import { registerBuiltinEnvs } from '../../envs/register.js';
import { WorkspaceRoot } from './root.js';
import { createMcpServer, createToolContext } from './server.js';
import { defined } from '../../core/defined.js';

/** The tools the issue names, under these exact names. */
const SEED_TOOLS = [
  'create_sandbox',
  'execute_tool',
  'reset_sandbox',
  'replay_trajectory',
  'sandbox_snapshot',
  'convert_logs',
  'validate_logs',
  'get_schema',
  'recorder_diff',
  'score_trajectory',
  'build_preferences',
  'calibrate_reward',
  'list_rubrics',
  'reward_leaderboard',
  'run_pipeline',
  'export_dataset',
  'process_log',
  'process_logs_batch',
  'pipeline_status',
];
/** What an agent driving gymflow needs next. */
const NEXT_TOOLS = ['list_environments', 'run_episode', 'evaluate_agent', 'compare_evaluations', 'pause_pipeline', 'resume_pipeline', 'cancel_pipeline', 'list_pipelines', 'destroy_sandbox', 'list_sandboxes'];

/** A client connected to a fresh server on `root` through an in-memory transport. */
async function connect(root: string, maxInlineBytes?: number): Promise<Client> {
  const ctx = createToolContext({ root: await WorkspaceRoot.open(root), ...defined({ maxInlineBytes }) });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(ctx).connect(serverSide);
  const client = new Client({ name: 'gymflow-test', version: '0' });
  await client.connect(clientSide);
  return client;
}

/** A tool's error text; fails the test when the call did not fail. */
async function errorOf(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  expect(r.isError, `${name}(${JSON.stringify(args)}) should fail, got: ${text.slice(0, 300)}`).toBe(true);
  return text;
}

/** A value of another JSON type than the property's schema asks for. */
function wrongValue(prop: Record<string, unknown>): unknown {
  switch (prop['type']) {
    case 'string':
      return 42;
    case 'integer':
    case 'number':
      return 'seven';
    case 'boolean':
      return 'yes';
    case 'array':
      return 'not-a-list';
    case 'object':
      return 'not-an-object';
    default:
      return null; // a union (e.g. a path or an inline object): null is neither
  }
}

describe('the gymflow MCP server (in-memory transport)', () => {
  let dir = '';
  let client: Client;
  let tools: Tool[] = [];

  beforeAll(async () => {
    registerBuiltinEnvs();
    dir = mkdtempSync(join(tmpdir(), 'gymflow-mcp-unit-'));
    mkdirSync(join(dir, 'ws', 'logs'), { recursive: true });
    mkdirSync(join(dir, 'ws', 'clean'));
    writeFileSync(join(dir, 'ws', 'clean', 'run.jsonl'), '{}\n');
    mkdirSync(join(dir, 'outside'));
    writeFileSync(join(dir, 'outside', 'run.jsonl'), '{}\n');
    symlinkSync(join(dir, 'outside', 'run.jsonl'), join(dir, 'ws', 'logs', 'link-out.jsonl'));
    client = await connect(join(dir, 'ws'));
    tools = (await client.listTools()).tools;
  });
  afterAll(async () => {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the seed tools under their exact names and what comes next, each with a description and a strict input schema', () => {
    const names = tools.map((t) => t.name);
    for (const n of [...SEED_TOOLS, ...NEXT_TOOLS]) expect(names).toContain(n);
    expect(names).toHaveLength(SEED_TOOLS.length + NEXT_TOOLS.length);
    for (const t of tools) {
      expect(t.description?.length ?? 0, t.name).toBeGreaterThan(60);
      expect(t.inputSchema.type, t.name).toBe('object');
      expect((t.inputSchema as { additionalProperties?: unknown }).additionalProperties, t.name).toBe(false);
      for (const [p, s] of Object.entries(t.inputSchema.properties ?? {})) expect((s as { description?: string }).description, `${t.name}.${p}`).toBeTruthy();
    }
    // The judge's arguments are the judge configuration's own zod schema (src/reward/judge/config.ts).
    const judge = (tools.find((t) => t.name === 'score_trajectory')?.inputSchema.properties as Record<string, { properties?: Record<string, unknown> }>)['judge'];
    expect(Object.keys(judge?.properties ?? {})).toEqual(expect.arrayContaining(['provider', 'model', 'baseURL', 'cachePath']));
  });

  it('answers missing, wrong-typed and unknown arguments of every tool with an error naming the argument', async () => {
    for (const t of tools) {
      const required = (t.inputSchema.required as string[] | undefined) ?? [];
      if (required.length > 0) {
        const text = await errorOf(client, t.name, {});
        for (const r of required) expect(text, `${t.name} without ${r}`).toContain(r);
      }
      const [first, schema] = Object.entries(t.inputSchema.properties ?? {})[0] ?? [];
      if (first !== undefined) {
        const text = await errorOf(client, t.name, { [first]: wrongValue(schema as Record<string, unknown>) });
        expect(text, `${t.name} with a wrong ${first}`).toContain(first);
      }
      expect(await errorOf(client, t.name, { no_such_argument: 1 })).toMatch(/no_such_argument/);
    }
    // After all that the server still answers.
    expect(((await client.callTool({ name: 'list_sandboxes', arguments: {} })) as CallToolResult).isError).toBeFalsy();
  });

  it('refuses every path outside the workspace root, by .., absolute path or link, naming the argument', async () => {
    const outside: [string, Record<string, unknown>, string][] = [
      ['create_sandbox', { tasks_file: '../outside/tasks.jsonl' }, 'tasks_file'],
      ['replay_trajectory', { trajectory: '../outside/run.jsonl' }, 'trajectory'],
      ['replay_trajectory', { trajectory: 'logs/link-out.jsonl' }, 'trajectory'],
      ['convert_logs', { path: '..' }, 'path'],
      ['convert_logs', { path: 'clean', out: join(dir, 'outside', 'x.jsonl') }, 'out'],
      ['validate_logs', { path: '/etc/passwd' }, 'path'],
      ['validate_logs', { path: 'logs' }, 'path'], // the link inside leads out
      ['recorder_diff', { a: '../outside/run.jsonl', b: '../outside/run.jsonl' }, 'a'],
      ['score_trajectory', { file: 'logs/link-out.jsonl', domain: 'coding' }, 'file'],
      ['process_log', { path: '../outside/run.jsonl', domain: 'coding' }, 'path'],
      ['process_logs_batch', { path: '../outside', domain: 'coding' }, 'path'],
      ['build_preferences', { file: '../outside/run.jsonl' }, 'file'],
      ['calibrate_reward', { labels: '../outside/run.jsonl', scored: 'logs' }, 'labels'],
      ['reward_leaderboard', { file: '/etc/hostname' }, 'file'],
      ['export_dataset', { format: 'sft', in: ['../outside/run.jsonl'], out: 'sft.jsonl' }, 'in[0]'],
      ['export_dataset', { format: 'sft', in: ['x'], out: '../sft.jsonl' }, 'out'],
      ['run_episode', { env: 'gymflow/tool-use-v0', out: '../ep.jsonl' }, 'out'],
      ['evaluate_agent', { env: 'gymflow/tool-use-v0', agent: 'expert', out: '../e.json' }, 'out'],
      ['evaluate_agent', { env: 'gymflow/tool-use-v0', agent: 'local:../outside' }, 'agent'],
      ['compare_evaluations', { results: ['../outside/a.json', '../outside/b.json'] }, 'results[0]'],
      ['run_pipeline', { config: '../outside/p.yaml' }, 'config'],
    ];
    for (const [name, args, field] of outside) {
      const text = await errorOf(client, name, args);
      expect(text, `${name}(${JSON.stringify(args)})`).toMatch(new RegExp(`${field.replace(/[[\]]/g, '\\$&')}( \\(in [^)]*\\))?: .*(outside the workspace root|a link to nothing)`));
    }
  });

  it('names the sandbox id a call gives when the server holds no such sandbox', async () => {
    for (const [name, extra] of [
      ['execute_tool', { tool: 'shell', params: { command: 'true' } }],
      ['reset_sandbox', {}],
      ['sandbox_snapshot', {}],
      ['destroy_sandbox', {}],
    ] as const) {
      expect(await errorOf(client, name, { sandbox_id: 'sbx-00000000', ...extra })).toMatch(/sandbox_id: no sandbox 'sbx-00000000' in this server \(it holds none\); create_sandbox makes one/);
    }
  });

  it('names the field, or the file and line, of bad values past the schema', async () => {
    expect(await errorOf(client, 'score_trajectory', { trajectory: { id: 'x' }, domain: 'coding' })).toMatch(/trajectory \$\.\w+/);
    expect(await errorOf(client, 'score_trajectory', { file: 'x', trajectory: {}, domain: 'coding' })).toMatch(/give exactly one of trajectory .* and file/);
    expect(await errorOf(client, 'list_rubrics', { domain: 'nope' })).toMatch(/domain: unknown domain profile 'nope'; known: .*coding/);
    expect(await errorOf(client, 'run_episode', { env: 'acme/nope-v0' })).toMatch(/env: .*acme\/nope-v0/);
    expect(await errorOf(client, 'convert_logs', { path: 'logs', format: 'nope' })).toMatch(/format nope: unknown format; known: gymflow, swe-agent/);
    expect(await errorOf(client, 'run_pipeline', { config: { name: 'x' } })).toMatch(/config \$\.env/);
    writeFileSync(join(dir, 'ws', 'bad.yaml'), 'name: x\nenv: gymflow/tool-use-v0\nmax_iterations: lots\n');
    expect(await errorOf(client, 'run_pipeline', { config: 'bad.yaml' })).toMatch(/bad\.yaml:3 \$\.max_iterations/);
  });

  it('writes a result larger than the inline limit to a file under the root and returns a reference', async () => {
    const small = await connect(join(dir, 'ws'), 1000);
    try {
      const r = (await small.callTool({ name: 'get_schema', arguments: {} })) as CallToolResult;
      expect(r.isError).toBeFalsy();
      const ref = r.structuredContent as { resultFile: string; resultBytes: number };
      expect(ref.resultFile).toMatch(/^\.gymflow\/mcp\/get_schema-.*\.json$/);
      expect(JSON.parse(readFileSync(join(dir, 'ws', ref.resultFile), 'utf8'))).toEqual({ schema: trajectoryJsonSchema() });
      expect(r.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining(`the full result (${ref.resultBytes} bytes of JSON) is in ${ref.resultFile}`) });
    } finally {
      await small.close();
    }
  });

  it('serves the trajectory schema, the domain profiles and the environment specs as resources', async () => {
    const listed = (await client.listResources()).resources.map((r) => r.uri);
    expect(listed).toEqual(expect.arrayContaining(['gymflow://schema/trajectory', 'gymflow://profiles/coding', 'gymflow://envs/gymflow/sandbox-v0', 'gymflow://envs/gymflow/tool-use-v0']));
    const read = async (uri: string): Promise<Record<string, unknown>> => {
      const c = (await client.readResource({ uri })).contents[0];
      return JSON.parse(c && 'text' in c ? c.text : '{}') as Record<string, unknown>;
    };
    expect(await read('gymflow://schema/trajectory')).toEqual(trajectoryJsonSchema());
    expect(await read('gymflow://profiles/coding')).toMatchObject({ name: 'coding', outcome: expect.anything() });
    const env = await read('gymflow://envs/gymflow/tool-use-v0');
    expect(env).toMatchObject({ id: 'gymflow/tool-use-v0', agents: expect.arrayContaining(['random', 'expert']) });
    expect((env['tools'] as { name: string }[]).length).toBeGreaterThan(0);
    await expect(client.readResource({ uri: 'gymflow://profiles/nope' })).rejects.toThrow(/unknown domain profile 'nope'/);
  });
});
