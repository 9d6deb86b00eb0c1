// Eagle's MCP server through the official TypeScript SDK clients, on the sample store.
//
//   node tests/mcp/sdk_client.mjs --sdk v1|v2 --transport stdio|http --eagle <binary>
//        --data-dir <store> [--url <http url of /mcp>] [--token <bearer token>]
//        [--set KEY=VALUE ...] [--timeout <seconds, default 180>] [--namespace core|biomed]
//
// v1 is @modelcontextprotocol/sdk (protocol revision 2025-11-25: the initialize
// handshake, an Mcp-Session-Id over HTTP); v2 is @modelcontextprotocol/client, pinned to
// revision 2026-07-28 with versionNegotiation {mode: {pin}} (stateless: server/discover
// at connect, which over stdio the SDK sends to a short-lived sibling process, then the
// _meta envelope on every request and, over HTTP, the MCP-Protocol-Version / Mcp-Method
// / Mcp-Name / Mcp-Param-* headers). Over stdio the script spawns `<eagle> --data-dir <store> mcp --namespace
// NS` from the repository root (so ../shared/data/vocab is found; EAGLE_*
// variables and --set pass through); over http it talks to the `eagle serve` the
// caller started. The packages come from tests/js/node_modules (npm ci in tests/js).
//
// One line per check, `ok - v2/http tools/list: 5 tools`; the first failure prints
// `not ok - ...` with the reason (and the server's stderr over stdio) and exits 1.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STATEFUL = '2025-11-25';
const STATELESS = '2026-07-28';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
const CORE_TOOLS = ['core_retrieve_text', 'core_search', 'core_query', 'core_retrieve_visual', 'core_list_documents'];

const usage = 'usage: node tests/mcp/sdk_client.mjs --sdk v1|v2 --transport stdio|http --eagle <binary> ' +
  '--data-dir <store> [--url <http url of /mcp>] [--token <bearer token>] [--set KEY=VALUE ...] [--timeout <s>] ' +
  '[--namespace core|biomed]';
let opt;
try {
  ({ values: opt } = parseArgs({
    options: {
      sdk: { type: 'string' },
      transport: { type: 'string' },
      eagle: { type: 'string' },
      'data-dir': { type: 'string' },
      url: { type: 'string' },
      token: { type: 'string' },
      set: { type: 'string', multiple: true, default: [] },
      timeout: { type: 'string', default: '180' },
      namespace: { type: 'string', default: 'core' },
    },
  }));
} catch (e) {
  console.error(`${e.message}\n${usage}`);
  process.exit(2);
}
if (!['v1', 'v2'].includes(opt.sdk) || !['stdio', 'http'].includes(opt.transport) ||
    (opt.transport === 'stdio' && (!opt.eagle || !opt['data-dir'])) || (opt.transport === 'http' && !opt.url)) {
  console.error(usage);
  process.exit(2);
}
const label = `${opt.sdk}/${opt.transport}`;
const http = opt.transport === 'http';
const v2 = opt.sdk === 'v2';

// ---- reporting ---------------------------------------------------------------------

let cleanup = async () => {};
let serverStderr = '';

class CheckFailed extends Error {}

function ok(what) {
  console.log(`ok - ${label} ${what}`);
}
function check(cond, what, why) {
  if (!cond) throw new CheckFailed(`${what}: ${typeof why === 'function' ? why() : why}`);
}
const show = (v, n = 600) => {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > n ? s.slice(0, n) + '…' : s;
};

async function fail(err) {
  const why = err instanceof CheckFailed ? err.message : `unexpected ${err?.name ?? 'error'}: ${err?.stack ?? err}`;
  console.log(`not ok - ${label} ${why}`);
  if (serverStderr.trim()) console.log(`# eagle mcp stderr (last lines):\n${serverStderr.trimEnd().split('\n').slice(-15).map((l) => '#   ' + l).join('\n')}`);
  await Promise.race([cleanup().catch(() => {}), new Promise((r) => setTimeout(r, 3000).unref())]);
  process.exit(1);
}

