/**
 * Tests that need a real component (Temporal server, Docker engine, Python trainer) declare it here, so that
 * a missing component skips them *loudly* and CI fails instead of passing with holes.
 *
 * The convention:
 * - the suite or test name carries the tag `[requires:<component>]` (these helpers append it), or a runtime
 *   skip's note does (`skipMissing(ctx, 'docker', why)`);
 * - when the component is missing, the helper prints `SKIPPED: <what> not available: <why> [requires:<c>]`;
 * - `tests/support/skip-reporter.ts` lists every skipped tagged test at the end of the run and, when `CI` is
 *   set, fails the run.
 *
 * @example
 * const docker = requires.docker();
 * docker.describe('sandbox exec', () => {
 *   it('runs /bin/true', async () => { ... });
 * });
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext, type TestFunction } from 'vitest';
import { TOKENS_WASM } from '../../src/reward/rules/token-index.js';
import { temporalBinary } from './temporal.js';
import { weedBinary } from './seaweedfs.js';
import { PACKAGE_ROOT } from '../../src/core/package-root.js';
import { gymflowCache, missingClusterBinaries, postgresBinaries } from '../../src/runtime/cluster/binaries.js';

/** A real component that some tests need. */
export type Component = 'temporal' | 'docker' | 'python' | 'wasm' | 'compose' | 'cluster' | 'seaweedfs' | 'chromium';

/** The tag in a test or suite name (or skip note) that marks it as needing `component`. */
export function requiresTag(component: Component): `[requires:${Component}]` {
  return `[requires:${component}]`;
}

/** Human names used in the skip warning. */
const describeComponent: Record<Component, string> = {
  temporal: 'Temporal CLI (dev server)',
  docker: 'Docker engine',
  python: 'Python trainer environment',
  wasm: 'WebAssembly modules (scripts/build-wasm.sh, with clang and lld)',
  compose: 'docker compose (the Docker CLI plugin or docker-compose)',
  cluster: 'gymflow cluster (PostgreSQL, the Temporal server, SQL tool and Web UI from scripts/build-temporal-server.sh, weed from scripts/build-seaweedfs.sh)',
  seaweedfs: 'SeaweedFS `weed` binary (scripts/build-seaweedfs.sh)',
  chromium: "Chromium (Debian's `chromium` package, for the Web UI's browser test)",
};

/** The outcome of probing for a component, with vitest helpers that skip loudly when it is missing. */
export interface Requirement {
  readonly component: Component;
  readonly tag: `[requires:${Component}]`;
  readonly available: boolean;
  /** Why the component is missing; `undefined` when available. */
  readonly reason: string | undefined;
  /** `describe`, tagged, skipped when the component is missing (its hooks do not run then). */
  describe(name: string, fn: () => void): void;
  /** `it`, tagged, skipped when the component is missing. */
  it(name: string, fn: TestFunction, timeout?: number): void;
}

function warnSkipped(component: Component, reason: string): void {
  const line = `SKIPPED: ${describeComponent[component]} not available: ${reason} ${requiresTag(component)}`;
  const bar = '!'.repeat(Math.min(Math.max(line.length, 40), 120));
  console.warn(`\n${bar}\n${line}\nTests tagged ${requiresTag(component)} will not run. Run \`npm run setup\`.\n${bar}\n`);
}

function requirement(component: Component, reason: string | undefined): Requirement {
  const tag = requiresTag(component);
  const missing = reason !== undefined;
  if (missing) warnSkipped(component, reason);
  return {
    component,
    tag,
    available: !missing,
    reason,
    describe: (name, fn) => describe.skipIf(missing)(`${name} ${tag}`, fn),
    it: (name, fn, timeout) => it.skipIf(missing)(`${name} ${tag}`, fn, timeout),
  };
}

const cache = new Map<string, Requirement>();
function memo(key: string, probe: () => Requirement): Requirement {
  let found = cache.get(key);
  if (!found) {
    found = probe();
    cache.set(key, found);
  }
  return found;
}

