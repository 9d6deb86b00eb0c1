// Property test: random schema-conforming rows (nulls, NaN, lists, json) and
// thousands of random expressions generated from the grammar as text. Each
// generated expression carries its own meaning, written here independently of the
// library; evaluate() must agree with it on every row, and compile() must agree with
// evaluate() on every target shape (all indexes, none, no id index, indexes that
// stop early). The canonical text must parse back to the same meaning.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "filter_test_support.h"

using namespace eagle;
using namespace eagle::filter;
using namespace eagle::filter::testing;
using json = nlohmann::json;

namespace {

using Pred = std::function<bool(const Row&)>;

struct Expr {
  std::string text;
  Pred holds;
};

// ---- an independent reading of values ---------------------------------------

// A scalar as the oracle sees it: numbers as doubles (the generated values are
// small enough to be exact), or nullopt for null and non-scalars.
struct Scal {
  enum Kind { boolean, number, string } kind;
  bool b = false;
  double d = 0;
  std::string s;
};

Scal boolean(bool b) {
  return {Scal::boolean, b, 0, {}};
}
Scal number(double d) {
  return {Scal::number, false, d, {}};
}
Scal text(std::string s) {
  return {Scal::string, false, 0, std::move(s)};
}

std::optional<Scal> scal_of_value(const Value& v) {
  if (const auto* b = std::get_if<bool>(&v)) return boolean(*b);
  if (const auto* i = std::get_if<int64_t>(&v)) return number(static_cast<double>(*i));
  if (const auto* d = std::get_if<double>(&v)) return number(*d);
  if (const auto* s = std::get_if<std::string>(&v)) return text(*s);
  return std::nullopt;
}

std::optional<Scal> scal_of_json(const json* j) {
  if (!j) return std::nullopt;
  if (j->is_boolean()) return boolean(j->get<bool>());
  if (j->is_number()) return number(j->get<double>());
  if (j->is_string()) return text(j->get<std::string>());
  return std::nullopt;
}

const json* meta_member(const Row& r, const std::string& key) {
  const auto* j = std::get_if<json>(&r.values[kMeta]);
  if (!j || !j->is_object() || !j->contains(key)) return nullptr;
  return &(*j)[key];
}

// Comparison with IEEE semantics for numbers: NaN makes everything false but !=.
bool compare(const std::optional<Scal>& a, const std::string& op, const Scal& b) {
  if (!a || a->kind != b.kind) return false;
  int c = 0;
  if (a->kind == Scal::number) {
    if (op == "==") return a->d == b.d;
    if (op == "!=") return a->d != b.d;
    if (op == "<") return a->d < b.d;
    if (op == "<=") return a->d <= b.d;
    if (op == ">") return a->d > b.d;
    return a->d >= b.d;
  }
  if (a->kind == Scal::string)
    c = a->s.compare(b.s);
  else
    c = static_cast<int>(a->b) - static_cast<int>(b.b);
  if (op == "==") return c == 0;
  if (op == "!=") return c != 0;
  if (op == "<") return c < 0;
  if (op == "<=") return c <= 0;
  if (op == ">") return c > 0;
  return c >= 0;
}

std::vector<uint32_t> code_points(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += n;
  }
  return out;
}

// A like pattern as code points; -1 is '%' and -2 is '_'.
using Pattern = std::vector<int64_t>;

bool like(const Pattern& p, size_t pi, const std::vector<uint32_t>& s, size_t si) {
  if (pi == p.size()) return si == s.size();
  if (p[pi] == -1) {
    for (size_t k = si; k <= s.size(); ++k)
      if (like(p, pi + 1, s, k)) return true;
    return false;
  }
  if (si == s.size()) return false;
  if (p[pi] == -2 || p[pi] == static_cast<int64_t>(s[si])) return like(p, pi + 1, s, si + 1);
  return false;
}

// ---- random rows ----------------------------------------------------------------

const std::vector<std::string> kWords = {
    "",  "a", "ab", "abc", "b", "ba", "a%b", "a_b", "a\\b", "it's", "q\"t", "\xCE\xB1", "\xCE\xB1\xCE\xB2",
    "Z", "%", "_"};
const std::vector<std::string> kElements = {"p", "q", "r", "s"};
const std::vector<double> kDoubles = {-1.5, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 2.5};

class Random {
 public:
  explicit Random(uint64_t seed) : rng_(seed) {}
  size_t below(size_t n) { return static_cast<size_t>(rng_() % n); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }
  int64_t small_int() { return static_cast<int64_t>(below(7)) - 3; }

