import { describe, expect, it } from 'vitest';
import { actionsSkill, fillParameters, matchAction, phraseResult } from './actions.js';
import { findDates } from './action-params.js';
import type { BuiltinTurn, OfferedTool } from './types.js';

const track: OfferedTool = {
  name: 'track_order',
  description: 'Look up where an order is.',
  examples: ['where is my package', 'has my parcel shipped yet'],
  inputSchema: {
    type: 'object',
    properties: { orderNumber: { type: 'string', pattern: '^A-\\d{4}$', description: 'Order number' } },
    required: ['orderNumber'],
  },
};
const book: OfferedTool = {
  name: 'book_call',
  description: 'Book a call with the sales team.',
  examples: ['I would like to talk to someone'],
  inputSchema: {
    type: 'object',
    properties: {
      email: { type: 'string', format: 'email' },
      day: { type: 'string', format: 'date', description: 'Day of the call' },
      topic: { type: 'string', enum: ['billing', 'upgrade', 'onboarding'] },
      seats: { type: 'integer', minimum: 1, maximum: 500 },
    },
    required: ['email', 'day', 'topic'],
  },
};

function turn(userTexts: string[], previousAnswer: string | null = null, tools = [track, book]): BuiltinTurn {
  return { question: userTexts.at(-1)!, userTexts, previousAnswer, projectName: null, tools, outcomes: [] };
}

describe('builtin model: actions', () => {
  it('matches by example phrase even without a name word', () => {
    expect(matchAction('Where is my package?', [track, book])?.name).toBe('track_order');
    expect(matchAction('I would like to talk to someone about pricing', [track, book])?.name).toBe('book_call');
    expect(matchAction('What are your opening hours?', [track, book])).toBeNull();
  });

  it('fills by pattern, format, enum and type, each value used once', () => {
    const { input, missing } = fillParameters(book.inputSchema, ['Book a call about the upgrade on March 14, 2031 for 12 seats, mail me at ann@example.com'], null);
    expect(input).toEqual({ email: 'ann@example.com', day: '2031-03-14', topic: 'upgrade', seats: 12 });
    expect(missing).toEqual([]);
    const order = fillParameters(track.inputSchema, ['my order a-1234 from 2024-01-02 has 3 items'], null);
    expect(order.input).toEqual({ orderNumber: 'A-1234' });
  });

  it('refuses values that break the schema and asks for them', () => {
    const decision = actionsSkill(turn(['Book a call for 900 seats, mail bob@example']));
    expect(decision).toEqual({
      kind: 'answer',
      text: 'To book a call with the sales team, I need your email, your day of the call (a date such as 2025-03-14) and your topic (billing, upgrade or onboarding). Could you tell me?',
    });
  });

  it('uses the reply to its question in the next turn', () => {
    const ask = actionsSkill(turn(['Where is my package?']));
    expect(ask).toEqual({ kind: 'answer', text: 'To look up where an order is, I need your order number. Could you tell me?' });
    const follow = actionsSkill(turn(['Where is my package?', "It's A-4821."], (ask as { text: string }).text));
    expect(follow).toEqual({ kind: 'call', toolName: 'track_order', input: { orderNumber: 'A-4821' } });
    const bad = actionsSkill(turn(['Where is my package?', 'no idea'], (ask as { text: string }).text));
    expect(bad).toMatchObject({ kind: 'answer', text: expect.stringContaining('I need your order number') });
  });

  it('reads dates the ways people write them', () => {
    const today = new Date('2030-06-15T10:00:00Z');
    expect(findDates('on 14 March 2031', today)).toEqual(['2031-03-14']);
    expect(findDates('14.03.2031 or 03/14/2031', today)).toEqual(['2031-03-14', '2031-03-14']);
    expect(findDates('tomorrow please', today)).toEqual(['2030-06-16']);
    expect(findDates('2031-02-30', today)).toEqual([]);
  });

  it('phrases results, refusals and failures readably', () => {
    const ok = phraseResult('look up where an order is', { status: 200, ok: true, body: { id: 'A-1', status: 'shipped', items: [{ sku: 'MUG', qty: 2 }] } }, false);
    expect(ok).toBe('Here is what I found (look up where an order is):\n\n- Id: A-1\n- Status: shipped\n- Items (1):\n  - sku: MUG, qty: 2');
    expect(phraseResult('look up where an order is', { status: 404, ok: false, body: { error: 'Order not found' } }, false)).toBe(
      "I couldn't look up where an order is: Order not found. Could you check the details you gave me?",
    );
    expect(phraseResult('resend the invoice', 'Timed out after 5000 ms', true)).toBe(
      'I tried to resend the invoice, but it did not work (Timed out after 5000 ms). Please try again later.',
    );
  });
});
