import { AccessService } from '../../auth/access.service.ts';
import { ENVIRONMENT_KINDS, type Environment } from '../../auth/environment.entity.ts';
import { builder } from '../../graphql/builder.ts';

const EnvironmentKindEnum = builder.enumType('EnvironmentKind', {
  values: ENVIRONMENT_KINDS,
  description:
    'live: bills the present only; test: may bill any moment (simulated time). Chosen when the ' +
    'environment is created (CLI `env create --test`).',
});

const EnvironmentRef = builder.objectRef<Environment>('Environment').implement({
  description: 'The tenant a request acts in: every object belongs to exactly one.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    kind: t.expose('kind', { type: EnvironmentKindEnum }),
    timezone: t.exposeString('timezone', {
      description:
        'IANA time zone new customers get when they name none (CLI `env create --timezone`; default UTC).',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.queryFields((t) => ({
  environment: t.field({
    type: EnvironmentRef,
    description: 'The environment this request acts in (its `x-environment` header).',
    resolve: (_root, _args, ctx) => new AccessService(ctx.em).environment(ctx.environmentId),
  }),
}));
