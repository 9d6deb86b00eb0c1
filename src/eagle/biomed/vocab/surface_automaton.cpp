#include "eagle/biomed/vocab/surface_automaton.h"

#include <algorithm>
#include <numeric>

#include "eagle/core/error.h"

namespace eagle::biomed {
namespace {

constexpr uint32_t kNone = SurfaceAutomaton::kNone;
constexpr uint32_t kRootCheck = 0xFFFFFFFEu;  // check_[0]: the root has no parent

// Free-slot bookkeeping while the double array is laid out: next_free_[i] leads
// (union-find with path compression) to the first free slot >= i.
class SlotAllocator {
 public:
  explicit SlotAllocator(std::vector<uint32_t>& check) : check_(check) { grow(1024); }

  void grow(size_t n) {
    size_t old = next_free_.size();
    if (n <= old) return;
    size_t size = std::max(n, old * 2);
    next_free_.resize(size);
    std::iota(next_free_.begin() + static_cast<ptrdiff_t>(old), next_free_.end(), static_cast<uint32_t>(old));
    check_.resize(size, kNone);
  }

  uint32_t find_free(uint32_t i) {
    grow(size_t{i} + 1);
    uint32_t r = i;
    while (next_free_[r] != r) {
      r = next_free_[r];
      if (r >= next_free_.size()) grow(size_t{r} + 1);
    }
    // Path compression: everything on the way now points at r.
    while (next_free_[i] != r && i != r) {
      uint32_t n = next_free_[i];
      next_free_[i] = r;
      i = n;
    }
    return r;
  }

  void occupy(uint32_t slot) { next_free_[slot] = slot + 1; }

 private:
  std::vector<uint32_t>& check_;
  std::vector<uint32_t> next_free_;
};

}  // namespace

SurfaceAutomaton::SurfaceAutomaton()
    : base_(std::vector<uint32_t>{0}),
      check_(std::vector<uint32_t>{kRootCheck}),
      fail_(std::vector<uint32_t>{0}),
      out_(std::vector<uint32_t>{kNone}),
      dict_(std::vector<uint32_t>{kNone}) {}

SurfaceAutomaton SurfaceAutomaton::build(std::vector<SurfaceKey> keys) {
  std::sort(keys.begin(), keys.end(),
            [](const SurfaceKey& a, const SurfaceKey& b) { return a.normalized < b.normalized; });
  SurfaceAutomaton a;
  std::vector<SurfacePattern> patterns;
  std::string forms;
  patterns.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto& k = keys[i];
    if (k.normalized.empty() || k.normalized.size() > kMaxSurfaceBytes || k.form.size() > kMaxSurfaceBytes)
      fail(ErrorCode::invalid_argument, "surface '" + k.form + "' is empty or longer than 65535 bytes");
    if (i > 0 && keys[i - 1].normalized == k.normalized)
      fail(ErrorCode::invalid_argument, "duplicate normalised surface '" + k.normalized + "'");
    SurfacePattern p;
    p.entity = k.entity;
    p.form_offset = static_cast<uint32_t>(forms.size());
    p.form_size = static_cast<uint16_t>(k.form.size());
    p.length = static_cast<uint16_t>(k.normalized.size());
    p.type = static_cast<uint8_t>(k.type);
    p.flags = k.flags;
    patterns.push_back(p);
    forms += k.form;
  }

