// Remote encoder and reranker clients against a real HTTP server on 127.0.0.1,
// inside the test process: success, batching, timeouts, 4xx/5xx, malformed JSON,
// dimension mismatch.
#include "eagle/encode/remote/remote.h"
#include "eagle/encode/remote/responses.h"
#include "eagle/encode/registry_config.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "eagle/core/base64.h"
#include "eagle/core/error.h"
#include "support/local_http_server.h"

using namespace eagle::encode;
using nlohmann::json;

namespace {

using FakeServer = eagle::test_support::LocalHttpServer;

EncoderInfo info(uint32_t dim) {
  EncoderInfo i;
  i.label = "text-embedding-v4";
  i.dim = dim;
  return i;
}

RemoteOptions opts(const std::string& url, size_t batch = 32) {
  RemoteOptions o;
  o.base_url = url;
  o.model = "m";
  o.batch_size = batch;
  o.timeout = std::chrono::milliseconds(500);
  o.connect_timeout = std::chrono::milliseconds(500);
  o.backoff = std::chrono::milliseconds(10);
  o.max_retries = 2;
  return o;
}

// An embedding that encodes its input's length, so order can be checked.
json fake_embedding(const std::string& s, int dim) {
  json v = json::array();
  for (int d = 0; d < dim; ++d) v.push_back(static_cast<double>(s.size()) + d * 0.5);
  return v;
}

}  // namespace

TEST(RemoteEncoder, OpenAiSuccessBatchingOrderAndAuth) {
  FakeServer s;
  std::atomic<int> calls{0};
  std::atomic<size_t> largest{0};
  std::string seen_auth;
  s.server().Post("/v1/embeddings", [&](const httplib::Request& req, httplib::Response& res) {
    ++calls;
    seen_auth = req.get_header_value("Authorization");
    auto body = json::parse(req.body);
    auto inputs = body["input"];
    largest = std::max(largest.load(), inputs.size());
    json data = json::array();
    // Reply in reverse order: the client must order by "index".
    for (size_t i = inputs.size(); i-- > 0;)
      data.push_back({{"index", i}, {"embedding", fake_embedding(inputs[i].get<std::string>(), 4)}});
    res.set_content(json{{"data", data}, {"model", body["model"]}}.dump(), "application/json");
  });
  setenv("EAGLE_TEST_KEY", "sekret", 1);
  auto o = opts(s.url(), 3);
  o.api_key_env = "EAGLE_TEST_KEY";
  auto enc = make_openai_encoder(info(4), o);
  std::vector<std::string> inputs = {"a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g"};
  auto out = enc->encode(inputs, EncodeMode::document);
  ASSERT_EQ(out.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) EXPECT_FLOAT_EQ(out[i][0], static_cast<float>(inputs[i].size()));
  EXPECT_EQ(calls.load(), 3);  // 3 + 3 + 1
  EXPECT_LE(largest.load(), 3u);
  EXPECT_EQ(seen_auth, "Bearer sekret");
  unsetenv("EAGLE_TEST_KEY");
  EXPECT_THROW(enc->encode(inputs, EncodeMode::query), eagle::Error);  // key now missing
}

TEST(RemoteEncoder, TeiEmbedAndDimensionMismatch) {
  FakeServer s;
  s.server().Post("/embed", [&](const httplib::Request& req, httplib::Response& res) {
    json out = json::array();
    const json body = json::parse(req.body);  // named: a range-for over a temporary's member dangles
    for (const auto& t : body["inputs"]) out.push_back(fake_embedding(t.get<std::string>(), 3));
    res.set_content(out.dump(), "application/json");
  });
  auto ok = make_tei_encoder(info(3), opts(s.url()));
  EXPECT_EQ(ok->encode({"x", "yy"}, EncodeMode::query).size(), 2u);
  auto wrong = make_tei_encoder(info(8), opts(s.url()));
  try {
    wrong->encode({"x"}, EncodeMode::query);
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("dimension 3"), std::string::npos) << e.what();
  }
}

TEST(RemoteEncoder, RetriesServerErrorsThenSucceeds) {
  FakeServer s;
  std::atomic<int> calls{0};
  s.server().Post("/embed", [&](const httplib::Request& req, httplib::Response& res) {
    if (++calls < 3) {
      res.status = 503;
      res.set_content("busy", "text/plain");
      return;
    }
    json out = json::array();
    const json body = json::parse(req.body);
    for (const auto& t : body["inputs"]) out.push_back(fake_embedding(t.get<std::string>(), 2));
    res.set_content(out.dump(), "application/json");
  });
  auto enc = make_tei_encoder(info(2), opts(s.url()));
  EXPECT_EQ(enc->encode({"a"}, EncodeMode::query).size(), 1u);
  EXPECT_EQ(calls.load(), 3);
}

