// Eagle web console: search with explanations, document browsing, upload and delete.
// Plain DOM, no framework, no build step. The page runs under a strict CSP
// (script-src 'self', style-src 'self'), so every node is built with createElement /
// text nodes — hit text never goes through innerHTML — and dynamic sizes are set
// through element.style (CSSOM), which the policy allows.
'use strict';

const $ = (id) => document.getElementById(id);
const TOKEN_KEY = 'eagle.console.token';
const POLL_MS = 500;
const DOCS_PAGE = 25;

const state = {
  terms: [],           // query terms of the last search, for highlighting
  docsOffset: 0,
  docsTotal: 0,
  tasksLoaded: false,  // recent tasks are fetched once, on the first visit to Documents
  shownTasks: new Set(),
  seenSourceTypes: new Set(),
  cameFromApp: false,  // whether "Back" may use history.back()
};

// ---------------------------------------------------------------- DOM helpers

// el('span', {className: 'x', text: 'y', dataset: {...}, 'aria-label': '...'}, child...)
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'className') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key === 'onclick') node.addEventListener('click', value);
    else if (key in node && typeof value !== 'string') node[key] = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const fmt = (x, digits = 3) =>
  typeof x !== 'number' ? String(x) : Number.isInteger(x) ? String(x) : x.toFixed(digits);

function fmtDate(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso || '';
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// newest('search') returns a check that stays true while no later 'search' started:
// a slow response must not overwrite the answer to a newer request.
const generations = {};
function newest(kind) {
  const n = (generations[kind] = (generations[kind] || 0) + 1);
  return () => generations[kind] === n;
}

// ---------------------------------------------------------------- API and auth

class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code || (status ? `http_${status}` : 'network');
    this.field = e.field || '';
  }
}

// A field error that the console finds before asking the server.
const InputError = (inputId, message) =>
  Object.assign(new ApiError(400, { error: { code: 'invalid_input', message } }), { inputId });

// Every call goes through here: it adds the bearer token when one is stored and, on a
// 401, asks the user for a token and retries (FormData bodies can be sent again).
async function api(path, { method = 'GET', json, form } = {}) {
  for (;;) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    const headers = { Accept: 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (json !== undefined) headers['Content-Type'] = 'application/json';
    // A FormData body gets its multipart Content-Type (with the boundary) from the browser.
    const body = json !== undefined ? JSON.stringify(json) : form;
    let res;
    try {
      res = await fetch(path, { method, headers, body });
    } catch (err) {
      throw new ApiError(0, { error: { code: 'network', message: `Cannot reach the server (${err.message}).` } });
    }
    if (res.status === 401) {
      await askToken(token ? 'The stored token was refused. Enter another one.' : 'This server needs an access token.');
      continue;
    }
    const text = await res.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch { /* not JSON: reported below */ }
    if (!res.ok) throw new ApiError(res.status, data || { error: { message: text.slice(0, 300) || res.statusText } });
    return data;
  }
}

let tokenPrompt = null; // concurrent 401s share one dialog

function askToken(message) {
  if (tokenPrompt) return tokenPrompt;
  const dialog = $('auth-dialog');
  tokenPrompt = new Promise((resolve, reject) => {
    $('auth-message').textContent = message;
    dialog.returnValue = '';
    dialog.addEventListener('close', () => {
      tokenPrompt = null;
      const value = $('auth-token').value.trim();
      $('auth-token').value = '';
      if (dialog.returnValue === 'ok' && value) {
        sessionStorage.setItem(TOKEN_KEY, value);
        updateSignOut();
        resolve();
      } else {
        reject(new ApiError(401, { error: { code: 'unauthenticated', message: 'An access token is needed to use this server.' } }));
      }
    }, { once: true });
    dialog.showModal();
    $('auth-token').focus();
  });
  return tokenPrompt;
}

const updateSignOut = () => { $('sign-out').hidden = !sessionStorage.getItem(TOKEN_KEY); };

function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
  updateSignOut();
  location.reload();
}

// Shows an API or input error in one of the page's alert boxes.
function showError(box, err, context) {
  box.hidden = false;
  const where = err.field ? ` (field ${err.field})` : '';
  box.replaceChildren(
    el('strong', { text: context ? `${context}: ` : '' }),
    el('code', { text: err.code }), where, ' — ', err.message || String(err));
}

const clearError = (box) => { box.hidden = true; box.replaceChildren(); };

// ---------------------------------------------------------------- highlighting

const STOP_WORDS = new Set((
  'a about an and any are as at be been but by can could did do does for from had has have how i if in into is it ' +
  'its may me my no not of on or our should so than that the their them then there these they this those to was ' +
  'we were what when where which while who whom why will with would you your ' +
  'label labels' // in a drug-label corpus these name the document kind, marking them is noise
).split(' '));

// The query's words, lower-cased, without stop words; hyphenated terms (PD-1) stay whole.
function queryTerms(query) {
  const words = query.toLowerCase().split(/[^\p{L}\p{N}-]+/u)
    .map((w) => w.replace(/^-+|-+$/g, ''))
    .filter((w) => w.length > 1 && !STOP_WORDS.has(w));
  return [...new Set(words)];
}

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// A light stemmer: "events" also marks "event", "infections" marks "infection". The
// engine stems its terms too, so the marks should roughly follow what matched.
function termPattern(term) {
  if (!/^\p{L}+$/u.test(term) || term.length < 4) return escapeRegExp(term);
  const stem = term.replace(/(ing|ed|es|s)$/u, '');
  return escapeRegExp(stem.length >= 4 ? stem : term) + '\\p{L}{0,4}';
}

