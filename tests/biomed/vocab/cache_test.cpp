// The compiled vocabulary cache: a round trip gives the same
// vocabulary and matches, a changed source or format rebuilds it, and a corrupt file
// is rebuilt (never a crash). SurfaceAutomaton::read rejects structurally bad data.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>

#include "eagle/biomed/vocab/entity_matcher.h"
#include "eagle/biomed/vocab/surface_automaton.h"
#include "eagle/biomed/vocab/vocabulary.h"
#include "eagle/core/error.h"
#include "vocab_test_util.h"

namespace fs = std::filesystem;
using namespace eagle::biomed;
using eagle::biomed::testing::TempDir;

namespace {

const char* kGenes =
    "gene_id\tsymbol\tname\taliases\n"
    "1956\tEGFR\tepidermal growth factor receptor\tERBB1|HER1\n"
    "4233\tMET\tMET proto-oncogene\tHGFR|c-Met\n"
    "3791\tKDR\tkinase insert domain receptor\tVEGFR|VEGFR2\n";

VocabularyPaths write_sources(const TempDir& dir) {
  VocabularyPaths p;
  p.drugbank_vocabulary =
      dir.write("drugbank_vocabulary.csv",
                "DrugBank ID,Accession Numbers,Common name,Name,CAS,UNII,Synonyms,Standard InChI Key\n"
                "DB00619,A,Imatinib,imatinib,,,Gleevec | STI-571,\n"
                "DB00530,A,Erlotinib,erlotinib,,,Tarceva,\n");
  p.drugbank_structures = dir.write(
      "drugbank_structures.csv", "DrugBank ID,Name,Drug Groups,SMILES\nDB00619,Imatinib,approved,CN1CCN\n");
  p.genes = dir.write("genes_human.tsv", kGenes);
  p.obo_files.push_back(dir.write("doid/x.obo",
                                  "[Term]\nid: DOID:3908\nname: non-small cell lung carcinoma\n"
                                  "synonym: \"NSCLC\" EXACT []\n"));
  p.mesh_trees =
      dir.write("mesh.txt", "Lung Neoplasms;C04.588.894.797.520\nImatinib Mesylate;D02.065.277.456\n");
  return p;
}

const char* kSentences[] = {
    "Imatinib (Gleevec) and erlotinib in EGFR-mutant NSCLC",
    "MET amplification and VEGFR1-3 inhibitors; the patients met the criteria",
    "lung neoplasms treated with imatinib mesylate",
};

std::string dump(const Vocabulary& v) {
  std::string out;
  for (EntityId i = 0; i < v.size(); ++i) {
    const Entity& e = v.entity(i);
    out += e.key + "|" + e.name + "|" + entity_type_name(e.type) + "|" + e.smiles + "|";
    for (const auto& a : e.aliases) out += a + ";";
    out += "\n";
  }
  EntityMatcher m(v);
  for (const char* s : kSentences) out += matches_to_json(v, m.match_entities(s)).dump() + "\n";
  return out;
}

void overwrite(const fs::path& f, size_t offset, const void* bytes, size_t n) {
  std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
  io.seekp(static_cast<std::streamoff>(offset));
  io.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
}

}  // namespace

TEST(VocabularyCache, RoundTripGivesTheSameVocabularyAndMatches) {
  TempDir dir("cache_roundtrip");
  auto paths = write_sources(dir);
  const auto cache = dir.path() / "sub" / "vocab.bin";
  CacheReport r;
  auto built = Vocabulary::load_cached(paths, cache, &r);
  EXPECT_EQ(r.outcome, CacheOutcome::built_missing);
  EXPECT_TRUE(fs::exists(cache));
  EXPECT_FALSE(fs::exists(cache.string() + ".tmp"));
  auto loaded = Vocabulary::load_cached(paths, cache, &r);
  EXPECT_EQ(r.outcome, CacheOutcome::loaded) << r.reason;
  EXPECT_EQ(dump(loaded), dump(built));
  EXPECT_EQ(dump(loaded), dump(Vocabulary::load(paths)));
  EXPECT_EQ(loaded.find("gleevec"), built.find("gleevec"));
  EXPECT_EQ(loaded.find_key("DRUGBANK:DB00619"), built.find_key("DRUGBANK:DB00619"));
  EXPECT_EQ(loaded.stats().surfaces, built.stats().surfaces);
  EXPECT_EQ(loaded.entity(*loaded.find_key("DRUGBANK:DB00619")).smiles, "CN1CCN");
  // A cached vocabulary still takes additions.
  loaded.add(eagle::biomed::testing::make_entity("BRAND:Tarcevax", "Tarcevax", EntityType::drug));
  loaded.compile();
  EXPECT_EQ(EntityMatcher(loaded).match_drug_entities("Tarcevax").size(), 1u);
}

