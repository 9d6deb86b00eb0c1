#include "eagle/search/fusion.h"

#include <algorithm>
#include <initializer_list>
#include <cctype>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace eagle::search {
namespace {

std::string dedup_key(const ScoredHit& h) {
  if (!h.id.empty()) return "id:" + h.id;
  if (auto s = h.source_chunk_id(); !s.empty()) return "sc:" + s;
  return "dp:" + h.document_id() + "\x1f" + h.path();
}

// G32 key (cross-collection dedupe): the same chunk indexed in two collections shares
// these, not its node id.
std::string cross_key(const ScoredHit& h) {
  // An image tile names the text chunk of its caption or page in source_chunk_id: a
  // link, not the same chunk (both are answers).
  if (h.is_image) return "";
  if (auto s = h.source_chunk_id(); !s.empty()) return "sc:" + s;
  // (document_id, path) identifies a chunk only when both are known: two chunks of
  // one document without paths are not the same chunk.
  if (!h.document_id().empty() && !h.path().empty()) return "dp:" + h.document_id() + "\x1f" + h.path();
  return "";  // nothing to match on: never collapsed
}

std::string lower(const std::string& s) {
  std::string o = s;
  for (auto& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

}  // namespace

void sort_hits(HitList& hits) {
  std::stable_sort(hits.begin(), hits.end(), [](const ScoredHit& a, const ScoredHit& b) {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  });
}

HitList merge_rrf(std::vector<HitList> lists, int k, bool explain) {
  std::vector<HitList*> non_empty;
  for (auto& l : lists)
    if (!l.empty()) non_empty.push_back(&l);  // G8: empty lists contribute no phantom ranks
  if (non_empty.empty()) return {};
  if (non_empty.size() == 1) return std::move(*non_empty[0]);  // single list: pass-through
  std::unordered_map<std::string, size_t> pos;
  HitList out;
  for (size_t li = 0; li < non_empty.size(); ++li) {
    auto& l = *non_empty[li];
    for (size_t r = 0; r < l.size(); ++r) {
      const double contrib = 1.0 / (k + static_cast<double>(r + 1));
      const std::string leg = explain ? l[r].collection + "#" + std::to_string(li) : std::string();
      auto [it, fresh] = pos.emplace(dedup_key(l[r]), out.size());
      if (fresh) {
        out.push_back(std::move(l[r]));
        out.back().score = 0;
      } else if (explain) {
        // Keep the legs the hit had in the other list too.
        for (auto& [name, v] : l[r].explain.legs.items()) out[it->second].explain.legs[name] = v;
      }
      out[it->second].score += contrib;
      if (explain) out[it->second].explain.legs["rrf"][leg] = {{"rank", r + 1}, {"contribution", contrib}};
    }
  }
  sort_hits(out);
  return out;
}

HitList dedupe_cross_collection(HitList merged, int succeeded_plans, Telemetry* telemetry) {
  if (succeeded_plans <= 1) return merged;
  std::unordered_set<std::string> seen;
  HitList out;
  size_t removed = 0;
  for (auto& h : merged) {
    const auto key = cross_key(h);
    if (!key.empty() && !seen.insert(key).second) {
      ++removed;  // a better-ranked copy is already kept
      continue;
    }
    out.push_back(std::move(h));
  }
  if (removed && telemetry) telemetry->audit("rrf_dedupe", {{"removed", removed}, {"kept", out.size()}});
  return out;
}

HitList inject_supplement_candidates(HitList merged, const HitList& supplement, size_t min_new, double boost) {
  std::unordered_set<std::string> present;
  for (const auto& h : merged) present.insert(dedup_key(h));
  HitList injected;
  for (const auto& s : supplement) {
    if (injected.size() >= min_new) break;
    if (present.count(dedup_key(s))) continue;
    ScoredHit h = s;
    h.score += boost;
    h.explain.note("injected", {{"boost", boost}, {"supplement_score", s.score}});
    present.insert(dedup_key(h));
    injected.push_back(std::move(h));
  }
  injected.insert(injected.end(), std::make_move_iterator(merged.begin()), std::make_move_iterator(merged.end()));
  return injected;
}

std::vector<std::string> sparse_terms_of(const std::string& query, const std::vector<std::string>& extra) {
  std::vector<std::string> terms;
  std::set<std::string> seen;
  auto add = [&](std::string t) {
    if (!t.empty() && seen.insert(t).second) terms.push_back(std::move(t));
  };
  const std::string q = lower(query);
  size_t i = 0;
  while (i < q.size()) {
    if (!std::isalnum(static_cast<unsigned char>(q[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < q.size() && (std::isalnum(static_cast<unsigned char>(q[j])) ||
                            (q[j] == '-' && j + 1 < q.size() && std::isalnum(static_cast<unsigned char>(q[j + 1])))))
      ++j;
    add(q.substr(i, j - i));
    i = j;
  }
  for (const auto& e : extra) add(lower(e));
  return terms;
}

double sparse_score(const std::string& query, const std::string& text, const std::vector<std::string>& extra) {
  const auto terms = sparse_terms_of(query, extra);
  if (terms.empty()) return 0.0;
  const std::string t = lower(text);
  size_t hits = 0;
  for (const auto& term : terms) hits += t.find(term) != std::string::npos;
  return static_cast<double>(hits) / static_cast<double>(terms.size());
}

HitList alpha_hybrid(HitList dense, const std::string& query, const std::vector<std::string>& extra, double alpha) {
  for (auto& h : dense) {
    const double d = std::clamp((h.score + 1.0) / 2.0, 0.0, 1.0);  // cosine -> [0, 1]
    const double s = sparse_score(query, h.text, extra);
    h.explain.note("alpha_hybrid", {{"dense01", d}, {"sparse", s}, {"alpha", alpha}});
    h.score = alpha * d + (1.0 - alpha) * s;
  }
  sort_hits(dense);
  return dense;
}

HitList fuse_hybrid(HitList dense, HitList lexical, const HybridOptions& o, bool explain) {
  if (dense.empty()) return lexical;
  if (lexical.empty()) return dense;
  if (o.fusion == HybridFusion::rrf) {
    std::vector<HitList> both;
    both.push_back(std::move(dense));
    both.push_back(std::move(lexical));
    return merge_rrf(std::move(both), o.rrf_k, explain);
  }
  auto minmax = [](const HitList& l) {
    double lo = l.front().score, hi = l.front().score;
    for (const auto& h : l) lo = std::min(lo, h.score), hi = std::max(hi, h.score);
    return std::pair{lo, hi};
  };
  auto [dlo, dhi] = minmax(dense);
  auto [llo, lhi] = minmax(lexical);
  auto norm = [](double v, double lo, double hi) { return hi > lo ? (v - lo) / (hi - lo) : 1.0; };
  // Keyed by views of the ids inside `out`: `out` is reserved up front, so its
  // elements never move and the views stay valid (no key strings are built).
  HitList out;
  out.reserve(dense.size() + lexical.size());
  std::unordered_map<std::string_view, size_t> pos;
  pos.reserve(out.capacity());
  std::vector<std::string> fallback_keys;  // hits without an id (rare)
  fallback_keys.reserve(out.capacity());
  auto add = [&](HitList& l, double w, double lo, double hi) {
    for (auto& h : l) {
      const double contrib = w * norm(h.score, lo, hi);
      std::string fallback;
      std::string_view probe = h.id;
      if (h.id.empty()) probe = fallback = dedup_key(h);
      auto it = pos.find(probe);
      if (it == pos.end()) {
        out.push_back(std::move(h));  // each list is consumed: move, do not copy
        out.back().score = 0;
        std::string_view key = out.back().id;
        if (key.empty()) key = fallback_keys.emplace_back(std::move(fallback));
        it = pos.emplace(key, out.size() - 1).first;
      } else if (explain) {
        for (auto& [leg, v] : h.explain.legs.items()) out[it->second].explain.legs[leg] = v;
      }
      out[it->second].score += contrib;
    }
  };
  double w = o.dense_weight;
  if (o.adaptive) {
    std::unordered_set<std::string> top;
    const size_t depth = std::min({o.agreement_depth, dense.size(), lexical.size()});
    for (size_t i = 0; i < depth; ++i) top.insert(dedup_key(lexical[i]));
    size_t common = 0;
    for (size_t i = 0; i < depth; ++i) common += top.count(dedup_key(dense[i]));
    const double agreement = depth ? static_cast<double>(common) / depth : 0.0;
    w = agreement < o.agreement_min ? 0.0 : w * agreement;
  }
  add(dense, w, dlo, dhi);
  add(lexical, 1.0 - w, llo, lhi);
  sort_hits(out);
  return out;
}

namespace {

// Word 3-shingles of a text, hashed and sorted: ASCII letters and digits (and every
// byte >= 0x80) make words, case-folded; a text of fewer than 3 words is one shingle.
std::vector<uint64_t> shingles(const std::string& text) {
  std::vector<uint64_t> words;
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the folded word
  bool in_word = false;
  for (unsigned char c : text) {
    const bool word_byte = std::isalnum(c) || c >= 0x80;
    if (word_byte) {
      h = (h ^ static_cast<uint64_t>(std::tolower(c))) * 1099511628211ull;
      in_word = true;
    } else if (in_word) {
      words.push_back(h);
      h = 1469598103934665603ull;
      in_word = false;
    }
  }
  if (in_word) words.push_back(h);
  std::vector<uint64_t> out;
  if (words.size() < 3) {
    uint64_t all = 0;
    for (auto w : words) all = all * 31 + w;
    if (!words.empty()) out.push_back(all);
  } else {
    for (size_t i = 0; i + 2 < words.size(); ++i) out.push_back(words[i] * 3 + words[i + 1] * 7 + words[i + 2] * 11);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Shingles two sorted, de-duplicated sets share.
size_t common_count(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  size_t common = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] == b[j]) ++common, ++i, ++j;
    else if (a[i] < b[j]) ++i;
    else ++j;
  }
  return common;
}

// `summary` is a section summary and `chunk` a chunk of the same document under its
// path (the precondition of `restates`; cheap, so it is checked before any shingle).
bool summary_over(const ScoredHit& summary, const ScoredHit& chunk) {
  if (summary.field("type") != "section_summary" || chunk.field("type") == "section_summary") return false;
  const std::string doc = summary.document_id(), path = summary.path(), sub = chunk.path();
  return !doc.empty() && doc == chunk.document_id() && !path.empty() && sub.compare(0, path.size(), path) == 0 &&
         (sub.size() == path.size() || sub[path.size()] == '/');
}

// The section summary `summary` restates `chunk`: the chunk lies under the summary's
// path in the same document, and the summary's text is almost all inside the chunk,
// or the chunk's almost all inside the summary (`common` shingles shared). A summary
// of a section of several chunks does not restate the ones its overview does not
// hold, which stay.
bool restates(const ScoredHit& summary, size_t summary_shingles, const ScoredHit& chunk, size_t chunk_shingles,
              size_t common, double threshold) {
  if (!summary_over(summary, chunk) || summary_shingles == 0 || chunk_shingles == 0) return false;
  return static_cast<double>(common) / static_cast<double>(summary_shingles) >= threshold ||
         static_cast<double>(common) / static_cast<double>(chunk_shingles) >= threshold;
}

double jaccard_of(size_t a, size_t b, size_t common) {
  if (a == 0 || b == 0) return 0;
  return static_cast<double>(common) / static_cast<double>(a + b - common);
}

}  // namespace

HitList collapse_near_duplicates(HitList hits, size_t keep, double threshold, Telemetry* telemetry) {
  HitList out;
  out.reserve(hits.size());
  std::vector<std::vector<uint64_t>> kept_shingles;
  // Shingle -> kept hits holding it. With threshold > 0 a pair that shares no shingle
  // never folds (Jaccard and containment are 0), so only the kept hits the new one
  // shares shingles with are compared, from the shared counts: exact, and linear in
  // the shingles instead of quadratic in the hits (a 1,000-hit run compared 500,000
  // pairs). Threshold <= 0 folds every pair and compares them all.
  std::unordered_map<uint64_t, std::vector<uint32_t>> holders;
  std::vector<uint32_t> common;  // per kept hit, shingles shared with the current one
  std::vector<uint32_t> touched;
  size_t folded = 0, i = 0;
  for (; i < hits.size() && out.size() < keep; ++i) {
    auto& h = hits[i];
    // Image tiles are told apart by their pixels, not their text (pages without text
    // carry the document's title; a figure's text is its caption chunk's): never folded.
    auto sh = h.is_image ? std::vector<uint64_t>{} : shingles(h.text);
    size_t into = out.size();
    if (!h.is_image) {
      auto folds_into = [&](size_t k, size_t shared) {
        if (out[k].is_image) return false;
        const size_t a = kept_shingles[k].size(), b = sh.size();
        return jaccard_of(a, b, shared) >= threshold || restates(out[k], a, h, b, shared, threshold) ||
               restates(h, b, out[k], a, shared, threshold);
      };
      if (threshold <= 0) {
        for (size_t k = 0; k < out.size() && into == out.size(); ++k)
          if (folds_into(k, common_count(kept_shingles[k], sh))) into = k;
      } else {
        common.resize(out.size(), 0);
        touched.clear();
        for (uint64_t s : sh) {
          auto it = holders.find(s);
          if (it == holders.end()) continue;
          for (uint32_t k : it->second)
            if (common[k]++ == 0) touched.push_back(k);
        }
        std::sort(touched.begin(), touched.end());  // the earliest kept hit wins, as before
        for (uint32_t k : touched) {
          if (into == out.size() && folds_into(k, common[k])) into = k;
          common[k] = 0;
        }
      }
    }
    if (into == out.size()) {
      for (uint64_t s : sh) holders[s].push_back(static_cast<uint32_t>(out.size()));
      out.push_back(std::move(h));
      kept_shingles.push_back(std::move(sh));
      continue;
    }
    auto& kept = out[into];
    if (!kept.duplicates.is_array()) kept.duplicates = nlohmann::json::array();
    kept.duplicates.push_back({{"id", h.id}, {"collection", h.collection}, {"score", h.score}});
    ++folded;
  }
  for (; i < hits.size(); ++i) out.push_back(std::move(hits[i]));
  if (folded && telemetry) telemetry->audit("near_duplicates", {{"folded", folded}});
  return out;
}

}  // namespace eagle::search