function highlightRegex(terms) {
  if (!terms.length) return null;
  const alternatives = [...terms].sort((a, b) => b.length - a.length).map(termPattern);
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives.join('|')})(?![\\p{L}\\p{N}])`, 'giu');
}

// Appends `text` to `parent` as text nodes with <mark> around matches: never innerHTML.
const highlighted = (node, text, regex) => { appendHighlighted(node, text, regex); return node; };

function appendHighlighted(parent, text, regex) {
  if (!regex) { parent.append(text); return; }
  let last = 0;
  for (const m of text.matchAll(regex)) {
    if (m.index > last) parent.append(text.slice(last, m.index));
    parent.append(el('mark', { text: m[0] }));
    last = m.index + m[0].length;
  }
  if (last < text.length) parent.append(text.slice(last));
}

// ---------------------------------------------------------------- search request

const splitList = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
const asFacetValue = (list) => (list.length === 1 ? list[0] : list);
const toScalar = (v) => (/^-?\d+$/.test(v) ? Number(v) : v);

// "2016", "2015, 2016" or "2010-2015" -> integers (the year facet is an integer field).
function parseYears(text) {
  const years = [];
  for (const part of text.split(/[\s,]+/).filter(Boolean)) {
    const range = part.match(/^(\d{4})\s*[-–]\s*(\d{4})$/);
    if (range) {
      const [from, to] = [Number(range[1]), Number(range[2])];
      if (to < from || to - from >= 100) throw InputError('facet-year', `Year range ${part} is reversed or longer than 100 years.`);
      for (let y = from; y <= to; y++) years.push(y);
    } else if (/^\d{1,4}$/.test(part)) {
      years.push(Number(part));
    } else {
      throw InputError('facet-year', `"${part}" is not a year (use 2016, 2015, 2016 or 2010-2015).`);
    }
  }
  return years;
}

// "chunk_type=table; parent_section=a,b" -> {chunk_type: 'table', parent_section: ['a','b']}
function parseOtherFacets(text) {
  const facets = {};
  for (const pair of text.split(/[;\n]+/).map((s) => s.trim()).filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw InputError('facet-other', `"${pair}" should look like field=value.`);
    const values = splitList(pair.slice(eq + 1)).map(toScalar);
    if (!values.length) throw InputError('facet-other', `"${pair}" has no value.`);
    facets[pair.slice(0, eq).trim()] = asFacetValue(values);
  }
  return facets;
}

function buildSearchRequest() {
  const query = $('q').value.trim();
  if (!query) throw InputError('q', 'Type a question to search for.');
  const topK = Number($('top-k').value || 10);
  if (!Number.isInteger(topK) || topK < 1 || topK > 1000) throw InputError('top-k', 'Top k must be a whole number from 1 to 1000.');
  const body = { query, top_k: topK, route_mode: $('route-mode').value, explain: $('explain').checked };
  if ($('ns').value) body.plugin_namespace = $('ns').value;
  if ($('kb').value) body.kb_name = $('kb').value;

  const facets = parseOtherFacets($('facet-other').value);
  const sourceTypes = splitList($('facet-source-type').value);
  if (sourceTypes.length) facets.source_type = asFacetValue(sourceTypes);
  const years = parseYears($('facet-year').value);
  if (years.length) facets.year = asFacetValue(years);
  if (Object.keys(facets).length) body.facets = facets;

  const scope = { document_ids: splitList($('scope-docs').value), tags: splitList($('scope-tags').value) };
  for (const key of Object.keys(scope)) if (!scope[key].length) delete scope[key];
  if (Object.keys(scope).length) body.scope_filter = scope;
  if ($('filter-expr').value.trim()) body.filter = $('filter-expr').value.trim();
  return body;
}

// Server field names -> the input that sets them, to point at the culprit.
const FIELD_INPUTS = {
  query: 'q', top_k: 'top-k', kb_name: 'kb', plugin_namespace: 'ns', route_mode: 'route-mode',
  filter: 'filter-expr', 'facets.source_type': 'facet-source-type', 'facets.year': 'facet-year',
  facets: 'facet-other', 'scope_filter.document_ids': 'scope-docs', 'scope_filter.tags': 'scope-tags',
};

function markInvalid(inputId) {
  document.querySelectorAll('[aria-invalid="true"]').forEach((n) => n.removeAttribute('aria-invalid'));
  const input = inputId && $(inputId);
  if (!input) return;
  input.setAttribute('aria-invalid', 'true');
  if (input.closest('#advanced')) $('advanced').open = true;
  input.focus();
}

// ---------------------------------------------------------------- search results

async function runSearch() {
  const current = newest('search');
  const box = $('search-error');
  clearError(box);
  markInvalid(null);
  let body;
  try {
    body = buildSearchRequest();
  } catch (err) {
    showError(box, err);
    markInvalid(err.inputId);
    return;
  }
  $('search-button').disabled = true;
  $('hits').setAttribute('aria-busy', 'true');
  $('search-status').textContent = 'Searching…';
  try {
    const data = await api('/search', { method: 'POST', json: body });
    if (!current()) return;
    state.terms = queryTerms(body.query);
    renderResults(data, body);
  } catch (err) {
    if (!current()) return;
    $('search-status').textContent = '';
    $('hits').replaceChildren();
    $('query-details').hidden = true;
    showError(box, err, 'Search failed');
    markInvalid(err.inputId || FIELD_INPUTS[err.field] || (err.field.startsWith('facets') ? 'facet-other' : null));
  } finally {
    if (current()) {
      $('search-button').disabled = false;
      $('hits').removeAttribute('aria-busy');
    }
  }
}

function renderResults(data, request) {
  const sources = data.sources || [];
  const collections = (data.steps || []).find((s) => s.name === 'route')?.collections || [];
  $('search-status').textContent =
    `${sources.length} hit${sources.length === 1 ? '' : 's'} in ${fmt(data.took_ms, 1)} ms` +
    (data.evidence ? ` · evidence ${data.evidence.level} (${fmt(data.evidence.score, 2)})` : '') +
    ` · route ${data.route?.source || '?'}${collections.length ? ` → ${collections.join(', ')}` : ''}` +
    (data.scope_capped ? ' · scope capped at 500 documents' : '') +
    activeFilters(request).map((f) => ` · ${f}`).join('');
  renderQueryDetails(data);
  const regex = highlightRegex(state.terms);
  const scales = explainScales(sources);
  const list = $('hits');
  if (!sources.length) {
    list.replaceChildren(emptyState(request));
    return;
  }
  list.replaceChildren(...sources.map((s) => renderHit(s, regex, scales)));
  for (const s of sources) if (s.metadata?.source_type) rememberSourceType(s.metadata.source_type);
}

function activeFilters(request) {
  const filters = [];
  if (request.kb_name) filters.push(`kb ${request.kb_name}`);
  for (const [k, v] of Object.entries(request.facets || {})) filters.push(`${k} = ${[].concat(v).join(', ')}`);
  if (request.scope_filter) filters.push('a document/tag scope');
  if (request.filter) filters.push(`filter ${request.filter}`);
  return filters;
}

function emptyState(request) {
  const filters = activeFilters(request);
  return el('li', { className: 'empty', dataset: { testid: 'no-hits' } },
    el('strong', { text: 'No hits.' }), ' ',
    filters.length ? `Active filters: ${filters.join('; ')}. Try removing some.` : 'Try other words or another namespace.');
}

function rememberSourceType(value) {
  if (state.seenSourceTypes.has(value)) return;
  state.seenSourceTypes.add(value);
  $('source-type-values').append(el('option', { value }));
}

// Metadata names that the engine's chunkers use for "where in the document".
function sectionPath(meta) {
  const raw = meta.path || meta.section_path || meta.parent_section || '';
  const text = Array.isArray(raw) ? raw.join(' / ') : String(raw);
  if (!text) return [];
  return (text.includes(' / ') ? text.split(' / ') : text.split('/')).map((s) => s.trim()).filter(Boolean);
}

// A heading for a document (a registry row) or a hit (its chunk metadata). SPL labels
// have a long boilerplate title ("These highlights do not include…"); then the drug
// names read better: the registry name is "title | product | generic…", and biomed
// chunks carry primary_drugs.
function docLabel(doc, fallback) {
  const full = doc.document_name || doc.title || doc.name || fallback || '(untitled)';
  const names = Array.isArray(doc.primary_drugs) ? doc.primary_drugs : (doc.name || '').split(' | ').slice(1);
  const seen = new Set();
  const unique = names.map((n) => n.trim()).filter((n) => n && !seen.has(n.toLowerCase()) && seen.add(n.toLowerCase()));
  if (full.length <= 80 || !unique.length) return { label: full, full };
  return { label: unique.map((n) => n.charAt(0).toUpperCase() + n.slice(1)).join(' · '), full };
}

// Chunk texts repeat their heading (or the document title) on the first line; the
// card already shows both, so that line is dropped.
function withoutHeading(text, headings) {
  const nl = text.indexOf('\n');
  if (nl < 0) return text;
  const first = text.slice(0, nl).trim();
  return headings.some((h) => h && h.trim() === first) ? text.slice(nl + 1) : text;
}
const isTable = (meta) => meta.chunk_type === 'table' || meta.type === 'table';

function renderHit(source, regex, scales) {
  const meta = source.metadata || {};
  const docId = source.document_id;
  const { label: title, full: fullTitle } = docLabel(meta, docId || source.id);
  const path = sectionPath(meta);
  const showPath = path.length && path.join(' / ') !== title;
  const explainId = `explain-${source.rank}`;

  const li = el('li', {
    className: 'hit card',
    dataset: {
      testid: 'hit', rank: source.rank, documentId: docId || '', collection: source.collection,
      sourceType: meta.source_type ?? '', year: meta.year ?? '',
    },
  });
  const head = el('div', { className: 'hit-head' },
    el('span', { className: 'rank', text: `#${source.rank}` }),
    el('h3', { className: 'hit-title', title: fullTitle },
      highlighted(docId ? el('a', { href: docHash(docId, source.id), className: 'doc-link', dataset: { testid: 'hit-doc' } })
        : el('span'), title, regex)),
    el('span', { className: 'score', title: 'final score', text: `score ${fmt(source.score)}` }));

  const chips = el('div', { className: 'chips' },
    el('span', { className: 'chip collection', title: 'collection', text: source.collection }),
    meta.source_type && facetChip('source_type', meta.source_type),
    meta.year != null && facetChip('year', meta.year),
    meta.chunk_type && el('span', { className: `chip${isTable(meta) ? ' table' : ''}`, text: meta.chunk_type }),
    docId && el('code', { className: 'doc-id', title: 'document id', text: docId }));

  const text = highlighted(el(isTable(meta) ? 'pre' : 'p', { className: 'hit-text', dataset: { testid: 'hit-text' } }),
    withoutHeading(source.text || '', [fullTitle, path[path.length - 1]]), regex);

  const actions = el('div', { className: 'hit-actions' });
  let panel = null;
  if (source.explain) {
    panel = el('div', { className: 'explain', id: explainId, hidden: true, dataset: { testid: 'explain' } });
    const toggle = el('button', {
      type: 'button', className: 'secondary small', text: 'Explain', 'aria-expanded': 'false', 'aria-controls': explainId,
      dataset: { testid: 'explain-toggle' }, onclick: () => toggleExplain(toggle, panel, source.explain, scales),
    });
    actions.append(toggle);
  }
  li.append(head, chips);
  if (showPath) li.append(breadcrumb(path));
  if (source.image?.image_id && source.image.stored) li.append(imageThumb(source.image.image_id, title));
  li.append(text, actions);
  if (panel) li.append(panel);
  clampLongText(text, actions);
  return li;
}

