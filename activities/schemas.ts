/** Input pieces several activities validate alike. */
import { z } from 'zod';

/** A content-addressed store ref. */
export const storeRef = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'expected a store ref sha256:…');

/** The loop's current policy (`PolicyState` of src/loop/status.ts) as an activity receives it. */
export const PolicySchema = z.object({
  checkpointRef: storeRef.optional(),
  checkpointPath: z.string().optional(),
  onnxRef: storeRef.optional(),
  agent: z.string().optional(),
  iteration: z.number().int().nonnegative(),
});

/** A policy served for one stage (`ServedPolicy` of src/loop/plan.ts, `policy.serve`). */
export const ServedPolicySchema = z.object({ model: z.string().min(1), baseURL: z.string().url(), tokenIds: z.boolean(), startupTimeout: z.string() });

/**
 * Rewrites an activity input of the shape workflows scheduled before a configuration section passed through as
 * it is — the section's fields one by one, camelCased, beside the others — as the current one, the section under
 * `key`; `fields` maps each old field to the section's. Any other value (the current shape: it has `key`) is
 * returned as it is. Runs in flight when their workers are upgraded, and the recorded histories, scheduled the
 * old shape, and a retry of such an activity must still run; the rewritten input is then parsed as a new one.
 *
 * @example
 * ```ts
 * const fromFields = sectionFromFields('eval', { maxSteps: 'max_steps' });
 * fromFields({ envId: 'e', maxSteps: 3 }); // { envId: 'e', eval: { max_steps: 3 } }
 * ```
 */
export function sectionFromFields(key: string, fields: Readonly<Record<string, string>>): (input: unknown) => unknown {
  return (input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input) || key in input) return input;
    const rest: Record<string, unknown> = { ...input };
    const section: Record<string, unknown> = {};
    for (const [from, to] of Object.entries(fields)) {
      if (rest[from] !== undefined) section[to] = rest[from];
      delete rest[from];
    }
    return { ...rest, [key]: section };
  };
}
