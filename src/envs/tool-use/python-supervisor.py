# The supervisor of the `python` tool of gymflow/tool-use-python-v0 (src/envs/tool-use/python-runner.ts).
#
# It runs inside a hardened gymflow sandbox container (no network, read-only root, pids and memory limits, all
# capabilities dropped) as the agent user, started by one long-lived `docker exec -i`:
#
#   python3 -S -c 'import sys; exec(sys.argv[1])' <this source> supervisor <config JSON>
#
# and speaks JSON lines: one request per line on stdin, one response per line on stdout (its stderr is only for
# its own failures). Requests:
#
#   {"id": 1, "op": "run", "episode": "3", "code": "...", "timeout_s": 5}   run code in the episode's interpreter
#   {"id": 2, "op": "prepare", "episode": "4"}                             start the episode's interpreter now
#   {"id": 3, "op": "ping"}
#
# Each episode gets a fresh interpreter: a new `python3` process (exec'd, not forked, so no byte of the
# supervisor's memory, which saw earlier episodes' code, is in it), whose globals persist across the episode's
# calls. It gets each call's code on a pipe (a length line, then the code) and answers on another (one line, a
# dict's repr, read with `ast.literal_eval` and checked field by field: the code holds that pipe too); its stdout
# and stderr are pipes the supervisor reads as the code runs. The value of the last statement, when it is an
# expression, is evaluated apart (parse, run the rest, eval the last) and returned as its repr.
#
# A request with another episode first ends the old one: every process of the agent user but this one is killed
# (`kill(-1, SIGKILL)`, atomic in the kernel, so a fork bomb cannot outrun it), every place the agent can write is
# emptied (/work, /tmp, $HOME, /dev/shm, /dev/mqueue) and its System V IPC objects removed. So nothing of one
# episode (variables, files, processes) reaches the next.
#
# Limits: the interpreter runs under RLIMIT_AS (`memory_mib`: a huge allocation is a MemoryError), RLIMIT_CORE 0;
# each call under a wall-clock limit the supervisor enforces (the interpreter and everything it started are
# killed and a fresh one started); stdout, stderr and the value's repr are capped at `output_cap` bytes each. The
# container's pids limit stops a fork bomb, and what a call leaves running is killed when it returns; the
# interpreter runs at nice 19, so however many processes it starts the supervisor keeps the CPU it needs. The
# supervisor is not dumpable (PR_SET_DUMPABLE 0): the agent's code, same uid, cannot ptrace it or open its
# /proc/<pid>/fd or mem. It can kill it; the host then starts a new supervisor, which begins with the cleanup.
import sys

MODE = sys.argv[2] if len(sys.argv) > 2 else ''

# ---------------------------------------------------------------------------------------------------------------
# Shared


def _json():
    import json

    return json


def _write_line(fd, obj):
    data = (_json().dumps(obj, ensure_ascii=False) + '\n').encode('utf-8', 'replace')
    import os

    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


# ---------------------------------------------------------------------------------------------------------------
# The episode's interpreter


