#include "eagle/core/random_id.h"

#include <sys/random.h>

#include <vector>

#include "eagle/core/error.h"

namespace eagle {

std::string random_hex(size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0) fail(ErrorCode::internal, "getrandom failed");
    got += static_cast<size_t>(n);
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes);
  for (unsigned char b : raw) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

}  // namespace eagle
