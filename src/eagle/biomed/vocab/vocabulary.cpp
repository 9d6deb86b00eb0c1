#include "eagle/biomed/vocab/vocabulary.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sstream>

#include "eagle/biomed/vocab/normalize.h"
#include "eagle/biomed/vocab/vocabulary_loaders.h"
#include "eagle/core/atomic_file.h"
#include "eagle/core/binary_io.h"
#include "eagle/core/error.h"

namespace eagle::biomed {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// ---------------------------------------------------------------------------------
// Surface rules: which names become dictionary surfaces, their flags and their rank.

constexpr size_t kMinSurfaceBytes = 2;    // single characters ("T", "P" gene aliases) are noise
constexpr size_t kMaxSurfaceBytes = 255;  // long IUPAC-like synonyms never occur verbatim in text
// Non-gene surfaces this short ("Mg", "Met", "Egg") match only as the source spells
// them, and so do slightly longer ones with an inner capital ("SAMe", "CsA", "cAMP").
constexpr size_t kCaseSensitiveBytes = 3;
constexpr size_t kInnerCapitalBytes = 5;

struct SurfaceCandidate {
  std::string normalized;
  std::string form;
  EntityId entity = 0;
  EntityType type = EntityType::other;
  uint8_t flags = 0;
  uint8_t tier = 0;  // 0 disease abbreviation, 1 preferred name, 2 alias, 3 symbol-like gene alias
};

bool has_letter(std::string_view norm) {
  for (size_t i = 0; i < norm.size(); ++i)
    if (letter_at(norm, i)) return true;
  return false;
}

bool inner_capital(std::string_view form) {
  return form.size() > 1 && has_upper_case(form.substr(1));
}

// Appends the surfaces of one entity (its name and aliases, one per normalised form).
void collect_surfaces(const Entity& e, EntityId id, std::vector<SurfaceCandidate>& out,
                      uint64_t* dropped = nullptr) {
  const size_t first = out.size();
  auto consider = [&](const std::string& form, bool is_name) {
    std::string norm = normalize_surface(form);
    if (norm.size() < kMinSurfaceBytes || norm.size() > kMaxSurfaceBytes || !has_letter(norm)) {
      if (dropped) ++*dropped;
      return;
    }
    for (size_t i = first; i < out.size(); ++i) {
      if (out[i].normalized != norm) continue;
      // Same surface twice: keep the form with lower-case letters, the least restrictive.
      if (!has_lower_case(out[i].form) && has_lower_case(form)) out[i].form = form;
      return;
    }
    SurfaceCandidate c;
    c.normalized = std::move(norm);
    c.form = form;
    c.entity = id;
    c.type = e.type;
    if (is_name) c.flags |= kSurfaceName;
    out.push_back(std::move(c));
  };
  consider(e.name, true);
  for (const auto& a : e.aliases) consider(a, false);
  for (size_t i = first; i < out.size(); ++i) {
    auto& c = out[i];
    const bool spaced = c.normalized.find(' ') != std::string::npos;
    const bool is_name = c.flags & kSurfaceName;
    if (c.type == EntityType::gene) {
      // A symbol or symbol-like alias (every gene surface without a space, lower-case
      // ones like "pitchfork" included): the matcher's case and context rules apply.
      if (!spaced) c.flags |= is_name ? kSurfaceGeneSymbol : (kSurfaceGeneSymbol | kSurfaceGeneAlias);
    } else if (!spaced && !has_drug_suffix(c.form) &&
               (is_upper_case(c.form) || c.normalized.size() <= kCaseSensitiveBytes ||
                (c.normalized.size() <= kInnerCapitalBytes && inner_capital(c.form)))) {
      // "ALL", "NO", "CAPTURE" (an acronym or code, never the lower-case word), "Mg"
      // (not "mg"), "SAMe" (not "same"). Drug-suffix names are names: "APATINIB".
      c.flags |= kSurfaceCaseSensitive;
    }
    c.tier = is_name ? 1 : (c.flags & kSurfaceGeneSymbol) ? 3 : 2;
    // An all-capitals disease abbreviation ("HCC", "DMD") outranks even a gene's
    // official symbol: genes named after a disease share its abbreviation, and in
    // text the abbreviation mostly means the disease.
    if (c.type == EntityType::disease && (c.flags & kSurfaceCaseSensitive) && is_upper_case(c.form))
      c.tier = 0;
  }
}

// The precedence of vocabulary.h "Surface conflicts".
bool outranks(const SurfaceCandidate& a, const SurfaceCandidate& b) {
  if (a.tier != b.tier) return a.tier < b.tier;
  if (a.type != b.type) return static_cast<int>(a.type) < static_cast<int>(b.type);
  return a.entity < b.entity;
}

uint8_t tier_of(const SurfacePattern& p, std::string_view form) {
  if (p.type == static_cast<uint8_t>(EntityType::disease) && (p.flags & kSurfaceCaseSensitive) &&
      is_upper_case(form) && form.find(' ') == std::string_view::npos)
    return 0;
  if (p.flags & kSurfaceName) return 1;
  return (p.flags & kSurfaceGeneAlias) ? 3 : 2;
}

// ---------------------------------------------------------------------------------
// Cache file.

constexpr char kMagic[8] = {'E', 'A', 'G', 'L', 'E', 'V', 'O', 'C'};
// Bump whenever the layout, the loaders or the surface rules change.
constexpr uint32_t kFormatVersion = 3;

struct SourceStamp {
  std::string path;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const SourceStamp&) const = default;
};