/** Asks the engine at DOCKER_HOST (default: the local socket) for `/_ping`, in a child so the probe is sync. */
const dockerPingScript = `
const http = require('node:http');
const host = process.env.DOCKER_HOST || 'unix:///var/run/docker.sock';
let target;
if (host.startsWith('unix://')) target = { socketPath: host.slice('unix://'.length) };
else if (host.startsWith('tcp://')) { const u = new URL('http://' + host.slice('tcp://'.length)); target = { host: u.hostname, port: u.port }; }
else { console.error('unsupported DOCKER_HOST ' + host); process.exit(2); }
const req = http.get({ ...target, path: '/_ping', timeout: 20_000 }, (res) => {
  let body = '';
  res.on('data', (d) => (body += d));
  res.on('end', () => {
    if (res.statusCode === 200) process.exit(0);
    console.error('GET /_ping on ' + host + ' answered ' + res.statusCode + ' ' + body.trim());
    process.exit(1);
  });
});
req.on('timeout', () => { console.error('no answer from ' + host + ' within 20 s'); process.exit(1); });
req.on('error', (e) => { console.error(e.message + ' (' + host + ')'); process.exit(1); });
`;

function probeDocker(): string | undefined {
  // Generous limits (an engine busy with other tests' containers answers late): a probe that timed out would
  // skip the tests, which CI counts as a failure.
  const run = spawnSync(process.execPath, ['-e', dockerPingScript], { encoding: 'utf8', timeout: 30_000 });
  if (run.status === 0) return undefined;
  const detail = run.stderr.trim() || run.error?.message || `probe exited with ${String(run.status ?? run.signal)}`;
  return detail.split('\n')[0];
}

function probePython(modules: readonly string[]): string | undefined {
  const python = join(PACKAGE_ROOT, '.venv', 'bin', 'python');
  try {
    accessSync(python, constants.X_OK);
  } catch {
    return `${python} not found`;
  }
  if (modules.length === 0) return undefined;
  // Importing torch and transformers takes seconds on an idle machine and far longer on a busy one; a probe that
  // timed out would skip the tests, which CI counts as a failure (skip-reporter.ts).
  const run = spawnSync(python, ['-c', `import ${modules.join(', ')}`], { encoding: 'utf8', timeout: 300_000 });
  if (run.status === 0) return undefined;
  const lines = (run.stderr || run.error?.message || 'import failed').trim().split('\n');
  return `${python} cannot import ${modules.join(', ')}: ${lines[lines.length - 1] ?? ''}`;
}

/** Whether the WebAssembly modules are built and not older than their sources. */
function probeWasm(): string | undefined {
  const built = TOKENS_WASM;
  const source = join(PACKAGE_ROOT, 'src', 'reward', 'rules', 'wasm', 'tokens.c');
  if (!existsSync(built)) return `${built} is not built (scripts/build-wasm.sh needs clang and lld)`;
  if (statSync(source).mtimeMs > statSync(built).mtimeMs) return `${built} is older than ${source}: run \`bash scripts/build-wasm.sh\``;
  return undefined;
}

/**
 * Probes for a component (once per test file) and gives tagged `describe`/`it` that skip loudly without it.
 *
 * @example
 * const temporal = requires.temporal();
 * temporal.describe('pipeline on a dev server', () => { it('runs', async () => { ... }); });
 */
