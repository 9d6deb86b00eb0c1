#include "eagle/answer/chat_client.h"

#include <httplib.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "eagle/core/error.h"
#include "eagle/encode/remote/remote.h"

namespace eagle::answer {
namespace {
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string snippet(const std::string& body) {
  std::string s = body.substr(0, 300);
  for (auto& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

// The message of an error object ({"error": {"message"}} or {"error": "..."}).
std::string error_message(const json& j) {
  const auto& e = j["error"];
  if (e.is_string()) return e.get<std::string>();
  if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
  return e.dump().substr(0, 300);
}

// Splits a streamed body into SSE lines and hands each data payload on.
class SseReader {
 public:
  explicit SseReader(std::function<void(std::string_view)> on_data) : on_data_(std::move(on_data)) {}
  void feed(std::string_view bytes) {
    buf_.append(bytes);
    size_t start = 0, nl;
    while ((nl = buf_.find('\n', start)) != std::string::npos) {
      std::string_view line(buf_.data() + start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.rfind("data:", 0) == 0) {
        line.remove_prefix(5);
        if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        on_data_(line);
      }
      start = nl + 1;
    }
    buf_.erase(0, start);
    if (buf_.size() > (1u << 20)) fail(ErrorCode::invalid_argument, "a streamed line exceeds 1 MiB");
  }

 private:
  std::function<void(std::string_view)> on_data_;
  std::string buf_;
};

}  // namespace

ChatClient::ChatClient(GenerationOptions options) : opts_(std::move(options)) {
  const auto ep = encode::parse_remote_base(opts_.base_url);
  if (opts_.model.empty()) fail(ErrorCode::invalid_argument, "generation.model must be set with generation.base_url");
  if (opts_.max_retries < 0 || opts_.max_retries > 10)
    fail(ErrorCode::invalid_argument, "generation.max_retries must be in [0, 10]");
  origin_ = ep.origin;
  // "http://h:8000" and "http://h:8000/v1" both reach /v1/chat/completions.
  std::string prefix = ep.prefix;
  if (prefix.size() >= 3 && prefix.compare(prefix.size() - 3, 3, "/v1") == 0) prefix.resize(prefix.size() - 3);
  path_ = prefix + "/v1/chat/completions";
}

std::string ChatClient::endpoint() const { return origin_ + path_; }

ChatReply ChatClient::complete(const std::vector<ChatMessage>& messages, const TokenFn& on_token) const {
  const bool stream = static_cast<bool>(on_token);
  json body = {{"model", opts_.model},
               {"messages", json::array()},
               {"stream", stream},
               {"temperature", opts_.temperature},
               {"max_tokens", opts_.max_tokens}};
  for (const auto& m : messages) body["messages"].push_back({{"role", m.role}, {"content", m.content}});
  httplib::Headers headers;
  if (!opts_.api_key_env.empty()) {
    const char* key = std::getenv(opts_.api_key_env.c_str());
    if (!key || !*key)
      fail(ErrorCode::invalid_argument, "generation: environment variable " + opts_.api_key_env + " is not set");
    headers.emplace("Authorization", std::string("Bearer ") + key);
  }
  if (stream) headers.emplace("Accept", "text/event-stream");
  const std::string payload = body.dump();
  const auto deadline = Clock::now() + std::chrono::milliseconds(opts_.timeout_ms);
  const auto read_timeout = std::chrono::milliseconds(std::min(opts_.idle_timeout_ms, opts_.timeout_ms));

  ChatReply reply;
  std::string last;
  auto delay = std::chrono::milliseconds(opts_.backoff_ms);
  for (int attempt = 0; attempt <= opts_.max_retries; ++attempt) {
    if (attempt > 0) {
      if (Clock::now() + delay >= deadline) break;
      std::this_thread::sleep_for(delay);
      delay *= 2;
    }
    ++reply.attempts;
    httplib::Client cli(origin_);
    cli.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::milliseconds(opts_.connect_timeout_ms)));
    cli.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(read_timeout));
    cli.set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(read_timeout));

