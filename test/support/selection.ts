import {
  type GraphQLNamedType,
  type GraphQLObjectType,
  getNamedType,
  isLeafType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { schema } from '../../src/graphql/schema.ts';

/**
 * A selection of every field of `type` that takes no required argument, nested objects `depth` levels
 * deep (leaves only below): what a client may ask of it.
 */
export function everything(type: GraphQLNamedType, depth: number): string {
  if (!isObjectType(type)) return '';
  const parts: string[] = [];
  for (const field of Object.values((type as GraphQLObjectType).getFields())) {
    if (field.args.some((arg) => isNonNullType(arg.type) && arg.defaultValue === undefined)) continue;
    const named = getNamedType(field.type);
    if (isLeafType(named)) parts.push(field.name);
    else if (depth > 0) {
      const inner = everything(named, depth - 1);
      if (inner) parts.push(`${field.name} { ${inner} }`);
    }
  }
  return parts.join(' ');
}

/** The schema's object type `name`. */
export const objectType = (name: string) => schema.getType(name) as GraphQLObjectType;

/** `field` of `type` as a client would select it: a leaf as it is, an object with everything below it. */
export function select(type: GraphQLObjectType, field: string): string {
  const named = getNamedType(type.getFields()[field]?.type);
  if (!named) throw new Error(`${type.name} has no ${field}`);
  return isLeafType(named) ? field : `${field} { ${everything(named, 1)} }`;
}
