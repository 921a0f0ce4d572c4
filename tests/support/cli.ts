import { spawnSync } from 'node:child_process';
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

/** The tools of a registered environment, as `make` builds it (for exports that render tool lists). */
export const registryTools: ToolLookup = (envId) => {
  const env = make(envId);
  const tools = env.tools;
  void env.close();
  return tools;
};