 private:
  std::mt19937_64 rng_;
};

Row random_row(Random& rnd, size_t i) {
  Row r;
  r.id = "doc-" + std::to_string(i % 7) + "-" + std::to_string(i);
  auto maybe = [&](Value v) { return rnd.chance(0.2) ? Value{} : v; };
  auto list = [&] {
    StringList l;
    for (size_t k = rnd.below(4); k > 0; --k) l.push_back(rnd.pick(kElements));
    return l;
  };
  r.values[kTitle] = maybe(rnd.pick(kWords));
  r.values[kPath] = maybe(rnd.pick(kWords));
  r.values[kYear] = maybe(rnd.small_int());
  r.values[kCount] = maybe(rnd.small_int());
  r.values[kScore] = maybe(rnd.chance(0.05) ? std::numeric_limits<double>::quiet_NaN() : rnd.pick(kDoubles));
  r.values[kRatio] = maybe(rnd.chance(0.5) ? static_cast<double>(rnd.small_int()) : rnd.pick(kDoubles));
  r.values[kFlag] = maybe(rnd.chance(0.5));
  r.values[kOpen] = maybe(rnd.chance(0.5));
  r.values[kDrugs] = maybe(list());
  r.values[kTags] = maybe(list());
  json meta = json::object();
  switch (rnd.below(6)) {
    case 0: meta["k"] = rnd.small_int(); break;
    case 1: meta["k"] = rnd.pick(kDoubles); break;
    case 2: meta["k"] = rnd.pick(kWords); break;
    case 3: meta["k"] = rnd.chance(0.5); break;
    case 4: meta["k"] = nullptr; break;
    default: break;  // no key
  }
  if (rnd.chance(0.7)) {
    json arr = json::array();
    for (size_t k = rnd.below(4); k > 0; --k) {
      if (rnd.chance(0.5))
        arr.push_back(rnd.small_int());
      else
        arr.push_back(rnd.pick(kElements));
    }
    meta["arr"] = arr;
  }
  r.values[kMeta] = rnd.chance(0.1) ? Value{} : Value(meta);
  return r;
}

// ---- random expressions -----------------------------------------------------------

class ExprGen {
 public:
  explicit ExprGen(Random& rnd) : rnd_(rnd) {}

  Expr expr(int depth) {
    size_t k = depth <= 0 ? 0 : rnd_.below(10);
    if (k < 5) return maybe_parenthesised(leaf());
    if (k < 7) return junction(depth, true);
    if (k < 9) return junction(depth, false);
    Expr inner = expr(depth - 1);
    Pred p = inner.holds;
    std::string op = rnd_.pick(std::vector<std::string>{"not ", "NOT ", "Not ", "!", "! "});
    return {op + "(" + inner.text + ")", [p](const Row& r) { return !p(r); }};
  }

 private:
  Expr maybe_parenthesised(Expr e) {
    if (rnd_.chance(0.2)) e.text = "(" + e.text + ")";
    return e;
  }

  Expr junction(int depth, bool is_and) {
    size_t n = 2 + rnd_.below(3);
    std::vector<Expr> parts;
    for (size_t i = 0; i < n; ++i) parts.push_back(expr(depth - 1));
    std::string text;
    std::vector<Pred> preds;
    for (size_t i = 0; i < n; ++i) {
      if (i) {
        text += is_and ? rnd_.pick(std::vector<std::string>{" and ", " AND ", " && ", "&&", " And "})
                       : rnd_.pick(std::vector<std::string>{" or ", " OR ", " || ", "||", " Or "});
      }
      text += "(" + parts[i].text + ")";
      preds.push_back(parts[i].holds);
    }
    if (is_and)
      return {text, [preds](const Row& r) {
                for (const auto& p : preds)
                  if (!p(r)) return false;
                return true;
              }};
    return {text, [preds](const Row& r) {
              for (const auto& p : preds)
                if (p(r)) return true;
              return false;
            }};
  }

  std::string quote(const std::string& s) {
    char q = rnd_.chance(0.5) ? '"' : '\'';
    std::string out(1, q);
    for (char c : s) {
      if (c == q || c == '\\') out += '\\';
      out += c;
    }
    return out + q;
  }

  std::string number_text(double d) {
    if (d == 0 && std::signbit(d)) return "-0.0";
    if (d == std::floor(d) && rnd_.chance(0.5)) return std::to_string(static_cast<int64_t>(d));
    char buf[32];
    std::snprintf(buf, sizeof buf, rnd_.chance(0.5) ? "%.2f" : "%.3e", d);
    return buf;
  }

