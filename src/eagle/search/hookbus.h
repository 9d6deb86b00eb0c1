#pragma once
// HookBus: the seed's hook points and their modes.
//   FIRST     - subscribers in priority order; the first non-empty result wins.
//   ALL       - every subscriber runs; one that throws is logged, audited and skipped.
//   TRANSFORM - the value is chained through every subscriber.
// Subscribers register with a priority (lower runs first) and a plugin namespace and
// see only requests of their namespace ("*" sees all). Domain logic (biomed) enters
// the engine only through these subscriptions.
#include <any>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eagle/search/telemetry.h"
#include "eagle/search/types.h"

namespace eagle::search {

enum class HookPoint {
  // query
  QUERY_ASSEMBLE, CLASSIFY_QUERY, QUERY_DENSE_EXPAND, RERANK, RETRIEVE_SUPPLEMENT, RRF_POST_MERGE,
  RERANK_MERGED, RETRIEVE_VISUAL_FILTER,
  // ingest
  PARSE, CHUNK, CLASSIFY_CHUNK, EMBED_TEXT, INGEST_ROUTE_SELECTORS, UPSERT_VECTORS,
  // images: an ingest's image tiles, and a query's image
  CLASSIFY_VISUAL, EMBED_VISUAL,
};
enum class HookMode { first, all, transform };
HookMode hook_mode(HookPoint p);
const char* hook_name(HookPoint p);

// Per-request state every hook of one request shares (e.g. the retrieval intent that
// QUERY_DENSE_EXPAND stashes once and later hooks read).
struct HookContext {
  std::string plugin_namespace = "core";
  const RetrievalRequest* request = nullptr;
  std::map<std::string, std::any> extra;
  Telemetry* telemetry = nullptr;  // audit events go here when set
  // The request's scope as a filter expression with bound parameters (kb_name,
  // scope_filter, facets, filter, allowed_kbs): any subscriber that reads rows
  // (the biomed supplement) must AND it into its own filter.
  std::string scope_filter;
  std::map<std::string, nlohmann::json> scope_params;
  // The rows whose BM25 statistics a score may depend on, as a filter expression over
  // scope_params (tenancy.isolate_statistics: a scoped token's own knowledge bases);
  // empty: the collection's. Any subscriber that weighs terms passes it on.
  std::string statistics_filter;
  // QUERY_ASSEMBLE's suffixes, in subscriber order. The query itself stays raw: the
  // lexical leg and every hook see it; a plan's dense leg embeds the assembled query
  // unless QUERY_DENSE_EXPAND gives its own (biomed: the suffix for pubmedbert only).
  std::vector<std::string> query_suffixes;
  std::string assembled_query(const std::string& raw) const {
    std::string out = raw;
    for (const auto& s : query_suffixes) out += " " + s;
    return out;
  }
  double encode_ms = 0;  // time in the encoder and in index searches (overhead accounting)
  double search_ms = 0;
  template <typename T>
  const T* get(const std::string& key) const {
    auto it = extra.find(key);
    return it == extra.end() ? nullptr : std::any_cast<T>(&it->second);
  }
};

// The signature of each hook point's subscribers.
template <HookPoint P> struct HookSig;
// QUERY_ASSEMBLE: a suffix appended to the query (ALL; nullopt or "" adds nothing).
template <> struct HookSig<HookPoint::QUERY_ASSEMBLE> { using Fn = std::function<std::optional<std::string>(HookContext&, const std::string& query)>; };
template <> struct HookSig<HookPoint::CLASSIFY_QUERY> { using Fn = std::function<std::optional<RouteDecision>(HookContext&, const RetrievalRequest&)>; };
template <> struct HookSig<HookPoint::QUERY_DENSE_EXPAND> { using Fn = std::function<std::optional<ExpandedQuery>(HookContext&, const std::string& query, const std::optional<std::string>& encoder)>; };
template <> struct HookSig<HookPoint::RERANK> { using Fn = std::function<std::optional<HitList>(HookContext&, const std::string& query, const CollectionQueryPlan&, const HitList&)>; };
template <> struct HookSig<HookPoint::RETRIEVE_SUPPLEMENT> { using Fn = std::function<std::optional<HitList>(HookContext&, const std::string& query)>; };
template <> struct HookSig<HookPoint::RRF_POST_MERGE> { using Fn = std::function<std::optional<HitList>(HookContext&, const std::string& query, const HitList& merged, const HitList& supplement)>; };
template <> struct HookSig<HookPoint::RERANK_MERGED> { using Fn = std::function<std::optional<HitList>(HookContext&, const std::string& query, const HitList& merged)>; };
template <> struct HookSig<HookPoint::RETRIEVE_VISUAL_FILTER> { using Fn = std::function<std::optional<HitList>(HookContext&, const std::string& query, const HitList& hits)>; };
template <> struct HookSig<HookPoint::PARSE> { using Fn = std::function<std::optional<nlohmann::json>(HookContext&, const nlohmann::json& doc)>; };
template <> struct HookSig<HookPoint::CHUNK> { using Fn = std::function<std::optional<nlohmann::json>(HookContext&, const nlohmann::json& chunks)>; };
template <> struct HookSig<HookPoint::CLASSIFY_CHUNK> { using Fn = std::function<std::optional<nlohmann::json>(HookContext&, const nlohmann::json& chunk)>; };
template <> struct HookSig<HookPoint::EMBED_TEXT> { using Fn = std::function<std::optional<std::vector<std::vector<float>>>(HookContext&, const std::vector<std::string>& texts, const std::string& encoder)>; };
template <> struct HookSig<HookPoint::INGEST_ROUTE_SELECTORS> { using Fn = std::function<std::optional<nlohmann::json>(HookContext&, const nlohmann::json& doc)>; };
// CLASSIFY_VISUAL (FIRST, ingest): the collection for an image tile (its row, text and
// ImageNode fields, without vector): {"collection": name, "encoder": label,
// "modality": "radiology" | "pathology" | ... (optional)}; nullopt leaves it to the
// visual collection (seed: BiomedImageClassifier).
template <> struct HookSig<HookPoint::CLASSIFY_VISUAL> { using Fn = std::function<std::optional<nlohmann::json>(HookContext&, const nlohmann::json& tile)>; };
// EMBED_VISUAL (FIRST, ingest and query): vectors for a batch of images (PNG or JPEG
// bytes) in place of the encoder `encoder`; count and dimension are checked.
template <> struct HookSig<HookPoint::EMBED_VISUAL> { using Fn = std::function<std::optional<std::vector<std::vector<float>>>(HookContext&, const std::vector<std::string_view>& images, const std::string& encoder)>; };
template <> struct HookSig<HookPoint::UPSERT_VECTORS> { using Fn = std::function<std::optional<nlohmann::json>(HookContext&, const nlohmann::json& rows)>; };

class HookBus {
 public:
  template <HookPoint P>
  void subscribe(std::string plugin_namespace, int priority, typename HookSig<P>::Fn fn, std::string name = "") {
    auto& subs = subs_[P];
    subs.push_back({std::move(plugin_namespace), priority, std::move(name), std::any(std::move(fn)), seq_++});
    std::stable_sort(subs.begin(), subs.end(), [](const Sub& a, const Sub& b) {
      return a.priority != b.priority ? a.priority < b.priority : a.seq < b.seq;
    });
  }

