import { createHash } from 'node:crypto';
import { resolveConfig, type SandboxConfig } from './config.js';
import { sandboxesStopping } from './lifetime.js';
import { Sandbox, type CreateSandboxOptions } from './sandbox.js';
import { sandboxScope } from './scope-context.js';

/** Options of {@link SandboxPool}. */
export interface SandboxPoolOptions {
  /** Ready spares kept per key (config + initial state); default 1. 0 turns the pool off. */
  sparesPerKey?: number | undefined;
  /** Spares kept in all, ready and being prepared; default 4. 0 turns the pool off. */
  maxSpares?: number | undefined;
  /** Where background failures are reported (default `console.warn`); they are never thrown. */
  log?: (message: string) => void;
  /** How spares are created (default {@link Sandbox.create}); tests inject failures here. */
  create?: (options: CreateSandboxOptions) => Promise<Sandbox>;
}

/** Counters of a {@link SandboxPool}. */
export interface SandboxPoolStats {
  /** Resets served by a ready spare (no exec waited on). */
  hits: number;
  /** Resets restored in place (one exec) because no spare was ready. */
  misses: number;
  /** Spares created from scratch. */
  created: number;
  /** Used containers restored in the background and kept as spares. */
  recycled: number;
  /** Ready spares of the least recently used key restored to another key. */
  retargeted: number;
  /** Containers destroyed by the pool (bounds, eviction, failures, close). */
  destroyed: number;
  /** Background failures (logged; the container was destroyed). */
  errors: number;
}

/** What {@link SandboxPool.reset} returns. */
export interface PoolReset {
  /** The sandbox whose work areas now hold exactly the archive's state. */
  sandbox: Sandbox;
  /** True when a ready spare was swapped in (the previous sandbox went to the recycler). */
  hit: boolean;
}

function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'undefined';
}

/**
 * The key spares are kept under: the whole resolved config (image, limits, hardening switches, labels) and
 * the sha256 of the initial-state archive. A spare is only ever handed to a reset with the same key.
 */
export function poolKey(config: SandboxConfig, archive: Buffer): string {
  const c = createHash('sha256').update(stable(config)).digest('hex').slice(0, 16);
  const a = createHash('sha256').update(archive).digest('hex');
  return `${config.image}|${c}|${a}`;
}

const live = new Set<SandboxPool>();
let exitHook = false;

/** On `beforeExit` (the event loop ran dry without `close()`), destroys every live pool's spares. */
function watchExit(pool: SandboxPool): void {
  live.add(pool);
  if (exitHook) return;
  exitHook = true;
  process.on('beforeExit', () => {
    if (live.size === 0) return;
    const pools = [...live];
    live.clear();
    void Promise.all(pools.map((p) => p.clear()));
  });
}

/**
 * A warm pool of sandboxes already restored to a task's initial state, so that a reset to a task whose
 * spare is ready waits on no exec: the spare is swapped in and the used container goes to a background
 * recycler, which restores it (kill strays, wipe every writable place, extract the archive — the same
 * script as an in-place reset) and keeps it as the next spare for that task. A reset with no ready spare
 * restores in place (one exec, today's path) and starts preparing a spare in the background.
 *
 * Guarantees: a spare is handed out at most once (taken synchronously); a sandbox that was ever replaced,
 * whose restore failed, or that was destroyed never enters the pool; background failures are logged and
 * the container destroyed, never thrown; bounds are per key and in all (ready + being prepared), a
 * full pool retargets or destroys the least recently used key's spare; `clear`/`close` destroy every
 * spare, and so does `beforeExit` when a process forgets to close.
 */
export class SandboxPool {
  readonly sparesPerKey: number;
  readonly maxSpares: number;
  readonly stats: SandboxPoolStats = { hits: 0, misses: 0, created: 0, recycled: 0, retargeted: 0, destroyed: 0, errors: 0 };
  private readonly ready = new Map<string, Sandbox[]>();
  private readonly pending = new Map<string, number>();
  private readonly lastUse = new Map<string, number>();
  private readonly ops = new Set<Promise<void>>();
  private readonly log: (message: string) => void;
  private readonly createSandbox: (options: CreateSandboxOptions) => Promise<Sandbox>;
  private readonly warned = new Set<string>();
  private tick = 0;
  /** Bumped by `clear`: work started before it destroys its container instead of keeping it. */
  private generation = 0;
  private closed = false;
  private refs = 0;

