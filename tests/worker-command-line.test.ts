/**
 * The workers' command lines (workers/worker.ts), through the built programs: `--help` prints every option and exits
 * 0; a wrong argument ends the worker before it connects anywhere, with exit 2 and a line that names the argument,
 * above the usage.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { builtWorkerProgram } from '../src/runtime/dev-server.js';

function worker(kind: 'cpu' | 'gpu', args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [builtWorkerProgram(kind), ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('worker command lines', () => {
  it('--help lists the options, the CPU worker its --role too', () => {
    const cpu = worker('cpu', ['--help']);
    expect(cpu.status).toBe(0);
    for (const option of ['--address', '--namespace', '--task-queue', '--store', '--work-dir', '--shutdown-grace', '--max-concurrent-activities', '--role']) expect(cpu.stdout).toContain(option);
    expect(cpu.stdout).toContain('(default gymflow)');
    const gpu = worker('gpu', ['-h']);
    expect(gpu.status).toBe(0);
    expect(gpu.stdout).toContain('usage: node dist/workers/gpu.js [options]');
    expect(gpu.stdout).toContain('(default gymflow-gpu)');
    expect(gpu.stdout).not.toContain('--role');
  });

  it.each([
    ['cpu', ['--adress', 'x:1'], "gymflow cpu worker: Unknown option '--adress'"],
    ['cpu', ['--max-concurrent-activities', 'two'], "gymflow cpu worker: --max-concurrent-activities must be a non-negative integer, got 'two'"],
    ['cpu', ['--role', 'both'], "gymflow cpu worker: --role must be one of all, workflows, activities, got 'both'"],
    ['cpu', ['127.0.0.1:7233'], "gymflow cpu worker: unexpected argument '127.0.0.1:7233': a worker takes options only"],
    ['gpu', ['--role', 'workflows'], "gymflow gpu worker: --role is the CPU worker's option (the GPU worker runs activities only), got '--role workflows'"],
  ] as const)('%s worker %j: exit 2, the argument named, the usage', (kind, args, message) => {
    const r = worker(kind, args);
    expect(r.status).toBe(2);
    expect(r.stderr.startsWith(message), r.stderr).toBe(true);
    expect(r.stderr).toContain(`usage: node dist/workers/${kind}.js [options]`);
    expect(r.stdout).toBe('');
  });
});
