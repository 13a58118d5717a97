import { describe, expect, it } from 'vitest';
import { askingSentences, withoutCourtesies } from './courtesy.js';

describe('the courtesies around a question', () => {
  it('leaves out greetings, thanks, sign-offs, apologies and announcements of a question', () => {
    expect(withoutCourtesies('Hi! Quick question: How do I read a whole file? Thanks in advance.')).toBe('How do I read a whole file?');
    expect(withoutCourtesies('Hey guys, how do I check if a file exists? Cheers')).toBe('how do I check if a file exists?');
    expect(withoutCourtesies('Good morning! Do you ship to Norway? Many thanks, Anna')).toBe('Do you ship to Norway?');
    expect(withoutCourtesies('Sorry to bother you. express shipping price germany Kind regards')).toBe('express shipping price germany');
    expect(withoutCourtesies('Is varchar(n) faster than text? Any help would be greatly appreciated!')).toBe('Is varchar(n) faster than text?');
    expect(withoutCourtesies('Hello, sorry if this is a dumb question, but how do I vacuum a table?')).toBe('but how do I vacuum a table?');
    expect(withoutCourtesies('Dear Sir/Madam,\n\nI would be grateful if you could help me with the following. Three weeks from a date?\n\nYours faithfully,\nJ. Okafor')).toBe(
      'Three weeks from a date?',
    );
    expect(withoutCourtesies('How do I gzip a file?\n\n(Sent from my iPhone)')).toBe('How do I gzip a file?');
    expect(withoutCourtesies('I’m new to this. How do I gzip a file?')).toBe('How do I gzip a file?');
    // As people type them in a chat: drawn out, misspelt, shortened.
    expect(withoutCourtesies('hiii how do i write a stored procedure? thanx')).toBe('how do i write a stored procedure?');
    expect(withoutCourtesies('Helo team, do you ship to Norway? thnks')).toBe('do you ship to Norway?');
    expect(withoutCourtesies('heyy can i change my address tyvm')).toBe('can i change my address');
  });

  it('keeps the words of courtesies a question uses, and a message that is only a courtesy', () => {
    expect(withoutCourtesies('How do I thank the courier?')).toBe('How do I thank the courier?');
    expect(withoutCourtesies('which plan is best')).toBe('which plan is best');
    expect(withoutCourtesies('Best way to back up a database?')).toBe('Best way to back up a database?');
    expect(withoutCourtesies('Why do I need help from support?')).toBe('Why do I need help from support?');
    expect(withoutCourtesies('My program prints hello world twice')).toBe('My program prints hello world twice');
    expect(withoutCourtesies('His order never came')).toBe('His order never came');
    expect(withoutCourtesies('thanks!')).toBe('thanks!');
  });

  it('reads long runs of spaces and punctuation in one pass', () => {
    // Each would take seconds if a pattern rescanned the run from every position.
    expect(withoutCourtesies(`${'\n'.repeat(20_000)}x`)).toBe('x');
    expect(withoutCourtesies(`${' ,'.repeat(20_000)}Anna`)).toMatch(/Anna$/);
  });

  it('tells the sentences that ask from those that give context', () => {
    expect(askingSentences('Long-time customer here. How long do I have to return something?')).toBe('How long do I have to return something?');
    expect(askingSentences("I'm on the free plan.\nhow do I gzip a file using streams")).toBe('how do I gzip a file using streams');
    // What it asks points into the context: the context is part of the question.
    expect(askingSentences('Do you ship there? I live on Mars.')).toBeNull();
    expect(askingSentences('I have a Bitcoin wallet. Can I pay with it?')).toBeNull();
    // "Is there…", "is it possible…" and a relative "that" point nowhere.
    expect(askingSentences('We run a shop. Is there a limit on a query that runs long?')).toBe('Is there a limit on a query that runs long?');
    // Every sentence asks, or none does: no context to tell apart.
    expect(askingSentences('How do I reset my password?')).toBeNull();
    expect(askingSentences('The mugs showed up in pieces. The box was fine.')).toBeNull();
  });
});
