/**
 * The sandboxes an MCP server created: they live in its process, named by ids of their own (a container's id
 * changes when a container that stopped answering is replaced), and are removed when the server shuts down.
 */
import { randomBytes } from 'node:crypto';
import { ConfigError } from '../../core/errors.js';
import type { SandboxTask } from '../../envs/sandbox/tasks.js';
import type { Sandbox } from '../../sandbox/sandbox.js';

/** One sandbox of the server. */
export interface HeldSandbox {
  id: string;
  box: Sandbox;
  task: SandboxTask | undefined;
  createdAt: string;
}

/** The server's sandboxes, by id. */
export class SandboxRegistry {
  private readonly held = new Map<string, HeldSandbox>();

  /** Holds `box` and returns its new id (`sbx-` and 8 hex digits). */
  add(box: Sandbox, task: SandboxTask | undefined): HeldSandbox {
    let id: string;
    do id = `sbx-${randomBytes(4).toString('hex')}`;
    while (this.held.has(id));
    const entry = { id, box, task, createdAt: new Date().toISOString() };
    this.held.set(id, entry);
    return entry;
  }

  /**
   * The sandbox `id`.
   *
   * @throws ConfigError naming the argument, the id and the ids there are, when this server holds no such sandbox.
   */
  get(id: string, field = 'sandbox_id'): HeldSandbox {
    const entry = this.held.get(id);
    if (entry === undefined) {
      const known = [...this.held.keys()];
      throw new ConfigError(`${field}: no sandbox '${id}' in this server (${known.length === 0 ? 'it holds none' : `it holds ${known.join(', ')}`}); create_sandbox makes one`);
    }
    return entry;
  }

  /** Every sandbox held, oldest first. */
  list(): HeldSandbox[] {
    return [...this.held.values()];
  }

  /** Removes sandbox `id` (its container too). */
  async destroy(id: string, field = 'sandbox_id'): Promise<void> {
    const entry = this.get(id, field);
    this.held.delete(id);
    await entry.box.destroy();
  }

  /** Removes every sandbox (on shutdown); failures are collected, not thrown one by one. */
  async closeAll(): Promise<{ removed: number; failed: string[] }> {
    const entries = [...this.held.values()];
    this.held.clear();
    const results = await Promise.allSettled(entries.map((e) => e.box.destroy()));
    return { removed: results.filter((r) => r.status === 'fulfilled').length, failed: entries.filter((_, i) => results[i]?.status === 'rejected').map((e) => e.id) };
  }
}
