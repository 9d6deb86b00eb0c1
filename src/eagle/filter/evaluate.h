#pragma once
// Row-by-row evaluation: the exact oracle that compiled bitsets are tested against,
// and the fallback compile() uses for fields without an index. Null semantics are
// documented in ast.h.
#include <cstddef>
#include <string>

#include "eagle/core/value.h"
#include "eagle/filter/ast.h"

namespace eagle::filter {

// One row as the evaluator sees it. field(i) must hold a value of schema field i's
// type or null (monostate; for json fields also a json null).
class RowView {
 public:
  virtual ~RowView() = default;
  virtual const Value& field(size_t schema_field_index) const = 0;
  virtual const std::string& id() const = 0;
};

bool evaluate(const Filter& filter, const RowView& row);
bool evaluate(const Node& node, const RowView& row);

}  // namespace eagle::filter