  std::string op() { return rnd_.pick(std::vector<std::string>{"==", "!=", "<", "<=", ">", ">="}); }
  static std::string mirror(const std::string& op) {
    if (op == "<") return ">";
    if (op == "<=") return ">=";
    if (op == ">") return "<";
    if (op == ">=") return "<=";
    return op;
  }

  // A literal for a field of kind `k`, as text and as the oracle's scalar.
  std::pair<std::string, Scal> literal(Scal::Kind k) {
    if (k == Scal::boolean) {
      bool b = rnd_.chance(0.5);
      return {rnd_.pick(std::vector<std::string>{b ? "true" : "false", b ? "TRUE" : "False"}), boolean(b)};
    }
    if (k == Scal::number) {
      double d = rnd_.chance(0.5) ? static_cast<double>(rnd_.small_int()) : rnd_.pick(kDoubles);
      return {number_text(d), number(d)};
    }
    const std::string& w = rnd_.pick(kWords);
    return {quote(w), text(w)};
  }

  Expr leaf() {
    switch (rnd_.below(12)) {
      case 0: return scalar_leaf("title", kTitle, Scal::string);
      case 1: return scalar_leaf("path", kPath, Scal::string);
      case 2: return scalar_leaf("year", kYear, Scal::number);
      case 3: return scalar_leaf("count", kCount, Scal::number);
      case 4: return scalar_leaf("score", kScore, Scal::number);
      case 5: return scalar_leaf("ratio", kRatio, Scal::number);
      case 6: return scalar_leaf("flag", kFlag, Scal::boolean);
      case 7: return scalar_leaf("open", kOpen, Scal::boolean);
      case 8: return list_leaf("drugs", kDrugs);
      case 9: return list_leaf("tags", kTags);
      case 10: return scalar_leaf("id", kNumCols, Scal::string);
      default: return json_leaf();
    }
  }

  // Reads field `col` of a row (kNumCols = the id).
  static std::optional<Scal> read(const Row& r, size_t col) {
    if (col == kNumCols) return text(r.id);
    return scal_of_value(r.values[col]);
  }

  Expr scalar_leaf(const std::string& name, size_t col, Scal::Kind kind) {
    const bool orderable = kind != Scal::boolean;
    switch (rnd_.below(orderable ? 6 : 4)) {
      case 0: {  // field op literal
        std::string o = orderable ? op() : rnd_.pick(std::vector<std::string>{"==", "!="});
        auto [text, lit] = literal(kind);
        return {name + " " + o + " " + text, [=](const Row& r) { return compare(read(r, col), o, lit); }};
      }
      case 1: {  // literal op field
        std::string o = orderable ? op() : rnd_.pick(std::vector<std::string>{"==", "!="});
        auto [text, lit] = literal(kind);
        std::string m = mirror(o);
        return {text + o + name, [=](const Row& r) { return compare(read(r, col), m, lit); }};
      }
      case 2: {  // in / not in
        bool negated = rnd_.chance(0.5);
        std::vector<Scal> lits;
        std::string text =
            name + (negated ? rnd_.pick(std::vector<std::string>{" not in ", " NOT IN "}) : " in ") + "[";
        for (size_t i = rnd_.below(4); i > 0; --i) {
          auto [t, lit] = literal(kind);
          text += (lits.empty() ? "" : ", ") + t;
          lits.push_back(lit);
        }
        return {text + "]", [=](const Row& r) {
                  auto v = read(r, col);
                  if (!v) return false;
                  bool found = false;
                  for (const auto& l : lits) found = found || compare(v, "==", l);
                  return negated ? !found : found;
                }};
      }
      case 3: {  // is [not] null
        bool negated = rnd_.chance(0.5);
        return {name + (negated ? " is not null" : " IS NULL"), [=](const Row& r) {
                  bool null = col != kNumCols && is_null(r.values[col]);
                  return null != negated;
                }};
      }
      case 4: {  // chained range
        auto [t1, lo] = literal(kind);
        auto [t2, hi] = literal(kind);
        bool li = rnd_.chance(0.5), hinc = rnd_.chance(0.5);
        std::string text = rnd_.chance(0.5)
                               ? t1 + (li ? " <= " : " < ") + name + (hinc ? " <= " : " < ") + t2
                               : t2 + (hinc ? " >= " : " > ") + name + (li ? " >= " : " > ") + t1;
        return {text, [=](const Row& r) {
                  auto v = read(r, col);
                  return compare(v, li ? ">=" : ">", lo) && compare(v, hinc ? "<=" : "<", hi);
                }};
      }
      default: {
        if (kind != Scal::string) return scalar_leaf(name, col, kind);
        return like_leaf(name, [col](const Row& r) { return read(r, col); });
      }
    }
  }

