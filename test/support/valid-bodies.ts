import { opensslHmac, signHs256 } from '../identity.js';
import type { Json } from './schema-mutations.js';

/**
 * A JSON body every route that takes one accepts as it is, keyed `METHOD path` as the OpenAPI
 * document names the route, with the ids of a project that has one of everything: what the
 * bad-input sweep and the U+0000 test change one field of, so that this one change is what is
 * refused. `password` is the one of the user `member@example.com`.
 */
export function validBodies(ids: Record<string, string>, hmacSecret: string, password: string): Record<string, Json> {
  return {
    'POST /api/v1/chat/conversations': { endUserExternalId: 'cust-2' },
    'POST /api/v1/chat/messages': {
      conversationId: ids.conversationId,
      projectId: ids.projectId,
      messages: [{ role: 'user', content: 'Hello there', id: 'm1', parts: [{ type: 'text', text: 'Hello there' }] }],
      userTokens: { 'X-Session': 'token-value' },
      pageContext: {
        url: 'https://shop.example.com/a',
        title: 'Shop',
        description: 'A shop',
        referrer: 'https://ref.example.com',
        textContent: 'Page text',
        headings: ['Heading'],
        buttons: ['Buy'],
        links: [{ href: 'https://shop.example.com/b', text: 'B' }],
        formFields: [{ name: 'email', type: 'email', label: 'E-mail', placeholder: 'you@example.com' }],
      },
    },
    'POST /api/v1/chat/feedback': { conversationId: ids.conversationId, messageId: ids.messageId, rating: 'POSITIVE', comment: 'Thanks' },
    'POST /api/v1/identity/verify': { userId: 'cust-3', hmac: opensslHmac(hmacSecret, 'cust-3'), email: 'c3@example.com', name: 'Cee Three' },
    'POST /api/v1/identity/identify': { token: signHs256(hmacSecret, { sub: 'cust-4', email: 'c4@example.com', name: 'Cee Four' }) },
    'POST /api/v1/admin/projects': {
      name: 'Another',
      settings: {
        instructions: 'Be brief.',
        model: 'builtin',
        conversationTtlMinutes: 60,
        identityVerification: 'optional',
        widget: { fabText: 'Help', primaryColor: '#112233' },
        allowedOrigins: ['https://a.example.com'],
        rateLimits: { chat: 10, session: 10, general: 10 },
      },
    },
    'PATCH /api/v1/admin/projects/{projectId}': { name: 'Acme 2', settings: { instructions: 'Be kind.', conversationTtlMinutes: 120, widget: { fabText: 'Ask' } } },
    'POST /api/v1/admin/projects/{projectId}/keys': { kind: 'public', name: 'key name' },
    'POST /api/v1/admin/projects/{projectId}/actions': {
      name: 'track',
      description: 'Track an order',
      method: 'GET',
      url: 'http://127.0.0.1:9/orders/{id}',
      headers: { 'X-Api-Key': 'secret-123456', 'X-Public': { value: 'public-value', secret: false } },
      parameters: { type: 'object', properties: { id: { type: 'string', description: 'Order id' } }, required: ['id'] },
      query: ['id'],
      examples: ['where is my order'],
      timeoutMs: 5000,
      enabled: true,
    },
    'PATCH /api/v1/admin/projects/{projectId}/actions/{actionId}': { description: 'Look up again', examples: ['look it up'], timeoutMs: 5000 },
    'POST /api/v1/admin/projects/{projectId}/actions/{actionId}/test': { arguments: { q: 'abc' }, userTokens: { 'X-Session': 'token-value' }, endUserId: 'cust-5' },
    'POST /api/v1/admin/projects/{projectId}/skills': { name: 'Exchange', description: 'Exchange an item', instructions: 'Ask which size.' },
    'PATCH /api/v1/admin/projects/{projectId}/skills/{skillId}': { name: 'Returns 2', description: 'Return it', instructions: 'Ask why.' },
    'POST /api/v1/admin/projects/{projectId}/evals/run': { cases: [{ question: 'When are you open?', answerable: true, expectedSources: ['Hours'], mustContain: ['nine'] }] },
    'POST /api/v1/admin/projects/{projectId}/evals': { name: 'Opening hours', cases: [{ question: 'When are you open?', mustContain: ['five'] }] },
    'POST /api/v1/admin/projects/{projectId}/gaps/{gapId}/resolve': { answer: 'We ship to the EU.' },
    'POST /api/v1/auth/login': { email: 'member@example.com', password: password },
    'POST /api/v1/auth/password': { currentPassword: password, newPassword: 'another long password 2' },
    'POST /api/v1/auth/setup': { token: 'setup-token-value', email: 'first@example.com', name: 'First Owner', password: password },
    'POST /api/v1/auth/invite': { token: 'invite-token-value', name: 'Invited Person', password: password },
    'PATCH /api/v1/admin/users/{userId}': { name: 'Renamed Person' },
    'PUT /api/v1/admin/users/{userId}/memberships/{projectId}': { role: 'agent' },
    'POST /api/v1/admin/invites': { email: 'invitee@example.com', role: 'member', projects: [{ projectId: ids.projectId, role: 'viewer' }] },
    'POST /api/v1/admin/projects/{projectId}/webhooks': { url: 'http://localhost:9/other', events: ['message.created'], description: 'CRM' },
    'PATCH /api/v1/admin/projects/{projectId}/webhooks/{webhookId}': { url: 'http://localhost:9/hook2', events: ['feedback.created'], description: 'Renamed' },
    'POST /api/v1/admin/projects/{projectId}/webhooks/{webhookId}/secret/rotate': { previousSecretValidForSeconds: 60 },
    'POST /api/v1/admin/projects/{projectId}/knowledge': { type: 'faq', title: 'FAQ', items: [{ question: 'Do you ship abroad?', answer: 'Yes, to the EU.' }] },
    'POST /api/v1/chat/conversations/{conversationId}/handoff': { reason: 'Wants a person' },
    'POST /api/v1/admin/projects/{projectId}/conversations/{conversationId}/assign': { assignee: { id: 'user_1', name: 'Dana' } },
    'POST /api/v1/admin/projects/{projectId}/conversations/{conversationId}/messages': { content: 'Hello from Dana', author: { id: 'user_1', name: 'Dana' } },
  };
}
