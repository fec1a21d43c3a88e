import {
  type GraphQLNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isUnionType,
} from 'graphql';
import { expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';

const described = (text: string | null | undefined) => (text ?? '').trim().length > 0;

/** Every type, field, argument, input field and enum value of our own types that has no description. */
function undescribed(): string[] {
  const missing: string[] = [];
  const types = Object.values(schema.getTypeMap()).filter(
    (type: GraphQLNamedType) => !type.name.startsWith('__'),
  );
  for (const type of types) {
    // The five built-in scalars come with graphql-js and carry its descriptions.
    if (!described(type.description)) missing.push(type.name);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (!described(field.description)) missing.push(`${type.name}.${field.name}`);
        for (const arg of field.args) {
          if (!described(arg.description)) missing.push(`${type.name}.${field.name}(${arg.name})`);
        }
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (!described(field.description)) missing.push(`${type.name}.${field.name}`);
      }
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) {
        if (!described(value.description)) missing.push(`${type.name}.${value.name}`);
      }
    } else if (isUnionType(type)) {
      // A union has no fields of its own: its description is counted above.
    }
  }
  return missing;
}

it('every type, field, argument and enum value has a description', () => {
  expect(undescribed(), 'describe these in their Pothos definitions').toEqual([]);
});

it('the count covers the whole schema (a sanity check that the walk reaches fields and values)', () => {
  const types = Object.values(schema.getTypeMap()).filter((type) => !type.name.startsWith('__'));
  const fields = types.flatMap((type) =>
    isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)
      ? Object.values(type.getFields())
      : [],
  );
  const values = types.flatMap((type) => (isEnumType(type) ? type.getValues() : []));
  expect(types.length).toBeGreaterThan(100);
  expect(fields.length).toBeGreaterThan(500);
  expect(values.length).toBeGreaterThan(50);
});