TEST(RemoteEncoder, ClientErrorsFailAtOnceWithTheStatus) {
  FakeServer s;
  std::atomic<int> calls{0};
  s.server().Post("/embed", [&](const httplib::Request&, httplib::Response& res) {
    ++calls;
    res.status = 400;
    res.set_content("{\"error\":\"input too long\"}", "application/json");
  });
  auto enc = make_tei_encoder(info(2), opts(s.url()));
  try {
    enc->encode({"a"}, EncodeMode::query);
    FAIL();
  } catch (const eagle::Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("HTTP 400"), std::string::npos) << m;
    EXPECT_NE(m.find("input too long"), std::string::npos) << m;
  }
  EXPECT_EQ(calls.load(), 1);
}

TEST(RemoteEncoder, PersistentServerErrorsGiveUpAfterBoundedRetries) {
  FakeServer s;
  std::atomic<int> calls{0};
  s.server().Post("/embed", [&](const httplib::Request&, httplib::Response& res) {
    ++calls;
    res.status = 500;
  });
  auto enc = make_tei_encoder(info(2), opts(s.url()));
  EXPECT_THROW(enc->encode({"a"}, EncodeMode::query), eagle::Error);
  EXPECT_EQ(calls.load(), 3);  // 1 + max_retries
}

TEST(RemoteEncoder, TimeoutAndMalformedJson) {
  FakeServer s;
  s.server().Post("/embed", [&](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(900));
    res.set_content("[]", "application/json");
  });
  s.server().Post("/v1/embeddings", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"data\": [", "application/json");
  });
  auto o = opts(s.url());
  o.max_retries = 0;
  auto slow = make_tei_encoder(info(2), o);
  // The client gives up reading (its 500 ms read timeout) before the server's answer,
  // which would have been valid: the error says no response was read, not a bad one.
  // No clock is read here; how long the timeout takes belongs to benchmarks.
  try {
    slow->encode({"a"}, EncodeMode::query);
    FAIL() << "a server slower than the read timeout was waited for";
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no response (Read)"), std::string::npos) << e.what();
  }
  auto bad = make_openai_encoder(info(2), o);
  try {
    bad->encode({"a"}, EncodeMode::query);
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos) << e.what();
  }
}

TEST(RemoteEncoder, ConnectionRefusedAndBadUrl) {
  auto o = opts("http://127.0.0.1:1");  // nothing listens on port 1
  o.max_retries = 1;
  auto enc = make_tei_encoder(info(2), o);
  EXPECT_THROW(enc->encode({"a"}, EncodeMode::query), eagle::Error);
  EXPECT_THROW(make_tei_encoder(info(2), opts("ftp://x")), eagle::Error);
}

TEST(RemoteReranker, CohereAndTeiProtocols) {
  FakeServer s;
  std::atomic<int> calls{0};
  s.server().Post("/rerank", [&](const httplib::Request& req, httplib::Response& res) {
    ++calls;
    auto body = json::parse(req.body);
    if (body.contains("documents")) {  // Cohere/Jina: results sorted by score, with indices
      const auto& docs = body["documents"];
      EXPECT_EQ(body["top_n"], docs.size());
      json results = json::array();
      for (size_t i = 0; i < docs.size(); ++i)
        results.push_back({{"index", i}, {"relevance_score", docs[i].get<std::string>().size() / 10.0}});
      std::reverse(results.begin(), results.end());
      res.set_content(json{{"results", results}}.dump(), "application/json");
    } else {  // TEI
      json results = json::array();
      const auto& texts = body["texts"];
      for (size_t i = 0; i < texts.size(); ++i) results.push_back({{"index", i}, {"score", 1.0 * i}});
      res.set_content(results.dump(), "application/json");
    }
  });
  auto cohere = make_cohere_reranker("qwen3-rerank", opts(s.url(), 2));
  auto scores = cohere->score("q", {"a", "bbbbb", "cc"});
  ASSERT_EQ(scores.size(), 3u);
  EXPECT_FLOAT_EQ(scores[1], 0.5f);
  EXPECT_FLOAT_EQ(scores[2], 0.2f);
  EXPECT_EQ(calls.load(), 2);
  auto tei = make_tei_reranker("medcpt-rerank", opts(s.url()));
  auto t = tei->score("q", {"x", "y", "z"});
  EXPECT_FLOAT_EQ(t[2], 2.0f);
}

