/**
 * Checks of the seller's payment and logo data that a format alone cannot express: the IBAN's
 * ISO 13616 checksum, and that a logo is the PNG or JPEG image it claims to be.
 */

/** Spaces people type into IBANs; the stored value is without them, in capitals. */
export const normalizeIban = (value: string): string => value.replace(/\s/g, '').toUpperCase();

/** Why `iban` (normalized) is not a valid IBAN, or undefined when it is. */
export function ibanProblem(iban: string): string | undefined {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) {
    return 'is not an IBAN: a country code, 2 check digits and up to 30 letters or digits';
  }
  // ISO 13616: move the first four characters to the end, letters to 10..35, the number mod 97 is 1.
  const digits = [...(iban.slice(4) + iban.slice(0, 4))]
    .map((char) => (char >= 'A' ? String(char.charCodeAt(0) - 55) : char))
    .join('');
  let remainder = 0;
  for (const digit of digits) remainder = (remainder * 10 + Number(digit)) % 97;
  return remainder === 1 ? undefined : 'has wrong check digits: it is not a valid IBAN';
}

/** ISO 9362: bank (4 letters), country (2 letters), location (2), optional branch (3). */
export const BIC_FORMAT = /^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/;

/** The largest logo accepted, in bytes of the image. */
export const MAX_LOGO_BYTES = 256 * 1024;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export type LogoImage = { mediaType: 'image/png' | 'image/jpeg'; bytes: Buffer };

/** The logo's bytes and type, or why they are refused. */
export function decodeLogo(base64: string): LogoImage | string {
  const text = base64.replace(/^data:image\/(png|jpeg);base64,/, '').replace(/\s/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return 'is not base64';
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length === 0) return 'is empty';
  if (bytes.length > MAX_LOGO_BYTES) return `is larger than ${MAX_LOGO_BYTES / 1024} KiB`;
  if (PNG_SIGNATURE.every((byte, i) => bytes[i] === byte)) {
    // The first chunk of a PNG is its header, IHDR, with a non-zero width and height.
    const header = bytes.subarray(12, 16).toString('latin1');
    if (
      header !== 'IHDR' ||
      bytes.length < 33 ||
      bytes.readUInt32BE(16) === 0 ||
      bytes.readUInt32BE(20) === 0
    ) {
      return 'is not a readable PNG image';
    }
    return { mediaType: 'image/png', bytes };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    if (bytes[bytes.length - 2] !== 0xff || bytes[bytes.length - 1] !== 0xd9)
      return 'is not a complete JPEG image';
    return { mediaType: 'image/jpeg', bytes };
  }
  return 'must be a PNG or JPEG image';
}
