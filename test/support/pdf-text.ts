import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

const require = createRequire(import.meta.url);
/** PDF.js reads the metrics of the standard fonts from its own package. */
const STANDARD_FONTS = `${join(dirname(require.resolve('pdfjs-dist/package.json')), 'standard_fonts')}/`;

export interface PdfText {
  pages: number;
  /** Each page's text, its runs joined by a space, runs of one line kept in reading order. */
  text: string[];
  info: Record<string, unknown>;
}

/** Reads a PDF back with PDF.js (Mozilla's parser): its page count, text and document information. */
export async function readPdf(bytes: Uint8Array): Promise<PdfText> {
  const doc = await getDocument({ data: new Uint8Array(bytes), standardFontDataUrl: STANDARD_FONTS, verbosity: 0, isEvalSupported: false })
    .promise;
  try {
    const text: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      text.push(
        content.items
          .map((item) => ('str' in item ? item.str : ''))
          .filter((s) => s.trim() !== '')
          .join(' '),
      );
    }
    const { info } = await doc.getMetadata();
    return { pages: doc.numPages, text, info: info as Record<string, unknown> };
  } finally {
    await doc.destroy();
  }
}