  bool has_subscribers(HookPoint p, const std::string& ns) const;

  // FIRST: the first non-empty result in priority order. A subscriber that throws is
  // audited (hook_failed) and skipped, as if it had abstained: a broken plugin never
  // fails the request or the ingest.
  template <HookPoint P, typename... Args>
  auto first(HookContext& ctx, Args&&... args) const
      -> decltype(std::declval<typename HookSig<P>::Fn>()(ctx, args...)) {
    static_assert(P != HookPoint::QUERY_ASSEMBLE && P != HookPoint::RETRIEVE_SUPPLEMENT);
    for (const auto& s : subscribers(P, ctx.plugin_namespace)) {
      const auto& fn = std::any_cast<const typename HookSig<P>::Fn&>(s->fn);
      try {
        auto r = fn(ctx, args...);
        if (r) return r;
      } catch (const std::exception& e) {
        rethrow_data_loss(e);
        audit_failure(ctx, P, *s, e.what());
      }
    }
    return std::nullopt;
  }

  // ALL: every subscriber; failures are audited (hook_failed) and skipped.
  template <HookPoint P, typename... Args>
  auto all(HookContext& ctx, Args&&... args) const {
    using R = typename decltype(std::declval<typename HookSig<P>::Fn>()(ctx, args...))::value_type;
    std::vector<R> out;
    for (const auto& s : subscribers(P, ctx.plugin_namespace)) {
      const auto& fn = std::any_cast<const typename HookSig<P>::Fn&>(s->fn);
      try {
        if (auto r = fn(ctx, args...)) out.push_back(std::move(*r));
      } catch (const std::exception& e) {
        rethrow_data_loss(e);
        audit_failure(ctx, P, *s, e.what());
      }
    }
    return out;
  }

  // TRANSFORM: value chained through every subscriber (an empty result keeps it).
  template <HookPoint P, typename V>
  V transform(HookContext& ctx, V value) const {
    for (const auto& s : subscribers(P, ctx.plugin_namespace)) {
      const auto& fn = std::any_cast<const typename HookSig<P>::Fn&>(s->fn);
      if (auto r = fn(ctx, value)) value = std::move(*r);
    }
    return value;
  }

 private:
  struct Sub {
    std::string ns;
    int priority;
    std::string name;
    std::any fn;
    uint64_t seq;
  };
  std::vector<const Sub*> subscribers(HookPoint p, const std::string& ns) const;
  static void audit_failure(HookContext& ctx, HookPoint p, const Sub& s, const std::string& what);
  // Stored data found corrupt is not a subscriber to skip: answering without it would
  // hide the damage (the caller sees data_loss, as a plan's recall does).
  static void rethrow_data_loss(const std::exception& e);
  std::map<HookPoint, std::vector<Sub>> subs_;
  uint64_t seq_ = 0;
};

}  // namespace eagle::search
