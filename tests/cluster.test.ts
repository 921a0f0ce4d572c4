/**
 * `gymflow cluster` as a user runs it: the real CLI (`bin/gymflow.js`) in a fresh project directory brings up
 * PostgreSQL (the system's package, as an unprivileged user), the real Temporal server built from
 * `go.temporal.io/server` on that database, the Web UI and the CPU and GPU workers; the smoke loop
 * (examples/smoke.yaml) runs on it through `gymflow pipeline start --wait`. While the loop runs, the Temporal
 * server is stopped and started again (`cluster down temporal`, `cluster up`): its state is in PostgreSQL, so
 * the loop goes on and completes. `cluster down` leaves no process of the cluster behind and frees its ports.
 */
import { readFileSync, statSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, parse as parsePath } from 'node:path';
import { request } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect } from 'vitest';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { ensurePortFree, freePort } from '../src/runtime/dev-server.js';
import { groupMembers } from '../src/runtime/cluster/daemon.js';
import type { ClusterStatus } from '../src/runtime/cluster/cluster.js';
import type { PipelineStatus } from '../src/loop/status.js';
import { pipelineStatusQuery } from '../workflows/messages.js';
import { gymflowIn } from './support/cli.js';
import { processesMentioning } from './support/processes.js';
import { requires } from './support/requires.js';

const temporal = requires.temporal();
const python = requires.python(['torch', 'gymflow_trainer']);
const cluster = requires.cluster();
const ready = temporal.available && python.available && cluster.available;

/**
 * A folder for the project whose every ancestor others may search: when the tests run as root, PostgreSQL
 * runs as the `postgres` account, which must reach its data directory (a `mktemp -d` TMPDIR is 0700).
 */
function searchableTmp(): string {
  const base = tmpdir();
  if (process.getuid?.() !== 0) return base;
  for (let p = base; ; p = dirname(p)) {
    if ((statSync(p).mode & 0o001) === 0) return '/tmp';
    if (p === parsePath(p).root) return base;
  }
}

