import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError } from '../../core/errors.js';

/** Where the repositories of the instances come from. */
export interface RepoSourceOptions {
  /**
   * A directory of repositories (bare or not): `owner__name.git`, `owner__name`, `owner/name.git`, `owner/name`,
   * `name.git` or `name` inside it (SWE-bench's `owner__name` first).
   */
  repos?: string | undefined;
  /**
   * The Git URL of a repository not found in `repos`, `{repo}` standing for `owner/name` (default
   * `https://github.com/{repo}.git`); `false`: local repositories only.
   */
  repoUrl?: string | false | undefined;
}

/** The default Git URL template. */
export const DEFAULT_REPO_URL = 'https://github.com/{repo}.git';

/** The paths inside `dir` where {@link findLocalRepo} looks for `owner/name`, in order. */
export function repoCandidates(dir: string, repo: string): string[] {
  const [owner, name] = repo.split('/') as [string, string];
  const flat = `${owner}__${name}`;
  return [`${flat}.git`, flat, `${owner}/${name}.git`, `${owner}/${name}`, `${name}.git`, name].map((p) => join(dir, p));
}

/** A git repository at `path`: a bare one (HEAD and objects/) or a work tree with `.git`. */
function isGitRepo(path: string): boolean {
  try {
    if (!statSync(path).isDirectory()) return false;
  } catch {
    return false;
  }
  return existsSync(join(path, '.git')) || (existsSync(join(path, 'HEAD')) && existsSync(join(path, 'objects')));
}

/** The local repository of `owner/name` in `dir`, or undefined. */
export function findLocalRepo(dir: string, repo: string): string | undefined {
  return repoCandidates(dir, repo).find(isGitRepo);
}

interface RunResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

function run(cmd: string, args: readonly string[], o: { cwd?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, {
      cwd: o.cwd,
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'true', LC_ALL: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-8192)));
    const timer = o.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), o.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      rej(new ConfigError(`cannot run ${cmd}: ${e.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      res({ code, stdout: Buffer.concat(out), stderr: err });
    });
  });
}

const git = (args: readonly string[], o: { cwd?: string; timeoutMs?: number } = {}): Promise<RunResult> => run('git', args, o);

/** The repository's files at a commit, as a tar for /work, and where they came from. */
export interface RepoCheckout {
  /** A tar of the work tree and its `.git` (owned by uid/gid 1000, the sandbox's agent), under `tarPrefix/` if given. */
  tar: Buffer;
  /** The full commit id checked out. */
  commit: string;
  /** The local path or URL it was fetched from. */
  source: string;
}

/**
 * The repository `owner/name` at `commit`, as a tar: a fresh repository whose branch `main` is the commit, with
 * the commit's history and nothing after it (no other branch, tag or remote), like SWE-bench's images. The commit
 * is fetched from the local repository in `repos` when there is one, else from its Git URL.
 *
 * @throws ConfigError naming the instance (`what`), the repository and every place tried.
 */
export async function checkoutArchive(repo: string, commit: string, o: RepoSourceOptions & { what?: string; tarPrefix?: string } = {}): Promise<RepoCheckout> {
  const what = o.what ?? repo;
  const local = o.repos === undefined ? undefined : findLocalRepo(resolve(o.repos), repo);
  let source: string;
  let want = commit;
  if (local !== undefined) {
    source = local;
    const r = await git(['--git-dir', gitDirOf(local), 'rev-parse', '--verify', '--quiet', `${commit}^{commit}`]);
    if (r.code !== 0) throw new ConfigError(`${what}: commit ${commit} is not in ${local}`);
    want = r.stdout.toString().trim();
  } else {
    if (o.repoUrl === false) throw new ConfigError(`${what}: repository ${repo} not found: ${notFound(repo, o.repos)}`);
    if (!/^[0-9a-f]{40}$/.test(commit)) throw new ConfigError(`${what}: fetching ${repo} from its URL needs the full 40-digit base_commit, got ${commit}`);
    source = (o.repoUrl ?? DEFAULT_REPO_URL).replaceAll('{repo}', repo);
  }
  const dir = await mkdtemp(join(tmpdir(), 'gymflow-swe-repo-'));
  try {
    const init = await git(['init', '-q', '-b', 'main', dir]);
    if (init.code !== 0) throw new ConfigError(`${what}: git init failed: ${init.stderr.trim()}`);
    const fetched = await git(['-C', dir, 'fetch', '-q', '--no-tags', source, want], { timeoutMs: 30 * 60_000 });
    if (fetched.code !== 0) {
      const why = fetched.stderr.trim().split('\n').slice(-3).join(' ') || `exit ${String(fetched.code)}`;
      const where = local === undefined ? `${source} (${notFound(repo, o.repos)})` : source;
      throw new ConfigError(`${what}: cannot fetch ${repo} at ${commit} from ${where}: ${why}`);
    }
    const reset = await git(['-C', dir, 'reset', '-q', '--hard', 'FETCH_HEAD']);
    if (reset.code !== 0) throw new ConfigError(`${what}: checking out ${commit} failed: ${reset.stderr.trim()}`);
    await rm(join(dir, '.git', 'FETCH_HEAD'), { force: true });
    const head = (await git(['-C', dir, 'rev-parse', 'HEAD'])).stdout.toString().trim();
    const prefix = o.tarPrefix === undefined ? [] : ['--transform', `s|^\\.|${o.tarPrefix}|`];
    const tar = await run('tar', ['-C', dir, '-c', '--owner=1000', '--group=1000', '--numeric-owner', ...prefix, '-f', '-', '.']);
    if (tar.code !== 0) throw new ConfigError(`${what}: packing the checkout failed: ${tar.stderr.trim()}`);
    return { tar: tar.stdout, commit: head, source };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Why no local repository was used, for messages. */
function notFound(repo: string, repos: string | undefined): string {
  if (repos === undefined) return 'no repos directory given';
  const dir = resolve(repos);
  return `not in ${dir}: looked for ${repoCandidates(dir, repo).map((p) => p.slice(dir.length + 1)).join(', ')}`;
}

function gitDirOf(repo: string): string {
  return existsSync(join(repo, '.git')) ? join(repo, '.git') : repo;
}
