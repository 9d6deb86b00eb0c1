#include "eagle/core/error.h"

namespace eagle {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::not_found: return "not_found";
    case ErrorCode::conflict: return "conflict";
    case ErrorCode::unavailable: return "unavailable";
    case ErrorCode::internal: return "internal";
    case ErrorCode::unauthenticated: return "unauthenticated";
    case ErrorCode::permission_denied: return "permission_denied";
    case ErrorCode::too_large: return "too_large";
    case ErrorCode::data_loss: return "data_loss";
  }
  return "internal";
}

int http_status(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return 400;
    case ErrorCode::not_found: return 404;
    case ErrorCode::conflict: return 409;
    case ErrorCode::unavailable: return 503;
    case ErrorCode::internal: return 500;
    case ErrorCode::unauthenticated: return 401;
    case ErrorCode::permission_denied: return 403;
    case ErrorCode::too_large: return 413;
    case ErrorCode::data_loss: return 500;
  }
  return 500;
}

}  // namespace eagle
