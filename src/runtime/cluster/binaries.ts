/**
 * The programs `gymflow cluster` runs: the Temporal server, its SQL schema tool and the Web UI server, built
 * once by `scripts/build-temporal-server.sh` into a cache outside the clone, SeaweedFS's `weed` (the object
 * store) built the same way by `scripts/build-seaweedfs.sh`, and PostgreSQL from the system's package (Debian:
 * `/usr/lib/postgresql/<major>/bin`).
 */
import { readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { ConfigError } from '../../core/errors.js';
import { isExecutable } from '../../core/fs.js';

/** The Temporal server release `scripts/build-temporal-server.sh` builds (`go.temporal.io/server`). */
export const TEMPORAL_SERVER_VERSION = '1.32.2';
/** The Web UI server release it builds (`github.com/temporalio/ui-server/v2`). */
export const TEMPORAL_UI_VERSION = '2.58.1';
/** The SeaweedFS version `scripts/build-seaweedfs.sh` builds (`github.com/seaweedfs/seaweedfs`, a Go pseudo-version). */
export const SEAWEEDFS_VERSION = 'v0.0.0-20261109003541-7506e5f91cd6';

/** The cache of downloads and builds kept outside the clone: `$GYMFLOW_CACHE`, else `~/.cache/gymflow`. */
export function gymflowCache(env: NodeJS.ProcessEnv = process.env): string {
  return env['GYMFLOW_CACHE'] || join(env['HOME'] || homedir(), '.cache', 'gymflow');
}

/** Paths of the cluster's built programs. */
export interface ClusterBinaries {
  readonly temporalServer: string;
  readonly sqlTool: string;
  readonly uiServer: string;
  /** SeaweedFS's `weed`: the object store. */
  readonly weed: string;
}

/** Where the build script puts the binaries (they may not exist yet). */
export function clusterBinaryPaths(env: NodeJS.ProcessEnv = process.env): ClusterBinaries {
  const bin = join(gymflowCache(env), 'bin');
  return {
    temporalServer: join(bin, `temporal-server-${TEMPORAL_SERVER_VERSION}`),
    sqlTool: join(bin, `temporal-sql-tool-${TEMPORAL_SERVER_VERSION}`),
    uiServer: join(bin, `temporal-ui-server-${TEMPORAL_UI_VERSION}`),
    weed: join(bin, `weed-${SEAWEEDFS_VERSION}`),
  };
}

/** The binaries that are not built yet (empty when all are). */
export function missingClusterBinaries(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.values(clusterBinaryPaths(env)).filter((p) => !isExecutable(p));
}

/** {@link clusterBinaryPaths}, or a {@link ConfigError} naming what is missing and the command that builds it. */
export function requireClusterBinaries(env: NodeJS.ProcessEnv = process.env): ClusterBinaries {
  const missing = missingClusterBinaries(env);
  if (missing.length > 0) {
    const weed = clusterBinaryPaths(env).weed;
    const scripts = [
      ...(missing.some((p) => p !== weed) ? ['`bash scripts/build-temporal-server.sh`'] : []),
      ...(missing.includes(weed) ? ['`bash scripts/build-seaweedfs.sh`'] : []),
    ];
    throw new ConfigError(`not built: ${missing.join(', ')}; run ${scripts.join(' and ')} (setup runs them; a first build takes minutes)`);
  }
  return clusterBinaryPaths(env);
}

/** PostgreSQL's server programs. */
export interface PostgresBinaries {
  /** The folder holding `postgres`, `initdb` and `pg_isready`. */
  readonly binDir: string;
  readonly postgres: string;
  readonly initdb: string;
  readonly pgIsready: string;
}

function postgresIn(binDir: string): PostgresBinaries | undefined {
  const found = { binDir, postgres: join(binDir, 'postgres'), initdb: join(binDir, 'initdb'), pgIsready: join(binDir, 'pg_isready') };
  return isExecutable(found.postgres) && isExecutable(found.initdb) && isExecutable(found.pgIsready) ? found : undefined;
}

/**
 * PostgreSQL's server programs, or `undefined`: `$GYMFLOW_PG_BIN`, else Debian's newest
 * `/usr/lib/postgresql/<major>/bin`, else the folder on `PATH` that holds `postgres` and `initdb`.
 */
export function postgresBinaries(env: NodeJS.ProcessEnv = process.env): PostgresBinaries | undefined {
  const fromEnv = env['GYMFLOW_PG_BIN'];
  if (fromEnv) return postgresIn(fromEnv);
  let majors: string[] = [];
  try {
    majors = readdirSync('/usr/lib/postgresql').filter((d) => /^\d+$/.test(d));
  } catch {
    // no Debian layout
  }
  for (const major of majors.sort((a, b) => Number(b) - Number(a))) {
    const found = postgresIn(join('/usr/lib/postgresql', major, 'bin'));
    if (found) return found;
  }
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    const found = dir ? postgresIn(dir) : undefined;
    if (found) return found;
  }
  return undefined;
}

/** {@link postgresBinaries}, or a {@link ConfigError} saying where it looked and how to install it. */
export function requirePostgresBinaries(env: NodeJS.ProcessEnv = process.env): PostgresBinaries {
  const found = postgresBinaries(env);
  if (found) return found;
  if (env['GYMFLOW_PG_BIN']) throw new ConfigError(`GYMFLOW_PG_BIN=${env['GYMFLOW_PG_BIN']}: no executable postgres, initdb and pg_isready there`);
  throw new ConfigError('no PostgreSQL server: looked in $GYMFLOW_PG_BIN, /usr/lib/postgresql/*/bin and PATH; run `npm run setup` (Debian: apt-get install postgresql)');
}
