// The chat-completions client against a real local HTTP server that speaks the
// protocol (streamed and not), checks what it receives, and misbehaves on purpose.
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "eagle/answer/chat_client.h"
#include "eagle/core/error.h"
#include "support/local_http_server.h"

using namespace eagle::answer;
using nlohmann::json;

namespace {

using FakeChat = eagle::test_support::LocalHttpServer;

GenerationOptions options(const std::string& url) {
  GenerationOptions o;
  o.base_url = url;
  o.model = "m";
  o.connect_timeout_ms = 500;
  o.idle_timeout_ms = 1000;
  o.timeout_ms = 2000;
  o.backoff_ms = 10;
  o.max_retries = 2;
  return o;
}

std::string sse(const std::string& piece) {
  return "data: " + json{{"choices", {{{"delta", {{"content", piece}}}, {"finish_reason", nullptr}}}}}.dump() + "\n\n";
}

const std::vector<ChatMessage> kMessages = {{"system", "cite as [n]"}, {"user", "Passages:\n[1] a\nx\n\nQuestion: q"}};

}  // namespace

TEST(ChatClient, SendsTheProtocolsRequestAndReadsTheReply) {
  FakeChat fake;
  json seen;
  std::string auth, path;
  fake.server().Post("/v1/chat/completions", [&](const httplib::Request& req, httplib::Response& res) {
    seen = json::parse(req.body);
    auth = req.get_header_value("Authorization");
    path = req.path;
    res.set_content(json{{"model", "m-served"},
                         {"choices", {{{"message", {{"role", "assistant"}, {"content", "A [2]. B [1][3]."}}},
                                       {"finish_reason", "stop"}}}}}
                        .dump(),
                    "application/json");
  });
  ::setenv("EAGLE_TEST_CHAT_KEY", "sekret", 1);
  auto o = options(fake.url() + "/v1/");  // a trailing /v1 is not doubled
  o.api_key_env = "EAGLE_TEST_CHAT_KEY";
  ChatClient client(o);
  EXPECT_EQ(client.endpoint(), fake.url() + "/v1/chat/completions");
  const auto r = client.complete(kMessages);
  EXPECT_EQ(r.text, "A [2]. B [1][3].");
  EXPECT_EQ(r.model, "m-served");
  EXPECT_EQ(r.finish_reason, "stop");
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(path, "/v1/chat/completions");
  EXPECT_EQ(auth, "Bearer sekret");
  EXPECT_EQ(seen["model"], "m");
  EXPECT_EQ(seen["stream"], false);
  EXPECT_EQ(seen["messages"][0]["role"], "system");
  EXPECT_EQ(seen["messages"][1]["content"], kMessages[1].content);
  EXPECT_TRUE(seen.contains("temperature") && seen.contains("max_tokens")) << seen;
}

TEST(ChatClient, AStreamCutAnywhereGivesTheTokensInOrder) {
  FakeChat fake;
  // "héllo" split inside the é, a comment line, CRLF endings, then [DONE].
  const std::string body = ": ping\r\n\r\n" + sse("h\xC3\xA9llo") + sse(" world") + "event: x\r\ndata: [DONE]\r\n\r\n";
  fake.server().Post("/v1/chat/completions", [&](const httplib::Request& req, httplib::Response& res) {
    EXPECT_EQ(json::parse(req.body)["stream"], true);
    res.set_chunked_content_provider("text/event-stream", [body](size_t, httplib::DataSink& sink) {
      // Three bytes at a time: every line and the UTF-8 sequence arrive split.
      for (size_t i = 0; i < body.size(); i += 3) {
        sink.write(body.data() + i, std::min<size_t>(3, body.size() - i));
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      sink.done();
      return true;
    });
  });
  ChatClient client(options(fake.url()));
  std::vector<std::string> tokens;
  const auto r = client.complete(kMessages, [&](std::string_view t) {
    tokens.emplace_back(t);
    return true;
  });
  EXPECT_EQ(tokens, (std::vector<std::string>{"h\xC3\xA9llo", " world"}));
  EXPECT_EQ(r.text, "h\xC3\xA9llo world");
}

TEST(ChatClient, RetriesServerErrorsButNotRejections) {
  FakeChat fake;
  std::atomic<int> calls{0};
  fake.server().Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
    if (++calls < 3) {
      res.status = 503;
      return;
    }
    res.set_content(R"({"choices":[{"message":{"content":"ok [1]"}}]})", "application/json");
  });
  const auto r = ChatClient(options(fake.url())).complete(kMessages);
  EXPECT_EQ(r.text, "ok [1]");
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ(r.attempts, 3);

  FakeChat rejecting;
  std::atomic<int> rejected{0};
  rejecting.server().Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
    ++rejected;
    res.status = 400;
    res.set_content(R"({"error":{"message":"model m not found"}})", "application/json");
  });
  try {
    ChatClient(options(rejecting.url())).complete(kMessages);
    FAIL() << "a 400 must fail";
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("model m not found"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(rejecting.url()), std::string::npos) << e.what();
  }
  EXPECT_EQ(rejected.load(), 1);
}

