#include "eagle/search/hookbus.h"

#include <spdlog/spdlog.h>

#include "eagle/core/error.h"

namespace eagle::search {

HookMode hook_mode(HookPoint p) {
  switch (p) {
    case HookPoint::QUERY_ASSEMBLE:
    case HookPoint::RETRIEVE_SUPPLEMENT:
    case HookPoint::CLASSIFY_CHUNK:
      return HookMode::all;
    case HookPoint::PARSE:
    case HookPoint::CHUNK:
    case HookPoint::UPSERT_VECTORS:
      return HookMode::transform;
    default:
      return HookMode::first;
  }
}

const char* hook_name(HookPoint p) {
  switch (p) {
    case HookPoint::QUERY_ASSEMBLE: return "QUERY_ASSEMBLE";
    case HookPoint::CLASSIFY_QUERY: return "CLASSIFY_QUERY";
    case HookPoint::QUERY_DENSE_EXPAND: return "QUERY_DENSE_EXPAND";
    case HookPoint::RERANK: return "RERANK";
    case HookPoint::RETRIEVE_SUPPLEMENT: return "RETRIEVE_SUPPLEMENT";
    case HookPoint::RRF_POST_MERGE: return "RRF_POST_MERGE";
    case HookPoint::RERANK_MERGED: return "RERANK_MERGED";
    case HookPoint::RETRIEVE_VISUAL_FILTER: return "RETRIEVE_VISUAL_FILTER";
    case HookPoint::PARSE: return "PARSE";
    case HookPoint::CHUNK: return "CHUNK";
    case HookPoint::CLASSIFY_CHUNK: return "CLASSIFY_CHUNK";
    case HookPoint::EMBED_TEXT: return "EMBED_TEXT";
    case HookPoint::INGEST_ROUTE_SELECTORS: return "INGEST_ROUTE_SELECTORS";
    case HookPoint::UPSERT_VECTORS: return "UPSERT_VECTORS";
    case HookPoint::CLASSIFY_VISUAL: return "CLASSIFY_VISUAL";
    case HookPoint::EMBED_VISUAL: return "EMBED_VISUAL";
  }
  return "?";
}

bool HookBus::has_subscribers(HookPoint p, const std::string& ns) const { return !subscribers(p, ns).empty(); }

std::vector<const HookBus::Sub*> HookBus::subscribers(HookPoint p, const std::string& ns) const {
  std::vector<const Sub*> out;
  auto it = subs_.find(p);
  if (it == subs_.end()) return out;
  for (const auto& s : it->second)
    if (s.ns == "*" || s.ns == ns) out.push_back(&s);
  return out;
}

void HookBus::audit_failure(HookContext& ctx, HookPoint p, const Sub& s, const std::string& what) {
  spdlog::warn("hook {} subscriber '{}' ({}) failed: {}", hook_name(p), s.name, s.ns, what);
  if (ctx.telemetry)
    ctx.telemetry->audit("hook_failed", {{"hook", hook_name(p)}, {"subscriber", s.name}, {"namespace", s.ns},
                                         {"error", what}});
}

void HookBus::rethrow_data_loss(const std::exception& e) {
  if (const auto* err = dynamic_cast<const Error*>(&e); err && err->code() == ErrorCode::data_loss) throw *err;
}

}  // namespace eagle::search
