/**
 * docker/worker.Dockerfile's CPU image, built here with no registry: its base from scripts/build-node-image.sh (a
 * Debian minbase root and this machine's Node), then `docker build --target cpu`. The image runs as its own user,
 * carries no Python, and its workers say what is wrong with their arguments. Its CPU worker, in a container on the
 * host's network and the only worker polling the CPU queue, runs a loop's workflow and CPU activities against a dev
 * server while the GPU worker trains on the host; the loop completes.
 *
 * The GPU image (the CPU image plus torch) is not built here: its torch layer is gigabytes (docs/operations.md).
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { SEARCH_ATTRIBUTES } from '../src/loop/search-attributes.js';
import { builtWorkerProgram, freePort, startDevServer, startWorkerProcess, WORKER_READY, type DevServer, type WorkerProcess } from '../src/runtime/dev-server.js';
import { trainingLoop } from '../workflows/index.js';
import { requires } from './support/requires.js';
import { smallLoopConfig } from './support/small-loop.js';
import { until } from './support/until.js';

const docker = requires.docker();
const temporal = requires.temporal();
const python = requires.python(['torch', 'gymflow_trainer']);

const IMAGE = 'gymflow/worker:test';

/** `docker run --rm IMAGE ARGS…`: its exit status and output. */
function inImage(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('docker', ['run', '--rm', IMAGE, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

docker.describe('the CPU worker image (docker/worker.Dockerfile, target cpu)', () => {
  beforeAll(() => {
    const base = execFileSync('bash', [join(PACKAGE_ROOT, 'scripts', 'build-node-image.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').at(-1) as string;
    const build = spawnSync('docker', ['build', '-f', 'docker/worker.Dockerfile', '--target', 'cpu', '--build-arg', `NODE_IMAGE=${base}`, '-t', IMAGE, '.'], {
      cwd: PACKAGE_ROOT,
      encoding: 'utf8',
      // The classic builder: the engine here has no BuildKit (buildx), and the Dockerfile builds with either.
      env: { ...process.env, DOCKER_BUILDKIT: '0' },
      maxBuffer: 64 * 1024 * 1024,
    });
    if (build.status !== 0) throw new Error(`docker build of the CPU worker image failed (exit ${String(build.status)}):\n${`${build.stdout}\n${build.stderr}`.slice(-6000)}`);
  }, 1_200_000);

  it('runs as its own user, with the built CLI and no Python; a worker names a wrong argument and shows its usage', () => {
    expect(inImage(['id', '-un']).stdout.trim()).toBe('gymflow');
    const envs = inImage(['node', 'bin/gymflow.js', 'envs', '--json']);
    expect(envs.status, envs.stderr).toBe(0);
    expect((JSON.parse(envs.stdout) as { id: string }[]).map((e) => e.id)).toContain('gymflow/tool-use-v0');
    expect(inImage(['sh', '-c', 'command -v python3 || echo none']).stdout.trim()).toBe('none');
    const wrong = inImage(['node', 'dist/workers/cpu.js', '--adress', '127.0.0.1:7233']);
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain("gymflow cpu worker: Unknown option '--adress'");
    expect(wrong.stderr).toContain('usage: node dist/workers/cpu.js [options]');
    const help = inImage(['node', 'dist/workers/cpu.js', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/--role all\|workflows\|activities/);
  });

  temporal.describe('its CPU worker in a loop', () => {
    let dir = '';
    let server: DevServer | undefined;
    let gpu: WorkerProcess | undefined;
    let cpu: ChildProcess | undefined;
    const container = `gymflow-test-cpu-${process.pid}`;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'gymflow-worker-image-'));
      server = await startDevServer({ dbFilename: join(dir, 'temporal.db'), port: await freePort(), headless: true, searchAttributes: SEARCH_ATTRIBUTES });
    }, 120_000);

    afterAll(async () => {
      spawnSync('docker', ['rm', '-f', container], { stdio: 'ignore' });
      await gpu?.stop(20_000);
      await server?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    }, 120_000);

    python.it('runs the workflow and every CPU activity of an SFT loop; the host GPU worker trains; the loop completes', async () => {
      if (server === undefined) throw new Error('no dev server');
      const address = server.address;
      // The store and work directories at the same path on both sides (the scratch directory mounted where it is), so
      // the refs the two workers pass mean the same files; the container runs as this user to write there.
      const user = `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}`;
      const lines: string[] = [];
      cpu = spawn('docker', ['run', '--rm', '--name', container, '--network', 'host', '--user', user, '-v', `${dir}:${dir}`, IMAGE, 'node', 'dist/workers/cpu.js', '--address', address, '--store', join(dir, 'store')], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      for (const stream of [cpu.stdout, cpu.stderr]) stream?.on('data', (b: Buffer) => lines.push(...b.toString().split('\n')));
      await until('the container CPU worker to be ready', 120_000, async () => {
        if (cpu?.exitCode !== null) throw new Error(`the container exited (${String(cpu?.exitCode)}):\n${lines.join('\n')}`);
        return lines.some((l) => WORKER_READY.test(l)) ? true : undefined;
      });
      // No CPU worker on the host: the container's is the only one polling the CPU queue.
      gpu = await startWorkerProcess({ kind: 'gpu', program: builtWorkerProgram('gpu'), address, store: join(dir, 'store'), logFile: join(dir, 'gpu.log') });
      const connection = await Connection.connect({ address });
      try {
        const client = new Client({ connection });
        const config = smallLoopConfig('image', dir, 'worker-image:loop', { collect: { tasks: 2, shard_size: 2, concurrency: 1 }, train: { config: { max_steps: 2, max_length: 512 } }, max_iterations: 1 });
        const result = await client.workflow.execute(trainingLoop, { taskQueue: 'gymflow', workflowId: 'worker-image', args: [config] });
        expect(result).toMatchObject({ stopReason: 'max_iterations' });
        expect(result.history).toHaveLength(1);
        expect(result.history[0]?.train?.steps).toBe(2);
        expect(result.history[0]?.rollouts?.episodes).toBeGreaterThan(0);
      } finally {
        await connection.close();
      }
    }, 600_000);
  });
});