  // Lay the trie out depth first from the sorted keys: a node covers the key range
  // [lo, hi) sharing its first `depth` bytes; its children are the distinct next bytes.
  std::vector<uint32_t> check{kRootCheck};
  SlotAllocator slots(check);
  slots.occupy(0);
  std::vector<uint32_t> base(check.size(), 0), out(check.size(), kNone);
  std::vector<uint32_t> edge_begin(check.size(), 0);  // children of s: edges[edge_begin[s] ..] (count below)
  std::vector<uint32_t> edges;                        // child slots, grouped by parent
  std::vector<uint16_t> edge_count(check.size(), 0);
  struct Item {
    uint32_t state, lo, hi, depth;
  };
  std::vector<Item> stack;
  if (!keys.empty()) stack.push_back({0, 0, static_cast<uint32_t>(keys.size()), 0});
  std::vector<std::pair<unsigned char, std::pair<uint32_t, uint32_t>>> groups;
  uint32_t max_slot = 0;
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    if (keys[it.lo].normalized.size() == it.depth) out[it.state] = it.lo++;
    if (it.lo == it.hi) continue;
    groups.clear();
    for (uint32_t i = it.lo; i < it.hi;) {
      auto c = static_cast<unsigned char>(keys[i].normalized[it.depth]);
      uint32_t j = i + 1;
      while (j < it.hi && static_cast<unsigned char>(keys[j].normalized[it.depth]) == c) ++j;
      groups.push_back({c, {i, j}});
      i = j;
    }
    const uint32_t c0 = groups.front().first;
    uint32_t p = slots.find_free(std::max<uint32_t>(c0, 1));
    uint32_t b;
    for (;;) {
      b = p - c0;
      slots.grow(size_t{b} + 256);
      bool ok = true;
      for (size_t g = 1; g < groups.size() && ok; ++g) ok = check[b + groups[g].first] == kNone;
      if (ok) break;
      p = slots.find_free(p + 1);
    }
    if (check.size() > base.size()) {
      base.resize(check.size(), 0);
      out.resize(check.size(), kNone);
      edge_begin.resize(check.size(), 0);
      edge_count.resize(check.size(), 0);
    }
    base[it.state] = b;
    edge_begin[it.state] = static_cast<uint32_t>(edges.size());
    edge_count[it.state] = static_cast<uint16_t>(groups.size());
    for (const auto& g : groups) {
      uint32_t t = b + g.first;
      check[t] = it.state;
      slots.occupy(t);
      edges.push_back(t);
      max_slot = std::max(max_slot, t);
    }
    for (size_t g = groups.size(); g-- > 0;)
      stack.push_back({b + groups[g].first, groups[g].second.first, groups[g].second.second, it.depth + 1});
  }
  size_t n = size_t{max_slot} + 1;
  check.resize(n);
  base.resize(n);
  out.resize(n);
  // Links, breadth first so a state's failure target is final before its children's.
  std::vector<uint32_t> fail(n, 0), dict(n, kNone);
  std::vector<uint32_t> queue{0};
  queue.reserve(n);
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    uint32_t s = queue[qi];
    for (uint32_t e = 0; e < edge_count[s]; ++e) {
      uint32_t t = edges[edge_begin[s] + e];
      auto c = static_cast<unsigned char>(t - base[s]);
      uint32_t f = 0;
      if (s != 0) {
        uint32_t g = fail[s];
        for (;;) {
          uint64_t u = uint64_t{base[g]} + c;
          if (u < n && check[u] == g) {
            f = static_cast<uint32_t>(u);
            break;
          }
          if (g == 0) break;
          g = fail[g];
        }
      }
      fail[t] = f;
      dict[t] = out[f] != kNone ? f : dict[f];
      queue.push_back(t);
    }
  }
  a.base_ = FlatArray<uint32_t>(std::move(base));
  a.check_ = FlatArray<uint32_t>(std::move(check));
  a.fail_ = FlatArray<uint32_t>(std::move(fail));
  a.out_ = FlatArray<uint32_t>(std::move(out));
  a.dict_ = FlatArray<uint32_t>(std::move(dict));
  a.patterns_ = FlatArray<SurfacePattern>(std::move(patterns));
  a.forms_ = FlatArray<char>(std::vector<char>(forms.begin(), forms.end()));
  return a;
}

std::optional<uint32_t> SurfaceAutomaton::find(std::string_view normalized) const {
  uint32_t s = 0;
  for (char ch : normalized) {
    uint64_t t = uint64_t{base_[s]} + static_cast<unsigned char>(ch);
    if (t >= check_.size() || check_[t] != s) return std::nullopt;
    s = static_cast<uint32_t>(t);
  }
  if (out_[s] == kNone) return std::nullopt;
  return out_[s];
}

std::vector<std::string> SurfaceAutomaton::normalized_patterns() const {
  std::vector<std::string> result(patterns_.size());
  for (uint32_t s = 1; s < check_.size(); ++s) {
    if (out_[s] == kNone) continue;
    std::string& str = result[out_[s]];
    for (uint32_t t = s; t != 0; t = check_[t]) str.push_back(static_cast<char>(t - base_[check_[t]]));
    std::reverse(str.begin(), str.end());
  }
  return result;
}

