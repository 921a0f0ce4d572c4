import { GymflowError } from '../../core/errors.js';

/**
 * Why an OpenEnv server could not carry on an episode: `server_gone` (the connection could not be made, or
 * closed under a request), `timeout` (no answer within the client's limit). A step that meets either ends its
 * episode truncated with this as `info.reason`.
 */
export type OpenEnvConnectionReason = 'server_gone' | 'timeout';

/**
 * The OpenEnv server cannot be reached, went away, or did not answer in time. The message names the server's
 * address and what happened (`ws://127.0.0.1:8000/ws: the connection closed (code 1006) while waiting for the
 * answer to 'step'`).
 */
export class OpenEnvConnectionError extends GymflowError {
  constructor(
    readonly reason: OpenEnvConnectionReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('OPENENV_CONNECTION', message, options);
  }
}

/**
 * An OpenEnv server's answer that does not follow the protocol: not JSON, a field missing or of the wrong type,
 * an answer of another kind than the request's. The message names the server, the request and the JSON path
 * (`http://127.0.0.1:8000/schema $.action: expected object, received undefined`).
 */
export class OpenEnvProtocolError extends GymflowError {
  constructor(message: string) {
    super('OPENENV_PROTOCOL', message);
  }
}

/**
 * An error the OpenEnv server reported itself (a WebSocket `error` message or an HTTP error status), with the
 * server's code (`VALIDATION_ERROR`, `EXECUTION_ERROR`, `CAPACITY_REACHED`, …; HTTP: `HTTP_<status>`).
 */
export class OpenEnvServerError extends GymflowError {
  constructor(
    readonly serverCode: string,
    message: string,
  ) {
    super('OPENENV_SERVER', message);
  }
}
