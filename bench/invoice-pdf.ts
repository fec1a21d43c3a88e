/**
 * Times the invoice PDF of a booked invoice with LINES lines (default 5000): `node bench/invoice-pdf.ts [lines] [runs]`.
 * The first render loads the library and the fonts and is reported apart; the rest are timed one after another.
 * CPU time is the whole process's (all threads), so it counts a worker's render too and, unlike wall time,
 * barely moves when other processes crowd the machine.
 */
import { performance } from 'node:perf_hooks';
import { renderInvoicePdf } from '../src/modules/invoice/invoice.pdf.ts';
import type { PrintableInvoice } from '../src/modules/invoice/invoice.reads.ts';

const lines = Number(process.argv[2] ?? 5000);
const runs = Number(process.argv[3] ?? 5);

const items = Array.from({ length: lines }, (_, i) => ({
  id: `item-${i}`,
  title: `Line ${i + 1}`,
  description: i % 10 === 0 ? 'Usage of the metered API in the billing period, per thousand calls' : null,
  periodStart: '2026-03-01',
  periodEnd: '2026-03-31',
  quantity: '3.000000',
  unitAmount: '1999.000000',
  discountPercentage: i % 7 === 0 ? '10.0000' : '0.0000',
  discountAmount: '0.000000',
  taxCode: 'VAT25',
  taxRate: i % 3 === 0 ? '7.5000' : '25.0000',
  amount: 5997,
  taxAmount: 1499,
}));
const total = items.reduce((sum, item) => sum + item.amount, 0);
const vat = items.reduce((sum, item) => sum + item.taxAmount, 0);
const view = {
  invoice: {
    id: 'b1f7c8de-0000-4000-8000-000000000001',
    handle: 'INV-000042',
    type: 'invoice',
    status: 'booked',
    currency: 'EUR',
    date: '2026-03-01',
    dueDate: '2026-03-15',
    memo: 'Thank you for your business.',
    totalExclVat: total,
    totalVat: vat,
    totalInclVat: total + vat,
    settledAmount: 0,
  },
  customer: {
    id: 'c',
    handle: 'zolc',
    name: 'Łukasz Żółć Sp. z o.o.',
    billingAddress: { street1: 'ul. Długa 5', postalCode: '00-238', city: 'Warszawa', country: 'PL' },
  },
  items,
  settlements: [],
  seller: { name: 'Nordlicht Software GmbH' },
  creditedInvoiceHandle: null,
} as unknown as PrintableInvoice;

const cpuMs = (since: NodeJS.CpuUsage): number => {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
};
const median = (values: number[]): number =>
  Math.round(values.sort((a, b) => a - b)[values.length >> 1] as number);

let start = performance.now();
let cpu = process.cpuUsage();
let bytes = await renderInvoicePdf(view);
console.log(
  `first render (loads the library and fonts): ${Math.round(performance.now() - start)} ms wall, ` +
    `${Math.round(cpuMs(cpu))} ms CPU, ${bytes.length} bytes`,
);
const wall: number[] = [];
const cpus: number[] = [];
for (let run = 0; run < runs; run++) {
  start = performance.now();
  cpu = process.cpuUsage();
  bytes = await renderInvoicePdf(view);
  wall.push(performance.now() - start);
  cpus.push(cpuMs(cpu));
}
console.log(`${lines} lines, ${runs} runs: median ${median(wall)} ms wall, ${median(cpus)} ms CPU`);