std::vector<SourceStamp> stamp_sources(const VocabularyPaths& paths) {
  std::vector<SourceStamp> out;
  for (const auto& f : paths.files()) {
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      fail(ErrorCode::not_found, "vocabulary file not found: " + f.string());
    out.push_back({fs::absolute(f).lexically_normal().string(), static_cast<uint64_t>(st.st_size),
                   int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec});
  }
  return out;
}

// A Fletcher-style checksum over 64-bit words in four lanes (two additions per word,
// memory-bound), so a flipped or lost byte anywhere in the cache is caught before
// the payload is trusted. Not a defence against deliberate tampering: the structural
// checks in SurfaceAutomaton::read are what keep a crafted file from crashing us.
uint64_t checksum(std::string_view s) {
  uint64_t a[4] = {1, 2, 3, 4}, b[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 32 <= s.size(); i += 32) {
    uint64_t w[4];
    std::memcpy(w, s.data() + i, 32);
    for (int k = 0; k < 4; ++k) {
      a[k] += w[k];
      b[k] += a[k];
    }
  }
  for (; i < s.size(); ++i) {
    a[0] += static_cast<unsigned char>(s[i]);
    b[0] += a[0];
  }
  uint64_t r = s.size();
  for (int k = 0; k < 4; ++k) r = (r ^ a[k]) * 0x9E3779B97F4A7C15ull ^ (b[k] + static_cast<uint64_t>(k));
  return r ^ (r >> 31);
}

struct EntityHeader {
  uint8_t type = 0;
  uint8_t reserved[3] = {0, 0, 0};
  uint32_t aliases = 0;
  uint32_t related = 0;
  uint32_t pathways = 0;
};
static_assert(sizeof(EntityHeader) == 16);

// The cache file mapped read-only (pre-faulted): the automaton's arrays are used in
// place, so loading copies only the entity strings. The cache is only ever replaced
// by rename (write_file_atomic), so a live mapping keeps its old inode intact.
struct MappedFile {
  const char* data = nullptr;
  size_t size = 0;
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data) ::munmap(const_cast<char*>(data), size);
  }
  std::string_view view() const { return {data, size}; }
};

std::shared_ptr<const MappedFile> map_file(const fs::path& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorCode::not_found, "cannot open " + file.string());
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    fail(ErrorCode::unavailable, "cannot stat " + file.string());
  }
  auto m = std::make_shared<MappedFile>();
  if (st.st_size > 0) {
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      fail(ErrorCode::unavailable, "cannot map " + file.string());
    }
    m->data = static_cast<const char*>(p);
    m->size = static_cast<size_t>(st.st_size);
  }
  ::close(fd);
  return m;
}

}  // namespace