export const requires = {
  /** The `temporal` CLI (see `temporalBinary()`), used to start a dev server. */
  temporal: (): Requirement =>
    memo('temporal', () =>
      requirement(
        'temporal',
        temporalBinary() === undefined ? 'no temporal CLI in $TEMPORAL_CLI, .venv/bin or PATH' : undefined,
      ),
    ),
  /** A Docker engine answering at DOCKER_HOST or /var/run/docker.sock. */
  docker: (): Requirement => memo('docker', () => requirement('docker', probeDocker())),
  /** `.venv/bin/python`, able to import `modules` (e.g. `['torch', 'gymflow_trainer']`). */
  python: (modules: readonly string[] = []): Requirement =>
    memo(`python:${modules.join(',')}`, () => requirement('python', probePython(modules))),
  /** A compose command ({@link composeCommand}). */
  compose: (): Requirement => memo('compose', () => requirement('compose', composeCommand() === undefined ? 'neither `docker compose` nor `docker-compose` runs' : undefined)),
  /**
   * What `gymflow cluster` runs: PostgreSQL's server programs and the binaries of `scripts/build-temporal-server.sh`.
   * While that build runs (CI starts it in the background, `.ci/run`), waits for it (up to 45 min) instead of skipping.
   */
  cluster: (): Requirement => memo('cluster', () => requirement('cluster', probeCluster())),
  /** A headless-capable Chromium ({@link chromiumPath}) that puppeteer-core drives (tests/web-ui.test.ts). */
  chromium: (): Requirement => memo('chromium', () => requirement('chromium', probeChromium())),
  /** The WebAssembly modules, built and up to date (`scripts/build-wasm.sh`). */
  wasm: (): Requirement => memo('wasm', () => requirement('wasm', probeWasm())),
  /** SeaweedFS's `weed` (`scripts/build-seaweedfs.sh`, or `$GYMFLOW_WEED`), for the S3 store backend. */
  seaweedfs: (): Requirement =>
    memo('seaweedfs', () => requirement('seaweedfs', weedBinary() === undefined ? 'no weed binary in $GYMFLOW_WEED or ~/.cache/gymflow/bin (bash scripts/build-seaweedfs.sh)' : undefined)),
};

function probeCluster(): string | undefined {
  if (postgresBinaries() === undefined) return 'no PostgreSQL server programs ($GYMFLOW_PG_BIN, /usr/lib/postgresql/*/bin, PATH; Debian: apt-get install postgresql)';
  if (missingClusterBinaries().length > 0) {
    // A build under way holds its lock (flock in the scripts): wait for it to end, then look again.
    for (const name of ['.build-temporal.lock', '.build-seaweedfs.lock']) {
      const lock = join(gymflowCache(), 'bin', name);
      if (existsSync(lock)) spawnSync('flock', ['--wait', String(45 * 60), lock, 'true'], { stdio: 'ignore' });
    }
  }
  const missing = missingClusterBinaries();
  return missing.length === 0 ? undefined : `not built: ${missing.join(', ')} (run \`bash scripts/build-temporal-server.sh\` and \`bash scripts/build-seaweedfs.sh\`)`;
}

/** The Chromium the browser tests drive: `$GYMFLOW_CHROMIUM`, else Debian's `/usr/bin/chromium` (`npm run setup` installs it). */
export function chromiumPath(): string {
  return process.env['GYMFLOW_CHROMIUM'] ?? '/usr/bin/chromium';
}

function probeChromium(): string | undefined {
  const path = chromiumPath();
  if (!existsSync(path)) return `${path} not found (Debian: apt-get install chromium; or set GYMFLOW_CHROMIUM)`;
  // `--version` loads the browser binary and its libraries without opening a window; a busy machine may take seconds.
  const run = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 60_000 });
  if (run.status === 0 && /chrom/i.test(run.stdout)) return undefined;
  const detail = (run.stderr || run.error?.message || `exited with ${String(run.status ?? run.signal)}`).trim().split('\n')[0];
  return `${path} --version failed: ${detail ?? ''}`;
}

/** The compose command here: `docker compose` (the CLI plugin, compose v2) or `docker-compose`; undefined without either. */
export function composeCommand(): readonly string[] | undefined {
  for (const command of [['docker', 'compose'], ['docker-compose']] as const) {
    const r = spawnSync(command[0], [...command.slice(1), 'version'], { encoding: 'utf8', timeout: 15_000 });
    if (r.status === 0) return command;
  }
  return undefined;
}

/**
 * Skips the running test because `component` turned out to be missing at run time, with a tagged note that
 * the skip reporter counts.
 *
 * @example
 * it('exec in a sandbox', async (ctx) => {
 *   if (!(await engineUp())) skipMissing(ctx, 'docker', 'engine went away');
 * });
 */
export function skipMissing(ctx: TestContext, component: Component, reason: string): never {
  warnSkipped(component, reason);
  return ctx.skip(`${requiresTag(component)} ${reason}`);
}
