import { Redis } from 'ioredis';
import pg from 'pg';

/**
 * Before any test: when TEST_DATABASE_URL / TEST_REDIS_URL are set, they must answer (a variant that
 * silently skips is worse than a red run). Under CI=true both must be set.
 */
export default async function setup(): Promise<void> {
  const { TEST_DATABASE_URL, TEST_REDIS_URL, CI } = process.env;
  if (CI === 'true') {
    const missing = [!TEST_DATABASE_URL && 'TEST_DATABASE_URL', !TEST_REDIS_URL && 'TEST_REDIS_URL'].filter(Boolean);
    if (missing.length) throw new Error(`CI=true but ${missing.join(' and ')} not set: the PostgreSQL/Redis variants must run in CI.`);
  }
  if (TEST_DATABASE_URL) {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 5000 });
    try {
      await client.connect();
      await client.query('select 1');
    } catch (err) {
      throw new Error(`TEST_DATABASE_URL is set but PostgreSQL does not answer: ${(err as Error).message}`);
    } finally {
      await client.end().catch(() => {});
    }
  }
  if (TEST_REDIS_URL) {
    const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5000 });
    try {
      await redis.connect();
      await redis.ping();
    } catch (err) {
      throw new Error(`TEST_REDIS_URL is set but Redis does not answer: ${(err as Error).message}`);
    } finally {
      redis.disconnect();
    }
  }
}
