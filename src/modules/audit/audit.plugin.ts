import { Kind } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { setAuditContext } from '../../audit/audit.context.ts';
import type { RequestContext } from '../../context.ts';
import { operationOf } from '../../graphql/operation.ts';

/** Names the audit operation of a GraphQL mutation after its root fields (`customerCreate`). */
export function useAuditOperation(): Plugin<RequestContext> {
  return {
    onExecute({ args }) {
      const operation = operationOf(args.document, args.operationName);
      if (operation?.operation !== 'mutation') return;
      const fields = operation.selectionSet.selections.flatMap((selection) =>
        selection.kind === Kind.FIELD ? [selection.name.value] : [],
      );
      setAuditContext(args.contextValue.em, { operation: [...new Set(fields)].join(' ') });
    },
  };
}