/** TCP ports some process listens on, with the address it bound (from /proc/net/tcp and tcp6). */
function listeningSockets(): Map<number, string[]> {
  const found = new Map<number, string[]>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.trim().split('\n').slice(1)) {
      const [, local, , st] = line.trim().split(/\s+/);
      if (st !== '0A' || local === undefined) continue; // 0A: LISTEN
      const [addr = '', port = ''] = local.split(':');
      const list = found.get(parseInt(port, 16)) ?? [];
      list.push(addr);
      found.set(parseInt(port, 16), list);
    }
  }
  return found;
}

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { timeout: 10_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url}`)));
    req.on('error', reject);
    req.end();
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

cluster.describe('gymflow cluster: PostgreSQL, the Temporal server, the Web UI and the workers on one machine', () => {
  let project = '';
  let ports = { frontend: 0, ui: 0, postgres: 0 };
  let status: ClusterStatus | undefined;

  const gymflow = (args: readonly string[], timeoutMs = 600_000) => gymflowIn(args, project, timeoutMs);
  const readStatus = async (): Promise<ClusterStatus> => {
    const r = await gymflow(['cluster', 'status', '--json'], 60_000);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as ClusterStatus;
  };

  beforeAll(async () => {
    if (!ready) return;
    project = await mkdtemp(join(searchableTmp(), 'gymflow-cluster-'));
    await chmod(project, 0o755);
    ports = { frontend: await freePort(), ui: await freePort(), postgres: await freePort() };
  });

  afterAll(async () => {
    if (!project) return;
    // Whatever happened above: nothing of the cluster may outlive the test.
    await gymflow(['cluster', 'down'], 300_000).catch(() => undefined);
    await rm(project, { recursive: true, force: true });
  }, 360_000);

  const it = (name: string, fn: () => Promise<void>, timeout: number): void => temporal.it(name, async () => {
    if (!python.available) throw new Error(`the Python trainer is missing: ${python.reason ?? ''}`);
    await fn();
  }, timeout);

  it('cluster up starts every part, bound to 127.0.0.1, and a second up changes nothing', async () => {
    const up = await gymflow(['cluster', 'up', '--port', String(ports.frontend), '--ui-port', String(ports.ui), '--postgres-port', String(ports.postgres)], 900_000);
    expect(up.code, `${up.stdout}\n${up.stderr}`).toBe(0);
    status = await readStatus();
    expect(status.components.map((c) => [c.component, c.state])).toEqual([
      ['postgres', 'running'],
      ['temporal', 'running'],
      ['ui', 'running'],
      ['worker-cpu', 'running'],
      ['worker-gpu', 'running'],
    ]);
    expect(status.temporalAddress).toBe(`127.0.0.1:${ports.frontend}`);
    // The Web UI serves its app and reaches the server (its API lists the namespace).
    expect(await httpStatus(`${status.uiUrl ?? ''}/`)).toBe(200);
    expect(await httpStatus(`${status.uiUrl ?? ''}/api/v1/namespaces/default`)).toBe(200);
    // Every port of the cluster binds the loopback interface only.
    const config = await readFile(join(project, '.gymflow', 'cluster', 'cluster.json'), 'utf8');
    const all = Object.values((JSON.parse(config) as { ports: Record<string, number> }).ports);
    const listening = listeningSockets();
    for (const port of all) expect({ port, bound: listening.get(port) }).toEqual({ port, bound: ['0100007F'] });
    // Its search attributes are registered on the namespace.
    const attrs = await gymflow(['pipeline', 'list', '--address', status.temporalAddress ?? '', '--experiment', 'none'], 60_000);
    expect(attrs.code, attrs.stderr).toBe(0);

    const again = await gymflow(['cluster', 'up'], 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect((await readStatus()).components.map((c) => c.pid)).toEqual(status.components.map((c) => c.pid));
  }, 960_000);

  it('the smoke loop completes, through a restart of the Temporal server in the middle of it', async () => {
    const address = status?.temporalAddress ?? '';
    const id = `cluster-smoke-${Date.now()}`;
    const run = gymflow(['pipeline', 'start', join(PACKAGE_ROOT, 'examples', 'smoke.yaml'), '--address', address, '--id', id, '--wait'], 1_200_000);

    // Wait until the loop is past its first stages, then stop the server and start it again.
    const connection = await Connection.connect({ address });
    let seen: PipelineStatus | undefined;
    try {
      const client = new Client({ connection });
      const deadline = Date.now() + 600_000;
      while (Date.now() < deadline) {
        seen = await client.workflow.getHandle(id).query(pipelineStatusQuery).catch(() => undefined);
        if (seen !== undefined && seen.stages.collect.state === 'done') break;
        await sleep(1_000);
      }
    } finally {
      await connection.close();
    }
    expect(seen?.stages.collect.state).toBe('done');
    const oldPid = (await readStatus()).components.find((c) => c.component === 'temporal')?.pid;
    const down = await gymflow(['cluster', 'down', 'temporal'], 120_000);
    expect(down.code, down.stderr).toBe(0);
    expect((await readStatus()).components.find((c) => c.component === 'temporal')?.state).toBe('stopped');
    await sleep(3_000);
    const up = await gymflow(['cluster', 'up'], 600_000);
    expect(up.code, `${up.stdout}\n${up.stderr}`).toBe(0);
    const restarted = (await readStatus()).components.find((c) => c.component === 'temporal');
    expect(restarted?.state).toBe('running');
    expect(restarted?.pid).not.toBe(oldPid);

    const result = await run;
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/state\s+completed/);
    const show = await gymflow(['pipeline', 'status', id, '--address', address, '--json'], 60_000);
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ status: 'COMPLETED', pipelineStatus: { state: 'completed' } });
  }, 1_500_000);

  it('cluster down stops every part and leaves no process behind', async () => {
    const before = await readStatus();
    const pids = before.components.flatMap((c) => (c.pid === undefined ? [] : [c.pid]));
    expect(pids).toHaveLength(5);
    const down = await gymflow(['cluster', 'down'], 300_000);
    expect(down.code, down.stderr).toBe(0);
    const after = await readStatus();
    expect(after.components.every((c) => c.state === 'stopped')).toBe(true);
    for (const pid of pids) expect({ pid, left: groupMembers(pid) }).toEqual({ pid, left: [] });
    expect(processesMentioning(project)).toEqual([]);
    for (const [what, port] of Object.entries(ports)) await ensurePortFree('127.0.0.1', port, what);
  }, 360_000);
});
