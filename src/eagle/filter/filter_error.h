#pragma once
// A filter expression that does not lex, parse or fit the schema. It is an
// invalid_argument eagle::Error (one error model) whose message always starts with
// the byte position, so an API caller can point at the mistake.
#include <cstddef>
#include <string>

#include "eagle/core/error.h"

namespace eagle::filter {

class FilterError : public Error {
 public:
  FilterError(size_t position, const std::string& detail)
      : Error(ErrorCode::invalid_argument,
              "filter error at position " + std::to_string(position) + ": " + detail),
        position_(position),
        detail_(detail) {}

  // 0-based byte offset into the expression; the expression's length means "at the end".
  size_t position() const { return position_; }
  // The message without the "filter error at position N: " prefix.
  const std::string& detail() const { return detail_; }

 private:
  size_t position_;
  std::string detail_;
};

}  // namespace eagle::filter
