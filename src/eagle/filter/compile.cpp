#include "eagle/filter/compile.h"

#include <algorithm>

#include "eagle/core/error.h"

namespace eagle::filter {

namespace {

class Compiler {
 public:
  explicit Compiler(const FilterTarget& t) : t_(t), n_(t.row_count()) {}

  // The rows of `within` that match `node`; never a row outside `within`. Narrowing
  // `within` as an `and` proceeds is what keeps row-by-row fallbacks cheap.
  Bitset run(const Node& node, const Bitset& within) {
    if (!touches_index(node)) return scan(node, within);
    if (const auto* a = std::get_if<And>(&node.expr)) {
      // Indexed operands first: they are cheap and shrink the rows the rest must scan.
      std::vector<const Node*> order;
      for (const auto& op : a->operands) order.push_back(&op);
      std::stable_partition(order.begin(), order.end(), [&](const Node* n) { return fully_indexed(*n); });
      Bitset acc = within;
      for (const Node* op : order) {
        if (!acc.any()) break;
        acc = run(*op, acc);
      }
      return acc;
    }
    if (const auto* o = std::get_if<Or>(&node.expr)) {
      Bitset acc(n_), rest = within;
      for (const auto& op : o->operands) {
        if (!rest.any()) break;
        Bitset hit = run(op, rest);
        acc |= hit;
        rest.subtract(hit);  // rows already matched need no more work
      }
      return acc;
    }
    if (const auto* x = std::get_if<Not>(&node.expr)) {
      Bitset out = within;
      out.subtract(run(*x->operand, within));
      return out;
    }
    Bitset out = leaf(node);
    out &= within;
    return out;
  }

 private:
  // The index serving field f, or nullptr when f must be read row by row.
  const ScalarIndex* index_for(const FieldRef& f) const {
    if (f.is_json_path()) return nullptr;
    const ScalarIndex* idx = f.is_id() ? t_.id_index() : t_.index(f.index);
    if (idx && idx->type() != f.type)
      fail(ErrorCode::internal, "the index of field '" + f.name + "' is " +
                                    std::string(field_type_name(idx->type())) + " but the field is " +
                                    std::string(field_type_name(f.type)));
    return idx;
  }

  // Whether pred holds for all leaves (all = true) or for some leaf of node.
  template <typename Pred>
  bool leaves_match(const Node& node, Pred&& pred, bool all) const {
    return std::visit(
        [&](const auto& e) -> bool {
          using T = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<T, And> || std::is_same_v<T, Or>) {
            auto f = [&](const Node& n) { return leaves_match(n, pred, all); };
            return all ? std::all_of(e.operands.begin(), e.operands.end(), f)
                       : std::any_of(e.operands.begin(), e.operands.end(), f);
          } else if constexpr (std::is_same_v<T, Not>) {
            return leaves_match(*e.operand, pred, all);
          } else {
            return pred(e.field);
          }
        },
        node.expr);
  }
  bool touches_index(const Node& n) const {
    return leaves_match(
        n, [&](const FieldRef& f) { return index_for(f) != nullptr; }, false);
  }
  bool fully_indexed(const Node& n) const {
    return leaves_match(
        n, [&](const FieldRef& f) { return index_for(f) != nullptr; }, true);
  }

  Bitset scan(const Node& node, const Bitset& within) const {
    Bitset out(n_);
    within.for_each([&](size_t r) {
      if (evaluate(node, t_.row(static_cast<uint32_t>(r)))) out.set(r);
    });
    return out;
  }

  // Index results cover the index's rows; rows past them are null, so a zero bit is
  // right for every predicate but `is null`.
  Bitset sized(Bitset b) const {
    b.resize(n_);
    return b;
  }
  Bitset not_null_minus(const ScalarIndex& idx, const Bitset& b) const {
    Bitset out = idx.not_null();
    out.subtract(b);
    return sized(std::move(out));
  }

  static std::vector<Value> values_of(const std::vector<Literal>& literals) {
    std::vector<Value> out;
    out.reserve(literals.size());
    for (const auto& l : literals) out.push_back(value_of(l));
    return out;
  }

  Bitset leaf(const Node& node) const {
    return std::visit(
        [&](const auto& e) -> Bitset {
          using T = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<T, And> || std::is_same_v<T, Or> || std::is_same_v<T, Not>) {
            fail(ErrorCode::internal, "filter compiler: a junction reached the leaf compiler");
          } else {
            const ScalarIndex& idx = *index_for(e.field);
            if constexpr (std::is_same_v<T, Compare>) {
              Value v = value_of(e.value);
              switch (e.op) {
                case CompareOp::eq: return sized(idx.equal(v));
                case CompareOp::ne: return not_null_minus(idx, idx.equal(v));
                case CompareOp::lt: return sized(idx.range(std::nullopt, false, v, false));
                case CompareOp::le: return sized(idx.range(std::nullopt, false, v, true));
                case CompareOp::gt: return sized(idx.range(v, false, std::nullopt, false));
                case CompareOp::ge: return sized(idx.range(v, true, std::nullopt, false));
              }
              return Bitset(n_);
            } else if constexpr (std::is_same_v<T, Range>) {
              return sized(
                  idx.range(value_of(e.lower), e.lower_inclusive, value_of(e.upper), e.upper_inclusive));
            } else if constexpr (std::is_same_v<T, In>) {
              Bitset hit = idx.equal_any(values_of(e.values));
              return e.negated ? not_null_minus(idx, hit) : sized(std::move(hit));
            } else if constexpr (std::is_same_v<T, Like>) {
              return sized(idx.matching_terms([&](std::string_view s) { return e.pattern.matches(s); },
                                              e.pattern.literal_prefix()));
            } else if constexpr (std::is_same_v<T, IsNull>) {
              Bitset out = sized(idx.not_null());
              if (!e.negated) out.flip();  // rows past the index are null too
              return out;
            } else {  // ArrayContains on a string_list index (json keys have none)
              std::vector<std::string> elements;
              for (const auto& v : e.values) elements.push_back(std::get<std::string>(v));
              if (e.match != ArrayMatch::all) return sized(idx.contains_any(elements));
              Bitset out = idx.not_null();
              for (const auto& el : elements) out &= idx.contains(el);
              return sized(std::move(out));
            }
          }
        },
        node.expr);
  }

  const FilterTarget& t_;
  size_t n_;
};

}  // namespace

Bitset compile(const Filter& filter, const FilterTarget& target) {
  return compile(filter, target, Bitset(target.row_count(), true));
}

Bitset compile(const Filter& filter, const FilterTarget& target, const Bitset& within) {
  if (within.size() != target.row_count())
    fail(ErrorCode::internal, "compile: the row set has " + std::to_string(within.size()) +
                                  " rows, the target " + std::to_string(target.row_count()));
  return Compiler(target).run(filter.root(), within);
}

}  // namespace eagle::filter