struct VocabularyCodec {
  static void write(const Vocabulary& v, const std::vector<SourceStamp>& sources, std::ostream& file) {
    std::ostringstream out;
    io::write_pod<uint64_t>(out, sources.size());
    for (const auto& s : sources) {
      io::write_str(out, s.path);
      io::write_pod(out, s.size);
      io::write_pod(out, s.mtime_ns);
    }
    io::write_pod(out, v.stats_);
    std::vector<EntityHeader> headers;
    std::vector<uint32_t> lengths;
    std::string pool;
    headers.reserve(v.entities_.size());
    auto put = [&](const std::string& s) {
      lengths.push_back(static_cast<uint32_t>(s.size()));
      pool += s;
    };
    for (const auto& e : v.entities_) {
      EntityHeader h;
      h.type = static_cast<uint8_t>(e.type);
      h.aliases = static_cast<uint32_t>(e.aliases.size());
      h.related = static_cast<uint32_t>(e.related_drugs.size());
      h.pathways = static_cast<uint32_t>(e.pathways.size());
      headers.push_back(h);
      put(e.key);
      put(e.name);
      put(e.smiles);
      for (const auto& s : e.aliases) put(s);
      for (const auto& s : e.related_drugs) put(s);
      for (const auto& s : e.pathways) put(s);
    }
    write_aligned_array(out, headers.data(), headers.size());
    write_aligned_array(out, lengths.data(), lengths.size());
    write_aligned_array(out, pool.data(), pool.size());
    write_aligned_array(out, v.key_order_.data(), v.key_order_.size());
    io::write_pod<uint64_t>(out, v.merged_keys_.size());
    for (const auto& [key, id] : v.merged_keys_) {
      io::write_str(out, key);
      io::write_pod<uint32_t>(out, id);
    }
    v.automaton_->write(out);
    const std::string payload = std::move(out).str();
    file.write(kMagic, sizeof kMagic);
    io::write_pod<uint32_t>(file, kFormatVersion);
    io::write_pod<uint32_t>(file, 0);
    io::write_pod<uint64_t>(file, payload.size());
    io::write_pod<uint64_t>(file, checksum(payload));
    file.write(payload.data(), static_cast<std::streamsize>(payload.size()));
  }

  // Returns false (with `why`) when the cache is intact but not for these sources;
  // throws eagle::Error when it is corrupt.
  static bool read(const std::shared_ptr<const MappedFile>& file, const std::vector<SourceStamp>& sources,
                   Vocabulary& v, std::string& why) {
    const std::string_view bytes = file->view();
    ByteReader header(bytes);
    char magic[8];
    for (char& c : magic) c = header.pod<char>("cache magic");
    if (std::memcmp(magic, kMagic, sizeof kMagic) != 0)
      fail(ErrorCode::invalid_argument, "not a vocabulary cache");
    auto version = header.pod<uint32_t>("cache version");
    header.pod<uint32_t>("cache header");
    if (version != kFormatVersion) {
      why = "cache format version " + std::to_string(version) + " != " + std::to_string(kFormatVersion);
      return false;
    }
    auto size = header.pod<uint64_t>("cache payload size");
    auto sum = header.pod<uint64_t>("cache checksum");
    if (size != header.remaining())
      fail(ErrorCode::invalid_argument, "cache payload size mismatch (truncated?)");
    std::string_view payload = bytes.substr(bytes.size() - size);
    if (checksum(payload) != sum) fail(ErrorCode::invalid_argument, "cache checksum mismatch");
    ByteReader in(payload);
    auto n_sources = in.pod<uint64_t>("source count");
    std::vector<SourceStamp> stored;
    for (uint64_t i = 0; i < n_sources && i < 1024; ++i) {
      SourceStamp s;
      s.path = in.str("source path");
      s.size = in.pod<uint64_t>("source size");
      s.mtime_ns = in.pod<int64_t>("source mtime");
      stored.push_back(std::move(s));
    }
    if (stored.size() != n_sources) fail(ErrorCode::invalid_argument, "corrupt source count");
    if (stored != sources) {
      why = "sources changed";
      for (const auto& s : sources) {
        auto it = std::find_if(stored.begin(), stored.end(),
                               [&](const SourceStamp& o) { return o.path == s.path; });
        if (it == stored.end()) {
          why = "new source " + s.path;
          break;
        }
        if (!(*it == s)) {
          why = "source changed: " + s.path;
          break;
        }
      }
      return false;
    }
    v.stats_ = in.pod<VocabularyStats>("stats");
    size_t n_entities = 0, n_lengths = 0, pool_size = 0, n_keys = 0;
    const EntityHeader* headers = in.aligned_array<EntityHeader>(n_entities, "entity headers");
    const uint32_t* lengths = in.aligned_array<uint32_t>(n_lengths, "entity string lengths");
    const char* pool = in.aligned_array<char>(pool_size, "entity strings");
    uint64_t strings = 0, total = 0;
    for (size_t i = 0; i < n_entities; ++i) {
      const EntityHeader& h = headers[i];
      if (h.type > static_cast<uint8_t>(EntityType::other))
        fail(ErrorCode::invalid_argument, "corrupt entity type");
      strings += 3 + uint64_t{h.aliases} + h.related + h.pathways;
    }
    if (strings != n_lengths) fail(ErrorCode::invalid_argument, "corrupt entity table");
    for (size_t i = 0; i < n_lengths; ++i) total += lengths[i];
    if (total != pool_size) fail(ErrorCode::invalid_argument, "corrupt entity strings");
    v.entities_.resize(n_entities);
    size_t li = 0, pos = 0;
    auto take = [&]() {
      size_t l = lengths[li++];
      std::string s(pool + pos, l);
      pos += l;
      return s;
    };
    auto take_list = [&](std::vector<std::string>& list, uint32_t n) {
      list.reserve(n);
      for (uint32_t k = 0; k < n; ++k) list.push_back(take());
    };
    for (size_t i = 0; i < n_entities; ++i) {
      Entity& e = v.entities_[i];
      e.type = static_cast<EntityType>(headers[i].type);
      e.key = take();
      e.name = take();
      e.smiles = take();
      take_list(e.aliases, headers[i].aliases);
      take_list(e.related_drugs, headers[i].related);
      take_list(e.pathways, headers[i].pathways);
    }
    const uint32_t* key_order = in.aligned_array<uint32_t>(n_keys, "key order");
    v.key_order_.assign(key_order, key_order + n_keys);
    if (v.key_order_.size() != v.entities_.size()) fail(ErrorCode::invalid_argument, "corrupt key order");
    for (auto id : v.key_order_)
      if (id >= v.entities_.size()) fail(ErrorCode::invalid_argument, "corrupt key order");
    auto n_merged = in.pod<uint64_t>("merged key count");
    if (n_merged > in.remaining() / 12) fail(ErrorCode::invalid_argument, "corrupt merged key count");
    v.merged_keys_.reserve(n_merged);
    for (uint64_t i = 0; i < n_merged; ++i) {
      std::string key = in.str("merged key");
      auto id = in.pod<uint32_t>("merged key id");
      if (id >= v.entities_.size()) fail(ErrorCode::invalid_argument, "corrupt merged key id");
      v.merged_keys_.emplace_back(std::move(key), id);
    }
    v.automaton_ =
        std::make_shared<const SurfaceAutomaton>(SurfaceAutomaton::read(in, v.entities_.size(), file));
    if (in.remaining() != 0) fail(ErrorCode::invalid_argument, "trailing bytes in cache");
    v.compiled_count_ = v.entities_.size();
    return true;
  }
};

