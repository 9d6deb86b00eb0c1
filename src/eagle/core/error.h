#pragma once
// One error model for the whole engine (ARCHITECTURE.md "One error model"):
// every error that ends a request is an eagle::Error with a code that maps to an
// HTTP status / MCP error and a message that names what went wrong and where.
#include <stdexcept>
#include <string>
#include <string_view>

namespace eagle {

// invalid_argument 400, unauthenticated 401, permission_denied 403, not_found 404,
// conflict 409, too_large 413, unavailable 503, internal 500, data_loss 500 (stored
// data is corrupt: the message names the file and offset, `eagle repair` may help).
enum class ErrorCode {
  invalid_argument, not_found, conflict, unavailable, internal, unauthenticated, permission_denied, too_large, data_loss
};

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
