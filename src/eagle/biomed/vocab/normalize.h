#pragma once
// Text normalisation shared by the surface dictionary and the entity matcher. Both
// sides go through the same per-character transform, so a surface
// matches the text exactly when their normalised bytes are equal:
//   - case fold (ASCII table; utf8proc's full case folding for the rest, "ß" -> "ss"),
//   - any run of white space (ASCII or Unicode Zs) -> one ' ',
//   - Unicode hyphens and dashes (U+2010..U+2015, U+2212) -> '-', so "PD‐1" is "PD-1",
//   - an invalid UTF-8 byte -> 0xFF, which no surface contains.
// No other folding (accents are kept): "Cétuximab" and "Cetuximab" are separate
// DrugBank synonyms already.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace eagle::biomed {

// A normalised copy of a text with the map back to the original bytes: byte i of
// `text` came from the original character starting at `original(i)`. A character
// that folds to several bytes ("ß" -> "ss", "β" -> 2 bytes) maps all of them to its
// start, and only spans that begin and end on character boundaries are reported.
struct NormalizedText {
  std::string text;
  std::vector<uint32_t> offsets;  // text.size() + 1 entries; empty means identity (ASCII fast path)

  size_t original(size_t i) const { return offsets.empty() ? i : offsets[i]; }
  // True when normalised position i starts a new original character (or is the end).
  bool at_char_boundary(size_t i) const {
    return offsets.empty() || i == 0 || i >= text.size() || offsets[i] != offsets[i - 1];
  }
};

NormalizedText normalize_for_match(std::string_view text);

// The normalised form of a dictionary surface: the same transform, trimmed of spaces.
std::string normalize_surface(std::string_view surface);

// Letter-boundary tests on the original text (seed "Letter-boundary UMLS matching"):
// a Unicode letter or combining mark before byte `pos` / starting at byte `pos`.
bool letter_before(std::string_view text, size_t pos);
bool letter_at(std::string_view text, size_t pos);

// At least one upper-case (or title-case) letter and no lower-case letter: "MET",
// "PD-1", "VEGFR1" are upper-case; "Met", "p53" are not.
bool is_upper_case(std::string_view s);
// Any lower-case / any upper-case (or title-case) letter.
bool has_lower_case(std::string_view s);
bool has_upper_case(std::string_view s);

}  // namespace eagle::biomed
