#pragma once
// WordPiece tokenizer identical to Hugging Face's BertTokenizer:
// BasicTokenizer (clean text, CJK spacing, NFC, lower-casing with accent stripping,
// punctuation split) followed by greedy longest-match-first WordPiece with "##"
// continuations, [CLS]/[SEP] framing, sentence pairs and truncation.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace eagle::text {

struct WordPieceOptions {
  bool lowercase = true;       // do_lower_case (strips accents too, as HF does by default)
  bool tokenize_cjk = true;    // tokenize_chinese_chars
  size_t max_chars_per_word = 100;
};

struct Encoding {
  std::vector<int32_t> ids;
  std::vector<int32_t> type_ids;
  std::vector<int32_t> attention_mask;
};

class WordPieceTokenizer {
 public:
  // vocab.txt: one token per line, the line number is the id. Throws eagle::Error.
  static WordPieceTokenizer from_vocab_file(const std::filesystem::path& file, WordPieceOptions opts = {});
  WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions opts = {});

  // Basic tokenization only (what BertTokenizer.basic_tokenizer.tokenize returns).
  std::vector<std::string> basic_tokenize(std::string_view text) const;
  // Word pieces, without special tokens.
  std::vector<std::string> tokenize(std::string_view text) const;
  std::vector<int32_t> encode_ids(std::string_view text) const;
  // [CLS] a [SEP] (b [SEP]), truncated to max_length with HF's "longest_first".
  Encoding encode(std::string_view a, size_t max_length) const;
  Encoding encode_pair(std::string_view a, std::string_view b, size_t max_length) const;

  size_t vocab_size() const { return vocab_.size(); }
  int32_t token_id(std::string_view token) const;  // -1 if absent
  int32_t pad_id() const { return pad_id_; }

 private:
  void wordpiece(const std::string& word, std::vector<int32_t>& out) const;

  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int32_t> ids_;
  WordPieceOptions opts_;
  int32_t unk_id_ = 0, cls_id_ = 0, sep_id_ = 0, pad_id_ = 0;
};

}  // namespace eagle::text
