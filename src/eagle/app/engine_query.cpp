// Engine::query: the answer stage (app/query.h).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_set>

#include "eagle/answer/citations.h"
#include "eagle/answer/evidence.h"
#include "eagle/answer/extractive.h"
#include "eagle/app/engine.h"
#include "eagle/app/json_views.h"
#include "eagle/core/base64.h"
#include "eagle/core/error.h"
#include "eagle/search/orchestrator.h"
#include "eagle/text/analyzer.h"

namespace eagle::app {
namespace {
using nlohmann::json;

std::string passage_heading(const search::ScoredHit& h) {
  std::string name = h.field("document_name");
  if (name.empty()) name = h.field("file_name");
  if (name.empty()) name = h.document_id().empty() ? h.id : h.document_id();
  const std::string path = h.field("path");
  return path.empty() ? name : name + " \xC2\xB7 " + path;  // " · "
}

std::string opening(const std::string& text, size_t bytes) {
  if (text.size() <= bytes) return text;
  size_t cut = bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "\xE2\x80\xA6";  // "…"
}

// Holds one of generation.max_concurrent slots, or none when all are taken.
class GenerationSlot {
 public:
  GenerationSlot(std::atomic<size_t>& running, size_t cap) : running_(running) {
    size_t now = running_.load();
    while (now < cap && !running_.compare_exchange_weak(now, now + 1)) {
    }
    held_ = now < cap;
  }
  ~GenerationSlot() {
    if (held_) --running_;
  }
  bool held() const { return held_; }

