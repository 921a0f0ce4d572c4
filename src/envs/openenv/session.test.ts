import { afterEach, describe, expect, it } from 'vitest';
import { freePort as closedPort } from '../../runtime/dev-server.js'; // a port just given back: nothing listens on it
import { startScriptedServer, type ScriptedServer } from './__fixtures__/scripted-server.js';
import { OpenEnvConnectionError, OpenEnvProtocolError, OpenEnvServerError } from './errors.js';
import { OpenEnvSession } from './session.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const wsUrl = (s: ScriptedServer): string => `${s.url.replace('http', 'ws')}/ws`;

describe('OpenEnvSession', () => {
  it("sends a request and resolves with its answer's data", async () => {
    server = await startScriptedServer();
    const s = await OpenEnvSession.open(wsUrl(server), { connectTimeoutMs: 5_000 });
    expect(await s.request('reset', { seed: 3 }, 5_000)).toEqual({ observation: { prompt: 'Say a word.' }, reward: null, done: false });
    expect(await s.request('state', undefined, 5_000)).toEqual({ step_count: 1 });
    await s.close();
    await s.close();
    expect(server.received).toEqual([{ type: 'reset', data: { seed: 3 } }, { type: 'state' }, { type: 'close' }]);
  });

  it("rejects with the server's error code and message", async () => {
    server = await startScriptedServer({ onMessage: (_m, ws) => ws.send(JSON.stringify({ type: 'error', data: { message: 'Invalid message', code: 'VALIDATION_ERROR', errors: [{ loc: ['guess'], msg: 'too big' }] } })) });
    const s = await OpenEnvSession.open(wsUrl(server), { connectTimeoutMs: 5_000 });
    const err = await s.request('step', { guess: 500 }, 5_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenEnvServerError);
    expect(err).toMatchObject({ serverCode: 'VALIDATION_ERROR' });
    expect((err as Error).message).toBe(`${wsUrl(server)} answer to 'step': the server reports VALIDATION_ERROR: Invalid message: [{"loc":["guess"],"msg":"too big"}]`);
    // An error answer leaves the session usable.
    expect(s.usable).toBe(true);
    await s.close();
  });

  it('names what is wrong with a malformed answer: not JSON, no type, another type than asked', async () => {
    const answers = ['{"type": "observation", "data"', '{"data": {}}', '{"type": "state", "data": {}}'];
    server = await startScriptedServer({ onMessage: (_m, ws) => ws.send(answers.shift() as string) });
    const s = await OpenEnvSession.open(wsUrl(server), { connectTimeoutMs: 5_000 });
    const place = `${wsUrl(server)} answer to 'step'`;
    // (V8's words for the JSON error vary between versions.)
    const notJson = await s.request('step', {}, 5_000).catch((e: unknown) => e);
    expect(notJson).toBeInstanceOf(OpenEnvProtocolError);
    expect((notJson as Error).message).toMatch(`${place}: malformed answer: not JSON (`);
    expect((notJson as Error).message).toMatch(/\): "\{\\"type\\": \\"observation\\", \\"data\\""$/);
    await expect(s.request('step', {}, 5_000)).rejects.toThrow(`${place}: malformed answer: $.type: Invalid input: expected string, received undefined`);
    await expect(s.request('step', {}, 5_000)).rejects.toThrow(`${place}: malformed answer: $.type is 'state', expected 'observation'`);
    await s.close();
  });

  it('fails the request in flight, and every later one, when the server closes the connection', async () => {
    server = await startScriptedServer({ onMessage: (_m, ws) => ws.terminate() });
    const s = await OpenEnvSession.open(wsUrl(server), { connectTimeoutMs: 5_000 });
    const err = await s.request('step', {}, 60_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenEnvConnectionError);
    expect(err).toMatchObject({ reason: 'server_gone' });
    expect((err as Error).message).toMatch(new RegExp(`^${wsUrl(server)}: the OpenEnv server closed the connection \\(code 1006`));
    expect(s.usable).toBe(false);
    await expect(s.request('reset', {}, 60_000)).rejects.toBe(err);
    await s.close();
  });

  it('gives up on a request that gets no answer within its limit', async () => {
    server = await startScriptedServer({ onMessage: () => undefined });
    const s = await OpenEnvSession.open(wsUrl(server), { connectTimeoutMs: 5_000 });
    const err = await s.request('step', {}, 200).catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: 'timeout', message: `${wsUrl(server)}: no answer to 'step' within 200 ms` });
    expect(s.usable).toBe(false);
    await s.close();
  });

  it('says why a session cannot be opened', async () => {
    const url = `ws://127.0.0.1:${await closedPort()}/ws`;
    const err = await OpenEnvSession.open(url, { connectTimeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenEnvConnectionError);
    expect((err as Error).message).toBe(`cannot open a session at ${url}: connect ECONNREFUSED ${url.slice(5, -3)}`);
    server = await startScriptedServer();
    await expect(OpenEnvSession.open(`${server.url.replace('http', 'ws')}/nowhere`, { connectTimeoutMs: 5_000 })).rejects.toThrow(/Unexpected server response: (404|400)/);
  });
});
