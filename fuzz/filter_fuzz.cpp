// libFuzzer target for the filter module (built and run by scripts/fuzz_filter.sh).
// Every input must either parse against the chunk schema or fail with an
// eagle::Error. A filter that parses must give the same rows four ways: evaluate()
// row by row, compile() against scalar indexes, compile() without indexes, and the
// canonical text parsed again. Any other exception or any disagreement aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "eagle/core/error.h"
#include "eagle/core/schema.h"
#include "eagle/filter/compile.h"
#include "eagle/filter/evaluate.h"
#include "eagle/filter/parser.h"

namespace {

using namespace eagle;
using namespace eagle::filter;
using json = nlohmann::json;

struct Row {
  std::string id;
  std::vector<Value> values;
};

class RowRef : public RowView {
 public:
  const Row* row = nullptr;
  const Value& field(size_t i) const override { return row->values.at(i); }
  const std::string& id() const override { return row->id; }
};

class Target : public FilterTarget {
 public:
  Target(const CollectionSchema& schema, const std::vector<Row>& rows, bool indexed) : rows_(rows) {
    indexes_.resize(schema.fields.size());
    if (!indexed) return;
    for (size_t f = 0; f < schema.fields.size(); ++f) {
      if (!schema.fields[f].indexed) continue;
      indexes_[f] = std::make_unique<ScalarIndex>(schema.fields[f].type);
      for (size_t r = 0; r < rows.size(); ++r) indexes_[f]->add(static_cast<uint32_t>(r), rows[r].values[f]);
    }
    id_index_ = std::make_unique<ScalarIndex>(FieldType::string);
    for (size_t r = 0; r < rows.size(); ++r) id_index_->add(static_cast<uint32_t>(r), rows[r].id);
  }
  size_t row_count() const override { return rows_.size(); }
  const ScalarIndex* index(size_t f) const override { return indexes_.at(f).get(); }
  const ScalarIndex* id_index() const override { return id_index_.get(); }
  const RowView& row(uint32_t r) const override {
    cursor_.row = &rows_.at(r);
    return cursor_;
  }

 private:
  const std::vector<Row>& rows_;
  std::vector<std::unique_ptr<ScalarIndex>> indexes_;
  std::unique_ptr<ScalarIndex> id_index_;
  mutable RowRef cursor_;
};

struct Fixture {
  CollectionSchema schema = chunk_schema("c", 8);
  Params params = {{"y", 2020},  {"d", 1.5},        {"s", "pubmed"},   {"b", true},
                   {"p", "ab%"}, {"l", {"a", "b"}}, {"n", {2019, 2.5}}};
  std::vector<Row> rows;
  std::unique_ptr<Target> indexed, plain;

  Fixture() {
    auto row = [&](std::string id, const json& fields) {
      Row r{std::move(id), std::vector<Value>(schema.fields.size())};
      for (auto it = fields.begin(); it != fields.end(); ++it) {
        size_t f = *schema.field_index(it.key());
        r.values[f] = value_from_json(it.value(), schema.fields[f].type, it.key());
      }
      rows.push_back(std::move(r));
    };
    row("doc-1", {{"kb_name", "pubmed"},
                  {"document_id", "d1"},
                  {"type", "text"},
                  {"path", "/a/b"},
                  {"year", 2020},
                  {"chunk_type", "body"},
                  {"primary_drugs", {"aspirin", "b"}},
                  {"biomed_section", "methods"},
                  {"document_name", "ab%_\\x"},
                  {"connect_to", {{"k", 1}, {"s", "ab"}, {"arr", {1, "a", 2.5}}}}});
    row("doc-2", json::object());  // every field null
    row("doc-3", {{"kb_name", ""},
                  {"year", -1},
                  {"primary_drugs", json::array()},
                  {"source_type", "\xCE\xB1"},
                  {"document_name", "ab"},
                  {"connect_to", {{"k", "1"}, {"arr", "x"}}}});
    row("", {{"kb_name", "a"},
             {"year", 2019},
             {"primary_drugs", {"a", "a"}},
             {"parent_section", "b"},
             {"connect_to", nullptr},
             {"type", "ab%"}});
    indexed = std::make_unique<Target>(schema, rows, true);
    plain = std::make_unique<Target>(schema, rows, false);
  }

  std::vector<bool> evaluated(const Filter& f) const {
    std::vector<bool> out;
    RowRef ref;
    for (const auto& r : rows) {
      ref.row = &r;
      out.push_back(evaluate(f, ref));
    }
    return out;
  }
};

std::vector<bool> as_vector(const Bitset& b) {
  std::vector<bool> out(b.size());
  for (size_t i = 0; i < b.size(); ++i) out[i] = b.test(i);
  return out;
}

[[noreturn]] void disagree(std::string_view expr, const char* what) {
  std::fprintf(stderr, "filter_fuzz: %s for expression: %.*s\n", what, static_cast<int>(expr.size()),
               expr.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Fixture fx;
  const std::string_view expr(reinterpret_cast<const char*>(data), size);
  try {
    Filter f = parse(expr, fx.schema, fx.params);
    const std::vector<bool> want = fx.evaluated(f);
    if (as_vector(compile(f, *fx.indexed)) != want) disagree(expr, "compile with indexes != evaluate");
    if (as_vector(compile(f, *fx.plain)) != want) disagree(expr, "compile without indexes != evaluate");
    const std::string canonical = f.to_string();
    Filter again = parse(canonical, fx.schema);
    if (fx.evaluated(again) != want) disagree(expr, "canonical text evaluates differently");
    if (again.to_string() != canonical) disagree(expr, "canonical text is not a fixed point");
  } catch (const Error&) {
    // A clean rejection (FilterError at a position) is the expected outcome for most inputs.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "filter_fuzz: unexpected %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  }
  return 0;
}
