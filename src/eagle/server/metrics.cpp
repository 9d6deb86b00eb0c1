#include "eagle/server/metrics.h"

#include <sstream>

namespace eagle::server {

std::string prom_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void Metrics::observe(const std::string& route, const std::string& method, int status, double seconds) {
  std::lock_guard lock(mu_);
  ++requests_[{route, method, status}];
  auto& h = latency_[route];
  for (size_t i = 0; i < kBuckets.size(); ++i)
    if (seconds <= kBuckets[i]) ++h.buckets[i];
  ++h.count;
  h.sum += seconds;
}

std::string Metrics::render(const std::string& gauges) const {
  std::ostringstream o;
  o.precision(9);
  std::lock_guard lock(mu_);
  o << "# HELP eagle_http_requests_total HTTP requests by route template, method and status.\n"
       "# TYPE eagle_http_requests_total counter\n";
  for (const auto& [k, v] : requests_)
    o << "eagle_http_requests_total{route=\"" << prom_label(std::get<0>(k)) << "\",method=\""
      << prom_label(std::get<1>(k)) << "\",status=\"" << std::get<2>(k) << "\"} " << v << "\n";
  o << "# HELP eagle_http_request_duration_seconds Time from request parsed to response ready, by route.\n"
       "# TYPE eagle_http_request_duration_seconds histogram\n";
  for (const auto& [route, h] : latency_) {
    const std::string r = prom_label(route);
    for (size_t i = 0; i < kBuckets.size(); ++i)
      o << "eagle_http_request_duration_seconds_bucket{route=\"" << r << "\",le=\"" << kBuckets[i] << "\"} "
        << h.buckets[i] << "\n";
    o << "eagle_http_request_duration_seconds_bucket{route=\"" << r << "\",le=\"+Inf\"} " << h.count << "\n";
    o << "eagle_http_request_duration_seconds_sum{route=\"" << r << "\"} " << h.sum << "\n";
    o << "eagle_http_request_duration_seconds_count{route=\"" << r << "\"} " << h.count << "\n";
  }
  o << gauges;
  return o.str();
}

}  // namespace eagle::server
