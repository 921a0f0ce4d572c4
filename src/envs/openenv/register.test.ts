import { describe, expect, it } from 'vitest';
import { listEnvs, make, spec, unregister } from '../../core/registry.js';
import { OPENENV_ENV_ID, parseOpenEnvVariable, registerOpenEnvEnvs } from './register.js';

describe('GYMFLOW_OPENENV', () => {
  it('names servers as NAME=URL, comma-separated, each registered as openenv/NAME-v0', () => {
    expect(parseOpenEnvVariable(undefined)).toEqual([]);
    expect(parseOpenEnvVariable(' ')).toEqual([]);
    expect(parseOpenEnvVariable('guess=http://127.0.0.1:8000, echo = https://me-echo.hf.space')).toEqual([
      { id: 'openenv/guess-v0', url: 'http://127.0.0.1:8000' },
      { id: 'openenv/echo-v0', url: 'https://me-echo.hf.space' },
    ]);
  });

  it('refuses a malformed entry, naming it', () => {
    expect(() => parseOpenEnvVariable('http://127.0.0.1:8000')).toThrow('GYMFLOW_OPENENV: entry "http://127.0.0.1:8000": expected NAME=URL (e.g. counter=http://127.0.0.1:8000)');
    expect(() => parseOpenEnvVariable('Guess=http://h:1')).toThrow(`GYMFLOW_OPENENV: entry "Guess=http://h:1": 'Guess' cannot name an environment (lower-case letters, digits, '.', '_', '-')`);
    expect(() => parseOpenEnvVariable('guess=ftp://h:1')).toThrow('GYMFLOW_OPENENV: entry "guess=ftp://h:1": "ftp://h:1" has scheme ftp: (expected http, https, ws or wss)');
  });

  it('registers gymflow/openenv-v0 and the named servers, idempotently; nothing is asked of a server until make', () => {
    const variables = { GYMFLOW_OPENENV: 'reg-test=http://127.0.0.1:9' };
    registerOpenEnvEnvs(variables);
    registerOpenEnvEnvs(variables);
    try {
      expect(listEnvs().filter((s) => s.id === 'openenv/reg-test-v0' || s.id === OPENENV_ENV_ID)).toHaveLength(2);
      expect(spec('openenv/reg-test-v0')).toMatchObject({ kwargs: { url: 'http://127.0.0.1:9' }, maxEpisodeSteps: 100 });
      // (Port 9 is one fetch refuses to ask: "bad port".)
      expect(() => make('openenv/reg-test-v0')).toThrow('cannot reach the OpenEnv server at http://127.0.0.1:9: GET /health: fetch failed (bad port)');
    } finally {
      unregister('openenv/reg-test-v0');
    }
  });
});

describe('gymflow/openenv-v0', () => {
  it("says that it needs the server's address, and names a wrong option", () => {
    registerOpenEnvEnvs({});
    expect(() => make(OPENENV_ENV_ID)).toThrow("gymflow/openenv-v0: needs the OpenEnv server's address: make('gymflow/openenv-v0', { kwargs: { url: 'http://HOST:PORT' } })");
    expect(() => make(OPENENV_ENV_ID, { kwargs: { url: 'http://127.0.0.1:9', timeout: 5 } })).toThrow('gymflow/openenv-v0: kwargs $: Unrecognized key: "timeout"');
    expect(() => make(OPENENV_ENV_ID, { kwargs: { url: 'http://127.0.0.1:9', category: 'act' } })).toThrow(/^gymflow\/openenv-v0: kwargs \$\.category: Invalid option: expected one of "read"\|"write"/);
    expect(() => make(OPENENV_ENV_ID, { kwargs: { url: 'nope://x' } })).toThrow('gymflow/openenv-v0: kwargs.url: "nope://x" has scheme nope: (expected http, https, ws or wss)');
  });
});
