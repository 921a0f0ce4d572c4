import type Docker from 'dockerode';
import { hostname } from 'node:os';
import { processAlive } from '../core/fs.js';
import { LABEL_CREATED, LABEL_DETACHED, LABEL_OWNER_HOST, LABEL_OWNER_PID, LABEL_SANDBOX, LABEL_TASK } from './config.js';

/** What {@link gcSandboxes} did. */
export interface GcReport {
  removed: string[];
  kept: string[];
}

/**
 * Removes orphaned sandboxes: containers labelled `gymflow.sandbox=1` whose creating process (same host)
 * is gone, and detached sandboxes (`gymflow sandbox create`) that stopped (exited or dead: their tmpfs work
 * areas are gone and no command can use them). Running detached sandboxes and those of other hosts are kept
 * unless `all`.
 */
export async function gcSandboxes(docker: Docker, options: { all?: boolean } = {}): Promise<GcReport> {
  const list = await docker.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX}=1`] } });
  const me = hostname();
  const report: GcReport = { removed: [], kept: [] };
  await Promise.all(
    list.map(async (c) => {
      const labels = c.Labels ?? {};
      const pid = Number(labels[LABEL_OWNER_PID]);
      const stopped = c.State === 'exited' || c.State === 'dead';
      const orphan =
        options.all === true ||
        (labels[LABEL_DETACHED] === '1' && stopped) ||
        (labels[LABEL_DETACHED] !== '1' && labels[LABEL_OWNER_HOST] === me && (!Number.isInteger(pid) || (pid !== process.pid && !processAlive(pid))));
      if (!orphan) {
        report.kept.push(c.Id);
        return;
      }
      await docker
        .getContainer(c.Id)
        .remove({ force: true })
        .then(() => report.removed.push(c.Id))
        .catch(() => report.kept.push(c.Id));
    }),
  );
  return report;
}

/** One sandbox container as {@link listSandboxes} reports it. */
export interface SandboxListing {
  id: string;
  /** The task it was created for, if any. */
  task: string | null;
  /** The engine's state: `running`, `exited`, … */
  state: string;
  /** Made by `gymflow sandbox create` (lives until `destroy`), or owned by a process. */
  detached: boolean;
  /** The creating process (`host:pid`), for sandboxes that are not detached. */
  owner: string | null;
  /** Creation time (ISO 8601). */
  created: string | null;
  image: string;
}

/** Every gymflow sandbox container on the engine, running or stopped, oldest first. */
export async function listSandboxes(docker: Docker): Promise<SandboxListing[]> {
  const list = await docker.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX}=1`] } });
  return list
    .map((c) => {
      const labels = c.Labels ?? {};
      const detached = labels[LABEL_DETACHED] === '1';
      return {
        id: c.Id,
        task: labels[LABEL_TASK] ?? null,
        state: c.State,
        detached,
        owner: detached ? null : `${labels[LABEL_OWNER_HOST] ?? '?'}:${labels[LABEL_OWNER_PID] ?? '?'}`,
        created: labels[LABEL_CREATED] ?? null,
        image: c.Image,
      };
    })
    .sort((a, b) => (a.created ?? '').localeCompare(b.created ?? ''));
}

let once: Promise<GcReport> | undefined;

/** {@link gcSandboxes} once per process (on the first sandbox created). */
export function gcOnce(docker: Docker): Promise<GcReport> {
  once ??= gcSandboxes(docker).catch(() => ({ removed: [], kept: [] }));
  return once;
}