size_t SurfaceAutomaton::memory_bytes() const {
  return sizeof(*this) +
         sizeof(uint32_t) * (base_.size() + check_.size() + fail_.size() + out_.size() + dict_.size()) +
         sizeof(SurfacePattern) * patterns_.size() + forms_.size();
}

void SurfaceAutomaton::write(std::ostream& out) const {
  write_aligned_array(out, base_.data(), base_.size());
  write_aligned_array(out, check_.data(), check_.size());
  write_aligned_array(out, fail_.data(), fail_.size());
  write_aligned_array(out, out_.data(), out_.size());
  write_aligned_array(out, dict_.data(), dict_.size());
  write_aligned_array(out, patterns_.data(), patterns_.size());
  write_aligned_array(out, forms_.data(), forms_.size());
}

SurfaceAutomaton SurfaceAutomaton::read(ByteReader& in, size_t entity_count,
                                        std::shared_ptr<const void> backing) {
  auto view = [&]<typename T>(FlatArray<T>& into, const char* what) {
    size_t n = 0;
    const T* p = in.aligned_array<T>(n, what);
    into = FlatArray<T>(p, n, backing);
  };
  SurfaceAutomaton a;
  view(a.base_, "automaton base");
  view(a.check_, "automaton check");
  view(a.fail_, "automaton fail");
  view(a.out_, "automaton out");
  view(a.dict_, "automaton dict");
  view(a.patterns_, "automaton patterns");
  view(a.forms_, "automaton forms");
  a.validate(entity_count);
  return a;
}

// The invariants next() and for_each_output() rely on to terminate and stay in
// bounds: every state's parent chain reaches the root, a failure or dictionary link
// goes to a strictly shallower state, and an output's pattern is as long as its
// state is deep (so a match never starts before the text).
void SurfaceAutomaton::validate(size_t entity_count) const {
  auto bad = [](const std::string& what) {
    fail(ErrorCode::invalid_argument, "corrupt surface automaton: " + what);
  };
  const size_t n = check_.size();
  if (n == 0 || base_.size() != n || fail_.size() != n || out_.size() != n || dict_.size() != n)
    bad("array sizes differ");
  if (n >= kRootCheck) bad("too many states");
  if (check_[0] != kRootCheck) bad("no root");
  constexpr uint32_t kUnknown = 0xFFFFFFFFu, kVisiting = 0xFFFFFFFEu;
  std::vector<uint32_t> depth(n, kUnknown);
  depth[0] = 0;
  std::vector<uint32_t> path;
  for (uint32_t s = 1; s < n; ++s) {
    if (check_[s] == kNone || depth[s] != kUnknown) continue;
    path.clear();
    uint32_t t = s;
    while (depth[t] == kUnknown) {
      uint32_t p = check_[t];
      if (p >= n || (p != 0 && check_[p] == kNone)) bad("dangling parent");
      if (t < base_[p] || t - base_[p] > 255) bad("transition label out of range");
      depth[t] = kVisiting;
      path.push_back(t);
      t = p;
    }
    if (depth[t] == kVisiting) bad("cycle in the trie");
    for (size_t k = path.size(); k-- > 0;) depth[path[k]] = depth[check_[path[k]]] + 1;
  }
  for (uint32_t s = 0; s < n; ++s) {
    if (check_[s] == kNone) continue;
    uint32_t f = fail_[s];
    if (f >= n || check_[f] == kNone || (s != 0 && depth[f] >= depth[s])) bad("failure link");
    uint32_t d = dict_[s];
    if (d != kNone && (d >= n || check_[d] == kNone || depth[d] >= depth[s] || out_[d] == kNone))
      bad("dictionary link");
    uint32_t o = out_[s];
    if (o != kNone && (o >= patterns_.size() || patterns_[o].length != depth[s])) bad("output");
  }
  for (const auto& p : patterns_) {
    if (p.entity >= entity_count) bad("pattern entity out of range");
    if (size_t{p.form_offset} + p.form_size > forms_.size()) bad("pattern form out of range");
    if (p.type > static_cast<uint8_t>(EntityType::other)) bad("pattern type");
  }
}

}  // namespace eagle::biomed
