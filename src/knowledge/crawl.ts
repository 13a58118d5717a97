import robotsParserModule from 'robots-parser';
import { safeFetch, SafeFetchError, type AddressPolicy, type SafeResponse } from '../net/safe-fetch.js';
import type { DocumentInput, ParsedDocument } from './parse.js';
import type { CrawlOptions } from './types.js';

interface RobotsRules {
  isAllowed(url: string, userAgent?: string): boolean | undefined;
}
// The package's typings declare an ES default export; at runtime it is the CommonJS function itself.
const robotsParser = robotsParserModule as unknown as (url: string, contents: string) => RobotsRules;

/** The name robots.txt rules are matched against. */
export const USER_AGENT = 'AnswerDeskBot';
const PAGE_MAX_BYTES = 5 * 1024 * 1024;
const PAGE_TIMEOUT_MS = 15_000;
/** Links to files that hold no readable text are not followed. */
const SKIPPED_EXTENSIONS = /\.(png|jpe?g|gif|svg|webp|ico|css|js|mjs|json|zip|gz|tar|mp3|mp4|webm|woff2?|ttf|exe|dmg)$/i;

export interface FetchContext {
  allowPrivateNetwork: boolean;
  /** Tests only: see SafeFetchInit.addressPolicy. */
  addressPolicy?: AddressPolicy;
  signal: AbortSignal;
}

/** What a crawl needs besides the network: a way to read the pages it fetched (see parser.ts). */
export interface CrawlContext extends FetchContext {
  parse(input: DocumentInput): Promise<ParsedDocument>;
}

/** A page that could not be fetched or read; the crawl goes on without it. */
export interface PageFailure {
  url: string;
  reason: string;
}

async function get(url: string, ctx: FetchContext, maxBytes = PAGE_MAX_BYTES): Promise<SafeResponse> {
  return safeFetch(url, {
    timeoutMs: PAGE_TIMEOUT_MS,
    maxBytes,
    allowPrivateNetwork: ctx.allowPrivateNetwork,
    addressPolicy: ctx.addressPolicy,
    signal: ctx.signal,
    headers: { 'user-agent': `${USER_AGENT}/1.0`, accept: 'text/html, text/markdown, text/plain, application/pdf, application/xml;q=0.9, */*;q=0.5' },
  });
}

/** robots.txt rules per origin; a missing or unreadable robots.txt allows everything, as crawlers agree. */
class Robots {
  private readonly cache = new Map<string, RobotsRules | null>();
  constructor(private readonly ctx: FetchContext) {}

  async allows(url: string): Promise<boolean> {
    const origin = new URL(url).origin;
    if (!this.cache.has(origin)) {
      let rules: RobotsRules | null = null;
      try {
        const res = await get(`${origin}/robots.txt`, this.ctx, 512 * 1024);
        if (res.status === 200) rules = robotsParser(`${origin}/robots.txt`, res.body.toString('utf8'));
      } catch (err) {
        // An address the guard refuses for robots.txt is refused for the pages too: say so there.
        if (err instanceof SafeFetchError && err.code === 'blocked_address') throw err;
      }
      this.cache.set(origin, rules);
    }
    return this.cache.get(origin)?.isAllowed(url, USER_AGENT) ?? true;
  }
}

function describe(err: unknown): string {
  return err instanceof SafeFetchError ? err.message : `Could not read the page: ${(err as Error).message}`;
}

/**
 * Fetches one URL and reads it into chunks (and, when `withLinks` and it is HTML, its links).
 * Throws with a readable reason.
 */
export async function fetchPage(url: string, ctx: CrawlContext, withLinks = false): Promise<{ document: ParsedDocument; response: SafeResponse }> {
  const response = await get(url, ctx);
  if (response.status < 200 || response.status > 299) throw new Error(`${url} answered HTTP ${response.status}`);
  const contentType = response.headers.get('content-type') ?? '';
  const document = await ctx.parse({ kind: 'fetched', body: response.body, contentType, url: response.url, withLinks });
  return { document, response };
}

