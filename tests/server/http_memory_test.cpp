// Server::answer_bytes: one connection's bytes through the whole HTTP layer in memory
// (the path the HTTP fuzz target drives), checked against what the real server
// answers over sockets in server_test.cpp.
#include <gtest/gtest.h>

#include <string>

#include "eagle/server/http_server.h"
#include "support/temp_engine.h"

using namespace eagle;

namespace {
size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

std::string post_search(const std::string& token, const std::string& body, const std::string& extra = "") {
  return "POST /search HTTP/1.1\r\nHost: localhost\r\n" +
         (token.empty() ? std::string() : "Authorization: Bearer " + token + "\r\n") +
         "Content-Type: application/json\r\n" + extra + "Content-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}
}  // namespace

TEST(HttpInMemory, RequestsOnOneConnectionAreAnsweredInTurnWithTheServersRules) {
  test_support::TempEngine temp("http_memory");
  server::ServerOptions opts;
  opts.allowed_hosts = {"localhost", "127.0.0.1"};
  opts.tokens.push_back({"admin", "admin-token", {}});
  server::Server http(*temp.engine, opts);
  http.set_ready(true);

  const std::string health = "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n";
  EXPECT_EQ(http.answer_bytes(health).rfind("HTTP/1.1 200", 0), 0u);

  // Kept alive: a public route, a search with the token, then one without it (401,
  // the connection closed with its body unread), then one more, never answered.
  const std::string four = health + post_search("admin-token", R"({"query": "egfr", "top_k": 2})") +
                           post_search("", R"({"query": "egfr"})") + health;
  const std::string out = http.answer_bytes(four);
  EXPECT_EQ(count_of(out, "HTTP/1.1 "), 3u) << out;
  EXPECT_EQ(count_of(out, "HTTP/1.1 200"), 2u) << out;
  const auto refused = out.find("HTTP/1.1 401");
  ASSERT_NE(refused, std::string::npos) << out;
  EXPECT_NE(out.find("Connection: close", refused), std::string::npos);

  // Bad input is a 4xx naming the problem, never a 500.
  const std::string overflow = http.answer_bytes(post_search("admin-token", R"({"query": "egfr", "top_k": 1e400})"));
  EXPECT_EQ(overflow.rfind("HTTP/1.1 400", 0), 0u) << overflow;
  const std::string chunked =
      "POST /search HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer admin-token\r\n"
      "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n11\r\n{\"query\": \"egfr\"}\r\n0\r\n\r\n";
  // A chunked body is read (its size counted while reading) and answered like any other.
  const std::string chunked_answer = http.answer_bytes(chunked);
  EXPECT_EQ(chunked_answer.rfind("HTTP/1.1 200", 0), 0u) << chunked_answer;
  const std::string chunked_form =
      "POST /search HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer admin-token\r\n"
      "Transfer-Encoding: chunked\r\n\r\n11\r\n{\"query\": \"egfr\"}\r\n0\r\n\r\n";
  EXPECT_EQ(http.answer_bytes(chunked_form).rfind("HTTP/1.1 415", 0), 0u);  // no type: refused on the headers
  EXPECT_EQ(http.answer_bytes("GET /health HTTP/1.1\r\nHost: localhost:evil.com\r\n\r\n").rfind("HTTP/1.1 403", 0), 0u);
  EXPECT_EQ(http.answer_bytes("\x01\x02 garbage\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  // A Host that is not UTF-8 is refused like any other, its bytes replaced in the
  // message (it was a 500: the error body could not be serialised; found by fuzz_http).
  const std::string odd_host = http.answer_bytes("GET /health HTTP/1.1\r\nHost: loca\xf4\xf4lhost\r\n\r\n");
  EXPECT_EQ(odd_host.rfind("HTTP/1.1 403", 0), 0u) << odd_host;
  EXPECT_NE(odd_host.find("\xef\xbf\xbd"), std::string::npos) << "U+FFFD in the message";
  // An Origin header that is present but empty is an Origin no one allowed (httplib
  // dropped empty headers, so it passed as no Origin at all).
  EXPECT_EQ(http.answer_bytes("GET /health HTTP/1.1\r\nHost: localhost\r\nOrigin:\r\n\r\n").rfind("HTTP/1.1 403", 0), 0u);
  EXPECT_EQ(http.answer_bytes("GET /health HTTP/1.1\r\nHost: localhost\r\nOrigin: \r\n\r\n").rfind("HTTP/1.1 403", 0), 0u);
  // Ids with '/' reach the document routes, encoded or not (one rule: the path is
  // percent-decoded once): an absent document is a 404 from the route, not "no route".
  for (const char* path : {"/documents/jats/pone.0046493.nxml", "/documents/jats%2Fpone.0046493.nxml"}) {
    const std::string doc = http.answer_bytes(std::string("GET ") + path +
                                              " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer admin-token\r\n\r\n");
    EXPECT_EQ(doc.rfind("HTTP/1.1 404", 0), 0u) << doc;
    EXPECT_NE(doc.find("no document 'jats/pone.0046493.nxml'"), std::string::npos) << doc;
  }
  // A multipart search whose body is not well-formed is a 400 naming the fault.
  const std::string form_body = "--XyZ\r\nContent-Disposition: form-data; name=\"image\"\r\n\r\nabc";
  const std::string torn = http.answer_bytes(
      "POST /search HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer admin-token\r\n"
      "Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: " +
      std::to_string(form_body.size()) + "\r\n\r\n" + form_body);
  EXPECT_EQ(torn.rfind("HTTP/1.1 400", 0), 0u) << torn;
  EXPECT_NE(torn.find("not closed by the boundary"), std::string::npos) << torn;
}
