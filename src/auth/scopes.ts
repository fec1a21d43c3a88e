import { DomainError } from '../errors.ts';
import type { ApiToken, TokenScope } from './api-token.entity.ts';

/** Whether `token` may do what `scope` allows; `write` includes `read`. */
export const grantsScope = (token: Pick<ApiToken, 'scope'>, scope: TokenScope): boolean =>
  scope === 'read' || token.scope === 'write';

/** The refusal of `action` to a token without `scope`: 403 on REST, FORBIDDEN in GraphQL. */
export function missingScope(token: Pick<ApiToken, 'scope'>, scope: TokenScope, action: string): DomainError {
  return new DomainError(
    'FORBIDDEN',
    `${action} needs an API token with the ${scope} scope; this token has the ${token.scope} scope.`,
  );
}
