// `eagle serve` over real sockets (127.0.0.1), driven by curl, a client nobody here
// wrote: every endpoint, every error status, auth, Host/Origin checks, a scope that
// must not leak, the store lock, and at the end every recorded response validated
// against the OpenAPI document by tests/server/openapi_check.mjs (ajv, npm).
#include <gtest/gtest.h>
#include <httplib.h>
#include "support/build_paths.h"
#include "support/local_http_server.h"
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "eagle/core/base64.h"
#include "eagle/ingest/image/image.h"
#include "shared_data.h"
#include "support/images.h"
#include "support/temp_cleanup.h"
#include "support/server_process.h"
#include "support/subprocess.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kWork = eagle::test_support::remove_at_end(fs::temp_directory_path() / ("eagle_server_test_" + std::to_string(::getpid())));
const fs::path kResponses = kWork / "responses.jsonl";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

using eagle::test_support::RunResult;
using eagle::test_support::run_shell;
using eagle::test_support::ServerProcess;

RunResult run_eagle(const std::string& args) { return run_shell(std::string(EAGLE_BIN_DIR) + "/eagle " + args); }

struct Response {
  int status = 0;
  std::string content_type;
  std::string body;
  json j() const { return json::parse(body, nullptr, false); }
};

struct Call {
  std::string method = "GET";
  std::string path;      // the real path (with query)
  std::string route;     // the OpenAPI template it exercises ("" = not recorded)
  std::string body;      // sent as is (JSON unless content_type says otherwise)
  std::vector<std::string> headers;
  std::vector<std::string> curl_args;  // e.g. -F file=@x
};

// curl does the HTTP; every response (and its JSON request body, if any) is appended
// to responses.jsonl for the OpenAPI check.
Response http(int port, const Call& c) {
  static std::atomic<int> counter{0};  // client threads call this concurrently
  const int n = ++counter;
  const fs::path body_out = kWork / ("resp-" + std::to_string(n));
  const fs::path body_in = kWork / ("req-" + std::to_string(n));
  std::string cmd = "curl -s -S -o " + shell_quote(body_out.string()) + " -w '%{http_code} %{content_type}' -X " +
                    c.method;
  for (const auto& h : c.headers) cmd += " -H " + shell_quote(h);
  for (const auto& a : c.curl_args) cmd += " " + a;
  if (!c.body.empty()) {
    std::ofstream(body_in, std::ios::binary) << c.body;
    cmd += " -H 'Content-Type: application/json' --data-binary @" + shell_quote(body_in.string());
  }
  cmd += " " + shell_quote("http://127.0.0.1:" + std::to_string(port) + c.path);
  auto r = run_shell(cmd);
  Response resp;
  std::istringstream meta(r.out);
  meta >> resp.status;
  std::getline(meta, resp.content_type);
  if (!resp.content_type.empty() && resp.content_type[0] == ' ') resp.content_type.erase(0, 1);
  resp.body = read_file(body_out);
  if (!c.route.empty()) {
    json rec = {{"method", c.method}, {"path", c.route}, {"status", resp.status}, {"content_type", resp.content_type}};
    auto parsed = json::parse(resp.body, nullptr, false);
    // An image is bytes, not text: the check sees a string standing for it.
    if (resp.content_type.rfind("image/", 0) == 0)
      rec["body"] = std::to_string(resp.body.size()) + " bytes of " + resp.content_type;
    else
      rec["body"] = parsed.is_discarded() ? json(resp.body) : parsed;
    // The JSON request body too, checked against the operation's requestBody on a 2xx
    // (multipart calls send no c.body and record none).
    if (!c.body.empty()) {
      auto request = json::parse(c.body, nullptr, false);
      if (!request.is_discarded()) rec["request"] = request;
    }
    std::ofstream(kResponses, std::ios::app) << rec.dump() << "\n";
  }
  return resp;
}

std::string spl_label(const std::string& set_id, const std::vector<std::pair<std::string, std::string>>& sections) {
  std::string body;
  for (const auto& [code, text] : sections)
    body += "<component><section><code code=\"" + code + "\" displayName=\"X\"/><title>" + code +
            " section</title><text><paragraph>" + text + "</paragraph></text></section></component>";
  return R"(<?xml version="1.0" encoding="UTF-8"?>
<document xmlns="urn:hl7-org:v3">
  <id root="doc-)" + set_id + R"("/>
  <code code="34391-3" displayName="HUMAN PRESCRIPTION DRUG LABEL"/>
  <title>ZEPTOCILLIN tablets</title>
  <effectiveTime value="20200102"/>
  <setId root=")" + set_id + R"("/>
  <versionNumber value="3"/>
  <component><structuredBody>)" + body + R"(</structuredBody></component>
</document>)";
}

// The main server: the sample corpus, a small body limit, an ingest root.
class ServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::remove_all(kWork);
    fs::create_directories(kWork / "root");
    store_ = kWork / "store";
    auto r = run_eagle("--data-dir " + store_.string() + " ingest --kb sample " + std::string(EAGLE_SOURCE_DIR) +
                   "/examples/sample");
    ASSERT_EQ(r.rc, 0) << r.out;
    // "ingested D documents as N rows ...": the rows /metrics must report.
    const auto as = r.out.find(" as "), rows = r.out.find(" rows", as);
    ASSERT_TRUE(as != std::string::npos && rows != std::string::npos) << r.out;
    sample_rows_ = r.out.substr(as + 4, rows - as - 4);
    server_ = new ServerProcess(store_, {"--set", "server.max_body_bytes=200000", "--set",
                                         "server.ingest_root=" + (kWork / "root").string()});
    ASSERT_TRUE(server_->running()) << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static Response call(const Call& c) { return http(server_->port(), c); }
  static Response wait_task(const std::string& id) {
    Response r;
    for (int i = 0; i < 600; ++i) {
      r = call({"GET", "/tasks/" + id, "/tasks/{id}"});
      auto s = r.j().value("state", std::string());
      if (s == "succeeded" || s == "failed") return r;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return r;
  }
  static inline fs::path store_;
  static inline std::string sample_rows_;  // rows the sample ingest reported
  static inline ServerProcess* server_ = nullptr;
};

std::vector<std::string> source_ids(const Response& r) {
  std::vector<std::string> out;
  const json j = r.j();  // a named copy: a range-for over r.j()["sources"] would dangle
  for (const auto& s : j["sources"]) out.push_back(s["id"]);
  return out;
}

}  // namespace

TEST_F(ServerTest, HealthReadyOpenapiAndMetrics) {
  auto h = call({"GET", "/health", "/health"});
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.j()["status"], "ok");
  auto ready = call({"GET", "/ready", "/ready"});
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.j()["collections"], 1);
  auto api = call({"GET", "/openapi.json", "/openapi.json"});
  EXPECT_EQ(api.status, 200);
  EXPECT_EQ(api.j()["openapi"], "3.1.0");
  // The document's enums are the server's own lists (the build's plugins included): a
  // namespace or format outside them is refused naming the same list.
  const json schemas = api.j()["components"]["schemas"];
  auto words = [](const json& e) {
    std::string s;
    for (const auto& v : e) s += (s.empty() ? "" : ", ") + v.get<std::string>();
    return s;
  };
  auto bad_ns = call({"POST", "/search", "", R"({"query": "PD-1", "plugin_namespace": "nope"})"});
  EXPECT_EQ(bad_ns.status, 400);
  const json ns_enum = schemas["PluginNamespace"]["enum"];
  EXPECT_NE(bad_ns.body.find("must be " + words(ns_enum) + " or auto"), std::string::npos) << bad_ns.body;
  EXPECT_EQ(schemas["PluginNamespaceOrAuto"]["enum"].back(), "auto");
  auto bad_format = call({"POST", "/ingest", "", R"({"path": "x", "format": "nope"})"});
  EXPECT_EQ(bad_format.status, 400) << bad_format.body;
  EXPECT_NE(bad_format.body.find("must be one of " + words(schemas["IngestFormat"]["enum"])), std::string::npos)
      << bad_format.body;
  call({"POST", "/search", "/search", R"({"query": "PD-1"})"});
  auto m = call({"GET", "/metrics", "/metrics"});
  EXPECT_EQ(m.status, 200);
  EXPECT_NE(m.content_type.find("text/plain"), std::string::npos);
  EXPECT_NE(m.body.find("eagle_http_requests_total{route=\"/search\",method=\"POST\",status=\"200\"}"), std::string::npos)
      << m.body;
  EXPECT_NE(m.body.find("eagle_http_request_duration_seconds_bucket{route=\"/search\",le=\"+Inf\"}"), std::string::npos);
  EXPECT_NE(m.body.find("eagle_collection_rows{collection=\"eagle_text\"} " + sample_rows_ + "\n"), std::string::npos)
      << m.body;
  EXPECT_NE(m.body.find("eagle_collection_log_bytes{collection=\"eagle_text\"}"), std::string::npos);
  EXPECT_NE(m.body.find("eagle_ingest_running 0"), std::string::npos);
}

TEST_F(ServerTest, SearchAnswersWithSourcesRouteAndSteps) {
  auto r = call({"POST", "/search", "/search", R"({"query": "PD-1 blockade in NSCLC", "top_k": 3, "explain": true})"});
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = r.j();
  ASSERT_EQ(j["sources"].size(), 3u);
  EXPECT_EQ(j["sources"][0]["id"], "ab02");  // the PD-1 abstract
  EXPECT_EQ(j["sources"][0]["collection"], "eagle_text");
  EXPECT_TRUE(j["sources"][0]["explain"].is_object());
  EXPECT_EQ(j["steps"][0]["name"], "namespace");
  EXPECT_EQ(j["steps"][0]["used"], "core");  // auto over a store without biomed documents
  EXPECT_EQ(j["steps"][1]["name"], "route");
  EXPECT_EQ(j["steps"][2]["name"], "recall");
  EXPECT_GT(j["steps"][2]["text_count"].get<int>(), 0);
  EXPECT_EQ(j["route"]["source"], "core_default");
  // Defaults: top_k 5 (seed §10.1).
  EXPECT_EQ(call({"POST", "/search", "/search", R"({"query": "cancer"})"}).j()["sources"].size(), 5u);
  // Facets and a filter expression narrow the rows.
  auto f = call({"POST", "/search", "/search", R"({"query": "cancer", "top_k": 10, "filter": "id in [\"ab02\", \"ab03\"]"})"});
  ASSERT_EQ(f.status, 200) << f.body;
  for (const auto& id : source_ids(f)) EXPECT_TRUE(id == "ab02" || id == "ab03") << id;
  auto kb = call({"POST", "/search", "/search", R"({"query": "cancer", "kb_name": "no-such-kb"})"});
  EXPECT_EQ(kb.j()["sources"].size(), 0u);
  auto legacy = call({"POST", "/search", "/search", R"({"query": "cancer", "top_k": 10, "scope": ["ab02"]})"});
  EXPECT_EQ(source_ids(legacy), std::vector<std::string>{"ab02"}) << legacy.body;
  // min_score drops the sources below it: at the second source's score,
  // the sources after it that score less are gone.
  auto all = call({"POST", "/search", "/search", R"({"query": "cancer", "top_k": 10})"}).j()["sources"];
  ASSERT_GE(all.size(), 3u);
  const double cut = all[1]["score"].get<double>();
  auto high = call({"POST", "/search", "/search",
                    R"({"query": "cancer", "top_k": 10, "min_score": )" + std::to_string(cut) + "}"});
  ASSERT_EQ(high.status, 200) << high.body;
  const auto kept = high.j()["sources"];  // a copy: j() returns a temporary
  ASSERT_FALSE(kept.empty());
  EXPECT_LT(kept.size(), all.size());
  for (const auto& src : kept) EXPECT_GE(src["score"].get<double>(), cut - 1e-6);
}

TEST_F(ServerTest, SearchStreamSendsStepsSourcesThenDone) {
  auto r = call({"POST", "/search/stream", "/search/stream", R"({"query": "PD-1 blockade", "top_k": 2})"});
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.content_type.find("text/event-stream"), std::string::npos);
  const auto a = r.body.find("event: step"), b = r.body.find("event: sources"), c = r.body.find("event: done");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(c, std::string::npos);
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_NE(r.body.find("\"ab02\""), std::string::npos);
}

