/**
 * The `gymflow` command tree: the commands, each loaded only when it runs, and the program for a command line.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Help } from 'commander';
import { PACKAGE_ROOT } from '../core/package-root.js';

const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };

/**
 * A top-level command as `gymflow --help` lists it, and how to load it. Each command's module is imported
 * only when that command runs: `gymflow envs` must not load onnxruntime, the Temporal SDK, dockerode or the
 * LLM clients, which other commands need (loading them all took most of the CLI's start-up).
 */
export interface CommandEntry {
  /** The command's name. */
  readonly name: string;
  /** Its line in `gymflow --help`: name, `[options]` when it has any, its arguments. */
  readonly term: string;
  /** Its description, as its module sets it. */
  readonly description: string;
  /** Imports its module; the function adds the command to a program. */
  readonly load: () => Promise<(program: Command) => unknown>;
  /**
   * The command registers the built-in environments itself, when it needs them (`envs` prints the build's listing
   * of them instead); for the others `main` registers them before the command runs.
   */
  readonly registersEnvs?: true;
}

/** gymflow's commands, in `--help` order. `program.test.ts` checks each against its module. */
export const COMMANDS: readonly CommandEntry[] = [
  { name: 'envs', term: 'envs [options]', description: 'list the registered environments', load: async () => (await import('./commands/envs.js')).envsCommand, registersEnvs: true },
  { name: 'run-episode', term: 'run-episode [options]', description: 'run one episode and print (or write) its trajectory', load: async () => (await import('./commands/run-episode.js')).runEpisodeCommand },
  {
    name: 'serve-env',
    term: 'serve-env [options]',
    description: 'serve an environment over OpenEnv (HTTP + a WebSocket session per connection) for trainers that speak it (TRL, SkyRL, ART)',
    load: async () => (await import('./commands/serve-env.js')).serveEnvCommand,
  },
  { name: 'record', term: 'record', description: 'the standard trajectory format and agent-log conversion', load: async () => (await import('./commands/record.js')).recordCommand },
  { name: 'profiles', term: 'profiles', description: 'domain profiles: tools, terminal tools, outcome rule, rubric weights', load: async () => (await import('./commands/profiles.js')).profilesCommand },
  { name: 'reward', term: 'reward', description: 'process reward: score trajectories, calibrate to human labels, preferences, leaderboards', load: async () => (await import('./commands/reward.js')).rewardCommand },
  { name: 'sandbox', term: 'sandbox', description: 'Docker sandboxes for gymflow/sandbox-v0: image, create, exec, reset, snapshot, replay, destroy, ls, gc', load: async () => (await import('./commands/sandbox.js')).sandboxCommand },
  { name: 'swe', term: 'swe', description: 'SWE-bench images (gymflow/swe-v0, eval --benchmark swe-bench): build ahead, list, prune', load: async () => (await import('./commands/swe.js')).sweCommand },
  { name: 'collect', term: 'collect [options]', description: 'run many episodes in parallel and record them as a trajectory set', load: async () => (await import('./commands/collect.js')).collectCommand },
  { name: 'export', term: 'export [options]', description: 'export trajectories as a training dataset (see docs/datasets.md)', load: async () => (await import('./commands/export.js')).exportCommand },
  { name: 'store', term: 'store', description: 'the content-addressed artifact store (see docs/store.md)', load: async () => (await import('./commands/store.js')).storeCommand },
  { name: 'eval', term: 'eval [options]', description: 'evaluate an agent: n seeded episodes on held-out tasks, metrics with confidence intervals', load: async () => (await import('./commands/eval.js')).evalCommand },
  { name: 'compare', term: 'compare [options] <results...>', description: 'compare eval results (from `gymflow eval --out`): significance tests and a leaderboard', load: async () => (await import('./commands/compare.js')).compareCommand },
  {
    name: 'demo',
    term: 'demo [options]',
    description: 'run the closed training loop (Temporal dev server + workers + trainingLoop on examples/demo.yaml); --envs: a quick tour of the environments',
    load: async () => (await import('./commands/demo.js')).demoCommand,
  },
  {
    name: 'cluster',
    term: 'cluster',
    description: 'PostgreSQL, the object store, the Temporal server, its Web UI and the CPU and GPU workers as background processes on this machine (see docs/operations.md)',
    load: async () => (await import('./commands/cluster.js')).clusterCommand,
  },
  { name: 'dev', term: 'dev [options]', description: 'run a local Temporal dev server (SQLite under .gymflow/, Web UI) and the CPU and GPU workers until Ctrl-C', load: async () => (await import('./commands/dev.js')).devCommand },
  {
    name: 'mcp',
    term: 'mcp [options]',
    description: "serve gymflow's tools to LLM agents over MCP: stdio (default) or Streamable HTTP (--http); see docs/mcp.md",
    load: async () => (await import('./commands/mcp.js')).mcpCommand,
  },
  { name: 'pipeline', term: 'pipeline', description: 'start, watch and steer training runs on Temporal (see docs/operations.md)', load: async () => (await import('./commands/pipeline.js')).pipelineCommand },
];

/** The program without commands: name, description, version, global options. */
function baseProgram(): Command {
  return new Command('gymflow')
    .description('Train tool-using LLM agents with reinforcement learning')
    .version(pkg.version)
    .option('--verbose', 'print stack traces on errors')
    .showHelpAfterError('(run with --help for usage)');
}

/**
 * The command a command line runs: its first word that is not an option (the global options take no value),
 * or the word after `help`. Undefined for `gymflow`, `gymflow --help`, `gymflow --version`.
 */
export function commandName(args: readonly string[]): string | undefined {
  const words = args.filter((a) => !a.startsWith('-'));
  return words[0] === 'help' && words[1] !== undefined ? words[1] : words[0];
}

/**
 * The `gymflow` command tree for a command line (`args`: what follows `gymflow`). A known command is loaded,
 * and only that one; otherwise (no command, `--help`, a mistyped one) every command is there by name and
 * description, enough for the help and for commander's "did you mean". `args` undefined: every command loaded.
 */
export async function buildProgram(args?: readonly string[]): Promise<Command> {
  const program = baseProgram();
  const name = args === undefined ? undefined : commandName(args);
  const entry = COMMANDS.find((c) => c.name === name);
  if (entry !== undefined) {
    (await entry.load())(program);
  } else if (args === undefined) {
    for (const c of COMMANDS) (await c.load())(program);
  } else {
    for (const c of COMMANDS) program.command(c.name).description(c.description);
    const terms = new Map(COMMANDS.map((c) => [c.name, c.term]));
    program.configureHelp({
      subcommandTerm(this: Help, cmd: Command): string {
        return terms.get(cmd.name()) ?? Help.prototype.subcommandTerm.call(this, cmd);
      },
    });
  }
  return program;
}
