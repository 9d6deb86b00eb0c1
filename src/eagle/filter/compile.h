#pragma once
// Compiles a filter to the bitset of matching rows: predicates on indexed fields
// become index lookups, predicates on other fields (and json keys) are evaluated
// row by row, and the pieces combine with &=, |= and complement. The result equals
// evaluate() on every row (tests/filter check this on random rows and expressions).
#include <cstddef>
#include <cstdint>

#include "eagle/core/bitset.h"
#include "eagle/filter/ast.h"
#include "eagle/filter/evaluate.h"
#include "eagle/filter/scalar_index.h"

namespace eagle::filter {

// What a filter is compiled against (a segment, a collection): rows [0, row_count()).
class FilterTarget {
 public:
  virtual ~FilterTarget() = default;
  virtual size_t row_count() const = 0;
  // The index of schema field `field`, or nullptr to evaluate it row by row. Its type
  // must be the field's type. Rows past the index's row_count() are read as null.
  virtual const ScalarIndex* index(size_t field) const = 0;
  // The index of the implicit id field, or nullptr.
  virtual const ScalarIndex* id_index() const { return nullptr; }
  // Row `row` for row-by-row evaluation; the reference need only stay valid until
  // the next call.
  virtual const RowView& row(uint32_t row) const = 0;
};

Bitset compile(const Filter& filter, const FilterTarget& target);
// Only the rows of `within` (sized to row_count()) that match; rows outside it are
// never read, so deleted rows or an earlier filter's rejects cost nothing.
Bitset compile(const Filter& filter, const FilterTarget& target, const Bitset& within);

}  // namespace eagle::filter
