import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { extractText, getDocumentProxy } from 'unpdf';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXECUTION_LIMITS } from '../../src/config.ts';
import { ContractChecker } from '../support/contract.ts';
import { expectProblem, setupTestApp, type TestEnvironment, type TestResponse } from '../support/harness.ts';
import { invoiceFixtures } from './fixtures.ts';

// A 5,000-line render may outlast the 10 s request deadline on a loaded machine; what these tests check
// is the document and that rendering leaves the event loop free, not the deadline (test/limits covers it).
const t = setupTestApp({ executionLimits: { ...EXECUTION_LIMITS, timeoutMs: 120_000 } });
const f = invoiceFixtures(t);

const BOOK = `mutation ($id: UUID!) { invoiceBook(id: $id) { invoice { handle } userErrors { message } } }`;
const SETTLE = `mutation ($id: UUID!, $input: InvoiceSettleInput!) {
  invoiceSettle(id: $id, input: $input) { userErrors { message } } }`;
const CREDIT = `mutation ($invoiceId: UUID!) {
  creditNoteCreate(invoiceId: $invoiceId) { creditNote { id } userErrors { message } } }`;
const RENAME = `mutation ($id: UUID!, $input: CustomerUpdateInput!) {
  customerUpdate(id: $id, input: $input) { userErrors { message } } }`;

/** Set UPDATE_SCREENSHOTS=1 to refresh the README's picture of an invoice (needs poppler's pdftoppm). */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve('docs/images') : undefined;

