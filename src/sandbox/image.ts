import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../core/package-root.js';
import { SandboxError } from './errors.js';

/** scripts/build-sandbox-image.sh of this checkout (or installed package). */
export const BUILD_SCRIPT = join(PACKAGE_ROOT, 'scripts', 'build-sandbox-image.sh');

/**
 * Builds the sandbox base image (debootstrap → chroot apt-get → docker import), or does nothing when the
 * image tagged with the recipe's hash exists. Returns the image reference (`gymflow/sandbox:<hash>`).
 * Progress goes to `onLog` (default: stderr).
 */
export async function buildSandboxImage(
  options: { force?: boolean; onLog?: (line: string) => void } = {},
): Promise<string> {
  const onLog = options.onLog ?? ((l: string) => process.stderr.write(`${l}\n`));
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [BUILD_SCRIPT], {
      env: { ...process.env, ...(options.force ? { FORCE: '1' } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => d.toString().split('\n').filter(Boolean).forEach(onLog));
    child.on('error', (err) => reject(new SandboxError(`cannot run ${BUILD_SCRIPT}: ${err.message}`, { cause: err })));
    child.on('close', (code) => {
      const ref = stdout.trim().split('\n').pop() ?? '';
      if (code === 0 && ref) resolve(ref);
      else reject(new SandboxError(`${BUILD_SCRIPT} exited with ${String(code)}`));
    });
  });
}
