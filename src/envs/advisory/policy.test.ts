import { describe, expect, it } from 'vitest';
import { EXPERT_QUESTIONS } from './expert.js';
import { ElicitationTracker } from './policy.js';
import { TOPIC_NAMES, TOPICS } from './client.js';

describe('ElicitationTracker', () => {
  it('counts a topic as asked only in a question', () => {
    const t = new ElicitationTracker();
    t.onAgentMessage('I will stay within your budget and book a nonstop flight.');
    expect(t.missing()).toEqual(TOPIC_NAMES);
    t.onAgentMessage('Great. What is your budget? Also, which city are you flying from?');
    expect(t.missing()).toEqual(['dates', 'travellers', 'hotel', 'flights', 'activities']);
  });

  it('hears each of the expert\'s questions as asking about its topic, and only that one', () => {
    for (const topic of TOPIC_NAMES) {
      const hits = TOPIC_NAMES.filter((t) => TOPICS[t].test(EXPERT_QUESTIONS[topic]));
      expect(hits, topic).toEqual([topic]);
    }
  });

  it('hears one question that lists every topic as asking about all of them', () => {
    const t = new ElicitationTracker();
    t.onAgentMessage('Could you tell me your origin city, your dates, the number of travellers, your budget, your hotel requirements, your flight preferences and the activities you want?');
    expect(t.missing()).toEqual([]);
  });
});
