import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { ServiceContext } from '../../context.ts';
import { newId } from '../../db/ids.ts';
import { DomainError } from '../../errors.ts';
import { type EmailSettings, EmailSettingsSchema } from './email.entity.ts';
import { DEFAULT_TEMPLATES, type EmailTemplates, templateIssues } from './email.templates.ts';

/** Reminders every 7 days after the due date, 3 at most, until the invoice is settled. */
export const DEFAULT_REMINDERS = { reminderIntervalDays: 7, maxReminders: 3 };

const template = z.string().trim().min(1).max(10_000);

/** The settings an environment may change; those left out stay as they are. */
export const EmailSettingsUpdateInput = z.strictObject({
  senderName: z.string().trim().min(1).max(250).nullish(),
  replyTo: z.email().max(320).nullish(),
  invoiceSubject: template.max(250).optional(),
  invoiceBody: template.optional(),
  reminderSubject: template.max(250).optional(),
  reminderBody: template.optional(),
  reminderIntervalDays: z.number().int().min(0).max(365).optional(),
  maxReminders: z.number().int().min(0).max(50).optional(),
});
export type EmailSettingsUpdateInput = z.infer<typeof EmailSettingsUpdateInput>;

/** An environment's settings as they apply: its own row, or the defaults until it has one. */
export async function effectiveEmailSettings(
  em: EntityManager,
  environmentId: string,
): Promise<EmailSettings> {
  const stored = await em.findOne(EmailSettingsSchema, { environmentId });
  return stored ?? defaults(environmentId);
}

function defaults(environmentId: string): EmailSettings {
  return {
    id: '',
    environmentId,
    senderName: null,
    replyTo: null,
    ...DEFAULT_TEMPLATES,
    ...DEFAULT_REMINDERS,
    updatedAt: null,
  } as EmailSettings;
}

/** The environment's invoice e-mail settings: read, and changed with every template checked. */
export class EmailSettingsService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  get(): Promise<EmailSettings> {
    return effectiveEmailSettings(this.ctx.em, this.ctx.environmentId);
  }

  async update(input: EmailSettingsUpdateInput): Promise<EmailSettings> {
    const templates = (Object.keys(DEFAULT_TEMPLATES) as (keyof EmailTemplates)[]).flatMap((key) => {
      const text = input[key];
      return text === undefined ? [] : templateIssues(text, [key]);
    });
    if (templates.length > 0) throw DomainError.invalidInput(templates);
    const { em, environmentId } = this.ctx;
    // One row per environment: two first updates at once must not both insert it.
    await em.execute(
      `insert into email_settings (id, environment_id, invoice_subject, invoice_body, reminder_subject,
         reminder_body, reminder_interval_days, max_reminders)
       values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (environment_id) do nothing`,
      [
        newId(),
        environmentId,
        DEFAULT_TEMPLATES.invoiceSubject,
        DEFAULT_TEMPLATES.invoiceBody,
        DEFAULT_TEMPLATES.reminderSubject,
        DEFAULT_TEMPLATES.reminderBody,
        DEFAULT_REMINDERS.reminderIntervalDays,
        DEFAULT_REMINDERS.maxReminders,
      ],
      'run',
    );
    const settings = await em.findOneOrFail(
      EmailSettingsSchema,
      { environmentId },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    for (const [key, value] of Object.entries(input)) {
      if (value !== undefined) (settings as Record<string, unknown>)[key] = value;
    }
    settings.updatedAt = new Date();
    await em.flush();
    return settings;
  }
}