TEST(EncoderRegistry, MissingLabelsAreConfigurationErrors) {
  EncoderRegistry reg;
  reg.add(make_tei_encoder(info(2), opts("http://127.0.0.1:9")));
  EXPECT_TRUE(reg.has_encoder("text-embedding-v4"));
  EXPECT_THROW(reg.add(make_tei_encoder(info(2), opts("http://127.0.0.1:9"))), eagle::Error);
  try {
    reg.require({"text-embedding-v4", "pubmedbert"});
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("pubmedbert"), std::string::npos);
  }
  EXPECT_THROW(reg.encoder("molformer"), eagle::Error);
}

// Responses come from outside (fuzz_remote fuzzes them): a response item that is not
// an object, an index of the wrong type or a number no float holds is an eagle::Error
// (unavailable), never an nlohmann exception or undefined behaviour; good responses parse.
TEST(RemoteResponses, MalformedShapesAreErrorsAndGoodOnesParse) {
  using nlohmann::json;
  namespace rr = eagle::encode::remote;
  auto error_of = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const eagle::Error& e) {
      EXPECT_EQ(e.code(), eagle::ErrorCode::unavailable);
      return e.what();
    }
    return "(no error)";
  };
  const std::string w = "encoder 'x'";
  EXPECT_NE(error_of([&] { rr::openai_embeddings(json::parse(R"({"data":[1]})"), 1, 2, w); }).find("not an object"),
            std::string::npos);
  EXPECT_NE(error_of([&] { rr::openai_embeddings(json::parse(R"({"data":[{"index":"0","embedding":[1,2]}]})"), 1, 2, w); })
                .find("bad or repeated"),
            std::string::npos);
  EXPECT_NE(error_of([&] { rr::openai_embeddings(json::parse(R"({"data":[{"index":0,"embedding":[1e300,2]}]})"), 1, 2, w); })
                .find("no float holds"),
            std::string::npos);
  EXPECT_NE(error_of([&] { rr::rerank_scores(json::parse(R"([{"index":-1,"score":1}])"), 1, false, w); })
                .find("bad or repeated"),
            std::string::npos);
  EXPECT_NE(error_of([&] { rr::rerank_scores(json::parse(R"({"results":[{"index":0,"relevance_score":"high"}]})"), 1, true, w); })
                .find("malformed result"),
            std::string::npos);
  EXPECT_NE(error_of([&] { rr::parse_body("{\"data\":", w); }).find("malformed JSON"), std::string::npos);
  const auto e = rr::openai_embeddings(
      json::parse(R"({"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}]})"), 2, 2, w);
  EXPECT_EQ(e, (std::vector<eagle::encode::Embedding>{{1, 2}, {3, 4}}));
  EXPECT_EQ(rr::rerank_scores(json::parse(R"({"results":[{"index":1,"relevance_score":0.5},{"index":0,"relevance_score":2}]})"), 2, true, w),
            (std::vector<float>{2.0f, 0.5f}));
}

// Remote encoders send the query/document distinction their APIs support.
TEST(RemoteEncoder, QueryAndDocumentModesSendTheApisOwnFieldsAndPrefixes) {
  FakeServer s;
  std::vector<json> bodies;
  std::mutex mu;
  auto reply = [&](const httplib::Request& req, httplib::Response& res, bool openai) {
    const json body = json::parse(req.body);
    {
      std::lock_guard lock(mu);
      bodies.push_back(body);
    }
    json out = json::array();
    const json& texts = openai ? body["input"] : body["inputs"];
    for (size_t i = 0; i < texts.size(); ++i) {
      if (openai) out.push_back({{"index", i}, {"embedding", fake_embedding(texts[i].get<std::string>(), 2)}});
      else out.push_back(fake_embedding(texts[i].get<std::string>(), 2));
    }
    res.set_content(openai ? json{{"data", out}}.dump() : out.dump(), "application/json");
  };
  s.server().Post("/v1/embeddings", [&](const httplib::Request& q, httplib::Response& r) { reply(q, r, true); });
  s.server().Post("/embed", [&](const httplib::Request& q, httplib::Response& r) { reply(q, r, false); });

  auto jina = opts(s.url());
  apply_input_type_preset(jina, "jina");
  auto enc = make_openai_encoder(info(2), jina);
  enc->encode({"egfr"}, EncodeMode::query);
  enc->encode({"egfr"}, EncodeMode::document);
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[0]["task"], "retrieval.query");
  EXPECT_EQ(bodies[1]["task"], "retrieval.passage");
  EXPECT_EQ(bodies[0]["input"][0], "egfr");  // no prefix configured

  // Through the encoders configuration: a preset, an explicit field, and prefixes.
  EncoderRegistry reg;
  add_from_config(reg, json{{"e5", {{"type", "tei"}, {"base_url", s.url()}, {"dim", 2},
                                    {"input_types", "tei-prompts"},
                                    {"document_fields", {{"truncate", true}}},
                                    {"query_prefix", "query: "}, {"document_prefix", "passage: "}}}});
  bodies.clear();
  reg.encoder("e5").encode({"egfr"}, EncodeMode::query);
  reg.encoder("e5").encode({"egfr"}, EncodeMode::document);
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[0]["prompt_name"], "query");
  EXPECT_EQ(bodies[0]["inputs"][0], "query: egfr");
  EXPECT_FALSE(bodies[0].contains("truncate"));
  EXPECT_EQ(bodies[1]["prompt_name"], "document");
  EXPECT_EQ(bodies[1]["inputs"][0], "passage: egfr");
  EXPECT_EQ(bodies[1]["truncate"], true);

  RemoteOptions bad = opts(s.url());
  EXPECT_THROW(apply_input_type_preset(bad, "bing"), eagle::Error);
  EXPECT_THROW(add_from_config(reg, json{{"x", {{"type", "openai"}, {"base_url", s.url()}, {"dim", 2},
                                               {"query_fields", "task=query"}}}}),
               eagle::Error);
}