// ---------------------------------------------------------------------------------

std::vector<fs::path> VocabularyPaths::files() const {
  std::vector<fs::path> out;
  for (const auto* p : {&drugbank_vocabulary, &drugbank_structures, &genes, &umls_mrconso, &umls_mrsty})
    if (*p) out.push_back(**p);
  out.insert(out.end(), obo_files.begin(), obo_files.end());
  if (mesh_trees) out.push_back(*mesh_trees);
  return out;
}

VocabularyPaths default_vocabulary_paths(const std::string& vocab_dir) {
  const fs::path dir(vocab_dir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(ErrorCode::not_found, "vocabulary folder not found: " + vocab_dir);
  VocabularyPaths p;
  auto file = [&](const fs::path& f) -> std::optional<fs::path> {
    std::error_code e;
    return fs::is_regular_file(f, e) ? std::optional<fs::path>(f) : std::nullopt;
  };
  p.drugbank_vocabulary = file(dir / "drugbank_vocabulary.csv");
  p.drugbank_structures = file(dir / "drugbank_structures.csv");
  p.genes = file(dir / "genes_human.tsv");
  std::vector<fs::path> mesh;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    auto name = entry.path().filename().string();
    if (entry.is_regular_file() && name.starts_with("mesh_trees") && name.ends_with(".txt"))
      mesh.push_back(entry.path());
  }
  std::sort(mesh.begin(), mesh.end());
  if (!mesh.empty()) p.mesh_trees = mesh.back();  // the newest year
  for (const auto& sub : {dir / "doid", dir}) {
    if (!fs::is_directory(sub, ec)) continue;
    for (const auto& entry : fs::directory_iterator(sub, ec))
      if (entry.is_regular_file() && entry.path().extension() == ".obo") p.obo_files.push_back(entry.path());
  }
  std::sort(p.obo_files.begin(), p.obo_files.end());
  for (const auto& sub : {dir / "umls", dir / "umls_sample", dir}) {
    if (auto conso = file(sub / "MRCONSO.RRF")) {
      p.umls_mrconso = conso;
      p.umls_mrsty = file(sub / "MRSTY.RRF");
      break;
    }
  }
  return p;
}