  constructor(options: SandboxPoolOptions = {}) {
    const count = (v: number | undefined, d: number, name: string): number => {
      const n = v ?? d;
      if (!Number.isInteger(n) || n < 0) throw new RangeError(`SandboxPool: ${name} must be a non-negative integer, got ${String(v)}`);
      return n;
    };
    this.sparesPerKey = count(options.sparesPerKey, 1, 'sparesPerKey');
    this.maxSpares = count(options.maxSpares, 4, 'maxSpares');
    this.log = options.log ?? ((m) => console.warn(m));
    this.createSandbox = options.create ?? ((o) => Sandbox.create(o));
  }

  /** Ready spares in all. */
  get size(): number {
    let n = 0;
    for (const l of this.ready.values()) n += l.length;
    return n;
  }

  /** Spares being prepared (created or restored) in the background. */
  get preparing(): number {
    let n = 0;
    for (const v of this.pending.values()) n += v;
    return n;
  }

  /** Ready spares for a key. */
  readyFor(config: SandboxConfig, archive: Buffer): number {
    return this.ready.get(poolKey(config, archive))?.length ?? 0;
  }

  private get enabled(): boolean {
    return !this.closed && this.sparesPerKey > 0 && this.maxSpares > 0;
  }

  /**
   * Registers a user (an environment); {@link unref} by the last one destroys the spares (the pool stays
   * usable). Lets a shared pool hold containers only while something may reset into them.
   */
  ref(): void {
    this.refs += 1;
  }

  /** See {@link ref}. */
  async unref(): Promise<void> {
    this.refs = Math.max(0, this.refs - 1);
    if (this.refs === 0) await this.clear();
  }

  /**
   * Returns a sandbox whose work areas hold exactly `archive`'s state: a ready spare for (config, archive)
   * when there is one (`current` then goes to the recycler), else `current` — or a new sandbox when there is
   * none — restored in place with {@link Sandbox.reset} (and a spare starts being prepared).
   */
  async reset(current: Sandbox | undefined, archive: Buffer, options: CreateSandboxOptions = {}): Promise<PoolReset> {
    const pooled = this.enabled && options.detached !== true;
    const key = pooled ? poolKey(current?.config ?? resolveConfig(options.config), archive) : '';
    if (pooled) {
      this.touch(key);
      const spare = this.take(key);
      if (spare) {
        this.stats.hits += 1;
        if (current && current !== spare) this.release(current, archive);
        return { sandbox: spare, hit: true };
      }
      this.stats.misses += 1;
    }
    const sb = current ?? (await this.createSandbox(options));
    try {
      await sb.reset(archive);
    } catch (err) {
      if (!current) await sb.destroy().catch(() => undefined);
      throw err;
    }
    if (pooled) this.prepare(archive, options, sb.config);
    return { sandbox: sb, hit: false };
  }

  /** Takes a ready spare for (config, archive), or undefined. Synchronous: a spare is never handed out twice. */
  take(key: string): Sandbox | undefined {
    const list = this.ready.get(key);
    while (list && list.length > 0) {
      const sb = list.shift() as Sandbox;
      if (list.length === 0) this.ready.delete(key);
      if (!sb.isDestroyed) return sb;
    }
    return undefined;
  }

  /**
   * Starts preparing a spare for (config, archive) in the background unless the key has its share: a new
   * sandbox while the pool has room, else the least recently used other key's ready spare is restored to it.
   */
  prepare(archive: Buffer, options: CreateSandboxOptions = {}, config: SandboxConfig = resolveConfig(options.config)): void {
    if (!this.enabled || options.detached === true) return;
    const key = poolKey(config, archive);
    this.touch(key);
    if (this.countFor(key) >= this.sparesPerKey) return;
    if (this.size + this.preparing < this.maxSpares) {
      this.stats.created += 1;
      this.spawn(key, archive, 'prepare a spare', () => this.createSandbox({ ...options, warn: (m) => this.warnOnce(m, options.warn) }));
      return;
    }
    const victim = this.lruKey(key);
    if (victim === undefined) return;
    const sb = this.take(victim);
    if (!sb) return;
    this.stats.retargeted += 1;
    this.spawn(key, archive, 'retarget a spare', () => Promise.resolve(sb));
  }

  /**
   * Hands a used sandbox to the recycler: restored to `archive` in the background and kept as a spare for
   * it, or destroyed (the key has its share, it was replaced or destroyed, the pool is closed).
   */
  release(sb: Sandbox, archive: Buffer): void {
    if (sb.isDestroyed) return;
    if (!this.enabled || sb.detached || sb.replacements > 0) {
      this.track(this.destroy(sb));
      return;
    }
    const key = poolKey(sb.config, archive);
    if (this.countFor(key) >= this.sparesPerKey) {
      this.track(this.destroy(sb));
      return;
    }
    this.stats.recycled += 1;
    this.spawn(key, archive, 'recycle a used sandbox', () => Promise.resolve(sb));
  }

