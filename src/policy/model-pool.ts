import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { OnnxCausalLM, type OnnxLMOptions } from './onnx-lm.js';

/**
 * Process-wide sharing of ONNX sessions: every local policy for the same directory and thread count gets
 * the same {@link OnnxCausalLM} (one load, one copy of the weights). This is safe because a session holds
 * no per-sequence state (each policy keeps its own KV cache) and onnxruntime-node runs one inference at a
 * time on the JS thread.
 *
 * Leases are counted. When the last lease is returned the session is kept for `idleMs` (default 30 s) and
 * then released, so tools that build an agent per episode (`collect`, `eval`) load the model once; the idle
 * timer is `unref`'d and never keeps the process alive.
 */

/** A counted hold on a shared model. */
export interface ModelLease {
  readonly model: OnnxCausalLM;
  /** Returns the lease (idempotent). */
  release(): void;
}

interface Entry {
  loading: Promise<OnnxCausalLM>;
  leases: number;
  timer: NodeJS.Timeout | undefined;
}

const entries = new Map<string, Entry>();

/** How long an unused session stays loaded (ms). */
export const DEFAULT_IDLE_MS = 30_000;

function keyOf(dir: string, threads: number): string {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    real = resolve(dir); // OnnxCausalLM.load reports the missing directory
  }
  return `${real}\0${threads}`;
}

/**
 * Leases the model in `dir`, loading it on first use.
 *
 * @example
 * const lease = await acquireModel('runs/policy-onnx');
 * try { await lease.model.forward(lease.model.emptyCache(), [1, 2, 3]); } finally { lease.release(); }
 */
export async function acquireModel(dir: string, options: OnnxLMOptions & { idleMs?: number } = {}): Promise<ModelLease> {
  const threads = options.intraOpThreads ?? 1;
  const key = keyOf(dir, threads);
  let entry = entries.get(key);
  if (!entry) {
    const created: Entry = { loading: OnnxCausalLM.load(dir, { intraOpThreads: threads }), leases: 0, timer: undefined };
    entries.set(key, created);
    // A failed load is not cached: the next acquire tries again (the files may have been fixed).
    created.loading.catch(() => {
      if (entries.get(key) === created) entries.delete(key);
    });
    entry = created;
  }
  const held = entry;
  held.leases++;
  if (held.timer) {
    clearTimeout(held.timer);
    held.timer = undefined;
  }
  let model: OnnxCausalLM;
  try {
    model = await held.loading;
  } catch (err) {
    held.leases--;
    throw err;
  }
  let returned = false;
  return {
    model,
    release: () => {
      if (returned) return;
      returned = true;
      held.leases--;
      if (held.leases > 0) return;
      held.timer = setTimeout(() => {
        if (held.leases > 0 || entries.get(key) !== held) return;
        entries.delete(key);
        void model.release().catch(() => undefined);
      }, options.idleMs ?? DEFAULT_IDLE_MS);
      held.timer.unref();
    },
  };
}
