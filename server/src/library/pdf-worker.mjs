// Extracts the text of one PDF, page by page, on a worker thread: pdf.js parses on the thread
// that calls it, so a large or hostile PDF would otherwise hold the server's event loop; here it
// holds only this thread, which the server bounds in memory and time and terminates.
// Plain JavaScript so it loads without a TypeScript loader.
// workerData: { bytes: Uint8Array }. Message out: { pages: string[] } or { error, message }.
import { parentPort, workerData } from 'node:worker_threads';

try {
  // unpdf: pdf.js's serverless build, no worker of its own, no font or network fetches.
  const { extractText, getDocumentProxy } = await import('unpdf');
  const pdf = await getDocumentProxy(workerData.bytes, {
    verbosity: 0,
    // Never compile font programs from the file (CVE-2024-4367 was this path).
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
  });
  const { text } = await extractText(pdf, { mergePages: false });
  parentPort.postMessage({ pages: text });
  await pdf.destroy();
} catch (e) {
  const name = e && typeof e === 'object' && 'name' in e ? String(e.name) : 'Error';
  parentPort.postMessage({ error: name, message: e instanceof Error ? e.message : String(e) });
}
