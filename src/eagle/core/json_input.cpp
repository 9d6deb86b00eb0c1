#include "eagle/core/json_input.h"

#include <string>

#include "eagle/core/error.h"

namespace eagle {

std::optional<size_t> json_too_deep(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character cannot end the string
      else if (c == '"')
        in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > max_depth) return i;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;  // unbalanced: the parser reports it
        break;
      default: break;
    }
  }
  return std::nullopt;
}

nlohmann::json parse_json_input(std::string_view text, std::string_view what) {
  // JSON has no raw NUL (RFC 8259: control characters are escaped even in strings),
  // and nlohmann stops at one as at the end of the input: "{...}\0<anything>" would
  // parse, the rest unseen.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    fail(ErrorCode::invalid_argument, std::string(what) + " is not valid JSON (byte " + std::to_string(nul) + ")");
  if (const auto at = json_too_deep(text))
    fail(ErrorCode::invalid_argument, std::string(what) + " nests deeper than " +
                                          std::to_string(kMaxJsonDepth) + " levels (byte " +
                                          std::to_string(*at) + ")");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() quotes the bytes last read: only the offset is kept (e.byte counts the
    // bytes read, so the offending byte's offset is one less).
    const size_t at = e.byte > 0 ? e.byte - 1 : 0;
    fail(ErrorCode::invalid_argument,
         std::string(what) + " is not valid JSON (byte " + std::to_string(at) + ")");
  } catch (const nlohmann::json::exception&) {
    // out_of_range 406: a number that overflows a double (1e400).
    fail(ErrorCode::invalid_argument, std::string(what) + " holds a number out of range");
  }
}

}  // namespace eagle
