// The MCP layer in process: the schema validator against hand-checked cases, the
// protocol (both revisions, their error order and codes), the tools on a real Engine
// over the sample corpus and a compound fixture (hits, errors as isError results, a
// caller's scope), the Streamable HTTP transport's sessions and header rules, and
// the stdio framing. Real clients (the conformance suite, the TypeScript SDK) are in
// mcp_clients_test.cpp.
#include <gtest/gtest.h>
#include <set>
#include "support/build_paths.h"
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "support/engine_config.h"
#include "support/images.h"
#include "eagle/app/engine.h"
#include "eagle/core/base64.h"
#include "eagle/core/error.h"
#include "eagle/ingest/image/image.h"
#include "eagle/mcp/http_transport.h"
#include "eagle/mcp/json_schema.h"
#include "eagle/mcp/protocol.h"
#include "eagle/mcp/stdio.h"
#include "eagle/mcp/tools.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace eagle;
using namespace eagle::mcp;

namespace {

// ---- the validator

TEST(JsonSchema, EnforcesTypesBoundsAndShape) {
  const json schema = {{"type", "object"},
                       {"properties",
                        {{"q", {{"type", "string"}, {"minLength", 1}, {"maxLength", 3}}},
                         {"k", {{"type", "integer"}, {"minimum", 1}, {"maximum", 10}}},
                         {"tags", {{"type", "array"}, {"maxItems", 2}, {"items", {{"type", "string"}}}}},
                         {"mode", {{"enum", {"a", "b"}}}}}},
                       {"required", {"q"}},
                       {"additionalProperties", false}};
  EXPECT_FALSE(validate(schema, {{"q", "abc"}, {"k", 10}, {"tags", {"x"}}, {"mode", "a"}}));
  // Lengths are in characters: three two-byte characters fit maxLength 3.
  EXPECT_FALSE(validate(schema, {{"q", "äöü"}}));
  EXPECT_EQ(*validate(schema, {{"q", "abcd"}}), "/q: must hold at most 3 characters");
  EXPECT_EQ(*validate(schema, {{"q", ""}}), "/q: must hold at least 1 character");
  EXPECT_EQ(*validate(schema, json::object()), "/: 'q' is required");
  EXPECT_EQ(*validate(schema, {{"q", "a"}, {"k", 0}}), "/k: must be >= 1");
  EXPECT_EQ(*validate(schema, {{"q", "a"}, {"k", 11}}), "/k: must be <= 10");
  EXPECT_EQ(*validate(schema, {{"q", "a"}, {"k", 1.5}}), "/k: must be integer");
  EXPECT_FALSE(validate(schema, {{"q", "a"}, {"k", 2.0}}));  // 2020-12: 2.0 is an integer
  EXPECT_EQ(*validate(schema, {{"q", "a"}, {"tags", {"x", "y", "z"}}}), "/tags: must hold at most 2 items");
  EXPECT_EQ(*validate(schema, {{"q", "a"}, {"tags", {"x", 1}}}), "/tags/1: must be string");
  EXPECT_EQ(*validate(schema, {{"q", "a"}, {"extra", 1}}), "/extra: unknown property");
  EXPECT_TRUE(validate(schema, {{"q", "a"}, {"mode", "c"}}));
  EXPECT_EQ(*validate(schema, json::array()), "/: must be object");
}

TEST(JsonSchema, OneOfNeedsExactlyOneAlternative) {
  const json schema = {{"type", "object"},
                       {"oneOf", json::array({{{"required", {"a"}}}, {{"required", {"b"}}}})}};
  EXPECT_FALSE(validate(schema, {{"a", 1}}));
  EXPECT_FALSE(validate(schema, {{"b", 1}}));
  EXPECT_EQ(*validate(schema, {{"a", 1}, {"b", 2}}), "/: matches more than one alternative");
  EXPECT_EQ(*validate(schema, json::object()), "/: 'a' is required");
}

TEST(JsonSchema, RefusesKeywordsItDoesNotEnforce) {
  EXPECT_NO_THROW(check_supported({{"type", "string"}, {"maxLength", 3}, {"x-mcp-header", "X"}}));
  EXPECT_THROW(check_supported({{"type", "string"}, {"pattern", "^a"}}), Error);
  EXPECT_THROW(check_supported({{"type", "object"}, {"properties", {{"a", {{"$ref", "#/x"}}}}}}), Error);
}

// ---- a real Engine: the sample passages (kb "sample") and ten compounds

// The server's default namespace: biomed when the build has the plugin (its tools
// are then listed too), else core.
const char* const kDefaultNamespace = EAGLE_TEST_WITH_BIOMED ? "biomed" : "core";
// The tools listed: the five core_* (a reader's; no core_ingest), and the biomed two.
constexpr size_t kListedTools = EAGLE_TEST_WITH_BIOMED ? 7 : 5;

const fs::path kWork = fs::temp_directory_path() / ("eagle_mcp_test_" + std::to_string(::getpid()));

app::Config test_config() {
  app::Config cfg = eagle::test_support::engine_test_config(kWork / "store");
#if EAGLE_TEST_WITH_BIOMED
  app::set_option(cfg, "biomed.vocab_dir", std::string(EAGLE_SHARED_DATA) + "/vocab");
#endif
  cfg.pipeline.final_top_k = 3;  // not the default (5): a request without top_k must get this
  return cfg;
}

json stateless_meta() {
  return {{kMetaProtocolVersion, kStatelessRevision}, {kMetaClientCapabilities, json::object()}};
}

json request(int id, const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

class McpEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::remove_all(kWork);
    engine_ = new app::Engine(test_config(), app::StoreAccess::write, "mcp_test");
    app::IngestOptions text;
    text.kb_name = "sample";
    engine_->ingest({std::string(EAGLE_SOURCE_DIR) + "/examples/sample"}, text);
#if EAGLE_TEST_WITH_BIOMED  // the biomed plugin's compound table, and its tools exposed
    app::IngestOptions compounds;
    compounds.kb_name = "chem";
    compounds.plugin_namespace = "biomed";
    engine_->ingest({std::string(EAGLE_SOURCE_DIR) + "/tests/fixtures/compounds.csv"}, compounds);
#endif
    engine_->preload(kDefaultNamespace);
    tools_ = new ToolSet(*engine_, kDefaultNamespace);
    server_ = new McpServer(*tools_, eagle_server_info(kDefaultNamespace), 60000);
  }
  static void TearDownTestSuite() {
    delete server_;
    delete tools_;
    delete engine_;
    fs::remove_all(kWork);
  }

