import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requires } from '../../../tests/support/requires.js';
import { dockerClient, Sandbox } from '../../sandbox/index.js';
import { PythonRunner } from './python-runner.js';

const docker = requires.docker();

/** How many live processes (zombies, already dead and waiting for init to reap them, aside) the agent user (uid 1000) has. */
const AGENT_PROCESSES = `
import os
live = 0
for p in os.listdir('/proc'):
    if p.isdigit():
        try:
            stat = open('/proc/%s/stat' % p).read()
            live += os.stat('/proc/' + p).st_uid == 1000 and stat[stat.rfind(')') + 2] != 'Z'
        except OSError:
            pass
live
`;

docker.describe('PythonRunner', () => {
  let py: PythonRunner;
  beforeAll(() => {
    py = new PythonRunner({ timeoutS: 2, outputCapBytes: 1024 });
    py.newEpisode();
  });
  afterAll(async () => {
    await py?.close();
  });

  it('runs code: stdout, stderr, the value of the last expression; variables persist within the episode', async () => {
    const first = await py.run('import sys\nprint("rows:", 3)\nprint("careful", file=sys.stderr)\nx = 20\nx * 2');
    expect(first).toEqual({ status: 'ok', stdout: 'rows: 3\n', stderr: 'careful\n', value: '40', restarted: false });
    expect((await py.run('x + 2')).value).toBe('22');
    // A statement, or an expression whose value is None, has no value (as in a REPL).
    expect(await py.run('y = x')).toEqual({ status: 'ok', stdout: '', stderr: '', restarted: false });
    expect((await py.run('print("only")')).value).toBeUndefined();
    const raised = await py.run('def f(a):\n    return 1 / a\nf(0)');
    expect(raised).toMatchObject({ status: 'error', error: { type: 'ZeroDivisionError', message: 'division by zero' }, restarted: false });
    // The traceback shows the code's own frames and lines, not the interpreter's wrapper.
    expect(raised.error?.traceback).toMatch(/File "<python-\d+>", line 3, in <module>\n {4}f\(0\)\n.*File "<python-\d+>", line 2, in f\n {4}return 1 \/ a/s);
    expect(raised.error?.traceback).not.toMatch(/child_main|supervisor/);
    expect((await py.run('1 +')).error?.type).toBe('SyntaxError');
    expect((await py.run('y')).value).toBe('20');
  });

  it('starts each episode from nothing: no variables, files, processes or IPC objects of the last one', async () => {
    const dirty = await py.run(
      [
        'import ctypes, os, subprocess',
        'secret = "episode-one"',
        "for d in ('/tmp', '/work', '/home/agent', '/dev/shm'):",
        "    open(d + '/left-behind', 'w').write(secret)",
        "os.makedirs('/work/locked/inner'); os.chmod('/work/locked', 0)",
        "subprocess.Popen(['sleep', '300'], start_new_session=True)",
        'ctypes.CDLL(None).shmget(4242, 4096, 0o1666)',
        "len(open('/proc/sysvipc/shm').read().splitlines())",
      ].join('\n'),
    );
    expect(dirty).toMatchObject({ status: 'ok', value: '2' });
    py.newEpisode();
    expect((await py.run('secret')).error?.type).toBe('NameError');
    const clean = await py.run(
      [
        'import os',
        "dirs = {d: os.listdir(d) for d in ('/tmp', '/work', '/home/agent', '/dev/shm')}",
        "sleeping = [p for p in os.listdir('/proc') if p.isdigit() and open('/proc/%s/cmdline' % p, 'rb').read() == b'sleep\\x00300\\x00']",
        "(dirs, sleeping, len(open('/proc/sysvipc/shm').read().splitlines()))",
      ].join('\n'),
    );
    expect(clean.value).toBe("({'/tmp': [], '/work': [], '/home/agent': [], '/dev/shm': []}, [], 1)");
  });

  it('stops an infinite loop at the time limit; the next call runs in a fresh interpreter', async () => {
    await py.run('kept = 1');
    const r = await py.run('import time\nprint("started")\nwhile True:\n    time.sleep(0) or sum(range(1000))');
    expect(r).toMatchObject({ status: 'timeout', stdout: 'started\n', restarted: true });
    expect(await py.run('1 + 1')).toMatchObject({ status: 'ok', value: '2' });
    expect((await py.run('kept')).error?.type).toBe('NameError');
  });

  it('survives fork bombs: the call ends in an error or at the time limit, what it started is killed, the next call works', async () => {
    const python = await py.run('import os\nwhile True:\n    os.fork()');
    expect(['error', 'timeout']).toContain(python.status);
    expect(await py.run(AGENT_PROCESSES)).toMatchObject({ status: 'ok', value: '2' }); // the supervisor and the interpreter
    const shell = await py.run("import subprocess\nsubprocess.run(['sh', '-c', 'bomb() { bomb | bomb & }; bomb'])\n'returned'");
    expect(['ok', 'error', 'timeout']).toContain(shell.status);
    expect(await py.run(AGENT_PROCESSES)).toMatchObject({ status: 'ok', value: '2' });
    expect(await py.run('sum(range(10))')).toMatchObject({ status: 'ok', value: '45' });
  });

  it('refuses a 1 GiB allocation with a MemoryError and keeps the interpreter', async () => {
    await py.run('kept = "still here"');
    const r = await py.run('block = bytearray(1024 ** 3)');
    expect(r).toMatchObject({ status: 'error', error: { type: 'MemoryError' }, restarted: false });
    expect(await py.run('kept')).toMatchObject({ status: 'ok', value: "'still here'" });
  });

  it("reads the container's files, never the host's", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-host-marker-'));
    const marker = join(dir, 'marker.txt');
    const secret = randomBytes(16).toString('hex');
    writeFileSync(marker, secret);
    try {
      const r = await py.run(`open(${JSON.stringify(marker)}).read()`);
      expect(r).toMatchObject({ status: 'error', error: { type: 'FileNotFoundError' } });
      // Nothing of the host is mounted: the root is the image's, the rest the container's own tmpfs, proc, sys, dev
      // and the per-container files Docker writes (hosts, hostname, resolv.conf).
      const mounts = await py.run("sorted({line.split()[4] for line in open('/proc/self/mountinfo')})");
      expect(mounts.status).toBe('ok');
      expect(mounts.value).not.toContain(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const passwd = await py.run("import hashlib\ntext = open('/etc/passwd', 'rb').read()\n(hashlib.sha256(text).hexdigest(), b'agent:x:1000:1000::/home/agent:/bin/bash' in text)");
    expect(passwd.status).toBe('ok');
    const [seen, hasAgent] = (passwd.value ?? '').slice(1, -1).split(', ');
    // The image's /etc/passwd (a fresh sandbox of the same image reads the same bytes), with its `agent` user.
    const image = await Sandbox.create({ config: { image: py.limits.image }, skipGc: true });
    try {
      const r = await image.exec(['sh', '-c', 'sha256sum /etc/passwd']);
      expect(`'${r.output.split(' ')[0] ?? ''}'`).toBe(seen);
    } finally {
      await image.destroy();
    }
    expect(hasAgent).toBe('True');
    expect(`'${createHash('sha256').update(readFileSync('/etc/passwd')).digest('hex')}'`).not.toBe(seen);
  });

  it('has no network (no interface but loopback, no route, no name resolution) and no bridge to the host', async () => {
    const connect = await py.run("import socket\ns = socket.socket()\ns.settimeout(1)\ns.connect(('1.1.1.1', 53))");
    expect(connect).toMatchObject({ status: 'error', error: { type: 'OSError', message: '[Errno 101] Network is unreachable' } });
    const gateway = await py.run("import socket\nsocket.create_connection(('172.17.0.1', 2375), timeout=1)");
    expect(gateway).toMatchObject({ status: 'error', error: { type: 'OSError' } });
    expect((await py.run("import socket\nsocket.getaddrinfo('example.com', 80)")).error?.type).toBe('gaierror');
    const interfaces = await py.run("sorted(line.split(':')[0].strip() for line in open('/proc/net/dev').readlines()[2:])");
    expect(interfaces.value).toBe("['lo']");
    // CPython in a container, not a WebAssembly Python inside Node: no bridge to the host's JavaScript.
    expect((await py.run('import js')).error?.type).toBe('ModuleNotFoundError');
  });

  it('caps stdout, stderr and the value', async () => {
    const r = await py.run("import sys\nprint('o' * 100000)\nsys.stderr.write('e' * 5000)\n'v' * 5000");
    expect(r.status).toBe('ok');
    expect(r.stdout).toBe(`${'o'.repeat(1024)}\n[truncated: 1024 of 100001 bytes shown]`);
    expect(r.stderr).toBe(`${'e'.repeat(1024)}\n[truncated: 1024 of 5000 bytes shown]`);
    expect(r.value).toMatch(/^'v{1023}\.\.\. \[truncated: 1024 of 5002 bytes shown\]$/);
  });

  it('keeps the supervisor out of reach: its files and memory are closed to the code, and killing it costs one call', async () => {
    const peek = await py.run(
      [
        'import os',
        'sup = os.getppid()',
        'out = []',
        "for path in ('/proc/%d/fd' % sup, '/proc/%d/mem' % sup, '/proc/%d/environ' % sup):",
        '    try:',
        "        os.listdir(path) if path.endswith('fd') else open(path, 'rb').read(1)",
        "        out.append('open')",
        '    except PermissionError:',
        "        out.append('denied')",
        'out',
      ].join('\n'),
    );
    expect(peek.value).toBe("['denied', 'denied', 'denied']");
    const kill = await py.run('import os, signal\nos.kill(os.getppid(), signal.SIGKILL)');
    expect(kill).toMatchObject({ status: 'died', restarted: true });
    expect(kill.message).toMatch(/supervisor stopped/);
    expect(await py.run('6 * 7')).toMatchObject({ status: 'ok', value: '42' });
  });

  it('removes its container on close, and a closed runner runs nothing', async () => {
    const own = new PythonRunner({ timeoutS: 2 });
    own.newEpisode();
    expect((await own.run('1')).status).toBe('ok');
    const id = own.containerId as string;
    expect((await dockerClient().getContainer(id).inspect()).State.Running).toBe(true);
    await own.close();
    await own.close();
    await expect(dockerClient().getContainer(id).inspect()).rejects.toThrow(/no such container/i);
    expect(await own.run('1')).toMatchObject({ status: 'failed', message: 'the python tool was closed' });
  });

  it('removes its container when the process exits without close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-forgot-close-'));
    const script = join(dir, 'forgot.mts');
    const runner = new URL('./python-runner.ts', import.meta.url).pathname;
    writeFileSync(script, `import { PythonRunner } from ${JSON.stringify(runner)};\nconst py = new PythonRunner();\npy.newEpisode();\nconsole.log(process.pid, (await py.run('6 * 7')).value);\n`);
    try {
      const r = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 120_000 });
      const [pid, value] = r.stdout.trim().split(' ');
      expect([r.status, value]).toEqual([0, '42']);
      const left = await dockerClient().listContainers({ all: true, filters: { label: [`gymflow.sandbox.owner-pid=${pid ?? ''}`] } });
      expect(left).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is unavailable, not broken, when no sandbox can start (here: no such image)', async () => {
    const none = new PythonRunner({ image: 'gymflow/no-such-image:0' });
    const r = await none.run('1');
    expect(r.status).toBe('unavailable');
    expect(r.message).toMatch(/Docker sandbox: it needs a Docker engine and the image gymflow\/no-such-image:0, and no sandbox could be started: .*gymflow sandbox build-image/);
    await none.close();
  });
});
