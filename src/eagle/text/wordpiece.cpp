#include "eagle/text/wordpiece.h"

#include <utf8proc.h>

#include <fstream>

#include "eagle/core/error.h"

namespace eagle::text {
namespace {

std::vector<int32_t> decode_utf8(std::string_view s) {
  std::vector<int32_t> cps;
  cps.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    utf8proc_int32_t cp;
    auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + i),
                              static_cast<utf8proc_ssize_t>(s.size() - i), &cp);
    if (n <= 0) {
      cps.push_back(0xFFFD);  // what Python's decode(errors="replace") yields; then dropped
      ++i;
      continue;
    }
    cps.push_back(cp);
    i += static_cast<size_t>(n);
  }
  return cps;
}

void append_utf8(std::string& out, int32_t cp) {
  utf8proc_uint8_t buf[4];
  auto n = utf8proc_encode_char(cp, buf);
  out.append(reinterpret_cast<char*>(buf), static_cast<size_t>(n));
}

// The character classes of transformers' tokenization_utils (_is_whitespace,
// _is_control, _is_punctuation) and BasicTokenizer._is_chinese_char.
bool is_whitespace(int32_t c) {
  if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return true;
  return utf8proc_category(c) == UTF8PROC_CATEGORY_ZS;
}
bool is_control(int32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_CC: case UTF8PROC_CATEGORY_CF: case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_CO: case UTF8PROC_CATEGORY_CS:
      return true;
    default:
      return false;
  }
}
bool is_punctuation(int32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE: case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return true;
    default:
      return false;
  }
}
bool is_cjk(int32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

std::string utf8proc_transform(const std::string& s, int options) {
  utf8proc_uint8_t* out = nullptr;
  auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()), static_cast<utf8proc_ssize_t>(s.size()),
                        &out, static_cast<utf8proc_option_t>(options));
  if (n < 0) return s;
  std::string r(reinterpret_cast<char*>(out), static_cast<size_t>(n));
  std::free(out);
  return r;
}

}  // namespace

WordPieceTokenizer WordPieceTokenizer::from_vocab_file(const std::filesystem::path& file, WordPieceOptions opts) {
  std::ifstream in(file);
  if (!in) fail(ErrorCode::not_found, "cannot read vocabulary " + file.string());
  std::vector<std::string> vocab;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    vocab.push_back(line);
  }
  return WordPieceTokenizer(std::move(vocab), opts);
}

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions opts)
    : vocab_(std::move(vocab)), opts_(opts) {
  ids_.reserve(vocab_.size());
  for (size_t i = 0; i < vocab_.size(); ++i) ids_.emplace(vocab_[i], static_cast<int32_t>(i));
  auto need = [&](const char* t) {
    int32_t id = token_id(t);
    if (id < 0) fail(ErrorCode::invalid_argument, std::string("vocabulary has no ") + t + " token");
    return id;
  };
  unk_id_ = need("[UNK]");
  cls_id_ = need("[CLS]");
  sep_id_ = need("[SEP]");
  pad_id_ = need("[PAD]");
}

int32_t WordPieceTokenizer::token_id(std::string_view token) const {
  auto it = ids_.find(std::string(token));
  return it == ids_.end() ? -1 : it->second;
}