TEST(ChatClient, TimeoutsADeadPortAndAStallMidReplyFail) {
  FakeChat sleeper;
  sleeper.server().Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    res.set_content(R"({"choices":[{"message":{"content":"late"}}]})", "application/json");
  });
  auto o = options(sleeper.url());
  o.timeout_ms = 300;
  // The reply takes longer than timeout_ms: an error naming the endpoint, not the late reply.
  try {
    ChatClient(o).complete(kMessages);
    FAIL() << "a reply past timeout_ms was accepted";
  } catch (const eagle::Error& e) {
    EXPECT_EQ(e.code(), eagle::ErrorCode::unavailable);
    EXPECT_NE(std::string(e.what()).find(sleeper.url()), std::string::npos) << e.what();
  }

  std::string dead;
  {
    FakeChat gone;
    dead = gone.url();
  }
  try {
    ChatClient(options(dead)).complete(kMessages);
    FAIL() << "a closed port must fail";
  } catch (const eagle::Error& e) {
    EXPECT_EQ(e.code(), eagle::ErrorCode::unavailable);
  }

  // Two tokens, then silence: an error after exactly one request (a reply that
  // started is never sent twice).
  FakeChat staller;
  std::atomic<int> calls{0};
  staller.server().Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
    ++calls;
    res.set_chunked_content_provider("text/event-stream", [](size_t, httplib::DataSink& sink) {
      const std::string first = sse("one") + sse(" two");
      sink.write(first.data(), first.size());
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      sink.done();
      return true;
    });
  });
  auto so = options(staller.url());
  so.idle_timeout_ms = 300;
  std::string got;
  EXPECT_THROW(ChatClient(so).complete(kMessages,
                                       [&](std::string_view t) {
                                         got += t;
                                         return true;
                                       }),
               eagle::Error);
  EXPECT_EQ(got, "one two");
  EXPECT_EQ(calls.load(), 1);
}

TEST(ChatClient, AMissingKeyOrABadBaseFailsBeforeAnyRequest) {
  FakeChat fake;
  std::atomic<int> calls{0};
  fake.server().Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response&) { ++calls; });
  auto o = options(fake.url());
  o.api_key_env = "EAGLE_TEST_CHAT_KEY_UNSET";
  ::unsetenv("EAGLE_TEST_CHAT_KEY_UNSET");
  try {
    ChatClient(o).complete(kMessages);
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("EAGLE_TEST_CHAT_KEY_UNSET is not set"), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls.load(), 0);
  EXPECT_THROW(ChatClient(options("ftp://x")), eagle::Error);
  auto no_model = options(fake.url());
  no_model.model.clear();
  EXPECT_THROW(ChatClient{no_model}, eagle::Error);
  // A stream that carries an error object is an error, with the server's message.
  FakeChat erring;
  erring.server().Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content("data: {\"error\": {\"message\": \"overloaded\"}}\n\n", "text/event-stream");
  });
  try {
    ChatClient(options(erring.url())).complete(kMessages, [](std::string_view) { return true; });
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("overloaded"), std::string::npos) << e.what();
  }
}
