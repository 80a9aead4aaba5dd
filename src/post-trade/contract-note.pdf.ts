import type PDFKit from 'pdfkit';
import type { ContractNote } from './contract-note.schemas.js';
import { drawableText, formatAmount, formatDate, formatQuantity, formatShortDate, type ContractNoteTexts } from './contract-note.texts.js';

/**
 * The contract note as a PDF (A4, PDFKit with its built-in Helvetica, so nothing is read from disk):
 * the broker, the investor and their account, the order and instrument, each execution, the fees by
 * type, the net amount and the settlement date. Every word comes from `texts`. The document's dates
 * are the note's `generated_at`, so the same note gives the same bytes.
 */

type PdfKit = typeof PDFKit;
let pdfkit: Promise<PdfKit> | undefined;
/** PDFKit (and its font machinery) is loaded on the first note drawn, not when the service starts. */
const loadPdfKit = (): Promise<PdfKit> => (pdfkit ??= import('pdfkit').then((m) => m.default));

const MARGIN = 50;
const WIDTH = 595.28 - 2 * MARGIN;
const BOTTOM = 841.89 - MARGIN - 30;
const INK = '#1a1a1a';
const MUTED = '#666666';
const RULE = '#bbbbbb';

type Doc = PDFKit.PDFDocument;

/** Table columns of the executions: [width, align]. */
const COLUMNS: readonly [keyof ContractNoteTexts['columns'], number, 'left' | 'right'][] = [
  ['time', 100, 'left'],
  ['qty', 55, 'right'],
  ['price', 70, 'right'],
  ['gross', 80, 'right'],
  ['fees', 65, 'right'],
  ['net', 80, 'right'],
  ['settles', 45, 'right'],
];

function rule(doc: Doc, y: number): void {
  doc
    .moveTo(MARGIN, y)
    .lineTo(MARGIN + WIDTH, y)
    .lineWidth(0.5)
    .strokeColor(RULE)
    .stroke();
}

/** Starts a new page when `height` does not fit on this one; true when it did. */
function ensureRoom(doc: Doc, height: number): boolean {
  if (doc.y + height <= BOTTOM) return false;
  doc.addPage();
  return true;
}

/** A label and its value on one line, the value from a fixed column. */
function field(doc: Doc, label: string, value: string): void {
  ensureRoom(doc, 16);
  const y = doc.y;
  doc.font('Helvetica').fontSize(9).fillColor(MUTED).text(label, MARGIN, y, { width: 150 });
  doc
    .font('Helvetica')
    .fontSize(10)
    .fillColor(INK)
    .text(value, MARGIN + 155, y, { width: WIDTH - 155 });
  doc.moveDown(0.25);
}

function heading(doc: Doc, text: string): void {
  ensureRoom(doc, 40);
  doc.moveDown(0.8);
  doc.font('Helvetica-Bold').fontSize(11).fillColor(INK).text(text, MARGIN, doc.y);
  rule(doc, doc.y + 2);
  doc.moveDown(0.5);
}

function tableRow(doc: Doc, cells: readonly string[], options: { bold?: boolean; note?: string } = {}): void {
  ensureRoom(doc, options.note === undefined ? 16 : 26);
  const y = doc.y;
  let x = MARGIN;
  doc
    .font(options.bold === true ? 'Helvetica-Bold' : 'Helvetica')
    .fontSize(8.5)
    .fillColor(INK);
  COLUMNS.forEach(([, width, align], i) => {
    doc.text(cells[i] ?? '', x, y, { width: width - 4, align, lineBreak: false });
    x += width;
  });
  doc.y = y + 11;
  if (options.note !== undefined) {
    doc.font('Helvetica').fontSize(7).fillColor(MUTED).text(options.note, MARGIN, doc.y, { width: WIDTH, lineBreak: false });
    doc.y += 9;
  }
  doc.x = MARGIN;
}

/** A line of the amounts: label on the left, amount on the right. */
function amountLine(doc: Doc, label: string, amount: string, bold = false): void {
  ensureRoom(doc, 16);
  const y = doc.y;
  doc
    .font(bold ? 'Helvetica-Bold' : 'Helvetica')
    .fontSize(bold ? 11 : 10)
    .fillColor(INK);
  doc.text(label, MARGIN, y, { width: WIDTH - 170 });
  doc.text(amount, MARGIN + WIDTH - 170, y, { width: 170, align: 'right' });
  doc.moveDown(0.3);
}

