import type { EntityManager } from '@mikro-orm/postgresql';
import { CompiledQuery } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/db/ids.ts';
import { runStatement } from '../../src/db/lean.ts';
import { APP_ROLE } from '../../src/db/orm.ts';
import { ENVIRONMENT_SETTING, inEnvironment, markRollbackOnly } from '../../src/db/tenant-transaction.ts';
import { TaxCodeSchema } from '../../src/modules/tax/tax-code.entity.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();

/** A tax code persisted in `tx`'s unit of work and left for the transaction's end to flush. */
function persistTaxCode(tx: EntityManager, environmentId: string, code: string): void {
  tx.persist(tx.create(TaxCodeSchema, { id: newId(), environmentId, code, rate: '5' }));
}

async function taxCodes(env: TestEnvironment, code: string): Promise<number> {
  const rows = await t.sql('select 1 from tax_code where environment_id = $1 and code = $2', [env.id, code]);
  return rows.length;
}

describe('inEnvironment: the transaction a request works in', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment('Tenant transaction');
  });

  it('runs confined to the environment and as the application role, and ends with the transaction', async () => {
    // when work reads the transaction's settings
    const inside = await inEnvironment(t.orm.em.fork(), env.id, (tx) =>
      tx.execute<{ environment: string; role: string }[]>(
        `select current_setting('${ENVIRONMENT_SETTING}') as environment, current_user as role`,
      ),
    );
    // then they name the environment and the role
    expect(inside).toEqual([{ environment: env.id, role: APP_ROLE }]);
    // and no pooled connection keeps the environment after it
    const connections = Array.from({ length: 8 }, () =>
      t.orm.em
        .getConnection()
        .execute<{ environment: string | null }[]>(
          `select nullif(current_setting('${ENVIRONMENT_SETTING}', true), '') as environment`,
        ),
    );
    for (const rows of await Promise.all(connections)) expect(rows).toEqual([{ environment: null }]);
  });

  it("commits what the work's unit of work still holds", async () => {
    // when work persists an entity without flushing it
    await inEnvironment(t.orm.em.fork(), env.id, async (tx) => persistTaxCode(tx, env.id, 'FLUSHED'));
    // then the commit flushed it
    expect(await taxCodes(env, 'FLUSHED')).toBe(1);
  });

  it('commits a change to an entity the work loaded, which it neither persisted nor flushed', async () => {
    // given a tax code
    await inEnvironment(t.orm.em.fork(), env.id, async (tx) => persistTaxCode(tx, env.id, 'LOADED'));
    // when work loads it and changes it, and nothing else
    await inEnvironment(t.orm.em.fork(), env.id, async (tx) => {
      const taxCode = await tx.findOneOrFail(TaxCodeSchema, { environmentId: env.id, code: 'LOADED' });
      taxCode.code = 'CHANGED';
    });
    // then the commit flushed the change
    expect(await taxCodes(env, 'LOADED')).toBe(0);
    expect(await taxCodes(env, 'CHANGED')).toBe(1);
  });

  it('commits work that left its unit of work empty, and writes no audit row for it', async () => {
    const auditRows = async () =>
      (await t.sql('select 1 from audit_event where environment_id = $1', [env.id])).length;
    const before = await auditRows();
    // when work only reads and writes with statements of its own
    const rows = await inEnvironment(t.orm.em.fork(), env.id, async (tx) => {
      await tx.execute(
        `insert into tax_code (id, environment_id, code, rate, created_at, updated_at)
         values (?, ?, 'STATEMENT', 5, now(), now())`,
        [newId(), env.id],
      );
      return tx.execute<{ code: string }[]>(`select code from tax_code where code = 'STATEMENT'`);
    });
    // then its statements committed, and nothing else was written
    expect(rows).toEqual([{ code: 'STATEMENT' }]);
    expect(await taxCodes(env, 'STATEMENT')).toBe(1);
    expect(await auditRows()).toBe(before);
  });

  it('rolls back when marked rollback-only, and when the work throws, without keeping a connection', async () => {
    // when work marked rollback-only persists, and failing work persists and flushes, more times than
    // the pool has connections
    const attempts = 10;
    for (let i = 0; i < attempts; i++) {
      await inEnvironment(t.orm.em.fork(), env.id, async (tx) => {
        persistTaxCode(tx, env.id, 'ROLLED-BACK');
        markRollbackOnly(tx);
      });
      const failing = inEnvironment(t.orm.em.fork(), env.id, async (tx) => {
        persistTaxCode(tx, env.id, 'FAILED');
        await tx.flush();
        throw new Error('the work failed');
      });
      // then the work's own error is what the caller gets
      await expect(failing).rejects.toThrow('the work failed');
    }
    // then nothing of either was written
    expect(await taxCodes(env, 'ROLLED-BACK')).toBe(0);
    expect(await taxCodes(env, 'FAILED')).toBe(0);
    // and every connection went back to the pool: a new transaction still gets one
    const after = await inEnvironment(t.orm.em.fork(), env.id, (tx) => tx.execute('select 1 as one'));
    expect(after).toEqual([{ one: 1 }]);
  });

  it('answers a failed statement with its error and leaves the transaction ended', async () => {
    // when a statement fails inside the work
    const em = t.orm.em.fork();
    const failing = inEnvironment(em, env.id, (tx) => tx.execute('select * from no_such_table'));
    // then its error goes on, and the EntityManager is in no transaction afterwards
    await expect(failing).rejects.toMatchObject({ code: '42P01' });
    const rows = await inEnvironment(em, env.id, (tx) =>
      tx.execute<{ environment: string }[]>(
        `select current_setting('${ENVIRONMENT_SETTING}') as environment`,
      ),
    );
    expect(rows).toEqual([{ environment: env.id }]);
  });

  it('keeps the writes before a nested transaction that failed, which rolled back to its savepoint alone', async () => {
    // when work persists a tax code, then a nested transaction persists another and fails
    await inEnvironment(t.orm.em.fork(), env.id, async (tx) => {
      persistTaxCode(tx, env.id, 'OUTER');
      await tx.flush();
      const nested = tx.transactional(async (inner) => {
        persistTaxCode(inner as EntityManager, env.id, 'INNER');
        await inner.flush();
        throw new Error('the nested work failed');
      });
      await expect(nested).rejects.toThrow('the nested work failed');
      // and a nested transaction after it commits
      await tx.transactional(async (inner) => persistTaxCode(inner as EntityManager, env.id, 'AFTER'));
    });
    // then the outer and the later nested writes committed, the failed one's did not
    expect(await taxCodes(env, 'OUTER')).toBe(1);
    expect(await taxCodes(env, 'INNER')).toBe(0);
    expect(await taxCodes(env, 'AFTER')).toBe(1);
  });

  it('sends statements issued at once one after the other, all in its one transaction', async () => {
    // when work issues statements without waiting for each other (as a request's loaders do)
    const answers = await inEnvironment(t.orm.em.fork(), env.id, (tx) =>
      Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          runStatement(tx, 'select txid_current() as txid, pg_backend_pid() as pid, $1::int as n', [i]),
        ),
      ),
    );
    // then each was answered, in one transaction on one connection
    expect(answers.map(([row]) => row?.n)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(new Set(answers.map(([row]) => `${row?.txid}/${row?.pid}`)).size).toBe(1);
  });

  it('refuses a statement sent through it once it has ended, whose connection is back in the pool', async () => {
    // given the transaction context of work that has ended
    let context: unknown;
    await inEnvironment(t.orm.em.fork(), env.id, async (tx) => {
      context = tx.getTransactionContext();
    });
    // when something kept it and sends a statement through it
    const late = (context as { executeQuery(query: CompiledQuery): Promise<unknown> }).executeQuery(
      CompiledQuery.raw('select 1'),
    );
    // then it is refused, never sent on a connection another transaction may hold by now
    await expect(late).rejects.toThrow('the transaction has ended');
  });
});
