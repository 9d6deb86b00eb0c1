#!/usr/bin/env node
// Validates recorded `eagle serve` responses against the OpenAPI 3.1 contract.
//
//   node tests/server/openapi_check.mjs [--subset] OPENAPI.json RESPONSES.jsonl
//
// --subset: the responses are a sample (e.g. taken through a reverse proxy), so rule 3
// below (every operation exercised) is not applied.
//
// Needs tests/js/node_modules (cd tests/js && npm ci).
//
// 1. The document: `openapi` is "3.1.0"; every $ref resolves; every schema (each
//    components.schemas entry and every inline schema) compiles under Ajv2020 in strict
//    mode; operations list explicit status codes (no `default`), unique operationIds,
//    and declare every {param} of their path template.
// 2. Each JSONL line {"method", "path" (the OpenAPI path template), "status",
//    "content_type", "body"} must name a declared operation, a status that operation
//    declares and a content type (parameters such as charset ignored) that response
//    declares; the body must validate against that content's schema. Two cases of a
//    route the document cannot name: status 405 on a declared path with an undeclared
//    method is checked against that path's 405 response, and status 404 on an
//    undeclared path against components.responses.NotFound.
//    text/event-stream bodies (strings) are also parsed as Server-Sent Events and each
//    event's data validated against the media type's `x-eagle-sse-events` schemas, the
//    event order against `x-eagle-sse-sequence`. A 200 from GET /openapi.json must equal
//    OPENAPI.json.
//    A line may also carry "request", the JSON request body that was sent. On a 2xx it
//    must validate against the operation's requestBody application/json schema (an
//    operation without one fails); a 2xx without "request" is not checked (multipart,
//    or no body). Non-2xx requests are not checked: they may be wrong on purpose.
// 3. Unless --subset: every operation must have been exercised with a 2xx response, except those listed
//    in OPENAPI_CHECK_ALLOW_UNEXERCISED (comma-separated "METHOD path").
// Exit status 1 when anything fails or no response was checked.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";

const require = createRequire(new URL("../js/package.json", import.meta.url));
let Ajv2020, addFormats;
try {
  const ajvMod = require("ajv/dist/2020");
  Ajv2020 = ajvMod.default ?? ajvMod;
  const formatsMod = require("ajv-formats");
  addFormats = formatsMod.default ?? formatsMod;
} catch (e) {
  console.error(`openapi_check: cannot load ajv / ajv-formats from tests/js/node_modules (run: cd tests/js && npm ci): ${e.message}`);
  process.exit(2);
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const REGISTRY_ID = "https://eagle.invalid/openapi.json";

function usage() {
  console.error("usage: node tests/server/openapi_check.mjs [--subset] OPENAPI.json RESPONSES.jsonl");
  process.exit(2);
}

function unescapePointer(s) {
  return s.replace(/~1/g, "/").replace(/~0/g, "~");
}
function escapePointer(s) {
  return String(s).replace(/~/g, "~0").replace(/\//g, "~1");
}
function resolvePointer(doc, ref) {
  if (typeof ref !== "string" || !ref.startsWith("#")) return undefined;
  if (ref === "#") return doc;
  if (!ref.startsWith("#/")) return undefined;
  let cur = doc;
  for (const raw of ref.slice(2).split("/")) {
    const key = unescapePointer(decodeURIComponent(raw));
    if (cur === null || typeof cur !== "object" || !Object.prototype.hasOwnProperty.call(cur, key)) return undefined;
    cur = cur[key];
  }
  return cur;
}

// Every {"$ref": ...} in `node`, with its JSON pointer.
function collectRefs(node, pointer, out) {
  if (Array.isArray(node)) {
    node.forEach((v, i) => collectRefs(v, `${pointer}/${i}`, out));
  } else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref") out.push({ pointer, ref: v });
      else collectRefs(v, `${pointer}/${escapePointer(k)}`, out);
    }
  }
  return out;
}

