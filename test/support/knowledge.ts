import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { KnowledgeSource } from '../../src/api/knowledge/schema.js';
import { adminAuth } from '../helper.js';

/**
 * A real, minimal PDF (one Helvetica text line per page line), built byte by byte so the test needs
 * no binary fixture and the extractor reads an actual file format.
 */
export function makePdf(pages: string[][]): Buffer {
  const objects: string[] = [];
  const pageIds: number[] = [];
  const font = 3 + pages.length * 2;
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  pages.forEach((lines, i) => {
    const pageId = 3 + i * 2;
    const contentId = pageId + 1;
    pageIds.push(pageId);
    const escape = (s: string) => s.replace(/([\\()])/g, '\\$1');
    const stream = lines.map((line, j) => `BT /F1 12 Tf 72 ${740 - j * 18} Td (${escape(line)}) Tj ET`).join('\n');
    objects[pageId] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${contentId} 0 R /Resources << /Font << /F1 ${font} 0 R >> >> >>`;
    objects[contentId] = `<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`;
  });
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[font] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = Buffer.byteLength(out, 'latin1');
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) out += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A multipart/form-data body with one file and optional text fields. */
export function multipart(file: { name: string; type: string; data: Buffer | string }, fields: Record<string, string> = {}) {
  const boundary = `----answerdesk${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  parts.push(
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${file.name}"\r\ncontent-type: ${file.type}\r\n\r\n`),
    Buffer.isBuffer(file.data) ? file.data : Buffer.from(file.data),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

export type Route = (req: IncomingMessage, res: ServerResponse, base: string) => void;

/** A local web site on a free port: path → handler (or a fixed HTML/text body). Counts hits per path. */
export async function serveSite(routes: Record<string, Route | { type: string; body: string }>) {
  const hits = new Map<string, number>();
  let base = '';
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes[path];
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('not found');
    }
    if (typeof route === 'function') return route(req, res, base);
    res.writeHead(200, { 'content-type': route.type });
    res.end(route.body.replaceAll('{{base}}', base));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    hits,
    routes,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Polls a source until ingestion ends (ready or failed). */
export async function waitForSource(app: FastifyInstance, projectId: string, sourceId: string, timeoutMs = 20_000): Promise<KnowledgeSource> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await app.inject({ method: 'GET', url: `/api/v1/admin/projects/${projectId}/knowledge/${sourceId}`, headers: adminAuth() });
    const { source } = res.json() as { source: KnowledgeSource };
    if (source.status === 'ready' || source.status === 'failed') return source;
    if (Date.now() > deadline) throw new Error(`source ${sourceId} still ${source.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Adds a source through the admin API and waits for it. */
export async function addSource(app: FastifyInstance, projectId: string, body: Record<string, unknown>): Promise<KnowledgeSource> {
  const res = await app.inject({ method: 'POST', url: `/api/v1/admin/projects/${projectId}/knowledge`, headers: adminAuth(), payload: body });
  if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`);
  return waitForSource(app, projectId, (res.json() as { source: KnowledgeSource }).source.id);
}

export async function search(app: FastifyInstance, projectId: string, q: string, headers = adminAuth()) {
  const res = await app.inject({
    method: 'GET',
    url: `/api/v1/admin/projects/${projectId}/knowledge/search?q=${encodeURIComponent(q)}`,
    headers,
  });
  return res.json() as { results: Array<{ chunkId: string; sourceId: string; title: string; url: string | null; headingPath: string[]; text: string; score: number; source: { id: string; type: string; title: string | null } }> };
}

/**
 * A generated help manual of about `bytes` characters: many sections of sentences and lists, each
 * with a unique code (`Code Q<n>X is listed here.`) to search for. Deterministic.
 */
export function helpManual(bytes: number): string {
  const words = ['order', 'refund', 'parcel', 'invoice', 'warranty', 'account', 'payment', 'delivery', 'return', 'exchange', 'voucher', 'address'];
  let seed = 7;
  const word = () => words[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % words.length]!;
  const sentence = (n: number) => `${Array.from({ length: n }, word).join(' ')}.`;
  const parts = ['# Store manual\n'];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const section = `## Topic ${i}\n\n${sentence(14)} ${sentence(12)} Code Q${i}X is listed here. ${sentence(16)}\n\n- ${sentence(5)}\n- ${sentence(6)}\n`;
    parts.push(section);
    size += section.length;
  }
  return parts.join('\n');
}
