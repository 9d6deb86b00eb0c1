#include "eagle/filter/compare.h"

#include <cmath>

namespace eagle::filter {

Scalar scalar_of(const Literal& v) {
  return std::visit(
      [](const auto& x) -> Scalar {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>)
          return std::string_view(x);
        else
          return x;
      },
      v);
}

Scalar scalar_of(const Value& v) {
  return std::visit(
      [](const auto& x) -> Scalar {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>)
          return std::string_view(x);
        else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t> || std::is_same_v<T, double>)
          return x;
        else
          return std::monostate{};
      },
      v);
}

Value value_of(const Literal& v) {
  return std::visit([](const auto& x) -> Value { return x; }, v);
}

std::partial_ordering compare_numbers(int64_t a, double b) {
  if (std::isnan(b)) return std::partial_ordering::unordered;
  // 2^63 is exactly representable; every int64 lies in [-2^63, 2^63).
  constexpr double two63 = 9223372036854775808.0;
  if (b >= two63) return std::partial_ordering::less;
  if (b < -two63) return std::partial_ordering::greater;
  double t = std::trunc(b);
  auto ti = static_cast<int64_t>(t);  // exact: t is integral and in range
  if (a != ti) return a < ti ? std::partial_ordering::less : std::partial_ordering::greater;
  double frac = b - t;  // exact for doubles
  if (frac > 0) return std::partial_ordering::less;
  if (frac < 0) return std::partial_ordering::greater;
  return std::partial_ordering::equivalent;
}

int scalar_kind_rank(const Scalar& s) {
  switch (s.index()) {
    case 0: return 0;
    case 1: return 1;
    case 2:
    case 3: return 2;
    default: return 3;
  }
}

std::optional<std::partial_ordering> compare_scalars(const Scalar& a, const Scalar& b) {
  int ra = scalar_kind_rank(a), rb = scalar_kind_rank(b);
  if (ra == 0 || ra != rb) return std::nullopt;
  if (ra == 1) return std::get<bool>(a) <=> std::get<bool>(b);
  if (ra == 3) {
    int c = std::get<std::string_view>(a).compare(std::get<std::string_view>(b));
    return c < 0   ? std::partial_ordering::less
           : c > 0 ? std::partial_ordering::greater
                   : std::partial_ordering::equivalent;
  }
  const auto* ai = std::get_if<int64_t>(&a);
  const auto* bi = std::get_if<int64_t>(&b);
  if (ai && bi) return *ai <=> *bi;
  if (ai) return compare_numbers(*ai, std::get<double>(b));
  if (bi) return 0 <=> compare_numbers(*bi, std::get<double>(a));
  return std::get<double>(a) <=> std::get<double>(b);
}

bool scalar_less(const Scalar& a, const Scalar& b) {
  int ra = scalar_kind_rank(a), rb = scalar_kind_rank(b);
  if (ra != rb) return ra < rb;
  if (ra == 0) return false;
  return *compare_scalars(a, b) == std::partial_ordering::less;
}

std::string_view literal_kind_name(const Literal& v) {
  switch (v.index()) {
    case 0: return "a bool";
    case 1: return "an integer";
    case 2: return "a number";
    default: return "a string";
  }
}

}  // namespace eagle::filter
