#include "eagle/text/wordpiece.h"

#include <gtest/gtest.h>

#include "shared_data.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using eagle::text::WordPieceTokenizer;

namespace {
using eagle::testing::shared_data;
}  // namespace

TEST(WordPiece, ReproducesEveryReferenceCase) {
  const auto dir = shared_data() / "tokenizer";
  ASSERT_TRUE(fs::exists(dir / "wordpiece_cases.jsonl")) << "shared data missing: " << dir;
  auto tok = WordPieceTokenizer::from_vocab_file(dir / "bert-base-uncased-vocab.txt");
  EXPECT_EQ(tok.vocab_size(), 30522u);
  std::ifstream in(dir / "wordpiece_cases.jsonl");
  std::string line;
  size_t cases = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    auto text = j["text"].get<std::string>();
    auto expected = j["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(tok.encode_ids(text), expected) << "text: " << text;
    ++cases;
  }
  EXPECT_EQ(cases, 47u);
}

TEST(WordPiece, SpecialTokensPairsAndTruncation) {
  auto tok = WordPieceTokenizer::from_vocab_file(shared_data() / "tokenizer" / "bert-base-uncased-vocab.txt");
  auto e = tok.encode("Hello world", 16);
  EXPECT_EQ(e.ids, (std::vector<int32_t>{101, 7592, 2088, 102}));
  EXPECT_EQ(e.type_ids, (std::vector<int32_t>{0, 0, 0, 0}));
  auto p = tok.encode_pair("Hello world", "Hello", 16);
  EXPECT_EQ(p.ids, (std::vector<int32_t>{101, 7592, 2088, 102, 7592, 102}));
  EXPECT_EQ(p.type_ids, (std::vector<int32_t>{0, 0, 0, 0, 1, 1}));
  // Truncation: longest first, the second sequence when lengths tie.
  auto t = tok.encode_pair("a b c d e", "f g", 8);
  EXPECT_EQ(t.ids.size(), 8u);
  EXPECT_EQ(std::count(t.type_ids.begin(), t.type_ids.end(), 1), 3);  // "f g" [SEP]
  auto s = tok.encode("one two three four five", 4);
  EXPECT_EQ(s.ids.size(), 4u);
  EXPECT_EQ(s.ids.back(), 102);
  // Greedy longest match over bert-base-uncased (not the toy vocabulary of the HF docs).
  EXPECT_EQ(tok.tokenize("unaffable"), (std::vector<std::string>{"una", "##ffa", "##ble"}));
}
