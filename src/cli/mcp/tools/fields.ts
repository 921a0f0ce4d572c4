/**
 * Argument schemas several tools share.
 */
import { z } from 'zod';

/** A path under the workspace root: relative to it, or absolute inside it. */
export const relativePath = z.string().min(1).describe('a path under the workspace root (relative to it, or absolute inside it)');

/** The Temporal frontend a pipeline tool talks to. */
export const temporalFields = {
  address: z.string().min(1).optional().describe('Temporal frontend host:port (default: the server\'s --address, else $TEMPORAL_ADDRESS, else 127.0.0.1:7233)'),
  namespace: z.string().min(1).optional().describe('Temporal namespace (default: the server\'s --namespace, else $TEMPORAL_NAMESPACE, else default)'),
};

/** How many items of a long list a result shows inline (the rest is counted, or in the result file). */
export const LIST_SHOWN = 50;