/** The page URLs a sitemap (or a sitemap index, one level deep) lists, on the sitemap's own site. */
async function sitemapUrls(sitemapUrl: string, ctx: FetchContext, limit: number): Promise<string[]> {
  const origin = new URL(sitemapUrl).origin;
  const locs = (xml: string) => [...xml.matchAll(/<loc>\s*([^<]+?)\s*<\/loc>/gi)].map((m) => m[1]!.replace(/&amp;/g, '&'));
  const read = async (url: string) => {
    const res = await get(url, ctx);
    if (res.status !== 200) throw new Error(`Sitemap ${url} answered HTTP ${res.status}`);
    return res.body.toString('utf8');
  };
  const root = await read(sitemapUrl);
  let urls = locs(root);
  if (/<sitemapindex/i.test(root)) {
    const nested: string[] = [];
    for (const child of urls.filter((u) => u.startsWith(origin)).slice(0, 50)) {
      if (nested.length >= limit) break;
      nested.push(...locs(await read(child)));
    }
    urls = nested;
  }
  return [...new Set(urls.filter((u) => u.startsWith(`${origin}/`) || u === origin))].slice(0, limit);
}

export interface CrawlEvents {
  /** The number of pages to fetch, once known (sitemaps know it up front, link crawls do not). */
  onTotal(total: number | null): Promise<void>;
  onFailure(failure: PageFailure): void;
}

/**
 * The pages of a URL source: the start page, then (maxDepth > 0) the same-site pages it links to,
 * breadth first, up to maxPages. robots.txt is honoured for every page; every fetch goes through
 * the SSRF guard.
 */
export async function* crawl(startUrl: string, options: CrawlOptions, ctx: CrawlContext, events: CrawlEvents): AsyncGenerator<ParsedDocument> {
  const robots = new Robots(ctx);
  const start = new URL(startUrl);
  start.hash = '';
  const queue: Array<{ url: string; depth: number }> = [{ url: start.href, depth: 0 }];
  const seen = new Set([start.href]);
  let fetched = 0;
  await events.onTotal(options.maxDepth === 0 ? 1 : null);
  while (queue.length > 0 && fetched < options.maxPages) {
    const { url, depth } = queue.shift()!;
    if (!(await robots.allows(url))) {
      events.onFailure({ url, reason: 'Disallowed by robots.txt' });
      continue;
    }
    fetched++;
    let result;
    try {
      result = await fetchPage(url, ctx, depth < options.maxDepth);
    } catch (err) {
      ctx.signal.throwIfAborted();
      events.onFailure({ url, reason: describe(err) });
      continue;
    }
    yield result.document;
    const finalOrigin = new URL(result.response.url).origin;
    for (const link of result.document.links) {
      const target = new URL(link);
      if (target.origin !== start.origin || target.origin !== finalOrigin) continue;
      if (SKIPPED_EXTENSIONS.test(target.pathname) || seen.has(link)) continue;
      seen.add(link);
      queue.push({ url: link, depth: depth + 1 });
    }
  }
}

/** The pages a sitemap lists (robots.txt honoured), up to maxPages. */
export async function* crawlSitemap(sitemapUrl: string, options: CrawlOptions, ctx: CrawlContext, events: CrawlEvents): AsyncGenerator<ParsedDocument> {
  const robots = new Robots(ctx);
  const urls = await sitemapUrls(sitemapUrl, ctx, options.maxPages);
  const allowed: string[] = [];
  for (const url of urls) {
    if (await robots.allows(url)) allowed.push(url);
    else events.onFailure({ url, reason: 'Disallowed by robots.txt' });
  }
  await events.onTotal(allowed.length);
  for (const url of allowed) {
    try {
      yield (await fetchPage(url, ctx)).document;
    } catch (err) {
      ctx.signal.throwIfAborted();
      events.onFailure({ url, reason: describe(err) });
    }
  }
}