std::vector<std::string> WordPieceTokenizer::basic_tokenize(std::string_view raw) const {
  // clean_text + CJK spacing, on code points.
  std::string cleaned;
  cleaned.reserve(raw.size());
  for (int32_t c : decode_utf8(raw)) {
    if (c == 0 || c == 0xFFFD || is_control(c)) continue;
    if (is_whitespace(c)) {
      cleaned.push_back(' ');
    } else if (opts_.tokenize_cjk && is_cjk(c)) {
      cleaned.push_back(' ');
      append_utf8(cleaned, c);
      cleaned.push_back(' ');
    } else {
      append_utf8(cleaned, c);
    }
  }
  cleaned = utf8proc_transform(cleaned, UTF8PROC_STABLE | UTF8PROC_COMPOSE);  // NFC
  std::vector<std::string> out;
  size_t i = 0;
  while (i < cleaned.size()) {
    while (i < cleaned.size() && cleaned[i] == ' ') ++i;
    size_t j = i;
    while (j < cleaned.size() && cleaned[j] != ' ') ++j;
    if (j == i) break;
    std::string word = cleaned.substr(i, j - i);
    i = j;
    if (opts_.lowercase) {
      std::string lowered;
      for (int32_t c : decode_utf8(word)) append_utf8(lowered, utf8proc_tolower(c));
      // Strip accents: NFD, then drop non-spacing marks (Mn).
      std::string nfd = utf8proc_transform(lowered, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
      word.clear();
      for (int32_t c : decode_utf8(nfd))
        if (utf8proc_category(c) != UTF8PROC_CATEGORY_MN) append_utf8(word, c);
    }
    // Split on punctuation: each punctuation character is its own token.
    std::string cur;
    for (int32_t c : decode_utf8(word)) {
      if (is_punctuation(c)) {
        if (!cur.empty()) out.push_back(std::move(cur));
        cur.clear();
        std::string p;
        append_utf8(p, c);
        out.push_back(std::move(p));
      } else {
        append_utf8(cur, c);
      }
    }
    if (!cur.empty()) out.push_back(std::move(cur));
  }
  return out;
}

void WordPieceTokenizer::wordpiece(const std::string& word, std::vector<int32_t>& out) const {
  auto cps = decode_utf8(word);
  if (cps.size() > opts_.max_chars_per_word) {
    out.push_back(unk_id_);
    return;
  }
  // Byte offsets of code point boundaries, so substrings never split a character.
  std::vector<size_t> at(cps.size() + 1, 0);
  {
    size_t b = 0;
    for (size_t k = 0; k < cps.size(); ++k) {
      at[k] = b;
      utf8proc_uint8_t buf[4];
      b += static_cast<size_t>(utf8proc_encode_char(cps[k], buf));
    }
    at[cps.size()] = b;
  }
  std::vector<int32_t> pieces;
  size_t start = 0;
  std::string candidate;
  while (start < cps.size()) {
    size_t end = cps.size();
    int32_t found = -1;
    while (start < end) {
      candidate.assign(start > 0 ? "##" : "");
      candidate.append(word, at[start], at[end] - at[start]);
      auto it = ids_.find(candidate);
      if (it != ids_.end()) {
        found = it->second;
        break;
      }
      --end;
    }
    if (found < 0) {
      out.push_back(unk_id_);  // any unmatchable piece makes the whole word [UNK]
      return;
    }
    pieces.push_back(found);
    start = end;
  }
  out.insert(out.end(), pieces.begin(), pieces.end());
}

std::vector<int32_t> WordPieceTokenizer::encode_ids(std::string_view text) const {
  std::vector<int32_t> ids;
  for (const auto& w : basic_tokenize(text)) wordpiece(w, ids);
  return ids;
}

std::vector<std::string> WordPieceTokenizer::tokenize(std::string_view text) const {
  std::vector<std::string> out;
  for (int32_t id : encode_ids(text)) out.push_back(vocab_[static_cast<size_t>(id)]);
  return out;
}

Encoding WordPieceTokenizer::encode(std::string_view a, size_t max_length) const {
  if (max_length < 2) fail(ErrorCode::invalid_argument, "max_length must be at least 2");
  auto ids = encode_ids(a);
  if (ids.size() > max_length - 2) ids.resize(max_length - 2);
  Encoding e;
  e.ids.push_back(cls_id_);
  e.ids.insert(e.ids.end(), ids.begin(), ids.end());
  e.ids.push_back(sep_id_);
  e.type_ids.assign(e.ids.size(), 0);
  e.attention_mask.assign(e.ids.size(), 1);
  return e;
}

Encoding WordPieceTokenizer::encode_pair(std::string_view a, std::string_view b, size_t max_length) const {
  if (max_length < 3) fail(ErrorCode::invalid_argument, "max_length must be at least 3 for a pair");
  auto x = encode_ids(a), y = encode_ids(b);
  // HF "longest_first": remove one token at a time from the longer sequence
  // (the second one when equal).
  while (x.size() + y.size() > max_length - 3) {
    if (x.size() > y.size()) x.pop_back();
    else y.pop_back();
  }
  Encoding e;
  e.ids.push_back(cls_id_);
  e.ids.insert(e.ids.end(), x.begin(), x.end());
  e.ids.push_back(sep_id_);
  e.type_ids.assign(e.ids.size(), 0);
  e.ids.insert(e.ids.end(), y.begin(), y.end());
  e.ids.push_back(sep_id_);
  e.type_ids.resize(e.ids.size(), 1);
  e.attention_mask.assign(e.ids.size(), 1);
  return e;
}

}  // namespace eagle::text