def child_main(req_fd, res_fd, memory_mib, value_cap):
    # Only built-in modules before the first call (json, ast and traceback import `re` and friends: tens of
    # milliseconds per episode). Requests are a length line and the code; responses one line, a dict's repr.
    import os
    import resource

    limit = memory_mib * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # The lowest priority within the container (the container's CPU share against the host's is the same): a
    # fork bomb's hundreds of processes still leave the supervisor the CPU to enforce the time limit.
    os.nice(19)
    import _ast
    import builtins
    import io

    main_pid = os.getpid()
    # Write-through text streams on the pipes the supervisor reads: what a call printed before it was stopped
    # (a time limit) is not lost in a buffer.
    sys.stdout = io.TextIOWrapper(io.FileIO(1, 'w', closefd=False), encoding='utf-8', errors='backslashreplace', write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, 'w', closefd=False), encoding='utf-8', errors='backslashreplace', write_through=True)
    namespace = {'__name__': '__main__', '__builtins__': builtins}
    requests = io.open(req_fd, 'rb', buffering=65536)
    sources = {}

    def respond(obj):
        data = (repr(obj) + '\n').encode('utf-8', 'backslashreplace')
        view = memoryview(data)
        while view:
            view = view[os.write(res_fd, view):]

    def cap(text):
        data = text.encode('utf-8', 'backslashreplace')
        if len(data) <= value_cap:
            return text
        cut = data[:value_cap].decode('utf-8', 'ignore')
        return cut + '... [truncated: %d of %d bytes shown]' % (len(cut.encode('utf-8')), len(data))

    def describe(err):
        import linecache
        import traceback

        # Tracebacks show the lines of the calls' code (linecache is where traceback looks them up).
        for name, text in sources.items():
            linecache.cache[name] = (len(text), None, text.splitlines(True), name)
        if isinstance(err, SyntaxError):
            lines = traceback.format_exception_only(type(err), err)
        else:
            # Only the code's own frames: skip this function's caller.
            lines = traceback.format_exception(type(err), err, err.__traceback__.tb_next if err.__traceback__ else None)
        return ''.join(lines)

    def reap():
        # Children the code started and that exited: not left as zombies.
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    respond({'ready': True})
    while True:
        header = requests.readline()
        if not header:
            os._exit(0)
        source = requests.read(int(header)).decode('utf-8', 'replace')
        filename = '<python-%d>' % (len(sources) + 1)
        sources[filename] = source
        response = {'ok': True, 'value': None}
        try:
            tree = compile(source, filename, 'exec', _ast.PyCF_ONLY_AST)
            last = None
            if tree.body and isinstance(tree.body[-1], _ast.Expr):
                last = _ast.Expression(tree.body.pop().value)
            exec(compile(tree, filename, 'exec'), namespace)
            if last is not None:
                value = eval(compile(last, filename, 'eval'), namespace)
                if value is not None:
                    response['value'] = cap(repr(value))
        except BaseException as err:  # SystemExit and KeyboardInterrupt end the call, not the interpreter
            if os.getpid() != main_pid:
                os._exit(1)
            try:
                message, trace = cap(str(err)), cap(describe(err))
            except BaseException:  # an exception whose str() raises, or no memory left to format it
                message, trace = '', type(err).__name__ + '\n'
            response = {'ok': False, 'error': {'type': type(err).__name__, 'message': message, 'traceback': trace}}
        if os.getpid() != main_pid:
            # A process the code forked came back here: it ends, as a script would.
            os._exit(0)
        reap()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # the code may have closed them
            pass
        respond(response)


# ---------------------------------------------------------------------------------------------------------------
# The supervisor

WRITABLE = ('/work', '/tmp', '/home/agent', '/dev/shm', '/dev/mqueue')


