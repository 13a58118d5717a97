import type { Migration, MigrationProvider } from 'kysely';
import { core } from './001-core.js';
import { knowledge } from './002-knowledge.js';
import { actions } from './003-actions.js';
import { answerLeases } from './005-answer-leases.js';
import { knowledgeSearch } from './006-knowledge-search.js';
import { supersededMessages } from './007-superseded-messages.js';
import { accounts } from './008-accounts.js';
import { messageOutcome } from './009-message-outcome.js';
import { gapsEvals } from './010-gaps-evals.js';
import { handoff } from './011-handoff.js';
import { webhooks } from './012-webhooks.js';
import { knowledgeJobsSource } from './013-knowledge-jobs-source.js';
import { knowledgeHeadingIndex } from './014-knowledge-heading-index.js';
import { knowledgeJobsQueued } from './015-knowledge-jobs-queued.js';
import { knowledgeJobsOneRunning } from './016-knowledge-jobs-one-running.js';
import { answersSourceUnique } from './017-answers-source-unique.js';
import { oneDemoProject } from './018-one-demo-project.js';
import { webhookLastFailure } from './019-webhook-last-failure.js';

/**
 * Every migration, in order. Names sort lexically; a feature adds one file and one line here.
 * Migrations are written with Kysely's schema builder so one file serves SQLite and PostgreSQL.
 */
const migrations: Record<string, Migration> = {
  '001-core': core,
  '002-knowledge': knowledge,
  '003-actions': actions,
  '005-answer-leases': answerLeases,
  '006-knowledge-search': knowledgeSearch,
  '007-superseded-messages': supersededMessages,
  '008-accounts': accounts,
  '009-message-outcome': messageOutcome,
  '010-gaps-evals': gapsEvals,
  '011-handoff': handoff,
  '012-webhooks': webhooks,
  '013-knowledge-jobs-source': knowledgeJobsSource,
  '014-knowledge-heading-index': knowledgeHeadingIndex,
  '015-knowledge-jobs-queued': knowledgeJobsQueued,
  '016-knowledge-jobs-one-running': knowledgeJobsOneRunning,
  '017-answers-source-unique': answersSourceUnique,
  '018-one-demo-project': oneDemoProject,
  '019-webhook-last-failure': webhookLastFailure,
};

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return migrations;
  },
};
