#pragma once
// Sentences of a passage, for quoting: a line is never joined to the next (headings,
// table rows and list items stay apart), and a full stop after a known abbreviation
// ("e.g.", "et al.", "Fig. 2", "vs."), an initial ("J. Smith") or inside a number
// ("2.5 mg") does not end a sentence.
#include <string>
#include <string_view>
#include <vector>

namespace eagle::answer {

struct Sentence {
  std::string text;  // trimmed
  size_t line = 0;   // the line of the passage it is on (0-based)
};

std::vector<Sentence> split_sentences(std::string_view text);

}  // namespace eagle::answer
