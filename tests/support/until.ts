/** Thrown by a probe of {@link until} when what it waits for can no longer happen (the run ended first): the wait ends at once. */
export class WaitedInVain extends Error {}

/**
 * Polls `probe` every `everyMs` (300) until it returns a value, and returns it; an error the probe throws is kept and
 * polling goes on, except a {@link WaitedInVain}, thrown at once. Throws after `timeoutMs`, naming `what` and the last
 * error. For tests of real processes that wait for an event (a stage reached, a file written) rather than for a fixed time.
 */
export async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>, everyMs = 300): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      if (err instanceof WaitedInVain) throw new Error(`gave up waiting for ${what}: ${err.message}`);
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`);
}