TEST(VocabularyCache, ChangedSourceRebuildsIt) {
  TempDir dir("cache_stale");
  auto paths = write_sources(dir);
  const auto cache = dir.path() / "vocab.bin";
  CacheReport r;
  Vocabulary::load_cached(paths, cache, &r);
  ASSERT_EQ(r.outcome, CacheOutcome::built_missing);
  dir.write("genes_human.tsv", std::string(kGenes) + "5133\tPDCD1\tprogrammed cell death 1\tPD-1\n");
  auto v = Vocabulary::load_cached(paths, cache, &r);
  EXPECT_EQ(r.outcome, CacheOutcome::built_stale);
  EXPECT_NE(r.reason.find("genes_human.tsv"), std::string::npos) << r.reason;
  EXPECT_TRUE(v.find("PD-1").has_value());
  Vocabulary::load_cached(paths, cache, &r);
  EXPECT_EQ(r.outcome, CacheOutcome::loaded);
  // Same size, new modification time.
  fs::last_write_time(*paths.genes, fs::last_write_time(*paths.genes) + std::chrono::seconds(5));
  Vocabulary::load_cached(paths, cache, &r);
  EXPECT_EQ(r.outcome, CacheOutcome::built_stale);
  // Another set of sources.
  paths.umls_mrconso = dir.write("MRCONSO.RRF", "C1|ENG|P|L|PF|S|Y|A||M|D|MSH|MH|D|Foo|0|N|256|\n");
  Vocabulary::load_cached(paths, cache, &r);
  EXPECT_EQ(r.outcome, CacheOutcome::built_stale);
  EXPECT_NE(r.reason.find("MRCONSO.RRF"), std::string::npos) << r.reason;
  // Another format version.
  uint32_t version = 999;
  overwrite(cache, 8, &version, sizeof version);
  Vocabulary::load_cached(paths, cache, &r);
  EXPECT_EQ(r.outcome, CacheOutcome::built_stale);
  EXPECT_NE(r.reason.find("format version"), std::string::npos) << r.reason;
}

TEST(VocabularyCache, CorruptFileIsRebuiltNeverACrash) {
  TempDir dir("cache_corrupt");
  auto paths = write_sources(dir);
  const auto cache = dir.path() / "vocab.bin";
  const std::string expected = dump(Vocabulary::load_cached(paths, cache));
  const auto size = fs::file_size(cache);
  struct Damage {
    const char* what;
    std::function<void()> apply;
  };
  const Damage damages[] = {
      {"flipped byte in the payload",
       [&] {
         char c = 0x5A;
         overwrite(cache, size / 2, &c, 1);
       }},
      {"flipped byte in the automaton",
       [&] {
         char c = 0x7F;
         overwrite(cache, size - 100, &c, 1);
       }},
      {"truncated to half", [&] { fs::resize_file(cache, size / 2); }},
      {"truncated header", [&] { fs::resize_file(cache, 10); }},
      {"empty file", [&] { fs::resize_file(cache, 0); }},
      {"not a cache", [&] { dir.write("vocab.bin", std::string(4096, 'x')); }},
      {"longer than its header says",
       [&] { std::ofstream(cache, std::ios::app | std::ios::binary) << "tail"; }},
  };
  for (const auto& d : damages) {
    Vocabulary::load_cached(paths, cache);  // a good cache to damage
    d.apply();
    CacheReport r;
    auto v = Vocabulary::load_cached(paths, cache, &r);
    EXPECT_EQ(r.outcome, CacheOutcome::built_corrupt) << d.what << ": " << r.reason;
    EXPECT_FALSE(r.reason.empty()) << d.what;
    EXPECT_EQ(dump(v), expected) << d.what;
    Vocabulary::load_cached(paths, cache, &r);
    EXPECT_EQ(r.outcome, CacheOutcome::loaded) << d.what << ": rewritten cache is good again";
  }
}

