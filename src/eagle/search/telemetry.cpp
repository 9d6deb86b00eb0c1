#include "eagle/search/telemetry.h"

#include "eagle/core/error.h"

namespace eagle::search {

JsonlFileSink::JsonlFileSink(const std::string& path) : out_(path, std::ios::app) {
  if (!out_) fail(ErrorCode::unavailable, "cannot open telemetry sink " + path);
}

void JsonlFileSink::write(const nlohmann::json& event) {
  std::lock_guard l(mu_);
  out_ << event.dump() << '\n';
  out_.flush();
}

Telemetry::Telemetry(std::shared_ptr<TelemetrySink> sink, std::string query_id)
    : sink_(std::move(sink)), query_id_(std::move(query_id)), start_(std::chrono::steady_clock::now()) {}

double Telemetry::elapsed_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
}

void Telemetry::event(const std::string& stage, nlohmann::json fields) {
  if (!sink_) return;
  fields["event"] = stage;
  fields["query_id"] = query_id_;
  fields["t_ms"] = elapsed_ms();
  if (sink_) sink_->write(fields);
}

void Telemetry::audit(const std::string& category, nlohmann::json fields) {
  fields["audit"] = category;
  audits_.push_back(fields);
  event("audit", std::move(fields));
}

}  // namespace eagle::search
