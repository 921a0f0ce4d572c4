import type { Command } from 'commander';
import { ConfigError } from '../../core/errors.js';
import { parseNonNegativeInteger, parsePositiveInteger } from '../options.js';
import { defined } from '../../core/defined.js';

/** The port `gymflow mcp --http` listens on by default. */
export const DEFAULT_MCP_PORT = 8770;

interface McpOpts {
  http?: boolean;
  host: string;
  port: number;
  token?: string;
  allowedHost: string[];
  root?: string;
  address?: string;
  namespace?: string;
  maxInlineBytes?: number;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * `gymflow mcp`: gymflow's tools and resources for LLM agents over the Model Context Protocol — on stdio (what
 * Claude Code and Claude Desktop start), or Streamable HTTP with `--http`. Paths are confined to `--root`. Sandboxes
 * the server made are removed when it stops (the client disconnects, or SIGINT / SIGTERM).
 */
export function mcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('serve gymflow\'s tools to LLM agents over MCP: stdio (default) or Streamable HTTP (--http); see docs/mcp.md')
    .option('--http', 'serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio')
    .option('--host <address>', 'address to bind with --http (another than loopback needs --token)', '127.0.0.1')
    .option('--port <n>', `port with --http (0: any free port, printed on stderr)`, parseNonNegativeInteger, DEFAULT_MCP_PORT)
    .option('--token <token>', 'bearer token every HTTP request must carry (default: $GYMFLOW_MCP_TOKEN)')
    .option('--allowed-host <name>', 'a host name clients may use in the Host header besides the loopback names (repeatable)', collect, [])
    .option('--root <dir>', 'workspace root: tools read and write only inside it (default: the working directory)')
    .option('--address <host:port>', 'Temporal frontend for the pipeline tools (default: $TEMPORAL_ADDRESS, else 127.0.0.1:7233)')
    .option('--namespace <ns>', 'Temporal namespace for the pipeline tools (default: $TEMPORAL_NAMESPACE, else default)')
    .option('--max-inline-bytes <n>', 'results larger than this (JSON) are written to .gymflow/mcp/ and returned as a reference', parsePositiveInteger)
    .action(async (opts: McpOpts, cmd: Command) => {
      if (!opts.http) {
        for (const flag of ['host', 'port', 'token', 'allowedHost'] as const) {
          if (cmd.getOptionValueSource(flag) === 'cli') throw new ConfigError(`--${flag === 'allowedHost' ? 'allowed-host' : flag} is for --http; without it the server speaks stdio`);
        }
      }
      // stdout carries the protocol: anything a module prints goes to stderr instead.
      if (!opts.http) for (const m of ['log', 'info', 'debug', 'warn'] as const) console[m] = console.error;
      const { WorkspaceRoot } = await import('../mcp/root.js');
      const { createMcpServer, createToolContext } = await import('../mcp/server.js');
      const root = await WorkspaceRoot.open(opts.root);
      const ctx = createToolContext({
        root,
        ...defined({ maxInlineBytes: opts.maxInlineBytes }),
        temporal: defined({ address: opts.address, namespace: opts.namespace }),
      });
      let stop: () => Promise<void>;
      const stopped = new Promise<void>((resolve) => {
        let stopping = false;
        stop = async () => {
          if (stopping) return;
          stopping = true;
          const { removed, failed } = await ctx.sandboxes.closeAll();
          if (removed > 0 || failed.length > 0) process.stderr.write(`gymflow mcp: removed ${removed} sandbox(es)${failed.length > 0 ? `; could not remove ${failed.join(', ')} (\`gymflow sandbox gc\` removes them)` : ''}\n`);
          resolve();
        };
      });
      if (opts.http) {
        const { serveHttp } = await import('../mcp/http.js');
        const token = opts.token ?? process.env['GYMFLOW_MCP_TOKEN'];
        const serving = await serveHttp({ host: opts.host, port: opts.port, allowedHosts: opts.allowedHost, makeServer: () => createMcpServer(ctx), ...defined({ token }) });
        process.stderr.write(`gymflow mcp: serving Streamable HTTP at ${serving.url} (root ${root.dir}${token === undefined ? '' : ', bearer token required'}); Ctrl-C stops\n`);
        const previous = stop!;
        stop = async () => {
          await serving.close();
          await previous();
        };
      } else {
        const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
        const server = createMcpServer(ctx);
        const transport = new StdioServerTransport();
        // The client closing its end of stdin ends the session.
        process.stdin.once('end', () => void server.close().finally(() => void stop()));
        await server.connect(transport);
        process.stderr.write(`gymflow mcp: serving stdio (root ${root.dir})\n`);
      }
      for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop());
      await stopped;
      process.exit(0);
    });
}