// A deep copy of a schema whose "#/components/schemas/X" refs point into the registry.
function rewriteRefs(node) {
  if (Array.isArray(node)) return node.map(rewriteRefs);
  if (!node || typeof node !== "object") return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "$ref" && typeof v === "string" && v.startsWith("#/components/schemas/"))
      out[k] = `${REGISTRY_ID}#/$defs/${v.slice("#/components/schemas/".length)}`;
    else out[k] = rewriteRefs(v);
  }
  return out;
}

function formatErrors(errors) {
  return (errors || [])
    .map((e) => {
      const where = e.instancePath === "" ? "(root)" : e.instancePath;
      let msg = `${where} ${e.message}`;
      if (e.keyword === "additionalProperties") msg += ` '${e.params.additionalProperty}'`;
      if (e.keyword === "enum" || e.keyword === "const")
        msg += ` ${JSON.stringify(e.params.allowedValues ?? e.params.allowedValue)}`;
      return msg;
    })
    .join("; ");
}

// Server-Sent Events: [{event, data}] per the WHATWG parsing rules (enough of them).
function parseSse(text) {
  const events = [];
  let event = "";
  let data = [];
  let hasData = false;
  const flush = () => {
    if (hasData) events.push({ event: event || "message", data: data.join("\n") });
    event = "";
    data = [];
    hasData = false;
  };
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === "") {
      flush();
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") {
      data.push(value);
      hasData = true;
    }
  }
  flush();
  return events;
}

const args = process.argv.slice(2);
const subset = args[0] === "--subset";
if (subset) args.shift();
const [openapiPath, responsesPath] = args;
if (!openapiPath || !responsesPath || args.length > 2) usage();

let doc;
try {
  doc = JSON.parse(readFileSync(openapiPath, "utf8"));
} catch (e) {
  console.error(`openapi_check: cannot read ${openapiPath}: ${e.message}`);
  process.exit(1);
}

// ------------------------------------------------------------------ the document

const docErrors = [];
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
addFormats(ajv);

if (doc.openapi !== "3.1.0") docErrors.push(`openapi is ${JSON.stringify(doc.openapi)}, expected "3.1.0"`);
if (!doc.paths || typeof doc.paths !== "object") docErrors.push("no paths object");
const componentSchemas = doc.components?.schemas ?? {};

// Ajv accepts OpenAPI 3.0's `nullable` itself, so strict mode would not flag it.
(function findNullable(node, pointer) {
  if (!node || typeof node !== "object") return;
  if (!Array.isArray(node) && typeof node.nullable === "boolean")
    docErrors.push(`${pointer}: 'nullable' is OpenAPI 3.0; in 3.1 write type: [..., "null"]`);
  for (const [k, v] of Object.entries(node)) findNullable(v, `${pointer}/${escapePointer(k)}`);
})(doc, "#");

for (const { pointer, ref } of collectRefs(doc, "#", [])) {
  if (typeof ref !== "string" || !ref.startsWith("#/")) docErrors.push(`${pointer}: $ref ${JSON.stringify(ref)} is not a local reference`);
  else if (resolvePointer(doc, ref) === undefined) docErrors.push(`${pointer}: $ref ${ref} does not resolve`);
}

// One ref level for Response / Parameter / Request Body objects.
function deref(obj) {
  let seen = 0;
  while (obj && typeof obj === "object" && typeof obj.$ref === "string" && seen++ < 10) obj = resolvePointer(doc, obj.$ref);
  return obj;
}

let registryOk = true;
try {
  ajv.addSchema({ $id: REGISTRY_ID, $defs: rewriteRefs(componentSchemas) });
} catch (e) {
  registryOk = false;
  docErrors.push(`components.schemas: ${e.message}`);
}

const validators = new Map(); // pointer -> validate function (or null when it did not compile)
function compileAt(pointer, schema) {
  if (validators.has(pointer)) return validators.get(pointer);
  let v = null;
  try {
    v = ajv.compile(rewriteRefs(schema));
  } catch (e) {
    docErrors.push(`${pointer}: schema does not compile: ${e.message}`);
  }
  validators.set(pointer, v);
  return v;
}

if (registryOk)
  for (const name of Object.keys(componentSchemas))
    compileAt(`#/components/schemas/${escapePointer(name)}`, { $ref: `#/components/schemas/${name}` });

