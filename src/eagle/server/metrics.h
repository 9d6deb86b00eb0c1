#pragma once
// Prometheus text-format metrics of the HTTP server: requests by route, method and
// status; a latency histogram per route; and gauges sampled at scrape time (rows and
// log bytes per collection, running ingests) from a callback.
#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace eagle::server {

class Metrics {
 public:
  // Upper bounds of the latency buckets, seconds (Prometheus' default set).
  static constexpr std::array<double, 12> kBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                      0.1,   0.25,   0.5,   1,    2.5,   5};

  void observe(const std::string& route, const std::string& method, int status, double seconds);
  // The exposition: counters and histograms, then `gauges` (already formatted lines).
  std::string render(const std::string& gauges) const;

 private:
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> buckets{};
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
};

// A label value escaped for the text format (backslash, quote, newline).
std::string prom_label(const std::string& v);

}  // namespace eagle::server
