import type { SchemaTypes } from './builder.ts';

/** The properties of `Shape` that hold a decimal column's exact text (MikroORM `decimal('string')`). */
type DecimalProperty<Shape> = {
  [Name in keyof Shape]: Shape[Name] extends string | null | undefined ? Name : never;
}[keyof Shape] &
  string;

/**
 * A decimal column's text exposed as a GraphQL Float, with no resolver of its own: Float's serialiser
 * reads numeric text as `Number(text)` (graphql-js `serializeFloat`), the answer a resolver
 * `(row) => Number(row.quantity)` gives, and a null stays null. Without a resolver, graphql-jit reads
 * the property inline; with one it builds an args object, a resolve info and the response path for
 * every value (three such fields of an invoice line were 46 of the 117 MiB the heaviest document the
 * limits allow allocated: bench/PROFILE.md, Round 6). Pothos records the exposed property as it does for
 * `t.expose…`, so the page's read still knows the column is read (columns.ts).
 */
export function exposeDecimal<Shape, Name extends DecimalProperty<Shape>>(
  t: PothosSchemaTypes.ObjectFieldBuilder<SchemaTypes, Shape>,
  property: Name,
  options: { description: string; nullable?: boolean },
) {
  // Pothos types a Float field's value as a number; the text is what Float's serialiser is given.
  const exposeFloat = t.expose as unknown as (
    this: typeof t,
    name: Name,
    fieldOptions: { type: 'Float'; description: string; nullable: boolean },
  ) => ReturnType<typeof t.float>;
  return exposeFloat.call(t, property, { type: 'Float', nullable: false, ...options });
}
