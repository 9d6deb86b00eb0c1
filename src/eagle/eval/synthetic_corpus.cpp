#include "eagle/eval/synthetic_corpus.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "eagle/core/error.h"

namespace eagle::eval {

namespace {

std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    const size_t start = i;
    while (i < text.size() && text[i] != ' ') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

// SplitMix64: a fixed, well-mixed choice of the second passage.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

std::string spliced_text(const std::vector<Document>& passages, uint64_t row) {
  const uint64_t n = passages.size();
  if (n == 0) fail(ErrorCode::invalid_argument, "a spliced corpus needs at least one passage");
  if (row < n) return passages[row].text;
  const auto head = words_of(passages[row % n].text);
  const auto tail = words_of(passages[mix(row) % n].text);
  std::string text;
  for (size_t i = 0; i < (head.size() + 1) / 2; ++i) {
    if (!text.empty()) text += ' ';
    text += head[i];
  }
  for (size_t i = tail.size() / 2; i < tail.size(); ++i) {
    if (!text.empty()) text += ' ';
    text += tail[i];
  }
  return text;
}

uint64_t write_spliced_corpus(const std::vector<Document>& passages, uint64_t rows,
                              const std::filesystem::path& file) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) fail(ErrorCode::unavailable, "cannot write " + file.string());
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < rows; ++i) {
    const nlohmann::json j = {{"_id", "r" + std::to_string(i)}, {"title", ""}, {"text", spliced_text(passages, i)}};
    const std::string line = j.dump() + "\n";
    out.write(line.data(), static_cast<std::streamsize>(line.size()));
    bytes += line.size();
  }
  out.flush();
  if (!out) fail(ErrorCode::unavailable, "cannot write " + file.string() + " (disk full?)");
  return bytes;
}

}  // namespace eagle::eval
