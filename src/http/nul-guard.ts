import type { FastifyInstance } from 'fastify';
import { HttpError } from '../lib/errors.js';
import { nulDetails } from '../lib/nul.js';

/**
 * Refuses U+0000 anywhere in a request's path parameters, query string or JSON body, before any
 * route's own validation: 400 Validation error naming each field (the identity routes answer in
 * their `{verified:false}` shape). PostgreSQL's text type cannot hold U+0000 and SQLite's can, so
 * without this one check the same request was a 500 on one database and stored on the other. An
 * unpaired surrogate (`"\ud800"`, which JSON can write and no text holds) is refused the same way:
 * each database stored it as a different replacement, and neither as it was sent. A URL cannot
 * carry one (its percent-encoded bytes are not UTF-8, and are left undecoded or refused). Input
 * that reaches a route in another form (multipart fields, cursors, token claims) is checked where
 * it is decoded.
 */
export function registerNulGuard(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    // Path parameters and the query string are decoded from the URL, where U+0000 can only be
    // written `%00` (the HTTP parser refuses a raw one): without it and without a body there is
    // nothing to walk, which is every plain GET.
    if (request.body === undefined && !request.url.includes('%00')) return done();
    const details = nulDetails(request.params, request.query, request.body);
    if (details.length > 0) return done(new HttpError(400, 'Validation error', { details }));
    done();
  });
}
