#include "eagle/server/http_server.h"

#include <spdlog/spdlog.h>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <shared_mutex>

#include "eagle/core/json_input.h"
#include "eagle/app/json_views.h"
#include "eagle/app/request_json.h"
#include "eagle/core/base64.h"
#include "eagle/core/error.h"
#include "eagle/search/orchestrator.h"
#include "eagle/mcp/http_transport.h"
#include "eagle/mcp/protocol.h"
#include "eagle/mcp/tools.h"
#include "eagle/plugin/plugin.h"
#include "eagle/server/console.h"
#include "eagle/server/http_listener.h"
#include "eagle/server/http_message.h"
#include "eagle/server/metrics.h"
#include "eagle/server/tasks.h"

namespace eagle::server {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kMaxRecords = 100000;
constexpr size_t kMaxQueuedTasks = 64;      // ingest tasks waiting; 503 beyond
constexpr size_t kPendingPerWorker = 16;    // requests waiting for a worker, per worker; 503 beyond
constexpr size_t kKeepAliveRequests = 1000; // requests on one connection; then it is closed
constexpr size_t kMaxFormParts = 4096;      // parts of one multipart body

// An error the HTTP layer decides itself (request shape, auth, routing), the same
// type the shared request readers throw.
using HttpError = app::RequestError;
using app::bool_field;
using app::int_field;
using app::kMaxFilterBytes;
using app::kMaxKeyBytes;
using app::kMaxListLimit;
using app::kMaxScopeItems;
using app::list_field;
using app::only_fields;
using app::str_field;

[[noreturn]] void bad(const std::string& field, const std::string& message) { app::bad_request(field, message); }

json error_body(const std::string& code, const std::string& message, const std::string& field = {}) {
  json e = {{"code", code}, {"message", message}};
  if (!field.empty()) e["field"] = field;
  return {{"error", e}};
}

// An engine error as an HTTP status: the request was well-formed (checked before
// the engine saw it), so the engine refusing its content is 422.
std::pair<int, std::string> engine_status(const Error& e) {
  if (e.code() == ErrorCode::invalid_argument) return {422, "unprocessable"};
  return {http_status(e.code()), std::string(error_code_name(e.code()))};
}

json parse_body(const HttpRequest& req) {
  if (req.body.empty()) bad("", "the request needs a JSON body");
  json j;
  try {
    j = parse_json_input(req.body, "the body");
  } catch (const Error& e) {
    bad("", e.what());
  }
  if (!j.is_object()) bad("", "the body must be a JSON object");
  return j;
}

// The body of POST /search: JSON, or multipart/form-data with an `image` file part (the
// PNG or JPEG as sent, no Base64) and an optional `request` part holding the JSON
// fields (query, top_k, ...). The image joins the JSON as Base64 so one parser checks
// every field and bound; any other part is a 400 naming it.
json search_body(const HttpRequest& req) {
  if (!req.is_multipart_form_data()) return parse_body(req);
  json body = json::object();
  if (req.has_file("request")) {
    try {
      body = parse_json_input(req.get_file_value("request").content, "the 'request' part");
    } catch (const Error& e) {
      bad("request", e.what());
    }
    if (!body.is_object()) bad("request", "the 'request' part must be a JSON object");
  }
  for (const auto& [name, part] : req.files)
    if (name != "request" && name != "image") bad(name, "unknown part '" + name + "' (image, request)");
  if (req.files.count("image") != 1 || req.files.count("request") > 1)
    bad("image", "a multipart search has one 'image' part and at most one 'request' part");
  if (body.contains("image")) bad("image", "give the image once: as the 'image' part or in the JSON, not both");
  const auto& image = req.get_file_value("image").content;
  if (image.empty()) bad("image", "the 'image' part is empty");
  if (image.size() > search::kMaxQueryImageBytes)
    throw HttpError{413, "too_large", "'image' is larger than " + std::to_string(search::kMaxQueryImageBytes) + " bytes",
                    "image"};
  body["image"] = base64_encode(image);
  return body;
}

// The name of a Host header: "name", "name:port", "[v6]" or "[v6]:port", the port 1
// to 5 digits. Anything else ("localhost:evil.com", "", "a:b:c") is no name at all, so
// it can never equal an allowed one.
std::optional<std::string> host_name(const std::string& host) {
  std::string name = host, port;
  if (!host.empty() && host[0] == '[') {
    const auto end = host.find(']');
    if (end == std::string::npos) return std::nullopt;
    name = host.substr(0, end + 1);
    if (end + 1 < host.size()) {
      if (host[end + 1] != ':') return std::nullopt;
      port = host.substr(end + 2);
      if (port.empty()) return std::nullopt;
    }
  } else if (const auto colon = host.find(':'); colon != std::string::npos) {
    name = host.substr(0, colon);
    port = host.substr(colon + 1);
    if (port.empty()) return std::nullopt;
  }
  if (name.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return name;
}

std::string lower_ascii(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A metrics label from a request method: a client cannot mint label values.
std::string method_label(const std::string& m) {
  static const std::set<std::string> kKnown = {"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"};
  return kKnown.count(m) ? m : "OTHER";
}

bool constant_time_equal(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::string& x = a.size() == b.size() ? b : a;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ x[i]);
  return diff == 0;
}

}  // namespace

bool is_loopback_host(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]" ||
         host.rfind("127.", 0) == 0;
}

ServerOptions server_options(const app::Config& cfg) {
  ServerOptions o;
  o.host = cfg.server.host;
  o.port = cfg.server.port;
  o.threads = cfg.server.threads;
  o.max_body_bytes = cfg.server.max_body_bytes;
  o.ingest_root = cfg.server.ingest_root;
  o.allowed_hosts = cfg.server.allowed_hosts;
  o.allowed_origins = cfg.server.allowed_origins;
  o.request_timeout_s = cfg.server.request_timeout_s;
  o.header_timeout_s = cfg.server.header_timeout_s;
  o.max_connections = cfg.server.max_connections;
  o.io_threads = cfg.server.io_threads;
  o.ingest_nice = cfg.server.ingest_nice;
  o.repair_utf8 = cfg.repair_utf8;
  o.default_namespace = cfg.pipeline.plugin_namespace;
  o.mcp_discover_ttl_ms = cfg.mcp.discover_ttl_ms;
  o.mcp_max_sessions = cfg.mcp.max_sessions;
  o.mcp_max_sessions_per_token = cfg.mcp.max_sessions_per_token;
  o.mcp_session_idle_s = cfg.mcp.session_idle_s;
  for (const auto& t : cfg.auth_tokens) {
    Token tok;
    tok.name = t.value("name", std::string());
    const std::string env = t.value("token_env", std::string());
    const char* value = std::getenv(env.c_str());
    if (!value || !*value)
      fail(ErrorCode::invalid_argument, "auth.tokens: token '" + tok.name + "' reads its value from the environment "
                                        "variable " + env + ", which is not set (or empty)");
    tok.value = value;
    // Task visibility is by token name: names must be distinct.
    for (const auto& other : o.tokens)
      if (other.name == tok.name)
        fail(ErrorCode::invalid_argument, "auth.tokens: two tokens are named '" + tok.name + "'");
    if (t.contains("kb_names")) tok.kb_names = t["kb_names"].get<std::vector<std::string>>();
    o.tokens.push_back(std::move(tok));
  }
  if (!is_loopback_host(o.host) && o.tokens.empty())
    fail(ErrorCode::invalid_argument, "refusing to serve on " + o.host +
                                          " without a token: a non-loopback address needs auth.tokens "
                                          "(or bind to 127.0.0.1)");
  return o;
}

