import type Docker from 'dockerode';
import { SandboxError } from './errors.js';

/**
 * The sandbox containers this process owns, so that an interrupted process (SIGINT, SIGTERM: see
 * `src/cli/main.ts`) can remove them before it exits instead of leaving them to a later `gc`. Every
 * container {@link Sandbox} starts is tracked from its creation until it is removed; detached ones (the
 * CLI's `sandbox create`) are let go once their creator hands them over ({@link untrackContainer}).
 */
const owned = new Map<string, Docker.Container>();
/** Creations in flight: a container the engine is still creating is removed once it exists. */
const creating = new Set<Promise<unknown>>();
let stopping = false;

/** True once {@link removeOwnedSandboxes} began: no new sandbox may be created. */
export function sandboxesStopping(): boolean {
  return stopping;
}

/** Throws a {@link SandboxError} (`SANDBOX_STOPPING`) once the process is removing its sandboxes. */
export function assertNotStopping(): void {
  if (stopping) throw new SandboxError('the process is shutting down: no new sandbox is created', { code: 'SANDBOX_STOPPING' });
}

/** Tracks a creation in flight until it settles. */
export function trackCreation<T>(p: Promise<T>): Promise<T> {
  creating.add(p);
  const done = (): void => void creating.delete(p);
  p.then(done, done);
  return p;
}

/** Tracks a container this process created (until {@link untrackContainer}). */
export function trackContainer(container: Docker.Container): void {
  owned.set(container.id, container);
}

/** Stops tracking a container: it was removed, or handed over to outlive the process (detached). */
export function untrackContainer(id: string): void {
  owned.delete(id);
}

/** The ids of the containers this process owns now. */
export function ownedSandboxIds(): string[] {
  return [...owned.keys()];
}

/** How often {@link gone} asks the engine whether a container being removed still exists. */
const GONE_POLL_MS = 50;

/**
 * Waits until the engine no longer knows a container (true), or says something else than "no such
 * container" (false). Unbounded: {@link removeOwnedSandboxes} bounds it with its own timeout.
 */
async function gone(c: Docker.Container): Promise<boolean> {
  for (;;) {
    try {
      await c.inspect();
    } catch (err) {
      return /no such container/i.test(String(err));
    }
    await new Promise((resolve) => setTimeout(resolve, GONE_POLL_MS));
  }
}

/**
 * Removes (force: killed first) every container this process owns, after the creations in flight have
 * settled, and refuses new ones from then on. A container already being removed (by a `replace` in flight) counts
 * once the engine no longer knows it. Bounded: resolves within `timeoutMs` whatever the engine does, with the
 * ids it could not confirm removed. Safe to call more than once.
 */
export async function removeOwnedSandboxes(timeoutMs = 10_000): Promise<{ removed: string[]; left: string[] }> {
  stopping = true;
  const removed: string[] = [];
  const work = (async (): Promise<void> => {
    // A container being created now is tracked the moment it exists; wait for those first.
    await Promise.allSettled([...creating]);
    await Promise.all(
      [...owned].map(async ([id, c]) => {
        try {
          await c.remove({ force: true });
        } catch (err) {
          if (/removal .* in progress/i.test(String(err))) {
            // Another removal (a `replace`, a `destroy`) is under way: removed means gone, so wait for it.
            if (!(await gone(c))) return;
          } else if (!/no such container/i.test(String(err))) return;
        }
        owned.delete(id);
        removed.push(id);
      }),
    );
  })();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    timer.unref();
  });
  await Promise.race([work, timeout]);
  clearTimeout(timer);
  return { removed, left: [...owned.keys()] };
}
