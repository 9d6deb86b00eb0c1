#pragma once
// The syntax tree of a filter expression, bound to a schema: every leaf names the
// schema field it reads (by index) and carries literals already checked against the
// field's type, so evaluation and compilation never see a type error.
//
// Null semantics (docs/filter.md): a comparison, in, not in, like or array_contains*
// on a null value is false -- `!=` and `not in` included. `not` is plain boolean
// negation of its operand (two-valued logic), so `not (year == 2020)` is true for a
// null year while `year != 2020` is false. Only `is null` / `is not null` look at
// nulls. The id is never null.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "eagle/core/value.h"
#include "eagle/filter/compare.h"
#include "eagle/filter/like.h"

namespace eagle::filter {

// FieldRef::index of the implicit string field "id".
inline constexpr size_t kIdField = static_cast<size_t>(-1);

// One step into a json value: an object key or an array index.
using JsonStep = std::variant<std::string, size_t>;

struct FieldRef {
  size_t index = kIdField;  // schema field index, or kIdField
  FieldType type = FieldType::string;
  std::string name;
  std::vector<JsonStep> path;  // json fields only: meta["a"][0]; empty = the field itself

  bool is_id() const { return index == kIdField; }
  bool is_json_path() const { return !path.empty(); }
};

enum class CompareOp : uint8_t { eq, ne, lt, le, gt, ge };
std::string_view compare_op_text(CompareOp op);

struct Compare {
  FieldRef field;
  CompareOp op;
  Literal value;
};

// A chained range, `2020 <= year < 2025` (the `>` spelling is normalised to this).
struct Range {
  FieldRef field;
  Literal lower;
  bool lower_inclusive;
  Literal upper;
  bool upper_inclusive;
};

struct In {
  FieldRef field;
  std::vector<Literal> values;  // sorted by scalar_less, no two equal
  bool negated;                 // not in
};

struct Like {
  FieldRef field;
  LikePattern pattern;
};

struct IsNull {
  FieldRef field;
  bool negated;  // is not null
};

enum class ArrayMatch : uint8_t { contains, any, all };

struct ArrayContains {
  FieldRef field;
  ArrayMatch match;
  std::vector<Literal> values;  // one for contains; sorted by scalar_less, no two equal
};

struct Node;
struct Not {
  std::unique_ptr<Node> operand;
};
// And/Or are n-ary and flattened, so `a and b and c ...` never deepens the tree.
struct And {
  std::vector<Node> operands;
};
struct Or {
  std::vector<Node> operands;
};

struct Node {
  std::variant<Compare, Range, In, Like, IsNull, ArrayContains, Not, And, Or> expr;
};

// The canonical text of a node: fully parenthesised, normalised operators; it parses
// back (against the same schema) to a node that prints the same.
std::string to_string(const Node& node);
std::string literal_to_string(const Literal& v);

// A parsed filter: immutable, cheap to copy (the tree is shared).
class Filter {
 public:
  Filter(std::shared_ptr<const Node> root, std::string source)
      : root_(std::move(root)), source_(std::move(source)) {}

  const Node& root() const { return *root_; }
  const std::string& source() const { return source_; }  // the text that was parsed
  std::string to_string() const { return filter::to_string(*root_); }

 private:
  std::shared_ptr<const Node> root_;
  std::string source_;
};

}  // namespace eagle::filter