struct Server::Impl {
  app::Engine& engine;
  ServerOptions opts;
  Server& owner;
  Metrics metrics;
  TaskQueue tasks;
  mcp::ToolSet mcp_tools;
  mcp::McpServer mcp_server;
  mcp::HttpTransport mcp_http;
  ListenerLimits limits;
  HttpHandlers handlers;
  std::unique_ptr<HttpListener> listener;  // made by bind()
  std::set<std::string> allowed_hosts;
  int port = 0;
  const bool inject_fault = [] {
    const char* v = std::getenv("EAGLE_FAULT_INJECT");
    return v && std::string(v) == "search";
  }();

  // The caller of one request: its token (null without auth) and scope.
  struct Call {
    const HttpRequest& req;
    HttpResponse& res;
    std::smatch match;
    const Token* token = nullptr;
    app::AccessScope scope;
  };
  using Handler = std::function<void(Impl&, Call&)>;
  struct Route {
    std::string method;
    std::regex pattern;
    std::string name;  // the OpenAPI path template (a metrics label)
    Handler handler;
    bool public_route = false;  // /health: no token needed
  };
  std::vector<Route> routes;

  Impl(app::Engine& e, ServerOptions o, Server& s)
      : engine(e),
        opts(std::move(o)),
        owner(s),
        tasks(e, 100, opts.ingest_nice),
        mcp_tools(e, opts.default_namespace, /*with_ingest=*/true),
        mcp_server(mcp_tools, mcp::eagle_server_info(mcp_tools.default_namespace()), opts.mcp_discover_ttl_ms),
        mcp_http(mcp_server, opts.mcp_max_sessions, opts.mcp_session_idle_s, opts.mcp_max_sessions_per_token) {
    if (opts.allowed_hosts.empty()) {
      allowed_hosts = {"localhost", "127.0.0.1", "[::1]", "::1"};
      allowed_hosts.insert(opts.host);
    } else {
      allowed_hosts.insert(opts.allowed_hosts.begin(), opts.allowed_hosts.end());
    }
    add_routes();
  }

  // Invalid UTF-8 in a body (an error message quoting a Host, Origin or path as the
  // client sent it) becomes U+FFFD: dump() would otherwise throw and the refusal
  // would turn into a 500 (found by fuzz_http).
  static std::string dump_json(const json& body) { return body.dump(-1, ' ', false, json::error_handler_t::replace); }

  void reply(HttpResponse& res, int status, const json& body) {
    res.status = status;
    res.set_content(dump_json(body), "application/json");
  }

  void add(const std::string& method, const std::string& pattern, const std::string& name, Handler h,
           bool public_route = false) {
    routes.push_back({method, std::regex(pattern), name, std::move(h), public_route});
  }

  void check_kbs(const Call& c, const std::vector<std::string>& kbs, const std::string& field_name) {
    app::check_kbs(c.scope, kbs, field_name);
  }

  search::RetrievalRequest search_request(const Call& c, const json& body) {
    return app::search_request_from_json(body, opts.default_namespace, c.scope, engine.config().pipeline.final_top_k);
  }

  app::QueryRequestFields query_request(const Call& c, const json& body) {
    if (!owner.ready()) throw HttpError{503, "unavailable", "the server is still loading", ""};
    auto q = app::query_request_from_json(body, opts.default_namespace, c.scope, engine.config().pipeline.final_top_k);
    // A named session must be the caller's, and have room for a turn, before anything
    // is answered (a stream would otherwise report it as an error event after a 200).
    if (!q.session_id.empty()) {
      if (!engine.config().sessions.enabled) bad("session_id", "'session_id': sessions are off (sessions.enabled: false)");
      engine.check_session(q.session_id, principal(c));
    }
    return q;
  }

  static std::string principal(const Call& c) { return c.token ? c.token->name : ""; }

  // Sessions belong to the token (its name; "" without auth) and record its KBs.
  app::SessionCall session_call(const Call& c, const std::string& session_id) {
    return app::SessionCall{session_id, principal(c), c.scope.kb_names};
  }

  // Server-Sent Events streamed as they are written (HttpResponse::producer). An error
  // after the stream started is an `error` event (the Error object), then `done` ({}).
  using EventFn = std::function<bool(const char* name, const json& data)>;
  void stream_events(Call& c, std::function<void(const EventFn&)> body) {
    c.res.status = 200;
    c.res.set_header("Cache-Control", "no-cache");
    c.res.content_type = "text/event-stream";
    c.res.producer = [body = std::move(body)](const HttpResponse::Writer& write) {
      const EventFn event = [&](const char* name, const json& data) {
        return write(std::string("event: ") + name + "\ndata: " + dump_json(data) + "\n\n");
      };
      try {
        body(event);
      } catch (const Error& e) {
        event("error", {{"error", {{"code", std::string(error_code_name(e.code()))}, {"message", e.what()}}}});
        event("done", json::object());
      } catch (const app::RequestError& e) {
        json err = {{"code", e.code}, {"message", e.message}};
        if (!e.field.empty()) err["field"] = e.field;
        event("error", {{"error", err}});
        event("done", json::object());
      } catch (const std::exception& e) {
        spdlog::error("event stream: {}", e.what());
        event("error", {{"error", {{"code", "internal"}, {"message", "internal error"}}}});
        event("done", json::object());
      }
    };
  }