// The server's default namespace: its plugin's tools are listed beside the core's.
const NS = opt.namespace;
const TOOLS = NS === 'biomed' ? [...CORE_TOOLS, 'biomed_query_entities', 'biomed_retrieve_compounds'] : CORE_TOOLS;
const watchdog = setTimeout(() => fail(new CheckFailed(`timed out after ${opt.timeout} s`)), Number(opt.timeout) * 1000);
watchdog.unref();

// ---- loading the SDKs from tests/js/node_modules ----------------------------------

// A package's ESM entry, resolved the way `import` would from tests/js: the package
// folder on tests/js's module path, then its "exports" map under the "import" condition.
const requireFromJs = createRequire(new URL('../js/package.json', import.meta.url));
async function importFromJs(specifier) {
  const [, name, sub] = specifier.match(/^(@[^/]+\/[^/]+|[^@/][^/]*)(\/.*)?$/);
  const subpath = '.' + (sub ?? '');
  for (const dir of requireFromJs.resolve.paths(name) ?? []) {
    const pkgDir = path.join(dir, name);
    const pkgJson = path.join(pkgDir, 'package.json');
    if (!fs.existsSync(pkgJson)) continue;
    const exportsMap = JSON.parse(fs.readFileSync(pkgJson, 'utf8')).exports ?? {};
    let target = exportsMap[subpath];
    let star = '';
    if (!target) {
      for (const [key, value] of Object.entries(exportsMap)) {
        if (key.endsWith('*') && subpath.startsWith(key.slice(0, -1))) {
          target = value;
          star = subpath.slice(key.length - 1);
          break;
        }
      }
    }
    let file = target?.import ?? target?.default ?? target;
    if (file && typeof file === 'object') file = file.default;
    if (typeof file !== 'string') throw new Error(`${specifier}: no ESM entry in ${pkgJson}`);
    return import(pathToFileURL(path.join(pkgDir, file.replace('*', star))).href);
  }
  throw new Error(`${name} is not installed in ${path.join(REPO, 'tests/js/node_modules')}: run npm ci in tests/js (scripts/setup.sh)`);
}

async function loadSdk() {
  if (!v2) {
    const { Client } = await importFromJs('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport, getDefaultEnvironment } = await importFromJs('@modelcontextprotocol/sdk/client/stdio.js');
    const { StreamableHTTPClientTransport } = await importFromJs('@modelcontextprotocol/sdk/client/streamableHttp.js');
    return { Client, StdioClientTransport, getDefaultEnvironment, StreamableHTTPClientTransport };
  }
  const { Client, StreamableHTTPClientTransport } = await importFromJs('@modelcontextprotocol/client');
  const { StdioClientTransport, getDefaultEnvironment } = await importFromJs('@modelcontextprotocol/client/stdio');
  return { Client, StdioClientTransport, getDefaultEnvironment, StreamableHTTPClientTransport };
}

// ---- wire taps ---------------------------------------------------------------------

// The JSON-RPC messages the client sends and receives on its transport (v2 over stdio:
// the session process only; the connect-time server/discover runs on a sibling).
function tapTransport(transport) {
  const wire = { out: [], in: [] };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    wire.out.push(message);
    return send(message, options);
  };
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => handler && ((message, extra) => {
      wire.in.push(message);
      return handler(message, extra);
    }),
    set: (h) => {
      handler = h;
    },
  });
  // The response to the last request of this method (and its request).
  wire.last = (method) => {
    const req = wire.out.filter((m) => m.method === method && m.id !== undefined).at(-1);
    return { req, res: req && wire.in.find((m) => m.id === req.id && ('result' in m || 'error' in m)) };
  };
  return wire;
}

// Every HTTP exchange of the client: method, headers, body, status, response headers.
const exchanges = [];
async function recordingFetch(url, init = {}) {
  const headers = new Headers(init.headers);
  let body;
  try {
    body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
  } catch {
    body = undefined;
  }
  const res = await fetch(url, init);
  exchanges.push({ method: init.method ?? 'GET', headers, body, status: res.status, resHeaders: res.headers });
  return res;
}
const posts = (pred) => exchanges.filter((e) => e.method === 'POST' && e.body && pred(e.body));

// ---- the run -----------------------------------------------------------------------

