#pragma once
// A progress line on stderr for long work: silent for the first two seconds (short
// jobs stay quiet), then at most one update a second, overwritten in place on a
// terminal and one line per update otherwise.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace eagle::app {

class Progress {
 public:
  explicit Progress(std::string label)
      : label_(std::move(label)), start_(Clock::now()), last_(start_), tty_(isatty(2)) {}

  void update(uint64_t done, uint64_t total, const char* unit) {
    auto now = Clock::now();
    if (now - start_ < std::chrono::seconds(2) || now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    shown_ = true;
    double secs = std::chrono::duration<double>(now - start_).count();
    if (total)
      std::fprintf(stderr, "%s%s: %llu/%llu %s (%.0f%%) %.1f s%s", tty_ ? "\r" : "", label_.c_str(),
                   static_cast<unsigned long long>(done), static_cast<unsigned long long>(total), unit,
                   100.0 * static_cast<double>(done) / static_cast<double>(total), secs, tty_ ? "" : "\n");
    else
      std::fprintf(stderr, "%s%s: %llu %s %.1f s%s", tty_ ? "\r" : "", label_.c_str(),
                   static_cast<unsigned long long>(done), unit, secs, tty_ ? "" : "\n");
    std::fflush(stderr);
  }
  void finish() {
    if (shown_ && tty_) std::fprintf(stderr, "\n");
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  Clock::time_point start_, last_;
  bool tty_;
  bool shown_ = false;
};

}  // namespace eagle::app
