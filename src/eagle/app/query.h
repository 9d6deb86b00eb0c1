#pragma once
// The answer stage on top of a search (Eagle-RAG's /query): route -> retrieve ->
// rerank to top_n (seed retrieval.txt §10.4: rerank.text, top_n 3) -> an answer with
// numbered citations, written by the configured chat model (generation.*) or, with
// none (or when it fails), extracted from the passages' own sentences.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eagle/answer/chat_client.h"
#include "eagle/search/types.h"

namespace eagle::app {

struct QueryRequest {
  search::RetrievalRequest retrieval;  // its top_k is raised to top_n when below
  size_t top_n = 0;                    // 0: generation.top_n
  std::string mode = "auto";           // auto (the model when configured) | extractive
  // Earlier turns of the conversation, oldest first (a session's last history_turns).
  std::vector<std::pair<std::string, std::string>> history;  // question, answer
};

struct Citation {
  size_t n = 0;  // the [n] in the answer = sources[n-1]
  std::string id, document_id, collection, document_name, path;
  std::string quote;  // the quoted sentences (extractive), else the passage's opening
};

struct QueryResult {
  search::RetrievalResponse search;  // hits = the top_n passages, in citation order
  std::string answer;
  std::string mode;   // extractive | generated
  std::string model;  // the chat model (generated)
  std::vector<Citation> citations;
  nlohmann::json steps = nlohmann::json::array();  // namespace, route, recall, rerank, generate
  std::vector<std::string> warnings;
  std::string session_id;  // the session the turn was kept in ("" when none)
  int64_t turn = 0;        // its number there (0 when none)
};

// Who asks within a session (Engine::converse): the session, "" to start one, and
// its owner (the token's name, "" without auth), whose KBs it records.
struct SessionCall {
  std::string session_id;
  std::string owner;
  std::vector<std::string> kb_scope;
  // Asked once the answer is written: false (a stream's client has gone) keeps no
  // turn, as its reader never saw the answer. Unset: the turn is kept.
  std::function<bool()> still_wanted;
};

// Streaming callbacks (all optional): each step as it completes, the passages once
// chosen, and the answer's text piece by piece. `token` returning false stops.
struct QueryEvents {
  std::function<void(const nlohmann::json&)> step;
  std::function<void(const QueryResult&)> sources;
  answer::TokenFn token;
};

// The chat messages for a question over numbered passages: the system rule (answer
// only from the passages, cite each claim as [n], say so when they do not answer),
// the history, then "Passages:\n[1] name · path\ntext\n...\nQuestion: q". Image
// parts are added by the caller (vision).
std::vector<answer::ChatMessage> answer_prompt(const std::string& question, const search::HitList& passages,
                                               const std::vector<std::pair<std::string, std::string>>& history);

}  // namespace eagle::app
