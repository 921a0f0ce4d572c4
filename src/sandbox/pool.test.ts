import { afterAll, expect, it } from 'vitest';
import { requires } from '../../tests/support/requires.js';
import { dockerClient } from './docker.js';
import { SandboxPool } from './pool.js';
import type { Sandbox } from './sandbox.js';
import { packTar } from './tar.js';

const docker = requires.docker();

/**
 * Everything a restore must reproduce: /work's entries (type, mode, size, path) and file hashes, and what
 * is left in the other writable places, in System V IPC, and among the agent's processes.
 */
const FINGERPRINT = `
cd /work && find . -mindepth 1 -printf '%y %m %s %P\\n' | sort
find . -type f -print0 | sort -z | xargs -0 sha256sum
echo "--- elsewhere:"; ls -A /tmp /home/agent /dev/shm /dev/mqueue
echo "--- ipc:"; ipcs | grep -c agent
echo "--- agent processes:"; ps -e -o user=,comm= | grep -E '^agent +(sleep|python3)' | wc -l
`;

/** An episode that writes, deletes, chmods, leaves a background process, and uses every writable place. */
const DIRTY = `
echo changed > a.txt; rm -f pkg/b.py; mkdir -p new/deep; echo x > new/deep/y; chmod 000 new; chmod 600 run.sh
echo t > /tmp/t; echo h > ~/.h; echo s > /dev/shm/s
python3 -c "
import ctypes, os
libc = ctypes.CDLL(None)
libc.shmget(4242, 4096, 0o1000 | 0o600)
libc.mq_open(b'/q', os.O_CREAT | os.O_RDWR, 0o600, None)
"
(sleep 600 &) ; nohup sleep 600 >/dev/null 2>&1 &
ls /dev/mqueue; ipcs -m | grep -c agent
`;

docker.describe('SandboxPool', () => {
  const pool = new SandboxPool({ sparesPerKey: 1, maxSpares: 2 });
  const seen = new Set<string>();
  afterAll(async () => {
    await pool.close();
  });

  it('a spare, and a recycled container after a dirty episode, are identical to a fresh restore; close destroys every spare', async () => {
    const archive = await packTar([
      { path: 'a.txt', content: 'a\n' },
      { path: 'pkg/b.py', content: 'B = 2\n' },
      { path: 'run.sh', content: '#!/bin/sh\necho run\n', mode: 0o755 },
    ]);
    const first = await pool.reset(undefined, archive, { task: 'pool-test' });
    let sb: Sandbox = first.sandbox;
    seen.add(sb.id);
    expect(first.hit).toBe(false);
    const fresh = (await sb.shell(FINGERPRINT)).output;
    expect(fresh).toMatch(/^f 644 2 a.txt$/m);
    expect(fresh).toMatch(/^f 755 \d+ run.sh$/m);
    expect(fresh).toMatch(/--- ipc:\n0\n--- agent processes:\n0\n$/);
    await pool.idle(); // the spare prepared on the miss
    for (let episode = 0; episode < 2; episode++) {
      const dirty = await sb.shell(DIRTY);
      expect(dirty.output).toMatch(/^q\n1\n$/m); // the episode did create a message queue and a shm segment
      const before = sb.id;
      const r = await pool.reset(sb, archive, { task: 'pool-test' });
      expect(r.hit).toBe(true);
      sb = r.sandbox;
      expect(sb.id).not.toBe(before);
      seen.add(sb.id);
      expect((await sb.shell(FINGERPRINT)).output).toBe(fresh);
      await pool.idle(); // the dirty container is recycled: on the second episode, it is the one handed out
    }
    expect(seen.size).toBe(2);
    expect(pool.stats).toMatchObject({ hits: 2, misses: 1, created: 1, recycled: 2, errors: 0 });
    await sb.destroy();
    await pool.close();
    for (const id of seen) await expect(dockerClient().getContainer(id).inspect()).rejects.toThrow(/no such container/i);
  }, 60_000);
});
