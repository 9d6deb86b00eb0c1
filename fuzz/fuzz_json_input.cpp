// JSON from outside (core/json_input.h) on arbitrary bytes, against an oracle: the
// depth of what nlohmann parses without a bound, measured with an explicit stack.
// json_too_deep must fire exactly when a valid document nests deeper than the limit;
// parse_json_input must accept every valid document within it and refuse the rest with
// eagle::Error alone, its message never quoting the input.
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "eagle/core/error.h"
#include "eagle/core/json_input.h"
#include "fuzz_support.h"

namespace {
size_t depth_of(const nlohmann::json& root) {
  size_t deepest = 0;
  std::vector<std::pair<const nlohmann::json*, size_t>> stack{{&root, 0}};
  while (!stack.empty()) {
    auto [j, d] = stack.back();
    stack.pop_back();
    if (!j->is_structured()) continue;
    deepest = std::max(deepest, d + 1);
    for (const auto& child : *j) stack.push_back({&child, d + 1});
  }
  return deepest;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = eagle::fuzz::bytes(data, size);
  const auto too_deep = eagle::json_too_deep(in);
  // nlohmann's parser keeps its own stack (no recursion): safe on any depth. Its
  // destruction of a deep document is iterative too.
  // nlohmann stops at a NUL byte as at the end of the input; JSON has none.
  const auto reference = in.find('\0') == std::string::npos ? nlohmann::json::parse(in, nullptr, false)
                                                             : nlohmann::json(nlohmann::json::value_t::discarded);
  if (!reference.is_discarded()) {
    const bool deeper = depth_of(reference) > eagle::kMaxJsonDepth;
    if (deeper != too_deep.has_value()) std::abort();
  }
  try {
    const auto j = eagle::parse_json_input(in, "the input");
    if (too_deep || reference.is_discarded() || j != reference) std::abort();
  } catch (const eagle::Error& e) {
    if (!reference.is_discarded() && !too_deep) {
      // Only a number out of range may refuse a document the reference parsed (the
      // reference turns it into a discarded value too, so this is not reached).
      std::abort();
    }
    if (e.code() != eagle::ErrorCode::invalid_argument) std::abort();
  }
  return 0;
}
