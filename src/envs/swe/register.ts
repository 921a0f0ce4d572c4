import { isRegistered, register } from '../../core/registry.js';
import { SWE_ENV_ID, SWE_MAX_STEPS, SweEnv } from './env.js';
import { SweExpert } from './expert.js';

/**
 * Registers `gymflow/swe-v0` with its gold-patch expert; idempotent. `make` needs `kwargs.instances` (a SWE-bench
 * instances file); it reads the instances and specs, and needs Docker only from the first `reset` (which builds the
 * instance's image when it is missing).
 */
export function registerSweEnv(): void {
  if (isRegistered(SWE_ENV_ID)) return;
  register(SWE_ENV_ID, (kwargs) => new SweEnv(kwargs), {
    domain: 'coding',
    description:
      "SWE-bench instances (kwargs.instances: JSONL/JSON; repos from kwargs.repos or their Git URL) in a hardened Docker sandbox of the instance's image (base → repo/version environment → instance); graded by SWE-bench's harness rules.",
    maxEpisodeSteps: SWE_MAX_STEPS,
    agents: { expert: () => new SweExpert() },
  });
}
