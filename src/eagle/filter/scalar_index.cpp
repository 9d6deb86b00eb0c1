#include "eagle/filter/scalar_index.h"

#include <algorithm>
#include <cmath>

#include "eagle/core/error.h"
#include "eagle/filter/compare.h"

namespace eagle::filter {

template <typename A, typename B>
bool ScalarIndex::NumberLess::operator()(const A& a, const B& b) const {
  if constexpr (std::is_same_v<A, B>)
    return a < b;  // keys are never NaN
  else if constexpr (std::is_same_v<A, int64_t>)
    return compare_numbers(a, b) == std::partial_ordering::less;
  else
    return compare_numbers(b, a) == std::partial_ordering::greater;
}

namespace {

template <typename Rows>
void set_rows(const Rows& rows, Bitset& out) {
  rows.for_each([&](uint32_t r) { out.set(r); });
}

// Calls fn(key) with `s` as a lookup key of a dictionary keyed by K; false when no
// key of type K can equal s (another kind of value, or NaN).
template <typename K, typename Fn>
bool with_key(const Scalar& s, Fn&& fn) {
  if constexpr (std::is_same_v<K, bool>) {
    if (const auto* b = std::get_if<bool>(&s)) return fn(*b), true;
  } else if constexpr (std::is_same_v<K, std::string>) {
    if (const auto* t = std::get_if<std::string_view>(&s)) return fn(*t), true;
  } else {
    if (const auto* i = std::get_if<int64_t>(&s)) return fn(*i), true;
    if (const auto* d = std::get_if<double>(&s); d && !std::isnan(*d)) return fn(*d), true;
  }
  return false;
}

}  // namespace

ScalarIndex::ScalarIndex(FieldType type) : type_(type) {
  switch (type) {
    case FieldType::boolean: dict_.emplace<std::map<bool, Rows>>(); break;
    case FieldType::int64: dict_.emplace<std::map<int64_t, Rows, NumberLess>>(); break;
    case FieldType::float64: dict_.emplace<std::map<double, Rows, NumberLess>>(); break;
    case FieldType::string:
    case FieldType::string_list: dict_.emplace<StringDict>(); break;
    case FieldType::json:
      fail(ErrorCode::invalid_argument,
           "json fields cannot have a scalar index; filters read them row by row");
  }
}

void ScalarIndex::check_fits(uint32_t row, const Value& v) const {
  if (row < rows_)
    fail(ErrorCode::invalid_argument, "scalar index rows must be added in increasing order: row " +
                                          std::to_string(row) + " after row " + std::to_string(rows_ - 1));
  bool fits = is_null(v);
  switch (type_) {
    case FieldType::boolean: fits = fits || std::holds_alternative<bool>(v); break;
    case FieldType::int64: fits = fits || std::holds_alternative<int64_t>(v); break;
    case FieldType::float64: fits = fits || std::holds_alternative<double>(v); break;
    case FieldType::string: fits = fits || std::holds_alternative<std::string>(v); break;
    case FieldType::string_list: fits = fits || std::holds_alternative<StringList>(v); break;
    case FieldType::json: break;
  }
  if (!fits)
    fail(ErrorCode::invalid_argument, "scalar index of a " + std::string(field_type_name(type_)) +
                                          " field got a value of another type at row " + std::to_string(row));
}

void ScalarIndex::add(uint32_t row, const Value& v) {
  check_fits(row, v);  // before anything changes, so a rejected value leaves the index as it was
  rows_ = size_t{row} + 1;
  not_null_.resize(rows_);
  if (is_null(v)) return;
  auto insert = [&](auto& dict, const auto& key) {
    Rows& rows = dict[key];
    if (rows.empty() || rows.back() != row) rows.push_back(row);  // a list may repeat an element
  };
  switch (type_) {
    case FieldType::boolean: insert(std::get<std::map<bool, Rows>>(dict_), std::get<bool>(v)); break;
    case FieldType::int64:
      insert(std::get<std::map<int64_t, Rows, NumberLess>>(dict_), std::get<int64_t>(v));
      break;
    case FieldType::float64:
      // NaN has no place in an ordered dictionary; it is not null and equals nothing.
      if (!std::isnan(std::get<double>(v)))
        insert(std::get<std::map<double, Rows, NumberLess>>(dict_), std::get<double>(v));
      break;
    case FieldType::string: insert(std::get<StringDict>(dict_), std::get<std::string>(v)); break;
    case FieldType::string_list:
      for (const auto& element : std::get<StringList>(v)) insert(std::get<StringDict>(dict_), element);
      break;
    case FieldType::json: break;
  }
  not_null_.set(row);
}

void ScalarIndex::Batch::add(uint32_t row, const Value& v) {
  if (index_.type_ != FieldType::string && index_.type_ != FieldType::string_list) {
    index_.add(row, v);
    next_row_ = index_.rows_;
    return;
  }
  if (row < next_row_)
    fail(ErrorCode::invalid_argument, "scalar index rows must be added in increasing order: row " +
                                          std::to_string(row) + " after row " + std::to_string(next_row_ - 1));
  index_.check_fits(row, v);
  next_row_ = size_t{row} + 1;
  if (is_null(v)) return;
  not_null_rows_.push_back(row);
  auto keep = [&](const std::string& key) {
    if (!runs_.empty() && key_of(runs_.back()) == key) {
      ++runs_.back().count;
    } else {
      uint64_t prefix = 0;
      for (size_t i = 0; i < 8; ++i)
        prefix = (prefix << 8) | (i < key.size() ? static_cast<uint8_t>(key[i]) : 0);
      runs_.push_back(
          Run{prefix, keys_.size(), static_cast<uint32_t>(key.size()), static_cast<uint32_t>(rows_.size()), 1});
      keys_ += key;
    }
    rows_.push_back(row);
  };
  if (const auto* s = std::get_if<std::string>(&v))
    keep(*s);
  else
    for (const auto& element : std::get<StringList>(v)) keep(element);
}

void ScalarIndex::Batch::finish() {
  if (next_row_ <= index_.rows_) return;
  // By key, runs of one key kept in row order (stable), so each key's rows come out
  // increasing as add() keeps them. A merge sort: ids counted up in insertion order
  // ("r0", "r1", ... "r999999") drove std::sort's pivots into its heap-sort fallback.
  std::stable_sort(runs_.begin(), runs_.end(), [&](const Run& a, const Run& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;  // byte order, as the full comparison
    return key_of(a) < key_of(b);
  });
  std::vector<std::pair<std::string_view, Rows>> entries;
  entries.reserve(runs_.size());
  for (const Run& run : runs_) {
    const std::string_view key = key_of(run);
    if (entries.empty() || entries.back().first != key) entries.emplace_back(key, Rows{});
    Rows& rows = entries.back().second;
    for (uint32_t i = run.first; i < run.first + run.count; ++i)
      if (rows.empty() || rows.back() != rows_[i]) rows.push_back(rows_[i]);  // a list may repeat an element
  }
  std::get<StringDict>(index_.dict_).insert_sorted(entries, [](Rows& existing, Rows&& added) {
    added.for_each([&](uint32_t r) { existing.push_back(r); });  // every added row is past the existing ones
  });
  index_.rows_ = next_row_;
  index_.not_null_.resize(index_.rows_);
  for (uint32_t r : not_null_rows_) index_.not_null_.set(r);
  runs_.clear();
  rows_.clear();
  keys_.clear();
  not_null_rows_.clear();
}

size_t ScalarIndex::term_count() const {
  return std::visit([](const auto& dict) { return dict.size(); }, dict_);
}

void ScalarIndex::require_scalar(const char* what) const {
  if (type_ == FieldType::string_list)
    fail(ErrorCode::internal, std::string("ScalarIndex::") + what + " does not apply to a string_list index");
}

void ScalarIndex::require_list(const char* what) const {
  if (type_ != FieldType::string_list)
    fail(ErrorCode::internal, std::string("ScalarIndex::") + what + " needs a string_list index, not " +
                                  std::string(field_type_name(type_)));
}

void ScalarIndex::collect(const Value& v, Bitset& out) const {
  std::visit(
      [&](const auto& dict) {
        using D = std::decay_t<decltype(dict)>;
        if constexpr (std::is_same_v<D, StringDict>) {
          with_key<std::string>(scalar_of(v), [&](std::string_view key) {
            if (const Rows* rows = dict.find(key)) set_rows(*rows, out);
          });
        } else {
          with_key<typename D::key_type>(scalar_of(v), [&](const auto& key) {
            auto it = dict.find(key);
            if (it != dict.end()) set_rows(it->second, out);
          });
        }
      },
      dict_);
}

Bitset ScalarIndex::equal(const Value& v) const {
  require_scalar("equal");
  Bitset out(rows_);
  collect(v, out);
  return out;
}

Bitset ScalarIndex::equal_any(const std::vector<Value>& values) const {
  require_scalar("equal_any");
  Bitset out(rows_);
  for (const auto& v : values) collect(v, out);
  return out;
}

Bitset ScalarIndex::range(const std::optional<Value>& lower, bool lower_inclusive,
                          const std::optional<Value>& upper, bool upper_inclusive) const {
  require_scalar("range");
  Bitset out(rows_);
  if (lower && upper) {
    // An empty interval would put the first iterator past the last one.
    auto ord = compare_scalars(scalar_of(*lower), scalar_of(*upper));
    if (!ord || *ord == std::partial_ordering::greater || *ord == std::partial_ordering::unordered ||
        (*ord == std::partial_ordering::equivalent && !(lower_inclusive && upper_inclusive)))
      return out;
  }
  std::visit(
      [&](const auto& dict) {
        using D = std::decay_t<decltype(dict)>;
        if constexpr (std::is_same_v<D, StringDict>) {
          std::optional<std::string_view> lo, hi;
          if (lower && !with_key<std::string>(scalar_of(*lower), [&](std::string_view k) { lo = k; })) return;
          if (upper && !with_key<std::string>(scalar_of(*upper), [&](std::string_view k) { hi = k; })) return;
          dict.for_each_between(lo, lower_inclusive, hi, upper_inclusive,
                                [&](std::string_view, const Rows& rows) { set_rows(rows, out); });
          return;
        } else {
          using K = typename D::key_type;
          auto first = dict.begin(), last = dict.end();
          if (lower && !with_key<K>(scalar_of(*lower), [&](const auto& k) {
                first = lower_inclusive ? dict.lower_bound(k) : dict.upper_bound(k);
              }))
            return;
          if (upper && !with_key<K>(scalar_of(*upper), [&](const auto& k) {
                last = upper_inclusive ? dict.upper_bound(k) : dict.lower_bound(k);
              }))
            return;
          for (auto it = first; it != last; ++it) set_rows(it->second, out);
        }
      },
      dict_);
  return out;
}

Bitset ScalarIndex::matching_terms(const std::function<bool(std::string_view)>& predicate,
                                   std::string_view prefix) const {
  if (type_ != FieldType::string)
    fail(ErrorCode::internal,
         "ScalarIndex::matching_terms needs a string index, not " + std::string(field_type_name(type_)));
  Bitset out(rows_);
  std::get<StringDict>(dict_).for_each_with_prefix(prefix, [&](std::string_view key, const Rows& rows) {
    if (predicate(key)) set_rows(rows, out);
  });
  return out;
}

Bitset ScalarIndex::contains(std::string_view element) const {
  require_list("contains");
  Bitset out(rows_);
  if (const Rows* rows = std::get<StringDict>(dict_).find(element)) set_rows(*rows, out);
  return out;
}

Bitset ScalarIndex::contains_any(const std::vector<std::string>& elements) const {
  require_list("contains_any");
  Bitset out(rows_);
  const auto& dict = std::get<StringDict>(dict_);
  for (const auto& e : elements)
    if (const Rows* rows = dict.find(e)) set_rows(*rows, out);
  return out;
}

Bitset ScalarIndex::nulls() const {
  Bitset out = not_null_;
  out.flip();
  return out;
}

}  // namespace eagle::filter
