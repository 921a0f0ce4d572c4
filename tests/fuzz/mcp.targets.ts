/**
 * Fuzz target of the MCP server's tool handlers (src/cli/mcp/): any arguments, built from each tool's own argument
 * names with values of any JSON type and hostile paths, to every tool that needs neither a Temporal server nor a
 * Docker engine, through a real `McpServer` over the SDK's in-memory transport. Every call is answered (a result or
 * an error that names the tool), within the case limit; the server stays up; nothing outside the workspace root is
 * written and the files already in it are unchanged.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { WorkspaceRoot } from '../../src/cli/mcp/root.js';
import { Rng } from '../../src/core/rng.js';
import { sampleObject } from '../../src/core/schema-sample.js';
import type { JsonSchema } from '../../src/core/types.js';
import { createMcpServer, createToolContext } from '../../src/cli/mcp/server.js';
import { registerBuiltinEnvs } from '../../src/envs/register.js';
import { jsonValue, timedAsync, type FuzzTarget } from './harness.js';

/**
 * Tools left out: they reach a Temporal server (the pipeline tools) or create containers (the sandbox tools), so a
 * case that passes validation would start real runs or containers; their argument validation is the same schema path
 * the fuzzed tools take, and src/cli/mcp/server.test.ts checks it for each of them.
 */
const OUT_OF_SCOPE = /pipeline|sandbox|replay_trajectory|execute_tool/;

/** Paths an agent might send: inside, outside by `..`, absolute, through a link out, odd bytes, the seed files. */
const PATHS = ['seed/run.jsonl', 'seed', '../outside/run.jsonl', '/etc/passwd', 'links/out.jsonl', 'a\u0000b', '', '.', '.gymflow/../../x', 'new/out.jsonl', 'x'.repeat(300)];

/** Every file below `dir` with its content, for the "unchanged" check. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.set(p, readFileSync(p, 'latin1'));
    }
  };
  walk(dir);
  return out;
}

/** The MCP target: one server and client for the run, in a scratch workspace with a seed file and a link out of it. */
export function mcpTargets(): FuzzTarget[] {
  let dir = '';
  let client: Client | undefined;
  let tools: Tool[] = [];
  let seedBefore = new Map<string, string>();
  let outsideBefore = new Map<string, string>();
  const setup = async (): Promise<void> => {
    if (client) return;
    registerBuiltinEnvs();
    dir = mkdtempSync(join(tmpdir(), 'gymflow-fuzz-mcp-'));
    mkdirSync(join(dir, 'ws', 'seed'), { recursive: true });
    mkdirSync(join(dir, 'ws', 'links'));
    mkdirSync(join(dir, 'outside'));
    writeFileSync(join(dir, 'ws', 'seed', 'run.jsonl'), '{"not": "a trajectory"}\n');
    writeFileSync(join(dir, 'outside', 'run.jsonl'), '{}\n');
    symlinkSync(join(dir, 'outside', 'run.jsonl'), join(dir, 'ws', 'links', 'out.jsonl'));
    seedBefore = snapshot(join(dir, 'ws', 'seed'));
    outsideBefore = snapshot(join(dir, 'outside'));
    // Pipeline tools are out of scope; should one be reached anyway, nothing listens here.
    const ctx = createToolContext({ root: await WorkspaceRoot.open(join(dir, 'ws')), temporal: { address: '127.0.0.1:9' } });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createMcpServer(ctx).connect(serverSide);
    client = new Client({ name: 'gymflow-fuzz', version: '0' });
    await client.connect(clientSide);
    tools = (await client.listTools()).tools.filter((t) => !OUT_OF_SCOPE.test(t.name));
  };
  const cleanup = async (): Promise<void> => {
    await client?.close();
    client = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
  const value = (keys: string[]): fc.Arbitrary<unknown> => fc.oneof(jsonValue(keys, 3), fc.constantFrom(...PATHS), fc.constantFrom(-1, 0, 1e9, 0.5, true));
  return [
    {
      name: 'mcp/tools-call',
      ciShare: 0.1,
      setup,
      cleanup,
      property: () =>
        fc.asyncProperty(fc.nat(), fc.nat(), fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 4 }), fc.context(), async (toolIndex, shapeSeed, picks, fcCtx) => {
          const c = client as Client;
          const tool = tools[toolIndex % tools.length] as Tool;
          const names = Object.keys(tool.inputSchema.properties ?? {});
          // Two cases in three start from arguments of the schema's shape, so that most reach the handler; the picks
          // then put hostile values (paths out of the root, wrong types) or unknown names over some of them.
          const args: Record<string, unknown> = shapeSeed % 3 === 2 ? {} : sampleObject(tool.inputSchema as JsonSchema, new Rng(shapeSeed));
          for (const [k, v] of picks) {
            const name = names.length > 0 && k % 5 !== 4 ? (names[k % names.length] as string) : `unknown_${k % 3}`;
            args[name] = fc.sample(value(names), { seed: v, numRuns: 1 })[0];
          }
          fcCtx.log(`${tool.name}(${JSON.stringify(args).slice(0, 300)})`);
          let text: string;
          try {
            const r = (await timedAsync(tool.name, c.callTool({ name: tool.name, arguments: args }))) as CallToolResult;
            text = r.content.map((x) => (x.type === 'text' ? x.text : '')).join('\n');
            if (r.isError && !text.startsWith(`${tool.name}:`) && !text.includes(tool.name)) throw new Error(`${tool.name}: an error result that does not name the tool: ${text.slice(0, 200)}`);
          } catch (err) {
            // The SDK answers arguments that fail the schema with a JSON-RPC error naming the tool; nothing else may throw.
            if (!(err instanceof McpError) || !err.message.includes(tool.name)) throw err;
            text = err.message;
          }
          if (text.trim() === '') throw new Error(`${tool.name}: an answer without text`);
          // The server is still up, and nothing stored changed.
          await timedAsync('ping', c.ping());
          const seed = snapshot(join(dir, 'ws', 'seed'));
          const outside = snapshot(join(dir, 'outside'));
          for (const [before, after, where] of [[seedBefore, seed, 'the workspace seed'], [outsideBefore, outside, 'outside the root']] as const) {
            if (after.size !== before.size || [...before].some(([p, v]) => after.get(p) !== v)) {
              throw new Error(`${tool.name}(${JSON.stringify(args).slice(0, 200)}) changed files ${where}: ${[...after.keys()].join(', ')}`);
            }
          }
        }),
    },
  ];
}
