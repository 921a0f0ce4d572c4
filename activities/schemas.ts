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
