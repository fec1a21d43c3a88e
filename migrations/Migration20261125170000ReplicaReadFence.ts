import { Migration } from '@mikro-orm/migrations';

/**
 * Read-your-writes with read replicas: one row per API token holding the primary's WAL position
 * (pg_current_wal_lsn) read just after the token's latest write committed. A read by that token goes
 * to a replica only once the replica has replayed past it (src/db/replica.ts). No environment_id and
 * no policy, like rate_limit_counter: the row names a token and a WAL position, no tenant data.
 */
export class Migration20261125170000ReplicaReadFence extends Migration {
  override up(): void {
    this.addSql(`
      create table replica_read_fence (
        token_id uuid primary key references api_token (id) on delete cascade,
        lsn pg_lsn not null
      );
      grant select, insert, update on replica_read_fence to billing_app;
    `);
  }

  override down(): void {
    this.addSql('drop table replica_read_fence;');
  }
}