 private:
  std::atomic<size_t>& running_;
  bool held_ = false;
};

}  // namespace

std::vector<answer::ChatMessage> answer_prompt(const std::string& question, const search::HitList& passages,
                                               const std::vector<std::pair<std::string, std::string>>& history) {
  std::vector<answer::ChatMessage> messages;
  messages.push_back(
      {"system",
       "You answer questions from a knowledge base. Use only the numbered passages the user gives. Cite every "
       "claim with the number of the passage it comes from, in square brackets: [1], or [1][3] for several. If "
       "the passages do not answer the question, say so plainly instead of answering from memory. Be concise."});
  for (const auto& [q, a] : history) {
    messages.push_back({"user", q});
    messages.push_back({"assistant", a});
  }
  std::string user = "Passages:\n";
  for (size_t i = 0; i < passages.size(); ++i)
    user += "[" + std::to_string(i + 1) + "] " + passage_heading(passages[i]) + "\n" + passages[i].text + "\n\n";
  user += "Question: " + question;
  messages.push_back({"user", user});
  return messages;
}

answer::QuestionTerms Engine::question_terms(const search::RetrievalRequest& req, const search::HitList& hits,
                                             bool entities) {
  const text::Analyzer analyzer(cfg_.analyzer);
  answer::QuestionTerms qt;
  // A scoped caller's weights are its knowledge bases' own (tenancy.isolate_statistics).
  const std::string statistics =
      cfg_.pipeline.isolate_statistics && !req.allowed_kbs.empty() ? "kb_name in {allowed_kbs}" : "";
  store::TemplateParams params;
  if (!statistics.empty()) params["allowed_kbs"] = req.allowed_kbs;
  {
    // The collection is found and used under the state lock: a re-embed swaps it.
    std::shared_lock state(state_mu_);
    const store::Collection* stats = nullptr;
    for (const auto& h : hits)
      if (!stats && !h.is_image) stats = catalog_->find(h.collection);
    for (const auto& term : answer::fold_question_terms(analyzer.terms(req.query))) {
      const double w = stats ? stats->query_weight(term, statistics, params) : 1.0;
      qt.terms.emplace_back(term, w > 0 ? w : 0.0);
    }
  }
  if (entities)
    for (const auto& mention : plugin_instance(req.plugin_namespace)->question_entities(req.query)) {
      std::string low = mention;
      for (auto& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (!low.empty() && std::find(qt.entities.begin(), qt.entities.end(), low) == qt.entities.end())
        qt.entities.push_back(low);
    }
  return qt;
}

json Engine::rerank_passages(const std::string& query, search::HitList& hits, size_t top_n,
                             std::vector<std::string>& warnings) {
  const auto& gen = cfg_.generation;
  // rerank.text: the reranker orders the passages before the cut (seed §10.4).
  json step = {{"name", "rerank"}, {"candidates", hits.size()}, {"top_n", top_n}};
  if (!gen.reranker.empty() && hits.size() > 1) {
    step["reranker"] = gen.reranker;
    try {
      if (!encoders_.has_reranker(gen.reranker))
        fail(ErrorCode::invalid_argument, "rerank.text names '" + gen.reranker + "', which encoders: does not define as a reranker");
      std::vector<std::string> texts;
      for (const auto& h : hits) texts.push_back(h.text);
      const auto scores = encoders_.reranker(gen.reranker).score(query, texts);
      if (scores.size() != hits.size()) fail(ErrorCode::unavailable, "the reranker returned a score count unlike the passages'");
      std::vector<size_t> order(hits.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
      search::HitList sorted;
      for (size_t i : order) sorted.push_back(std::move(hits[i]));
      hits = std::move(sorted);
    } catch (const std::exception& e) {
      step["warning"] = std::string("kept the fused order: ") + e.what();
      warnings.push_back(step["warning"]);
    }
  } else {
    step["reranker"] = nullptr;  // the fused order
  }
  if (hits.size() > top_n) hits.resize(top_n);
  step["kept"] = hits.size();
  return step;
}

// A section summary that the near-duplicate collapse kept in place of the chunk it
// restates is its opening, cut at a word: the answer quotes and cites that chunk,
// whole, instead (the summary's rank and score kept).
void Engine::quote_whole_chunks(search::HitList& hits, const std::vector<std::string>& allowed_kbs) {
  for (auto& h : hits) {
    if (h.field("chunk_type") != "section_summary" || !h.duplicates.is_array()) continue;
    std::unordered_set<std::string> children;
    if (auto it = h.metadata.find("connect_to"); it != h.metadata.end() && it->is_array())
      for (const auto& e : *it)
        if (e.is_object() && e.value("relation", "") == "child") children.insert(e.value("target", ""));
    for (const auto& d : h.duplicates) {
      const std::string id = d.value("id", "");
      if (d.value("collection", "") != h.collection || !children.count(id)) continue;
      std::optional<search::ScoredHit> child;
      {
        std::shared_lock state(state_mu_);  // a re-embed swaps collections under it
        const store::Collection* coll = catalog_->find(h.collection);
        if (!coll) break;
        store::TemplateParams params;
        if (!allowed_kbs.empty()) params["kbs"] = allowed_kbs;
        const auto row = allowed_kbs.empty() ? coll->get(id) : coll->get(id, "kb_name in {kbs}", params);
        if (row) child = search::hit_from_record(*row, coll->schema(), h.collection, h.score);
      }
      if (!child) break;
      child->duplicates = json::array({{{"id", h.id}, {"collection", h.collection}, {"score", h.score}}});
      h = std::move(*child);
      break;
    }
  }
}

QueryResult Engine::query(const QueryRequest& req, const QueryEvents& events) {
  const auto& gen = cfg_.generation;
  const size_t top_n = req.top_n ? req.top_n : gen.top_n;
  if (top_n == 0 || top_n > 20) fail(ErrorCode::invalid_argument, "top_n must be in [1, 20]");
  if (req.mode != "auto" && req.mode != "extractive")
    fail(ErrorCode::invalid_argument, "mode must be auto or extractive, got '" + req.mode + "'");
  QueryResult out;
  auto emit_step = [&](const json& step) {
    out.steps.push_back(step);
    if (events.step) events.step(step);
  };

  search::RetrievalRequest sreq = req.retrieval;
  sreq.top_k = std::max(sreq.top_k, top_n);
  out.search = retrieve(sreq);  // the evidence comes after the cut, below
  const json search_steps = search_response_json(out.search, false)["steps"];  // named: a temporary's member would dangle
  for (const auto& step : search_steps) emit_step(step);
  auto& hits = out.search.hits;
  json rerank_step = rerank_passages(sreq.query, hits, top_n, out.warnings);
  quote_whole_chunks(hits, sreq.allowed_kbs);
  // The evidence of what the answer is written from (after the rerank and the cut).
  attach_evidence(sreq, out.search, hits.size());
  emit_step(rerank_step);
  if (events.sources) events.sources(out);

  // The extractive answer: used unless a model answers.
  auto extractive = [&] {
    const text::Analyzer analyzer(cfg_.analyzer);
    const auto qt = question_terms(sreq, hits, sreq.plugin_namespace != "core");
    std::vector<answer::Passage> passages;
    for (size_t i = 0; i < hits.size(); ++i)
      // Never quoted: reference lists, image tiles, compound cards (a name and a structure).
      passages.push_back({i + 1, hits[i].text,
                          hits[i].field("chunk_type") != "references" && !hits[i].is_image &&
                              hits[i].field("source_type") != "compound",
                          hits[i].field("chunk_type") == "section_summary"});
    if (out.search.metadata.value("/evidence/level"_json_pointer, std::string()) == "none") {
      answer::ExtractiveAnswer none;
      none.text = std::string(answer::kNoAnswerText);
      return none;
    }
    return answer::extract_answer(qt, passages, [&](std::string_view t) { return analyzer.terms(t); },
                                  {gen.extractive_sentences, gen.sentences_per_passage, gen.extractive_min_score});
  };
  auto cite = [&](size_t n, std::string quote) {
    const auto& h = hits[n - 1];
    Citation c;
    c.n = n;
    c.id = h.id;
    c.document_id = h.document_id();
    c.collection = h.collection;
    c.document_name = h.field("document_name");
    c.path = h.field("path");
    c.quote = std::move(quote);
    return c;
  };
  auto use_extractive = [&](json generate_step) {
    const auto ex = extractive();
    out.mode = "extractive";
    out.answer = ex.text;
    for (const auto& q : ex.quotes) {
      auto it = std::find_if(out.citations.begin(), out.citations.end(), [&](const Citation& c) { return c.n == q.passage; });
      if (it == out.citations.end()) out.citations.push_back(cite(q.passage, q.text));
      else it->quote += " " + q.text;
    }
    generate_step["mode"] = "extractive";
    generate_step["sentences"] = ex.quotes.size();
    emit_step(generate_step);
    if (events.token) {
      // Sentence by sentence, as a model's tokens would come.
      for (size_t i = 0; i < ex.quotes.size(); ++i)
        if (!events.token((i ? " " : "") + ex.quotes[i].text + " [" + std::to_string(ex.quotes[i].passage) + "]")) break;
      if (ex.quotes.empty()) events.token(ex.text);
    }
  };

  json generate_step = {{"name", "generate"}};
  if (req.mode == "extractive" || gen.base_url.empty() || hits.empty()) {
    if (hits.empty() && !gen.base_url.empty() && req.mode != "extractive") generate_step["note"] = "no passage: the model was not asked";
    use_extractive(generate_step);
    return out;
  }
  GenerationSlot slot(generations_, gen.max_concurrent);
  if (!slot.held()) {
    generate_step["warning"] = "generation: " + std::to_string(gen.max_concurrent) +
                               " answers already being written (generation.max_concurrent); extractive instead";
    out.warnings.push_back(generate_step["warning"]);
    use_extractive(generate_step);
    return out;
  }
  bool streamed_any = false;
  try {
    answer::ChatClient client(gen);
    auto messages = answer_prompt(sreq.query, hits, req.history);
    if (gen.vision) {
      // Image tiles go to the model as images, after the text (data: URIs).
      json parts = json::array({{{"type", "text"}, {"text", messages.back().content.get<std::string>()}}});
      AccessScope scope{sreq.allowed_kbs};
      for (const auto& h : hits)
        if (h.is_image)
          if (auto img = tile_image(h.id, scope))
            parts.push_back({{"type", "image_url"},
                             {"image_url", {{"url", "data:" + img->media_type + ";base64," + base64_encode(img->bytes)}}}});
      if (parts.size() > 1) messages.back().content = parts;
    }
    answer::TokenFn on_token;
    if (events.token)
      on_token = [&](std::string_view piece) {
        streamed_any = true;
        return events.token(piece);
      };
    const auto reply = client.complete(messages, on_token);
    out.mode = "generated";
    out.model = reply.model.empty() ? gen.model : reply.model;
    out.answer = reply.text;
    const auto parsed = answer::parse_citations(reply.text, hits.size());
    for (size_t n : parsed.numbers) out.citations.push_back(cite(n, opening(hits[n - 1].text, 300)));
    generate_step["mode"] = "generated";
    generate_step["model"] = out.model;
    generate_step["attempts"] = reply.attempts;
    if (!parsed.dropped.empty()) {
      std::string list;
      for (size_t n : parsed.dropped) list += (list.empty() ? "" : ", ") + std::to_string(n);
      out.warnings.push_back("the answer cites [" + list + "], which no passage has (dropped)");
      generate_step["warning"] = out.warnings.back();
    }
    if (reply.finish_reason == "length") {
      out.warnings.push_back("the answer was cut at generation.max_tokens (" + std::to_string(gen.max_tokens) + ")");
      generate_step["warning"] = out.warnings.back();
    }
    emit_step(generate_step);
  } catch (const std::exception& e) {
    spdlog::warn("{}", e.what());
    generate_step["warning"] = e.what();
    // Tokens already sent are superseded: the client restarts the answer from here.
    if (streamed_any) generate_step["restart"] = true;
    out.warnings.push_back(e.what());
    use_extractive(generate_step);
  }
  return out;
}

}  // namespace eagle::app
