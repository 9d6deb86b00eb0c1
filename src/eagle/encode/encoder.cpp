#include "eagle/encode/encoder.h"

#include "eagle/core/error.h"

namespace eagle::encode {

void EncoderRegistry::add(std::unique_ptr<Encoder> e) {
  auto label = e->info().label;
  if (label.empty()) fail(ErrorCode::invalid_argument, "an encoder needs a label");
  if (has_encoder(label)) fail(ErrorCode::conflict, "encoder label '" + label + "' is registered twice");
  encoders_.emplace(label, std::move(e));
}

void EncoderRegistry::add(std::unique_ptr<Reranker> r) {
  auto label = r->label();
  if (label.empty()) fail(ErrorCode::invalid_argument, "a reranker needs a label");
  if (has_reranker(label)) fail(ErrorCode::conflict, "reranker label '" + label + "' is registered twice");
  rerankers_.emplace(label, std::move(r));
}

bool EncoderRegistry::has_encoder(std::string_view l) const { return encoders_.find(l) != encoders_.end(); }
bool EncoderRegistry::has_reranker(std::string_view l) const { return rerankers_.find(l) != rerankers_.end(); }

std::vector<std::string> EncoderRegistry::labels() const {
  std::vector<std::string> out;
  for (const auto& [l, e] : encoders_) out.push_back(l);
  for (const auto& [l, r] : rerankers_) out.push_back(l);
  return out;
}

namespace {
std::string known(const EncoderRegistry& r) {
  std::string s;
  for (const auto& l : r.labels()) s += (s.empty() ? "" : ", ") + l;
  return s.empty() ? "(none)" : s;
}
}  // namespace

Encoder& EncoderRegistry::encoder(std::string_view label) const {
  auto it = encoders_.find(label);
  if (it == encoders_.end())
    fail(ErrorCode::not_found, "no encoder for label '" + std::string(label) + "'; configured: " + known(*this));
  return *it->second;
}

Reranker& EncoderRegistry::reranker(std::string_view label) const {
  auto it = rerankers_.find(label);
  if (it == rerankers_.end())
    fail(ErrorCode::not_found, "no reranker for label '" + std::string(label) + "'; configured: " + known(*this));
  return *it->second;
}

void EncoderRegistry::require(const std::vector<std::string>& labels) const {
  std::string missing;
  for (const auto& l : labels)
    if (!has_encoder(l) && !has_reranker(l)) missing += (missing.empty() ? "" : ", ") + l;
  if (!missing.empty())
    fail(ErrorCode::invalid_argument, "configuration refers to encoder labels with no implementation: " + missing +
                                          " (configured: " + known(*this) + ")");
}

}  // namespace eagle::encode