TEST_F(ServerTest, BadRequestsGetTheirStatusAndAFieldNeverAStackTrace) {
  struct Case {
    std::string body;
    int status;
    std::string code, field;
  };
  const std::vector<Case> cases = {
      {"{not json", 400, "invalid_argument", ""},
      {"[1, 2]", 400, "invalid_argument", ""},
      {R"({"top_k": 3})", 400, "invalid_argument", "query"},
      {R"({"query": ""})", 400, "invalid_argument", "query"},
      {R"({"query": 7})", 400, "invalid_argument", "query"},
      {R"({"query": "x", "top_k": 0})", 400, "invalid_argument", "top_k"},
      {R"({"query": "x", "top_k": 1001})", 400, "invalid_argument", "top_k"},
      {R"({"query": "x", "bogus": 1})", 400, "invalid_argument", "bogus"},
      {R"({"query": "x", "min_score": "high"})", 400, "invalid_argument", "min_score"},
      {R"({"query": "x", "route_mode": "sideways"})", 400, "invalid_argument", "route_mode"},
      {R"({"query": "x", "plugin_namespace": "astro"})", 400, "invalid_argument", "plugin_namespace"},
      {R"({"query": "x", "scope_filter": {"kb_names": "a"}})", 400, "invalid_argument", "scope_filter.kb_names"},
      {R"({"query": "x", "facets": {"year": {"a": 1}}})", 400, "invalid_argument", "facets.year"},
      {R"({"query": "x", "filter": "year >= "})", 422, "unprocessable", ""},
      {R"({"query": "x", "filter": "kb_name == \"a\") or (1 == 1"})", 422, "unprocessable", ""},
      {R"({"query": "x", "facets": {"colour": "red"}})", 422, "unprocessable", ""},
      {"{\"query\": \"" + std::string(17000, 'q') + "\"}", 400, "invalid_argument", "query"},
  };
  for (const auto& c : cases) {
    auto r = call({"POST", "/search", "/search", c.body});
    EXPECT_EQ(r.status, c.status) << c.body.substr(0, 80) << " -> " << r.body;
    auto j = r.j();
    ASSERT_TRUE(j.contains("error")) << r.body;
    EXPECT_EQ(j["error"]["code"], c.code) << r.body;
    if (!c.field.empty()) {
      EXPECT_EQ(j["error"].value("field", ""), c.field) << r.body;
    }
    EXPECT_EQ(r.body.find("exception"), std::string::npos) << r.body;
  }
  // The filter error says where.
  auto where = call({"POST", "/search", "/search", R"({"query": "x", "filter": "year >= "})"});
  EXPECT_NE(where.j()["error"]["message"].get<std::string>().find("position"), std::string::npos) << where.body;
  // 413: a body past server.max_body_bytes (200000 here).
  auto big = call({"POST", "/search", "/search", "{\"query\": \"" + std::string(300000, 'x') + "\"}"});
  EXPECT_EQ(big.status, 413);
  EXPECT_EQ(big.j()["error"]["code"], "too_large");
  // 404 and 405.
  auto nf = call({"GET", "/nowhere", ""});
  EXPECT_EQ(nf.status, 404);
  EXPECT_EQ(nf.j()["error"]["code"], "not_found");
  auto na = call({"GET", "/search", "/search"});
  EXPECT_EQ(na.status, 405);
  EXPECT_EQ(na.j()["error"]["code"], "method_not_allowed");
  EXPECT_EQ(call({"GET", "/collections/nothing", "/collections/{name}"}).status, 404);
  EXPECT_EQ(call({"GET", "/tasks/t999", "/tasks/{id}"}).status, 404);
  EXPECT_EQ(call({"GET", "/documents/nothing", "/documents/{id}"}).status, 404);
  EXPECT_EQ(call({"GET", "/documents?limit=0", "/documents"}).status, 400);
  EXPECT_EQ(call({"GET", "/documents?limit=abc", "/documents"}).status, 400);
}

TEST_F(ServerTest, IngestRecordsThenListShowTagSearchDeleteAndNeverFindItAgain) {
  auto r = call({"POST", "/ingest", "/ingest",
                 R"({"kb_name": "kbx", "records": [{"id": "nv1", "title": "Nivolumab", "text": "nivolumab zzwordq in melanoma", "metadata": {"year": 2021, "source_type": "abstract"}}, {"id": "nv2", "text": "ipilimumab zzwordq combination"}]})"});
  ASSERT_EQ(r.status, 202) << r.body;
  const std::string task = r.j()["task_id"];
  auto t = wait_task(task);
  ASSERT_EQ(t.j()["state"], "succeeded") << t.body;
  EXPECT_EQ(t.j()["result"]["rows"], 2);
  EXPECT_EQ(call({"GET", "/tasks", "/tasks"}).j()["tasks"][0]["id"], task);

  auto found = call({"POST", "/search", "/search", R"({"query": "zzwordq", "kb_name": "kbx", "top_k": 5})"});
  EXPECT_EQ(source_ids(found).size(), 2u);
  auto year = call({"POST", "/search", "/search", R"({"query": "zzwordq", "kb_name": "kbx", "facets": {"year": [2021]}, "top_k": 5})"});
  EXPECT_EQ(source_ids(year), std::vector<std::string>{"nv1"});

  auto list = call({"GET", "/documents?kb_name=kbx", "/documents"});
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.j()["total"], 2);
  EXPECT_EQ(list.j()["documents"][0]["document_id"], "nv1");
  auto page = call({"GET", "/documents?limit=10&offset=30", "/documents"});
  // 30 abstracts + the Markdown paper (6 sections, one document) + 2.
  EXPECT_EQ(page.j()["total"], 33);
  EXPECT_EQ(page.j()["documents"].size(), 3u);

  auto show = call({"GET", "/documents/nv1", "/documents/{id}"});
  ASSERT_EQ(show.status, 200) << show.body;
  EXPECT_EQ(show.j()["chunks"].size(), 1u);
  EXPECT_EQ(show.j()["document"]["kb_name"], "kbx");

  auto tag = call({"PUT", "/documents/nv1/tags", "/documents/{id}/tags", R"({"tags": ["immuno", "melanoma"]})"});
  ASSERT_EQ(tag.status, 200) << tag.body;
  EXPECT_EQ(tag.j()["tags"], json::array({"immuno", "melanoma"}));
  EXPECT_EQ(call({"PUT", "/documents/nv1/tags", "/documents/{id}/tags", R"({"tags": [""]})"}).status, 400);
  EXPECT_EQ(call({"PUT", "/documents/none/tags", "/documents/{id}/tags", R"({"tags": ["a"]})"}).status, 404);
  auto tags = call({"GET", "/tags", "/tags"});
  EXPECT_EQ(tags.j()["tags"][0]["tag"], "immuno");
  auto by_tag = call({"POST", "/search", "/search", R"({"query": "zzwordq", "scope_filter": {"tags": ["immuno"]}})"});
  EXPECT_EQ(source_ids(by_tag), std::vector<std::string>{"nv1"});
  auto kbs = call({"GET", "/knowledge_bases", "/knowledge_bases"});
  EXPECT_NE(kbs.body.find("\"kbx\""), std::string::npos);

  auto del = call({"DELETE", "/documents/nv1", "/documents/{id}"});
  ASSERT_EQ(del.status, 200) << del.body;
  EXPECT_EQ(del.j()["deleted_chunks"], 1);
  // After DELETE returned, no search returns it.
  auto after = call({"POST", "/search", "/search", R"({"query": "zzwordq nivolumab melanoma", "top_k": 50})"});
  for (const auto& id : source_ids(after)) EXPECT_NE(id, "nv1");
  EXPECT_EQ(call({"GET", "/documents/nv1", "/documents/{id}"}).status, 404);
  EXPECT_EQ(call({"DELETE", "/documents/nv1", "/documents/{id}"}).status, 404);
}

#if EAGLE_TEST_WITH_BIOMED  // the biomed plugin's
TEST_F(ServerTest, ReingestReplacesEveryChunkOfADocument) {
  // A label with three sections, then the same label (same setId) with one.
  fs::create_directories(kWork / "root" / "labels");
  const auto file = kWork / "root" / "labels" / "zepto.xml";
  std::ofstream(file) << spl_label("zepto-set", {{"34067-9", "zeptocillin treats zqinfection"},
                                                 {"34068-7", "take zeptocillin twice daily"},
                                                 {"43685-7", "zeptocillin warnings and precautions"}});
  auto r = call({"POST", "/ingest", "/ingest", R"({"path": "labels/zepto.xml", "format": "spl"})"});
  ASSERT_EQ(r.status, 202) << r.body;
  ASSERT_EQ(wait_task(r.j()["task_id"]).j()["state"], "succeeded");
  const size_t before = call({"GET", "/documents/doc-zepto-set", "/documents/{id}"}).j()["chunks"].size();
  EXPECT_GE(before, 3u);
  std::ofstream(file) << spl_label("zepto-set", {{"34067-9", "zeptocillin treats zqinfection"}});
  r = call({"POST", "/ingest", "/ingest", R"({"path": "labels/zepto.xml", "format": "spl"})"});
  ASSERT_EQ(wait_task(r.j()["task_id"]).j()["state"], "succeeded");
  auto show = call({"GET", "/documents/doc-zepto-set", "/documents/{id}"});
  EXPECT_LT(show.j()["chunks"].size(), before);
  EXPECT_EQ(show.body.find("twice daily"), std::string::npos) << "a stale section survived the re-ingest";
  auto s = call({"POST", "/search", "/search", R"({"query": "zeptocillin twice daily", "top_k": 20})"});
  EXPECT_EQ(s.body.find("twice daily"), std::string::npos);
}
#endif

TEST_F(ServerTest, IngestPathsStayUnderTheRootAndUploadsWork) {
  EXPECT_EQ(call({"POST", "/ingest", "/ingest", R"({"path": "../store/registry.db"})"}).status, 403);
  EXPECT_EQ(call({"POST", "/ingest", "/ingest", R"({"path": "/etc/passwd"})"}).status, 403);
  EXPECT_EQ(call({"POST", "/ingest", "/ingest", R"({"path": "missing.jsonl"})"}).status, 404);
  EXPECT_EQ(call({"POST", "/ingest", "/ingest", R"({"records": [], "kb_name": "a"})"}).status, 400);
  EXPECT_EQ(call({"POST", "/ingest", "/ingest", R"({"records": [{"id": "a"}]})"}).status, 400);
  EXPECT_EQ(call({"POST", "/ingest", "/ingest", R"({"path": "x", "records": []})"}).status, 400);
  // A bad record fails the task (nothing written) with the engine's message.
  auto bad = call({"POST", "/ingest", "/ingest", R"({"records": [{"id": "c1", "text": "ok", "metadata": {"year": "soon"}}]})"});
  if (bad.status == 202) {
    auto t = wait_task(bad.j()["task_id"]);
    EXPECT_TRUE(t.j()["state"] == "succeeded" || t.j()["state"] == "failed") << t.body;
  }
  // multipart/form-data upload.
  const auto up = kWork / "upload.jsonl";
  std::ofstream(up) << R"({"_id": "up1", "text": "uploaded zzupload document"})" << "\n";
  auto r = call({"POST", "/ingest", "/ingest", "", {},
                 {"-F", shell_quote("file=@" + up.string()), "-F", "kb_name=kbu"}});
  ASSERT_EQ(r.status, 202) << r.body;
  auto t = wait_task(r.j()["task_id"]);
  ASSERT_EQ(t.j()["state"], "succeeded") << t.body;
  auto s = call({"POST", "/search", "/search", R"({"query": "zzupload", "kb_name": "kbu"})"});
  EXPECT_EQ(source_ids(s), std::vector<std::string>{"up1"});
  // A failed upload names the client's file, not the server's temporary folder.
  const auto broken = kWork / "broken-upload.jsonl";
  std::ofstream(broken) << "{\"_id\": \"b1\", \"text\": \n";
  r = call({"POST", "/ingest", "/ingest", "", {}, {"-F", shell_quote("file=@" + broken.string())}});
  ASSERT_EQ(r.status, 202) << r.body;
  t = wait_task(r.j()["task_id"]);
  ASSERT_EQ(t.j()["state"], "failed") << t.body;
  const std::string message = t.j()["error"]["message"];
  EXPECT_EQ(message.rfind("broken-upload.jsonl:1", 0), 0u) << message;
  EXPECT_EQ(message.find("eagle-upload"), std::string::npos) << message;
  // Uploads keep their names: a PMC package's article finds its figure file among them,
  // which becomes its figure tile, not an image document of its own.
  const auto figure = kWork / "ehp-116-1694f1.jpg";
  std::ofstream(figure, std::ios::binary) << eagle::ingest::encode_jpeg(eagle::test_support::patterned_image(60, 40), 90);
  r = call({"POST", "/ingest", "/ingest", "", {},
            {"-F", shell_quote("file=@" + (eagle::testing::shared_data() / "docs/jats/ehp-116-1694.nxml").string()), "-F",
             shell_quote("file=@" + figure.string()), "-F", "kb_name=pmc"}});
  ASSERT_EQ(r.status, 202) << r.body;
  t = wait_task(r.j()["task_id"]);
  ASSERT_EQ(t.j()["state"], "succeeded") << t.body;
  auto tiles = call({"POST", "/search", "/search", R"({"query": "figure", "kb_name": "pmc", "route_mode": "visual", "top_k": 5})"});
  EXPECT_EQ(source_ids(tiles), std::vector<std::string>{"ehp-116-1694.nxml#figure-1"}) << tiles.body.substr(0, 400);
}