namespace {

// Offsets of the arrays SurfaceAutomaton::write lays out (count, padding, data).
std::vector<size_t> array_offsets(const std::string& bytes, const std::vector<size_t>& elem_sizes) {
  std::vector<size_t> out;
  size_t pos = 0;
  for (size_t sz : elem_sizes) {
    uint64_t n;
    std::memcpy(&n, bytes.data() + pos, 8);
    pos += 8;
    pos += (8 - pos % 8) % 8;
    out.push_back(pos);
    pos += n * sz;
  }
  return out;
}

std::string build_automaton_bytes() {
  std::vector<SurfaceKey> keys;
  for (const char* k : {"egfr", "vegfr", "gfr", "met", "pd-1"}) {
    SurfaceKey key;
    key.normalized = k;
    key.form = k;
    key.entity = 0;
    keys.push_back(key);
  }
  auto a = SurfaceAutomaton::build(std::move(keys));
  std::ostringstream out;
  a.write(out);
  return out.str();
}

void expect_rejected(const std::string& bytes, size_t entity_count, const std::string& needle) {
  ByteReader in(bytes);
  try {
    SurfaceAutomaton::read(in, entity_count, nullptr);
    ADD_FAILURE() << "accepted a corrupt automaton (" << needle << ")";
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(SurfaceAutomaton, ReadRejectsStructurallyBadData) {
  const std::string good = build_automaton_bytes();
  {
    ByteReader in(good);
    auto a = SurfaceAutomaton::read(in, 1, nullptr);
    EXPECT_EQ(a.pattern_count(), 5u);
    EXPECT_TRUE(a.find("vegfr").has_value());
    EXPECT_FALSE(a.find("vegf").has_value());
  }
  expect_rejected(good, 0, "entity out of range");
  // base, check, fail, out, dict (uint32), patterns (16 bytes), forms (bytes)
  const auto off = array_offsets(good, {4, 4, 4, 4, 4, 16, 1});
  uint64_t slots;
  std::memcpy(&slots, good.data(), 8);
  // The deepest state (the last byte of "vegfr" has the largest depth): find any
  // state whose failure link is not the root and point it at itself.
  auto u32 = [&](const std::string& b, size_t array, size_t i) {
    uint32_t v;
    std::memcpy(&v, b.data() + off[array] + 4 * i, 4);
    return v;
  };
  auto set_u32 = [&](std::string& b, size_t array, size_t i, uint32_t v) {
    std::memcpy(b.data() + off[array] + 4 * i, &v, 4);
  };
  size_t state = 0;
  for (size_t s = 1; s < slots; ++s)
    if (u32(good, 1, s) != SurfaceAutomaton::kNone && u32(good, 2, s) != 0) state = s;
  ASSERT_NE(state, 0u);
  {
    std::string bad = good;
    set_u32(bad, 2, state, static_cast<uint32_t>(state));  // a failure link to itself: a hang
    expect_rejected(bad, 1, "failure link");
  }
  {
    std::string bad = good;
    set_u32(bad, 1, state, static_cast<uint32_t>(slots + 10));  // a parent outside the array
    expect_rejected(bad, 1, "dangling parent");
  }
  {
    std::string bad = good;
    set_u32(bad, 3, state, 12345);  // an output that is no pattern
    expect_rejected(bad, 1, "output");
  }
  {
    std::string bad = good.substr(0, good.size() - 3);  // truncated form pool
    expect_rejected(bad, 1, "automaton forms");
  }
}
