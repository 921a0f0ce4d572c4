/**
 * Polls `probe` every `everyMs` (300) until it returns a value, and returns it; an error the probe throws is kept and
 * polling goes on. Throws after `timeoutMs`, naming `what` and the last error. For tests of real processes that wait
 * for an event (a stage reached, a file written) rather than for a fixed time.
 */
export async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>, everyMs = 300): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`);
}
