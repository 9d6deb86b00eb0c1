#pragma once
// Shared fixtures of the filter tests: a schema with every field type, indexed and
// not, and an in-memory table that is both a set of RowViews and a FilterTarget.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eagle/core/error.h"
#include "eagle/core/schema.h"
#include "eagle/filter/compile.h"
#include "eagle/filter/evaluate.h"
#include "eagle/filter/parser.h"
#include "eagle/filter/scalar_index.h"

namespace eagle::filter::testing {

// Field order matters: tests address values by these indexes.
enum Col : size_t {
  kTitle,
  kPath,
  kYear,
  kCount,
  kScore,
  kRatio,
  kFlag,
  kOpen,
  kDrugs,
  kTags,
  kMeta,
  kNumCols
};

inline CollectionSchema test_schema() {
  CollectionSchema s;
  s.name = "t";
  s.vector.dim = 4;
  using T = FieldType;
  s.fields = {{"title", T::string, true},      {"path", T::string, false},  {"year", T::int64, true},
              {"count", T::int64, false},      {"score", T::float64, true}, {"ratio", T::float64, false},
              {"flag", T::boolean, true},      {"open", T::boolean, false}, {"drugs", T::string_list, true},
              {"tags", T::string_list, false}, {"meta", T::json, false}};
  s.validate();
  return s;
}

struct Row {
  std::string id;
  std::vector<Value> values = std::vector<Value>(kNumCols);
};

class RowRef : public RowView {
 public:
  explicit RowRef(const Row* r = nullptr) : r_(r) {}
  void point(const Row* r) { r_ = r; }
  const Value& field(size_t i) const override { return r_->values.at(i); }
  const std::string& id() const override { return r_->id; }

 private:
  const Row* r_;
};

// Rows plus, optionally, an index on every `indexed` schema field and on the id.
class Table : public FilterTarget {
 public:
  Table(const CollectionSchema& schema, std::vector<Row> rows, bool use_indexes, bool use_id_index)
      : rows_(std::move(rows)) {
    indexes_.resize(schema.fields.size());
    if (use_indexes)
      for (size_t f = 0; f < schema.fields.size(); ++f)
        if (schema.fields[f].indexed) {
          indexes_[f] = std::make_unique<ScalarIndex>(schema.fields[f].type);
          for (size_t r = 0; r < rows_.size(); ++r)
            indexes_[f]->add(static_cast<uint32_t>(r), rows_[r].values[f]);
        }
    if (use_id_index) {
      id_index_ = std::make_unique<ScalarIndex>(FieldType::string);
      for (size_t r = 0; r < rows_.size(); ++r) id_index_->add(static_cast<uint32_t>(r), rows_[r].id);
    }
  }

  size_t row_count() const override { return rows_.size(); }
  const ScalarIndex* index(size_t f) const override { return indexes_.at(f).get(); }
  const ScalarIndex* id_index() const override { return id_index_.get(); }
  const RowView& row(uint32_t r) const override {
    cursor_.point(&rows_.at(r));
    return cursor_;
  }
  const std::vector<Row>& rows() const { return rows_; }

  // Rows where evaluate() is true: the oracle.
  std::vector<uint32_t> evaluated(const Filter& f) const {
    std::vector<uint32_t> out;
    for (size_t r = 0; r < rows_.size(); ++r)
      if (evaluate(f, RowRef(&rows_[r]))) out.push_back(static_cast<uint32_t>(r));
    return out;
  }

 private:
  std::vector<Row> rows_;
  std::vector<std::unique_ptr<ScalarIndex>> indexes_;
  std::unique_ptr<ScalarIndex> id_index_;
  mutable RowRef cursor_;
};

inline std::vector<uint32_t> bits(const Bitset& b) {
  std::vector<uint32_t> out;
  b.for_each([&](size_t i) { out.push_back(static_cast<uint32_t>(i)); });
  return out;
}

}  // namespace eagle::filter::testing