// Image encoders with a text tower, each in its API's own request shape,
// against a server that checks what arrives (the image bytes round-trip through
// Base64) and answers out of order where the protocol has an index.
namespace {

// A small PNG and JPEG (magic bytes and a body; the client sniffs, never decodes).
const std::string kPng = std::string("\x89PNG\r\n\x1a\n", 8) + "png-body-1";
const std::string kJpeg = std::string("\xFF\xD8\xFF\xE0", 4) + "jpeg-body-22";

// What the fake server learned of each image it was sent: its decoded length.
double image_length(const std::string& uri_or_b64) {
  const auto comma = uri_or_b64.find(',');
  const std::string b64 = uri_or_b64.rfind("data:", 0) == 0 ? uri_or_b64.substr(comma + 1) : uri_or_b64;
  auto bytes = eagle::base64_decode(b64);
  return bytes ? static_cast<double>(bytes->size()) : -1.0;
}

json vector_of(double first, int dim) {
  json v = json::array();
  for (int d = 0; d < dim; ++d) v.push_back(first + d * 0.25);
  return v;
}

EncoderInfo image_info(uint32_t dim) {
  EncoderInfo i;
  i.label = "qwen3-vl";
  i.dim = dim;
  i.metric = eagle::Metric::ip;
  return i;
}

}  // namespace

TEST(RemoteImageEncoder, DashScopeMultimodalSendsDataUrisAndTextInOneSpace) {
  FakeServer s;
  std::vector<json> bodies;
  std::mutex mu;
  s.server().Post("/api/v1/services/embeddings/multimodal-embedding/multimodal-embedding",
                  [&](const httplib::Request& req, httplib::Response& res) {
                    auto body = json::parse(req.body);
                    {
                      std::lock_guard l(mu);
                      bodies.push_back(body);
                    }
                    json embs = json::array();
                    const auto& contents = body["input"]["contents"];
                    for (size_t i = contents.size(); i-- > 0;) {
                      const auto& c = contents[i];
                      const double first = c.contains("image") ? image_length(c["image"].get<std::string>())
                                                               : 1000.0 + static_cast<double>(c["text"].get<std::string>().size());
                      embs.push_back({{"index", i}, {"embedding", vector_of(first, 3)}, {"type", c.contains("image") ? "image" : "text"}});
                    }
                    res.set_content(json{{"output", {{"embeddings", embs}}}, {"usage", json::object()}}.dump(),
                                    "application/json");
                  });
  auto enc = make_multimodal_encoder(image_info(3), opts(s.url(), 2), MultimodalApi::dashscope);
  EXPECT_EQ(enc->info().modality, Modality::image);
  EXPECT_TRUE(enc->info().embeds_text);
  auto out = enc->encode_images({kPng, kJpeg, kPng});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FLOAT_EQ(out[0][0], static_cast<float>(kPng.size()));
  EXPECT_FLOAT_EQ(out[1][0], static_cast<float>(kJpeg.size()));
  EXPECT_FLOAT_EQ(out[2][0], static_cast<float>(kPng.size()));
  ASSERT_EQ(bodies.size(), 2u);  // batches of 2
  EXPECT_EQ(bodies[0]["model"], "m");
  EXPECT_EQ(bodies[0]["input"]["contents"][0]["image"].get<std::string>().rfind("data:image/png;base64,", 0), 0u);
  EXPECT_EQ(bodies[0]["input"]["contents"][1]["image"].get<std::string>().rfind("data:image/jpeg;base64,", 0), 0u);
  auto text = enc->encode({"forest plot"}, EncodeMode::query);
  ASSERT_EQ(text.size(), 1u);
  EXPECT_FLOAT_EQ(text[0][0], 1011.0f);
  EXPECT_EQ(bodies.back()["input"]["contents"][0]["text"], "forest plot");
  // Not an image: refused before anything is sent.
  const size_t sent = bodies.size();
  EXPECT_THROW(enc->encode_images({std::string_view("GIF89a...")}), eagle::Error);
  EXPECT_EQ(bodies.size(), sent);
}

