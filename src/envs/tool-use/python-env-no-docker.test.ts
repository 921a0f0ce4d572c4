import { describe, expect, it } from 'vitest';
import { ToolUseEnv } from './env.js';

// A file of its own (vitest runs each file in its own process): the Docker client is made on first use from
// DOCKER_HOST, here an engine that does not exist, as on a machine without Docker.
process.env.DOCKER_HOST = 'unix:///nonexistent/gymflow-no-docker.sock';

describe('gymflow/tool-use-python-v0 without a Docker engine', () => {
  it('answers a python call with an error observation that says Docker is needed, without a penalty; other tools work', async () => {
    const env = new ToolUseEnv({ python: true });
    await env.reset({ task: 'tool-python-heldout-00000' });
    const ts = await env.step({ tool: 'python', params: { code: '1 + 1' } });
    expect(ts).toMatchObject({ reward: 0, terminated: false, info: { error: { code: 'tool_unavailable' }, penalty: 0, python: { status: 'unavailable' } } });
    expect(ts.observation).toMatch(/^Error: python: unavailable: the python tool runs code in a Docker sandbox: it needs a Docker engine and the image gymflow\/sandbox:latest, and no sandbox could be started: .*nonexistent\/gymflow-no-docker\.sock/);
    expect((await env.step({ tool: 'calculator', params: { expression: '1 + 1' } })).observation).toBe('Result: 2');
    // The next call tries again (an engine may have come up), and says the same.
    expect((await env.step({ tool: 'python', params: { code: '2' } })).info.error).toMatchObject({ code: 'tool_unavailable' });
    await env.close();
  });
});
