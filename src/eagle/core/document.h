#pragma once
#include <string>

namespace eagle {

// A passage as it enters the engine: an external id, an optional title, the text,
// and any other fields of the source record as a JSON object string.
struct Document {
  std::string id;
  std::string title;
  std::string text;
  std::string metadata_json = "{}";

  // What the lexical index sees: title and text as one field (BEIR "flat").
  std::string indexed_text() const { return title.empty() ? text : title + "\n" + text; }
};

}  // namespace eagle