// An image hit's picture: GET /images/{id} with the token (an <img src> would carry
// none), shown as a data: URI (the CSP allows img-src 'self' data:).
function imageThumb(imageId, title) {
  const img = el('img', { className: 'thumb', alt: `image of ${title}`, dataset: { testid: 'hit-image' } });
  (async () => {
    try {
      const token = sessionStorage.getItem(TOKEN_KEY);
      const res = await fetch(`/images/${encodeURIComponent(imageId)}`,
        { headers: token ? { Authorization: `Bearer ${token}` } : {} });
      if (!res.ok) return;
      const blob = await res.blob();
      const reader = new FileReader();
      reader.onload = () => { img.src = reader.result; };
      reader.readAsDataURL(blob);
    } catch { /* no picture: the hit's text stays */ }
  })();
  return img;
}

// A chip that, clicked, filters the search by its value.
function facetChip(field, value) {
  const onclick = () => {
    $(field === 'year' ? 'facet-year' : 'facet-source-type').value = String(value);
    runSearch();
  };
  return el('button', {
    type: 'button', className: 'chip facet', text: String(value), title: `Filter by ${field} = ${value}`,
    dataset: { testid: `chip-${field}` }, onclick,
  });
}

function breadcrumb(parts) {
  const nav = el('nav', { className: 'breadcrumb', 'aria-label': 'Section', dataset: { testid: 'hit-path' } });
  parts.forEach((p, i) => {
    if (i) nav.append(el('span', { className: 'sep', 'aria-hidden': 'true', text: '›' }));
    nav.append(el('span', { text: p }));
  });
  return nav;
}

