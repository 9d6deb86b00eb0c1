#include "eagle/text/analyzer.h"

#include <libstemmer.h>
#include <utf8proc.h>

#include <array>
#include <cstdlib>
#include <functional>
#include <memory>

#include "eagle/core/error.h"

namespace eagle::text {

Stemmer parse_stemmer(std::string_view name) {
  if (name == "none" || name.empty()) return Stemmer::none;
  if (name == "porter") return Stemmer::porter;
  if (name == "english" || name == "snowball") return Stemmer::english;
  fail(ErrorCode::invalid_argument,
       "unknown stemmer '" + std::string(name) + "': expected none, porter or english");
}

std::string_view stemmer_name(Stemmer s) {
  switch (s) {
    case Stemmer::none: return "none";
    case Stemmer::porter: return "porter";
    case Stemmer::english: return "english";
  }
  return "none";
}

namespace {

// Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (what Pyserini's BM25 removes).
constexpr std::array<std::string_view, 33> kStopwords = {
    "a",    "an",    "and",   "are",  "as",   "at",    "be",   "but",   "by",
    "for",  "if",    "in",    "into", "is",   "it",    "no",   "not",   "of",
    "on",   "or",    "such",  "that", "the",  "their", "then", "there", "these",
    "they", "this",  "to",    "was",  "will", "with"};

// Lower-case Greek letters spelled out, U+03B1..U+03C9 (U+03C2 final sigma -> sigma).
constexpr std::array<std::string_view, 25> kGreek = {
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta",  "eta",   "theta", "iota",
    "kappa", "lambda", "mu", "nu",     "xi",      "omicron", "pi",  "rho",   "sigma",
    "sigma", "tau",  "upsilon", "phi", "chi",     "psi",   "omega"};

struct StemmerDeleter {
  void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
};

// libstemmer instances are not thread-safe; one per thread per algorithm.
sb_stemmer* thread_stemmer(Stemmer which) {
  thread_local std::unique_ptr<sb_stemmer, StemmerDeleter> porter, english;
  auto& slot = which == Stemmer::porter ? porter : english;
  if (!slot) {
    slot.reset(sb_stemmer_new(which == Stemmer::porter ? "porter" : "english", "UTF_8"));
    if (!slot) fail(ErrorCode::internal, "libstemmer could not create a stemmer");
  }
  return slot.get();
}

// A stemmer's results, remembered per thread: a text's words repeat (Zipf), and
// Snowball costs far more than a look-up. Direct-mapped and fixed in size, so its
// memory is bounded (about 1.2 MB a thread and stemmer) whatever the vocabulary; a collision only
// replaces the slot. The stem of a word never changes, so a hit is exactly what
// the stemmer would return.
class StemCache {
 public:
  static constexpr size_t kSlots = 1u << 14;

  // The stem of `word` by `stemmer`, computed at most once per slot fill.
  std::string_view stem(sb_stemmer* stemmer, std::string_view word) {
    Slot& slot = slots_[std::hash<std::string_view>{}(word) & (kSlots - 1)];
    if (slot.word != word) {  // an empty slot's word is "", never a word to stem
      const sb_symbol* out = sb_stemmer_stem(stemmer, reinterpret_cast<const sb_symbol*>(word.data()),
                                             static_cast<int>(word.size()));
      if (!out) return {};  // out of memory in libstemmer: the caller keeps the word
      slot.word.assign(word);
      slot.stem.assign(reinterpret_cast<const char*>(out), static_cast<size_t>(sb_stemmer_length(stemmer)));
    }
    return slot.stem;
  }

 private:
  struct Slot {
    std::string word, stem;
  };
  std::vector<Slot> slots_ = std::vector<Slot>(kSlots);
};

// Each made on a thread's first use of its stemmer, so a thread holds one cache per
// stemmer it uses.
StemCache& thread_stem_cache(Stemmer which) {
  if (which == Stemmer::porter) {
    thread_local StemCache porter;
    return porter;
  }
  thread_local StemCache english;
  return english;
}

enum class CharClass { separator, word, hyphen, plus };

bool is_alpha_ascii_term(std::string_view s) {
  for (unsigned char c : s)
    if (c < 'a' || c > 'z') return false;
  return !s.empty();
}

}  // namespace

bool is_english_stopword(std::string_view term) {
  // Every stop word is 1 to 5 lower-case ASCII letters: most terms are out by their
  // length or first letter before any comparison.
  if (term.empty() || term.size() > 5) return false;
  const char first = term[0];
  for (auto w : kStopwords)
    if (w[0] == first && w == term) return true;
  return false;
}

std::string normalize(std::string_view text) {
  bool ascii = true;
  for (unsigned char c : text)
    if (c >= 0x80) {
      ascii = false;
      break;
    }
  if (ascii) {
    std::string out(text);
    for (auto& c : out)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
  }
  utf8proc_uint8_t* mapped = nullptr;
  auto opts = static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE |
                                             UTF8PROC_COMPAT | UTF8PROC_CASEFOLD |
                                             UTF8PROC_IGNORE);
  utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                    static_cast<utf8proc_ssize_t>(text.size()), &mapped, opts);
  if (n < 0) {
    // Invalid UTF-8: keep the valid parts rather than lose the whole text.
    std::string cleaned;
    cleaned.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
      utf8proc_int32_t cp;
      auto len = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + i),
                                  static_cast<utf8proc_ssize_t>(text.size() - i), &cp);
      if (len <= 0) {
        cleaned.push_back(' ');
        ++i;
        continue;
      }
      cleaned.append(text.substr(i, static_cast<size_t>(len)));
      i += static_cast<size_t>(len);
    }
    n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(cleaned.data()),
                     static_cast<utf8proc_ssize_t>(cleaned.size()), &mapped, opts);
    if (n < 0) return std::string();
  }
  std::string out(reinterpret_cast<char*>(mapped), static_cast<size_t>(n));
  std::free(mapped);
  return out;
}

