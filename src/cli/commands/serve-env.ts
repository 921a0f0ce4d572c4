import { InvalidArgumentError, type Command } from 'commander';
import { spec } from '../../core/registry.js';
import { serveEnv } from '../../envs/openenv/serve.js';
import { parseInteger, parseKwargs, parsePositiveInteger } from '../options.js';
import { defined } from '../../core/defined.js';

interface ServeEnvOpts {
  env: string;
  host: string;
  port: number;
  kwargs?: Record<string, unknown>;
  maxSessions: number;
}

/** A TCP port, or 0 for any free one. */
function parsePortOrZero(value: string): number {
  const n = parseInteger(value);
  if (n < 0 || n > 65535) throw new InvalidArgumentError(`expected a port (0-65535; 0: any free one), got '${value}'`);
  return n;
}

/**
 * `gymflow serve-env`: a registered environment served over OpenEnv's protocol (HTTP `/health`, `/schema`,
 * `/metadata`, `/reset`, `/step`, `/state`, and a WebSocket session per connection at `/ws`) until Ctrl-C, for
 * trainers that speak OpenEnv (TRL, SkyRL, ART, openenv-core's `GenericEnvClient`). See src/envs/README.md.
 */
export function serveEnvCommand(program: Command): void {
  program
    .command('serve-env')
    .description('serve an environment over OpenEnv (HTTP + a WebSocket session per connection) for trainers that speak it (TRL, SkyRL, ART)')
    .requiredOption('--env <id>', 'environment id, e.g. gymflow/household-v0')
    .option('--host <address>', 'address to listen on (127.0.0.1: this machine only; 0.0.0.0: every interface)', '127.0.0.1')
    .option('--port <port>', 'port (0: any free one, printed)', parsePortOrZero, 8000)
    .option('--kwargs <json>', 'keyword arguments of the environment, as a JSON object (e.g. \'{"admissibleActions": true}\')', parseKwargs)
    .option('--max-sessions <n>', 'most WebSocket sessions at once (one environment each)', parsePositiveInteger, 64)
    .action(async (opts: ServeEnvOpts) => {
      spec(opts.env); // fails early with the list of registered ids
      const served = await serveEnv({
        envId: opts.env,
        host: opts.host,
        port: opts.port,
        maxSessions: opts.maxSessions,
        ...defined({ kwargs: opts.kwargs }),
        onSession: (event, active) => process.stderr.write(`gymflow serve-env: session ${event === 'open' ? 'opened' : 'closed'} (${active} active)\n`),
      });
      if (!['127.0.0.1', 'localhost', '::1'].includes(opts.host)) {
        process.stderr.write(`gymflow serve-env: listening on ${opts.host}: whoever reaches this machine can run episodes\n`);
      }
      console.log(`serving ${opts.env} over OpenEnv at ${served.url} (sessions: ${served.url.replace(/^http/, 'ws')}/ws); Ctrl-C to stop`);
      // Until a signal: this command's own handlers stop the server, and main's leave it be (see main.ts).
      const signal = await new Promise<NodeJS.Signals>((resolve) => {
        for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(s, () => resolve(s));
      });
      await served.close();
      if (signal !== 'SIGHUP') process.stderr.write(`gymflow serve-env: ${signal}: stopped\n`);
    });
}