async function main() {
  const sdk = await loadSdk();
  const clientInfo = { name: `eagle-sdk-check-${opt.sdk}`, version: '1.0.0' };
  const client = v2
    ? new sdk.Client(clientInfo, { versionNegotiation: { mode: { pin: STATELESS } } })
    : new sdk.Client(clientInfo);

  let transport;
  let childPid = null;
  if (http) {
    const requestInit = opt.token ? { headers: { Authorization: `Bearer ${opt.token}` } } : undefined;
    transport = new sdk.StreamableHTTPClientTransport(new URL(opt.url), { requestInit, fetch: recordingFetch });
  } else {
    const env = { ...sdk.getDefaultEnvironment() };
    for (const [k, v] of Object.entries(process.env)) if (k.startsWith('EAGLE_')) env[k] = v;
    const args = ['--data-dir', opt['data-dir']];
    for (const kv of opt.set) args.push('--set', kv);
    args.push('mcp', '--namespace', NS);
    transport = new sdk.StdioClientTransport({ command: opt.eagle, args, cwd: REPO, env, stderr: 'pipe' });
    transport.stderr?.on('data', (chunk) => {
      serverStderr = (serverStderr + chunk.toString()).slice(-8000);
    });
  }
  const wire = tapTransport(transport);
  cleanup = async () => {
    await client.close();
  };

  // 1. Connect and the negotiated revision.
  try {
    await client.connect(transport);
  } catch (e) {
    const cause = e?.cause ? ` (cause: ${e.cause.code ?? ''} ${e.cause.message ?? e.cause})` : '';
    throw new CheckFailed(`connect: ${e?.name ?? 'error'}: ${e?.message}${cause}`);
  }
  if (!http) childPid = transport.pid;
  if (v2) {
    const version = client.getNegotiatedProtocolVersion();
    check(version === STATELESS, 'connect', `negotiated ${show(version)}, want ${STATELESS}`);
    check(client.getProtocolEra() === 'modern', 'connect', `era ${show(client.getProtocolEra())}, want modern`);
    const discover = client.getDiscoverResult();
    check(discover?.supportedVersions?.includes(STATELESS) && discover.supportedVersions.includes(STATEFUL),
      'connect', `server/discover supportedVersions ${show(discover?.supportedVersions)}`);
    check(!wire.out.some((m) => m.method === 'initialize'), 'connect', 'v2 pinned to 2026-07-28 sent initialize');
    // Over stdio the SDK probes on a short-lived sibling process: the session's own
    // pipe never carries server/discover.
    check(wire.out.some((m) => m.method === 'server/discover') === http, 'connect',
      `server/discover ${http ? 'not sent on' : 'sent on the session'} transport`);
    if (http) {
      check(transport.sessionId === undefined, 'connect', `stateless, but got session ${transport.sessionId}`);
      const probe = posts((b) => b.method === 'server/discover')[0];
      check(probe && probe.status === 200 && probe.headers.get('mcp-protocol-version') === STATELESS,
        'connect', `server/discover POST ${show(probe && { status: probe.status, headers: Object.fromEntries(probe.headers) })}`);
    }
    ok(`connect: protocol ${version} (getNegotiatedProtocolVersion, era modern, via server/discover${http ? '' : ' on a probe sibling'}), server ${client.getServerVersion()?.name ?? '?'}`);
  } else {
    // v1's Client keeps the negotiated version private: read it off the initialize
    // response on the wire (and, over HTTP, the transport's protocolVersion, which
    // becomes the MCP-Protocol-Version header).
    const { req, res } = wire.last('initialize');
    check(req?.params?.protocolVersion === STATEFUL, 'connect', `initialize offered ${show(req?.params?.protocolVersion)}`);
    const version = res?.result?.protocolVersion;
    check(version === STATEFUL, 'connect', `initialize answered ${show(res)}`);
    check(wire.out.some((m) => m.method === 'notifications/initialized'), 'connect', 'no notifications/initialized sent');
    check(client.getServerVersion()?.name === 'eagle', 'connect', `serverInfo ${show(client.getServerVersion())}`);
    let extra = '';
    if (http) {
      check(transport.protocolVersion === STATEFUL, 'connect', `transport.protocolVersion ${show(transport.protocolVersion)}`);
      check(/^[0-9a-f]{32}$/.test(transport.sessionId ?? ''), 'connect', `Mcp-Session-Id ${show(transport.sessionId)}`);
      extra = `, session ${transport.sessionId.slice(0, 8)}…`;
    }
    ok(`connect: protocol ${version} (initialize result on the wire${http ? ', transport.protocolVersion' : ''})${extra}`);
  }

  // 2. tools/list.
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  // core_ingest changes the store: only the server that owns it lists it (not stdio, a reader).
  const want = http ? [...TOOLS, 'core_ingest'] : TOOLS;
  check(show(names) === show([...want].sort()), 'tools/list', `tools ${show(names)}, want ${show(want)}`);
  if (http) {
    const ingestTool = tools.find((t) => t.name === 'core_ingest');
    check(ingestTool?.annotations?.readOnlyHint === false && ingestTool?.annotations?.destructiveHint === true, 'tools/list',
      `core_ingest annotations ${show(ingestTool?.annotations)}`);
  }
  for (const t of tools) {
    check(typeof t.description === 'string' && t.description.length > 20, 'tools/list', `${t.name}: description ${show(t.description)}`);
    check(t.inputSchema?.type === 'object' && t.inputSchema.$schema === SCHEMA_2020_12, 'tools/list',
      `${t.name}: inputSchema ${show(t.inputSchema, 200)}`);
    check(t.outputSchema?.type === 'object' && t.outputSchema.properties, 'tools/list', `${t.name}: outputSchema ${show(t.outputSchema, 200)}`);
  }
  const kbHeader = tools.find((t) => t.name === 'core_retrieve_text').inputSchema.properties.kb_name?.['x-mcp-header'];
  check(kbHeader === 'Kb-Name', 'tools/list', `core_retrieve_text kb_name x-mcp-header ${show(kbHeader)}`);
  if (v2) {
    const { res } = wire.last('tools/list');
    check(res?.result?.resultType === 'complete' && typeof res.result.ttlMs === 'number', 'tools/list',
      `raw result lacks resultType complete / ttlMs: ${show(res?.result && { ...res.result, tools: '…' })}`);
  }
  ok(`tools/list: ${tools.length} tools, each with description, inputSchema (object, 2020-12) and outputSchema`);

  // 3. The tools on the sample store.
  const call = async (name, args) => {
    try {
      return await client.callTool({ name, arguments: args });
    } catch (e) {
      throw new CheckFailed(`${name} ${show(args)}: the SDK threw ${e?.name ?? 'error'} (code ${e?.code}): ${e?.message}`);
    }
  };
  const text0 = (r) => (r?.content?.[0]?.type === 'text' ? r.content[0].text : undefined);
  const succeeded = (r, what) => {
    check(r.isError === false, what, `isError ${show(r.isError)}: ${show(r.content)}`);
    check(r.structuredContent && typeof r.structuredContent === 'object', what, `no structuredContent: ${show(r)}`);
    return r.structuredContent;
  };
  const failed = (r, what, mention) => {
    check(r.isError === true, what, `isError ${show(r.isError)}, want true: ${show(r)}`);
    const msg = text0(r);
    check(typeof msg === 'string' && msg.length > 0, what, `no text message: ${show(r.content)}`);
    if (mention) check(msg.includes(mention), what, `message ${show(msg)} does not name ${mention}`);
    return msg;
  };
  // The text names the hits: their count and each hit's [id].
  const namesHits = (r, sources, what) => {
    const t = text0(r);
    check(typeof t === 'string', what, `content[0] is not text: ${show(r.content)}`);
    check(new RegExp(`(^|\\n)${sources.length} hits? \\(`).test(t), what, `text does not count ${sources.length} hits: ${show(t, 200)}`);
    for (const s of sources) check(t.includes(`[${s.id}]`), what, `text does not name hit ${s.id}: ${show(t, 300)}`);
  };

  let what = 'core_retrieve_text';
  let r = await call('core_retrieve_text', { query: 'PD-1 blockade adverse events', top_k: 3 });
  let sc = succeeded(r, what);
  const retrieved = sc.sources;
  check(Array.isArray(retrieved) && retrieved.length >= 1 && retrieved.length <= 3, what, `sources ${show(retrieved, 300)}`);
  check(/pd-1/i.test(retrieved[0].text), what, `first hit does not mention PD-1: ${show(retrieved[0], 300)}`);
  check(retrieved.every((s, i) => s.rank === i + 1 && typeof s.score === 'number' && typeof s.id === 'string'), what,
    `hits lack rank/score/id: ${show(retrieved, 300)}`);
  namesHits(r, retrieved, what);
  if (v2) {
    const { res } = wire.last('tools/call');
    check(res?.result?.resultType === 'complete', what, `raw result lacks resultType complete: ${show(res, 300)}`);
  }
  ok(`core_retrieve_text: ${retrieved.length} hits, first ${retrieved[0].id} (${show(retrieved[0].text.slice(0, 50))}) mentions PD-1`);

  what = 'core_retrieve_visual';
  r = await call('core_retrieve_visual', { query: 'overview of the phases of the VESPA package', top_k: 3 });
  sc = succeeded(r, what);
  const images = sc.images;
  check(Array.isArray(images) && images.length >= 1 && images.length <= 3, what, `images ${show(images, 300)}`);
  check(images.every((i) => typeof i.image_id === 'string' && i.document_id === 'vespa-peerj.pdf' &&
    Number.isInteger(i.page) && ['page', 'figure'].includes(i.chunk_type) && typeof i.position === 'string' &&
    typeof i.score === 'number'), what, `an image lacks its ImageNode fields: ${show(images, 400)}`);
  ok(`core_retrieve_visual: ${images.length} tiles, first ${images[0].image_id} (${images[0].chunk_type}, page ${images[0].page})`);

  what = 'core_search';
  r = await call('core_search', { query: 'savolitinib plus osimertinib in MET-amplified NSCLC', explain: true, top_k: 3 });
  sc = succeeded(r, what);
  const searched = sc.sources;
  check(Array.isArray(searched) && searched.length >= 1 && searched.length <= 3, what, `sources ${show(searched, 300)}`);
  check(/savolitinib/i.test(searched[0].text), what, `first hit does not mention savolitinib: ${show(searched[0], 300)}`);
  check(sc.route && typeof sc.route === 'object' && typeof sc.route.source === 'string', what, `route ${show(sc.route, 300)}`);
  check(Array.isArray(sc.steps) && sc.steps.length > 0, what, `steps ${show(sc.steps, 300)}`);
  check(searched.every((s) => s.explain && typeof s.explain === 'object' && Object.keys(s.explain).length > 0), what,
    `a hit without explain: ${show(searched.map((s) => s.explain), 300)}`);
  check(text0(r)?.startsWith(`route: ${sc.route.source}\n`), what, `text does not start with the route: ${show(text0(r), 100)}`);
  namesHits(r, searched, what);
  ok(`core_search: ${searched.length} hits, first ${searched[0].id} mentions savolitinib; route ${sc.route.source}, ${sc.steps.length} steps, explain on every hit`);

  what = 'core_query';
  r = await call('core_query', { query: 'savolitinib plus osimertinib in MET-amplified NSCLC' });
  sc = succeeded(r, what);
  check(typeof sc.answer === 'string' && /savolitinib/i.test(sc.answer), what, `answer ${show(sc.answer, 300)}`);
  check(Array.isArray(sc.citations) && sc.citations.length >= 1, what, `citations ${show(sc.citations, 300)}`);
  check(sc.citations.every((c) => sc.sources[c.n - 1]?.id === c.id), what,
    `a citation that is not its source: ${show(sc.citations, 300)}`);
  check(text0(r)?.startsWith(sc.answer), what, `text does not start with the answer: ${show(text0(r), 100)}`);
  ok(`core_query: ${sc.mode} answer citing ${sc.citations.map((c) => `[${c.n}] ${c.id}`).join(', ')}`);
  // Over HTTP the server keeps the turn in a session the next call continues; over
  // stdio (a reader) there is none, and naming one is refused.
  if (opt.transport === 'http') {
    check(typeof sc.session_id === 'string' && sc.turn === 1, what, `session ${show(sc.session_id)} turn ${show(sc.turn)}`);
    r = await call('core_query', { query: 'and in EGFR-mutant NSCLC?', session_id: sc.session_id });
    const next = succeeded(r, what);
    check(next.session_id === sc.session_id && next.turn === 2, what,
      `continued session ${show(next.session_id)} turn ${show(next.turn)}`);
    ok(`core_query: session ${sc.session_id} continued to turn ${next.turn}`);
  } else {
    check(sc.session_id === null, what, `a reader kept session ${show(sc.session_id)}`);
    r = await call('core_query', { query: 'x', session_id: 's-0' });
    failed(r, what);
  }

  what = 'core_list_documents';
  r = await call('core_list_documents', { limit: 100 });
  sc = succeeded(r, what);
  // The sample's documents and the PDF; with the biomed plugin the ten compounds too.
  const minDocs = NS === 'biomed' ? 36 : 26;
  check(Number.isInteger(sc.total) && sc.total >= minDocs, what, `total ${show(sc.total)}, want >= ${minDocs}`);
  check(Array.isArray(sc.documents) && sc.documents.length === Math.min(sc.total, 100), what,
    `${sc.documents?.length} documents for total ${sc.total}`);
  const docIds = new Set(sc.documents.map((d) => d.document_id));
  for (const hit of [retrieved[0], searched[0]])
    check(docIds.has(hit.document_id), what, `document ${hit.document_id} of hit ${hit.id} is not listed`);
  if (NS === 'biomed') check(docIds.has('C001'), what, 'compound C001 (Imatinib) is not listed');
  check(sc.limit === 100 && sc.offset === 0, what, `limit/offset ${sc.limit}/${sc.offset}`);
  ok(`core_list_documents: total ${sc.total}, lists ${retrieved[0].document_id}, ${searched[0].document_id}` +
    (NS === 'biomed' ? ' and C001' : ''));

  // The biomed plugin's tools, when the server's namespace is biomed (exposure rule G3).
  let msg;
  if (NS === 'biomed') {
    what = 'biomed_query_entities';
    const sentence = 'imatinib and methotrexate in rheumatoid arthritis';
    r = await call('biomed_query_entities', { text: sentence });
    sc = succeeded(r, what);
    check(Array.isArray(sc.entities) && sc.entities.length > 0, what, `entities ${show(sc.entities)}`);
    for (const e of sc.entities)
      check(Number.isInteger(e.start) && Number.isInteger(e.end) && sentence.slice(e.start, e.end) === e.text, what,
        `span [${e.start}, ${e.end}) of ${show(e)} is ${show(sentence.slice(e.start, e.end))}`);
    const imatinib = sc.entities.find((e) => e.type === 'drug' && /^imatinib$/i.test(e.name));
    check(imatinib && imatinib.start === 0 && imatinib.end === 8, what, `no drug Imatinib at [0, 8): ${show(sc.entities)}`);
    ok(`biomed_query_entities: ${sc.entities.length} entities, drug ${imatinib.name} (${imatinib.id}) at [0, 8), every span matches`);

    what = 'biomed_retrieve_compounds name';
    r = await call('biomed_retrieve_compounds', { name: 'imatinib', k: 3 });
    sc = succeeded(r, what);
    check(sc.query_kind === 'name' && sc.query?.id === 'C001', what, `query ${show(sc.query)}, kind ${sc.query_kind}`);
    check(Array.isArray(sc.compounds) && sc.compounds.length === 3, what, `compounds ${show(sc.compounds, 300)}`);
    check(!sc.compounds.some((c) => c.id === 'C001' || /^imatinib$/i.test(c.name)), what, `Imatinib is among its neighbours: ${show(sc.compounds, 300)}`);
    const scores = sc.compounds.map((c) => c.score);
    check(scores.every((s, i) => s > 0 && s <= 1 && (i === 0 || s <= scores[i - 1])), what, `scores ${show(scores)} not descending in (0, 1]`);
    ok(`biomed_retrieve_compounds {name: imatinib}: query C001, neighbours ${sc.compounds.map((c) => `${c.name} ${c.score.toFixed(3)}`).join(', ')}`);

    what = 'biomed_retrieve_compounds smarts';
    r = await call('biomed_retrieve_compounds', { smarts: 'c1ccccc1C(=O)O', k: 10 });
    sc = succeeded(r, what);
    const ids = sc.compounds?.map((c) => c.id) ?? [];
    check(sc.query_kind === 'smarts' && ids.includes('C005'), what, `no Aspirin (C005): ${show(sc.compounds, 300)}`);
    check(!ids.includes('C007'), what, `Caffeine (C007) has no benzoic acid: ${show(sc.compounds, 300)}`);
    ok(`biomed_retrieve_compounds {smarts: c1ccccc1C(=O)O}: ${ids.join(', ')} (Aspirin, not Caffeine)`);

    what = 'biomed_retrieve_compounds bad smiles';
    r = await call('biomed_retrieve_compounds', { smiles: 'not a smiles' });
    msg = failed(r, what, 'SMILES');
    ok(`biomed_retrieve_compounds {smiles: "not a smiles"}: isError, ${show(msg)}`);
  }

  what = 'core_retrieve_text bad arguments';
  r = await call('core_retrieve_text', { query: '' });
  msg = failed(r, what, 'query');
  r = await call('core_retrieve_text', { top_k: 100000, query: 'x' });
  const msg2 = failed(r, what, 'top_k');
  ok(`core_retrieve_text bad arguments: isError, ${show(msg)}; ${show(msg2)}`);

  // kb_name carries x-mcp-header: over HTTP at 2026-07-28 the client mirrors it into
  // Mcp-Param-Kb-Name (Base64 for a non-ASCII value) and the server must accept it.
  what = 'core_retrieve_text kb_name';
  const kb = 'Ωmega-kb';
  r = await call('core_retrieve_text', { query: 'PD-1', kb_name: kb });
  check(r.isError === true || (r.isError === false && Array.isArray(r.structuredContent?.sources) && r.structuredContent.sources.length === 0),
    what, `an unknown knowledge base gave ${show(r, 300)}`);
  let kbNote = '';
  if (v2 && http) {
    const sent = posts((b) => b.method === 'tools/call' && b.params?.arguments?.kb_name === kb).at(-1);
    const h = sent?.headers.get('mcp-param-kb-name');
    const m = /^=\?base64\?(.*)\?=$/.exec(h ?? '');
    check(m && Buffer.from(m[1], 'base64').toString('utf8') === kb, what, `Mcp-Param-Kb-Name header ${show(h)}`);
    check(sent.headers.get('mcp-name') === 'core_retrieve_text' && sent.headers.get('mcp-method') === 'tools/call', what,
      `Mcp-Method/Mcp-Name ${sent.headers.get('mcp-method')}/${sent.headers.get('mcp-name')}`);
    kbNote = `, sent Mcp-Param-Kb-Name ${h}`;
  }
  ok(`core_retrieve_text {kb_name: ${kb}}: ${r.isError ? 'isError' : '0 hits'}${kbNote}`);

  what = 'unknown tool';
  r = await call('no_such_tool', { query: 'x' });
  msg = failed(r, what, 'no_such_tool');
  ok(`unknown tool: isError, ${show(msg)} (callTool resolved, no protocol error)`);

  // The JSON-RPC messages on the wire: at 2026-07-28 every request carries the _meta
  // envelope and every result says resultType "complete"; at 2025-11-25 neither.
  what = 'wire';
  const requests = wire.out.filter((m) => m.method && m.id !== undefined);
  const results = wire.in.filter((m) => 'result' in m);
  check(wire.in.every((m) => !('error' in m)), what, `error responses: ${show(wire.in.filter((m) => 'error' in m))}`);
  if (v2) {
    for (const m of requests)
      check(m.params?._meta?.[META_VERSION] === STATELESS && typeof m.params._meta[META_CAPABILITIES] === 'object', what,
        `${m.method} lacks the _meta envelope: ${show(m.params?._meta)}`);
    check(results.length === requests.length && results.every((m) => m.result.resultType === 'complete'), what,
      `results without resultType complete: ${show(results.filter((m) => m.result.resultType !== 'complete'), 300)}`);
  } else {
    check(requests.every((m) => m.params?._meta?.[META_VERSION] === undefined), what, 'a 2025-11-25 request carries the 2026 _meta envelope');
  }
  ok(`wire: ${requests.length} requests, ${results.length} results, no JSON-RPC errors${v2 ? `, each request with _meta protocolVersion ${STATELESS}, each result resultType complete` : ''}`);

  // The headers every HTTP request carried.
  if (http) {
    what = 'http headers';
    let getNote = '';
    const rpc = posts(() => true);
    check(rpc.length > 0 && rpc.every((e) => e.status === 200 || e.status === 202), what,
      `statuses ${show(rpc.map((e) => [e.body.method ?? 'response', e.status]))}`);
    if (v2) {
      for (const e of rpc) {
        check(e.headers.get('mcp-protocol-version') === STATELESS && e.headers.get('mcp-method') === e.body.method, what,
          `${e.body.method}: MCP-Protocol-Version ${e.headers.get('mcp-protocol-version')}, Mcp-Method ${e.headers.get('mcp-method')}`);
        check(!e.headers.has('mcp-session-id'), what, `${e.body.method} carried an Mcp-Session-Id`);
        check(e.body.params?._meta?.[META_VERSION] === STATELESS && typeof e.body.params._meta[META_CAPABILITIES] === 'object',
          what, `${e.body.method} lacks the _meta envelope: ${show(e.body.params?._meta)}`);
      }
    } else {
      for (const e of rpc.filter((x) => x.body.method !== 'initialize')) {
        check(e.headers.get('mcp-session-id') === transport.sessionId && e.headers.get('mcp-protocol-version') === STATEFUL, what,
          `${e.body.method}: Mcp-Session-Id ${e.headers.get('mcp-session-id')}, MCP-Protocol-Version ${e.headers.get('mcp-protocol-version')}`);
      }
      const init = rpc.find((e) => e.body.method === 'initialize');
      check(init?.resHeaders.get('mcp-session-id') === transport.sessionId, what, 'initialize answered no Mcp-Session-Id');
      // v1 tries to open the server-to-client SSE stream with a GET; /mcp has none
      // and must say so with 405, which the SDK takes as "no stream".
      const gets = exchanges.filter((e) => e.method === 'GET');
      check(gets.every((e) => e.status === 405), what, `GET /mcp answered ${show(gets.map((e) => e.status))}, want 405`);
      getNote = gets.length ? `; its GET for an SSE stream got ${gets.map((e) => e.status).join(', ')}` : '; no GET';
    }
    if (opt.token) check(rpc.every((e) => e.headers.get('authorization') === `Bearer ${opt.token}`), what, 'a request without the bearer token');
    ok(`http headers: ${rpc.length} POSTs, ${v2 ? `each with MCP-Protocol-Version ${STATELESS}, Mcp-Method and the _meta envelope, no session` : `each after initialize with the session id and MCP-Protocol-Version ${STATEFUL}${getNote}`}`);
  }

  // 4. Close.
  what = 'close';
  cleanup = async () => {};
  if (http && !v2) {
    const sessionId = transport.sessionId;
    await transport.terminateSession();
    const del = exchanges.find((e) => e.method === 'DELETE');
    check(del && del.headers.get('mcp-session-id') === sessionId && del.status === 200, what,
      `DELETE ${show(del && { status: del.status, session: del.headers.get('mcp-session-id') })}`);
    await client.close();
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': STATEFUL };
    if (opt.token) headers.Authorization = `Bearer ${opt.token}`;
    const res = await fetch(opt.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' }) });
    const body = await res.text();
    check(res.status === 404, what, `tools/list on the ended session: HTTP ${res.status} ${body}`);
    ok(`close: DELETE ended session ${sessionId.slice(0, 8)}… (200); tools/list with it afterwards: HTTP 404 ${body}`);
  } else if (http) {
    await client.close();
    check(!exchanges.some((e) => e.method === 'DELETE'), what, 'a stateless client sent DELETE');
    check(!exchanges.some((e) => e.method === 'GET'), what, 'a 2026-07-28 client opened a GET stream');
    ok(`close: stateless, no session to end (${exchanges.length} HTTP requests, all POST)`);
  } else {
    const t0 = Date.now();
    await client.close();
    const alive = () => {
      try {
        process.kill(childPid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 50 && alive(); ++i) await new Promise((res) => setTimeout(res, 100));
    check(childPid && !alive(), what, `eagle mcp (pid ${childPid}) still runs after close`);
    ok(`close: eagle mcp (pid ${childPid}) exited ${Date.now() - t0} ms after the client closed its stdin`);
  }
}

main().then(() => process.exit(0), fail);
