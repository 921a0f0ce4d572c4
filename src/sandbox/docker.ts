import Docker from 'dockerode';

let shared: Docker | undefined;

/**
 * The Docker client gymflow uses. dockerode (through docker-modem) reads `DOCKER_HOST` (`unix://…`,
 * `tcp://…`, `ssh://…`), `DOCKER_TLS_VERIFY` and `DOCKER_CERT_PATH` by itself, so a remote engine needs
 * only those variables. No API version is pinned: requests go to unversioned paths, which the engine
 * answers with its own (1.41 for Debian's dockerd 20.10).
 */
export function dockerClient(): Docker {
  shared ??= new Docker();
  return shared;
}

/** Where the client connects, for messages (`unix:///var/run/docker.sock`, `tcp://host:2375`). */
export function dockerEndpoint(): string {
  return process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock';
}
