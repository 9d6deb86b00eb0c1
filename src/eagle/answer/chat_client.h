#pragma once
// A client of the OpenAI chat-completions protocol (vLLM, llama.cpp server, Ollama,
// OpenAI, DashScope compatible mode): POST {base}/v1/chat/completions with
// {model, messages, stream, temperature, max_tokens}.
//
// Not streamed: the reply's choices[0].message.content. Streamed: Server-Sent Events
// whose `data:` lines carry choices[0].delta.content, ended by `data: [DONE]`; lines
// may arrive split anywhere (even inside a UTF-8 sequence) and end in LF or CRLF;
// comments (":") and other fields are ignored; `data: {"error": ...}` is an error.
// Connection errors, 408, 429 and 5xx are retried (backoff doubling) only while no
// byte of a reply has arrived; other 4xx fail at once. Every error names the endpoint
// and never the key.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "eagle/answer/options.h"

namespace eagle::answer {

struct ChatMessage {
  std::string role;        // system | user | assistant
  nlohmann::json content;  // a string, or an array of parts ({type: text|image_url, ...})
};

struct ChatReply {
  std::string text;
  std::string finish_reason;  // "stop", "length", ... (empty when the server gave none)
  std::string model;          // as the server reports it
  int attempts = 0;           // requests made
};

// Called with each streamed piece of the reply; returning false stops the reply
// (the client is gone) and complete() fails with `cancelled`.
using TokenFn = std::function<bool(std::string_view)>;

class ChatClient {
 public:
  // invalid_argument for a base_url that is not http(s):// or an empty model.
  explicit ChatClient(GenerationOptions options);

  // The reply to `messages`; streamed to `on_token` when it is given.
  ChatReply complete(const std::vector<ChatMessage>& messages, const TokenFn& on_token = {}) const;

  // "http://host:port/v1/chat/completions": where the requests go (for messages).
  std::string endpoint() const;

 private:
  GenerationOptions opts_;
  std::string origin_, path_;
};

}  // namespace eagle::answer
