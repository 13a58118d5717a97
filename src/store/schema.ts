import type { Generated } from 'kysely';

/**
 * Row types of every table. Times are ISO 8601 UTC strings with milliseconds in both databases (they
 * sort as text); JSON columns hold serialized text; flags are 0/1 integers, so that rows read the
 * same on SQLite and PostgreSQL.
 */
export interface ProjectsTable {
  id: string;
  name: string;
  /** JSON: ProjectSettings. */
  settings: string;
  hmac_secret: string;
  /** 1 for the demo project of the first start (at most one: projects_one_demo), else 0. */
  demo: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  kind: 'public' | 'secret';
  name: string | null;
  prefix: string;
  hash: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface EndUsersTable {
  id: string;
  project_id: string;
  external_id: string;
  email: string | null;
  name: string | null;
  verified_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ConversationsTable {
  id: string;
  project_id: string;
  end_user_id: string | null;
  status: 'ACTIVE' | 'CLOSED';
  message_count: number;
  last_message_preview: string | null;
  last_message_role: 'USER' | 'ASSISTANT' | null;
  closed_at: string | null;
  created_at: string;
  updated_at: string;
  /** Handoff to a person (migration 011): null, `requested` (waiting for a person) or `active`. */
  handoff_status: 'requested' | 'active' | null;
  handoff_reason: string | null;
  /** How the handoff came: `user` (the widget's button / the API), `agent` (the model's tool), `policy`, `teammate`. */
  handoff_via: string | null;
  handoff_requested_at: string | null;
  handoff_assignee_id: string | null;
  handoff_assignee_name: string | null;
  handoff_accepted_at: string | null;
  /** The agent's answers in a row that declined (reset by any other answer, a person's reply, a hand-back). */
  declined_streak: Generated<number>;
}

export interface MessagesTable {
  id: string;
  conversation_id: string;
  project_id: string;
  /** Position in the conversation, 1-based; orders history without relying on clock ties. */
  seq: number;
  role: 'user' | 'assistant';
  content: string;
  /** JSON: UI message parts (assistant) or null. */
  parts: string | null;
  /** JSON: cited sources or null. */
  sources: string | null;
  status: 'complete' | 'streaming' | 'error';
  model: string | null;
  /** JSON: token usage or null. */
  usage: string | null;
  /** Id of the answer that replaced this one (a regenerate); null for the current version. */
  superseded_by: string | null;
  /** What an answer did (migration 009); null for user messages and answers stored before it. */
  outcome: MessageOutcome | null;
  created_at: string;
  updated_at: string;
  /** Who wrote an assistant message (migration 011): `agent`, `human`, or null (stored before authorship). */
  author_type: 'agent' | 'human' | null;
  author_id: string | null;
  author_name: string | null;
}

/** What an assistant message did: see migration 009. */
export const MESSAGE_OUTCOMES = ['answered', 'declined', 'action', 'error'] as const;
export type MessageOutcome = (typeof MESSAGE_OUTCOMES)[number];

export interface FeedbackTable {
  id: string;
  project_id: string;
  conversation_id: string;
  message_id: string | null;
  /** message_id or '' so that one rating per (conversation, message) is a plain unique index. */
  target: string;
  rating: 'POSITIVE' | 'NEGATIVE';
  comment: string | null;
  created_at: string;
  updated_at: string;
}

export interface SkillsTable {
  id: string;
  project_id: string;
  name: string;
  description: string;
  instructions: string;
  enabled: number;
  created_at: string;
  updated_at: string;
}

export interface ActionsTable {
  id: string;
  project_id: string;
  name: string;
  description: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  /** JSON: StoredHeader[]; secret values are AES-256-GCM ciphertext, never plain text. */
  headers: string;
  /** JSON Schema (type object) of the arguments. */
  parameters: string;
  /** JSON string[] or null: argument names sent in the query string (explicit mapping). */
  query_params: string | null;
  /** JSON string[] or null: argument names sent in the JSON body (explicit mapping). */
  body_params: string | null;
  /** JSON string[]. */
  examples: string;
  timeout_ms: number;
  enabled: number;
  created_at: string;
  updated_at: string;
}

export interface ActionCallsTable {
  id: string;
  project_id: string;
  action_id: string;
  conversation_id: string | null;
  source: 'agent' | 'test';
  outcome: 'ok' | 'error';
  http_status: number | null;
  latency_ms: number;
  /** Short, secret-free reason ("HTTP 503", "Timed out after 5000 ms", "Invalid arguments"). */
  error: string | null;
  created_at: string;
}

export interface KnowledgeSourcesTable {
  id: string;
  project_id: string;
  type: 'text' | 'markdown' | 'html' | 'pdf' | 'url' | 'sitemap' | 'faq';
  title: string | null;
  url: string | null;
  /** The content of inline sources: text, JSON FAQ items, or base64 for PDF. Null for URL sources. */
  payload: string | null;
  /** JSON: crawl limits and the like. */
  options: string;
  status: 'pending' | 'processing' | 'ready' | 'failed';
  error: string | null;
  pages_done: number;
  pages_total: number | null;
  chunks_done: number;
  /** Chunks of the visible generation. */
  chunk_count: number;
  /** The generation whose chunks are searchable; null until the first ingestion completes. */
  generation: string | null;
  synced_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface KnowledgeJobsTable {
  id: string;
  source_id: string;
  project_id: string;
  /** The generation this job writes. */
  generation: string;
  status: 'queued' | 'running' | 'done' | 'failed';
  attempts: number;
  lease_owner: string | null;
  lease_until: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}

export interface KnowledgeChunksTable {
  rowid: Generated<number>;
  id: string;
  project_id: string;
  source_id: string;
  generation: string;
  position: number;
  title: string;
  /** JSON string[]. */
  heading_path: string;
  /** The heading path joined by " > ", indexed for search. */
  headings: string;
  url: string | null;
  text: string;
  /** JSON number[] when an embedding model is configured. */
  embedding: string | null;
}

/** A conversation that is answering now (see migration 005): the cross-node "busy" lock. */
export interface AnswerLeasesTable {
  conversation_id: string;
  /** Random per answer, so only the answer that claimed the lease releases it. */
  token: string;
  expires_at: string;
}

export interface UsersTable {
  id: string;
  /** Lower-cased. */
  email: string;
  name: string;
  role: 'owner' | 'member';
  /** `scrypt$N$r$p$salt$hash` (base64), see accounts/passwords.ts. */
  password_hash: string;
  created_at: string;
  updated_at: string;
}

export interface MembershipsTable {
  user_id: string;
  project_id: string;
  role: 'admin' | 'agent' | 'viewer';
  created_at: string;
}

export interface SessionsTable {
  /** SHA-256 (hex) of the cookie's value. */
  id_hash: string;
  user_id: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  absolute_expires_at: string;
}

export interface InvitesTable {
  id: string;
  /** SHA-256 (hex) of the link's token. */
  token_hash: string;
  email: string;
  role: 'owner' | 'member';
  /** JSON: [{projectId, role}]. */
  projects: string;
  created_by: string | null;
  created_at: string;
  expires_at: string;
}

export interface SetupTokensTable {
  /** SHA-256 (hex) of the printed first-run token. */
  token_hash: string;
  created_at: string;
}

/** A project's webhook endpoint (see migration 012). */
export interface WebhookEndpointsTable {
  id: string;
  project_id: string;
  url: string;
  description: string | null;
  /** JSON string[] of event types, or null for every type (those added later too). */
  events: string | null;
  /** The signing secret (`whsec_…`), AES-256-GCM sealed. */
  secret: string;
  /** The secret before the last rotation, sealed; deliveries are signed with it too until `previous_secret_until`. */
  previous_secret: string | null;
  previous_secret_until: string | null;
  enabled: number;
  /** Why the endpoint was turned off by the system (failing for days, 410 Gone); null when enabled or turned off by hand. */
  disabled_reason: string | null;
  disabled_at: string | null;
  /** Start of the current run of failed attempts; null after a success. */
  failing_since: string | null;
  /** When its last attempt failed: a failure long after it starts a new run. */
  last_failed_at: string | null;
  created_at: string;
  updated_at: string;
}

/** An event of the outbox: the exact body sent (and signed) to every endpoint that takes its type. */
export interface WebhookEventsTable {
  id: string;
  project_id: string;
  type: string;
  /** The JSON body `{type, timestamp, data}`, serialized once. */
  payload: string;
  created_at: string;
}

/** One event to one endpoint, with its retry state. */
export interface WebhookDeliveriesTable {
  id: string;
  project_id: string;
  endpoint_id: string;
  event_id: string;
  status: 'pending' | 'sending' | 'delivered' | 'failed';
  attempts: number;
  /** When the next attempt is due (pending), else null. */
  next_attempt_at: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  last_attempt_at: string | null;
  /** HTTP status of the last attempt's response, when one came. */
  response_status: number | null;
  duration_ms: number | null;
  /** Short reason the last attempt failed ("HTTP 500", "Timed out after 15000 ms"); never a body. */
  error: string | null;
  delivered_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A question the agent could not answer, grouped by meaning (see migration 010). */
export interface KnowledgeGapsTable {
  id: string;
  project_id: string;
  /** The group's first question, as asked. */
  question: string;
  /** JSON string[]: the key terms of `question` (stemmed content words). */
  terms: string;
  /** The sorted key terms joined by spaces: one gap per project and signature. */
  signature: string;
  status: 'open' | 'resolved' | 'dismissed';
  /** The answer an admin gave when resolving it. */
  answer: string | null;
  /** The FAQ source the answer was added to. */
  faq_source_id: string | null;
  /** When it was resolved or dismissed; only later occurrences reopen a resolved gap. */
  closed_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A named set of question cases for answer regression tests. */
export interface EvalSuitesTable {
  id: string;
  project_id: string;
  name: string;
  /** JSON: EvalCase[]. */
  cases: string;
  created_at: string;
  updated_at: string;
}

/** One run of a suite: what the agent answered and the metrics. */
export interface EvalRunsTable {
  id: string;
  eval_id: string;
  project_id: string;
  /** The model spec the answers came from. */
  model: string;
  /** JSON: EvalMetrics. */
  metrics: string;
  /** JSON: EvalCaseResult[]. */
  results: string;
  created_at: string;
}

export interface Database {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  end_users: EndUsersTable;
  conversations: ConversationsTable;
  messages: MessagesTable;
  feedback: FeedbackTable;
  skills: SkillsTable;
  actions: ActionsTable;
  action_calls: ActionCallsTable;
  knowledge_sources: KnowledgeSourcesTable;
  knowledge_jobs: KnowledgeJobsTable;
  knowledge_chunks: KnowledgeChunksTable;
  answer_leases: AnswerLeasesTable;
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  invites: InvitesTable;
  setup_tokens: SetupTokensTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  knowledge_gaps: KnowledgeGapsTable;
  eval_suites: EvalSuitesTable;
  eval_runs: EvalRunsTable;
}

// Kept so that later tables can use auto-increment columns without another import site.
export type { Generated };