// Document ids with '/' (every file ingested from a folder: jats/x.nxml, pdf/y.pdf)
// are reachable, sent as they are or with the slash encoded as %2F.
TEST_F(ServerTest, DocumentIdsWithSlashesWorkEncodedOrNot) {
  auto r = call({"POST", "/ingest", "/ingest",
                 R"({"kb_name": "slashkb", "records": [{"id": "jats/pone.0046493.nxml", "text": "zzslash article"}]})"});
  ASSERT_EQ(r.status, 202) << r.body;
  ASSERT_EQ(wait_task(r.j()["task_id"]).j()["state"], "succeeded");
  for (const std::string path : {"/documents/jats/pone.0046493.nxml", "/documents/jats%2Fpone.0046493.nxml"}) {
    auto d = call({"GET", path, "/documents/{id}"});
    EXPECT_EQ(d.status, 200) << path << " " << d.body;
    EXPECT_EQ(d.j()["document"].value("document_id", ""), "jats/pone.0046493.nxml") << d.body;
  }
  auto t = call({"PUT", "/documents/jats%2Fpone.0046493.nxml/tags", "/documents/{id}/tags", R"({"tags": ["zzslashtag"]})"});
  EXPECT_EQ(t.status, 200) << t.body;
  t = call({"PUT", "/documents/jats/pone.0046493.nxml/tags", "/documents/{id}/tags", R"({"tags": ["zzslashtag2"]})"});
  EXPECT_EQ(t.status, 200) << t.body;
  auto del = call({"DELETE", "/documents/jats/pone.0046493.nxml", "/documents/{id}"});
  EXPECT_EQ(del.status, 200) << del.body;
  EXPECT_EQ(call({"GET", "/documents/jats%2Fpone.0046493.nxml", "/documents/{id}"}).status, 404);
}

// What an attacker with any token (or none, on an open server) sent, each of which
// crashed the server, leaked a file or answered 500 before: JSON nested 100,000
// levels deep, numbers past a double's range, a link out of the ingest root.
TEST_F(ServerTest, DeepJsonHugeNumbersAndLinksOutOfTheRootAreRefused) {
  // A record whose metadata nests 99,000 levels (198 KB, under this server's 200,000
  // byte limit): a 400 naming the limit, and the server still answers.
  const std::string deep = "{\"records\": [{\"id\": \"deep\", \"text\": \"x\", \"metadata\": {\"m\": " +
                           std::string(99000, '[') + std::string(99000, ']') + "}}]}";
  auto r = call({"POST", "/ingest", "", deep});  // not recorded: the OpenAPI check's own parse would recurse
  EXPECT_EQ(r.status, 400) << r.body.substr(0, 300);
  EXPECT_NE(r.body.find("nests deeper than 128 levels"), std::string::npos) << r.body.substr(0, 300);
  r = call({"POST", "/search", "", "{\"query\": " + std::string(99000, '[') + std::string(99000, ']') + "}"});
  EXPECT_EQ(r.status, 400) << r.body.substr(0, 300);
  r = call({"POST", "/mcp", "", std::string(99000, '[') + std::string(99000, ']'),
            {"Accept: application/json, text/event-stream"}});
  EXPECT_EQ(r.status, 400) << r.body.substr(0, 300);
  ASSERT_EQ(call({"GET", "/health", ""}).status, 200);
  // A number that overflows a double is a 400 on every JSON route, not a 500.
  for (const auto& [path, body] : std::vector<std::pair<std::string, std::string>>{
           {"/search", R"({"query": "x", "top_k": 1e400})"},
           {"/search/stream", R"({"query": "x", "top_k": 1e400})"},
           {"/ingest", R"({"records": [{"id": "n", "text": "x", "metadata": {"v": -1e400}}]})"}}) {
    r = call({"POST", path, "", body});
    EXPECT_EQ(r.status, 400) << path << " " << r.body;
    EXPECT_NE(r.body.find("number out of range"), std::string::npos) << path << " " << r.body;
  }
  // A link inside a folder under the root that leads out of it is not followed: its
  // file is never ingested nor readable, and no message quotes it.
  const fs::path outside = kWork / "outside-secret.jsonl";
  std::ofstream(outside) << R"({"_id": "secret1", "text": "zzsecret outside the root"})" << "\n";
  fs::create_directories(kWork / "root" / "sub");
  std::ofstream(kWork / "root" / "sub" / "inside.jsonl") << R"({"_id": "inside1", "text": "zzinside the root"})" << "\n";
  fs::create_symlink(outside, kWork / "root" / "sub" / "inner-link.jsonl");
  r = call({"POST", "/ingest", "/ingest", R"({"path": "sub", "kb_name": "linkkb"})"});
  ASSERT_EQ(r.status, 202) << r.body;
  auto t = wait_task(r.j()["task_id"]);
  ASSERT_EQ(t.j()["state"], "succeeded") << t.body;
  EXPECT_NE(t.body.find("a link that leads out of the folder"), std::string::npos) << t.body;
  EXPECT_EQ(t.body.find("zzsecret"), std::string::npos) << t.body;
  auto s = call({"POST", "/search", "/search", R"({"query": "zzsecret zzinside", "kb_name": "linkkb"})"});
  EXPECT_EQ(source_ids(s), std::vector<std::string>{"inside1"}) << s.body.substr(0, 300);
  // A JSONL file that is not JSON (a file ingested by mistake) fails without quoting it.
  std::ofstream(kWork / "root" / "passwd.jsonl") << "root:x:0:0:zzroot:/root:/bin/bash\n";
  r = call({"POST", "/ingest", "/ingest", R"({"path": "passwd.jsonl", "kb_name": "linkkb"})"});
  ASSERT_EQ(r.status, 202) << r.body;
  t = wait_task(r.j()["task_id"]);
  ASSERT_EQ(t.j()["state"], "failed") << t.body;
  EXPECT_EQ(t.body.find("zzroot"), std::string::npos) << t.body;
}

// The console's files and an MCP session as the HTTP layer sees them (the protocol
// itself is tested by tests/mcp with the official clients).
TEST_F(ServerTest, ConsoleFilesAndMcpRoutes) {
  auto page = call({"GET", "/", "/"});
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("<script src=\"/console/app.js\""), std::string::npos) << page.body.substr(0, 400);
  auto js = call({"GET", "/console/app.js", "/console/{file}"});
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(call({"GET", "/console/missing.js", "/console/{file}"}).status, 404);
  EXPECT_EQ(call({"GET", "/console/..%2Fopenapi.json"}).status, 404);
  // The page is public; its headers forbid inline scripts and framing.
  auto headers = run_shell("curl -s -D - -o /dev/null http://127.0.0.1:" + std::to_string(server_->port()) + "/");
  EXPECT_NE(headers.out.find("Content-Security-Policy: default-src 'self'"), std::string::npos) << headers.out;
  EXPECT_NE(headers.out.find("frame-ancestors 'none'"), std::string::npos) << headers.out;

  const std::vector<std::string> mcp_headers = {"Accept: application/json, text/event-stream"};
  auto init = call({"POST", "/mcp", "/mcp",
                    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}})",
                    mcp_headers});
  ASSERT_EQ(init.status, 200) << init.body;
  EXPECT_EQ(init.j()["result"]["protocolVersion"], "2025-11-25");
  auto sid = run_shell(
      "curl -s -D - -o /dev/null -X POST http://127.0.0.1:" + std::to_string(server_->port()) +
      "/mcp -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d " +
      shell_quote(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}})"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(sid.out, m, std::regex("Mcp-Session-Id: ([0-9a-f]{32})"))) << sid.out;
  const std::string session = "Mcp-Session-Id: " + m[1].str();
  EXPECT_EQ(call({"POST", "/mcp", "/mcp", R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                  {mcp_headers[0], session}})
                .status,
            202);
  auto list = call({"POST", "/mcp", "/mcp", R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})", {mcp_headers[0], session}});
  EXPECT_EQ(list.j()["result"]["tools"].size(), 6u) << list.body;  // core namespace: core_* only (with core_ingest)
  // core_ingest: a Markdown file as Base64 becomes a task, then searchable; a path
  // leaving the ingest root and content without a name are tool errors.
  auto tool_call = [&](int id, const std::string& name, const json& args) {
    return call({"POST", "/mcp", "/mcp",
                 json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", {{"name", name}, {"arguments", args}}}}
                     .dump(),
                 {mcp_headers[0], session}})
        .j();
  };
  const std::string note = "# Zzmcpnote\n\nThe zzquokka trial enrolled forty patients.\n";
  auto ingested = tool_call(10, "core_ingest", {{"content", eagle::base64_encode(note)}, {"file_name", "note.md"}, {"kb_name", "mcp"}});
  ASSERT_FALSE(ingested["result"]["isError"].get<bool>()) << ingested.dump();
  const std::string task = ingested["result"]["structuredContent"]["task_id"];
  EXPECT_EQ(wait_task(task).j()["state"], "succeeded");
  auto found = tool_call(11, "core_search", {{"query", "zzquokka trial"}});
  ASSERT_FALSE(found["result"]["structuredContent"]["sources"].empty()) << found.dump();
  EXPECT_NE(found["result"]["structuredContent"]["sources"][0]["text"].get<std::string>().find("zzquokka"), std::string::npos);
  auto outside = tool_call(12, "core_ingest", {{"path", "../../etc/passwd"}});
  EXPECT_TRUE(outside["result"]["isError"].get<bool>()) << outside.dump();
  EXPECT_NE(outside.dump().find("leaves server.ingest_root"), std::string::npos) << outside.dump();
  auto nameless = tool_call(13, "core_ingest", {{"content", "eA=="}});
  EXPECT_TRUE(nameless["result"]["isError"].get<bool>()) << nameless.dump();
  auto both = tool_call(14, "core_ingest", {{"content", "eA=="}, {"file_name", "x.md"}, {"path", "x"}});
  EXPECT_TRUE(both["result"]["isError"].get<bool>()) << both.dump();
  EXPECT_EQ(call({"GET", "/mcp", ""}).status, 405);
  EXPECT_EQ(call({"DELETE", "/mcp", "/mcp", "", {session}}).status, 200);
  EXPECT_EQ(call({"POST", "/mcp", "", R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})", {mcp_headers[0], session}}).status,
            404);
}

TEST_F(ServerTest, CollectionsAndHostOriginChecks) {
  auto c = call({"GET", "/collections", "/collections"});
  ASSERT_EQ(c.status, 200);
  auto one = call({"GET", "/collections/eagle_text", "/collections/{name}"});
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(one.j()["dimension"], 100);
  EXPECT_EQ(one.j()["encoder"], "glove");
  EXPECT_TRUE(one.j()["stand_in"].is_null()) << one.body;  // glove is what it says it is
  EXPECT_NE(one.j()["encoder_identity"].get<std::string>().find("glove"), std::string::npos) << one.body;
  // DNS rebinding: a foreign Host or Origin is refused; our own origin is fine.
  auto host = call({"GET", "/collections", "/collections", "", {"Host: evil.example"}});
  EXPECT_EQ(host.status, 403);
  EXPECT_EQ(host.j()["error"]["code"], "permission_denied");
  EXPECT_EQ(call({"GET", "/collections", "/collections", "", {"Origin: http://evil.example"}}).status, 403);
  EXPECT_EQ(call({"GET", "/collections", "/collections", "",
                  {"Origin: http://127.0.0.1:" + std::to_string(server_->port())}}).status, 200);
}