  // tools/call through the stateless path (no handshake needed): the result.
  static json call(const std::string& tool, const json& args, const ToolContext& ctx = {}) {
    json params = {{"name", tool}, {"arguments", args}, {"_meta", stateless_meta()}};
    Reply r = server_->handle(request(7, "tools/call", params), nullptr, ctx);
    EXPECT_TRUE(r.message);
    EXPECT_TRUE(r.message->contains("result")) << r.message->dump();
    return (*r.message)["result"];
  }
  static std::string error_text(const json& result) {
    EXPECT_TRUE(result.value("isError", false)) << result.dump();
    return result["content"][0]["text"].get<std::string>();
  }

  static app::Engine* engine_;
  static ToolSet* tools_;
  static McpServer* server_;
};
app::Engine* McpEngineTest::engine_ = nullptr;
ToolSet* McpEngineTest::tools_ = nullptr;
McpServer* McpEngineTest::server_ = nullptr;

TEST_F(McpEngineTest, ExposureRuleG3ListsCorePlusTheDefaultNamespace) {
  std::vector<std::string> names;
  for (const auto& t : tools_->tools()) names.push_back(t.name);
  std::vector<std::string> listed = {"core_retrieve_text", "core_search", "core_query", "core_retrieve_visual",
                                     "core_list_documents"};
#if EAGLE_TEST_WITH_BIOMED
  listed.insert(listed.end(), {"biomed_query_entities", "biomed_retrieve_compounds"});
#endif
  EXPECT_EQ(names, listed);
  ToolSet core(*engine_, "core");
  names.clear();
  for (const auto& t : core.tools()) names.push_back(t.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"core_retrieve_text", "core_search", "core_query", "core_retrieve_visual",
                                      "core_list_documents"}));
  for (const auto& t : tools_->list_json()) {
    EXPECT_EQ(t["inputSchema"]["$schema"], "https://json-schema.org/draft/2020-12/schema");
    EXPECT_EQ(t["inputSchema"]["type"], "object");
    EXPECT_EQ(t["outputSchema"]["type"], "object");
    EXPECT_FALSE(t["description"].get<std::string>().empty());
  }
}