// Long chunks (drug-label sections) are folded to a few lines, with a button to unfold.
function clampLongText(textNode, actions) {
  if ((textNode.textContent || '').length < 700) return;
  textNode.classList.add('clamped');
  const more = el('button', { type: 'button', className: 'link-button', text: 'Show all', 'aria-expanded': 'false', onclick: () => {
    const open = !textNode.classList.toggle('clamped');
    more.textContent = open ? 'Show less' : 'Show all';
    more.setAttribute('aria-expanded', String(open));
  } });
  actions.append(more);
}

// ---------------------------------------------------------------- explain charts

// Explain objects are free-form. Seen shapes: a retrieval leg {rank, score}
// ("bm25:eagle_text", "dense:eagle_text"); "rrf" {leg: {rank, contribution}};
// rerank terms {name: number | string} ("tier2"); anything else is shown as text.
const isLeg = (v) => v && typeof v === 'object' && (typeof v.score === 'number' || typeof v.contribution === 'number');

// Bars of one leg share a scale across the whole result list, so widths compare hits.
function explainScales(sources) {
  const max = {};
  const bump = (key, value) => { max[key] = Math.max(max[key] || 0, Math.abs(value)); };
  for (const s of sources) {
    for (const [key, value] of Object.entries(s.explain || {})) {
      if (isLeg(value)) bump(key, value.score ?? value.contribution);
      else if (value && typeof value === 'object') {
        for (const [sub, v] of Object.entries(value)) {
          if (isLeg(v)) bump(`${key}/${sub}`, v.contribution ?? v.score);
          else if (typeof v === 'number') bump(`${key}.${sub}`, v);
        }
      }
    }
  }
  return max;
}

function toggleExplain(button, panel, explain, scales) {
  const open = panel.hidden;
  if (open && !panel.childElementCount) panel.append(...renderExplain(explain, scales));
  panel.hidden = !open;
  button.setAttribute('aria-expanded', String(open));
  button.textContent = open ? 'Hide explanation' : 'Explain';
}

function renderExplain(explain, scales) {
  const legs = [];
  const groups = [];
  for (const [key, value] of Object.entries(explain)) {
    if (isLeg(value)) legs.push(legRow(key, value, scales[key]));
    else if (value && typeof value === 'object') groups.push(explainGroup(key, value, scales));
    else groups.push(el('p', { className: 'explain-note' }, el('strong', { text: `${key}: ` }), String(value)));
  }
  const out = [];
  if (legs.length) out.push(chartSection('Retrieval legs', legs));
  const terms = groups.some((g) => g.querySelector('[data-testid="explain-term"]'));
  out.push(...groups, el('p', { className: 'chart-caption', text: 'Leg bars are scaled to the largest score of that leg ' +
    `among the hits shown${terms ? '; rerank terms to 1 (or their largest value)' : ''}.` }));
  return out;
}

function chartSection(title, rows, extra = []) {
  return el('section', { className: 'chart' },
    el('h4', { text: title }), ...extra,
    el('div', { className: 'chart-rows', role: 'table', 'aria-label': title }, rows));
}

// "bm25:eagle_text" -> "bm25 · eagle_text"
const legLabel = (key) => key.replace(':', ' · ');

// A leg row: label, rank, bar and score (or RRF contribution).
function legRow(key, leg, max) {
  const value = leg.score ?? leg.contribution;
  return chartRow('explain-leg', legLabel(key), leg.rank != null ? `rank ${leg.rank}` : '', value, max || Math.abs(value) || 1);
}

function chartRow(testid, label, rank, value, max) {
  return el('div', { className: 'chart-row', role: 'row', dataset: { testid, key: label } },
    el('span', { className: 'chart-label', role: 'rowheader', text: label }),
    el('span', { className: 'chart-rank', role: 'cell', text: rank }),
    bar(value, max),
    el('span', { className: 'chart-value', role: 'cell', text: fmt(value) }));
}

