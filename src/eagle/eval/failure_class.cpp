#include "eagle/eval/failure_class.h"

#include <algorithm>

namespace eagle::eval {

std::string_view failure_class_name(FailureClass c) {
  switch (c) {
    case FailureClass::ok: return "ok";
    case FailureClass::ranking_gap: return "ranking_gap";
    case FailureClass::query_route_gap: return "query_route_gap";
    case FailureClass::gold_corpus_gap: return "gold_corpus_gap";
  }
  return "ok";
}

FailureClass classify_failure(const FailureEvidence& e, size_t ok_depth) {
  const size_t top = std::min(ok_depth, e.ranked.size());
  for (size_t i = 0; i < top; ++i)
    if (std::find(e.relevant.begin(), e.relevant.end(), e.ranked[i]) != e.relevant.end()) return FailureClass::ok;
  bool stored = false;
  for (const auto& id : e.relevant) {
    for (const auto& c : e.holders(id)) {
      if (e.routed.count(c)) return FailureClass::ranking_gap;
      stored = true;
    }
  }
  return stored ? FailureClass::query_route_gap : FailureClass::gold_corpus_gap;
}

}  // namespace eagle::eval