/** The top of the first page as a PNG: the part with every block, without the empty rest of the page. */
function savePicture(bytes: Uint8Array, file: string): void {
  const dir = mkdtempSync(path.join(tmpdir(), 'invoice-pdf-'));
  try {
    writeFileSync(path.join(dir, 'invoice.pdf'), bytes);
    const crop = ['-x', '0', '-y', '0', '-W', '910', '-H', '700'];
    execFileSync(
      'pdftoppm',
      ['-png', '-r', '110', '-f', '1', '-singlefile', ...crop, 'invoice.pdf', 'page'],
      {
        cwd: dir,
      },
    );
    writeFileSync(file, readFileSync(path.join(dir, 'page.png')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The text of each page, one line per row of text as pdf.js reads it. */
async function pdfPages(bytes: Uint8Array): Promise<string[]> {
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  return (await extractText(pdf, { mergePages: false })).text;
}

describe('GET /invoices/{invoiceId} as a PDF', () => {
  let env: TestEnvironment;

  const getPdf = async (id: string): Promise<TestResponse<Uint8Array>> => {
    const response = await t.rest('GET', `/invoices/${id}`, { env, headers: { accept: 'application/pdf' } });
    expect(response.status, String(response.body)).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    return response;
  };

  const book = async (id: string): Promise<string> => {
    const { invoiceBook } = await f.gql(env, BOOK, { id });
    expect(invoiceBook.userErrors).toEqual([]);
    return invoiceBook.invoice.handle;
  };

  beforeAll(async () => {
    env = await t.createEnvironment('Nordlicht Software GmbH');
    await f.createTaxCode(env, 'VAT25', '25');
    await f.createTaxCode(env, 'VAT7.5', '7.5');
    await f.createTaxCode(env, 'JP10', '10');
    await f.createTaxCode(env, 'JP8', '8');
  });

  it('prints a booked multi-rate invoice: number, parties, lines, VAT per rate, totals and due date', async () => {
    // given a booked EUR invoice with lines at 25 %, 7.5 % and without VAT, partly settled
    const customerId = await f.createCustomer(env, {
      name: 'Łukasz Żółć Sp. z o.o.',
      handle: 'zolc',
      currency: 'EUR',
      paymentTerm: 'net14',
      billingAddress: { street1: 'ul. Długa 5', postalCode: '00-238', city: 'Warszawa', country: 'PL' },
    });
    const invoice = await f.createInvoice(env, {
      customerId,
      memo: 'Thank you for your business.',
      items: [
        {
          title: 'Consulting',
          description: 'Architecture review',
          quantity: 10,
          unitAmount: 12000,
          taxCode: 'VAT25',
          periodStart: '2026-03-01',
          periodEnd: '2026-03-31',
        },
        { title: 'Books', quantity: 3, unitAmount: 1999, taxCode: 'VAT7.5', discount: { percentage: 10 } },
        { title: 'API calls', quantity: 12345, unitAmount: 0.25 },
        {
          title: 'Support hour',
          quantity: 1.5,
          unitAmount: 8000,
          taxCode: 'VAT25',
          discount: { amount: 500 },
        },
      ],
    });
    const handle = await book(invoice.id);
    const { invoiceSettle } = await f.gql(env, SETTLE, {
      id: invoice.id,
      input: { date: '2026-03-10', amount: 100000, reference: 'bank' },
    });
    expect(invoiceSettle.userErrors).toEqual([]);
    // and the customer renamed after booking
    expect(
      (await f.gql(env, RENAME, { id: customerId, input: { name: 'Renamed Ltd' } })).customerUpdate,
    ).toEqual({
      userErrors: [],
    });

    // when
    const response = await getPdf(invoice.id);
    const pages = await pdfPages(response.body);

    // then
    expect(handle).toBe('INV-000001');
    expect(response.headers.get('content-disposition')).toBe('inline; filename="INV-000001.pdf"');
    expect(response.headers.get('vary')).toBe('accept');
    expect(pages).toHaveLength(1);
    const lines = (pages[0] as string).split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        'Nordlicht Software GmbH Invoice',
        'Invoice number INV-000001',
        'Date 2026-03-01',
        'Due date 2026-03-15',
        'Currency EUR',
        'Łukasz Żółć Sp. z o.o.',
        'Customer no. zolc',
        'ul. Długa 5',
        '00-238 Warszawa',
        'Thank you for your business.',
        'Item Qty Unit price Discount VAT Amount (EUR)',
        'Consulting',
        'Architecture review',
        // the period's end is the first day not covered; the document names the last day covered
        '2026-03-01 – 2026-03-30',
        '10 120.00 25% 1,200.00',
        'Books 3 19.99 10% 7.5% 53.97',
        'API calls 12,345 0.0025 – 30.86',
        'Support hour 1.5 80.00 5.00 25% 115.00',
        'Rate Net (EUR) VAT (EUR)',
        '7.5% 53.97 4.05',
        '25% 1,315.00 328.75',
        'Not taxable 30.86 0.00',
        'Total excl. VAT €1,399.83',
        'VAT €332.80',
        'Total incl. VAT €1,732.63',
        'Settled €1,000.00',
        'Amount due €732.63',
        'Nordlicht Software GmbH · Invoice INV-000001 Page 1 of 1',
      ]),
    );
    expect(pages[0]).not.toContain('Renamed Ltd');
    expect(pages[0]).not.toContain('DRAFT');
    if (SCREENSHOTS) savePicture(response.body, path.join(SCREENSHOTS, 'invoice.png'));
  });

  it('prints a JPY draft as DRAFT with the live customer and amounts in whole yen', async () => {
    // given a JPY draft at 10 % and 8 %, its customer renamed afterwards
    const customerId = await f.createCustomer(env, { name: 'Sakura Trading', currency: 'JPY' });
    const invoice = await f.createInvoice(env, {
      customerId,
      dueDate: '2026-03-31',
      items: [
        { title: 'Tea set', quantity: 3, unitAmount: 1500, taxCode: 'JP10' },
        { title: 'Rice crackers', quantity: 1, unitAmount: 980, taxCode: 'JP8' },
      ],
    });
    await f.gql(env, RENAME, { id: customerId, input: { name: 'Sakura Trading KK' } });

    // when
    const response = await getPdf(invoice.id);
    const pages = await pdfPages(response.body);

    // then
    expect(response.headers.get('content-disposition')).toBe(`inline; filename="draft-${invoice.id}.pdf"`);
    const lines = (pages[0] as string).split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        'Invoice number DRAFT',
        'Due date 2026-03-31',
        'Currency JPY',
        'Sakura Trading KK',
        'Item Qty Unit price Discount VAT Amount (JPY)',
        'Tea set 3 1,500 10% 4,500',
        'Rice crackers 1 980 8% 980',
        '8% 980 78',
        '10% 4,500 450',
        'Total excl. VAT ¥5,480',
        'VAT ¥528',
        'Total incl. VAT ¥6,008',
        'Settled ¥0',
        'Amount due ¥6,008',
        'Nordlicht Software GmbH · Invoice DRAFT Page 1 of 1',
      ]),
    );
  });

  it('prints the reverse-charge note and labels tax-inclusive groups', async () => {
    // given a reverse-charge customer's invoice, and an invoice with a tax-inclusive line
    const reverse = await f.gql(
      env,
      `mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } userErrors { message } } }`,
      {
        input: {
          name: 'Bruxelles SA',
          currency: 'EUR',
          taxIds: [{ type: 'eu_vat', value: 'BE0123456789' }],
          taxExempt: 'reverse_charge',
        },
      },
    );
    const charged = await f.createInvoice(env, {
      customerId: reverse.customerCreate.customer.id,
      items: [{ title: 'Licence', quantity: 1, unitAmount: 10000, taxCode: 'VAT25' }],
    });
    const shop = await f.gql(
      env,
      `mutation ($input: InvoiceCreateInput!) { invoiceCreate(input: $input) { invoice { id } userErrors { message } } }`,
      {
        input: {
          customerId: await f.createCustomer(env, { name: 'Eva Muster' }),
          date: '2026-03-01',
          items: [
            { title: 'Ebook', quantity: 1, unitAmount: 999, taxCode: 'VAT25', taxBehavior: 'inclusive' },
          ],
        },
      },
    );

    // when both are printed
    const [charges] = await pdfPages((await getPdf(charged.id)).body);
    const [sale] = await pdfPages((await getPdf(shop.invoiceCreate.invoice.id)).body);

    // then the note and the 0 % reverse-charge group, and the inclusive group (999 × 25 / 125 = 199.8 → 2.00)
    expect((charges as string).split('\n')).toEqual(
      expect.arrayContaining(['Licence 1 100.00 0% 100.00', '0% reverse charge 100.00 0.00']),
    );
    // the note wraps within the breakdown's column
    expect((charges as string).replace(/\s+/g, ' ')).toContain(
      'Reverse charge: VAT to be accounted for by the recipient (Article 196, Council Directive 2006/112/EC)',
    );
    expect((sale as string).split('\n')).toEqual(
      expect.arrayContaining(['25% incl. 7.99 2.00', 'Total incl. VAT €9.99']),
    );
  });

  it('prints three-decimal currencies and fractional unit amounts exactly', async () => {
    // given a KWD draft whose unit amount is a fraction of a fils
    const customerId = await f.createCustomer(env, { name: 'Gulf Supplies', currency: 'KWD' });
    const invoice = await f.createInvoice(env, {
      customerId,
      items: [{ title: 'Cable', quantity: 2, unitAmount: 1234.5675 }],
    });

    // when
    const pages = await pdfPages((await getPdf(invoice.id)).body);

    // then 2 × 1.2345675 KWD = 2.469135, rounded to 2.469
    const lines = (pages[0] as string).split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        'Cable 2 1.2345675 – 2.469',
        'Not taxable 2.469 0.000',
        'Total incl. VAT KWD 2.469',
      ]),
    );
  });

  it('prints a credit note with its number and the invoice it credits', async () => {
    // given a booked invoice credited in full by a booked credit note
    const customerId = await f.createCustomer(env, { name: 'Ada Lovelace', currency: 'EUR' });
    const invoice = await f.createInvoice(env, {
      customerId,
      items: [{ title: 'Returned goods', quantity: 2, unitAmount: 2500, taxCode: 'VAT25' }],
    });
    const invoiceHandle = await book(invoice.id);
    const { creditNoteCreate } = await f.gql(env, CREDIT, { invoiceId: invoice.id });
    const creditNoteHandle = await book(creditNoteCreate.creditNote.id);

    // when
    const response = await getPdf(creditNoteCreate.creditNote.id);
    const lines = ((await pdfPages(response.body))[0] as string).split('\n');

    // then
    expect(response.headers.get('content-disposition')).toBe(`inline; filename="${creditNoteHandle}.pdf"`);
    expect(lines).toEqual(
      expect.arrayContaining([
        'Nordlicht Software GmbH Credit note',
        `Credit note number ${creditNoteHandle}`,
        `Credits invoice ${invoiceHandle} of 2026-03-01`,
        'Returned goods 2 25.00 25% 50.00',
        'Total incl. VAT €62.50',
        'Settled €62.50',
        'Amount due €0.00',
      ]),
    );
  });

  it('continues a long line table on further pages, its head repeated, totals on the last', async () => {
    // given a draft of 60 lines
    const customerId = await f.createCustomer(env, { name: 'Long Lines Inc', currency: 'EUR' });
    const items = Array.from({ length: 60 }, (_, i) => ({
      title: `Line ${i + 1}`,
      quantity: 1,
      unitAmount: 100 * (i + 1),
      taxCode: 'VAT25',
    }));
    const invoice = await f.createInvoice(env, { customerId, items });

    // when
    const pages = await pdfPages((await getPdf(invoice.id)).body);

    // then Σ 1..60 euros = 1,830.00 and 25 % of it 457.50
    expect(pages.length).toBeGreaterThan(1);
    pages.forEach((page, i) => {
      // every page with lines repeats the head; the totals may stand on a page of their own
      if (/^Line \d+ /m.test(page)) expect(page).toContain('Item Qty Unit price Discount VAT Amount (EUR)');
      expect(page).toContain(`Page ${i + 1} of ${pages.length}`);
    });
    const rows = pages.flatMap((page) => page.split('\n').filter((line) => /^Line \d+ /.test(line)));
    expect(rows).toEqual(items.map((_, i) => `Line ${i + 1} 1 ${i + 1}.00 25% ${i + 1}.00`));
    expect(pages.at(-1)).toContain('Total excl. VAT €1,830.00');
    expect(pages.at(-1)).toContain('VAT €457.50');
    const all = pages.join('\n');
    for (const once of ['VAT breakdown', 'Total excl. VAT', 'Amount due']) {
      expect(all.split(once), once).toHaveLength(2);
    }
  });

  it('renders off the event loop: other requests are answered while a 5000-line invoice renders', async () => {
    // given a draft of 5000 lines (1000 through the API, the most one request takes, the rest copied in SQL)
    const customerId = await f.createCustomer(env, { name: 'Bulk Buyer', currency: 'EUR' });
    const items = Array.from({ length: 1000 }, (_, i) => ({
      title: `Line ${i + 1}`,
      description: 'Metered usage in the period',
      quantity: 3,
      unitAmount: 1999,
      taxCode: 'VAT25',
    }));
    const big = await f.createInvoice(env, { customerId, items });
    await t.sql(
      `insert into invoice_item (id, environment_id, invoice_id, quantity, unit_amount, title, description,
         tax_code, tax_rate, discount_percentage, discount_amount, amount, tax_amount, created_at)
       select gen_random_uuid(), environment_id, invoice_id, quantity, unit_amount, title || ' copy ' || n,
         description, tax_code, tax_rate, discount_percentage, discount_amount, amount, tax_amount, created_at
       from invoice_item, generate_series(1, 4) as n where invoice_id = $1`,
      [big.id],
    );
    const small = await f.createInvoice(env, {
      customerId,
      items: [{ title: 'X', quantity: 1, unitAmount: 1 }],
    });
    const finished: string[] = [];
    const request = (name: string, id: string, accept: string) =>
      t.rest('GET', `/invoices/${id}`, { env, headers: { accept } }).then((response) => {
        finished.push(name);
        return response;
      });

    // when the PDF is asked for, and the same invoice as JSON at once: the two read the same rows, so
    // once the JSON is answered the PDF's rows are read too and its rendering has begun
    const pdf = request('pdf', big.id, 'application/pdf');
    const json = await request('big json', big.id, 'application/json');
    // and then another invoice is read
    const other = await request('other json', small.id, 'application/json');

    // then the other read is answered before the PDF, which still comes out whole
    const { body } = await pdf;
    expect(finished).toEqual(['big json', 'other json', 'pdf']);
    expect(json.body.items).toHaveLength(5000);
    expect(other.status).toBe(200);
    const document = await getDocumentProxy(new Uint8Array(body));
    expect(document.numPages).toBeGreaterThan(100);
  }, 300_000);

  it('lets a description longer than a page flow on to the next, and the table go on after it', async () => {
    // given a line whose description is 4000 characters long, and one line after it
    const customerId = await f.createCustomer(env, { name: 'Verbose GmbH', currency: 'EUR' });
    const words = Array.from({ length: 800 }, (_, i) => `w${String(i).padStart(3, '0')}`);
    const invoice = await f.createInvoice(env, {
      customerId,
      items: [
        { title: 'Long story', description: words.join(' '), quantity: 1, unitAmount: 1000 },
        { title: 'After the story', quantity: 2, unitAmount: 300 },
      ],
    });

    // when
    const pages = await pdfPages((await getPdf(invoice.id)).body);

    // then
    expect(pages.length).toBeGreaterThan(1);
    const text = pages.join('\n');
    const positions = words.map((word) => text.indexOf(word));
    expect(positions.every((position, i) => position > (positions[i - 1] ?? -1))).toBe(true);
    expect(pages.at(-1)).toContain('After the story 2 3.00 – 6.00');
    expect(pages.at(-1)).toContain('Total incl. VAT €16.00');
  });

  describe('content negotiation', () => {
    let invoiceId: string;

    beforeAll(async () => {
      const customerId = await f.createCustomer(env, { name: 'Negotiator', currency: 'EUR' });
      invoiceId = (
        await f.createInvoice(env, { customerId, items: [{ title: 'X', quantity: 1, unitAmount: 1 }] })
      ).id;
    });

    it.each([
      [undefined, 'json'],
      ['*/*', 'json'],
      ['application/json', 'json'],
      ['application/*', 'json'],
      ['text/html, */*;q=0.1', 'json'],
      ['application/pdf;q=0.5, application/json', 'json'],
      ['application/pdf', 'pdf'],
      ['application/json;q=0.5, application/pdf', 'pdf'],
      ['application/pdf, application/json', 'pdf'],
    ])('Accept %s answers %s', async (accept, kind) => {
      // when
      const response = await t.rest('GET', `/invoices/${invoiceId}`, {
        env,
        headers: accept === undefined ? {} : { accept },
      });

      // then
      expect(response.status).toBe(200);
      expect(response.headers.get('vary')).toBe('accept');
      if (kind === 'json') {
        expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(response.body).toMatchObject({ id: invoiceId, status: 'draft' });
      } else {
        expect(response.headers.get('content-type')).toBe('application/pdf');
        expect(Buffer.from(response.body.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
      }
    });

    it('answers 406 when Accept allows neither JSON nor PDF', async () => {
      // when
      const response = await t.rest('GET', `/invoices/${invoiceId}`, {
        env,
        headers: { accept: 'text/html' },
      });

      // then
      expectProblem(response, 406);
      expect(response.body.detail).toContain('application/json, application/pdf');
    });

    it('answers an unknown invoice with a 404 problem, PDF asked or not', async () => {
      // when
      const response = await t.rest('GET', `/invoices/${randomUUID()}`, {
        env,
        headers: { accept: 'application/pdf' },
      });

      // then
      expectProblem(response, 404);
    });

    it('asks for credentials before it renders anything', async () => {
      // when
      const response = await t.rest('GET', `/invoices/${invoiceId}`, {
        headers: { accept: 'application/pdf' },
      });

      // then
      expect(response.status).toBe(400);
    });
  });

  describe('OpenAPI', () => {
    it('documents the PDF beside the JSON, and 406', async () => {
      // when
      const { body: document } = await t.rest('GET', '/openapi.json');

      // then
      const operation = document.paths['/invoices/{invoiceId}'].get;
      expect(Object.keys(operation.responses['200'].content)).toEqual([
        'application/json',
        'application/pdf',
        // the EN 16931 e-invoice of a booked invoice (docs/invoices.md)
        'application/xml',
        'application/ubl+xml',
        'application/cii+xml',
      ]);
      expect(operation.responses['406']).toEqual({ $ref: '#/components/responses/NotAcceptable' });
      expect(document.paths['/customers/{customerId}'].get.responses).not.toHaveProperty('406');
    });

    it('the contract checker refuses a "PDF" that is not one', () => {
      // given
      const checker = new ContractChecker();
      const answer = (bytes: string) => ({
        status: 200,
        headers: new Headers({ 'content-type': 'application/pdf' }),
        body: new TextEncoder().encode(bytes),
      });

      // when / then
      expect(() => checker.check('GET', `/invoices/${randomUUID()}`, answer('%PDF-1.3\n'))).not.toThrow();
      expect(() => checker.check('GET', `/invoices/${randomUUID()}`, answer('<html>'))).toThrow(/%PDF-/);
      expect(() => checker.check('GET', `/customers/${randomUUID()}`, answer('%PDF-1.3\n'))).toThrow(
        /application\/pdf/,
      );
    });
  });
});
