#pragma once
// Identifiers a client must not be able to guess (MCP session ids, answer sessions):
// bytes from the kernel's CSPRNG (getrandom), as lower-case hex.
#include <cstddef>
#include <string>

namespace eagle {

// 2 * bytes hex digits; internal error if the kernel gives no randomness.
std::string random_hex(size_t bytes);

}  // namespace eagle
