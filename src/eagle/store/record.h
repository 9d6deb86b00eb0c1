#pragma once
// One row of a collection as written and read: id, text, vector, typed fields.
#include <string>
#include <vector>

#include "eagle/core/value.h"

namespace eagle::store {

struct Record {
  std::string id;
  std::string text;
  std::vector<float> vector;
  std::vector<Value> values;  // one per schema field, in schema order (null when absent)
};

}  // namespace eagle::store
