import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import type { ToolLookup } from '../../src/core/chat/tool-lookup.js';
import { PACKAGE_ROOT } from '../../src/core/package-root.js';
import { make } from '../../src/core/registry.js';

/** What a run of the CLI printed and how it exited. */
export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `bin/gymflow.js ARGS` (the built CLI, as a user runs it) to its end; 60 s at most. */
export function gymflowSync(...args: string[]): CliResult {
  const r = spawnSync(process.execPath, [path.join(PACKAGE_ROOT, 'bin', 'gymflow.js'), ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Runs `bin/gymflow.js ARGS` to its end without blocking this process (a loopback server in the test can answer
 * it), with `env` added to the environment; killed after `timeoutMs` (default 60 s).
 */
export function gymflowAsync(args: readonly string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(PACKAGE_ROOT, 'bin', 'gymflow.js'), ...args], {
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The tools of a registered environment, as `make` builds it (for exports that render tool lists). */
export const registryTools: ToolLookup = (envId) => {
  const env = make(envId);
  const tools = env.tools;
  void env.close();
  return tools;
};
