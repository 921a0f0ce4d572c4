import { isRegistered, register } from '../../core/registry.js';
import { SANDBOX_ENV_ID, SANDBOX_MAX_STEPS, SandboxEnv } from './env.js';
import { SandboxExpert } from './expert.js';

/**
 * Registers `gymflow/sandbox-v0` with its expert; idempotent. Building the environment needs no Docker;
 * its first `reset` does (image `gymflow/sandbox:latest`, see `gymflow sandbox build-image`).
 */
export function registerSandboxEnv(): void {
  if (isRegistered(SANDBOX_ENV_ID)) return;
  register(SANDBOX_ENV_ID, (kwargs) => new SandboxEnv(kwargs), {
    domain: 'coding',
    description: 'Fix small Python repositories in a hardened Docker sandbox; SWE-bench grading (FAIL_TO_PASS / PASS_TO_PASS).',
    maxEpisodeSteps: SANDBOX_MAX_STEPS,
    agents: { expert: () => new SandboxExpert() },
  });
}
