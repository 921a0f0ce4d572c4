/**
 * gymflow as a user installs it: `npm pack` of this clone (its build, dist/), installed from the tarball into
 * an empty project, whose `npx gymflow envs` runs and whose plain `.mjs` and `.mts` files import the API by
 * the package's entry points (`gymflow`, `gymflow/envs`, `gymflow/worker`), types included.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../src/core/package-root.js';

/** Runs a command to completion; its output is in the failure message when it fails. */
function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 480_000, env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited ${String(r.status ?? r.signal)}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

// Installing gymflow's dependencies (the Temporal SDK's native bridge, onnxruntime-node, …) from npm's cache
// takes about a minute on the 2-core CI machine, more beside other test files.
describe('the npm package', { timeout: 600_000 }, () => {
  let dir = '';
  let app = '';

  beforeAll(() => {
    // The tarball is the build as it is: a build older than the sources fails here, naming the fix, rather
    // than packing old code (setup builds; `npm run build` by hand).
    const check = spawnSync('bash', [join(PACKAGE_ROOT, 'scripts', 'build.sh'), '--check'], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(check.stderr.trim());
    dir = mkdtempSync(join(tmpdir(), 'gymflow-package-'));
    // --ignore-scripts: prepack would rebuild a stale dist/, under the other test files that run it.
    const packed = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], PACKAGE_ROOT);
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
    app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    // onnxruntime-node's install script would download CUDA binaries; the CPU ones come in its package.
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(dir, filename)], app, { ONNXRUNTIME_NODE_INSTALL: 'skip' });
  }, 600_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds the build, the trainer and the sandbox recipe, and no TypeScript sources', () => {
    const pkg = join(app, 'node_modules', 'gymflow');
    for (const file of ['dist/src/cli/main.js', 'dist/src/core/index.d.ts', 'dist/workflows/index.js', 'dist/src/core/profiles/builtin/coding.json', 'trainer/gymflow_trainer/__main__.py', 'scripts/build-sandbox-image.sh', 'scripts/lib/minbase.sh']) {
      expect([file, existsSync(join(pkg, file))]).toEqual([file, true]);
    }
    expect(existsSync(join(pkg, 'src'))).toBe(false);
  });

  it('runs `npx gymflow envs`', () => {
    const r = run('npx', ['--no', 'gymflow', 'envs', '--json'], app);
    const ids = (JSON.parse(r.stdout) as { id: string }[]).map((e) => e.id);
    expect(ids).toContain('gymflow/text-math-v0');
    expect(ids).toContain('gymflow/tool-use-v0');
  });

  it('imports the API from a plain .mjs file: an episode of text-math, the workflows a worker bundles', () => {
    writeFileSync(
      join(app, 'episode.mjs'),
      `import { make } from 'gymflow';
import { registerBuiltinEnvs } from 'gymflow/envs';
import { WORKFLOWS_PATH } from 'gymflow/worker';
registerBuiltinEnvs();
const env = make('gymflow/text-math-v0');
await env.reset({ seed: 7 });
const ts = await env.step({ tool: 'submit', params: { answer: '42' } });
await env.close();
console.log(JSON.stringify({ terminated: ts.terminated, reason: ts.info.reason, workflows: WORKFLOWS_PATH }));
`,
    );
    const out = JSON.parse(run(process.execPath, ['episode.mjs'], app).stdout) as { terminated: boolean; reason: string; workflows: string };
    expect(out).toEqual({ terminated: true, reason: 'submitted', workflows: join(app, 'node_modules', 'gymflow', 'dist', 'workflows', 'index.js') });
  });

  it('types the API for TypeScript users', () => {
    writeFileSync(
      join(app, 'typed.mts'),
      `import { make, type TimeStep } from 'gymflow';
import { registerBuiltinEnvs } from 'gymflow/envs';
registerBuiltinEnvs();
const ts: TimeStep = await make('gymflow/text-math-v0').reset({ seed: 7 });
const reward: number = ts.reward;
// @ts-expect-error: a reward is a number
const wrong: string = ts.reward;
console.log(reward, wrong);
`,
    );
    // strict: a package without declarations would be an implicit any (TS7016), an error.
    const tsc = join(PACKAGE_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const args = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--skipLibCheck'];
    run(process.execPath, [tsc, ...args, '--types', 'node', '--typeRoots', join(PACKAGE_ROOT, 'node_modules', '@types'), 'typed.mts'], app);
  });
});