// One object of the explanation: nested legs (rrf), numeric terms (rerank) and notes.
function explainGroup(key, obj, scales) {
  const rows = [];
  const notes = [];
  for (const [sub, v] of Object.entries(obj)) {
    if (isLeg(v)) rows.push(legRow(`${key} ← ${sub}`, v, scales[`${key}/${sub}`]));
    else if (typeof v === 'number') rows.push(chartRow('explain-term', sub, '', v, Math.max(1, scales[`${key}.${sub}`] || 0)));
    else notes.push(el('span', { className: 'chip' }, `${sub}: `, typeof v === 'object' ? JSON.stringify(v) : String(v)));
  }
  const title = key === 'rrf' ? 'Fusion (reciprocal rank)' : key === 'tier2' ? 'Rerank terms (tier 2)' : key.replace(/_/g, ' ');
  const extra = notes.length ? [el('div', { className: 'chips' }, notes)] : [];
  if (!rows.length) return el('section', { className: 'chart' }, el('h4', { text: title }), ...extra);
  return chartSection(title, rows, extra);
}

// A horizontal bar (decorative: the number beside it carries the value).
function bar(value, max) {
  const track = el('span', { className: 'bar', role: 'cell', 'aria-hidden': 'true' });
  const fill = el('span', { className: `bar-fill${value < 0 ? ' negative' : ''}` });
  const pct = max > 0 ? Math.min(100, (Math.abs(value) / max) * 100) : 0;
  fill.style.width = `${Math.max(pct, value ? 1.5 : 0)}%`;
  track.append(fill);
  return track;
}

// Route decision, steps and audit events of the last search.
function renderQueryDetails(data) {
  const details = $('query-details');
  const route = data.route || {};
  const audits = data.audits || [];
  details.hidden = false;
  details.querySelector('summary').textContent =
    `Route: ${route.source || '?'} · ${(route.plans || []).length} plan(s)` + (data.audits ? ` · ${audits.length} audit event(s)` : '');

  const plans = el('div', { className: 'table-wrap' }, el('table', { className: 'plans', dataset: { testid: 'route-plans' } },
    el('thead', {}, el('tr', {}, ['collection', 'encoder', 'top k', 'hybrid', 'filter'].map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, (route.plans || []).map((p) => el('tr', {},
      el('td', { text: p.collection }),
      // A stand-in says what runs in the slot: its vectors are not the named model's.
      el('td', { text: p.stand_in ? `${p.encoder} (stand-in: ${p.stand_in})` : p.encoder }), el('td', { text: p.top_k }),
      el('td', { text: p.hybrid ? 'yes' : 'no' }), el('td', {}, p.filter ? el('code', { text: p.filter }) : '—'))))));

  // Each hint, step and audit is a free-form object: "name: k = v, k = v".
  const item = (name, obj, skip) => el('li', {}, el('strong', { text: `${name}: ` }),
    typeof obj === 'object' ? objectText(obj, skip) : String(obj));
  const list = (title, items, testid) => el('div', {}, el('h4', { text: title }),
    items.length ? el('ul', { className: 'kv', dataset: { testid } }, items) : el('p', { className: 'muted', text: 'none' }));
  $('query-details-body').replaceChildren(
    el('p', { dataset: { testid: 'route-source' } }, 'Decided by ', el('code', { text: route.source || '?' })),
    plans,
    list('Hints', Object.entries(route.hints || {}).map(([k, v]) => item(k, v)), 'hints'),
    list('Steps', (data.steps || []).map((st) => item(st.name, st, 'name')), 'steps'),
    data.audits ? list('Audit events', audits.map((a) => item(a.audit || 'event', a, 'audit')), 'audits')
      : el('p', { className: 'muted', text: 'Turn on Explain to see audit events.' }));
}

const objectText = (obj, skip) => Object.entries(obj).filter(([k]) => k !== skip)
  .map(([k, v]) => `${k} = ${typeof v === 'object' ? JSON.stringify(v) : fmt(v)}`).join(', ');

// ---------------------------------------------------------------- catalog (KBs, tags)

async function refreshCatalog() {
  try {
    const [kbs, tags] = await Promise.all([api('/knowledge_bases'), api('/tags')]);
    const named = (kbs.knowledge_bases || []).filter((k) => k.kb_name);
    fillKbSelect($('kb'), named);
    // The listed KB may be gone (its last document deleted): list them all again.
    if (!fillKbSelect($('docs-kb'), named) && !$('view-documents').hidden) loadDocuments();
    $('kb-values').replaceChildren(...named.map((k) => el('option', { value: k.kb_name })));
    $('tag-values').replaceChildren(...(tags.tags || []).map((t) => el('option', { value: t.tag, label: `${t.tag} (${t.documents})` })));
  } catch (err) {
    console.warn('catalog', err.message);
  }
}

// Refills a KB select, keeping the current choice when it still exists (returns whether it did).
function fillKbSelect(select, kbs) {
  const current = select.value;
  select.replaceChildren(el('option', { value: '', text: 'all' }),
    ...kbs.map((k) => el('option', { value: k.kb_name, text: `${k.kb_name} (${k.documents})` })));
  const kept = !current || kbs.some((k) => k.kb_name === current);
  select.value = kept ? current : '';
  return kept;
}

// ---------------------------------------------------------------- documents list

async function loadDocuments() {
  const params = new URLSearchParams({ limit: DOCS_PAGE, offset: state.docsOffset });
  if ($('docs-kb').value) params.set('kb_name', $('docs-kb').value);
  if ($('docs-ns').value) params.set('plugin_namespace', $('docs-ns').value);
  clearError($('docs-error'));
  const current = newest('documents');
  $('docs-body').setAttribute('aria-busy', 'true');
  try {
    const data = await api(`/documents?${params}`);
    if (!current()) return;
    if (data.offset > 0 && data.offset >= data.total) { // the last page emptied: step back
      state.docsOffset = Math.max(0, data.total - DOCS_PAGE);
      return loadDocuments();
    }
    state.docsTotal = data.total;
    const rows = data.documents.map(docRow);
    $('docs-body').replaceChildren(...(rows.length ? rows
      : [el('tr', {}, el('td', { colSpan: 8, className: 'empty',
        text: params.has('kb_name') || params.has('plugin_namespace') ? 'No documents match these filters.' : 'No documents yet: upload some above.' }))]));
    for (const d of data.documents) if (d.source_type) rememberSourceType(d.source_type);
    updatePager(data.documents.length);
  } catch (err) {
    if (current()) showError($('docs-error'), err, 'Could not list documents');
  } finally {
    if (current()) $('docs-body').removeAttribute('aria-busy');
  }
}

function updatePager(shown) {
  const from = state.docsTotal ? state.docsOffset + 1 : 0;
  $('docs-range').textContent = `${from}–${state.docsOffset + shown} of ${state.docsTotal}`;
  $('docs-prev').disabled = state.docsOffset === 0;
  $('docs-next').disabled = state.docsOffset + DOCS_PAGE >= state.docsTotal;
}

function docRow(doc) {
  const { label: name, full } = docLabel(doc);
  const del = el('button', {
    type: 'button', className: 'danger-outline small', text: 'Delete', 'aria-label': `Delete ${name}`,
    dataset: { testid: 'doc-delete' }, onclick: () => deleteDocument(doc, row, del),
  });
  const row = el('tr', { dataset: { testid: 'doc-row', documentId: doc.document_id } },
    el('td', { className: 'doc-name' },
      el('a', { href: docHash(doc.document_id), className: 'doc-link', text: name, title: full }),
      doc.file_name ? el('div', { className: 'muted small', text: doc.file_name }) : ''),
    el('td', {}, el('code', { text: doc.document_id })),
    el('td', { text: doc.kb_name || '—' }),
    el('td', { text: doc.plugin_namespace }),
    el('td', { text: doc.source_type || '—' }),
    el('td', { text: doc.year ?? '—' }),
    el('td', { className: 'nowrap', text: fmtDate(doc.created_at) }),
    el('td', {}, del));
  return row;
}

async function deleteDocument(doc, row, button) {
  const name = docLabel(doc).label;
  const ok = await confirmDialog(`Delete “${name}” (${doc.document_id})? Its chunks are removed from every collection; this cannot be undone.`);
  if (!ok) { button.focus(); return; }
  button.disabled = true;
  row.classList.add('removing');
  try {
    const res = await api(`/documents/${encodeURIComponent(doc.document_id)}`, { method: 'DELETE' });
    row.remove();
    state.docsTotal = Math.max(0, state.docsTotal - 1);
    announce(`Deleted ${res.document_id} (${res.deleted_chunks} chunk${res.deleted_chunks === 1 ? '' : 's'}).`);
    if (!$('docs-body').childElementCount) loadDocuments();
    else updatePager($('docs-body').childElementCount);
    refreshCatalog();
  } catch (err) {
    row.classList.remove('removing');
    button.disabled = false;
    showError($('docs-error'), err, `Could not delete ${doc.document_id}`);
  }
}

const announce = (message) => { $('docs-notice').textContent = message; };

// Resolves true when the user confirms in the page's own modal dialog.
function confirmDialog(message) {
  const dialog = $('confirm-dialog');
  $('confirm-message').textContent = message;
  dialog.returnValue = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.showModal();
    dialog.querySelector('[value="cancel"]').focus(); // the safe choice has the focus
  });
}