    int status = 0;
    bool got_bytes = false, done = false, timed_out = false, cancelled = false;
    std::string raw;         // a non-2xx body, or the whole non-streamed reply
    std::string stream_err;  // an error the stream carried
    SseReader sse([&](std::string_view data) {
      if (done || !stream_err.empty() || cancelled) return;
      if (data == "[DONE]") {
        done = true;
        return;
      }
      json j = json::parse(data, nullptr, false);
      if (j.is_discarded()) {
        stream_err = "a streamed event is not JSON: " + snippet(std::string(data));
        return;
      }
      if (j.contains("error")) {
        stream_err = error_message(j);
        return;
      }
      if (j.contains("model") && j["model"].is_string()) reply.model = j["model"];
      const auto& choices = j["choices"];
      if (!choices.is_array() || choices.empty()) return;
      const auto& c0 = choices[0];
      if (c0.contains("finish_reason") && c0["finish_reason"].is_string()) reply.finish_reason = c0["finish_reason"];
      if (c0.contains("delta") && c0["delta"].contains("content") && c0["delta"]["content"].is_string()) {
        const std::string piece = c0["delta"]["content"];
        if (piece.empty()) return;
        reply.text += piece;
        if (!on_token(piece)) cancelled = true;
      }
    });

    httplib::Request req;
    req.method = "POST";
    req.path = path_;
    req.headers = headers;
    req.body = payload;
    req.set_header("Content-Type", "application/json");
    req.response_handler = [&](const httplib::Response& res) {
      status = res.status;
      return true;
    };
    req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
      got_bytes = true;
      if (Clock::now() > deadline) {
        timed_out = true;
        return false;
      }
      if (status < 200 || status >= 300 || !stream) {
        if (raw.size() < (64u << 20)) raw.append(data, len);
        return true;
      }
      try {
        sse.feed(std::string_view(data, len));
      } catch (const std::exception& e) {
        stream_err = e.what();
      }
      return !cancelled && stream_err.empty() && !done;
    };
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    const bool ok = cli.send(req, res, err);
    const std::string where = endpoint();
    if (cancelled) fail(ErrorCode::unavailable, "generation: the reply was stopped (the client is gone)");
    if (timed_out)
      fail(ErrorCode::unavailable, "generation: " + where + " did not finish within " +
                                       std::to_string(opts_.timeout_ms) + " ms");
    if (!stream_err.empty()) fail(ErrorCode::unavailable, "generation: " + where + " sent an error: " + stream_err);
    if (stream && status >= 200 && status < 300 && (done || (ok && got_bytes))) {
      if (!done && reply.text.empty())
        fail(ErrorCode::unavailable, "generation: " + where + " ended its stream without a reply");
      return reply;
    }
    if (!ok && !done) {
      last = "no complete response (" + httplib::to_string(err) + ")";
      // A reply that started is never sent again: the tokens may be on their way.
      if (got_bytes && status >= 200 && status < 300)
        fail(ErrorCode::unavailable, "generation: " + where + " stopped mid-reply: " + last);
      if (Clock::now() >= deadline) break;
      continue;
    }
    if (status >= 200 && status < 300) {
      json j = json::parse(raw, nullptr, false);
      if (j.is_discarded() || !j.is_object())
        fail(ErrorCode::unavailable, "generation: " + where + " answered with something other than JSON: " + snippet(raw));
      if (j.contains("error")) fail(ErrorCode::unavailable, "generation: " + where + " sent an error: " + error_message(j));
      const auto& choices = j["choices"];
      if (!choices.is_array() || choices.empty() || !choices[0].contains("message") ||
          !choices[0]["message"].contains("content") || !choices[0]["message"]["content"].is_string())
        fail(ErrorCode::unavailable, "generation: " + where + " answered without choices[0].message.content");
      reply.text = choices[0]["message"]["content"];
      if (choices[0].contains("finish_reason") && choices[0]["finish_reason"].is_string())
        reply.finish_reason = choices[0]["finish_reason"];
      if (j.contains("model") && j["model"].is_string()) reply.model = j["model"];
      return reply;
    }
    last = "HTTP " + std::to_string(status) + ": " + snippet(raw);
    if (status == 408 || status == 429 || status >= 500) continue;
    fail(ErrorCode::invalid_argument, "generation: " + where + " rejected the request, " + last);
  }
  fail(ErrorCode::unavailable, "generation: " + endpoint() + " failed after " + std::to_string(reply.attempts) +
                                   " attempt(s), last: " + (last.empty() ? "out of time" : last));
}

}  // namespace eagle::answer