def supervisor_main():
    import ast
    import os
    import select
    import signal
    import subprocess
    import time

    if not os.path.exists('/.dockerenv'):
        # It kills every process of its user (kill -1) and empties /tmp and $HOME: never outside its container.
        sys.exit('python-supervisor: refusing to run outside a Docker container (no /.dockerenv)')
    config = _json().loads(sys.argv[3])
    memory_mib = int(config['memory_mib'])
    output_cap = int(config['output_cap'])
    source = sys.argv[1]
    me = os.getpid()
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except Exception:  # without ctypes the container's other limits still hold
        pass
    out_fd = sys.stdout.fileno()
    state = {'child': None, 'episode': None}

    class Child:
        def __init__(self):
            req_r, req_w = os.pipe()
            res_r, res_w = os.pipe()
            env = {
                'PATH': '/usr/local/bin:/usr/bin:/bin',
                'HOME': '/home/agent',
                'LANG': 'C.UTF-8',
                'PYTHONHASHSEED': '0',
                'PYTHONDONTWRITEBYTECODE': '1',
            }
            argv = [
                sys.executable, '-S', '-c', 'import sys; exec(sys.argv[1])', source, 'child',
                str(req_r), str(res_w), str(memory_mib), str(output_cap),
            ]
            self.proc = None
            for attempt in range(60):
                try:
                    self.proc = subprocess.Popen(
                        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        pass_fds=(req_r, res_w), cwd='/work', env=env, start_new_session=True,
                    )
                    break
                except BlockingIOError:
                    # The pids of killed processes are not free yet (their parent reaps them).
                    time.sleep(0.05)
            os.close(req_r)
            os.close(res_w)
            if self.proc is None:
                os.close(req_w)
                os.close(res_r)
                raise RuntimeError('cannot start an interpreter: no process can be created')
            self.req = req_w
            self.res = res_r
            self.out = self.proc.stdout.fileno()
            self.err = self.proc.stderr.fileno()
            for fd in (self.out, self.err, self.res):
                os.set_blocking(fd, False)
            self.calls = 0

        def close(self):
            for f in (self.proc.stdout, self.proc.stderr):
                f.close()
            for fd in (self.req, self.res):
                try:
                    os.close(fd)
                except OSError:
                    pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    class Capped:
        def __init__(self):
            self.parts = []
            self.kept = 0
            self.total = 0

        def add(self, data):
            self.total += len(data)
            room = output_cap - self.kept
            if room > 0:
                self.parts.append(data[:room])
                self.kept += min(room, len(data))

        def text(self):
            raw = b''.join(self.parts)
            text = raw.decode('utf-8', 'ignore' if self.total > output_cap else 'replace')
            if self.total > output_cap:
                text += '\n[truncated: %d of %d bytes shown]' % (self.kept, self.total)
            return text

    def kill_all():
        """Kills every process of the agent user but this one (the interpreter, what it started, strays)."""
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass

    def sweep(keep):
        """Kills the processes a call left running (not the interpreter); False when they keep coming."""
        for _ in range(20):
            found = False
            for name in os.listdir('/proc'):
                if not name.isdigit():
                    continue
                pid = int(name)
                if pid in keep:
                    continue
                try:
                    with open('/proc/%d/stat' % pid, 'rb') as f:
                        stat = f.read()
                except OSError:
                    continue
                if stat[stat.rfind(b')') + 2:stat.rfind(b')') + 3] == b'Z':
                    continue
                try:
                    os.kill(pid, signal.SIGKILL)
                    found = True
                except OSError:
                    pass  # another user's (the keeper, PID 1) or gone
            if not found:
                return True
            time.sleep(0.01)
        return False

    def remove(path):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return
        import stat as st_mod

        if st_mod.S_ISDIR(st.st_mode):
            try:
                os.chmod(path, 0o700)
            except OSError:
                pass
            for name in os.listdir(path):
                remove(os.path.join(path, name))
            os.rmdir(path)
        else:
            os.unlink(path)

    def wipe():
        for top in WRITABLE:
            try:
                names = os.listdir(top)
            except OSError:
                continue
            for name in names:
                remove(os.path.join(top, name))
        left = [top for top in WRITABLE if os.path.isdir(top) and os.listdir(top)]
        if left:
            raise RuntimeError('cannot empty %s' % ', '.join(left))
        ipc = False
        for kind in ('shm', 'msg', 'sem'):
            try:
                with open('/proc/sysvipc/' + kind) as f:
                    ipc = ipc or len(f.read().strip().splitlines()) > 1
            except OSError:
                pass
        if ipc:
            subprocess.run(['ipcrm', '-a'], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)

    def wait_ready(child, deadline):
        buf = b''
        while b'\n' not in buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RuntimeError('the interpreter did not start in time')
            r, _, _ = select.select([child.res], [], [], remaining)
            if r:
                data = os.read(child.res, 4096)
                if not data:
                    raise RuntimeError('the interpreter exited while starting: ' + drain_text(child.err))
                buf += data

    def drain_text(fd):
        chunks = []
        try:
            while True:
                data = os.read(fd, 65536)
                if not data:
                    break
                chunks.append(data)
        except OSError:
            pass
        return b''.join(chunks).decode('utf-8', 'replace')[-2000:]

    def end_episode():
        child = state['child']
        kill_all()
        if child is not None:
            child.close()
        state['child'] = None
        # Orphans are reaped by the container's init; our own children here.
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break

    def start_episode(episode):
        end_episode()
        wipe()
        state['episode'] = episode
        child = Child()
        state['child'] = child
        wait_ready(child, time.monotonic() + 30)

    def restart_interpreter():
        """After a time limit or a crash: a fresh interpreter for the same episode (its variables are gone)."""
        end_episode()
        child = Child()
        state['child'] = child
        wait_ready(child, time.monotonic() + 30)

    def exit_status(child):
        try:
            code = child.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return 'did not exit'
        if code < 0:
            try:
                return 'killed by signal %s' % signal.Signals(-code).name
            except ValueError:
                return 'killed by signal %d' % -code
        return 'exit status %d' % code

    def run(req):
        child = state['child']
        timeout = float(req.get('timeout_s', 5))
        out, err = Capped(), Capped()
        # What strays of earlier calls wrote after those calls returned is not this call's output.
        for fd in (child.out, child.err):
            for _ in range(64):
                try:
                    if not os.read(fd, 65536):
                        break
                except (BlockingIOError, OSError):
                    break
        data = req['code'].encode('utf-8', 'surrogatepass')
        try:
            os.write(child.req, b'%d\n' % len(data))
            view = memoryview(data)
            while view:
                view = view[os.write(child.req, view):]
        except OSError:
            pass  # it died: seen below as the end of its response pipe
        deadline = time.monotonic() + timeout
        buf = b''
        fds = [child.res, child.out, child.err]
        outcome = None
        while outcome is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                outcome = 'timeout'
                break
            r, _, _ = select.select(fds, [], [], remaining)
            for fd in r:
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if fd == child.res:
                    if not data:
                        outcome = 'died'
                        break
                    buf += data
                    if b'\n' in buf:
                        outcome = 'done'
                        break
                elif not data:
                    fds.remove(fd)
                else:
                    (out if fd == child.out else err).add(data)
        # What was written before the response (or before the end) is in the pipes: take it, boundedly.
        for fd, sink in ((child.out, out), (child.err, err)):
            for _ in range(64):
                try:
                    data = os.read(fd, 65536)
                except (BlockingIOError, OSError):
                    break
                if not data:
                    break
                sink.add(data)
        response = {'stdout': out.text(), 'stderr': err.text()}
        if outcome == 'done':
            # The code could have written this line itself (it holds the pipe): only well-typed fields pass.
            answer = ast.literal_eval(buf.split(b'\n', 1)[0].decode('utf-8', 'replace'))
            if not isinstance(answer, dict):
                raise ValueError('the interpreter answered %r' % (answer,))
            error = answer.get('error')
            if answer.get('ok') is True:
                response['status'] = 'ok'
                if isinstance(answer.get('value'), str):
                    response['value'] = answer['value'][: output_cap * 2]
            else:
                response['status'] = 'error'
                error = error if isinstance(error, dict) else {}
                response['error'] = {k: str(error.get(k, ''))[: output_cap * 2] for k in ('type', 'message', 'traceback')}
            if not sweep({me, child.proc.pid}):
                restart_interpreter()
                response['restarted'] = True
                response['note'] = 'the code left processes that kept starting others; the interpreter was restarted'
        elif outcome == 'timeout':
            response['status'] = 'timeout'
            restart_interpreter()
            response['restarted'] = True
        else:
            response['status'] = 'died'
            response['exit'] = exit_status(child)
            restart_interpreter()
            response['restarted'] = True
        return response

    requests = sys.stdin.buffer
    while True:
        line = requests.readline()
        if not line:
            end_episode()
            return
        try:
            req = _json().loads(line)
        except ValueError as e:
            _write_line(out_fd, {'id': None, 'status': 'failed', 'message': 'bad request: %s' % e})
            continue
        rid = req.get('id')
        try:
            op = req.get('op')
            if op == 'ping':
                response = {'status': 'ok'}
            elif op in ('run', 'prepare'):
                if state['episode'] != req['episode'] or state['child'] is None:
                    start_episode(req['episode'])
                response = run(req) if op == 'run' else {'status': 'ok'}
            else:
                response = {'status': 'failed', 'message': 'unknown op %r' % op}
        except Exception as e:  # reported to the host, which replaces the container
            state['episode'] = None
            response = {'status': 'failed', 'message': '%s: %s' % (type(e).__name__, e)}
        response['id'] = rid
        _write_line(out_fd, response)


if MODE == 'child':
    child_main(int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
elif MODE == 'supervisor':
    supervisor_main()
else:
    sys.exit('usage: python3 -S -c "import sys; exec(sys.argv[1])" SOURCE supervisor CONFIG_JSON')
