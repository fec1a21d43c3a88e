import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';

/**
 * Makes every root mutation field nullable. Each root field runs and commits on its own
 * (tenant-transaction.plugin.ts), so one that fails must answer null for itself alone: a non-null
 * field would null the whole `data`, hiding what the other fields committed.
 */
class NullableMutationsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onOutputFieldConfig(fieldConfig: PothosOutputFieldConfig<Types>): PothosOutputFieldConfig<Types> {
    if (fieldConfig.kind !== 'Mutation') return fieldConfig;
    return { ...fieldConfig, type: { ...fieldConfig.type, nullable: true } };
  }
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      nullableMutations: NullableMutationsPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin('nullableMutations', NullableMutationsPlugin);

export const NullableMutations = 'nullableMutations' as const;