TEST_F(ServerTest, TheStoreHasOneWriterAndReadersWorkBesideIt) {
  auto r = run_eagle("--data-dir " + store_.string() + " ingest " + std::string(EAGLE_SOURCE_DIR) + "/examples/sample");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("eagle serve"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("HTTP API"), std::string::npos) << r.out;
  auto s = run_eagle("--data-dir " + store_.string() + " search -k 1 \"PD-1 blockade\"");
  EXPECT_EQ(s.rc, 0) << s.out;
  EXPECT_NE(s.out.find("ab02"), std::string::npos) << s.out;
  auto list = run_eagle("--data-dir " + store_.string() + " documents list --limit 1");
  EXPECT_EQ(list.rc, 0) << list.out;
  auto colls = run_eagle("--data-dir " + store_.string() + " collections");
  EXPECT_EQ(colls.rc, 0) << colls.out;
  EXPECT_NE(colls.out.find("eagle_text"), std::string::npos);
}

// Tokens: one for everything, one limited to kb "tenant-a". Nothing of tenant-b may
// reach the limited token through any path.
TEST(ServerAuth, TokensAndAKbScopeThatDoesNotLeak) {
  fs::create_directories(kWork);
  const auto store = kWork / "auth-store";
  const auto a = kWork / "tenant-a.jsonl";
  const auto b = kWork / "tenant-b.jsonl";
  std::ofstream(a) << R"({"_id": "a1", "text": "zzshared secret alpha trial"})" << "\n";
  std::ofstream(b) << R"({"_id": "b1", "text": "zzshared secret beta trial"})" << "\n";
  ASSERT_EQ(run_eagle("--data-dir " + store.string() + " ingest --kb tenant-a " + a.string()).rc, 0);
  ASSERT_EQ(run_eagle("--data-dir " + store.string() + " ingest --kb tenant-b " + b.string()).rc, 0);
  ASSERT_EQ(run_eagle("--data-dir " + store.string() + " documents tag b1 zztag").rc, 0);
  // A tenant-b structured document: its chunks have ids of their own (no registry row
  // per chunk). A drug label with the biomed plugin (its rows in the biomedical
  // collection), else a Markdown file (in eagle_text).
#if EAGLE_TEST_WITH_BIOMED
  const std::string tb_doc = "doc-tb-set";
  const auto label = kWork / "tenant-b-label.xml";
  std::ofstream(label) << spl_label("tb-set", {{"34067-9", "zzlabel indications"}, {"34068-7", "zzlabel dosage"}});
  ASSERT_EQ(run_eagle("--data-dir " + store.string() + " ingest --kb tenant-b --format spl " + label.string()).rc, 0);
#else
  const std::string tb_doc = "tb-set.md";
  const auto label = kWork / "tb-set.md";
  std::ofstream(label) << "# Indications\n\nzzlabel indications\n\n# Dosage\n\nzzlabel dosage\n";
  ASSERT_EQ(run_eagle("--data-dir " + store.string() + " ingest --kb tenant-b " + label.string()).rc, 0);
#endif
  const std::string tokens =
      R"([{"name": "admin", "token_env": "EAGLE_TEST_ADMIN"}, {"name": "a", "token_env": "EAGLE_TEST_A", "kb_names": ["tenant-a"]}])";
  ServerProcess s(store, {"--set", "auth.tokens=" + tokens}, {"EAGLE_TEST_ADMIN=admin-secret", "EAGLE_TEST_A=a-secret"});
  ASSERT_TRUE(s.running()) << s.log();
  auto as = [&](const std::string& token, Call c) {
    if (!token.empty()) c.headers.push_back("Authorization: Bearer " + token);
    return http(s.port(), c);
  };
  // 401 without or with a wrong token; /health stays open.
  auto none = as("", {"POST", "/search", "/search", R"({"query": "zzshared"})"});
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.j()["error"]["code"], "unauthenticated");
  EXPECT_EQ(as("wrong", {"GET", "/documents", "/documents"}).status, 401);
  EXPECT_EQ(as("", {"GET", "/metrics", "/metrics"}).status, 401);
  EXPECT_EQ(as("", {"GET", "/health", "/health"}).status, 200);
  // Re-embedding rewrites every knowledge base's rows: not for a scoped token.
  auto scoped_reembed = as("a-secret", {"POST", "/collections/eagle_text/reembed", "/collections/{name}/reembed", "{}"});
  EXPECT_EQ(scoped_reembed.status, 403) << scoped_reembed.body;
  EXPECT_EQ(scoped_reembed.j()["error"]["code"], "permission_denied");
  // The admin sees both tenants.
  auto all = as("admin-secret", {"POST", "/search", "/search", R"({"query": "zzshared secret", "top_k": 10})"});
  ASSERT_EQ(all.status, 200) << all.body;
  {
    const auto ids = source_ids(all);
    std::set<std::string> got(ids.begin(), ids.end());
    EXPECT_TRUE(got.count("a1") && got.count("b1")) << all.body;
  }
  // The scoped token: only tenant-a, whatever the request asks.
  const std::vector<std::string> bodies = {
      R"({"query": "zzshared secret beta", "top_k": 10})",
      R"({"query": "zzshared secret beta", "top_k": 10, "scope_filter": {"document_ids": ["b1"]}})",
      R"({"query": "zzshared secret beta", "top_k": 10, "scope_filter": {"tags": ["zztag"]}})",
      R"({"query": "zzshared secret beta", "top_k": 10, "filter": "kb_name == \"tenant-b\" or kb_name == \"tenant-a\""})",
#if EAGLE_TEST_WITH_BIOMED
      R"({"query": "zzshared secret beta", "top_k": 10, "plugin_namespace": "biomed"})",
#endif
      R"({"query": "zzshared secret beta", "top_k": 10, "scope": ["b1"]})",
  };
  for (const auto& body : bodies) {
    auto r = as("a-secret", {"POST", "/search", "/search", body});
    ASSERT_EQ(r.status, 200) << body << " -> " << r.body;
    for (const auto& id : source_ids(r)) EXPECT_EQ(id, "a1") << body;
    EXPECT_EQ(r.body.find("beta"), std::string::npos) << body;
  }
  auto forbidden = as("a-secret", {"POST", "/search", "/search", R"({"query": "x", "kb_name": "tenant-b"})"});
  EXPECT_EQ(forbidden.status, 403);
  EXPECT_EQ(forbidden.j()["error"]["field"], "kb_name");
  EXPECT_EQ(as("a-secret", {"POST", "/search", "/search", R"({"query": "x", "scope_filter": {"kb_names": ["tenant-b"]}})"}).status,
            403);
  // Listing, reading, tagging, deleting and ingesting stay inside tenant-a.
  auto list = as("a-secret", {"GET", "/documents", "/documents"});
  EXPECT_EQ(list.j()["total"], 1);
  EXPECT_EQ(list.j()["documents"][0]["document_id"], "a1");
  EXPECT_EQ(as("a-secret", {"GET", "/documents?kb_name=tenant-b", "/documents"}).status, 403);
  EXPECT_EQ(as("a-secret", {"GET", "/documents/b1", "/documents/{id}"}).status, 404);
  EXPECT_EQ(as("a-secret", {"PUT", "/documents/b1/tags", "/documents/{id}/tags", R"({"tags": ["x"]})"}).status, 404);
  EXPECT_EQ(as("a-secret", {"DELETE", "/documents/b1", "/documents/{id}"}).status, 404);
  EXPECT_EQ(as("a-secret", {"GET", "/knowledge_bases", "/knowledge_bases"}).body.find("tenant-b"), std::string::npos);
  EXPECT_EQ(as("a-secret", {"GET", "/tags", "/tags"}).body.find("zztag"), std::string::npos);
  EXPECT_EQ(as("a-secret", {"POST", "/ingest", "/ingest", R"({"records": [{"id": "z", "text": "t"}]})"}).status, 403);
  EXPECT_EQ(as("a-secret", {"POST", "/ingest", "/ingest", R"({"kb_name": "tenant-b", "records": [{"id": "z", "text": "t"}]})"})
                .status,
            403);
  // Ingesting tenant-b's document id into tenant-a answers exactly as an id no one
  // holds (a refusal told that it existed): both tasks succeed with the same report,
  // each document kept under the tenant's KB ("tenant-a:<id>"), tenant-b's untouched.
  auto ingest_as = [&](const std::string& token, const json& body) {
    auto r = as(token, {"POST", "/ingest", "/ingest", body.dump()});
    EXPECT_EQ(r.status, 202) << r.body;
    Response t;
    for (int i = 0; i < 300; ++i) {
      t = as(token, {"GET", "/tasks/" + r.j()["task_id"].get<std::string>(), "/tasks/{id}"});
      if (t.j()["state"] == "failed" || t.j()["state"] == "succeeded") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return t.j();
  };
  auto ingest_as_a = [&](const json& body) { return ingest_as("a-secret", body); };
  const json taken = ingest_as_a({{"kb_name", "tenant-a"}, {"records", {{{"id", "b1"}, {"text", "mine now"}}}}});
  const json absent = ingest_as_a({{"kb_name", "tenant-a"}, {"records", {{{"id", "never-held"}, {"text", "mine now"}}}}});
  EXPECT_EQ(taken["state"], "succeeded") << taken.dump();
  auto report = [](json t) {
    json r = t.value("result", json::object());
    r.erase("seconds");
    return r.dump();
  };
  EXPECT_EQ(report(taken), report(absent));
  auto still = as("admin-secret", {"GET", "/documents/b1", "/documents/{id}"});
  EXPECT_EQ(still.j()["document"]["kb_name"], "tenant-b");
  EXPECT_EQ(still.body.find("mine now"), std::string::npos);
  EXPECT_EQ(as("a-secret", {"GET", "/documents/tenant-a:b1", "/documents/{id}"}).j()["document"]["kb_name"], "tenant-a");
  EXPECT_EQ(as("a-secret", {"GET", "/documents/tenant-a:never-held", "/documents/{id}"}).status, 200);
  // A record named after one of tenant-b's chunk rows is tenant-a's own record too:
  // the chunk keeps its text.
  auto label_doc = as("admin-secret", {"GET", "/documents/" + tb_doc, "/documents/{id}"});
  ASSERT_EQ(label_doc.status, 200) << label_doc.body;
  const std::string chunk_id = label_doc.j()["chunks"][0]["id"];
  const std::string chunk_text = label_doc.j()["chunks"][0]["text"];
  const std::string chunk_collection = label_doc.j()["chunks"][0]["collection"];
  const json over_body = {{"kb_name", "tenant-a"}, {"collection", chunk_collection},
                          {"records", json::array({{{"id", chunk_id}, {"text", "overwritten"}}})}};
  if (chunk_collection != "eagle_text") {
    // A collection holding none of tenant-a's rows: refused before a task is queued.
    EXPECT_EQ(as("a-secret", {"POST", "/ingest", "/ingest", over_body.dump()}).status, 403);
  } else {
    EXPECT_EQ(ingest_as_a(over_body)["state"], "succeeded");
  }
  EXPECT_EQ(as("admin-secret", {"GET", "/documents/" + tb_doc, "/documents/{id}"}).j()["chunks"][0]["text"], chunk_text);
  // Naming another tenant's document or tag in scope_filter answers exactly as naming
  // one that does not exist (the route's scope union gave it away).
  auto scoped = [&](const std::string& field, const std::string& value) {
    auto r = as("a-secret", {"POST", "/search", "/search",
                             json{{"query", "zzlabel indications"}, {"scope_filter", {{field, {value}}}}}.dump()});
    EXPECT_EQ(r.status, 200) << r.body;
    json j = r.j();
    return j["route"].dump() + " " + j["sources"].dump();
  };
  EXPECT_EQ(scoped("document_ids", tb_doc), scoped("document_ids", "zz-no-such-document"));
  EXPECT_EQ(scoped("tags", "zztag"), scoped("tags", "zz-no-such-tag"));
  // BM25 statistics are tenant-a's own (tenancy.isolate_statistics): a word tenant-b's
  // documents also use scores a1 as a word only a1 has (df 1 of 1 in tenant-a). With
  // the collection's statistics "zzshared" (in b1 too) scored lower: a scoped token
  // could tell whether another tenant uses a word.
  auto bm25_of_a1 = [&](const std::string& query) {
    auto r = as("a-secret", {"POST", "/search", "/search", json{{"query", query}, {"explain", true}}.dump()});
    const json j = r.j();
    for (const auto& src : j["sources"])
      if (src["id"] == "a1") return src["explain"]["bm25:eagle_text"]["score"].get<double>();
    return -1.0;
  };
  EXPECT_GT(bm25_of_a1("alpha"), 0.0);
  EXPECT_NEAR(bm25_of_a1("zzshared"), bm25_of_a1("alpha"), 1e-9);
  // Collections and metrics: a scoped token sees the collections holding its rows and
  // only those rows; none of another tenant's write activity; no /metrics. Naming a
  // collection it has no rows in is the same 403 whether that collection exists or not.
  auto mine = as("a-secret", {"GET", "/collections", "/collections"});
  ASSERT_EQ(mine.status, 200) << mine.body;
  auto admin_view = as("admin-secret", {"GET", "/collections", "/collections"});
  std::map<std::string, json> by_name;
  const json admin_collections = admin_view.j()["collections"];  // named: a range-for over j()[...] dangles
  for (const auto& c : admin_collections) by_name[c["name"].get<std::string>()] = c;
  ASSERT_TRUE(by_name.count(chunk_collection)) << admin_view.body;
  const json my_collections = mine.j()["collections"];
  for (const auto& c : my_collections) {
    EXPECT_NE(c["name"], chunk_collection == "eagle_text" ? "" : chunk_collection) << mine.body;
    EXPECT_EQ(c["deleted"], 0) << mine.body;
    EXPECT_EQ(c["log_bytes"], 0) << mine.body;
  }
  ASSERT_EQ(mine.j()["collections"].size(), 1u) << mine.body;
  EXPECT_EQ(mine.j()["collections"][0]["name"], "eagle_text");
  // a1, tenant-a:b1 and tenant-a:never-held (plus the chunk-named record when that
  // collection is eagle_text).
  EXPECT_EQ(mine.j()["collections"][0]["rows"], chunk_collection == "eagle_text" ? 4 : 3) << mine.body;
  EXPECT_GT(by_name["eagle_text"]["rows"].get<int>(), 1) << admin_view.body;
  if (chunk_collection != "eagle_text")
    EXPECT_EQ(as("a-secret", {"GET", "/collections/" + chunk_collection, "/collections/{name}"}).status, 404);
  EXPECT_EQ(as("a-secret", {"GET", "/metrics", ""}).status, 403);
  EXPECT_EQ(as("admin-secret", {"GET", "/metrics", ""}).status, 200);
  auto create = as("a-secret", {"POST", "/ingest", "/ingest",
                                R"({"kb_name": "tenant-a", "collection": "zznewcoll", "records": [{"id": "n", "text": "t"}]})"});
  EXPECT_EQ(create.status, 403) << create.body;
  if (chunk_collection != "eagle_text") {
    auto existing = as("a-secret", {"POST", "/ingest", "/ingest",
                                    json{{"kb_name", "tenant-a"}, {"collection", chunk_collection},
                                         {"records", json::array({{{"id", "n"}, {"text", "t"}}})}}
                                        .dump()});
    EXPECT_EQ(existing.status, 403);
    EXPECT_EQ(existing.j()["error"]["message"], create.j()["error"]["message"]);
  }
  auto label_after = as("admin-secret", {"GET", "/documents/" + tb_doc, "/documents/{id}"});
  EXPECT_EQ(label_after.body.find("overwritten"), std::string::npos) << label_after.body;
#if EAGLE_TEST_WITH_BIOMED  // the biomed plugin's namespace in a tenant's scope
  // Namespaces within scope: once tenant-b holds biomed documents, a core search by
  // the admin says so in its steps; tenant-a's token sees core only (tenant-b's
  // namespaces are not revealed) and its default (auto) stays core.
  EXPECT_EQ(ingest_as("admin-secret", {{"kb_name", "tenant-b"}, {"plugin_namespace", "biomed"},
                                       {"records", {{{"id", "bio1"}, {"text", "imatinib in chronic myeloid leukemia"}}}}})
                .value("state", ""),
            "succeeded");
  // The biomedical collection's pubmedbert slot runs the GloVe stand-in: the API says
  // so, for the collection and for each plan that uses it.
  auto bio = as("admin-secret", {"GET", "/collections/eagle_text_biomed", "/collections/{name}"});
  ASSERT_EQ(bio.status, 200) << bio.body;
  EXPECT_EQ(bio.j()["encoder"], "pubmedbert");
  EXPECT_EQ(bio.j()["stand_in"], "the embedded GloVe vectors") << bio.body;
  auto bio_search = as("admin-secret", {"POST", "/search", "/search", R"({"query": "imatinib", "plugin_namespace": "biomed"})"});
  ASSERT_EQ(bio_search.status, 200) << bio_search.body;
  bool plan_says = false;
  const json bio_route = bio_search.j()["route"];  // named: a temporary's member would dangle
  for (const auto& plan : bio_route["plans"])
    if (plan["encoder"] == "pubmedbert") plan_says = plan.value("stand_in", "") == "the embedded GloVe vectors";
  EXPECT_TRUE(plan_says) << bio_route.dump();
  auto admin_core = as("admin-secret", {"POST", "/search", "/search", R"({"query": "zzshared", "plugin_namespace": "core"})"});
  ASSERT_EQ(admin_core.status, 200) << admin_core.body;
  const json admin_step = admin_core.j()["steps"][0];
  EXPECT_EQ(admin_step["name"], "namespace") << admin_step;
  EXPECT_EQ(admin_step["used"], "core");
  EXPECT_EQ(admin_step["store_has"], json::array({"biomed", "core"})) << admin_step;
  EXPECT_TRUE(admin_step.contains("note")) << admin_step;
#endif
  auto a_auto = as("a-secret", {"POST", "/search", "/search", R"({"query": "zzshared"})"});
  ASSERT_EQ(a_auto.status, 200) << a_auto.body;
  const json a_step = a_auto.j()["steps"][0];
  EXPECT_EQ(a_step["used"], "core") << a_step;
  EXPECT_EQ(a_step["requested"], "auto") << a_step;
  EXPECT_EQ(a_step["store_has"], json::array({"core"})) << a_step;
  EXPECT_FALSE(a_step.contains("note")) << a_step;
  // The admin can delete in tenant-b.
  EXPECT_EQ(as("admin-secret", {"DELETE", "/documents/b1", "/documents/{id}"}).status, 200);
}

