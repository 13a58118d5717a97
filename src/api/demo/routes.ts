import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorSchema } from '../../http/error-schemas.js';
import type { MediaResponse } from '../../http/openapi.js';
import { secretBox } from '../../lib/secret-box.js';
import { findKeyOwner } from '../../projects/keys.js';
import { demoOrder, demoOrderParams, findDemoOrder } from './orders.js';
import { renderDemoPage } from './page.js';

const demoQuery = z.object({
  key: z
    .string()
    .max(200)
    .optional()
    .describe("A project's public key (ad_pk_…). The first start prints the demo project's /demo?key=… link."),
});

/**
 * GET /demo: a help-center page with the widget on it. Keys are stored only as hashes, so the
 * server cannot put the demo project's key into the page by itself; the key comes in the query
 * string (a public key is meant to be in web pages anyway). Secret keys are refused so nobody
 * publishes one by accident.
 */
export const demoRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get('/demo', {
    config: { auth: 'none' },
    schema: {
      tags: ['widget'],
      operationId: 'getDemoPage',
      summary: 'Demo page with the widget',
      description: 'A help-center page with the widget on it, for trying a project. Pass its public key as `key`; secret, unknown and revoked keys get an explanation instead of the widget. No key needed to load the page.',
      querystring: demoQuery,
      response: {
        200: { description: 'The page.', content: { 'text/html': { schema: z.string() } } } satisfies MediaResponse,
      },
    },
    handler: async (request, reply) => {
      const key = request.query.key?.trim() || null;
      let problem: string | null = null;
      let apiKey: string | null = null;
      if (key && !/^ad_pk_[0-9A-Za-z]{32}$/.test(key)) {
        problem = key.startsWith('ad_sk_')
          ? 'That is a secret key: never put it in a web page. Use the public key (ad_pk_…).'
          : 'That is not a public key (ad_pk_ followed by 32 letters and digits).';
      } else if (key) {
        const owner = await findKeyOwner(app.deps.store.db, secretBox(app.deps.config), key);
        if (owner) apiKey = key;
        else problem = 'That key is unknown or has been revoked.';
      }
      const nonce = randomBytes(16).toString('base64');
      const base = app.deps.config.ANSWERDESK_PUBLIC_URL;
      reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        // A strict policy on purpose: the widget must work on sites that forbid inline styles and scripts.
        .header(
          'content-security-policy',
          `default-src 'self'; script-src 'self' 'nonce-${nonce}'; style-src 'self' 'nonce-${nonce}'; img-src 'self' data: https:; connect-src 'self'${base ? ` ${new URL(base).origin}` : ''}; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`,
        );
      return reply.send(renderDemoPage({ apiKey, apiUrl: base ? `${base.replace(/\/+$/, '')}/api/v1` : null, nonce, problem }));
    },
  });

  // The demo shop's order look-up: what the demo project's `track_order` action calls (through the
  // SSRF guard's allowance for this server's own demo endpoint). Fictional orders, no personal data.
  app.get('/demo/shop/orders/:orderId', {
    config: { auth: 'none' },
    schema: {
      tags: ['widget'],
      operationId: 'getDemoOrder',
      summary: 'Demo shop: look up an order',
      description:
        "The status, carrier, tracking number and items of one of the demo shop's fictional orders (demo/shop/orders.json). The demo project's order-tracking action calls it. No key needed.",
      params: demoOrderParams,
      response: { 200: demoOrder, 404: errorSchema.describe('No demo order has that number.') },
    },
    handler: async (request) => findDemoOrder(request.params.orderId),
  });
};
