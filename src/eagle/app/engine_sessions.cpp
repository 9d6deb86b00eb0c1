// Sessions of /query (Eagle-RAG's `session_id`; list/get/delete /sessions): each
// turn's question, answer and citations kept in the registry (SQLite or PostgreSQL),
// and the last generation.history_turns turns given to the model with the next
// question. A session belongs to its owner, the token's name: another owner's is
// absent to everyone else.
#include "eagle/app/engine.h"
#include "eagle/app/json_views.h"
#include "eagle/core/error.h"
#include "eagle/core/random_id.h"

namespace eagle::app {

namespace {

// "s-" + 128 random bits: not guessable, so an id alone grants nothing even before
// the owner check.
std::string new_session_id() { return "s-" + random_hex(16); }

// The question as a title: at most `bytes`, cut at a character boundary, "…" added.
std::string title_of(const std::string& question, size_t bytes = 120) {
  if (question.size() <= bytes) return question;
  size_t cut = bytes;
  while (cut > 0 && (static_cast<unsigned char>(question[cut]) & 0xC0) == 0x80) --cut;
  return question.substr(0, cut) + "\u2026";
}

}  // namespace

registry::DocumentRegistry& Engine::session_registry() {
  std::call_once(sessions_once_, [&] {
    // A reader keeps no sessions: it shares the documents' read-only connection.
    if (access_ == StoreAccess::write) sessions_registry_ = registry::open_registry(registry_url_);
  });
  return sessions_registry_ ? *sessions_registry_ : registry();
}

registry::SessionRecord Engine::check_session(const std::string& session_id, const std::string& owner) {
  if (!cfg_.sessions.enabled || access_ != StoreAccess::write)
    fail(ErrorCode::invalid_argument, access_ == StoreAccess::write
                                          ? "session_id: sessions are off (sessions.enabled: false)"
                                          : "session_id: this engine is a reader; sessions are kept by `eagle serve`");
  auto session = session_registry().get_session(session_id, owner);
  if (!session) fail(ErrorCode::not_found, "no session '" + session_id + "'");
  if (session->turns >= cfg_.sessions.max_turns)
    fail(ErrorCode::conflict, "session '" + session_id + "' holds " + std::to_string(session->turns) +
                                  " turns (sessions.max_turns); start a new session");
  return *session;
}

QueryResult Engine::converse(QueryRequest req, const SessionCall& call, const QueryEvents& events) {
  const bool keeps = cfg_.sessions.enabled && access_ == StoreAccess::write;
  if (!call.session_id.empty()) {
    // Refused before the answer is written, not after the model's time is spent.
    check_session(call.session_id, call.owner);
    req.history.clear();
    if (cfg_.generation.history_turns > 0)
      for (auto& t : session_registry().session_turns(call.session_id, call.owner, cfg_.generation.history_turns))
        req.history.emplace_back(std::move(t.question), std::move(t.answer));
  }
  QueryResult out = query(req, events);
  if (!keeps || (call.still_wanted && !call.still_wanted())) return out;

  // Keeping the turn is the answer's epilogue: when it fails (a busy database, the
  // session deleted meanwhile), the answer still stands, with a warning.
  try {
    auto& reg = session_registry();
    std::string id = call.session_id;
    if (id.empty()) {
      registry::SessionRecord s;
      s.session_id = new_session_id();
      s.owner = call.owner;
      s.kb_scope = call.kb_scope;
      s.plugin_namespace =
          out.search.metadata.value("/namespace_step/used"_json_pointer, req.retrieval.plugin_namespace);
      if (s.plugin_namespace.empty() || s.plugin_namespace == "auto") s.plugin_namespace = "core";
      s.title = title_of(req.retrieval.query);
      reg.create_session(s, cfg_.sessions.max_per_owner);
      id = s.session_id;
    }
    registry::SessionTurn turn;
    turn.question = req.retrieval.query;
    turn.answer = out.answer;
    turn.mode = out.mode;
    turn.model = out.model;
    turn.evidence = out.search.metadata.value("/evidence/level"_json_pointer, std::string());
    nlohmann::json cites = nlohmann::json::array();
    for (const auto& c : out.citations) cites.push_back(citation_json(c));
    turn.citations = cites.dump();
    try {
      out.turn = reg.append_turn(id, call.owner, turn, cfg_.sessions.max_turns);
    } catch (...) {
      if (call.session_id.empty()) reg.delete_session(id, call.owner);  // no empty session left behind
      throw;
    }
    out.session_id = id;
  } catch (const Error& e) {
    out.warnings.push_back(std::string("the turn was not kept in a session: ") + e.what());
    out.session_id.clear();
    out.turn = 0;
  }
  return out;
}

std::vector<registry::SessionRecord> Engine::list_sessions(const std::string& owner, size_t limit, size_t offset,
                                                           size_t* total) {
  auto& reg = session_registry();
  if (total) *total = reg.count_sessions(owner);
  return reg.list_sessions(owner, limit, offset);
}

std::optional<std::pair<registry::SessionRecord, std::vector<registry::SessionTurn>>> Engine::session(
    const std::string& session_id, const std::string& owner, size_t last_turns) {
  auto& reg = session_registry();
  auto s = reg.get_session(session_id, owner);
  if (!s) return std::nullopt;
  return std::make_pair(std::move(*s), reg.session_turns(session_id, owner, last_turns));
}

std::optional<size_t> Engine::delete_session(const std::string& session_id, const std::string& owner) {
  require_writer("delete a session");
  return session_registry().delete_session(session_id, owner);
}

}  // namespace eagle::app
