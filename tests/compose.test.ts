/**
 * docker-compose.yml, read by compose's own parser (`docker compose config`, or Debian's docker-compose): the
 * services of the production topology, ports on 127.0.0.1 unless GYMFLOW_BIND says otherwise, the GPU worker's
 * reservation, and the workers' Temporal settings coming from the environment.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { composeCommand, requires } from './support/requires.js';

const compose = requires.compose();

interface Port {
  host_ip?: string;
  published?: string | number;
  target?: number;
}
interface Service {
  image?: string;
  command?: string[] | string;
  environment?: Record<string, string | null>;
  ports?: (Port | string)[];
  profiles?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
  deploy?: { resources?: { reservations?: { devices?: { driver?: string; count?: string | number; capabilities?: string[] }[] } } };
  volumes?: (string | { source?: string; target?: string })[];
  build?: { context?: string; dockerfile?: string; target?: string; args?: Record<string, string> };
}

/** The file as compose resolves it (variables substituted, anchors merged) with `env` in its environment. */
function resolved(env: Record<string, string> = {}): Record<string, Service> {
  const command = composeCommand() as readonly string[];
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TEMPORAL_|GYMFLOW_|POSTGRES_)/.test(k)));
  const r = spawnSync(command[0] as string, [...command.slice(1), '-f', path.join(PACKAGE_ROOT, 'docker-compose.yml'), '--profile', 'vllm', '--profile', 'tensorboard', 'config'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...clean, ...env },
    cwd: PACKAGE_ROOT,
  });
  expect(r.stderr.replace(/.*WARN.*\n?/g, '')).toBe('');
  expect(r.status).toBe(0);
  return (parseYaml(r.stdout) as { services: Record<string, Service> }).services;
}

/** A port as `host_ip:published:target`, from either of compose's two forms. */
function ports(s: Service): string[] {
  // docker-compose 1.x writes `127.0.0.1:7233:7233/tcp`, compose v2 an object.
  return (s.ports ?? []).map((p) => (typeof p === 'string' ? p.replace(/\/tcp$/, '') : `${p.host_ip ?? ''}:${p.published}:${p.target}`));
}

compose.describe('docker-compose.yml', () => {
  it('parses, with every service of the topology', { timeout: 90_000 }, () => {
    const services = resolved();
    expect(Object.keys(services).sort()).toEqual(
      ['object-store', 'postgresql', 'temporal', 'temporal-namespace', 'temporal-schema', 'temporal-ui', 'tensorboard', 'vllm', 'worker-cpu', 'worker-gpu', 'worker-workflows'].sort(),
    );
    // The server starts after its schema is set up, which waits for the database.
    expect(services['temporal']?.depends_on).toMatchObject({ 'temporal-schema': { condition: 'service_completed_successfully' } });
    expect(services['temporal-schema']?.depends_on).toMatchObject({ postgresql: { condition: 'service_healthy' } });
    expect(services['vllm']?.profiles).toEqual(['vllm']);
    expect(services['tensorboard']?.profiles).toEqual(['tensorboard']);
  });

  it('publishes every port on 127.0.0.1 unless GYMFLOW_BIND says otherwise', { timeout: 90_000 }, () => {
    const local = resolved();
    const published = Object.values(local).flatMap(ports);
    expect(published.length).toBe(5);
    for (const p of published) expect(p).toMatch(/^127\.0\.0\.1:/);
    expect(ports(local['temporal'] as Service)).toEqual(['127.0.0.1:7233:7233']);
    expect(ports(local['temporal-ui'] as Service)).toEqual(['127.0.0.1:8080:8080']);
    const open = Object.values(resolved({ GYMFLOW_BIND: '0.0.0.0', TEMPORAL_UI_PORT: '9090' })).flatMap(ports);
    for (const p of open) expect(p).toMatch(/^0\.0\.0\.0:/);
    expect(open).toContain('0.0.0.0:9090:8080');
  });

  it('gives the GPU worker every GPU and the gpu queue, and both workers the Temporal settings of the environment', { timeout: 90_000 }, () => {
    const defaults = resolved();
    const gpu = defaults['worker-gpu'] as Service;
    expect(gpu.deploy?.resources?.reservations?.devices).toEqual([{ driver: 'nvidia', count: 'all', capabilities: ['gpu'] }]);
    expect(gpu.command).toEqual(['node', 'dist/workers/gpu.js', '--task-queue', 'gymflow-gpu']);
    expect(defaults['worker-cpu']?.command).toEqual(['node', 'dist/workers/cpu.js', '--task-queue', 'gymflow', '--role', 'activities']);
    expect(defaults['worker-workflows']?.command).toEqual(['node', 'dist/workers/cpu.js', '--task-queue', 'gymflow', '--role', 'workflows']);
    expect(defaults['worker-cpu']?.environment).toMatchObject({ TEMPORAL_ADDRESS: 'temporal:7233', TEMPORAL_NAMESPACE: 'default', GYMFLOW_STORE: 's3://gymflow/store', GYMFLOW_S3_ENDPOINT: 'http://object-store:8333' });
    // Temporal Cloud: the address, namespace and API key come from the environment, the same for both workers.
    const cloud = resolved({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_NAMESPACE: 'ns.acct', TEMPORAL_API_KEY: 'key', GYMFLOW_GPU_QUEUE: 'gpu-8x' });
    for (const w of ['worker-workflows', 'worker-cpu', 'worker-gpu']) {
      expect(cloud[w]?.environment).toMatchObject({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_NAMESPACE: 'ns.acct', TEMPORAL_API_KEY: 'key' });
    }
    expect(cloud['worker-gpu']?.command).toContain('gpu-8x');
  });

  it("builds the CPU worker's image (Node only) and the GPU worker's (with the trainer) from one Dockerfile; TensorBoard runs from the GPU one", { timeout: 90_000 }, () => {
    const services = resolved();
    const dockerfile = readFileSync(path.join(PACKAGE_ROOT, 'docker', 'worker.Dockerfile'), 'utf8');
    for (const [worker, target] of [['worker-cpu', 'cpu'], ['worker-gpu', 'gpu']] as const) {
      expect(services[worker]?.build).toMatchObject({ dockerfile: 'docker/worker.Dockerfile', target });
      expect(dockerfile).toMatch(new RegExp(`^FROM \\S+ AS ${target}$`, 'm'));
    }
    expect(services['worker-gpu']?.build?.args).toMatchObject({ TORCH_INDEX_URL: 'https://download.pytorch.org/whl/cu128' });
    expect(services['worker-workflows']?.image).toBe(services['worker-cpu']?.image);
    expect(services['tensorboard']?.image).toBe(services['worker-gpu']?.image);
  });
});
