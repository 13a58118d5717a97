import { describe, expect, it } from 'vitest';
import { statesFact, wantedFact } from './fact.js';

describe('the kind of fact a question asks for', () => {
  it('reads it from the words that say what is asked', () => {
    expect(wantedFact('How long do I have to return something?')).toBe('duration');
    expect(wantedFact('how soon will my refund arrive')).toBe('duration');
    expect(wantedFact("What's the default port?")).toBe('default');
    expect(wantedFact('How many databases can be attached to one connection?')).toBe('amount');
    expect(wantedFact('maximum size of a row')).toBe('amount');
    expect(wantedFact('How do I reset my password?')).toBeNull();
    expect(wantedFact('Does SQLite have a boolean type?')).toBeNull();
  });

  it('finds a length of time, an amount or a default value stated in a sentence', () => {
    expect(statesFact('duration', 'You have 30 days from the day you receive your order.')).toBe(true);
    expect(statesFact('duration', 'The link expires after a 60-minute window.')).toBe(true);
    expect(statesFact('duration', 'Most refunds arrive within two weeks.')).toBe(true);
    expect(statesFact('duration', 'We answer within a day.')).toBe(true);
    expect(statesFact('duration', 'Register the return from your account.')).toBe(false);
    // A digit inside a name is no figure.
    expect(statesFact('amount', 'A limit set with sqlite3_limit() applies.')).toBe(false);
    expect(statesFact('amount', 'It cannot be increased above 125.')).toBe(true);
    expect(statesFact('amount', 'This returns one row for each database.')).toBe(false);
    expect(statesFact('default', 'The default is typically 128 megabytes (128MB).')).toBe(true);
    expect(statesFact('default', 'It is off by default.')).toBe(true);
    expect(statesFact('default', 'See default_tablespace for where it goes.')).toBe(false);
  });
});