// ---------------------------------------------------------------- upload and tasks

async function submitUpload(event) {
  event.preventDefault();
  const box = $('upload-error');
  clearError(box);
  const files = [...$('upload-files').files];
  if (!files.length) {
    showError(box, InputError('upload-files', 'Choose one or more files to upload.'));
    $('upload-files').focus();
    return;
  }
  const form = new FormData();
  for (const f of files) form.append('file', f, f.name);
  const kb = $('upload-kb').value.trim();
  if (kb) form.append('kb_name', kb);
  form.append('plugin_namespace', $('upload-ns').value);
  if ($('upload-format').value !== 'auto') form.append('format', $('upload-format').value);
  if ($('upload-skip-bad').checked) form.append('skip_bad', 'true');

  $('upload-button').disabled = true;
  try {
    const accepted = await api('/ingest', { method: 'POST', form });
    const label = files.map((f) => f.name).join(', ') + (kb ? ` → ${kb}` : '');
    $('upload-files').value = '';
    trackTask(accepted.task_id, label, accepted);
  } catch (err) {
    showError(box, err, 'Upload refused');
  } finally {
    $('upload-button').disabled = false;
  }
}

function trackTask(id, label, initial) {
  if (state.shownTasks.has(id)) return;
  state.shownTasks.add(id);
  const li = el('li', { className: 'task', dataset: { testid: 'task', taskId: id } });
  li.append(
    el('div', { className: 'task-head' },
      el('strong', { text: `Task ${id}` }), el('span', { className: 'muted', text: label }),
      el('span', { className: 'badge', dataset: { testid: 'task-state' } })),
    el('progress', { max: 1, 'aria-label': `Progress of task ${id}` }),
    el('div', { className: 'task-detail', dataset: { testid: 'task-detail' } }));
  $('tasks').prepend(li);
  renderTask(li, { state: initial.state || 'queued', progress: { done: 0, total: 0 } });
  if (initial.state === 'succeeded' || initial.state === 'failed') renderTask(li, initial);
  else pollTask(id, li);
}

async function pollTask(id, li) {
  for (;;) {
    let task;
    try {
      task = await api(`/tasks/${encodeURIComponent(id)}`);
    } catch (err) {
      renderTask(li, { state: 'failed', progress: {}, error: { code: err.code, message: `Lost track of the task: ${err.message}` } });
      return;
    }
    renderTask(li, task);
    if (task.state === 'succeeded' || task.state === 'failed') {
      if (task.state === 'succeeded') { loadDocuments(); refreshCatalog(); }
      return;
    }
    await sleep(POLL_MS);
  }
}