void Analyzer::analyze(std::string_view raw,
                       const std::function<void(std::string_view)>& emit) const {
  const std::string text = normalize(raw);
  const size_t n = text.size();

  // Decodes the code point at i; returns its class, its byte length, and, for a
  // Greek letter, the spelled-out name.
  auto classify = [&](size_t i, size_t& len, std::string_view& greek) -> CharClass {
    greek = {};
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      len = 1;
      if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return CharClass::word;
      if (c >= 'A' && c <= 'Z') return CharClass::word;
      if (c == '-') return CharClass::hyphen;
      if (c == '+') return CharClass::plus;
      return CharClass::separator;
    }
    utf8proc_int32_t cp = 0;
    auto l = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + i),
                              static_cast<utf8proc_ssize_t>(n - i), &cp);
    if (l <= 0) {
      len = 1;
      return CharClass::separator;
    }
    len = static_cast<size_t>(l);
    if (cp >= 0x03B1 && cp <= 0x03C9) {
      greek = kGreek[static_cast<size_t>(cp - 0x03B1)];
      return CharClass::word;
    }
    if ((cp >= 0x2010 && cp <= 0x2013) || cp == 0x2212) return CharClass::hyphen;
    switch (utf8proc_category(cp)) {
      case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
      case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN:
      case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL:
      case UTF8PROC_CATEGORY_NO:
        return CharClass::word;
      default:
        return CharClass::separator;
    }
  };

  std::vector<std::string> parts;
  std::string whole, stemmed;
  auto emit_term = [&](const std::string& term, bool allow_stem) {
    if (term.empty()) return;
    if (options_.stopwords && is_english_stopword(term)) return;
    if (allow_stem && options_.stemmer != Stemmer::none && is_alpha_ascii_term(term)) {
      sb_stemmer* st = thread_stemmer(options_.stemmer);
      if (options_.stem_cache) {
        const std::string_view stem = thread_stem_cache(options_.stemmer).stem(st, term);
        if (stem.data()) {
          emit(stem);
          return;
        }
      } else if (const sb_symbol* out = sb_stemmer_stem(st, reinterpret_cast<const sb_symbol*>(term.data()),
                                                        static_cast<int>(term.size()))) {
        emit(std::string_view(reinterpret_cast<const char*>(out), static_cast<size_t>(sb_stemmer_length(st))));
        return;
      }
    }
    emit(term);
  };

  size_t i = 0;
  while (i < n) {
    size_t len;
    std::string_view greek;
    CharClass cls = classify(i, len, greek);
    if (cls != CharClass::word) {
      i += len;
      continue;
    }
    parts.clear();
    parts.emplace_back();
    bool plus = false;
    // Gather segments joined by single internal hyphens.
    while (i < n) {
      cls = classify(i, len, greek);
      if (cls == CharClass::word) {
        if (!greek.empty()) parts.back().append(greek);
        else parts.back().append(text, i, len);
        i += len;
        continue;
      }
      if (cls == CharClass::hyphen && i + len < n) {
        size_t len2;
        std::string_view g2;
        if (classify(i + len, len2, g2) == CharClass::word) {
          parts.emplace_back();
          i += len;
          continue;
        }
      }
      if (cls == CharClass::plus) {
        size_t len2 = 0;
        std::string_view g2;
        bool followed_by_word = i + len < n && classify(i + len, len2, g2) == CharClass::word;
        if (!followed_by_word) {
          plus = true;
          i += len;
        }
      }
      break;
    }
    if (parts.size() == 1 && !plus) {
      emit_term(parts[0], true);
      continue;
    }
    whole.clear();
    for (size_t p = 0; p < parts.size(); ++p) {
      if (p) whole.push_back('-');
      whole.append(parts[p]);
    }
    if (plus) whole.push_back('+');
    emit(whole);  // the compound itself is never stemmed or stopped
    if (!options_.compound_parts) continue;
    for (const auto& p : parts) emit_term(p, true);
    // Joined forms: the whole ("vegfr13") and, for three or more parts, each
    // adjacent pair, so "anti-PD-1" still yields "pd1".
    if (parts.size() > 1) {
      std::string joined;
      for (const auto& p : parts) joined.append(p);
      emit(joined);
    }
    if (parts.size() > 2) {
      for (size_t p = 0; p + 1 < parts.size(); ++p) emit(parts[p] + parts[p + 1]);
    }
  }
}

std::vector<std::string> Analyzer::terms(std::string_view text) const {
  std::vector<std::string> out;
  analyze(text, [&](std::string_view t) { out.emplace_back(t); });
  return out;
}

}  // namespace eagle::text
