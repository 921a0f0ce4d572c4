import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
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

/** How a run of the CLI in a working directory ended ({@link gymflowIn}). */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `bin/gymflow.js ARGS` to its end in `cwd` (a project directory with its own `.gymflow/`); killed after `timeoutMs`. */
export function gymflowIn(args: readonly string[], cwd: string, timeoutMs = 120_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(PACKAGE_ROOT, 'bin', 'gymflow.js'), ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A `gymflow dev` stack started by {@link startDev}. */
export interface DevStack {
  child: ChildProcess;
  exit: Promise<number | null>;
  /** Everything it printed so far. */
  output: () => string;
}

/** Starts `gymflow dev ARGS` in `cwd` and resolves once it printed its ready block (150 s at most). */
export async function startDev(args: readonly string[], cwd: string): Promise<DevStack> {
  const child = spawn(process.execPath, [path.join(PACKAGE_ROOT, 'bin', 'gymflow.js'), 'dev', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gymflow dev did not come up within 150 s:\n${out}`)), 150_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (out.includes('Ctrl-C stops everything')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gymflow dev exited with ${String(code)}:\n${out}`));
    });
  });
  return { child, exit, output: () => out };
}

/**
 * A pipeline configuration (YAML) named `name` that trains for real but fast: expert rollouts on
 * `gymflow/tool-use-v0`, 2 SFT steps of a 1-layer model, expert evaluation, one iteration.
 */
export function fastLoopYaml(name: string): string {
  return `# a fast loop for tests
name: ${name}
env: gymflow/tool-use-v0
policy:
  init:
    tiny: { hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1, bpe_vocab_size: 0 }
collect: { agent: expert, tasks: 4, shard_size: 2, concurrency: 2 }
export: { success_only: true }
train:
  command: sft
  config: { max_steps: 2, batch_size: 2, max_length: 256 }
eval: { agent: expert, tasks: 4, baseline: false }
max_iterations: 1
`;
}

/** The tools of a registered environment, as `make` builds it (for exports that render tool lists). */
export const registryTools: ToolLookup = (envId) => {
  const env = make(envId);
  const tools = env.tools;
  void env.close();
  return tools;
};