Vocabulary::Vocabulary() : automaton_(std::make_shared<const SurfaceAutomaton>()) {}

Vocabulary Vocabulary::load(const VocabularyPaths& paths) {
  for (const auto& f : paths.files()) {
    std::error_code ec;
    if (!fs::is_regular_file(f, ec)) fail(ErrorCode::not_found, "vocabulary file not found: " + f.string());
  }
  if (paths.umls_mrsty && !paths.umls_mrconso)
    fail(ErrorCode::invalid_argument,
         "MRSTY.RRF configured without MRCONSO.RRF: " + paths.umls_mrsty->string());
  detail::VocabularyBuilder b;
  if (paths.drugbank_vocabulary) detail::load_drugbank_vocabulary(*paths.drugbank_vocabulary, b);
  if (paths.drugbank_structures) detail::load_drugbank_structures(*paths.drugbank_structures, b);
  if (paths.genes) detail::load_genes(*paths.genes, b);
  if (paths.umls_mrconso) detail::load_umls(*paths.umls_mrconso, paths.umls_mrsty, b);
  for (const auto& f : paths.obo_files) detail::load_obo(f, b);
  if (paths.mesh_trees) detail::load_mesh_trees(*paths.mesh_trees, b);
  Vocabulary v;
  v.entities_ = std::move(b.entities);
  v.merged_keys_ = std::move(b.merged_keys);
  std::sort(v.merged_keys_.begin(), v.merged_keys_.end());
  v.stats_ = b.stats;
  v.key_order_.resize(v.entities_.size());
  for (EntityId i = 0; i < v.entities_.size(); ++i) v.key_order_[i] = i;
  std::sort(v.key_order_.begin(), v.key_order_.end(),
            [&](EntityId a, EntityId b2) { return v.entities_[a].key < v.entities_[b2].key; });
  v.compiled_count_ = static_cast<size_t>(-1);  // force the build
  v.compile();
  return v;
}

Vocabulary Vocabulary::load_cached(const VocabularyPaths& paths, const fs::path& cache_file,
                                   CacheReport* report) {
  CacheReport local;
  CacheReport& r = report ? *report : local;
  r = CacheReport{};
  const auto sources = stamp_sources(paths);
  std::error_code ec;
  if (fs::exists(cache_file, ec)) {
    auto t0 = Clock::now();
    try {
      Vocabulary v;
      std::string why;
      if (VocabularyCodec::read(map_file(cache_file), sources, v, why)) {
        r.outcome = CacheOutcome::loaded;
        r.cache_seconds = seconds_since(t0);
        return v;
      }
      r.outcome = CacheOutcome::built_stale;
      r.reason = why;
    } catch (const Error& e) {
      r.outcome = CacheOutcome::built_corrupt;
      r.reason = e.what();
    }
  } else {
    r.outcome = CacheOutcome::built_missing;
    r.reason = "no cache at " + cache_file.string();
  }
  auto t0 = Clock::now();
  Vocabulary v = load(paths);
  r.parse_seconds = seconds_since(t0) - v.compile_seconds_;
  r.compile_seconds = v.compile_seconds_;
  t0 = Clock::now();
  v.save_cache(paths, cache_file);
  r.cache_seconds = seconds_since(t0);
  return v;
}

void Vocabulary::save_cache(const VocabularyPaths& paths, const fs::path& cache_file) const {
  if (!compiled())
    fail(ErrorCode::conflict, "vocabulary has entities added since compile(); compile() before save_cache()");
  const auto sources = stamp_sources(paths);
  if (cache_file.has_parent_path()) fs::create_directories(cache_file.parent_path());
  write_shared_file_atomic(cache_file, [&](std::ostream& out) { VocabularyCodec::write(*this, sources, out); });
}

const Entity& Vocabulary::entity(EntityId id) const {
  if (id >= entities_.size())
    fail(ErrorCode::not_found, "no entity with id " + std::to_string(id) + " (vocabulary has " +
                                   std::to_string(entities_.size()) + ")");
  return entities_[id];
}

std::optional<EntityId> Vocabulary::find(std::string_view surface) const {
  const std::string norm = normalize_surface(surface);
  std::optional<SurfaceCandidate> best;
  if (auto pid = automaton_->find(norm)) {
    const auto& p = automaton_->pattern(*pid);
    SurfaceCandidate c;
    c.entity = p.entity;
    c.type = static_cast<EntityType>(p.type);
    c.tier = tier_of(p, automaton_->form(*pid));
    best = c;
  }
  if (auto it = pending_.find(norm); it != pending_.end()) {
    std::vector<SurfaceCandidate> cands;
    for (EntityId id : it->second) collect_surfaces(entities_[id], id, cands);
    for (const auto& c : cands)
      if (c.normalized == norm && (!best || outranks(c, *best))) best = c;
  }
  if (!best) return std::nullopt;
  return best->entity;
}