  search::RetrievalResponse run_search(const search::RetrievalRequest& r) {
    if (!owner.ready()) throw HttpError{503, "unavailable", "the server is still loading", ""};
    return engine.search(r);
  }

  app::IngestOptions ingest_options(const Call& c, const json& obj, bool form) {
    app::IngestOptions o;
    o.kb_name = str_field(obj, "kb_name", kMaxKeyBytes);
    o.plugin_namespace = str_field(obj, "plugin_namespace", 64, false, "core");
    if (const auto known = plugin::namespaces();
        std::find(known.begin(), known.end(), o.plugin_namespace) == known.end())
      bad("plugin_namespace", "'plugin_namespace' must be one of " + app::join_words(known));
    o.collection = str_field(obj, "collection", 255);
    o.format = str_field(obj, "format", 16, false, "auto");
    if (const auto formats = engine.ingest_formats(); std::find(formats.begin(), formats.end(), o.format) == formats.end())
      bad("format", "'format' must be one of " + app::join_words(formats));
    if (form) {
      auto form_bool = [&](const std::string& name, bool fallback) {
        const std::string v = str_field(obj, name, 8, false, fallback ? "true" : "false");
        if (v != "true" && v != "false") bad(name, "'" + name + "' must be true or false");
        return v == "true";
      };
      o.skip_bad = form_bool("skip_bad", false);
      o.repair_utf8 = form_bool("repair_utf8", opts.repair_utf8);
      o.reindex = form_bool("reindex", false);
    } else {
      o.skip_bad = bool_field(obj, "skip_bad", false);
      o.repair_utf8 = bool_field(obj, "repair_utf8", opts.repair_utf8);
      o.reindex = bool_field(obj, "reindex", false);
    }
    o.scope = c.scope;
    if (!c.scope.kb_names.empty() && !c.scope.allows(o.kb_name))
      throw HttpError{403, "permission_denied",
                      o.kb_name.empty() ? "this token writes only its knowledge bases: give 'kb_name'"
                                        : "this token may not write knowledge base '" + o.kb_name + "'",
                      "kb_name"};
    return o;
  }