function time(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

export async function renderContractNotePdf(note: ContractNote, texts: ContractNoteTexts, issuer: string): Promise<Buffer> {
  const PDFDocument = await loadPdfKit();
  const generated = new Date(note.generated_at);
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    bufferPages: true,
    lang: texts.lang,
    info: {
      Title: `${texts.title} ${note.order_id}`,
      Author: note.partner.name,
      Subject: `${texts.side[note.side]} ${formatQuantity(texts, note.filled_qty)} ${note.instrument.code}`,
      Creator: issuer,
      CreationDate: generated,
      ModDate: generated,
    },
  });
  // From here on, the note's free text is drawn with the built-in fonts (the information above keeps it exactly).
  note = {
    ...note,
    partner: { ...note.partner, name: drawableText(note.partner.name) },
    account: note.account === null ? null : drawableText(note.account),
    instrument: { ...note.instrument, name: note.instrument.name === null ? null : drawableText(note.instrument.name) },
    fills: note.fills.map((f) => ({ ...f, exchange_ref: drawableText(f.exchange_ref) })),
  };
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const money = (cents: number | bigint) => formatAmount(texts, cents, note.currency);

  // Title block: the note on the left, the broker on the right.
  doc
    .font('Helvetica-Bold')
    .fontSize(18)
    .fillColor(INK)
    .text(texts.title, MARGIN, MARGIN, { width: WIDTH / 2 });
  doc
    .font('Helvetica')
    .fontSize(9)
    .fillColor(MUTED)
    .text(texts.subtitle, MARGIN, doc.y, { width: WIDTH / 2 });
  doc
    .font('Helvetica-Bold')
    .fontSize(11)
    .fillColor(INK)
    .text(note.partner.name, MARGIN + WIDTH / 2, MARGIN, { width: WIDTH / 2, align: 'right' });
  doc
    .font('Helvetica')
    .fontSize(8)
    .fillColor(MUTED)
    .text(`${note.partner.id} - ${note.partner.jurisdiction}`, MARGIN + WIDTH / 2, doc.y, { width: WIDTH / 2, align: 'right' });
  doc.y = MARGIN + 48;
  rule(doc, doc.y);
  doc.moveDown(0.8);

  field(doc, texts.broker, `${note.partner.name} (${note.partner.id})`);
  field(doc, texts.investor, note.subject_id);
  field(doc, texts.account, note.account ?? texts.accountUnknown);
  field(doc, texts.attestation, note.kyc_attestation_id);
  field(
    doc,
    texts.order,
    `${note.order_id} - ${texts.orderPlaced} ${time(note.order_created_at)} UTC - ${texts.orderStatus[note.order_status]}`,
  );
  field(doc, texts.instrument, [note.instrument.code, note.instrument.name].filter((x) => x !== null).join(' - '));
  if (note.instrument.isin !== null) field(doc, texts.isin, note.instrument.isin);
  field(doc, texts.exchange, note.instrument.exchange);
  field(doc, texts.side[note.side], texts.executedOfOrdered(note.filled_qty, note.order_qty));
  field(doc, texts.limit, note.limit_price_cents === null ? texts.market : money(note.limit_price_cents));
  field(doc, texts.averagePrice, money(note.average_price_cents));
  field(doc, texts.tradeDate, formatDate(texts, note.trade_date));
  field(doc, texts.settlementDate, `${formatDate(texts, note.settlement_date)} (${texts.settlementStatus[note.settlement_status]})`);

  heading(doc, texts.executions);
  const header = COLUMNS.map(([key]) => texts.columns[key]);
  tableRow(doc, header, { bold: true });
  for (const fill of note.fills) {
    // A table that runs onto another page repeats its header there.
    if (ensureRoom(doc, 26)) tableRow(doc, header, { bold: true });
    const fees = fill.fees.reduce((sum, f) => sum + BigInt(f.amount_cents), 0n);
    tableRow(
      doc,
      [
        time(fill.executed_at),
        formatQuantity(texts, fill.qty),
        money(fill.price_cents),
        money(fill.gross_cents),
        money(fees),
        money(fill.net_cents),
        formatShortDate(texts, fill.settlement_date),
      ],
      { note: texts.exchangeRef(fill.exchange_ref) },
    );
  }

  heading(doc, texts.amounts);
  amountLine(doc, texts.gross, money(note.gross_cents));
  for (const fee of note.fees) amountLine(doc, texts.feeNames[fee.type], money(fee.amount_cents));
  amountLine(doc, texts.totalFees, money(note.fees_total_cents));
  rule(doc, doc.y);
  doc.moveDown(0.3);
  amountLine(doc, texts.net[note.side], money(note.net_cents), true);

  heading(doc, texts.schedules);
  const schedules =
    note.fee_schedules.length === 0 ? [texts.noSchedule] : note.fee_schedules.map((s) => texts.scheduleOf(s.scope, s.id, s.effective_from));
  for (const line of schedules) {
    ensureRoom(doc, 14);
    doc.font('Helvetica').fontSize(9).fillColor(INK).text(`- ${line}`, MARGIN, doc.y, { width: WIDTH });
  }

  ensureRoom(doc, 40);
  doc.moveDown(1.5);
  doc
    .font('Helvetica')
    .fontSize(8)
    .fillColor(MUTED)
    .text(texts.generated(issuer, `${time(note.generated_at)} UTC`), MARGIN, doc.y, { width: WIDTH });
  doc.text(texts.footer, MARGIN, doc.y, { width: WIDTH });

  const range = doc.bufferedPageRange();
  for (let i = 0; i < range.count; i++) {
    doc.switchToPage(range.start + i);
    // The page number sits in the bottom margin, which PDFKit would otherwise answer with a new page.
    doc.page.margins.bottom = 0;
    doc
      .font('Helvetica')
      .fontSize(8)
      .fillColor(MUTED)
      .text(texts.page(i + 1, range.count), MARGIN, 841.89 - MARGIN, { width: WIDTH, align: 'right', lineBreak: false });
  }
  doc.end();
  return done;
}