// Every inline schema in media types and parameters (paths and components).
function compileMediaTypes(content, pointer) {
  for (const [mt, media] of Object.entries(content || {})) {
    const mp = `${pointer}/content/${escapePointer(mt)}`;
    if (media?.schema !== undefined) compileAt(`${mp}/schema`, media.schema);
    for (const [ev, s] of Object.entries(media?.["x-eagle-sse-events"] || {}))
      compileAt(`${mp}/x-eagle-sse-events/${escapePointer(ev)}`, s);
    const seq = media?.["x-eagle-sse-sequence"];
    if (seq !== undefined) {
      try {
        new RegExp(seq);
      } catch (e) {
        docErrors.push(`${mp}/x-eagle-sse-sequence: ${e.message}`);
      }
    }
  }
}
function compileParameters(params, pointer) {
  (params || []).forEach((p, i) => {
    if (p && !p.$ref && p.schema !== undefined) compileAt(`${pointer}/${i}/schema`, p.schema);
  });
}
if (registryOk) {
  for (const [name, r] of Object.entries(doc.components?.responses || {}))
    compileMediaTypes(r.content, `#/components/responses/${escapePointer(name)}`);
  for (const [name, p] of Object.entries(doc.components?.parameters || {}))
    if (p.schema !== undefined) compileAt(`#/components/parameters/${escapePointer(name)}/schema`, p.schema);
  for (const [name, b] of Object.entries(doc.components?.requestBodies || {}))
    compileMediaTypes(b.content, `#/components/requestBodies/${escapePointer(name)}`);
}

const operations = []; // {key: "GET /x", path, method, op, pointer}
const operationIds = new Map();
for (const [path, item] of Object.entries(doc.paths || {})) {
  const ip = `#/paths/${escapePointer(path)}`;
  if (!path.startsWith("/")) docErrors.push(`${ip}: path does not start with /`);
  if (registryOk) compileParameters(item.parameters, `${ip}/parameters`);
  for (const method of METHODS) {
    const op = item[method];
    if (!op) continue;
    const opPointer = `${ip}/${method}`;
    operations.push({ key: `${method.toUpperCase()} ${path}`, path, method, op, pointer: opPointer });
    if (op.operationId) {
      if (operationIds.has(op.operationId))
        docErrors.push(`${opPointer}: operationId ${op.operationId} is also used by ${operationIds.get(op.operationId)}`);
      operationIds.set(op.operationId, opPointer);
    }
    const declared = new Set(
      [...(item.parameters || []), ...(op.parameters || [])].map(deref).filter((p) => p?.in === "path").map((p) => p.name),
    );
    for (const m of path.matchAll(/\{([^}]+)\}/g))
      if (!declared.has(m[1])) docErrors.push(`${opPointer}: path parameter {${m[1]}} is not declared`);
    if (!op.responses || Object.keys(op.responses).length === 0) docErrors.push(`${opPointer}: no responses`);
    for (const status of Object.keys(op.responses || {}))
      if (!/^[1-5][0-9][0-9]$/.test(status))
        docErrors.push(`${opPointer}/responses/${status}: list explicit status codes (the checker has no fallback for ${status})`);
    if (!registryOk) continue;
    compileParameters(op.parameters, `${opPointer}/parameters`);
    const body = deref(op.requestBody);
    if (op.requestBody && !op.requestBody.$ref) compileMediaTypes(body?.content, `${opPointer}/requestBody`);
    for (const [status, r] of Object.entries(op.responses || {}))
      if (!r.$ref) compileMediaTypes(r.content, `${opPointer}/responses/${escapePointer(status)}`);
  }
}

if (docErrors.length) {
  for (const e of docErrors) console.log(`openapi_check: document: ${e}`);
  console.log(`openapi_check: ${openapiPath} is not a valid contract (${docErrors.length} problems)`);
  process.exit(1);
}

// ------------------------------------------------------------------ the responses

// The pointer of a response object, following a $ref to components.responses.
function responsePointer(opPointer, status, r) {
  return r?.$ref ?? `${opPointer}/responses/${escapePointer(status)}`;
}

