#pragma once
// One error model for the whole engine (ARCHITECTURE.md "One error model"):
// every error that ends a request is an eagle::Error with a code that maps to an
// HTTP status / MCP error and a message that names what went wrong and where.
#include <stdexcept>
#include <string>
#include <string_view>

namespace eagle {

enum class ErrorCode { invalid_argument, not_found, conflict, unavailable, internal };

std::string_view error_code_name(ErrorCode code);
int http_status(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

[[noreturn]] inline void fail(ErrorCode code, const std::string& message) {
  throw Error(code, message);
}

}  // namespace eagle
