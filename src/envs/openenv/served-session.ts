/**
 * One WebSocket session of a served gymflow environment: one environment for the connection's lifetime, the
 * client's messages handled one after another (OpenEnv's `/ws` protocol: `reset`, `step`, `state`, `close`).
 */
import type WebSocket from 'ws';
import type { z } from 'zod';
import type { AgentEnv, TaskInfo } from '../../core/types.js';
import { isDone } from '../../core/types.js';
import { ToolCallSchema } from './action-schema.js';
import { stepResultOf } from './observation.js';
import { GymflowResetSchema, WS_ERROR_CODES, WsRequestSchema } from './protocol.js';

const REQUEST_TYPES = new Set(['reset', 'step', 'state', 'close']);

/** OpenEnv's (pydantic's) shape of a validation problem: where and what. */
export function validationErrors(error: z.ZodError, prefix: readonly PropertyKey[] = []): { loc: PropertyKey[]; msg: string; type: string }[] {
  return error.issues.map((i) => ({ loc: [...prefix, ...i.path], msg: i.message, type: i.code }));
}

/**
 * Serves one connection: builds its environment on arrival, answers each message with one message, and closes
 * the environment when the connection ends.
 */
export class ServedSession {
  private chain: Promise<void> = Promise.resolve();
  private episodeId: string | null = null;
  private stepCount = 0;
  private task: string | undefined;
  private done = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly env: AgentEnv,
    private readonly envId: string,
    onEnd: () => void,
  ) {
    ws.on('message', (raw) => {
      const text = String(raw);
      this.chain = this.chain.then(() => this.handle(text));
    });
    ws.on('close', () => {
      this.chain = this.chain.then(async () => {
        await this.env.close().catch(() => undefined);
        onEnd();
      });
    });
    ws.on('error', () => undefined);
  }

  private async handle(text: string): Promise<void> {
    if (this.ws.readyState !== this.ws.OPEN) return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (err) {
      return this.error(WS_ERROR_CODES.invalidJson, `Invalid JSON: ${(err as Error).message}`);
    }
    const type = message !== null && typeof message === 'object' ? (message as { type?: unknown }).type : undefined;
    if (typeof type !== 'string' || !REQUEST_TYPES.has(type)) return this.error(WS_ERROR_CODES.unknownType, `Unknown message type: ${String(type ?? '')}`);
    const parsed = WsRequestSchema.safeParse(message);
    if (!parsed.success) return this.error(WS_ERROR_CODES.validation, 'Invalid message', { errors: validationErrors(parsed.error) });
    const request = parsed.data;
    switch (request.type) {
      case 'reset': {
        const data = GymflowResetSchema.safeParse(request.data);
        if (!data.success) return this.error(WS_ERROR_CODES.validation, 'Invalid reset parameters', { errors: validationErrors(data.error, ['data']) });
        const { seed, task, episode_id: episodeId } = data.data;
        return this.run(async () => {
          const ts = await this.env.reset({ ...(seed == null ? {} : { seed }), ...(task == null ? {} : { task }) });
          this.episodeId = episodeId ?? crypto.randomUUID();
          this.stepCount = 0;
          this.task = (ts.info.task as TaskInfo | undefined)?.id;
          this.done = isDone(ts);
          this.send({ type: 'observation', data: stepResultOf(ts) });
        });
      }
      case 'step': {
        const call = ToolCallSchema.safeParse(request.data);
        if (!call.success) return this.error(WS_ERROR_CODES.validation, 'Invalid action: expected {"tool": NAME, "params": {...}}', { errors: validationErrors(call.error, ['data']) });
        return this.run(async () => {
          const ts = await this.env.step({ tool: call.data.tool, params: call.data.params });
          this.stepCount += 1;
          this.done = isDone(ts);
          this.send({ type: 'observation', data: stepResultOf(ts) });
        });
      }
      case 'state':
        return this.send({
          type: 'state',
          data: { episode_id: this.episodeId, step_count: this.stepCount, env_id: this.envId, task_id: this.task ?? null, done: this.done },
        });
      case 'close':
        this.ws.close(1000);
        return;
    }
  }

  /** Runs an environment call; what it throws (a step before reset, after the end) goes back as `EXECUTION_ERROR`. */
  private async run(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.error(WS_ERROR_CODES.execution, err instanceof Error ? err.message : String(err));
    }
  }

  private error(code: string, message: string, extra: Record<string, unknown> = {}): void {
    this.send({ type: 'error', data: { message, code, ...extra } });
  }

  private send(message: unknown): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
  }
}