// A bug inside a handler (forced by the EAGLE_FAULT_INJECT test hook): 500 with the
// error object and no internals, and the server goes on answering.
TEST(ServerStart, AnInternalErrorIs500WithoutInternalsAndTheServerSurvives) {
  fs::create_directories(kWork);
  const auto store = kWork / "fault-store";
  ASSERT_EQ(run_eagle("--data-dir " + store.string() + " ingest " + std::string(EAGLE_SOURCE_DIR) + "/examples/sample").rc, 0);
  ServerProcess s(store, {}, {"EAGLE_FAULT_INJECT=search"});
  ASSERT_TRUE(s.running()) << s.log();
  auto r = http(s.port(), {"POST", "/search", "/search", R"({"query": "eagle-inject-fault"})"});
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.j()["error"]["code"], "internal");
  EXPECT_EQ(r.body.find("secret"), std::string::npos) << r.body;
  EXPECT_EQ(http(s.port(), {"POST", "/search", "/search", R"({"query": "PD-1"})"}).status, 200);
  auto m = http(s.port(), {"GET", "/metrics", ""});
  EXPECT_NE(m.body.find("route=\"/search\",method=\"POST\",status=\"500\"} 1"), std::string::npos) << m.body;
}

// A server killed mid-upload cannot remove its upload folder: the next one to start
// removes the folders of servers that are gone, and leaves a live process's alone.
TEST(ServerStart, UploadFoldersOfAServerThatIsGoneAreRemovedAtStart) {
  const auto tmp = kWork / "sweep-tmp";
  fs::create_directories(tmp);
  const auto store = kWork / "sweep-store";
  ASSERT_EQ(run_eagle("--data-dir " + store.string() + " ingest " + std::string(EAGLE_SOURCE_DIR) + "/examples/sample").rc, 0);
  // A pid that is surely gone: a child that has exited and been waited for.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);
  const auto stale = tmp / ("eagle-upload-" + std::to_string(child) + "-17");
  const auto live = tmp / ("eagle-upload-" + std::to_string(::getpid()) + "-18");
  const auto other = tmp / "eagle-upload-notapid-19";
  for (const auto& d : {stale, live, other}) {
    fs::create_directories(d);
    std::ofstream(d / "records.jsonl") << "{}\n";
  }
  ServerProcess s(store, {}, {"TMPDIR=" + tmp.string()});
  ASSERT_TRUE(s.running()) << s.log();
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
}

// What the headers decide is decided before the body is read: a client without a
// token sending a 300 MiB chunked body (which the server read whole, past
// server.max_body_bytes, before its 401) costs the server nothing. Bodies are JSON or
// multipart, with a length or chunked; Host parsing is strict; HEAD works where GET does.
TEST(ServerStart, HeadersAreCheckedBeforeTheBodyIsRead) {
  fs::create_directories(kWork);
  const auto store = kWork / "headers-store";
  ASSERT_EQ(run_eagle("--data-dir " + store.string() + " ingest " + std::string(EAGLE_SOURCE_DIR) + "/examples/sample").rc, 0);
  ServerProcess s(store,
                  {"--set", R"(auth.tokens=[{"name": "admin", "token_env": "EAGLE_TEST_ADMIN"}])", "--set",
                   "server.max_body_bytes=1000000"},
                  {"EAGLE_TEST_ADMIN=admin-secret"});
  ASSERT_TRUE(s.running()) << s.log();
  const std::string url = "http://127.0.0.1:" + std::to_string(s.port());
  auto rss_kb = [&] {
    std::ifstream in("/proc/" + std::to_string(s.pid()) + "/status");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    return 0L;
  };
  const long before = rss_kb();
  auto r = run_shell("head -c 314572800 /dev/zero | curl -s -o /dev/null -w '%{http_code}' -X POST -H "
                     "'Transfer-Encoding: chunked' -H 'Content-Type: application/json' -T - " + url + "/search");
  EXPECT_EQ(r.out, "401");
  EXPECT_LT(rss_kb() - before, 20 * 1024) << "the server buffered the body";
  const std::string admin = "Authorization: Bearer admin-secret";
  // With a token: a chunked body is read and answered, its size counted while it is read
  // (413 past server.max_body_bytes, here 1,000,000 bytes); a form-urlencoded one (curl -d
  // without a type) is 415.
  auto chunked = http(s.port(), {"POST", "/search", "", "", {admin, "Transfer-Encoding: chunked", "Content-Type: application/json"},
                                 {"--data-binary", shell_quote(R"({"query": "x"})")}});
  EXPECT_EQ(chunked.status, 200) << chunked.body;
  auto too_long = run_shell("head -c 5000000 /dev/zero | curl -s -o /dev/null -w '%{http_code}' -X POST -H '" + admin +
                            "' -H 'Transfer-Encoding: chunked' -H 'Content-Type: application/json' -T - " + url + "/search");
  EXPECT_EQ(too_long.out, "413");
  auto form = http(s.port(), {"POST", "/search", "", "", {admin}, {"-d", shell_quote(R"({"query": "x"})")}});
  EXPECT_EQ(form.status, 415) << form.body;
  EXPECT_NE(form.body.find("Content-Type: application/json"), std::string::npos) << form.body;
  auto json_ok = http(s.port(), {"POST", "/search", "", "", {admin}, {"--json", shell_quote(R"({"query": "x"})")}});
  EXPECT_EQ(json_ok.status, 200) << json_ok.body;
  // Host: a port that is not digits, or two Host headers, never pass as ours.
  EXPECT_EQ(http(s.port(), {"GET", "/health", "", "", {"Host: localhost:evil.com"}}).status, 403);
  EXPECT_EQ(http(s.port(), {"GET", "/health", "", "", {"Host: localhost:"}}).status, 403);
  EXPECT_EQ(http(s.port(), {"GET", "/health", "", "", {"Host: localhost:8686"}}).status, 200);
  EXPECT_EQ(http(s.port(), {"GET", "/health", "", "", {"Host: [::1]:8686"}}).status, 200);
  auto twice = run_shell("printf 'GET /health HTTP/1.1\\r\\nHost: localhost\\r\\nHost: evil.com\\r\\nConnection: "
                         "close\\r\\n\\r\\n' | curl -s --max-time 5 telnet://127.0.0.1:" +
                         std::to_string(s.port()));
  EXPECT_EQ(twice.out.rfind("HTTP/1.1 400", 0), 0u) << twice.out;
  // HEAD answers as GET does, without a body.
  auto head = run_shell("curl -s -I " + url + "/health");
  EXPECT_EQ(head.out.rfind("HTTP/1.1 200", 0), 0u) << head.out;
  auto head_doc = run_shell("curl -s -I -H " + shell_quote(admin) + " " + url + "/documents");
  EXPECT_EQ(head_doc.out.rfind("HTTP/1.1 200", 0), 0u) << head_doc.out;
}