function renderTask(li, task) {
  li.dataset.state = task.state;
  const badge = li.querySelector('[data-testid="task-state"]');
  badge.textContent = task.state;
  badge.className = `badge state-${task.state}`;
  const { done = 0, total = 0 } = task.progress || {};
  const progress = li.querySelector('progress');
  if (task.state === 'succeeded') Object.assign(progress, { max: 1, value: 1 });
  else if (total > 0) Object.assign(progress, { max: total, value: done });
  else if (task.state === 'failed') Object.assign(progress, { max: 1, value: 0 });
  else progress.removeAttribute('value'); // indeterminate until the total is known

  const detail = li.querySelector('[data-testid="task-detail"]');
  const parts = [];
  if (total > 0) parts.push(el('span', { text: `progress ${done} / ${total}` }));
  if (task.result) parts.push(resultSummary(task.result));
  if (task.finished_at) parts.push(el('span', { className: 'muted', text: `finished ${fmtDate(task.finished_at)}` }));
  detail.replaceChildren(...parts.flatMap((p, i) => (i ? [' · ', p] : [p])));
  if (task.error) detail.append(el('div', { className: 'error-inline', dataset: { testid: 'task-error' } },
    el('code', { text: task.error.code }), ` ${task.error.message}`));
}

function resultSummary(result) {
  const perCollection = Object.entries(result.per_collection || {}).map(([c, n]) => `${c}: ${n}`).join(', ');
  const node = el('span', { dataset: { testid: 'task-result' } },
    `added ${result.documents} document${result.documents === 1 ? '' : 's'}, ${result.rows} row${result.rows === 1 ? '' : 's'}`,
    perCollection ? ` (${perCollection})` : '');
  const skipped = result.skipped || [];
  if (!skipped.length) return node;
  return el('span', {}, node, el('details', { className: 'skipped' },
    el('summary', { text: `${skipped.length} skipped` }), el('ul', {}, skipped.map((s) => el('li', { text: s })))));
}

// Shows the server's unfinished tasks once, so a reload does not lose a running ingest.
async function loadRecentTasks() {
  if (state.tasksLoaded) return;
  state.tasksLoaded = true;
  try {
    const data = await api('/tasks');
    const open = (data.tasks || []).filter((t) => t.state === 'queued' || t.state === 'running');
    for (const t of open.reverse()) trackTask(t.id, `started ${fmtDate(t.created_at)}`, t);
  } catch (err) {
    console.warn('tasks', err.message);
  }
}

// ---------------------------------------------------------------- one document

const docHash = (id, chunk) => `#/doc/${encodeURIComponent(id)}${chunk ? `?chunk=${encodeURIComponent(chunk)}` : ''}`;

const DOC_FIELDS = [
  ['document_id', 'Id'], ['document_name', 'Title'], ['name', 'Also named'], ['file_name', 'File'], ['kb_name', 'Knowledge base'],
  ['plugin_namespace', 'Namespace'], ['source_type', 'Source type'], ['year', 'Year'],
  ['source_uri', 'Source'], ['collections_used', 'Collections'], ['tags', 'Tags'], ['created_at', 'Added'],
];

async function openDocument(id, chunkId) {
  const box = $('doc-error');
  clearError(box);
  $('doc-title').textContent = 'Loading…';
  $('doc-body').hidden = true;
  $('doc-meta').replaceChildren();
  $('doc-chunks').replaceChildren();
  const current = newest('document');
  try {
    const data = await api(`/documents/${encodeURIComponent(id)}`);
    if (!current()) return;
    const doc = data.document;
    const { label, full } = docLabel(doc);
    $('doc-title').textContent = label;
    $('doc-title').title = full;
    document.title = `${label} · Eagle`;
    $('doc-meta').replaceChildren(...DOC_FIELDS.flatMap(([key, label]) => {
      let v = doc[key];
      if (Array.isArray(v)) v = v.join(', ');
      // An SPL label's name is "title | product | generic…": show only what the title lacks.
      if (key === 'name') v = v === doc.document_name ? '' : v.replace(`${doc.document_name} | `, '').replaceAll(' | ', ' · ');
      if (key === 'created_at') v = fmtDate(v);
      if (v === '' || v == null) return [];
      return [el('dt', { text: label }), el('dd', {}, key === 'document_id' ? el('code', { text: v }) : String(v))];
    }));
    // Marks follow the last search only when the user came from one of its hits.
    const regex = chunkId ? highlightRegex(state.terms) : null;
    $('doc-chunks').replaceChildren(...data.chunks.map((c, i) => renderChunk(c, i, regex, c.id === chunkId)));
    $('doc-chunks-heading').textContent = `Chunks (${data.chunks.length})`;
    $('doc-body').hidden = false;
    const target = chunkId && $('doc-chunks').querySelector('.chunk.target');
    if (target) { target.scrollIntoView({ block: 'center' }); target.focus({ preventScroll: true }); }
    else $('doc-title').focus();
  } catch (err) {
    if (!current()) return;
    $('doc-title').textContent = id;
    showError(box, err, err.status === 404 ? 'No such document' : 'Could not load the document');
  }
}

