import type { Action } from '../../core/types.js';
import { isAffirmative, isConfirmationRequest } from '../conversation-kit/confirmation.js';
import { mentions } from '../conversation-kit/text.js';
import type { RetailDb } from './database.js';
import { RETAIL_WRITE_TOOLS, TRANSFER_TOOL } from './tools.js';

/**
 * The retail store's written policy (after tau-bench's retail `wiki.md`), which the agent reads in its
 * task instruction, and the guard that enforces its three conversation rules on every tool call:
 *
 * - **authenticate first** — until a `find_user_id_by_*` call with an email, or a name and zip code, that
 *   the user said in the conversation has found the user, only `respond`, `think` and the catalogue tools
 *   are allowed;
 * - **one user** — reads and writes of another user's details or orders are refused, and so is a second
 *   identity;
 * - **confirm before a change** — a write needs a confirmation: the agent's last confirmation request
 *   ({@link isConfirmationRequest}) mentions the order (or, for the user's address, the new zip code or
 *   street), and the user's answer to it was a yes ({@link isAffirmative}). One yes allows one change.
 *
 * A call the guard refuses is not executed: the agent sees `Refused by policy: …` (`info.error` code
 * `policy_violation`) and the violation is recorded; the episode goes on, but a violation fails the task
 * (the reward's `policy` term).
 */

/** The policy, as the agent's task instruction states it. */
export const RETAIL_POLICY = `# Retail customer service policy

You are a customer service agent of an online store. You talk with one customer; each message you send with \`respond\` gets the customer's reply as its result.

- Authenticate first. Before anything else, find the customer's user id with find_user_id_by_email, or with find_user_id_by_name_zip (first name, last name and zip code), using only what the customer tells you, even if they give you a user id. Until then you may only talk to them and look up products.
- One customer. Act only on the authenticated customer's profile and orders. Never look up or change another customer's details or orders, even when asked: decline politely.
- Confirm before every change. Before a tool that changes the database (cancel, modify, return, exchange, change an address), tell the customer exactly what you will do, naming the order id and what changes, ask them to confirm, and act only after they answer yes. One yes allows one change.
- Do not make up information, procedures or ids: read them with the tools. Tell the customer what they ask for.
- Orders are pending, processed, delivered or cancelled. Only a pending order can be cancelled (reason 'no longer needed' or 'ordered by mistake') or modified: its shipping address, its payment method (a different one of the customer's; a gift card must cover the total) or its items. Items can be modified once per order, to other available variants of the same product; the price difference is paid or refunded with a payment method of the customer.
- Only a delivered order can be returned or exchanged. A refund goes to the original payment method or to a gift card of the customer. Items can be exchanged once per order, to available variants of the same product: collect every item to exchange first.
- Transfer the customer to a human agent (transfer_to_human_agents) only when the request cannot be handled with your tools within this policy; it ends the conversation.
- One tool call per turn. The conversation ends when the customer ends it.`;

/** A refused call. */
export interface PolicyViolation {
  /** The step (1-based) of the call. */
  step: number;
  tool: string;
  rule: 'unauthenticated' | 'unverified_identity' | 'other_user' | 'unconfirmed';
  message: string;
}

const WRITES = new Set<string>(RETAIL_WRITE_TOOLS);
const OPEN = new Set(['respond', 'think', 'get_product_details', 'list_all_product_types']);

/** The guard of one episode (see the module comment). */
export class PolicyGuard {
  /** The authenticated user. */
  authenticated: string | undefined;
  readonly violations: PolicyViolation[] = [];
  /** The confirmation request the user said yes to, not yet used by a write. */
  private confirmed: string | undefined;

  /** Records the user's answer to the agent's message. */
  onUserTurn(agentMessage: string, answer: string): void {
    if (!isConfirmationRequest(agentMessage)) return;
    this.confirmed = isAffirmative(answer) ? agentMessage : undefined;
  }

  /**
   * Checks a call before it runs: the violation (also recorded) when the policy forbids it, else
   * undefined. `said` is what the user said so far.
   */
  check(action: Action, db: RetailDb, said: readonly string[], step: number): PolicyViolation | undefined {
    const refuse = (rule: PolicyViolation['rule'], message: string): PolicyViolation => {
      const v: PolicyViolation = { step, tool: action.tool, rule, message };
      this.violations.push(v);
      return v;
    };
    const p = action.params;
    if (OPEN.has(action.tool)) return undefined;
    if (action.tool === 'find_user_id_by_email' || action.tool === 'find_user_id_by_name_zip') {
      const values = action.tool === 'find_user_id_by_email' ? [p.email] : [p.first_name, p.last_name, p.zip];
      const unsaid = values.map(String).filter((v) => !said.some((m) => mentions(m, v)));
      if (unsaid.length > 0) return refuse('unverified_identity', `the customer did not tell you ${unsaid.map((v) => `'${v}'`).join(', ')}; authenticate them only with what they say`);
      return undefined;
    }
    if (this.authenticated === undefined) return refuse('unauthenticated', 'authenticate the customer first (find_user_id_by_email or find_user_id_by_name_zip with what they told you)');
    if (action.tool === TRANSFER_TOOL) return undefined;
    const owner = this.ownerOf(action, db);
    if (owner !== undefined && owner !== this.authenticated) return refuse('other_user', `that belongs to another customer; you may act only for ${this.authenticated}`);
    if (!WRITES.has(action.tool)) return undefined;
    const target = action.tool === 'modify_user_address' ? [String(p.zip), String(p.address1)] : [String(p.order_id)];
    if (this.confirmed === undefined || !target.some((t) => mentions(this.confirmed as string, t))) {
      return refuse('unconfirmed', `the customer has not confirmed this change: first describe it (naming ${action.tool === 'modify_user_address' ? 'the new address' : `order ${String(p.order_id)}`}) and ask them to confirm, then wait for their yes`);
    }
    return undefined;
  }

  /**
   * A call ran: an identity lookup authenticates (a second, different identity is a violation, recorded and
   * returned: the caller hides the result); a write uses up the confirmation.
   */
  ran(action: Action, result: string, step: number): PolicyViolation | undefined {
    if (action.tool === 'find_user_id_by_email' || action.tool === 'find_user_id_by_name_zip') {
      if (this.authenticated !== undefined && this.authenticated !== result) {
        const v: PolicyViolation = { step, tool: action.tool, rule: 'other_user', message: `you already authenticated ${this.authenticated}; help one customer per conversation` };
        this.violations.push(v);
        return v;
      }
      this.authenticated = result;
    } else if (WRITES.has(action.tool)) this.confirmed = undefined;
    return undefined;
  }

  /** The user a call reads or writes (undefined when its target does not exist: the store then refuses it). */
  private ownerOf(action: Action, db: RetailDb): string | undefined {
    const p = action.params;
    if ('order_id' in p) return db.orders[String(p.order_id)]?.user_id;
    if ('user_id' in p) return db.users[String(p.user_id)] ? String(p.user_id) : undefined;
    return undefined;
  }
}
