#pragma once
// Small text helpers shared by the ingest parsers and chunkers (SPL, papers, JATS,
// PubMed, PDF, HTML).
// Byte-oriented and UTF-8 safe: they never split a multi-byte sequence.
#include <string>
#include <vector>
#include <string_view>

namespace eagle::ingest {

// Runs of ASCII whitespace and U+00A0 (no-break space, common in SPL tables) become
// one space; leading and trailing whitespace is dropped.
std::string collapse_whitespace(std::string_view s);

// A heading as an id part: lower-case letters and digits (other bytes of UTF-8 kept),
// other runs as one '-' ("Results / Efficacy (ITT)" -> "results-efficacy-itt").
std::string slug(std::string_view s);

// `s` without leading and trailing ASCII blanks (space, tab, CR, LF).
std::string_view trim(std::string_view s);

// The last component of a path ("/", "\\" separators): "labels/humira.xml" -> "humira.xml".
std::string base_name(std::string_view path);

// ASCII lower-casing; other bytes (UTF-8) are kept as they are.
std::string ascii_lower(std::string_view s);

// At most `max_bytes` bytes of `s`, never ending inside a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, size_t max_bytes);

// At most `max_bytes` bytes of `s`, cut at the last space before the limit when there
// is one in its second half (a word boundary), never inside a UTF-8 sequence; trailing
// spaces removed. Used for content_summary.
std::string truncate_at_word(std::string_view s, size_t max_bytes);

// Splits text into pieces of at most max_chars bytes: whole lines (paragraphs) packed
// together first, then sentences of an overlong paragraph, then words of an overlong
// sentence; a single overlong word is cut at a UTF-8 boundary. Never returns empty
// pieces; empty input gives no pieces. Throws eagle::Error when max_chars is 0.
std::vector<std::string> split_text(std::string_view text, size_t max_chars);

// A reference list's heading: References, Bibliography, Literature Cited, References and
// Notes, Reference List, Works Cited (any case, surrounding punctuation ignored).
bool is_references_title(std::string_view heading);

}  // namespace eagle::ingest