// The operation's JSON request body check for a recorded "request": null when it passes.
function checkRequest(opPointer, op, request) {
  let pointer = `${opPointer}/requestBody`;
  let body = op.requestBody;
  for (let seen = 0; body && typeof body.$ref === "string" && seen < 10; ++seen) {
    pointer = body.$ref;
    body = resolvePointer(doc, body.$ref);
  }
  const media = body?.content?.["application/json"];
  if (!media) return "the operation declares no application/json request body";
  if (media.schema === undefined) return null;
  return validateAt(`${pointer}/content/application~1json/schema`, media.schema, request);
}

function validateAt(pointer, schema, value) {
  const v = compileAt(pointer, schema);
  if (!v) return `schema at ${pointer} does not compile`;
  return v(value) ? null : formatErrors(v.errors);
}

function checkSse(mediaPointer, media, body) {
  const events = parseSse(body);
  if (events.length === 0) return "no Server-Sent Events in the body";
  const schemas = media["x-eagle-sse-events"] || {};
  const problems = [];
  events.forEach((ev, i) => {
    if (!Object.prototype.hasOwnProperty.call(schemas, ev.event)) {
      problems.push(`event ${i} '${ev.event}' is not declared (declared: ${Object.keys(schemas).join(", ")})`);
      return;
    }
    let data;
    try {
      data = JSON.parse(ev.data);
    } catch {
      problems.push(`event ${i} '${ev.event}' data is not JSON: ${JSON.stringify(ev.data.slice(0, 80))}`);
      return;
    }
    const err = validateAt(`${mediaPointer}/x-eagle-sse-events/${escapePointer(ev.event)}`, schemas[ev.event], data);
    if (err) problems.push(`event ${i} '${ev.event}': ${err}`);
  });
  // The steps come in the order the document gives (x-eagle-step-order; Step covers each shape).
  const stepNames = events.filter((e) => e.event === "step").map((e) => {
    try {
      return JSON.parse(e.data).name;
    } catch {
      return undefined;
    }
  });
  const expectedSteps = media["x-eagle-step-order"] || [];
  stepNames.forEach((n, i) => {
    if (n !== expectedSteps[i]) problems.push(`step event ${i} is '${n}', expected '${expectedSteps[i] ?? "no more steps"}'`);
  });
  const seq = media["x-eagle-sse-sequence"];
  const names = events.map((e) => e.event).join(",");
  if (seq !== undefined && !new RegExp(seq).test(names))
    problems.push(`event sequence ${names} does not match ${seq}`);
  return problems.length ? problems.join("; ") : null;
}

const allowed = new Map(
  (process.env.OPENAPI_CHECK_ALLOW_UNEXERCISED || "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const m = s.match(/^(\S+)\s+(\S+)$/);
      return [m ? `${m[1].toUpperCase()} ${m[2]}` : s, s];
    }),
);

let text;
try {
  text = readFileSync(responsesPath, "utf8");
} catch (e) {
  console.error(`openapi_check: cannot read ${responsesPath}: ${e.message}`);
  process.exit(1);
}