  Expr like_leaf(const std::string& field_text, std::function<std::optional<Scal>(const Row&)> get) {
    Pattern p;
    std::string body;
    for (size_t i = rnd_.below(5); i > 0; --i) {
      switch (rnd_.below(7)) {
        case 0: p.push_back(-1), body += '%'; break;
        case 1: p.push_back(-2), body += '_'; break;
        case 2: p.push_back('%'), body += "\\%"; break;
        case 3: p.push_back('_'), body += "\\_"; break;
        case 4: p.push_back('\\'), body += "\\\\"; break;
        case 5: p.push_back(0x3B1), body += "\xCE\xB1"; break;
        default: {
          char c = "abZ'"[rnd_.below(4)];
          p.push_back(c);
          if (c == '\'')
            body += "\\'";
          else
            body += c;
        }
      }
    }
    return {field_text + rnd_.pick(std::vector<std::string>{" like ", " LIKE "}) + "\"" + body + "\"",
            [=](const Row& r) {
              auto v = get(r);
              return v && v->kind == Scal::string && like(p, 0, code_points(v->s), 0);
            }};
  }

  Expr list_leaf(const std::string& name, size_t col) {
    auto elements = [col](const Row& r) -> const StringList* {
      return std::get_if<StringList>(&r.values[col]);
    };
    switch (rnd_.below(4)) {
      case 0: {
        std::string e = rnd_.pick(kElements);
        return {"array_contains(" + name + ", " + quote(e) + ")", [=](const Row& r) {
                  const auto* l = elements(r);
                  return l && std::find(l->begin(), l->end(), e) != l->end();
                }};
      }
      case 1:
      case 2: {
        bool all = rnd_.chance(0.5);
        std::vector<std::string> want;
        std::string text = std::string(all ? "array_contains_all(" : "ARRAY_CONTAINS_ANY(") + name + ", [";
        for (size_t i = 1 + rnd_.below(3); i > 0; --i) {
          want.push_back(rnd_.pick(kElements));
          text += (want.size() > 1 ? ", " : "") + quote(want.back());
        }
        return {text + "])", [=](const Row& r) {
                  const auto* l = elements(r);
                  if (!l) return false;
                  size_t found = 0;
                  for (const auto& w : want) found += std::find(l->begin(), l->end(), w) != l->end();
                  return all ? found == want.size() : found > 0;
                }};
      }
      default: {
        bool negated = rnd_.chance(0.5);
        return {name + (negated ? " is not null" : " is null"),
                [=](const Row& r) { return is_null(r.values[col]) != negated; }};
      }
    }
  }

  Expr json_leaf() {
    auto k = [](const Row& r) { return scal_of_json(meta_member(r, "k")); };
    switch (rnd_.below(5)) {
      case 0: {
        Scal::Kind kind = static_cast<Scal::Kind>(rnd_.below(3));
        std::string o = kind == Scal::boolean ? rnd_.pick(std::vector<std::string>{"==", "!="}) : op();
        auto [text, lit] = literal(kind);
        return {"meta[\"k\"] " + o + " " + text, [=](const Row& r) { return compare(k(r), o, lit); }};
      }
      case 1: {
        bool negated = rnd_.chance(0.5);
        return {std::string("meta['k'] is ") + (negated ? "not " : "") + "null", [=](const Row& r) {
                  const json* j = meta_member(r, "k");
                  return (!j || j->is_null()) != negated;
                }};
      }
      case 2: {
        Scal::Kind kind = static_cast<Scal::Kind>(rnd_.below(3));
        bool negated = rnd_.chance(0.5);
        std::vector<Scal> lits;
        std::string text = std::string("meta[\"k\"]") + (negated ? " not in [" : " in [");
        for (size_t i = rnd_.below(3); i > 0; --i) {
          auto [t, lit] = literal(kind);
          text += (lits.empty() ? "" : ", ") + t;
          lits.push_back(lit);
        }
        return {text + "]", [=](const Row& r) {
                  auto v = k(r);
                  if (!v) return false;
                  // `x not in [a, b]` is `x != a and x != b`: a member of another kind is false.
                  bool found = false, comparable = true;
                  for (const auto& l : lits) {
                    found = found || compare(v, "==", l);
                    comparable = comparable && v->kind == l.kind;
                  }
                  return negated ? comparable && !found : found;
                }};
      }
      case 3: {
        auto [text, lit] = literal(rnd_.chance(0.5) ? Scal::number : Scal::string);
        return {"array_contains(meta[\"arr\"], " + text + ")", [=](const Row& r) {
                  const json* a = meta_member(r, "arr");
                  if (!a || !a->is_array()) return false;
                  for (const auto& x : *a)
                    if (compare(scal_of_json(&x), "==", lit)) return true;
                  return false;
                }};
      }
      default: return like_leaf("meta[\"k\"]", k);
    }
  }