  static fs::path upload_dir() {
    auto base = fs::temp_directory_path();
    for (int i = 0; i < 1000; ++i) {
      auto d = base / ("eagle-upload-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
      std::error_code ec;
      if (fs::create_directory(d, ec)) return d;
    }
    fail(ErrorCode::unavailable, "cannot create an upload folder under " + base.string());
  }

  // Removes a job's upload folder unless the job was queued (the task removes it then).
  struct UploadGuard {
    IngestJob& job;
    bool queued = false;
    ~UploadGuard() {
      if (!queued && !job.cleanup.empty()) {
        std::error_code ec;
        fs::remove_all(job.cleanup, ec);
      }
    }
  };

  void handle_ingest(Call& c) {
    if (tasks.pending() >= kMaxQueuedTasks)
      throw HttpError{503, "unavailable", "too many ingest tasks waiting (" + std::to_string(kMaxQueuedTasks) +
                                              "); retry when GET /tasks shows them done", ""};
    IngestJob job;
    UploadGuard guard{job};
    if (c.req.is_multipart_form_data()) {
      json form = json::object();
      for (const auto& [name, part] : c.req.files) {
        if (name == "file") continue;
        form[name] = part.content;
      }
      only_fields(form, {"kb_name", "plugin_namespace", "collection", "format", "skip_bad", "repair_utf8", "reindex"});
      job.options = ingest_options(c, form, true);
      job.cleanup = upload_dir();
      size_t n = 0;
      std::set<std::string> taken;
      for (const auto& [name, part] : c.req.files) {
        if (name != "file") continue;
        // Only the base name of what the client calls the file; never a path. Files keep
        // their names (an article finds its figure files by them) unless two share one.
        std::string base = fs::path(part.filename).filename().string();
        if (base.empty() || base == "." || base == "..") base = "upload-" + std::to_string(n);
        std::string unique = base;
        for (size_t k = 1; !taken.insert(unique).second; ++k) unique = std::to_string(k) + "-" + base;
        ++n;
        auto target = job.cleanup / unique;
        std::ofstream out(target, std::ios::binary);
        out.write(part.content.data(), static_cast<std::streamsize>(part.content.size()));
        if (!out) fail(ErrorCode::unavailable, "cannot store the upload");
        job.inputs.push_back(target.string());
      }
      if (job.inputs.empty()) {
        fs::remove_all(job.cleanup);
        bad("file", "a multipart ingest needs at least one 'file' part");
      }
    } else {
      json body = parse_body(c.req);
      if (body.contains("records") == body.contains("path"))
        bad(body.contains("records") ? "path" : "records", "give either 'records' or 'path'");
      if (body.contains("records")) {
        only_fields(body, {"records", "kb_name", "plugin_namespace", "collection", "skip_bad", "repair_utf8"});
        job.options = ingest_options(c, body, false);
        const auto& recs = body["records"];
        if (!recs.is_array() || recs.empty() || recs.size() > kMaxRecords)
          bad("records", "'records' must be a list of 1.." + std::to_string(kMaxRecords) + " records");
        for (size_t i = 0; i < recs.size(); ++i) {
          const std::string where = "records[" + std::to_string(i) + "]";
          const auto& r = recs[i];
          if (!r.is_object()) bad(where, "'" + where + "' must be an object");
          for (const auto& [k, v] : r.items())
            if (k != "id" && k != "text" && k != "title" && k != "metadata")
              bad(where + "." + k, "unknown field '" + where + "." + k + "' (id, text, title, metadata)");
          str_field(r, "id", 4096, true);
          if (r["id"].get<std::string>().empty()) bad(where + ".id", "'" + where + ".id' must not be empty");
          str_field(r, "text", SIZE_MAX, true);
          str_field(r, "title", SIZE_MAX);
          if (const json* m = app::json_field(r, "metadata"); m && !m->is_object())
            bad(where + ".metadata", "'" + where + ".metadata' must be an object");
        }
        job.cleanup = upload_dir();
        auto file = job.cleanup / "records.jsonl";
        std::ofstream out(file, std::ios::binary);
        for (const auto& r : recs) out << r.dump() << "\n";
        if (!out) fail(ErrorCode::unavailable, "cannot store the records");
        job.inputs.push_back(file.string());
        job.options.format = "jsonl";
      } else {
        only_fields(body,
                    {"path", "kb_name", "plugin_namespace", "collection", "format", "skip_bad", "repair_utf8", "reindex"});
        job.options = ingest_options(c, body, false);
        job.inputs.push_back(path_under_root(body));
      }
    }
    reply(c.res, 202, submit_ingest(c, job, guard));
  }

  // MCP core_ingest: `path` as POST /ingest {"path"}, or `content` (Base64) stored as an
  // upload named `file_name`; the same checks, queue and owner.
  json mcp_ingest(const Call& c, json args) {
    if (tasks.pending() >= kMaxQueuedTasks)
      throw HttpError{503, "unavailable", "too many ingest tasks waiting (" + std::to_string(kMaxQueuedTasks) + ")", ""};
    IngestJob job;
    UploadGuard guard{job};
    if (args.contains("content")) {
      const std::string name = fs::path(str_field(args, "file_name", 255, true)).filename().string();
      if (name.empty() || name == "." || name == "..") bad("file_name", "'file_name' must name a file");
      auto bytes = base64_decode(str_field(args, "content", SIZE_MAX, true));
      if (!bytes) bad("content", "'content' is not valid Base64 (RFC 4648, padded)");
      if (bytes->size() > (size_t{32} << 20))
        throw HttpError{413, "too_large", "'content' is larger than 32 MiB", "content"};
      args.erase("content");
      args.erase("file_name");
      job.options = ingest_options(c, args, false);
      job.cleanup = upload_dir();
      const auto target = job.cleanup / name;
      std::ofstream out(target, std::ios::binary);
      out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
      if (!out) fail(ErrorCode::unavailable, "cannot store the upload");
      job.inputs.push_back(target.string());
    } else {
      job.options = ingest_options(c, args, false);
      job.inputs.push_back(path_under_root(args));
    }
    return submit_ingest(c, job, guard);
  }

  json submit_ingest(const Call& c, IngestJob& job, UploadGuard& guard) {
    check_target_collection(job.options);
    job.owner = c.token ? c.token->name : "";
    std::string id = tasks.submit(std::move(job));
    guard.queued = true;
    return {{"task_id", id}, {"state", "queued"}};
  }

  // A server-side path: under server.ingest_root once symlinks and .. are resolved.
  std::string path_under_root(const json& body) {
        const std::string rel = str_field(body, "path", 4096, true);
        if (opts.ingest_root.empty())
          throw HttpError{403, "permission_denied", "server-side paths are off (set server.ingest_root)", "path"};
        const fs::path root = fs::weakly_canonical(opts.ingest_root);
        const fs::path target = fs::weakly_canonical(root / rel);
        // The resolved path (symlinks and .. followed) must stay under the root.
        auto [r_end, t_it] = std::mismatch(root.begin(), root.end(), target.begin(), target.end());
        if (r_end != root.end())
          throw HttpError{403, "permission_denied", "'path' leaves server.ingest_root", "path"};
        if (!fs::exists(target)) throw HttpError{404, "not_found", "no such file or folder under the ingest root", "path"};
        return target.string();
  }

  // A named collection that holds another kind of vector (molecules vs text) can
  // never take this input: a conflict with the store, said before a task is queued.
  void check_target_collection(const app::IngestOptions& o) {
    if (o.collection.empty()) return;
    // Creating a collection (every token then sees it) is an unscoped token's right. A
    // scoped one may name only a collection that holds rows of its KBs; one that holds
    // none gets the same answer whether it exists or not.
    if (!o.scope.kb_names.empty()) {
      bool visible = true;
      try {
        engine.collection_info(o.collection, o.scope);
      } catch (const Error&) {
        visible = false;
      }
      if (!visible)
        throw HttpError{403, "permission_denied",
                        "a token limited to knowledge bases ingests into the default collections or one that already "
                        "holds rows of its knowledge bases",
                        "collection"};
    }
    if (!engine.catalog().exists(o.collection)) return;
    const std::string label = engine.collection_info(o.collection).encoder;
    if (label.empty() || !engine.encoders().has_encoder(label)) return;
    const bool molecules = engine.encoders().encoder(label).info().modality == encode::Modality::molecule;
    const bool want_molecules = engine.ingest_modality(o.format) == encode::Modality::molecule;
    if (molecules != want_molecules)
      throw HttpError{409, "conflict",
                      "collection '" + o.collection + "' holds " + (molecules ? "molecule" : "text") + " vectors ('" +
                          label + "'); this input needs a " + (want_molecules ? "molecule" : "text") + " collection",
                      "collection"};
  }

  void handle_mcp(Call& c) {
    if (!owner.ready()) throw HttpError{503, "unavailable", "the server is still loading", ""};
    mcp::HttpRequest req;
    req.method = c.req.method;
    req.header = [&c](const std::string& name) { return c.req.get_header_value(name); };
    req.body = c.req.body;
    req.principal = c.token ? c.token->name : "";
    mcp::ToolContext ctx{c.scope};
    ctx.ingest = [this, &c](const json& args) { return mcp_ingest(c, args); };
    ctx.converse = [this, &c](const app::QueryRequest& q, const std::string& session_id) {
      return engine.converse(q, session_call(c, session_id));
    };
    auto out = mcp_http.handle(req, ctx);
    c.res.status = out.status;
    std::string type = "application/json";
    for (const auto& [k, v] : out.headers) {
      if (k == "Content-Type") type = v;
      else c.res.set_header(k, v);
    }
    if (!out.body.empty()) c.res.set_content(out.body, type);
  }

  static std::string query_param(const Call& c, const char* name) {
    return c.req.has_param(name) ? c.req.get_param_value(name) : std::string();
  }

  // An integer query parameter in [lo, hi]; `fallback` when absent; 400 otherwise.
  static size_t count_param(const Call& c, const char* name, size_t lo, size_t hi, size_t fallback) {
    const std::string v = query_param(c, name);
    if (v.empty()) return fallback;
    try {
      size_t pos;
      long long n = std::stoll(v, &pos);
      if (pos == v.size() && n >= static_cast<long long>(lo) && n <= static_cast<long long>(hi))
        return static_cast<size_t>(n);
    } catch (...) {
    }
    bad(name, std::string("'") + name + "' must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }

  registry::DocumentQuery document_query(const Call& c) {
    registry::DocumentQuery q;
    auto param = [&](const char* name) { return query_param(c, name); };
    q.limit = count_param(c, "limit", 1, kMaxListLimit, 50);
    q.offset = count_param(c, "offset", 0, 10'000'000, 0);
    const std::string kb = param("kb_name");
    if (kb.size() > kMaxKeyBytes) bad("kb_name", "'kb_name' is too long");
    if (!kb.empty()) {  // an empty ?kb_name= means "not given"
      check_kbs(c, {kb}, "kb_name");
      q.kb_names = {kb};
    } else {
      q.kb_names = c.scope.kb_names;
    }
    const std::string ns = param("plugin_namespace");
    if (ns.size() > kMaxKeyBytes) bad("plugin_namespace", "'plugin_namespace' is too long");
    if (!ns.empty()) q.plugin_namespace = ns;
    const std::string kind = param("kind");
    if (kind.size() > kMaxKeyBytes) bad("kind", "'kind' is too long");
    app::apply_document_kind(q, kind);
    return q;
  }

  // EAGLE_CONSOLE_DIR (development only): serve the console from that folder instead
  // of the copy embedded at build time, so a page edit needs no rebuild.
  const std::string console_dir = [] {
    const char* v = std::getenv("EAGLE_CONSOLE_DIR");
    return std::string(v ? v : "");
  }();

  void serve_console_file(const std::string& name, HttpResponse& res) {
    for (const auto& f : console_files()) {
      if (f.path != name) continue;
      std::string body(f.bytes);
      if (!console_dir.empty()) {
        std::ifstream in(fs::path(console_dir) / name, std::ios::binary);
        if (in) body.assign(std::istreambuf_iterator<char>(in), {});
      }
      res.status = 200;
      // The page runs only its own scripts and talks only to this server.
      res.set_header("Content-Security-Policy",
                     "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                     "connect-src 'self'; frame-ancestors 'none'");
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("Cache-Control", "no-cache");
      res.set_content(body, std::string(f.content_type));
      return;
    }
    throw HttpError{404, "not_found", "no console file '" + name + "'", ""};
  }

  std::string gauges() {
    std::ostringstream o;
    o << "# HELP eagle_collection_rows Live rows per collection.\n# TYPE eagle_collection_rows gauge\n";
    auto infos = engine.collection_infos();
    for (const auto& i : infos) o << "eagle_collection_rows{collection=\"" << prom_label(i.name) << "\"} " << i.rows << "\n";
    o << "# HELP eagle_collection_log_bytes Write-ahead log bytes since the last checkpoint.\n"
         "# TYPE eagle_collection_log_bytes gauge\n";
    for (const auto& i : infos)
      o << "eagle_collection_log_bytes{collection=\"" << prom_label(i.name) << "\"} " << i.log_bytes << "\n";
    o << "# HELP eagle_ingest_running Ingest tasks running now.\n# TYPE eagle_ingest_running gauge\n"
      << "eagle_ingest_running " << tasks.running() << "\n";
    o << "# HELP eagle_ready 1 once the store and plugins are loaded.\n# TYPE eagle_ready gauge\n"
      << "eagle_ready " << (owner.ready() ? 1 : 0) << "\n";
    return o.str();
  }

  // Route matching goes in order: the groups below are registered in this order.
  void add_routes() {
    add_status_routes();
    add_console_routes();
    add_search_routes();
    add_query_routes();
    add_session_routes();
    add_ingest_and_mcp_routes();
    add_task_routes();
    add_document_routes();
    add_collection_routes();
    add_knowledge_base_and_tag_routes();
  }

  // /health, /ready, /metrics and /openapi.json.
  void add_status_routes() {
    add("GET", "/health", "/health",
        [](Impl& s, Call& c) { s.reply(c.res, 200, {{"status", "ok"}, {"version", "0.1.0"}}); }, true);
    add("GET", "/ready", "/ready", [](Impl& s, Call& c) {
      if (!s.owner.ready()) throw HttpError{503, "unavailable", "the server is still loading", ""};
      s.reply(c.res, 200, {{"ready", true}, {"collections", s.engine.catalog().list().size()}});
    });
    add("GET", "/metrics", "/metrics", [](Impl& s, Call& c) {
      // Every collection's rows and every route's traffic: an operator's view.
      if (!c.scope.kb_names.empty())
        throw HttpError{403, "permission_denied", "this token is limited to knowledge bases; /metrics needs one that is not",
                        ""};
      c.res.status = 200;
      c.res.set_content(s.metrics.render(s.gauges()), "text/plain; version=0.0.4; charset=utf-8");
    });
    add("GET", "/openapi.json", "/openapi.json", [](Impl&, Call& c) {
      c.res.status = 200;
      c.res.set_content(openapi_document(), "application/json");
    });
  }

  // The web console: static files, public (a browser navigation carries no bearer
  // token; the page asks for one when the API answers 401).
  void add_console_routes() {
    add("GET", "/", "/", [](Impl& s, Call& c) { s.serve_console_file("index.html", c.res); }, true);
    add("GET", "/console/([A-Za-z0-9._-]+)", "/console/{file}",
        [](Impl& s, Call& c) { s.serve_console_file(c.match[1].str(), c.res); }, true);
  }

  // POST /search and its streamed form.
  void add_search_routes() {
    add("POST", "/search", "/search", [](Impl& s, Call& c) {
      auto r = s.search_request(c, search_body(c.req));
      // Test hook (EAGLE_FAULT_INJECT=search): an unexpected exception inside a
      // handler, to prove a 500 carries no internals and the server keeps serving.
      if (s.inject_fault && r.query == "eagle-inject-fault")
        throw std::runtime_error("injected fault at /internal/secret/path");
      auto resp = s.run_search(r);
      s.reply(c.res, 200, app::search_response_json(resp, r.explain));
    });
    add("POST", "/search/stream", "/search/stream", [](Impl& s, Call& c) {
      // The search runs first, so its errors are plain JSON errors; then its steps and
      // sources go out as events.
      auto r = s.search_request(c, parse_body(c.req));
      auto resp = std::make_shared<search::RetrievalResponse>(s.run_search(r));
      s.stream_events(c, [r, resp](const EventFn& event) {
        const json steps = app::search_response_json(*resp, false)["steps"];  // named: a temporary's member would dangle
        for (const auto& step : steps)
          if (!event("step", step)) return;
        if (!event("sources", {{"sources", app::sources_json(*resp, r.explain)}, {"took_ms", resp->metadata.value("took_ms", 0.0)}}))
          return;
        event("done", json::object());
      });
    });
  }

  // The answer stage (app/query.h): POST /query answers at once; /query/stream sends
  // step events as the pipeline goes, the numbered sources, the answer's tokens as
  // the model writes them, then done (the body of /query without its sources).
  void add_query_routes() {
    add("POST", "/query", "/query", [](Impl& s, Call& c) {
      auto q = s.query_request(c, parse_body(c.req));
      const auto result = s.engine.converse(q.request, s.session_call(c, q.session_id));
      s.reply(c.res, 200, app::query_response_json(result, q.request.retrieval.explain));
    });
    add("POST", "/query/stream", "/query/stream", [](Impl& s, Call& c) {
      auto q = s.query_request(c, parse_body(c.req));
      s.stream_events(c, [&s, q, session = s.session_call(c, q.session_id)](const EventFn& event) mutable {
        bool open = true;
        session.still_wanted = [&open] { return open; };  // a client gone keeps no turn
        app::QueryEvents ev;
        ev.step = [&](const json& step) { open = open && event("step", step); };
        ev.sources = [&](const app::QueryResult& r) {
          json sources = app::sources_json(r.search, q.request.retrieval.explain);
          for (size_t i = 0; i < sources.size(); ++i) sources[i]["n"] = i + 1;
          open = open && event("sources", {{"sources", sources}});
        };
        // A client that is gone stops the model's reply (the token callback says so).
        ev.token = [&](std::string_view piece) { return open = open && event("token", {{"text", std::string(piece)}}); };
        const auto result = s.engine.converse(q.request, session, ev);
        if (!open) return;
        json done = app::query_response_json(result, q.request.retrieval.explain);
        done.erase("sources");
        event("done", done);
      });
    });
  }

  // Sessions (Eagle-RAG's): the caller's own only; another token's is 404, as absent.
  void add_session_routes() {
    add("GET", "/sessions", "/sessions", [](Impl& s, Call& c) {
      const size_t limit = count_param(c, "limit", 1, kMaxListLimit, 50);
      const size_t offset = count_param(c, "offset", 0, 10'000'000, 0);
      size_t total = 0;
      json arr = json::array();
      for (const auto& r : s.engine.list_sessions(principal(c), limit, offset, &total))
        arr.push_back(app::session_json(r));
      s.reply(c.res, 200, {{"sessions", arr}, {"total", total}, {"limit", limit}, {"offset", offset}});
    });
    // The session and its last `limit` turns (100; at most 1,000 a page of turns).
    add("GET", "/sessions/([^/]+)", "/sessions/{session_id}", [](Impl& s, Call& c) {
      const std::string id = c.match[1].str();
      auto found = s.engine.session(id, principal(c), count_param(c, "limit", 1, 1000, 100));
      if (!found) throw HttpError{404, "not_found", "no session '" + id + "'", ""};
      json turns = json::array();
      for (const auto& t : found->second) turns.push_back(app::session_turn_json(t));
      s.reply(c.res, 200, {{"session", app::session_json(found->first)}, {"turns", turns}});
    });
    add("DELETE", "/sessions/([^/]+)", "/sessions/{session_id}", [](Impl& s, Call& c) {
      const std::string id = c.match[1].str();
      auto n = s.engine.delete_session(id, principal(c));
      if (!n) throw HttpError{404, "not_found", "no session '" + id + "'", ""};
      s.reply(c.res, 200, {{"session_id", id}, {"deleted_turns", *n}});
    });
  }

  // POST /ingest and the MCP endpoint.
  void add_ingest_and_mcp_routes() {
    add("POST", "/ingest", "/ingest", [](Impl& s, Call& c) { s.handle_ingest(c); });
    // MCP over Streamable HTTP: the Host, Origin and token checks above hold, and a
    // token's knowledge bases scope every tool.
    for (const char* method : {"POST", "GET", "DELETE"})
      add(method, "/mcp", "/mcp", [](Impl& s, Call& c) { s.handle_mcp(c); });
  }

  // The ingest and re-embed tasks: the recent ones, and one by id.
  void add_task_routes() {
    add("GET", "/tasks", "/tasks", [](Impl& s, Call& c) {
      json arr = json::array();
      for (const auto& t : s.tasks.recent(100))
        if (c.scope.kb_names.empty() || t.owner == (c.token ? c.token->name : "")) arr.push_back(task_json(t));
      s.reply(c.res, 200, {{"tasks", arr}});
    });
    add("GET", "/tasks/([^/]+)", "/tasks/{id}", [](Impl& s, Call& c) {
      auto t = s.tasks.get(c.match[1].str());
      // A scoped token sees only its own tasks.
      if (!t || (!c.scope.kb_names.empty() && t->owner != (c.token ? c.token->name : "")))
        throw HttpError{404, "not_found", "no task '" + c.match[1].str() + "'", ""};
      s.reply(c.res, 200, task_json(*t));
    });
  }

  // The documents: listed, viewed, deleted and tagged, and a visual hit's image.
  void add_document_routes() {
    add("GET", "/documents", "/documents", [](Impl& s, Call& c) {
      auto q = s.document_query(c);
      size_t total = 0;
      auto docs = s.engine.list_documents(q, &total);
      s.reply(c.res, 200, app::document_list_json(s.engine, docs, total, q));
    });
    add("GET", "/documents/(.+)", "/documents/{id}", [](Impl& s, Call& c) {
      const std::string id = c.match[1].str();
      auto v = s.engine.document(id, c.scope);
      if (!v) throw HttpError{404, "not_found", "no document '" + id + "'", ""};
      s.reply(c.res, 200, app::document_view_json(*v));
    });
    // A visual hit's kept image, by its image_id: a scoped token sees only
    // its knowledge bases' tiles (another's is 404, its existence not revealed).
    add("GET", "/images/(.+)", "/images/{image_id}", [](Impl& s, Call& c) {
      const std::string id = c.match[1].str();
      auto tile = s.engine.tile_image(id, c.scope);
      if (!tile) throw HttpError{404, "not_found", "no image '" + id + "'", ""};
      c.res.status = 200;
      c.res.set_header("Cache-Control", "private, no-cache");
      // The bytes are what was ingested: a browser must not read them as anything else.
      c.res.set_header("X-Content-Type-Options", "nosniff");
      c.res.set_content(tile->bytes, tile->media_type);
    });
    add("DELETE", "/documents/(.+)", "/documents/{id}", [](Impl& s, Call& c) {
      const std::string id = c.match[1].str();
      size_t n = s.engine.delete_document(id, c.scope);
      s.reply(c.res, 200, {{"document_id", id}, {"deleted_chunks", n}});
    });
    add("PUT", "/documents/(.+)/tags", "/documents/{id}/tags", [](Impl& s, Call& c) {
      const std::string id = c.match[1].str();
      json body = parse_body(c.req);
      only_fields(body, {"tags", "plugin_namespace"});
      if (!body.contains("tags")) bad("tags", "'tags' is required");
      auto tags = list_field(body, "tags", registry::kMaxIds);
      for (const auto& t : tags)
        if (t.empty()) bad("tags", "a tag must not be empty");
      std::string ns = str_field(body, "plugin_namespace", kMaxKeyBytes);
      if (ns.empty()) {
        auto v = s.engine.document(id, c.scope);
        if (!v) throw HttpError{404, "not_found", "no document '" + id + "'", ""};
        ns = v->record.plugin_namespace;
      }
      auto now = s.engine.set_tags(id, ns, tags, c.scope);
      s.reply(c.res, 200, {{"document_id", id}, {"tags", now}});
    });
  }

  // The collections, one collection, and its re-embedding.
  void add_collection_routes() {
    add("GET", "/collections", "/collections", [](Impl& s, Call& c) {
      s.reply(c.res, 200, app::collection_list_json(s.engine.collection_infos(c.scope)));
    });
    add("GET", "/collections/([^/]+)", "/collections/{name}", [](Impl& s, Call& c) {
      s.reply(c.res, 200, app::collection_json(s.engine.collection_info(c.match[1].str(), c.scope)));
    });
    // A collection's vectors rebuilt with an encoder as configured now (eagle reembed),
    // as a task: searches go on, against the old vectors until the swap.
    add("POST", "/collections/([^/]+)/reembed", "/collections/{name}/reembed", [](Impl& s, Call& c) {
      // A collection holds every knowledge base's rows: not for a token scoped to some.
      if (!c.scope.kb_names.empty())
        throw HttpError{403, "permission_denied", "this token is limited to knowledge bases; re-embedding rewrites a whole collection", ""};
      json body = c.req.body.empty() ? json::object() : parse_body(c.req);
      only_fields(body, {"encoder"});
      ReembedJob r;
      r.collection = c.match[1].str();
      r.encoder = str_field(body, "encoder", kMaxKeyBytes);
      if (!s.engine.catalog().exists(r.collection))
        throw HttpError{404, "not_found", "no collection named '" + r.collection + "'", ""};
      if (!r.encoder.empty() && !s.engine.encoders().has_encoder(r.encoder))
        bad("encoder", "no encoder labelled '" + r.encoder + "' (eagle encoders lists the configured ones)");
      IngestJob job;
      job.reembed = std::move(r);
      job.owner = c.token ? c.token->name : "";
      std::string id = s.tasks.submit(std::move(job));
      s.reply(c.res, 202, {{"task_id", id}, {"state", "queued"}});
    });
  }

  // The knowledge bases and the tags, with their document counts.
  void add_knowledge_base_and_tag_routes() {
    add("GET", "/knowledge_bases", "/knowledge_bases", [](Impl& s, Call& c) {
      json arr = json::array();
      for (const auto& k : s.engine.knowledge_bases(c.scope)) arr.push_back({{"kb_name", k.name}, {"documents", k.count}});
      s.reply(c.res, 200, {{"knowledge_bases", arr}});
    });
    add("GET", "/tags", "/tags", [](Impl& s, Call& c) {
      std::optional<std::string> ns;
      if (c.req.has_param("plugin_namespace") && !c.req.get_param_value("plugin_namespace").empty())
        ns = c.req.get_param_value("plugin_namespace");
      if (ns && ns->size() > kMaxKeyBytes) bad("plugin_namespace", "'plugin_namespace' is too long");
      json arr = json::array();
      for (const auto& t : s.engine.tags(ns, c.scope)) arr.push_back({{"tag", t.name}, {"documents", t.count}});
      s.reply(c.res, 200, {{"tags", arr}});
    });
  }

  // Every request comes here, on a worker, once its body is read: host/origin,
  // routing (404/405), auth, the handler, errors as JSON, metrics.
  void dispatch(HttpRequest& req, HttpResponse& res) {
    const auto t0 = std::chrono::steady_clock::now();
    std::string route_name = "unmatched";
    try {
      dispatch_checked(req, res, route_name);
    } catch (const HttpError& e) {
      if (e.status == 401) res.set_header("WWW-Authenticate", "Bearer");
      reply(res, e.status, error_body(e.code, e.message, e.field));
    } catch (const Error& e) {
      auto [status, code] = engine_status(e);
      reply(res, status, error_body(code, e.what()));
    } catch (const std::exception& e) {
      // No internals reach the client; the log has them.
      spdlog::error("{} {}: {}", req.method, req.path, e.what());
      reply(res, 500, error_body("internal", "internal error"));
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    metrics.observe(route_name, method_label(req.method), res.status, secs);
  }

  // The listener's screen: runs on the headers, before the body is read. A request
  // that admit() refuses is answered now and its body never read in, so a client
  // without a token, or one sending what no route takes, never gets the server to
  // read, buffer or parse a body. True: go on (read the body, then dispatch).
  bool screen(const HttpRequest& req, HttpResponse& res) {
    std::string route_name = "unmatched";
    try {
      Call call{req, res, {}, nullptr, {}};
      admit(call, route_name);
      return true;
    } catch (const HttpError& e) {
      if (e.status == 401) res.set_header("WWW-Authenticate", "Bearer");
      // The body is never read, so the connection cannot carry another request.
      if (lower_ascii(req.get_header_value("Connection")) != "close") res.set_header("Connection", "close");
      reply(res, e.status, error_body(e.code, e.message, e.field));
    }
    metrics.observe(route_name, method_label(req.method), res.status, 0);
    return false;
  }

  void dispatch_checked(HttpRequest& req, HttpResponse& res, std::string& route_name) {
    Call call{req, res, {}, nullptr, {}};
    const Route* found = admit(call, route_name);
    if ((req.method == "POST" || req.method == "PUT") && req.is_multipart_form_data())
      parse_multipart(req, kMaxFormParts);
    found->handler(*this, call);
  }

  // What the headers alone decide: Host and Origin, the route (404, 405), the token
  // (401) and what the body may be (415). Fills call's match, token and scope.
  const Route* admit(Call& call, std::string& route_name) {
    const HttpRequest& req = call.req;
    // DNS-rebinding protection: the Host must be one of ours, and a browser's Origin
    // must be allowed (or this server itself). One of each: with two, a check of the
    // first and a use of the second would disagree.
    if (req.get_header_value_count("Host") != 1 || req.get_header_value_count("Origin") > 1)
      throw HttpError{400, "invalid_argument", "a request has exactly one Host header and at most one Origin", ""};
    const auto host = host_name(req.get_header_value("Host"));
    if (!host || !allowed_hosts.count(*host))
      throw HttpError{403, "permission_denied",
                      "Host '" + req.get_header_value("Host") + "' is not allowed (server.allowed_hosts)", ""};
    if (req.has_header("Origin")) {
      const std::string origin = req.get_header_value("Origin");
      bool ok = std::find(opts.allowed_origins.begin(), opts.allowed_origins.end(), origin) != opts.allowed_origins.end();
      for (const auto& h : allowed_hosts)
        if (origin == "http://" + h + ":" + std::to_string(port)) ok = true;
      if (origin.empty() || !ok)
        throw HttpError{403, "permission_denied", "Origin '" + origin + "' is not allowed (server.allowed_origins)", ""};
    }
    // HEAD is GET without the body (the listener sends the headers only).
    const std::string method = req.method == "HEAD" ? "GET" : req.method;
    const Route* found = nullptr;
    std::smatch match;
    std::vector<std::string> allowed_methods;
    for (const auto& r : routes) {
      std::smatch m;
      if (!std::regex_match(req.path, m, r.pattern)) continue;
      route_name = r.name;
      if (r.method == method) {
        found = &r;
        match = m;
        break;
      }
      allowed_methods.push_back(r.method);
    }
    if (!found) {
      if (allowed_methods.empty()) {
        route_name = "unmatched";
        throw HttpError{404, "not_found", "no route " + req.method + " " + req.path, ""};
      }
      std::string allow;
      for (const auto& m : allowed_methods) allow += (allow.empty() ? "" : ", ") + m;
      call.res.set_header("Allow", allow);
      throw HttpError{405, "method_not_allowed", req.method + " is not allowed on " + route_name + " (" + allow + ")", ""};
    }
    call.match = std::move(match);
    if (!opts.tokens.empty() && !found->public_route) {
      const std::string auth = req.get_header_value("Authorization");
      const std::string prefix = "Bearer ";
      if (auth.size() <= prefix.size() || auth.compare(0, prefix.size(), prefix) != 0)
        throw HttpError{401, "unauthenticated", "this server needs 'Authorization: Bearer <token>'", ""};
      const std::string presented = auth.substr(prefix.size());
      for (const auto& t : opts.tokens)
        if (constant_time_equal(presented, t.value)) call.token = &t;
      if (!call.token) throw HttpError{401, "unauthenticated", "the bearer token is not valid", ""};
      call.scope.kb_names = call.token->kb_names;
    }
    // Bodies: JSON or a multipart upload (a form-urlencoded body, what `curl -d` sends
    // without a type, was parsed as a form and refused with a wrong message). /mcp
    // checks its own. Their size is the listener's: server.max_body_bytes against a
    // Content-Length before a byte is read, and counted while a chunked body is read.
    // A Transfer-Encoding reached here only if its last coding is chunked (the listener
    // refuses the rest): a body.
    const bool has_body = req.has_header("Transfer-Encoding") ||
                          (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
    if (has_body && (method == "POST" || method == "PUT") && found->name != "/mcp") {
      const std::string type = lower_ascii(req.get_header_value("Content-Type"));
      std::string media = type.substr(0, type.find(';'));
      while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.pop_back();
      if (media != "application/json" && media != "multipart/form-data")
        throw HttpError{415, "unsupported_media_type",
                        "send the body as JSON with 'Content-Type: application/json' (curl: --json '{...}'), or a "
                        "file upload as multipart/form-data; got '" + media + "'",
                        ""};
    }
    return found;
  }
};

Server::Server(app::Engine& engine, ServerOptions opts) : impl_(std::make_unique<Impl>(engine, std::move(opts), *this)) {
  auto& o = impl_->opts;
  auto& l = impl_->limits;
  l.io_threads = o.io_threads;
  l.workers = o.threads;
  l.max_pending = o.threads * kPendingPerWorker;
  l.max_connections = o.max_connections;
  l.header_timeout_s = o.header_timeout_s;
  l.body_timeout_s = o.request_timeout_s;
  l.max_body_bytes = o.max_body_bytes;
  l.keep_alive_requests = kKeepAliveRequests;
  auto& h = impl_->handlers;
  h.screen = [this](const HttpRequest& req, HttpResponse& res) { return impl_->screen(req, res); };
  h.handle = [this](HttpRequest& req, HttpResponse& res) { impl_->dispatch(req, res); };
  // What the listener answers itself (413 past the body limit, 400 for a request it
  // cannot read, 503 when the workers' queue is full): counted like ours.
  h.refused = [this](const HttpRequest& req, const HttpResponse& res) {
    impl_->metrics.observe("unmatched", method_label(req.method), res.status, 0);
  };
}

Server::~Server() { stop(); }

namespace {
// Upload folders (eagle-upload-<pid>-<n>) a server that is gone left behind: a job's
// folder is removed on every path of a running server, but a killed one cannot. A
// folder whose pid is alive is another server's (or, after pid reuse, left alone).
void sweep_stale_uploads() {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path(ec), ec)) {
    const std::string name = e.path().filename().string();
    constexpr std::string_view kPrefix = "eagle-upload-";
    if (!name.starts_with(kPrefix) || !e.is_directory(ec)) continue;
    const auto dash = name.find('-', kPrefix.size());
    const std::string pid_text = name.substr(kPrefix.size(), dash - kPrefix.size());
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9)
      continue;
    const auto pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) {
      std::error_code rm;
      fs::remove_all(e.path(), rm);
      if (!rm) spdlog::info("removed the upload folder {} of a server that is gone", e.path().string());
    }
  }
}
}  // namespace

int Server::bind() {
  sweep_stale_uploads();
  auto& o = impl_->opts;
  impl_->listener = std::make_unique<HttpListener>(impl_->limits, impl_->handlers);
  const int port = impl_->listener->bind(o.host, o.port);
  if (port < 0)
    fail(ErrorCode::unavailable, "cannot listen on " + o.host + ":" + std::to_string(o.port) +
                                     " (in use, or not an address of this machine)");
  impl_->port = port;
  return port;
}

void Server::run() {
  if (impl_->listener) impl_->listener->run();
}

std::string Server::answer_bytes(std::string_view bytes, size_t max_requests, size_t max_out) {
  return HttpListener::answer_bytes(bytes, impl_->limits, impl_->handlers, max_requests, max_out);
}

void Server::stop() {
  if (impl_ && impl_->listener) impl_->listener->stop();
}

}  // namespace eagle::server
