import { afterEach, describe, expect, it } from 'vitest';
import { freePort as closedPort } from '../../runtime/dev-server.js'; // a port just given back: nothing listens on it
import { startScriptedServer, type ScriptedServer } from './__fixtures__/scripted-server.js';
import { OpenEnvConnectionError, OpenEnvProtocolError, OpenEnvServerError } from './errors.js';
import { describeOpenEnv, describeOpenEnvSync, openEnvUrls } from './server-info.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('openEnvUrls', () => {
  it('takes http, https, ws, wss or host:port, and gives the HTTP base and the session endpoint', () => {
    expect(openEnvUrls('http://127.0.0.1:8000/')).toEqual({ baseUrl: 'http://127.0.0.1:8000', wsUrl: 'ws://127.0.0.1:8000/ws' });
    expect(openEnvUrls('ws://localhost:8000')).toEqual({ baseUrl: 'http://localhost:8000', wsUrl: 'ws://localhost:8000/ws' });
    expect(openEnvUrls('https://me-env.hf.space/api')).toEqual({ baseUrl: 'https://me-env.hf.space/api', wsUrl: 'wss://me-env.hf.space/api/ws' });
    expect(openEnvUrls('localhost:8000')).toEqual({ baseUrl: 'http://localhost:8000', wsUrl: 'ws://localhost:8000/ws' });
    expect(() => openEnvUrls('ftp://h:1', 'kwargs.url')).toThrow('kwargs.url: "ftp://h:1" has scheme ftp: (expected http, https, ws or wss)');
    expect(() => openEnvUrls('http://h:1/?x=1')).toThrow('url: "http://h:1/?x=1": an OpenEnv server\'s address takes no query or fragment');
    expect(() => openEnvUrls('http://[::1')).toThrow(/is not a URL/);
  });
});

describe('describeOpenEnv', () => {
  it('reads health, schemas and metadata; a 404 at /gymflow means another kind of server', async () => {
    server = await startScriptedServer();
    const info = await describeOpenEnv(server.url);
    expect(info).toMatchObject({ baseUrl: server.url, wsUrl: `${server.url.replace('http', 'ws')}/ws`, metadata: { name: 'WordEnvironment' } });
    expect(info.schema.action).toMatchObject({ title: 'WordAction' });
    expect(info.gymflow).toBeUndefined();
  });

  it('names the endpoint and field of a malformed answer', async () => {
    server = await startScriptedServer({ http: { '/schema': { action: 'word', observation: {} } } });
    const err = await describeOpenEnv(server.url).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenEnvProtocolError);
    expect((err as Error).message).toBe(
      `GET ${server.url}/schema: malformed answer: $.action: Invalid input: expected record, received string; $.state: Invalid input: expected record, received undefined`,
    );
    await server.close();
    server = await startScriptedServer({ http: { '/health': 'OK' } });
    await expect(describeOpenEnv(server.url)).rejects.toThrow(`GET ${server.url}/health: malformed answer: not JSON (`);
    await server.close();
    server = await startScriptedServer({ http: { '/gymflow': { env_id: 'gymflow/x-v0' } } });
    await expect(describeOpenEnv(server.url)).rejects.toThrow(`GET ${server.url}/gymflow: malformed answer: $.domain: Invalid input: expected string, received undefined;`);
  });

  it('refuses a server that is not healthy, or that answers an error status', async () => {
    server = await startScriptedServer({ http: { '/health': { status: 'degraded' } } });
    const err = await describeOpenEnv(server.url).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenEnvServerError);
    expect((err as Error).message).toBe(`${server.url}/health: the OpenEnv server reports status 'degraded'`);
    await server.close();
    server = await startScriptedServer({ http: { '/metadata': 404 } });
    await expect(describeOpenEnv(server.url)).rejects.toThrow(`${server.url}/metadata: HTTP 404: {"detail":"Not Found"}`);
  });

  it('says that a server cannot be reached, asynchronously and synchronously alike', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const message = `cannot reach the OpenEnv server at ${url}: GET /health: fetch failed (ECONNREFUSED)`;
    const err = await describeOpenEnv(url).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenEnvConnectionError);
    expect(err).toMatchObject({ reason: 'server_gone', message });
    expect(() => describeOpenEnvSync(url)).toThrow(new OpenEnvConnectionError('server_gone', message));
  });
});
