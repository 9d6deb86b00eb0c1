#include "eagle/core/csv.h"

namespace eagle {

bool read_csv_record(std::istream& in, std::vector<std::string>& fields, size_t& line, char sep) {
  fields.clear();
  std::string field;
  bool in_quotes = false, any = false;
  int c;
  while ((c = in.get()) != EOF) {
    any = true;
    if (in_quotes) {
      if (c == '"') {
        if (in.peek() == '"') {
          field.push_back('"');
          in.get();
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field.push_back(static_cast<char>(c));
      }
      continue;
    }
    if (c == '"' && field.empty()) {
      in_quotes = true;
    } else if (c == sep) {
      fields.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      ++line;
      if (!field.empty() && field.back() == '\r') field.pop_back();
      fields.push_back(std::move(field));
      return true;
    } else {
      field.push_back(static_cast<char>(c));
    }
  }
  if (!any) return false;
  if (!field.empty() && field.back() == '\r') field.pop_back();
  fields.push_back(std::move(field));
  ++line;
  return true;
}

}  // namespace eagle