TEST(ServerStart, RefusesANonLoopbackAddressWithoutATokenAndAMissingTokenVariable) {
  fs::create_directories(kWork);
  auto r = run_eagle("--data-dir " + (kWork / "nl").string() + " serve --host 0.0.0.0 --port 0");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("without a token"), std::string::npos) << r.out;
  auto t = run_eagle("--data-dir " + (kWork / "nl").string() + " --set " +
                 shell_quote(R"(auth.tokens=[{"name": "x", "token_env": "EAGLE_TEST_UNSET_VAR"}])") + " serve --port 0");
  EXPECT_EQ(t.rc, 2) << t.out;
  EXPECT_NE(t.out.find("EAGLE_TEST_UNSET_VAR"), std::string::npos) << t.out;
}

// Slowloris against `eagle serve` itself: with two workers, 40 connections that hold
// their headers open (half sending a header line now and then, half nothing) starved
// every other client of the thread-per-connection server until its read timeout. Now
// curl is answered while they are held, and they are closed at the header deadline.
TEST(ServerStart, SlowAndIdleConnectionsDoNotStarveOtherClients) {
  fs::create_directories(kWork);
  ServerProcess s(kWork / "slowloris-store",
                  {"--set", "server.threads=2", "--set", "server.header_timeout_s=2"});
  ASSERT_TRUE(s.running()) << s.log();
  std::vector<int> held;
  for (int i = 0; i < 40; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(s.port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    if (i % 2 == 0) {
      const std::string partial = "GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: 1\r\n";
      ASSERT_EQ(::send(fd, partial.data(), partial.size(), MSG_NOSIGNAL), static_cast<ssize_t>(partial.size()));
    }
    held.push_back(fd);
  }
  // --max-time bounds a failure; it is not a speed assertion.
  auto health = run_shell("curl -s --max-time 20 -o /dev/null -w '%{http_code}' http://127.0.0.1:" +
                          std::to_string(s.port()) + "/health");
  EXPECT_EQ(health.out, "200");
  // The held connections are closed by the server at its header deadline (2 s here).
  int closed = 0;
  for (int fd : held) {
    pollfd p{fd, POLLIN, 0};
    char c;
    if (::poll(&p, 1, 20000) == 1 && ::recv(fd, &c, 1, 0) == 0) ++closed;
    ::close(fd);
  }
  EXPECT_EQ(closed, 40);
}

// Many clients search while an ingest task and deletes run through the same server:
// every search answers 200, and a document whose DELETE returned is never seen again.
TEST_F(ServerTest, ConcurrentSearchesWhileIngestsAndDeletesRun) {
  const auto file = kWork / "root" / "bulk.jsonl";
  {
    std::ofstream out(file);
    for (int i = 0; i < 1500; ++i)
      out << json{{"_id", "bulk" + std::to_string(i)}, {"text", "zzbulk trial " + std::to_string(i) + " of osimertinib"}}.dump()
          << "\n";
  }
  std::atomic<bool> stop{false};
  std::atomic<int> non_200{0}, searches{0}, resurrected{0};
  std::atomic<bool> victim_deleted{false};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t)
    clients.emplace_back([&, t] {
      while (!stop) {
        const bool deleted_before = victim_deleted;
        auto r = http(server_->port(), {"POST", "/search", "", t % 2 ? R"({"query": "zzbulk osimertinib", "top_k": 10})"
                                                                        : R"({"query": "zzvictim melanoma", "top_k": 10})"});
        ++searches;
        if (r.status != 200) ++non_200;
        if (deleted_before && r.body.find("\"victim\"") != std::string::npos) ++resurrected;
      }
    });
  auto v = call({"POST", "/ingest", "", R"({"records": [{"id": "victim", "text": "zzvictim melanoma record"}]})"});
  ASSERT_EQ(wait_task(v.j()["task_id"]).j()["state"], "succeeded");
  auto r = call({"POST", "/ingest", "", R"({"path": "bulk.jsonl"})"});
  ASSERT_EQ(r.status, 202);
  ASSERT_EQ(call({"DELETE", "/documents/victim", ""}).status, 200);
  victim_deleted = true;
  auto t = wait_task(r.j()["task_id"]);
  EXPECT_EQ(t.j()["state"], "succeeded") << t.body;
  for (int i = 0; i < 100; i += 10) call({"DELETE", "/documents/bulk" + std::to_string(i), ""});
  stop = true;
  for (auto& c : clients) c.join();
  EXPECT_GT(searches.load(), 8);
  EXPECT_EQ(non_200.load(), 0);
  EXPECT_EQ(resurrected.load(), 0);
  auto after = call({"GET", "/documents/bulk10", ""});
  EXPECT_EQ(after.status, 404);
  EXPECT_EQ(call({"GET", "/documents/bulk11", ""}).status, 200);
}

#if EAGLE_TEST_WITH_BIOMED  // the biomed plugin's
// The socket answers while the store and plugins load: /ready and searches are 503
// until then (here the biomed vocabulary is compiled from scratch, about a second).
TEST(ServerStart, ReadyAndSearchAre503WhileLoadingThen200) {
  fs::create_directories(kWork);
  const auto store = kWork / "loading-store";
  ASSERT_EQ(run_eagle("--data-dir " + store.string() + " ingest " + std::string(EAGLE_SOURCE_DIR) + "/examples/sample").rc, 0);
  ServerProcess s(store, {"--set", "pipeline.namespace=biomed", "--set",
                          "biomed.vocab_cache=" + (kWork / "fresh-vocab.bin").string()},
                  {}, /*wait_ready=*/false);
  ASSERT_GT(s.port(), 0) << s.log();
  auto r = http(s.port(), {"GET", "/ready", "/ready"});
  auto q = http(s.port(), {"POST", "/search", "/search", R"({"query": "imatinib"})"});
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_EQ(r.j()["error"]["code"], "unavailable");
  EXPECT_EQ(q.status, 503) << q.body;
  // Then ready: the log says so once loading ends (under ThreadSanitizer the vocabulary
  // compile takes a minute, so this waits on the server, not on a clock).
  ASSERT_TRUE(s.wait_until_ready()) << s.log();
  r = http(s.port(), {"GET", "/ready", "/ready"});
  EXPECT_EQ(r.status, 200) << s.log();
  EXPECT_EQ(http(s.port(), {"POST", "/search", "/search", R"({"query": "imatinib"})"}).status, 200);
}
#endif

#if EAGLE_TEST_WITH_BIOMED  // the biomed plugin's
TEST_F(ServerTest, IngestIntoACollectionOfAnotherKindIsAConflict) {
  const auto csv = kWork / "root" / "compounds.csv";
  std::ofstream(csv) << "DrugBank ID,Name,Drug Groups,SMILES\nDB00945,Aspirin,approved,CC(=O)OC1=CC=CC=C1C(=O)O\n";
  auto r = call({"POST", "/ingest", "/ingest", R"({"path": "compounds.csv", "format": "compounds"})"});
  ASSERT_EQ(r.status, 202) << r.body;
  auto t = wait_task(r.j()["task_id"]);
  ASSERT_EQ(t.j()["state"], "succeeded") << t.body;
  auto c = call({"POST", "/ingest", "/ingest", R"({"collection": "eagle_chemical", "records": [{"id": "x", "text": "t"}]})"});
  EXPECT_EQ(c.status, 409) << c.body;
  EXPECT_EQ(c.j()["error"]["code"], "conflict");
  EXPECT_EQ(c.j()["error"]["field"], "collection");
}
#endif