let checked = 0;
let failed = 0;
let requestsChecked = 0;
const exercised = new Set();
const lines = text.split("\n");
for (let i = 0; i < lines.length; ++i) {
  const raw = lines[i].trim();
  if (!raw) continue;
  checked++;
  const lineNo = i + 1;
  let rec;
  try {
    rec = JSON.parse(raw);
  } catch (e) {
    failed++;
    console.log(`FAIL line ${lineNo}: not JSON: ${e.message}`);
    continue;
  }
  const method = String(rec.method ?? "").toUpperCase();
  const path = rec.path;
  const status = Number(rec.status);
  const label = `line ${lineNo}: ${method} ${path} ${rec.status}`;
  const fail = (msg) => {
    failed++;
    console.log(`FAIL ${label}: ${msg}`);
  };
  if (!method || typeof path !== "string" || !Number.isInteger(status)) {
    fail("the line needs method, path (a template of the document) and an integer status");
    continue;
  }

  // Find the declared response.
  let response;
  let respPointer;
  const item = doc.paths[path];
  const op = item?.[method.toLowerCase()];
  if (!item) {
    if (status === 404 && doc.components?.responses?.NotFound) {
      respPointer = "#/components/responses/NotFound";
      response = doc.components.responses.NotFound;
    } else {
      fail(`path ${path} is not in the document`);
      continue;
    }
  } else if (!op) {
    // "A known route with another method": that path's declared 405.
    const with405 = METHODS.map((m) => [m, item[m]]).find(([, o]) => o?.responses?.["405"]);
    if (status === 405 && with405) {
      respPointer = responsePointer(`#/paths/${escapePointer(path)}/${with405[0]}`, "405", with405[1].responses["405"]);
      response = deref(with405[1].responses["405"]);
    } else {
      const declared = METHODS.filter((m) => item[m]).map((m) => m.toUpperCase());
      fail(`method ${method} is not declared for ${path} (declared: ${declared.join(", ")})`);
      continue;
    }
  } else {
    const opPointer = `#/paths/${escapePointer(path)}/${method.toLowerCase()}`;
    const r = op.responses?.[String(status)];
    if (!r) {
      fail(`status ${status} is not declared (declared: ${Object.keys(op.responses || {}).join(", ")})`);
      continue;
    }
    respPointer = responsePointer(opPointer, String(status), r);
    response = deref(r);
  }

  // The request body (only a 2xx: error cases may send a wrong body on purpose).
  const problems = [];
  if (op && status >= 200 && status < 300 && rec.request !== undefined) {
    requestsChecked++;
    const err = checkRequest(`#/paths/${escapePointer(path)}/${method.toLowerCase()}`, op, rec.request);
    if (err) problems.push(`request body: ${err}`);
  }

  // Content type and body.
  const content = response?.content;
  if (!content || Object.keys(content).length === 0) {
    if (rec.body !== undefined && rec.body !== null && rec.body !== "") problems.push("the response declares no content but has a body");
    if (problems.length) fail(problems.join("; "));
    else if (op && status >= 200 && status < 300) exercised.add(`${method} ${path}`);
    continue;
  }
  const mediaType = String(rec.content_type ?? "").split(";")[0].trim().toLowerCase();
  const media = content[mediaType];
  if (!media) {
    problems.push(`content type ${JSON.stringify(rec.content_type ?? null)} is not declared (declared: ${Object.keys(content).join(", ")})`);
    fail(problems.join("; "));
    continue;
  }
  const mediaPointer = `${respPointer}/content/${escapePointer(mediaType)}`;
  if (media.schema !== undefined) {
    const err = validateAt(`${mediaPointer}/schema`, media.schema, rec.body);
    if (err) problems.push(err);
  }
  if (media["x-eagle-sse-events"] && typeof rec.body === "string") {
    const err = checkSse(mediaPointer, media, rec.body);
    if (err) problems.push(err);
  }
  if (op && method === "GET" && path === "/openapi.json" && status === 200 && !isDeepStrictEqual(rec.body, doc))
    problems.push(`the served document differs from ${openapiPath}`);
  if (problems.length) {
    fail(problems.join("; "));
    continue;
  }
  if (op && status >= 200 && status < 300) exercised.add(`${method} ${path}`);
}

const notExercised = subset ? [] : operations.filter((o) => !exercised.has(o.key) && !allowed.has(o.key));
for (const o of notExercised) console.log(`openapi_check: not exercised (no checked 2xx response): ${o.key}`);
const known = new Set(operations.map((o) => o.key));
const staleAllow = [...allowed.entries()].filter(([k]) => !known.has(k));
for (const [, s] of staleAllow)
  console.log(`openapi_check: OPENAPI_CHECK_ALLOW_UNEXERCISED names ${JSON.stringify(s)}, which is not an operation of the document`);

console.log(`openapi_check: ${checked} responses checked, ${failed} failed (${requestsChecked} request bodies checked)`);
if (notExercised.length) console.log(`openapi_check: ${notExercised.length} of ${operations.length} operations not exercised`);
process.exit(failed > 0 || checked === 0 || notExercised.length > 0 || staleAllow.length > 0 ? 1 : 0);
