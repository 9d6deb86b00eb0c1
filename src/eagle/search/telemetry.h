#pragma once
// Per-query telemetry: JSONL events per stage (route, recall per plan with counts and
// latency, fusion, rerank decision, total latency) and audit events with the seed's
// categories (rrf_dedupe, rerank_t2_domain|general|passthrough, plan_failed,
// hook_failed, scope_capped). Events go to a sink (a JSONL file, or memory for tests).
#include <chrono>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace eagle::search {

class TelemetrySink {
 public:
  virtual ~TelemetrySink() = default;
  virtual void write(const nlohmann::json& event) = 0;
};

class JsonlFileSink : public TelemetrySink {
 public:
  explicit JsonlFileSink(const std::string& path);
  void write(const nlohmann::json& event) override;

 private:
  std::mutex mu_;
  std::ofstream out_;
};

class MemorySink : public TelemetrySink {
 public:
  void write(const nlohmann::json& event) override {
    std::lock_guard l(mu_);
    events.push_back(event);
  }
  std::vector<nlohmann::json> events;

 private:
  std::mutex mu_;
};

// One request's telemetry: stamps every event with the query id and elapsed time.
class Telemetry {
 public:
  Telemetry(std::shared_ptr<TelemetrySink> sink, std::string query_id);
  void event(const std::string& stage, nlohmann::json fields = nlohmann::json::object());
  void audit(const std::string& category, nlohmann::json fields = nlohmann::json::object());
  double elapsed_ms() const;
  // False without a sink: callers skip building event payloads nobody reads.
  bool enabled() const { return sink_ != nullptr; }
  const std::vector<nlohmann::json>& audits() const { return audits_; }

 private:
  std::shared_ptr<TelemetrySink> sink_;
  std::string query_id_;
  std::chrono::steady_clock::time_point start_;
  std::vector<nlohmann::json> audits_;
};

}  // namespace eagle::search