TEST_F(McpEngineTest, StatefulHandshakeThenTools) {
  Session session;
  auto r = server_->handle(request(1, "tools/list"), &session, {});
  EXPECT_EQ((*r.message)["error"]["code"], kInvalidRequest);  // before initialize
  r = server_->handle(request(1, "initialize", {{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()},
                                                {"clientInfo", {{"name", "t"}, {"version", "1"}}}}),
                      &session, {});
  ASSERT_TRUE(r.created_session);
  EXPECT_EQ((*r.message)["result"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ((*r.message)["result"]["serverInfo"]["name"], "eagle");
  EXPECT_TRUE((*r.message)["result"]["capabilities"].contains("tools"));
  // A notification gets no answer.
  r = server_->handle({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, &session, {});
  EXPECT_FALSE(r.message);
  EXPECT_TRUE(session.initialized);
  EXPECT_EQ((*server_->handle(request(2, "ping"), &session, {}).message)["result"], json::object());
  EXPECT_EQ((*server_->handle(request(3, "tools/list"), &session, {}).message)["result"]["tools"].size(), kListedTools);
  EXPECT_EQ((*server_->handle(request(4, "no/such"), &session, {}).message)["error"]["code"], kMethodNotFound);
  auto hit = (*server_->handle(request(5, "tools/call", {{"name", "core_retrieve_text"},
                                                           {"arguments", {{"query", "PD-1 blockade"}, {"top_k", 2}}}}),
                               &session, {})
                   .message)["result"];
  EXPECT_FALSE(hit["isError"].get<bool>());
  EXPECT_FALSE(hit.contains("resultType"));  // a 2026-07-28 field
  EXPECT_EQ(hit["structuredContent"]["sources"].size(), 2u);
}

TEST_F(McpEngineTest, StatelessErrorsComeInTheRevisionsOrder) {
  // _meta missing: -32602 even when the header disagrees.
  auto r = server_->handle(request(1, "server/discover", {}), nullptr, {}, std::string("2026-07-28"));
  EXPECT_EQ(r.http_status, 400);
  EXPECT_EQ((*r.message)["error"]["code"], kInvalidParams);
  EXPECT_EQ((*r.message)["id"], 1);
  json meta = stateless_meta();
  meta[kMetaProtocolVersion] = "v999";
  r = server_->handle(request(2, "server/discover", {{"_meta", meta}}), nullptr, {}, std::string("2026-07-28"));
  EXPECT_EQ((*r.message)["error"]["code"], kHeaderMismatch);
  r = server_->handle(request(3, "server/discover", {{"_meta", meta}}), nullptr, {}, std::string("v999"));
  EXPECT_EQ(r.http_status, 400);
  EXPECT_EQ((*r.message)["error"]["code"], kUnsupportedVersion);
  EXPECT_EQ((*r.message)["error"]["data"], json({{"supported", {"2026-07-28"}}, {"requested", "v999"}}));
  // The handshake's methods do not exist at this revision.
  for (const char* m : {"initialize", "ping", "logging/setLevel"}) {
    r = server_->handle(request(4, m, {{"_meta", stateless_meta()}}), nullptr, {});
    EXPECT_EQ(r.http_status, 404) << m;
    EXPECT_EQ((*r.message)["error"]["code"], kMethodNotFound) << m;
  }
}

TEST_F(McpEngineTest, StatelessResultsCarryTypeServerInfoAndCachingHints) {
  auto d = (*server_->handle(request(1, "server/discover", {{"_meta", stateless_meta()}}), nullptr, {}).message)["result"];
  EXPECT_EQ(d["resultType"], "complete");
  EXPECT_EQ(d["supportedVersions"], json({"2026-07-28", "2025-11-25"}));
  EXPECT_EQ(d["ttlMs"], 60000);
  EXPECT_EQ(d["cacheScope"], "private");
  EXPECT_EQ(d["_meta"][kMetaServerInfo]["name"], "eagle");
  auto l = (*server_->handle(request(2, "tools/list", {{"_meta", stateless_meta()}}), nullptr, {}).message)["result"];
  EXPECT_EQ(l["tools"].size(), kListedTools);
  EXPECT_EQ(l["ttlMs"], 60000);
  EXPECT_EQ(l["resultType"], "complete");
  auto p = (*server_->handle(request(3, "prompts/list", {{"_meta", stateless_meta()}}), nullptr, {}).message)["result"];
  EXPECT_EQ(p["prompts"], json::array());
  auto missing = *server_->handle(request(4, "resources/read", {{"_meta", stateless_meta()}, {"uri", "x://y"}}),
                                  nullptr, {})
                      .message;
  EXPECT_EQ(missing["error"]["code"], kInvalidParams);
  EXPECT_EQ(missing["error"]["data"]["uri"], "x://y");
}

TEST_F(McpEngineTest, RetrieveTextFindsThePassage) {
  auto r = call("core_retrieve_text", {{"query", "savolitinib plus osimertinib in MET-amplified NSCLC"}, {"top_k", 3}});
  EXPECT_FALSE(r["isError"].get<bool>());
  EXPECT_EQ(r["resultType"], "complete");
  const auto& sources = r["structuredContent"]["sources"];
  ASSERT_FALSE(sources.empty());
  EXPECT_NE(sources[0]["text"].get<std::string>().find("avolitinib"), std::string::npos) << sources[0].dump();
  EXPECT_NE(r["content"][0]["text"].get<std::string>().find(sources[0]["id"].get<std::string>()), std::string::npos);
  // The output matches the declared output schema.
  EXPECT_FALSE(validate(tools_->find("core_retrieve_text")->output_schema, r["structuredContent"]));
}

// Eagle-RAG's core_query: an answer whose citations are among its sources, the
// text giving the answer and the numbered sources; a scope that holds nothing
// answers that nothing does.
TEST_F(McpEngineTest, QueryAnswersWithCitationsAmongItsSources) {
  auto r = call("core_query", {{"query", "savolitinib plus osimertinib in MET-amplified NSCLC"}});
  ASSERT_FALSE(r["isError"].get<bool>()) << r.dump();
  const auto& sc = r["structuredContent"];
  EXPECT_FALSE(validate(tools_->find("core_query")->output_schema, sc));
  ASSERT_FALSE(sc["citations"].empty()) << sc.dump();
  std::set<std::string> source_ids;
  for (const auto& s : sc["sources"]) source_ids.insert(s["id"].get<std::string>());
  for (const auto& c : sc["citations"]) {
    EXPECT_TRUE(source_ids.count(c["id"].get<std::string>())) << c;
    EXPECT_EQ(sc["sources"][c["n"].get<size_t>() - 1]["id"], c["id"]);
  }
  EXPECT_NE(sc["answer"].get<std::string>().find("avolitinib"), std::string::npos) << sc["answer"];
  const std::string text = r["content"][0]["text"];
  EXPECT_EQ(text.rfind(sc["answer"].get<std::string>(), 0), 0u) << text;
  EXPECT_NE(text.find("\nSources:\n[1] "), std::string::npos) << text;
  // Only fields the tool declares: a session is refused by the schema.
  EXPECT_TRUE(call("core_query", {{"query", "x"}, {"session_id", "s-1"}})["isError"].get<bool>());
  EXPECT_TRUE(call("core_query", {{"query", "x"}, {"top_n", 21}})["isError"].get<bool>());
  ToolContext other;
  other.scope.kb_names = {"no-such-kb"};
  auto none = call("core_query", {{"query", "savolitinib plus osimertinib"}}, other);
  EXPECT_EQ(none["structuredContent"]["answer"], "No passage in the knowledge base answers this question.");
  EXPECT_TRUE(none["structuredContent"]["sources"].empty());
}

// seed §12: core_retrieve_visual {query, scope, top_k, kb_name} -> {image_id,
// document_id, page, position, score}; an image asks by pixels; a caller's scope holds.
TEST_F(McpEngineTest, RetrieveVisualFindsATileByWordsAndByPixelsInScope) {
  const fs::path dir = kWork / "figures";
  fs::create_directories(dir);
  const auto img = eagle::test_support::patterned_image(96, 64);
  std::ofstream(dir / "zzvisual-survival-curve.png", std::ios::binary) << ingest::encode_png(img);
  app::IngestOptions o;
  o.kb_name = "figures";
  engine_->ingest({dir.string()}, o);
  const auto* tool = tools_->find("core_retrieve_visual");
  ASSERT_TRUE(tool);

  auto by_words = call("core_retrieve_visual", {{"query", "zzvisual survival curve"}, {"top_k", 3}});
  ASSERT_FALSE(by_words["isError"].get<bool>()) << by_words.dump();
  const json images = by_words["structuredContent"]["images"];
  ASSERT_EQ(images.size(), 1u) << by_words.dump();
  EXPECT_EQ(images[0]["image_id"], "zzvisual-survival-curve.png");
  EXPECT_EQ(images[0]["document_id"], "zzvisual-survival-curve.png");
  EXPECT_TRUE(images[0]["page"].is_null());
  EXPECT_EQ(images[0]["position"], "0,0,1,1");
  EXPECT_FALSE(validate(tool->output_schema, by_words["structuredContent"]));

  auto by_pixels = call("core_retrieve_visual", {{"image", base64_encode(ingest::encode_jpeg(img, 70))}});
  ASSERT_FALSE(by_pixels["isError"].get<bool>()) << by_pixels.dump();
  ASSERT_FALSE(by_pixels["structuredContent"]["images"].empty());
  EXPECT_EQ(by_pixels["structuredContent"]["images"][0]["image_id"], "zzvisual-survival-curve.png");
  EXPECT_GT(by_pixels["structuredContent"]["images"][0]["score"].get<double>(), 0.99);

  ToolContext other;
  other.scope.kb_names = {"sample"};
  EXPECT_TRUE(call("core_retrieve_visual", {{"query", "zzvisual survival curve"}}, other)["structuredContent"]["images"]
                  .empty());
  EXPECT_NE(error_text(call("core_retrieve_visual", {{"top_k", 3}})).find("query"), std::string::npos);
  EXPECT_NE(error_text(call("core_retrieve_visual", {{"image", "bm90IGFuIGltYWdl"}})).find("not a PNG or JPEG"),
            std::string::npos);
}

TEST_F(McpEngineTest, SearchExplainsAndMatchesItsOutputSchema) {
  auto r = call("core_search", {{"query", "PD-1 blockade adverse events"}, {"explain", true}, {"plugin_namespace", "core"}});
  ASSERT_FALSE(r["isError"].get<bool>()) << r.dump();
  const auto& out = r["structuredContent"];
  EXPECT_FALSE(validate(tools_->find("core_search")->output_schema, out)) << out.dump();
  ASSERT_FALSE(out["sources"].empty());
  EXPECT_TRUE(out["sources"][0].contains("explain"));
  EXPECT_TRUE(out.contains("audits"));
}

TEST_F(McpEngineTest, FailuresAreResultsWithIsError) {
  EXPECT_NE(error_text(call("core_retrieve_text", {{"query", ""}})).find("/query"), std::string::npos);
  EXPECT_NE(error_text(call("core_retrieve_text", {{"query", "x"}, {"top_k", 100000}})).find("/top_k"), std::string::npos);
  EXPECT_NE(error_text(call("core_retrieve_text", {{"query", "x"}, {"bogus", 1}})).find("/bogus"), std::string::npos);
  EXPECT_NE(error_text(call("no_such_tool", json::object())).find("Unknown tool"), std::string::npos);
#if EAGLE_TEST_WITH_BIOMED
  EXPECT_NE(error_text(call("biomed_retrieve_compounds", {{"smiles", "not a smiles"}})).find("SMILES"), std::string::npos);
  EXPECT_NE(error_text(call("biomed_retrieve_compounds", {{"name", "a"}, {"smiles", "C"}})).find("more than one"),
            std::string::npos);
#endif
  EXPECT_NE(error_text(call("core_search", {{"query", "x"}, {"filter", "year >>> 3"}})).find("filter"), std::string::npos);
}

#if EAGLE_TEST_WITH_BIOMED  // the biomed plugin's
TEST_F(McpEngineTest, CompoundsByNameSmilesAndSmarts) {
  auto r = call("biomed_retrieve_compounds", {{"name", "imatinib"}, {"k", 3}})["structuredContent"];
  EXPECT_EQ(r["query"]["id"], "C001");
  ASSERT_EQ(r["compounds"].size(), 3u);
  double last = 1.0;
  for (const auto& c : r["compounds"]) {
    EXPECT_NE(c["id"], "C001");  // not its own neighbour
    EXPECT_LE(c["score"].get<double>(), last);
    EXPECT_GT(c["score"].get<double>(), 0.0);
    last = c["score"].get<double>();
  }
  EXPECT_EQ(r["compounds"][0]["id"], "C002");  // nilotinib shares imatinib's scaffold
  // A SMILES query finds the compound itself at Tanimoto 1.
  auto s = call("biomed_retrieve_compounds", {{"smiles", "CC(=O)Oc1ccccc1C(=O)O"}, {"k", 1}})["structuredContent"];
  EXPECT_EQ(s["compounds"][0]["id"], "C005");
  EXPECT_DOUBLE_EQ(s["compounds"][0]["score"].get<double>(), 1.0);
  // Benzoic acid substructure: aspirin and ibuprofen? No: ibuprofen's acid is not on the ring.
  auto m = call("biomed_retrieve_compounds", {{"smarts", "c1ccccc1C(=O)[OX2H1]"}, {"k", 10}})["structuredContent"];
  std::vector<std::string> ids;
  for (const auto& c : m["compounds"]) ids.push_back(c["id"]);
  EXPECT_EQ(ids, std::vector<std::string>{"C005"});
  EXPECT_FALSE(validate(tools_->find("biomed_retrieve_compounds")->output_schema, m));
}
#endif

#if EAGLE_TEST_WITH_BIOMED  // the biomed plugin's
TEST_F(McpEngineTest, EntitiesWithTypeIdAndSpan) {
  const std::string text = "imatinib and methotrexate in rheumatoid arthritis";
  auto r = call("biomed_query_entities", {{"text", text}})["structuredContent"]["entities"];
  bool drug = false;
  for (const auto& e : r) {
    EXPECT_EQ(text.substr(e["start"].get<size_t>(), e["end"].get<size_t>() - e["start"].get<size_t>()),
              e["text"].get<std::string>());
    if (e["type"] == "drug" && e["name"] == "Imatinib") drug = true;
  }
  EXPECT_TRUE(drug) << r.dump();
}
#endif

TEST_F(McpEngineTest, ACallersScopeHoldsOnEveryTool) {
  const ToolContext other{app::AccessScope{{"other"}}};
  // Naming a KB outside the scope is refused; not naming one finds nothing outside it.
  EXPECT_NE(error_text(call("core_retrieve_text", {{"query", "PD-1"}, {"kb_name", "sample"}}, other)).find("sample"),
            std::string::npos);
  EXPECT_EQ(call("core_retrieve_text", {{"query", "PD-1 blockade"}}, other)["structuredContent"]["sources"].size(), 0u);
  EXPECT_EQ(call("core_search", {{"query", "PD-1 blockade"}}, other)["structuredContent"]["sources"].size(), 0u);
  EXPECT_EQ(call("core_list_documents", json::object(), other)["structuredContent"]["total"], 0);
  EXPECT_NE(error_text(call("core_list_documents", {{"kb_name", "sample"}}, other)).find("sample"), std::string::npos);
#if EAGLE_TEST_WITH_BIOMED
  EXPECT_EQ(call("biomed_retrieve_compounds", {{"smiles", "CC(=O)Oc1ccccc1C(=O)O"}}, other)["structuredContent"]["compounds"]
                .size(),
            0u);
#endif
  // Inside its scope the same caller sees them.
  const ToolContext own{app::AccessScope{{"sample", "chem"}}};
  EXPECT_GT(call("core_list_documents", json::object(), own)["structuredContent"]["total"].get<int>(), 0);
  EXPECT_GT(call("core_retrieve_text", {{"query", "PD-1 blockade"}}, own)["structuredContent"]["sources"].size(), 0u);
}

// ---- Streamable HTTP: sessions and headers

HttpRequest post(const json& body, std::map<std::string, std::string> headers, const std::string& principal = "") {
  HttpRequest r;
  r.method = "POST";
  headers.emplace("Content-Type", "application/json");
  headers.emplace("Accept", "application/json, text/event-stream");
  r.header = [headers](const std::string& name) {
    for (const auto& [k, v] : headers)
      if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
    return std::string();
  };
  r.body = body.dump();
  r.principal = principal;
  return r;
}

std::string header_of(const HttpResponse& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return {};
}

json body_of(const HttpResponse& r) { return json::parse(r.body); }

TEST_F(McpEngineTest, HttpSessionsLiveUntilDeletedAndBelongToTheirToken) {
  HttpTransport http(*server_, 2, 3600);
  const json init = request(1, "initialize", {{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()},
                                              {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
  auto r = http.handle(post(init, {}, "alice"), {});
  ASSERT_EQ(r.status, 200);
  const std::string sid = header_of(r, "Mcp-Session-Id");
  ASSERT_EQ(sid.size(), 32u);
  EXPECT_EQ(http.handle(post({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}},
                             {{"Mcp-Session-Id", sid}}, "alice"),
                        {})
                .status,
            202);
  EXPECT_EQ(http.handle(post(request(2, "tools/list"), {{"Mcp-Session-Id", sid}}, "alice"), {}).status, 200);
  // Another token cannot use it; a request without one, or with a made-up one, fails.
  EXPECT_EQ(http.handle(post(request(3, "tools/list"), {{"Mcp-Session-Id", sid}}, "bob"), {}).status, 404);
  EXPECT_EQ(http.handle(post(request(3, "tools/list"), {}, "alice"), {}).status, 400);
  EXPECT_EQ(http.handle(post(request(3, "tools/list"), {{"Mcp-Session-Id", "feed"}}, "alice"), {}).status, 404);
  // An unsupported MCP-Protocol-Version on the stateful path is a 400.
  EXPECT_EQ(http.handle(post(request(3, "tools/list"), {{"Mcp-Session-Id", sid}, {"MCP-Protocol-Version", "2024-01-01"}},
                             "alice"),
                        {})
                .status,
            400);
  HttpRequest del = post(json::object(), {{"Mcp-Session-Id", sid}}, "alice");
  del.method = "DELETE";
  EXPECT_EQ(http.handle(del, {}).status, 200);
  EXPECT_EQ(http.handle(post(request(4, "tools/list"), {{"Mcp-Session-Id", sid}}, "alice"), {}).status, 404);
  // At most 2 sessions: a third drops the idlest.
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(header_of(http.handle(post(init, {}), {}), "Mcp-Session-Id"));
  EXPECT_EQ(http.sessions(), 2u);
  EXPECT_EQ(http.handle(post(request(5, "ping"), {{"Mcp-Session-Id", ids[0]}}), {}).status, 404);
  EXPECT_EQ(http.handle(post(request(5, "ping"), {{"Mcp-Session-Id", ids[2]}}), {}).status, 200);
}

// One token opening a thousand sessions (0.3 s of requests) evicted another token's
// session: a token now only pushes out its own, or those of a token holding more.
TEST_F(McpEngineTest, OneTokenCannotEvictAnothersSession) {
  HttpTransport http(*server_, 50, 3600, 10);
  const json init = {{"jsonrpc", "2.0"},
                     {"id", 1},
                     {"method", "initialize"},
                     {"params",
                      {{"protocolVersion", "2025-11-25"},
                       {"capabilities", json::object()},
                       {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}};
  const std::string alice = header_of(http.handle(post(init, {}, "alice"), {}), "Mcp-Session-Id");
  ASSERT_EQ(alice.size(), 32u);
  std::vector<std::string> mallory;
  for (int i = 0; i < 1000; ++i) mallory.push_back(header_of(http.handle(post(init, {}, "mallory"), {}), "Mcp-Session-Id"));
  EXPECT_EQ(http.sessions(), 11u);  // alice's one and mallory's cap of 10
  EXPECT_EQ(http.handle(post(request(2, "ping"), {{"Mcp-Session-Id", alice}}, "alice"), {}).status, 200);
  EXPECT_EQ(http.handle(post(request(2, "ping"), {{"Mcp-Session-Id", mallory.back()}}, "mallory"), {}).status, 200);
  EXPECT_EQ(http.handle(post(request(2, "ping"), {{"Mcp-Session-Id", mallory.front()}}, "mallory"), {}).status, 404);
  // With the server full, a newcomer pushes out the idlest of the token holding the most.
  HttpTransport full(*server_, 4, 3600, 3);
  const std::string a1 = header_of(full.handle(post(init, {}, "alice"), {}), "Mcp-Session-Id");
  for (int i = 0; i < 3; ++i) full.handle(post(init, {}, "mallory"), {});
  const std::string b1 = header_of(full.handle(post(init, {}, "bob"), {}), "Mcp-Session-Id");
  EXPECT_EQ(full.sessions(), 4u);
  EXPECT_EQ(full.handle(post(request(2, "ping"), {{"Mcp-Session-Id", a1}}, "alice"), {}).status, 200);
  EXPECT_EQ(full.handle(post(request(2, "ping"), {{"Mcp-Session-Id", b1}}, "bob"), {}).status, 200);
}

TEST_F(McpEngineTest, HttpRejectsWhatIsNotAnMcpRequest) {
  HttpTransport http(*server_, 10, 3600);
  HttpRequest get = post(json::object(), {});
  get.method = "GET";
  auto r = http.handle(get, {});
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(header_of(r, "Allow"), "POST, DELETE");
  HttpRequest text = post(request(1, "ping"), {{"Content-Type", "text/plain"}});
  EXPECT_EQ(http.handle(text, {}).status, 415);
  HttpRequest broken = post(json::object(), {});
  broken.body = "{\"jsonrpc\": ";
  r = http.handle(broken, {});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body_of(r)["error"]["code"], kParseError);
  EXPECT_FALSE(body_of(r).contains("id"));  // unknown: left out, not null
  r = http.handle(post(json::array({request(1, "ping")}), {}), {});
  EXPECT_EQ(body_of(r)["error"]["code"], kInvalidRequest);
  // Members of the wrong type are refused, never thrown at the caller.
  r = http.handle(post({{"jsonrpc", 2}, {"id", 1}, {"method", "ping"}}, {}), {});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body_of(r)["error"]["code"], kInvalidRequest);
  r = http.handle(post({{"jsonrpc", "2.0"}, {"id", 1}, {"method", 7}}, {}), {});
  EXPECT_EQ(body_of(r)["error"]["code"], kInvalidRequest);
}

TEST_F(McpEngineTest, HttpStatelessHeadersMustAgreeWithTheBody) {
  HttpTransport http(*server_, 10, 3600);
  const json args = {{"query", "PD-1"}, {"kb_name", "sample"}};
  const json body = request(9, "tools/call", {{"name", "core_retrieve_text"}, {"arguments", args}, {"_meta", stateless_meta()}});
  std::map<std::string, std::string> h = {{"MCP-Protocol-Version", "2026-07-28"},
                                          {"Mcp-Method", "tools/call"},
                                          {"Mcp-Name", "core_retrieve_text"},
                                          {"Mcp-Param-Kb-Name", "sample"}};
  auto expect_rejected = [&](std::map<std::string, std::string> headers, const char* why) {
    auto r = http.handle(post(body, headers), {});
    EXPECT_EQ(r.status, 400) << why;
    EXPECT_EQ(body_of(r)["error"]["code"], kHeaderMismatch) << why;
    EXPECT_EQ(body_of(r)["id"], 9) << why;
  };
  EXPECT_EQ(http.handle(post(body, h), {}).status, 200);
  auto base64 = h;
  base64["Mcp-Param-Kb-Name"] = "=?base64?c2FtcGxl?=";  // "sample"
  EXPECT_EQ(http.handle(post(body, base64), {}).status, 200);
  auto no_version = h;
  no_version.erase("MCP-Protocol-Version");
  expect_rejected(no_version, "no MCP-Protocol-Version");
  auto no_method = h;
  no_method.erase("Mcp-Method");
  expect_rejected(no_method, "no Mcp-Method");
  auto wrong_case = h;
  wrong_case["Mcp-Method"] = "TOOLS/CALL";
  expect_rejected(wrong_case, "Mcp-Method differs in case");
  auto wrong_name = h;
  wrong_name["Mcp-Name"] = "core_search";
  expect_rejected(wrong_name, "Mcp-Name differs");
  auto no_param = h;
  no_param.erase("Mcp-Param-Kb-Name");
  expect_rejected(no_param, "Mcp-Param-Kb-Name missing");
  auto other_kb = h;
  other_kb["Mcp-Param-Kb-Name"] = "=?base64?b3RoZXI=?=";  // "other"
  expect_rejected(other_kb, "Mcp-Param-Kb-Name differs");
  auto bad_base64 = h;
  bad_base64["Mcp-Param-Kb-Name"] = "=?base64?c2FtcGx?=";
  expect_rejected(bad_base64, "bad Base64 padding");
}

// ---- stdio framing

TEST_F(McpEngineTest, StdioAnswersEachRequestOnOneLine) {
  std::istringstream in(
      request(1, "initialize", {{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()},
                                {"clientInfo", {{"name", "t"}, {"version", "1"}}}})
          .dump() +
      "\n" + json({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}).dump() + "\n\n" + "not json\n" +
      json::array({request(2, "ping")}).dump() + "\r\n" + request(3, "tools/list").dump());  // no final newline
  std::ostringstream out;
  EXPECT_EQ(serve_stdio(*server_, in, out, {}), 5u);
  std::vector<json> lines;
  std::istringstream replies(out.str());
  for (std::string l; std::getline(replies, l);) lines.push_back(json::parse(l));
  ASSERT_EQ(lines.size(), 4u) << out.str();
  EXPECT_EQ(lines[0]["result"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ(lines[1]["error"]["code"], kParseError);
  EXPECT_EQ(lines[2]["error"]["code"], kInvalidRequest);
  EXPECT_EQ(lines[3]["result"]["tools"].size(), kListedTools);
}

// A line as long as the largest image core_retrieve_visual takes (20 MiB as Base64)
// is read; one past kMaxStdioLineBytes is refused and skipped, and the next line served.
TEST_F(McpEngineTest, StdioTakesALineHoldingTheLargestQueryImageAndRefusesLonger) {
  const size_t largest_image_b64 = (search::kMaxQueryImageBytes + 2) / 3 * 4;
  auto padded = [&](int id, size_t pad) {
    return request(id, "ping", {{"_meta", {{"pad", std::string(pad, 'A')}}}}).dump();
  };
  std::istringstream in(padded(1, largest_image_b64) + "\n" + padded(2, kMaxStdioLineBytes) + "\n" +
                        request(3, "ping").dump() + "\n");
  std::ostringstream out;
  serve_stdio(*server_, in, out, {});
  std::vector<json> lines;
  std::istringstream replies(out.str());
  for (std::string l; std::getline(replies, l);) lines.push_back(json::parse(l));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["id"], 1);
  EXPECT_TRUE(lines[0].contains("result")) << lines[0].dump();
  EXPECT_EQ(lines[1]["error"]["code"], kInvalidRequest);
  EXPECT_EQ(lines[2]["id"], 3);
}

}  // namespace

// pipeline.final_top_k is the default hit count (not a fixed 5): the tools' schemas
// announce the configured default and a search without top_k returns that many hits.
TEST_F(McpEngineTest, ASearchWithoutTopKGetsTheConfiguredFinalTopK) {
  for (const char* name : {"core_retrieve_text", "core_search"}) {
    const auto* tool = tools_->find(name);
    ASSERT_TRUE(tool) << name;
    EXPECT_EQ(tool->input_schema["properties"]["top_k"].value("default", 0), 3) << name;
    auto r = call(name, {{"query", "cancer immunotherapy"}});
    EXPECT_EQ(r["structuredContent"]["sources"].size(), 3u) << name << ": " << r.dump().substr(0, 300);
  }
}
