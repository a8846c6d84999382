import { afterAll, beforeAll, describe, it } from 'vitest';
import { PostgresRateLimiter } from '../../src/rate-limit/postgres-rate-limiter.js';
import { RATE_LIMIT_TABLE } from '../../src/storage/sql/migrations.js';
import { createPostgresPool, createPostgresStore } from '../../src/storage/sql/postgres-store.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres-test-database.js';
import { startSmtpFixture, type SmtpFixture } from '../helpers/smtp-fixture.js';
import { playSession } from '../helpers/smtp-script.js';

const available = await postgresAvailable('refused-recipient budget shared on PostgreSQL');

/**
 * The refused-recipient budget per network lives in the database like the other fair-use
 * counters: two MX nodes on one PostgreSQL grant a network its budget once, not twice.
 */
describe.skipIf(!available)('refused-recipient budget on PostgreSQL', () => {
  let database: TestDatabase | undefined;
  const pools: ReturnType<typeof createPostgresPool>[] = [];
  const nodes: SmtpFixture[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    const store = createPostgresStore(createPostgresPool(database.url, { poolSize: 2, onConnectionError: () => undefined }));
    await store.migrate();
    await store.close();
    for (let i = 0; i < 2; i += 1) {
      const pool = createPostgresPool(database.url, { poolSize: 3, onConnectionError: () => undefined });
      pools.push(pool);
      nodes.push(await startSmtpFixture({ refusedPerNetwork: 4, rateLimiter: new PostgresRateLimiter(pool, RATE_LIMIT_TABLE) }));
    }
  });
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.close()));
    await Promise.all(pools.map((pool) => pool.end()));
    await database?.drop();
  });

  it('refusals on one node spend the budget on the other: 421 4.7.0 at connect there, for the same /24 only', async () => {
    const [a, b] = nodes;
    if (a === undefined || b === undefined) throw new Error('two nodes expected');
    const refused = /^550 5\.1\.1 /;
    await playSession(
      a.port,
      [
        { send: 'EHLO a.example', expect: 250 },
        { send: 'MAIL FROM:<a@example.org>', expect: 250 },
        ...Array.from({ length: 4 }, (_, i) => ({ send: `RCPT TO:<pg${i}@tempinbox.test>`, expect: refused })),
      ],
      { localAddress: '127.0.20.1' },
    );
    await playSession(b.port, [], { localAddress: '127.0.20.2', greeting: /^421 4\.7\.0 / });
    await playSession(b.port, [{ send: 'EHLO c.example', expect: 250 }], { localAddress: '127.0.21.1' });
  });
});
