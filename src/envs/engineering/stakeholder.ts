import type { Rng } from '../../core/rng.js';
import { DEFAULT_PHRASES, type UserScript } from '../conversation-kit/scripted-user.js';
import type { Incident } from './incident.js';
import { clockTime } from './telemetry.js';

/**
 * The simulated stakeholder of `gymflow/engineering-v0`: the incident commander. They do not know the cause
 * and cannot look at the systems; they want updates, approve each change to production that names a service
 * and an action, and wait for the incident to be resolved. They never end the conversation themselves while the
 * agent keeps them informed (the agent's `resolve` ends it); after `patience` messages in a row that tell them
 * nothing they escalate, ending the episode.
 *
 * Because the commander approves any concrete change, the approval is not an oracle: choosing the right change is
 * the agent's job, and a harmful one is scored. The scripted commander answers when the first alert fired and
 * what customers see, if asked.
 */

/** Words a change request must contain (with a fleet service) for the commander to approve it. */
export const CHANGE_WORDS = ['roll back', 'rollback', 'revert', 'restart', 'scale', 'replicas', 'set ', 'change'] as const;

/** The phrasings of the commander's pings when the agent has not posted an update for a while. */
export const PINGS = ['Any update? What have you found so far?', 'Status please: what do we know?', "It's been a while. Where are we?"] as const;

/** The commander's first message. */
export function openingMessage(inc: Incident, commander: string, rng: Rng): string {
  const where = inc.symptom === 'gateway' ? 'the site (the gateway)' : inc.symptom;
  return rng.pick([
    `${commander} here, incident commander. We've been paged: customers are getting errors on ${where}. Please investigate, keep me posted, and check with me before you change anything in production.`,
    `Hi, it's ${commander}, I'm running this incident. Alerts are firing for ${where} and customers are complaining. Can you dig in? Keep me updated, and nothing changes in production without my OK.`,
  ]);
}

/** What the commander is told, in words (a model user's prompt). */
export function hiddenInstruction(inc: Incident, commander: string): string {
  const where = inc.symptom === 'gateway' ? 'the site (the gateway)' : inc.symptom;
  return [
    `You are ${commander}, the incident commander of an outage: customers are getting errors on ${where}; the first alert fired at ${clockTime(inc, inc.fault.onset)} UTC.`,
    'You talk with the on-call engineer. You do not know the cause and cannot look at the systems yourself; do not guess one.',
    'You want to be kept informed. Answer questions about when the first alert fired and what customers see.',
    'Before the engineer changes anything in production they must tell you which service they will change and how (roll back, restart, scale, set a config value). When they name the service and the change, approve it: say "Yes, go ahead." When they do not, ask them which service and what change.',
    'When they tell you the change is done, thank them and ask them to resolve the incident with its root cause. Keep the conversation going until they resolve it; do not end it yourself.',
  ].join(' ');
}

/** The scripted commander's {@link UserScript}: facts when asked; approve a named change; then wait for resolve. */
export function commanderScript(inc: Incident): UserScript {
  const first = clockTime(inc, inc.fault.onset);
  const where = inc.symptom === 'gateway' ? 'the site (the gateway)' : inc.symptom;
  return {
    facts: [
      { key: 'onset', asked: /\b(when|what time|since when|start(ed)?|began|first alert)\b/i, answers: [`The first alert fired at ${first} UTC.`, `Alerts started at about ${first} UTC.`] },
      { key: 'impact', asked: /\b(impact|affected|symptoms?|seeing|customers see|users see)\b/i, answers: [`Customers get errors on ${where}.`, `Requests to ${where} fail for a good share of customers.`] },
    ],
    goals: [
      {
        kind: 'action',
        id: 'approve',
        request: ['What have you found, and what do you want to change?', 'Tell me what you found and what you propose.'],
        confirm: [inc.services.map((s) => s.name), [...CHANGE_WORDS]],
        correction: ['Which service exactly, and what change? Name both, please.'],
      },
      { kind: 'handoff', id: 'resolve', request: ['Once everything is healthy, please resolve the incident with the root cause.', 'Please resolve the incident with its root cause when the fleet is healthy.'] },
    ],
    patience: 2,
    phrases: {
      ...DEFAULT_PHRASES,
      yes: ['Yes, go ahead.', 'Approved, go ahead.', 'OK, do it.'],
      thanks: ['Thanks.', 'Good, thank you.', 'Great news, thanks.'],
      giveUp: ["I'm not getting clear updates. I'm escalating to the next on-call. Goodbye.", 'This is going nowhere; I am paging someone else. Goodbye.'],
      nudge: ["That doesn't tell me much.", 'I need a clear status.', "I'm not sure what that means for the incident."],
    },
  };
}
