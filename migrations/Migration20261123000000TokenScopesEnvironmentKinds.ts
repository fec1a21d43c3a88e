import { Migration } from '@mikro-orm/migrations';

/**
 * Environments are `live` or `test` (only test environments may bill a moment later than now), and API
 * tokens carry a scope: `read` (queries and GET) or `write` (everything). Existing rows keep what they
 * could do: environments become live and tokens write.
 */
export class Migration20261123000000TokenScopesEnvironmentKinds extends Migration {
  override up(): void {
    this.addSql(`
      alter table environment add column kind text not null default 'live' check (kind in ('live', 'test'));
      alter table api_token add column scope text not null default 'write' check (scope in ('read', 'write'));
    `);
  }

  override down(): void {
    this.addSql(`
      alter table api_token drop column scope;
      alter table environment drop column kind;
    `);
  }
}
