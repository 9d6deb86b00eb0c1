#pragma once
// Settings of the answer stage (`generation.*`, and the seed's `rerank.text`): which
// chat model writes the answer, how the client talks to it, and the extractive
// answer that stands in when no model is configured or the model fails.
#include <cstddef>
#include <string>

namespace eagle::answer {

struct GenerationOptions {
  // An OpenAI-compatible chat endpoint (vLLM, llama.cpp server, Ollama, OpenAI,
  // DashScope compatible mode): "http://127.0.0.1:8000" or ".../v1"; the client posts
  // to {base}/v1/chat/completions, without doubling a trailing /v1. Empty: extractive.
  std::string base_url;
  std::string model;
  std::string api_key_env;  // environment variable holding the key; empty = no Authorization
  int connect_timeout_ms = 2000;
  int idle_timeout_ms = 20000;  // longest wait for the next bytes of a reply
  int timeout_ms = 60000;       // the whole reply
  int max_retries = 2;          // retries before the first byte of a reply (never after)
  int backoff_ms = 200;         // doubled after each retry
  double temperature = 0.1;
  size_t max_tokens = 512;
  // Seed retrieval.txt §10.4: the generation stage keeps the reranked top_n passages.
  size_t top_n = 3;
  bool vision = false;        // image tiles go to the model as images (it must accept image_url parts)
  size_t max_concurrent = 4;  // generations at once in a server; more are 503 with Retry-After
  size_t history_turns = 3;   // earlier turns of a session given to the model
  // The extractive answer.
  size_t extractive_sentences = 3;    // at most this many sentences
  size_t sentences_per_passage = 2;   // at most this many from one passage
  double extractive_min_score = 0.3;  // a sentence below this (query coverage, 0..1.15) is not quoted
  // rerank.text: the reranker label (from `encoders:`) that orders the passages before
  // the top_n cut; empty = the search's fused order.
  std::string reranker;
};

}  // namespace eagle::answer