// POST /collections/{name}/reembed (eagle reembed as a task): the vectors are rebuilt
// with another encoder while the server answers, and the collection says so after.
TEST(ServerReembed, ATaskRebuildsACollectionsVectorsAndSearchesUseThem) {
  fs::create_directories(kWork);
  const auto store = kWork / "reembed-store";
  const auto rows = kWork / "reembed.jsonl";
  {
    std::ofstream out(rows);
    for (int i = 0; i < 40; ++i)
      out << json{{"_id", "r" + std::to_string(i)}, {"text", "zzreembed trial " + std::to_string(i) + " of imatinib"}}.dump()
          << "\n";
  }
  ASSERT_EQ(run_eagle("--data-dir " + store.string() + " ingest " + rows.string()).rc, 0);
  const auto config = kWork / "reembed.yaml";
  std::ofstream(config) << "encoders:\n  tiny: {type: bert, path: " << EAGLE_SOURCE_DIR
                        << "/tests/fixtures/bert/tiny-a, pooling: cls}\n";
  ServerProcess s(store, {"--config", config.string()});
  ASSERT_TRUE(s.running()) << s.log();
  auto call = [&](const Call& c) { return http(s.port(), c); };
  auto wait = [&](const std::string& id) {
    Response r;
    for (int i = 0; i < 600; ++i) {
      r = call({"GET", "/tasks/" + id, "/tasks/{id}"});
      const auto st = r.j().value("state", std::string());
      if (st == "succeeded" || st == "failed") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return r;
  };
  const std::string route = "/collections/{name}/reembed";
  // Refused before a task is queued: an unknown collection, label or field.
  EXPECT_EQ(call({"POST", "/collections/nope/reembed", route, R"({"encoder": "tiny"})"}).status, 404);
  auto bad_label = call({"POST", "/collections/eagle_text/reembed", route, R"({"encoder": "nope"})"});
  EXPECT_EQ(bad_label.status, 400) << bad_label.body;
  EXPECT_EQ(bad_label.j()["error"]["field"], "encoder");
  auto bad_field = call({"POST", "/collections/eagle_text/reembed", route, R"({"encoderr": "tiny"})"});
  EXPECT_EQ(bad_field.status, 400) << bad_field.body;
  EXPECT_EQ(bad_field.j()["error"]["field"], "encoderr");

  auto accepted = call({"POST", "/collections/eagle_text/reembed", route, R"({"encoder": "tiny"})"});
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  auto t = wait(accepted.j()["task_id"]);
  ASSERT_EQ(t.j()["state"], "succeeded") << t.body;
  EXPECT_EQ(t.j()["kind"], "reembed");
  const json result = t.j()["result"];
  EXPECT_EQ(result["rows"], 40);
  EXPECT_EQ(result["already_current"], false);
  EXPECT_EQ(result["before"]["encoder"], "glove");
  EXPECT_EQ(result["before"]["dim"], 100);
  EXPECT_EQ(result["after"]["encoder"], "tiny");
  EXPECT_EQ(result["after"]["dim"], 32);

  auto coll = call({"GET", "/collections/eagle_text", "/collections/{name}"});
  EXPECT_EQ(coll.j()["dimension"], 32);
  EXPECT_EQ(coll.j()["encoder"], "tiny");
  auto found = call({"POST", "/search", "/search", R"({"query": "zzreembed imatinib", "top_k": 5})"});
  ASSERT_EQ(found.status, 200) << found.body;
  EXPECT_EQ(source_ids(found).size(), 5u);
  EXPECT_EQ(found.j()["route"]["plans"][0]["encoder"], "tiny") << found.body;

  // Asked again: nothing to rewrite.
  auto second = call({"POST", "/collections/eagle_text/reembed", route, "{}"});
  ASSERT_EQ(second.status, 202) << second.body;
  auto again = wait(second.j()["task_id"]);
  EXPECT_EQ(again.j()["result"]["already_current"], true) << again.body;
}

// Visual retrieval over HTTP: POST /search with a Base64 image (or a data: URI) finds the page
// it was made from, with the ImageNode fields in its source; GET /images/{image_id}
// serves the tile's kept image; a token scoped to another knowledge base sees neither.
TEST(ServerVisual, AnImageQueryFindsItsPageAndTheTileImageIsServedInScope) {
  fs::create_directories(kWork);
  const auto store = kWork / "visual-store";
  const auto pdfs = kWork / "visual-pdfs";
  fs::create_directories(pdfs);
  const auto sample = eagle::testing::shared_data() / "docs" / "pdf" / "vespa-peerj.pdf";
  ASSERT_TRUE(fs::exists(sample)) << sample;
  fs::copy_file(sample, pdfs / "vespa-peerj.pdf", fs::copy_options::overwrite_existing);
  auto ingested = run_eagle("--data-dir " + store.string() + " ingest --kb papers " + pdfs.string());
  ASSERT_EQ(ingested.rc, 0) << ingested.out;
  // The kept image of page 3, written by `eagle image`, is the query.
  const auto page3 = kWork / "page3.jpg";
  auto written = run_eagle("--data-dir " + store.string() + " image vespa-peerj.pdf#page-3 -o " + page3.string());
  ASSERT_EQ(written.rc, 0) << written.out;
  const std::string jpeg = read_file(page3);
  ASSERT_GT(jpeg.size(), 1000u);
  auto b64 = run_shell("base64 -w0 " + shell_quote(page3.string()));
  ASSERT_EQ(b64.rc, 0);
  const std::string image = b64.out;

  const std::string tokens =
      R"([{"name": "admin", "token_env": "EAGLE_TEST_ADMIN"}, {"name": "other", "token_env": "EAGLE_TEST_OTHER", "kb_names": ["other"]}])";
  ServerProcess s(store, {"--set", "auth.tokens=" + tokens}, {"EAGLE_TEST_ADMIN=admin-secret", "EAGLE_TEST_OTHER=other-secret"});
  ASSERT_TRUE(s.running()) << s.log();
  auto as = [&](const std::string& token, Call c) {
    c.headers.push_back("Authorization: Bearer " + token);
    return http(s.port(), c);
  };
  auto found = as("admin-secret", {"POST", "/search", "/search", json{{"image", image}, {"top_k", 3}}.dump()});
  ASSERT_EQ(found.status, 200) << found.body.substr(0, 400);
  json j = found.j();
  ASSERT_FALSE(j["sources"].empty());
  EXPECT_EQ(j["sources"][0]["id"], "vespa-peerj.pdf#page-3");
  EXPECT_EQ(j["sources"][0]["image"]["image_id"], "vespa-peerj.pdf#page-3");
  EXPECT_EQ(j["sources"][0]["image"]["page"], 3);
  EXPECT_EQ(j["sources"][0]["image"]["position"], "0,0,1,1");
  EXPECT_EQ(j["sources"][0]["image"]["chunk_type"], "page");
  EXPECT_EQ(j["route"]["plans"].size(), 1u);  // no words: the visual collection only
  // A data: URI and words: both plans.
  auto both = as("admin-secret", {"POST", "/search", "/search",
                                  json{{"image", "data:image/jpeg;base64," + image}, {"query", "positive selection"}}.dump()});
  ASSERT_EQ(both.status, 200) << both.body.substr(0, 400);
  EXPECT_EQ(both.j()["route"]["plans"].size(), 2u);
  // Multipart (curl -F): the image as a file part, the other fields as a JSON part.
  const std::string url = "http://127.0.0.1:" + std::to_string(s.port()) + "/search";
  auto multipart = run_shell("curl -s -w '\\n%{http_code}' -H 'Authorization: Bearer admin-secret' -F " +
                             shell_quote("image=@" + page3.string()) + " -F " + shell_quote(R"(request={"top_k": 2})") +
                             " " + shell_quote(url));
  ASSERT_EQ(multipart.rc, 0);
  const auto cut = multipart.out.rfind('\n');
  ASSERT_NE(cut, std::string::npos);
  EXPECT_EQ(multipart.out.substr(cut + 1), "200") << multipart.out.substr(0, 400);
  const json mj = json::parse(multipart.out.substr(0, cut));
  ASSERT_EQ(mj["sources"].size(), 2u);
  EXPECT_EQ(mj["sources"][0]["id"], "vespa-peerj.pdf#page-3");
  // A part it does not know, or the image twice, is a 400 naming it.
  auto stray = run_shell("curl -s -H 'Authorization: Bearer admin-secret' -F " + shell_quote("image=@" + page3.string()) +
                         " -F top_k=3 " + shell_quote(url));
  EXPECT_EQ(json::parse(stray.out)["error"]["field"], "top_k") << stray.out;
  const auto twice_request = kWork / "twice.json";
  std::ofstream(twice_request) << json{{"image", image}}.dump();
  auto twice = run_shell("curl -s -H 'Authorization: Bearer admin-secret' -F " + shell_quote("image=@" + page3.string()) +
                         " -F " + shell_quote("request=<" + twice_request.string()) + " " + shell_quote(url));
  EXPECT_EQ(json::parse(twice.out)["error"]["field"], "image") << twice.out.substr(0, 300);
  // Scope holds on the multipart path too.
  auto other_mp = run_shell("curl -s -H 'Authorization: Bearer other-secret' -F " + shell_quote("image=@" + page3.string()) +
                            " " + shell_quote(url));
  EXPECT_TRUE(json::parse(other_mp.out)["sources"].empty()) << other_mp.out.substr(0, 300);
  // Bad images: not Base64 is 400 naming the field; bytes that are no image, 422
  // saying what is wrong with them (as a filter that does not parse).
  auto not_b64 = as("admin-secret", {"POST", "/search", "/search", R"({"image": "%%%"})"});
  EXPECT_EQ(not_b64.status, 400);
  EXPECT_EQ(not_b64.j()["error"]["field"], "image");
  auto not_image = as("admin-secret", {"POST", "/search", "/search", json{{"image", "aGVsbG8gd29ybGQ="}}.dump()});
  EXPECT_EQ(not_image.status, 422) << not_image.body;
  EXPECT_NE(not_image.j()["error"]["message"].get<std::string>().find("not a PNG or JPEG"), std::string::npos);

  // The tile's image, as kept.
  auto tile = as("admin-secret", {"GET", "/images/vespa-peerj.pdf%23page-3", "/images/{image_id}"});
  ASSERT_EQ(tile.status, 200);
  EXPECT_EQ(tile.content_type, "image/jpeg");
  auto headers = run_shell("curl -s -D - -o /dev/null -H 'Authorization: Bearer admin-secret' " +
                           shell_quote("http://127.0.0.1:" + std::to_string(s.port()) + "/images/vespa-peerj.pdf%23page-3"));
  EXPECT_NE(headers.out.find("X-Content-Type-Options: nosniff"), std::string::npos) << headers.out;
  EXPECT_EQ(tile.body, jpeg);
  EXPECT_EQ(as("admin-secret", {"GET", "/images/vespa-peerj.pdf%23page-999", "/images/{image_id}"}).status, 404);
  // Another knowledge base's token: no hits, no image, no sign they exist.
  auto other = as("other-secret", {"POST", "/search", "/search", json{{"image", image}}.dump()});
  ASSERT_EQ(other.status, 200) << other.body.substr(0, 400);
  EXPECT_TRUE(other.j()["sources"].empty()) << other.body.substr(0, 400);
  EXPECT_EQ(as("other-secret", {"GET", "/images/vespa-peerj.pdf%23page-3", "/images/{image_id}"}).status, 404);
}

// POST /query on the embedded default (no model): an extractive answer whose every
// [n] is a source, and the stream's events in order with done.answer = its tokens.
TEST_F(ServerTest, QueryAnswersWithCitationsFromTheExtractiveDefault) {
  auto r = call({"POST", "/query", "/query", R"({"query": "PD-1 blockade with pembrolizumab in NSCLC"})"});
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.j();
  EXPECT_EQ(j["mode"], "extractive");
  EXPECT_TRUE(j["model"].is_null());
  ASSERT_FALSE(j["citations"].empty()) << j.dump();
  EXPECT_LE(j["sources"].size(), 3u);  // generation.top_n
  for (const auto& c : j["citations"]) {
    const size_t n = c["n"];
    ASSERT_GE(n, 1u);
    ASSERT_LE(n, j["sources"].size());
    EXPECT_EQ(c["id"], j["sources"][n - 1]["id"]);
    EXPECT_EQ(j["sources"][n - 1]["n"], n);
    EXPECT_NE(j["answer"].get<std::string>().find("[" + std::to_string(n) + "]"), std::string::npos);
    EXPECT_NE(j["sources"][n - 1]["text"].get<std::string>().find(c["quote"].get<std::string>().substr(0, 40)),
              std::string::npos)
        << c;
  }
  EXPECT_EQ(j["citations"][0]["id"], "ab02") << j.dump();
  std::vector<std::string> names;
  for (const auto& st : j["steps"]) names.push_back(st["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"namespace", "route", "recall", "rerank", "generate"}));
  // top_n and mode are bounded; an unknown field is refused.
  EXPECT_EQ(call({"POST", "/query", "/query", R"({"query": "x", "top_n": 21})"}).status, 400);
  EXPECT_EQ(call({"POST", "/query", "/query", R"({"query": "x", "mode": "poetry"})"}).status, 400);
  EXPECT_EQ(call({"POST", "/query", "/query", R"({"query": "x", "temperature": 2})"}).status, 400);
  auto one = call({"POST", "/query", "/query", R"({"query": "PD-1 blockade", "top_n": 1})"});
  EXPECT_EQ(one.j()["sources"].size(), 1u) << one.body;
  // Nothing relevant: says so, cites nothing.
  auto none = call({"POST", "/query", "/query", R"({"query": "zzqx quarterly budget meeting"})"});
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_EQ(none.j()["answer"], "No passage in the knowledge base answers this question.");
  EXPECT_TRUE(none.j()["citations"].empty());

  auto st = call({"POST", "/query/stream", "/query/stream", R"({"query": "PD-1 blockade with pembrolizumab in NSCLC"})"});
  ASSERT_EQ(st.status, 200) << st.body;
  std::vector<std::string> events;
  std::string tokens;
  json done;
  std::istringstream in(st.body);
  std::string line, event;
  while (std::getline(in, line)) {
    if (line.rfind("event: ", 0) == 0) event = line.substr(7), events.push_back(event);
    if (line.rfind("data: ", 0) == 0) {
      const json d = json::parse(line.substr(6));
      if (event == "token") tokens += d["text"].get<std::string>();
      if (event == "done") done = d;
    }
  }
  ASSERT_GE(events.size(), 8u) << st.body;
  EXPECT_EQ(std::vector<std::string>(events.begin(), events.begin() + 5),
            (std::vector<std::string>{"step", "step", "step", "step", "sources"}));
  EXPECT_EQ(events.back(), "done");
  EXPECT_EQ(done["answer"], tokens);
  EXPECT_EQ(done["answer"], j["answer"]);
  EXPECT_FALSE(done.contains("sources"));
}

namespace {
// A chat-completions server in this process: checks the prompt Eagle sends and
// answers citing the passage that holds `needle`.
class FakeChatServer {
 public:
  explicit FakeChatServer(std::string needle, int delay_ms = 0)
      : needle_(std::move(needle)), local_([this, delay_ms](httplib::Server& server) { routes(server, delay_ms); }) {}
  std::string url() const { return local_.url(); }
  json last() {
    std::lock_guard lock(mu_);
    return last_;
  }

 private:
  void routes(httplib::Server& server, int delay_ms) {
    server.Post("/v1/chat/completions", [this, delay_ms](const httplib::Request& req, httplib::Response& res) {
      if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      const json body = json::parse(req.body);
      std::lock_guard lock(mu_);
      last_ = body;
      const std::string user = body["messages"].back()["content"];
      // The passage blocks: "[n] heading\ntext\n\n".
      size_t k = 0;
      for (size_t n = 1; n <= 20; ++n) {
        const auto at = user.find("[" + std::to_string(n) + "] ");
        if (at == std::string::npos) break;
        const auto end = user.find("\n\n", at);
        if (user.substr(at, end - at).find(needle_) != std::string::npos) k = n;
      }
      const std::string answer = "The passages say so [" + std::to_string(k) + "].";
      if (body.value("stream", false)) {
        std::string sse;
        for (const std::string piece : {std::string("The passages "), std::string("say so "),
                                        "[" + std::to_string(k) + "]."})
          sse += "data: " + json{{"choices", {{{"delta", {{"content", piece}}}}}}}.dump() + "\n\n";
        sse += "data: [DONE]\n\n";
        res.set_content(sse, "text/event-stream");
      } else {
        res.set_content(json{{"model", "fake-1"}, {"choices", {{{"message", {{"content", answer}}}, {"finish_reason", "stop"}}}}}.dump(),
                        "application/json");
      }
    });
  }

  std::string needle_;
  std::mutex mu_;
  json last_;
  eagle::test_support::LocalHttpServer local_;  // last: stopped before the members its handler uses
};
}  // namespace

// generation.base_url set: the model gets the numbered passages and the question, and
// its [k] maps back to sources[k-1]; a dead or slow endpoint degrades to the
// extractive answer with a warning step naming it.
TEST_F(ServerTest, QueryWithAChatModelCitesItsPassagesAndDegradesWhenItFails) {
  FakeChatServer fake("pembrolizumab");
  const auto store = kWork / "store-chat";
  fs::remove_all(store);
  const auto ingested = run_eagle("--data-dir " + store.string() + " ingest " + std::string(EAGLE_SOURCE_DIR) + "/examples/sample");
  ASSERT_EQ(ingested.rc, 0) << ingested.out;
  {
    ServerProcess s(store, {"--set", "generation.base_url=" + fake.url(), "--set", "generation.model=m"});
    ASSERT_TRUE(s.running()) << s.log();
    const std::string q = R"({"query": "PD-1 blockade with pembrolizumab in NSCLC"})";
    auto r = http(s.port(), {"POST", "/query", "/query", q});
    ASSERT_EQ(r.status, 200) << r.body << s.log();
    const json j = r.j();
    EXPECT_EQ(j["mode"], "generated") << j.dump();
    EXPECT_EQ(j["model"], "fake-1");
    ASSERT_EQ(j["citations"].size(), 1u) << j.dump();
    const size_t k = j["citations"][0]["n"];
    ASSERT_GE(k, 1u);
    EXPECT_EQ(j["citations"][0]["id"], j["sources"][k - 1]["id"]);
    EXPECT_NE(j["sources"][k - 1]["text"].get<std::string>().find("pembrolizumab"), std::string::npos);
    const json sent = fake.last();
    EXPECT_EQ(sent["model"], "m");
    EXPECT_EQ(sent["stream"], false);
    EXPECT_EQ(sent["messages"][0]["role"], "system");
    const std::string user = sent["messages"].back()["content"];
    EXPECT_EQ(user.rfind("Passages:\n[1] ", 0), 0u) << user;
    EXPECT_NE(user.find("Question: PD-1 blockade with pembrolizumab in NSCLC"), std::string::npos) << user;
    for (const auto& src : j["sources"]) EXPECT_NE(user.find(src["text"].get<std::string>()), std::string::npos);
    // Streamed: the model's tokens, then the generate step, then done.
    auto st = http(s.port(), {"POST", "/query/stream", "/query/stream", q});
    ASSERT_EQ(st.status, 200) << st.body;
    EXPECT_EQ(fake.last()["stream"], true);
    EXPECT_NE(st.body.find("event: token\ndata: {\"text\":\"The passages \"}"), std::string::npos) << st.body;
    EXPECT_NE(st.body.find("\"mode\":\"generated\""), std::string::npos) << st.body;
  }
  for (const std::string& dead : {std::string("http://127.0.0.1:1"), std::string("slow")}) {
    FakeChatServer slow("pembrolizumab", 3000);
    const std::string url = dead == "slow" ? slow.url() : dead;
    ServerProcess s(store, {"--set", "generation.base_url=" + url, "--set", "generation.model=m", "--set",
                            "generation.timeout_ms=500", "--set", "generation.connect_timeout_ms=300"});
    ASSERT_TRUE(s.running()) << s.log();
    auto r = http(s.port(), {"POST", "/query", "/query", R"({"query": "PD-1 blockade with pembrolizumab in NSCLC"})"});
    ASSERT_EQ(r.status, 200) << r.body;
    const json j = r.j();
    EXPECT_EQ(j["mode"], "extractive") << dead;
    EXPECT_FALSE(j["citations"].empty());
    const json gen = j["steps"].back();
    EXPECT_EQ(gen["name"], "generate");
    EXPECT_NE(gen.value("warning", "").find(url), std::string::npos) << gen;
    EXPECT_FALSE(j["warnings"].empty());
  }
}

// Sessions (Eagle-RAG's): a /query without session_id starts one, the next turn gives
// the model the earlier question and answer, and only the token that made a session
// sees, continues or deletes it (another token gets 404, as for an absent one).
TEST_F(ServerTest, SessionsKeepTurnsForTheirOwnerAndFeedTheModel) {
  FakeChatServer fake("pembrolizumab");
  const auto store = kWork / "store-sessions";
  fs::remove_all(store);
  const auto ingested = run_eagle("--data-dir " + store.string() + " ingest " + std::string(EAGLE_SOURCE_DIR) + "/examples/sample");
  ASSERT_EQ(ingested.rc, 0) << ingested.out;
  const std::string tokens =
      R"([{"name": "alice", "token_env": "EAGLE_TEST_ALICE"}, {"name": "bob", "token_env": "EAGLE_TEST_BOB"}])";
  ServerProcess s(store,
                  {"--set", "auth.tokens=" + tokens, "--set", "generation.base_url=" + fake.url(), "--set",
                   "generation.model=m", "--set", "sessions.max_turns=3"},
                  {"EAGLE_TEST_ALICE=alice-secret", "EAGLE_TEST_BOB=bob-secret"});
  ASSERT_TRUE(s.running()) << s.log();
  auto as = [&](const std::string& token, Call c) {
    c.headers.push_back("Authorization: Bearer " + token);
    return http(s.port(), c);
  };
  const std::string q1 = "PD-1 blockade with pembrolizumab in NSCLC";
  auto first = as("alice-secret", {"POST", "/query", "/query", json{{"query", q1}}.dump()});
  ASSERT_EQ(first.status, 200) << first.body;
  const std::string sid = first.j()["session_id"];
  EXPECT_EQ(sid.rfind("s-", 0), 0u);
  EXPECT_EQ(sid.size(), 34u);
  EXPECT_EQ(first.j()["turn"], 1);
  const std::string answer1 = first.j()["answer"];

  // Turn 2 (streamed): the model sees turn 1 as history, before the passages.
  const std::string q2 = "and its adverse events?";
  auto second = as("alice-secret", {"POST", "/query/stream", "/query/stream", json{{"query", q2}, {"session_id", sid}}.dump()});
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_NE(second.body.find("\"session_id\":\"" + sid + "\""), std::string::npos) << second.body;
  EXPECT_NE(second.body.find("\"turn\":2"), std::string::npos) << second.body;
  const json sent = fake.last();
  ASSERT_GE(sent["messages"].size(), 4u) << sent.dump();
  EXPECT_EQ(sent["messages"][1], (json{{"role", "user"}, {"content", q1}}));
  EXPECT_EQ(sent["messages"][2], (json{{"role", "assistant"}, {"content", answer1}}));
  EXPECT_NE(sent["messages"].back()["content"].get<std::string>().find("Question: " + q2), std::string::npos);

  // Listed and read by its owner, with each turn's citations.
  auto mine = as("alice-secret", {"GET", "/sessions", "/sessions"});
  ASSERT_EQ(mine.status, 200) << mine.body;
  EXPECT_EQ(mine.j()["total"], 1);
  EXPECT_EQ(mine.j()["sessions"][0]["session_id"], sid);
  EXPECT_EQ(mine.j()["sessions"][0]["title"], q1);
  EXPECT_EQ(mine.j()["sessions"][0]["turns"], 2);
  auto got = as("alice-secret", {"GET", "/sessions/" + sid, "/sessions/{session_id}"});
  ASSERT_EQ(got.status, 200) << got.body;
  ASSERT_EQ(got.j()["turns"].size(), 2u);
  EXPECT_EQ(got.j()["turns"][0]["question"], q1);
  EXPECT_EQ(got.j()["turns"][0]["answer"], answer1);
  EXPECT_EQ(got.j()["turns"][0]["model"], "fake-1");
  EXPECT_EQ(got.j()["turns"][0]["citations"], first.j()["citations"]);
  EXPECT_EQ(got.j()["turns"][1]["question"], q2);

  // Another token: nothing listed, and the session is absent on every path.
  auto theirs = as("bob-secret", {"GET", "/sessions", "/sessions"});
  EXPECT_EQ(theirs.j()["total"], 0) << theirs.body;
  EXPECT_TRUE(theirs.j()["sessions"].empty());
  EXPECT_EQ(as("bob-secret", {"GET", "/sessions/" + sid, "/sessions/{session_id}"}).status, 404);
  EXPECT_EQ(as("bob-secret", {"DELETE", "/sessions/" + sid, "/sessions/{session_id}"}).status, 404);
  const std::string cont = json{{"query", "x"}, {"session_id", sid}}.dump();
  EXPECT_EQ(as("bob-secret", {"POST", "/query", "/query", cont}).status, 404);
  EXPECT_EQ(as("bob-secret", {"POST", "/query/stream", "/query/stream", cont}).status, 404);
  EXPECT_EQ(as("alice-secret", {"POST", "/query", "/query", json{{"query", "x"}, {"session_id", "s-nope"}}.dump()}).status, 404);
  EXPECT_EQ(as("alice-secret", {"GET", "/sessions?limit=0", "/sessions"}).status, 400);
  EXPECT_EQ(as("alice-secret", {"GET", "/sessions/" + sid, "/sessions/{session_id}"}).j()["turns"].size(), 2u);

  // sessions.max_turns (3): the fourth turn is refused before anything is answered.
  EXPECT_EQ(as("alice-secret", {"POST", "/query", "/query", cont}).j()["turn"], 3);
  auto full = as("alice-secret", {"POST", "/query", "/query", cont});
  EXPECT_EQ(full.status, 409) << full.body;
  EXPECT_EQ(full.j()["error"]["code"], "conflict");
  EXPECT_EQ(as("alice-secret", {"POST", "/query/stream", "/query/stream", cont}).status, 409);  // not a 200 stream
  auto last = as("alice-secret", {"GET", "/sessions/" + sid + "?limit=1", "/sessions/{session_id}"});
  ASSERT_EQ(last.j()["turns"].size(), 1u) << last.body;
  EXPECT_EQ(last.j()["turns"][0]["turn"], 3);
  EXPECT_EQ(last.j()["session"]["turns"], 3);
  EXPECT_EQ(as("alice-secret", {"GET", "/sessions/" + sid + "?limit=0", "/sessions/{session_id}"}).status, 400);
  EXPECT_EQ(as("alice-secret", {"GET", "/sessions?kind=x", "/sessions"}).status, 200);  // only limit and offset are read

  auto deleted = as("alice-secret", {"DELETE", "/sessions/" + sid, "/sessions/{session_id}"});
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(deleted.j()["deleted_turns"], 3);
  EXPECT_EQ(as("alice-secret", {"GET", "/sessions/" + sid, "/sessions/{session_id}"}).status, 404);
}

// sessions.enabled false: no session is kept, and naming one is a bad request.
TEST_F(ServerTest, SessionsOffKeepNoneAndRefuseASessionId) {
  const auto store = kWork / "store-sessions-off";
  fs::remove_all(store);
  ASSERT_EQ(run_eagle("--data-dir " + store.string() + " ingest " + std::string(EAGLE_SOURCE_DIR) + "/examples/sample").rc, 0);
  ServerProcess s(store, {"--set", "sessions.enabled=false"});
  ASSERT_TRUE(s.running()) << s.log();
  auto r = http(s.port(), {"POST", "/query", "/query", R"({"query": "PD-1 blockade"})"});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(r.j()["session_id"].is_null());
  EXPECT_TRUE(r.j()["turn"].is_null());
  auto named = http(s.port(), {"POST", "/query", "/query", R"({"query": "PD-1 blockade", "session_id": "s-1"})"});
  EXPECT_EQ(named.status, 400) << named.body;
  EXPECT_EQ(http(s.port(), {"GET", "/sessions", "/sessions"}).j()["total"], 0);
}

// Last: every response recorded above against the OpenAPI document (ajv 2020-12).
TEST(ServerOpenApi, EveryRecordedResponseMatchesTheDocument) {
  const std::string checker = std::string(EAGLE_SOURCE_DIR) + "/tests/server/openapi_check.mjs";
  // The build's document: src/eagle/server/openapi.json with the build's plugins in
  // its namespace and format enums (server.cmake).
  const std::string doc = std::string(EAGLE_BIN_DIR) + "/../generated/openapi.json";
  auto r = run_shell("node " + shell_quote(checker) + " " + shell_quote(doc) + " " + shell_quote(kResponses.string()));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find(" checked, 0 failed"), std::string::npos) << r.out;  // not "10 failed"
  std::printf("%s", r.out.c_str());
}
