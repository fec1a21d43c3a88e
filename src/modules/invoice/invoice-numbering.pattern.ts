import { DomainError } from '../../errors.ts';

/**
 * Number patterns: literal text (letters, digits and . _ / -) and the tokens {YYYY}, {YY} and {MM}
 * of the invoice date and {SEQ:n}, the sequence padded with zeros to n digits (1 to 12). Every
 * pattern has exactly one {SEQ}.
 */
export type NumberPattern = string;

/** The longest a pattern may render (with {SEQ:n} at n digits); a handle holds 40 characters. */
export const MAX_RENDERED_LENGTH = 30;
export const MAX_PATTERN_LENGTH = 60;

const NUMBER_DIGITS = 6;
const LITERAL = /^[A-Za-z0-9._/-]*$/;
const PART = /\{([^{}]*)\}|([^{}]+)|([{}])/g;
const SEQ = /^SEQ(?::(\d{1,2}))?$/;
const WIDTHS: Record<string, number> = { YYYY: 4, YY: 2, MM: 2 };

type Part = { literal: string } | { token: 'YYYY' | 'YY' | 'MM' } | { seq: number };

/** The pattern equivalent to a prefix, the format from before patterns: INV- gives INV-{SEQ:6}. */
export const prefixPattern = (prefix: string): NumberPattern => `${prefix}{SEQ:${NUMBER_DIGITS}}`;

/** Splits a pattern into its parts, or throws a coded error on `field` naming what is wrong. */
export function parsePattern(pattern: string, field: string[] = ['pattern']): Part[] {
  const refuse = (
    code: 'INVALID_INPUT' | 'UNKNOWN_TOKEN' | 'MISSING_SEQUENCE' | 'PATTERN_TOO_LONG',
    message: string,
  ) => DomainError.onField(code, field, message);
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw refuse('PATTERN_TOO_LONG', `a pattern has at most ${MAX_PATTERN_LENGTH} characters`);
  }
  const parts: Part[] = [];
  for (const [, token, literal, stray] of pattern.matchAll(PART)) {
    if (stray !== undefined) throw refuse('UNKNOWN_TOKEN', `a "${stray}" that opens or closes no token`);
    if (literal !== undefined) {
      if (!LITERAL.test(literal)) {
        throw refuse('INVALID_INPUT', 'the text around the tokens may hold letters, digits and . _ / - only');
      }
      parts.push({ literal });
      continue;
    }
    const name = token ?? '';
    const seq = SEQ.exec(name);
    if (seq) {
      const width = seq[1] === undefined ? 1 : Number(seq[1]);
      if (width < 1 || width > 12) throw refuse('INVALID_INPUT', '{SEQ:n} pads to 1 to 12 digits');
      parts.push({ seq: width });
    } else if (name === 'YYYY' || name === 'YY' || name === 'MM') {
      parts.push({ token: name });
    } else {
      throw refuse('UNKNOWN_TOKEN', `unknown token {${name}}; the tokens are {YYYY}, {YY}, {MM} and {SEQ:n}`);
    }
  }
  const sequences = parts.filter((part) => 'seq' in part).length;
  if (sequences === 0) throw refuse('MISSING_SEQUENCE', 'a pattern needs the sequence token {SEQ:n}');
  if (sequences > 1) throw refuse('INVALID_INPUT', 'a pattern has one {SEQ:n} only');
  const rendered = parts.reduce(
    (sum, part) =>
      sum + ('literal' in part ? part.literal.length : 'seq' in part ? part.seq : (WIDTHS[part.token] ?? 0)),
    0,
  );
  if (rendered > MAX_RENDERED_LENGTH) {
    throw refuse('PATTERN_TOO_LONG', `a pattern renders at most ${MAX_RENDERED_LENGTH} characters`);
  }
  return parts;
}

/** Whether numbers of the pattern name their year, as they must when the sequence resets yearly. */
export const namesYear = (pattern: NumberPattern): boolean =>
  parsePattern(pattern).some((part) => 'token' in part && part.token !== 'MM');

/** The number `sequence` of a pattern for an invoice dated `date` (YYYY-MM-DD). */
export function renderPattern(pattern: NumberPattern, date: string, sequence: number): string {
  const [year = '', month = ''] = date.split('-');
  return parsePattern(pattern)
    .map((part) => {
      if ('literal' in part) return part.literal;
      if ('seq' in part) return String(sequence).padStart(part.seq, '0');
      if (part.token === 'YYYY') return year;
      if (part.token === 'YY') return year.slice(-2);
      return month;
    })
    .join('');
}