std::optional<EntityId> Vocabulary::find_key(std::string_view key) const {
  auto it = std::lower_bound(key_order_.begin(), key_order_.end(), key,
                             [&](EntityId id, std::string_view k) { return entities_[id].key < k; });
  if (it != key_order_.end() && entities_[*it].key == key) return *it;
  auto m = std::lower_bound(merged_keys_.begin(), merged_keys_.end(), key,
                            [](const auto& p, std::string_view k) { return p.first < k; });
  if (m != merged_keys_.end() && m->first == key) return m->second;
  return std::nullopt;
}

EntityId Vocabulary::add(Entity e) {
  if (e.key.empty() || e.name.empty()) fail(ErrorCode::invalid_argument, "an entity needs a key and a name");
  if (find_key(e.key)) fail(ErrorCode::conflict, "entity key already present: " + e.key);
  detail::clean_aliases(e);
  auto id = static_cast<EntityId>(entities_.size());
  entities_.push_back(std::move(e));
  auto pos = std::lower_bound(key_order_.begin(), key_order_.end(), entities_.back().key,
                              [&](EntityId a, const std::string& k) { return entities_[a].key < k; });
  key_order_.insert(pos, id);
  std::vector<SurfaceCandidate> cands;
  collect_surfaces(entities_.back(), id, cands);
  for (auto& c : cands) pending_[c.normalized].push_back(id);
  return id;
}

namespace {

// Resolves surface conflicts (vocabulary.h) and builds the automaton.
std::shared_ptr<const SurfaceAutomaton> build_automaton(const std::vector<Entity>& entities,
                                                        VocabularyStats& stats) {
  std::vector<SurfaceCandidate> cands;
  cands.reserve(entities.size() * 4);
  uint64_t dropped = 0;
  for (EntityId id = 0; id < entities.size(); ++id) collect_surfaces(entities[id], id, cands, &dropped);
  std::sort(cands.begin(), cands.end(), [](const SurfaceCandidate& a, const SurfaceCandidate& b) {
    if (a.normalized != b.normalized) return a.normalized < b.normalized;
    return outranks(a, b);
  });
  std::vector<SurfaceKey> keys;
  keys.reserve(cands.size());
  uint64_t conflicts = 0;
  for (size_t i = 0; i < cands.size();) {
    size_t j = i + 1;
    while (j < cands.size() && cands[j].normalized == cands[i].normalized) ++j;
    if (j - i > 1) ++conflicts;
    auto& c = cands[i];
    keys.push_back({std::move(c.normalized), std::move(c.form), c.entity, c.type, c.flags});
    i = j;
  }
  stats.surfaces = keys.size();
  stats.surface_conflicts = conflicts;
  stats.surfaces_dropped = dropped;
  return std::make_shared<const SurfaceAutomaton>(SurfaceAutomaton::build(std::move(keys)));
}

}  // namespace

void Vocabulary::compile() {
  if (compiled()) return;
  auto t0 = Clock::now();
  automaton_ = build_automaton(entities_, stats_);
  compiled_count_ = entities_.size();
  pending_.clear();
  compile_seconds_ = seconds_since(t0);
}

std::shared_ptr<const SurfaceAutomaton> Vocabulary::automaton() const {
  if (compiled()) return automaton_;
  VocabularyStats scratch;
  return build_automaton(entities_, scratch);
}

size_t Vocabulary::memory_bytes() const {
  auto str = [](const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; };
  size_t bytes =
      sizeof(*this) + entities_.capacity() * sizeof(Entity) + key_order_.capacity() * sizeof(EntityId);
  for (const auto& e : entities_) {
    bytes += str(e.key) + str(e.name) + str(e.smiles);
    for (const auto* list : {&e.aliases, &e.related_drugs, &e.pathways}) {
      bytes += list->capacity() * sizeof(std::string);
      for (const auto& s : *list) bytes += str(s);
    }
  }
  for (const auto& [k, id] : merged_keys_) bytes += sizeof(k) + sizeof(id) + str(k);
  return bytes + automaton_->memory_bytes();
}

}  // namespace eagle::biomed
