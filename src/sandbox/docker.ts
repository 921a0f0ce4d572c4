import { createRequire } from 'node:module';
import type Docker from 'dockerode';

let shared: Docker | undefined;
const require = createRequire(import.meta.url);

/**
 * The Docker client gymflow uses. dockerode (through docker-modem) reads `DOCKER_HOST` (`unix://…`,
 * `tcp://…`, `ssh://…`), `DOCKER_TLS_VERIFY` and `DOCKER_CERT_PATH` by itself, so a remote engine needs
 * only those variables. No API version is pinned: requests go to unversioned paths, which the engine
 * answers with its own (1.41 for Debian's dockerd 20.10).
 */
export function dockerClient(): Docker {
  // dockerode (docker-modem, ssh2) takes about a third of a second to load: it is loaded on first use, so that
  // what never talks to Docker (`gymflow envs`, listing the sandbox env) does not pay for it.
  shared ??= new (require('dockerode') as typeof Docker)();
  return shared;
}

/** Where the client connects, for messages (`unix:///var/run/docker.sock`, `tcp://host:2375`). */
export function dockerEndpoint(): string {
  return process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock';
}