function renderChunk(chunk, index, regex, isTarget) {
  const meta = chunk.metadata || {};
  const kind = meta.chunk_type || meta.type || 'text';
  const table = isTable(meta);
  const li = el('li', {
    className: `chunk card${table ? ' is-table' : ''}${kind.includes('summary') ? ' is-summary' : ''}${isTarget ? ' target' : ''}`,
    tabIndex: isTarget ? -1 : undefined,
    dataset: { testid: 'chunk', chunkId: chunk.id, chunkType: kind },
  });
  li.append(el('div', { className: 'chunk-head' },
    el('span', { className: 'rank', text: `${index + 1}` }),
    el('span', { className: `chip${table ? ' table' : ''}`, text: kind }),
    el('span', { className: 'chip collection', text: chunk.collection }),
    el('code', { className: 'doc-id', text: chunk.id }),
    isTarget ? el('span', { className: 'badge state-succeeded', text: 'search hit' }) : ''));
  const path = sectionPath(meta);
  if (path.length) li.append(breadcrumb(path));
  const text = withoutHeading(chunk.text || '', [meta.document_name, path[path.length - 1]]);
  li.append(table ? renderTable(text) : textBlock(text, regex));
  const extra = Object.entries(meta).filter(([k]) => !['document_id', 'document_name', 'connect_to'].includes(k));
  if (extra.length) {
    li.append(el('details', { className: 'chunk-meta' }, el('summary', { text: 'Metadata' }),
      el('dl', { className: 'meta-grid small' }, extra.flatMap(([k, v]) =>
        [el('dt', { text: k }), el('dd', { text: typeof v === 'object' ? JSON.stringify(v) : String(v) })]))));
  }
  return li;
}

const textBlock = (text, regex) => highlighted(el('p', { className: 'chunk-text' }), text, regex);

// A table chunk: a Markdown pipe table becomes a <table>; other text stays preformatted.
function renderTable(text) {
  const lines = text.split('\n').map((l) => l.trim());
  const rows = lines.filter((l) => l.startsWith('|') && !/^\|[\s:|-]+\|?$/.test(l))
    .map((l) => l.replace(/^\||\|$/g, '').split('|').map((c) => c.trim()));
  if (rows.length < 2) return el('pre', { className: 'chunk-table-text', dataset: { testid: 'chunk-table' }, text });
  const [header, ...body] = rows;
  const caption = lines.filter((l) => l && !l.startsWith('|')).join(' ');
  return el('div', { className: 'table-wrap' }, el('table', { className: 'chunk-table', dataset: { testid: 'chunk-table' } },
    caption ? el('caption', { text: caption }) : '',
    el('thead', {}, el('tr', {}, header.map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, body.map((r) => el('tr', {}, r.map((c) => el('td', { text: c })))))));
}

// ---------------------------------------------------------------- views and start-up

function showView(name) {
  for (const v of ['search', 'documents', 'document']) $(`view-${v}`).hidden = v !== name;
  for (const tab of document.querySelectorAll('.tabs a')) {
    if (tab.dataset.view === name) tab.setAttribute('aria-current', 'page');
    else tab.removeAttribute('aria-current');
  }
  if (name !== 'document') document.title = name === 'documents' ? 'Documents · Eagle' : 'Eagle console';
}

// Hash routes: #/search, #/documents, #/doc/<id>?chunk=<chunk id>.
function route() {
  const hash = location.hash || '#/search';
  if (hash.startsWith('#/doc/')) {
    const [idPart, query = ''] = hash.slice('#/doc/'.length).split('?');
    showView('document');
    openDocument(decodeURIComponent(idPart), new URLSearchParams(query).get('chunk'));
  } else if (hash === '#/documents') {
    showView('documents');
    loadDocuments();
    loadRecentTasks();
  } else {
    showView('search');
  }
}

// /health needs no token: the header shows the version even before sign-in.
async function checkHealth() {
  const status = $('server-status');
  try {
    const data = await (await fetch('/health')).json();
    Object.assign(status, { textContent: `server ${data.version || ''} · ${data.status}`, className: 'ok' });
  } catch {
    Object.assign(status, { textContent: 'server unreachable', className: 'bad' });
  }
}

function wireEvents() {
  $('search-form').addEventListener('submit', (e) => { e.preventDefault(); runSearch(); });
  $('upload-form').addEventListener('submit', submitUpload);
  $('docs-kb').addEventListener('change', () => { state.docsOffset = 0; loadDocuments(); });
  $('docs-ns').addEventListener('change', () => { state.docsOffset = 0; loadDocuments(); });
  $('docs-refresh').addEventListener('click', () => { loadDocuments(); refreshCatalog(); });
  $('docs-prev').addEventListener('click', () => { state.docsOffset = Math.max(0, state.docsOffset - DOCS_PAGE); loadDocuments(); });
  $('docs-next').addEventListener('click', () => { state.docsOffset += DOCS_PAGE; loadDocuments(); });
  $('sign-out').addEventListener('click', signOut);
  $('doc-back').addEventListener('click', () => (state.cameFromApp ? history.back() : (location.hash = '#/search')));
  window.addEventListener('hashchange', () => { state.cameFromApp = true; route(); });
  // "/" jumps to the search box from anywhere but a text field.
  document.addEventListener('keydown', (e) => {
    if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.target.closest('input, textarea, select, [contenteditable]')) return;
    e.preventDefault();
    if (location.hash && location.hash !== '#/search') location.hash = '#/search';
    $('q').focus();
  });
  // A blocked resource would silently break the page: make it loud in the console.
  document.addEventListener('securitypolicyviolation', (e) =>
    console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline code'}`));
}

// The namespace pickers offer core and the namespace of each plugin this server was
// built with, as its OpenAPI document lists them (components.schemas.PluginNamespace).
async function loadNamespaces() {
  try {
    const res = await fetch('/openapi.json');
    if (!res.ok) return;
    const doc = await res.json();
    const names = doc?.components?.schemas?.PluginNamespace?.enum || [];
    for (const id of ['ns', 'upload-ns', 'docs-ns']) {
      const select = $(id);
      const have = new Set([...select.options].map((o) => o.value));
      for (const name of names)
        if (!have.has(name)) select.append(el('option', { value: name, text: name }));
    }
  } catch (e) {
    console.warn(`namespaces not loaded: ${e.message}`);
  }
}

function start() {
  wireEvents();
  loadNamespaces();
  updateSignOut();
  checkHealth();
  refreshCatalog();
  route();
  if (!location.hash || location.hash === '#/search') $('q').focus();
}

start();