  /** Resolves when no background work is left (for tests and benchmarks). */
  async idle(): Promise<void> {
    while (this.ops.size > 0) await Promise.all([...this.ops]);
  }

  /** Destroys every spare and waits for background work (whose results are destroyed). The pool stays usable. */
  async clear(): Promise<void> {
    this.generation += 1;
    live.delete(this);
    const spares = [...this.ready.values()].flat();
    this.ready.clear();
    await Promise.all(spares.map((sb) => this.destroy(sb)));
    await this.idle();
  }

  /** {@link clear}, and the pool takes no more spares. Safe to call twice. */
  async close(): Promise<void> {
    this.closed = true;
    await this.clear();
  }

  private countFor(key: string): number {
    return (this.ready.get(key)?.length ?? 0) + (this.pending.get(key) ?? 0);
  }

  private touch(key: string): void {
    this.tick += 1;
    this.lastUse.set(key, this.tick);
  }

  /** The least recently used key other than `except` that has a ready spare. */
  private lruKey(except: string): string | undefined {
    let best: string | undefined;
    let bestTick = Infinity;
    for (const k of this.ready.keys()) {
      const t = this.lastUse.get(k) ?? 0;
      if (k !== except && t < bestTick) {
        best = k;
        bestTick = t;
      }
    }
    return best;
  }

  private warnOnce(message: string, warn: ((m: string) => void) | undefined): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    (warn ?? ((m: string) => console.warn(m)))(message);
  }

  private track(op: Promise<void>): void {
    this.ops.add(op);
    void op.then(() => this.ops.delete(op));
  }

  private async destroy(sb: Sandbox): Promise<void> {
    if (sb.isDestroyed) return;
    this.stats.destroyed += 1;
    await sb.destroy().catch((err: unknown) => sandboxesStopping() || this.log(`gymflow sandbox pool: destroying ${sb.id.slice(0, 12)} failed: ${String(err)}`));
  }

  /** Gets a sandbox, restores it exactly (never replacing it) and admits it as a spare for `key`. Never rejects. */
  private spawn(key: string, archive: Buffer, what: string, get: () => Promise<Sandbox>): void {
    const generation = this.generation;
    this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
    watchExit(this);
    const op = (async (): Promise<void> => {
      let sb: Sandbox | undefined;
      try {
        sb = await get();
        if (generation !== this.generation || this.closed) throw new Error('the pool was cleared');
        await sb.restoreExact(archive);
        if (sb.replacements > 0) throw new Error('the sandbox was replaced');
      } catch (err) {
        // Cleared, closed, or the process is removing its sandboxes on a signal: nothing to report.
        const cleared = generation !== this.generation || this.closed || sandboxesStopping();
        if (!cleared) {
          this.stats.errors += 1;
          this.log(`gymflow sandbox pool: could not ${what}; the container was destroyed: ${err instanceof Error ? err.message : String(err)}`);
        }
        const failed = sb;
        sb = undefined;
        if (failed) await this.destroy(failed);
      } finally {
        const n = (this.pending.get(key) ?? 1) - 1;
        if (n > 0) this.pending.set(key, n);
        else this.pending.delete(key);
      }
      if (sb) await this.admit(key, sb, generation);
    })().catch((err: unknown) => {
      this.stats.errors += 1;
      this.log(`gymflow sandbox pool: ${String(err)}`);
    });
    this.track(op);
  }

  /** Keeps a freshly restored sandbox as a spare when the bounds allow (evicting the LRU key's spare), else destroys it. */
  private async admit(key: string, sb: Sandbox, generation: number): Promise<void> {
    if (generation !== this.generation || !this.enabled || sb.isDestroyed) return this.destroy(sb);
    if ((this.ready.get(key)?.length ?? 0) >= this.sparesPerKey) return this.destroy(sb);
    let evicted: Sandbox | undefined;
    if (this.size + this.preparing >= this.maxSpares) {
      const victim = this.lruKey(key);
      evicted = victim === undefined ? undefined : this.take(victim);
      if (!evicted) return this.destroy(sb);
    }
    const list = this.ready.get(key) ?? [];
    list.push(sb);
    this.ready.set(key, list);
    if (evicted) await this.destroy(evicted);
  }
}

let shared: SandboxPool | undefined;

/**
 * The pool that `gymflow/sandbox-v0` environments share by default (1 spare per key, 4 in all), so a task
 * repeated on any environment (GRPO groups, retries, evaluation) finds a spare: the process-wide one, or inside a
 * sandbox scope (a pipeline activity: scope-context.ts) the scope's own, which ends with it.
 */
export function sharedSandboxPool(): SandboxPool {
  const scoped = sandboxScope.getStore()?.pool;
  if (scoped !== undefined) return scoped;
  shared ??= new SandboxPool();
  return shared;
}
