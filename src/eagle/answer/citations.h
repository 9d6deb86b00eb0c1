#pragma once
// The citations of a generated answer: "[2]", "[1, 3]", "[1][3]", "[2-4]", "[2–4]",
// each number 1..passages. Numbers outside that range are dropped and reported.
#include <string_view>
#include <vector>

namespace eagle::answer {

struct ParsedCitations {
  std::vector<size_t> numbers;  // distinct, in order of first use
  std::vector<size_t> dropped;  // cited but no such passage
};

ParsedCitations parse_citations(std::string_view text, size_t passages);

}  // namespace eagle::answer