  Random& rnd_;
};

// Indexes for every indexed field that only get the non-null rows: trailing nulls
// leave them shorter than the table, which compile() must read as null.
class SparseTable : public Table {
 public:
  SparseTable(const CollectionSchema& schema, const std::vector<Row>& rows)
      : Table(schema, rows, false, false) {
    indexes_.resize(schema.fields.size());
    for (size_t f = 0; f < schema.fields.size(); ++f) {
      if (!schema.fields[f].indexed) continue;
      indexes_[f] = std::make_unique<ScalarIndex>(schema.fields[f].type);
      for (size_t r = 0; r < rows.size(); ++r)
        if (!is_null(rows[r].values[f])) indexes_[f]->add(static_cast<uint32_t>(r), rows[r].values[f]);
    }
  }
  const ScalarIndex* index(size_t f) const override { return indexes_.at(f).get(); }

 private:
  std::vector<std::unique_ptr<ScalarIndex>> indexes_;
};

}  // namespace

TEST(FilterProperty, CompileEqualsEvaluateEqualsIndependentMeaning) {
  const CollectionSchema schema = test_schema();
  Random rnd(20240611);
  std::vector<Row> rows;
  for (size_t i = 0; i < 240; ++i) rows.push_back(random_row(rnd, i));
  // The last rows are all null in indexed fields, so SparseTable's indexes end early.
  for (size_t i = 0; i < 8; ++i) {
    Row r = random_row(rnd, 240 + i);
    for (size_t f = 0; f < schema.fields.size(); ++f)
      if (schema.fields[f].indexed) r.values[f] = Value{};
    rows.push_back(r);
  }
  const Table all(schema, rows, true, true);
  const Table none(schema, rows, false, false);
  const Table no_id(schema, rows, true, false);
  const SparseTable sparse(schema, rows);
  const std::vector<const Table*> targets = {&all, &none, &no_id, &sparse};

  Bitset within(rows.size());
  for (size_t r = 0; r < rows.size(); ++r)
    if (rnd.chance(0.6)) within.set(r);

  ExprGen gen(rnd);
  size_t nonempty = 0, not_all = 0;
  for (int n = 0; n < 3000; ++n) {
    Expr e = gen.expr(1 + static_cast<int>(rnd.below(4)));
    std::vector<uint32_t> want;
    for (uint32_t r = 0; r < rows.size(); ++r)
      if (e.holds(rows[r])) want.push_back(r);
    std::optional<Filter> f;
    try {
      f = parse(e.text, schema);
    } catch (const Error& err) {
      FAIL() << "generated expression did not parse: " << e.text << "\n" << err.what();
    }
    ASSERT_EQ(all.evaluated(*f), want) << e.text << "\ncanonical: " << f->to_string();
    std::vector<uint32_t> want_within;
    for (uint32_t r : want)
      if (within.test(r)) want_within.push_back(r);
    for (size_t t = 0; t < targets.size(); ++t) {
      ASSERT_EQ(bits(compile(*f, *targets[t])), want) << "target " << t << ": " << e.text;
      ASSERT_EQ(bits(compile(*f, *targets[t], within)), want_within) << "target " << t << ": " << e.text;
    }
    Filter again = parse(f->to_string(), schema);
    ASSERT_EQ(again.to_string(), f->to_string()) << e.text;
    ASSERT_EQ(all.evaluated(again), want) << e.text << "\ncanonical: " << f->to_string();
    nonempty += !want.empty();
    not_all += want.size() < rows.size();
  }
  // The generator must produce selective expressions, or the test proves little.
  EXPECT_GT(nonempty, 1500u);
  EXPECT_GT(not_all, 1500u);
}
