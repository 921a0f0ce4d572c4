/**
 * What every MCP tool shares: the workspace root, the sandboxes this server holds, where large results go, and the
 * one way a tool is defined (input schema, description, handler) and turned into an MCP tool result.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { GymflowError } from '../../core/errors.js';
import { fullMessage } from '../errors.js';
import type { WorkspaceRoot } from './root.js';
import type { SandboxRegistry } from './sandboxes.js';
import { defined } from '../../core/defined.js';

/** Results whose JSON is larger than this are written to a file under the root and returned as a reference. */
export const DEFAULT_MAX_INLINE_BYTES = 48 * 1024;

/** Where tools put results too large to return inline, below the root. */
export const RESULTS_DIR = join('.gymflow', 'mcp');

/** What the tools of one server share. */
export interface ToolContext {
  /** The directory every path is confined to. */
  root: WorkspaceRoot;
  /** The sandboxes this server created (they live as long as it does). */
  sandboxes: SandboxRegistry;
  /** Above this many bytes of JSON a result goes to a file ({@link RESULTS_DIR}). */
  maxInlineBytes: number;
  /** The Temporal frontend and namespace pipeline tools use unless a call names others. */
  temporal: { address?: string; namespace?: string };
}

/** What a tool's handler gets besides its arguments. */
export interface ToolCall {
  ctx: ToolContext;
  /** Aborted when the client cancels the call (or the connection goes). */
  signal: AbortSignal;
  /**
   * Sends a progress notification when the client asked for them (a no-op otherwise). Await it where the caller can:
   * a notification still on its way when the result goes out may arrive after it, and a client drops it then.
   */
  progress(done: number, total?: number, message?: string): Promise<void>;
}

/** A tool's answer: one line for the model, and the data (an object). */
export interface ToolReply {
  summary: string;
  data: Record<string, unknown>;
  /** What to return inline instead of `data` when `data` is too large (with a reference to the file holding it). */
  brief?: Record<string, unknown>;
}

/** A tool as gymflow defines it: its name, what an LLM needs to call it, its input schema, its handler. */
export interface ToolDefinition<S extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  /** What it does, what it returns, and when to use it: an LLM decides from this. */
  description: string;
  /** The arguments (strict: an unknown argument is an error). */
  input: S;
  annotations?: ToolAnnotations;
  run(args: z.output<S>, call: ToolCall): Promise<ToolReply>;
}

/** A tool definition, checked against its own schema's types. */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): ToolDefinition {
  return def as unknown as ToolDefinition;
}

/** A new file under {@link RESULTS_DIR} for a result of `tool` (the directory is made when missing). */
export async function resultFile(ctx: ToolContext, tool: string, ext: string): Promise<string> {
  const dir = join(ctx.root.dir, RESULTS_DIR);
  await mkdir(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  // Confined like any output: `.gymflow` could be a link out of the root.
  return ctx.root.output(join(RESULTS_DIR, `${tool}-${stamp}-${randomBytes(3).toString('hex')}.${ext}`), 'result file');
}

/** An error's text for a tool result: gymflow's own message, or the message with its causes' reasons. */
export function errorText(err: unknown): string {
  return err instanceof GymflowError ? err.message : fullMessage(err);
}

/** The MCP result of a reply: inline when small, else written to a file and returned as a reference with the summary. */
async function toResult(ctx: ToolContext, tool: string, reply: ToolReply): Promise<CallToolResult> {
  const json = JSON.stringify(reply.data, null, 2);
  const bytes = Buffer.byteLength(json);
  if (bytes <= ctx.maxInlineBytes) {
    return { content: [{ type: 'text', text: reply.summary }, { type: 'text', text: json }], structuredContent: reply.data };
  }
  const file = await resultFile(ctx, tool, 'json');
  await writeFile(file, `${json}\n`);
  const structured = { ...(reply.brief ?? {}), resultFile: ctx.root.show(file), resultBytes: bytes };
  return {
    content: [
      { type: 'text', text: `${reply.summary}; the full result (${bytes} bytes of JSON) is in ${ctx.root.show(file)}` },
      { type: 'text', text: JSON.stringify(structured, null, 2) },
    ],
    structuredContent: structured,
  };
}

/**
 * Registers `tools` on `server`. A handler's error becomes a tool result with `isError` and the error's message (it
 * names the argument, or the file and line): the server itself never fails a call. A call the client cancels stops
 * at its next check of the signal; a log message (`notifications/message`, logger `gymflow`) says where.
 */
export function registerTools(server: McpServer, ctx: ToolContext, tools: readonly ToolDefinition[]): void {
  for (const def of tools) {
    server.registerTool(
      def.name,
      { title: def.title, description: def.description, inputSchema: def.input, ...defined({ annotations: def.annotations }) },
      async (args: unknown, extra: RequestHandlerExtra<ServerRequest, ServerNotification>): Promise<CallToolResult> => {
        const token = extra._meta?.progressToken;
        const call: ToolCall = {
          ctx,
          signal: extra.signal,
          async progress(done, total, message) {
            if (token === undefined || extra.signal.aborted) return;
            const params = { progressToken: token, progress: done, ...defined({ total, message }) };
            await extra.sendNotification({ method: 'notifications/progress', params }).catch(() => undefined);
          },
        };
        try {
          return await toResult(ctx, def.name, await def.run(args as z.output<typeof def.input>, call));
        } catch (err) {
          const text = `${def.name}: ${errorText(err)}`;
          // A cancelled call gets no reply: the log says where it stopped (its work is abandoned, nothing half-written).
          if (extra.signal.aborted) server.sendLoggingMessage({ level: 'notice', logger: 'gymflow', data: `cancelled: ${text}` }, extra.sessionId).catch(() => undefined);
          return { content: [{ type: 'text', text }], isError: true };
        }
      },
    );
  }
}