TEST(RemoteImageEncoder, JinaClipAndCohereEmbedRequestShapes) {
  FakeServer s;
  json jina_body, cohere_body;
  s.server().Post("/v1/embeddings", [&](const httplib::Request& req, httplib::Response& res) {
    jina_body = json::parse(req.body);
    json data = json::array();
    const auto& input = jina_body["input"];
    for (size_t i = 0; i < input.size(); ++i)
      data.push_back({{"index", i},
                      {"embedding", vector_of(input[i].contains("image") ? image_length(input[i]["image"]) : -7.0, 2)}});
    res.set_content(json{{"data", data}}.dump(), "application/json");
  });
  s.server().Post("/v2/embed", [&](const httplib::Request& req, httplib::Response& res) {
    cohere_body = json::parse(req.body);
    json floats = json::array();
    if (cohere_body.contains("images"))
      for (const auto& i : cohere_body["images"]) floats.push_back(vector_of(image_length(i), 2));
    else
      for (size_t i = 0; i < cohere_body["texts"].size(); ++i) floats.push_back(vector_of(-3.0, 2));
    res.set_content(json{{"id", "x"}, {"embeddings", {{"float", floats}}}}.dump(), "application/json");
  });
  auto jina = make_multimodal_encoder(image_info(2), opts(s.url()), MultimodalApi::jina);
  auto out = jina->encode_images({kJpeg});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FLOAT_EQ(out[0][0], static_cast<float>(kJpeg.size()));
  // Jina takes the Base64 alone, no data: prefix.
  EXPECT_EQ(jina_body["input"][0]["image"], eagle::base64_encode(kJpeg));
  EXPECT_FLOAT_EQ(jina->encode({"x"}, EncodeMode::query)[0][0], -7.0f);

  auto cohere = make_multimodal_encoder(image_info(2), opts(s.url()), MultimodalApi::cohere);
  out = cohere->encode_images({kPng, kJpeg});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FLOAT_EQ(out[1][0], static_cast<float>(kJpeg.size()));
  EXPECT_EQ(cohere_body["input_type"], "image");
  EXPECT_EQ(cohere_body["embedding_types"], json::array({"float"}));
  EXPECT_EQ(cohere_body["images"][0].get<std::string>().rfind("data:image/png;base64,", 0), 0u);
  EXPECT_FLOAT_EQ(cohere->encode({"a", "b"}, EncodeMode::query)[1][0], -3.0f);
  EXPECT_EQ(cohere_body["input_type"], "search_query");
  EXPECT_EQ(cohere_body["texts"], json::array({"a", "b"}));

  // A server answering the wrong dimension: refused, as for the text clients.
  auto wrong = make_multimodal_encoder(image_info(5), opts(s.url()), MultimodalApi::cohere);
  EXPECT_THROW(wrong->encode_images({kPng}), eagle::Error);
}

TEST(RemoteImageEncoder, ConfiguredByTypeWithIdentityAndDefaultMetricIp) {
  EncoderRegistry reg;
  add_from_config(reg, json{{"qwen3-vl",
                             {{"type", "dashscope-multimodal"},
                              {"base_url", "https://dashscope.example"},
                              {"model", "qwen3-vl-embedding"},
                              {"dim", 2048}}}});
  const auto& i = reg.encoder("qwen3-vl").info();
  EXPECT_EQ(i.modality, Modality::image);
  EXPECT_EQ(i.metric, eagle::Metric::ip);
  EXPECT_EQ(i.dim, 2048u);
  EXPECT_NE(i.identity.find("type=dashscope-multimodal"), std::string::npos) << i.identity;
  EXPECT_NE(i.identity.find("model=qwen3-vl-embedding"), std::string::npos) << i.identity;
  EXPECT_THROW(add_from_config(reg, json{{"x", {{"type", "jina-clip"}, {"base_url", "http://127.0.0.1:1"}}}}),
               eagle::Error);  // no dim
}
