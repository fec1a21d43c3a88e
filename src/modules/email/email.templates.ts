import Mustache from 'mustache';
import type { FieldIssue } from '../../errors.ts';

/** What a subject or body may name, each as `{{name}}`. */
export const TEMPLATE_PLACEHOLDERS = {
  documentType: 'invoice or credit note',
  number: 'the document number, e.g. INV-000042',
  customerName: 'the customer’s name as the document shows it',
  companyName: 'the customer’s company name (empty when it has none)',
  sellerName: 'who issues the document (the environment’s name)',
  date: 'the issue date, YYYY-MM-DD',
  dueDate: 'the due date, YYYY-MM-DD (empty when there is none)',
  total: 'the total including tax, with its currency',
  totalDue: 'what is still due, with its currency',
  daysOverdue: 'whole days since the due date (reminders)',
  reminderNumber: '1 for the first reminder, 2 for the second, …',
} as const;

export type TemplateValues = Record<keyof typeof TEMPLATE_PLACEHOLDERS, string>;

export type EmailTemplates = {
  invoiceSubject: string;
  invoiceBody: string;
  reminderSubject: string;
  reminderBody: string;
};

/** What a new environment sends until it sets its own wording. */
export const DEFAULT_TEMPLATES: EmailTemplates = {
  invoiceSubject: 'Your {{documentType}} {{number}} from {{sellerName}}',
  invoiceBody: [
    'Hello {{customerName}},',
    '',
    'please find attached {{documentType}} {{number}} of {{date}} for {{total}}.',
    'Amount due: {{totalDue}}, by {{dueDate}}.',
    '',
    'Kind regards,',
    '{{sellerName}}',
  ].join('\n'),
  reminderSubject: 'Reminder: {{documentType}} {{number}} is {{daysOverdue}} days overdue',
  reminderBody: [
    'Hello {{customerName}},',
    '',
    'our records show {{totalDue}} still due on {{documentType}} {{number}}, which was due on {{dueDate}}.',
    'The invoice is attached again. If you have paid in the meantime, please ignore this message.',
    '',
    'Kind regards,',
    '{{sellerName}}',
  ].join('\n'),
};

/**
 * The problems of one template: it must parse, and name only known placeholders (`{{name}}`;
 * sections and partials have nothing to iterate here). `path` is the input field it came from.
 */
export function templateIssues(template: string, path: string[]): FieldIssue[] {
  let tokens: unknown[];
  try {
    tokens = Mustache.parse(template);
  } catch (error) {
    return [{ path, message: `is not a valid template: ${(error as Error).message}` }];
  }
  const issues: FieldIssue[] = [];
  for (const token of tokens as [string, string][]) {
    const [kind, name] = token;
    if (kind === 'text' || kind === '!') continue;
    if (kind !== 'name' && kind !== '&') {
      issues.push({ path, message: `may only hold placeholders such as {{number}}, not {{${kind}${name}}}` });
    } else if (!(name in TEMPLATE_PLACEHOLDERS)) {
      const known = Object.keys(TEMPLATE_PLACEHOLDERS).join(', ');
      issues.push({ path, message: `names the unknown placeholder {{${name}}}; known: ${known}` });
    }
  }
  return issues;
}

/** Fills a template for a plain-text message: values go in as they are, nothing HTML-escaped. */
export function fillTemplate(template: string, values: TemplateValues): string {
  return Mustache.render(template, values, {}, { escape: (value: string) => value });
}
