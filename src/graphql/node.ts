import { validate as isUuid } from 'uuid';
import type { RequestContext } from '../context.ts';
import { MAX_PAGE_SIZE } from '../db/pagination.ts';
import { DomainError } from '../errors.ts';
import { builder } from './builder.ts';

type NodeLoader = (ctx: RequestContext, id: string) => Promise<object | null>;

/** The loader of each object type implementing Node, by type name. */
const loaders = new Map<string, NodeLoader>();
/** The type name of each object `node`/`nodes` answered (the rows are plain objects). */
const typenames = new WeakMap<object, string>();

export const NodeRef = builder.interfaceRef<{ id: string }>('Node').implement({
  description:
    'An object refetchable by its id alone (`node`, `nodes`), as Relay and normalized caches expect. Its id ' +
    'is the UUID the REST face uses too: ids are unique across all types, so no type prefix is needed.',
  resolveType: (value) => typenames.get(value) ?? null,
  fields: (t) => ({
    id: t.exposeID('id', { description: 'A UUID, unique across every type (the REST id, too).' }),
  }),
});

/** Makes `typename`'s objects reachable through `node`/`nodes`, read by `load` (null: not in this environment). */
export function nodeType(typename: string, load: NodeLoader): void {
  loaders.set(typename, load);
}

/**
 * The object of this environment with this id, whatever its type, or null. Each type's per-request
 * loader is asked (they batch, so `nodes` costs one query per type); row-level security and the
 * loaders' environment filter make an id of another environment null, like an unknown one.
 */
async function findNode(ctx: RequestContext, raw: string): Promise<object | null> {
  if (!isUuid(raw)) return null;
  const id = raw.toLowerCase();
  const found = await Promise.all(
    [...loaders].map(async ([typename, load]) => {
      const value = await load(ctx, id);
      if (value) typenames.set(value, typename);
      return value;
    }),
  );
  return found.find((value) => value !== null) ?? null;
}

builder.queryFields((t) => ({
  node: t.field({
    type: NodeRef,
    nullable: true,
    description: 'The object with this id (any Node type); null when this environment has none.',
    args: { id: t.arg.id({ required: true, description: 'A Node id (a UUID).' }) },
    resolve: (_root, { id }, ctx) => findNode(ctx, String(id)) as Promise<{ id: string } | null>,
  }),
  nodes: t.field({
    type: [NodeRef],
    nullable: { list: false, items: true },
    description: `The objects with these ids, in their order; null for each this environment has none of. At most ${MAX_PAGE_SIZE} ids.`,
    args: { ids: t.arg.idList({ required: true, description: 'Node ids (UUIDs).' }) },
    resolve: (_root, { ids }, ctx) => {
      if (ids.length > MAX_PAGE_SIZE) {
        throw DomainError.onField('INVALID_INPUT', ['ids'], `must hold at most ${MAX_PAGE_SIZE} ids`);
      }
      return Promise.all(ids.map((id) => findNode(ctx, String(id)))) as Promise<({ id: string } | null)[]>;
    },
  }),
}));
