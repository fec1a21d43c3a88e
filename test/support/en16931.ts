import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The official EN 16931 business rules (CEN/TC 434's Schematron compiled to XSLT, beside the shared
 * `validate` script) run by Saxon-HE from Debian. `validate` checks one file per Java start, which
 * costs seconds of CPU; this runs Saxon once per syntax over a folder of documents instead.
 */
const RULES_DIR =
  process.env.EN16931_RULES ??
  ['../shared/en16931', '../../shared/en16931']
    .map((candidate) => path.resolve(candidate))
    .find((candidate) => existsSync(path.join(candidate, 'EN16931-CII-validation.xslt'))) ??
  path.resolve('../shared/en16931');
const SAXON = process.env.SAXON_JAR ?? '/usr/share/java/Saxon-HE.jar';

/** Java, Saxon and the rules are here; without them validation is skipped locally, and in CI it must run. */
export const canValidate =
  existsSync(SAXON) && existsSync(path.join(RULES_DIR, 'EN16931-UBL-validation.xslt'));

/** One failed rule: its flag (fatal or warning), id and message. */
export type RuleFailure = { flag: string; id: string; text: string };

const SYNTAXES = {
  cii: 'EN16931-CII-validation.xslt',
  ubl: 'EN16931-UBL-validation.xslt',
} as const;

/**
 * Validates every document (name → XML) against the rules of its syntax and answers the failed
 * rules of each, by name. A document with no fatal failure passes, as with the `validate` script.
 */
export async function validateEn16931(
  documents: Record<string, string>,
): Promise<Record<string, RuleFailure[]>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'en16931-'));
  try {
    const runs = Object.entries(SYNTAXES).map(async ([syntax, xslt]) => {
      const names = Object.keys(documents).filter(
        (name) => (documents[name]?.includes('CrossIndustryInvoice') ? 'cii' : 'ubl') === syntax,
      );
      if (names.length === 0) return {};
      const input = path.join(dir, `${syntax}-in`);
      const output = path.join(dir, `${syntax}-out`);
      mkdirSync(input);
      mkdirSync(output);
      for (const name of names) writeFileSync(path.join(input, `${name}.xml`), documents[name] as string);
      await promisify(execFile)(
        'java',
        ['-jar', SAXON, `-s:${input}`, `-xsl:${path.join(RULES_DIR, xslt)}`, `-o:${output}`],
        { timeout: 180_000 },
      );
      return Object.fromEntries(
        names.map((name) => [name, failures(readFileSync(path.join(output, `${name}.xml`), 'utf8'))]),
      );
    });
    return Object.assign({}, ...(await Promise.all(runs)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The failed assertions of an SVRL report. */
function failures(svrl: string): RuleFailure[] {
  return [...svrl.matchAll(/<svrl:failed-assert\b([^>]*)>([\s\S]*?)<\/svrl:failed-assert>/g)].map((match) => {
    const attributes = match[1] as string;
    const text = /<svrl:text>([\s\S]*?)<\/svrl:text>/.exec(match[2] as string)?.[1] ?? '';
    return {
      flag: /\bflag="([^"]*)"/.exec(attributes)?.[1] ?? 'fatal',
      id: /\bid="([^"]*)"/.exec(attributes)?.[1] ?? '',
      text: text.replace(/\s+/g, ' ').trim(),
    };
  });
}

/** The fatal failures only: what makes a document fail the rules. */
export const fatal = (found: RuleFailure[] | undefined): RuleFailure[] =>
  (found ?? []).filter((failure) => failure.flag === 'fatal');
