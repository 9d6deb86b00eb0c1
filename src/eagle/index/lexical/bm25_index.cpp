#include "eagle/index/lexical/bm25_index.h"

#include <algorithm>
#include <cmath>
#include <istream>
#include <ostream>

#include "eagle/core/binary_io.h"
#include "eagle/core/error.h"

namespace eagle::index {

TopKAlgorithm parse_topk_algorithm(std::string_view name) {
  if (name == "maxscore") return TopKAlgorithm::maxscore;
  if (name == "exhaustive") return TopKAlgorithm::exhaustive;
  fail(ErrorCode::invalid_argument,
       "unknown top-k algorithm '" + std::string(name) + "': expected maxscore or exhaustive");
}

struct Bm25Index::Snapshot {
  uint32_t docs = 0;
  double avg_doc_len = 0;
  std::vector<double> norm;           // k1 * (1 - b + b * dl / avgdl), per doc
  std::vector<double> max_tf_ratio;   // max over a term's postings of tf / (tf + norm)
};

namespace {

// The BM25 saturation term; both searchers call exactly this so their scores agree.
inline double tf_ratio(uint32_t tf, double norm) {
  const double t = static_cast<double>(tf);
  return t / (t + norm);
}

// Lucene's BM25 idf, always positive.
inline double bm25_idf(uint32_t df, uint32_t n) {
  return std::log(1.0 + (static_cast<double>(n) - df + 0.5) / (static_cast<double>(df) + 0.5));
}

// "a ranks before b": higher score, then lower doc id (the oracle's order).
inline bool ranks_before(const LexicalHit& a, const LexicalHit& b) {
  return a.score > b.score || (a.score == b.score && a.doc < b.doc);
}

constexpr char kMagic[8] = {'E', 'G', 'L', 'B', 'M', '2', '5', '\0'};
constexpr uint32_t kVersion = 1;

}  // namespace

Bm25Index::Bm25Index(Bm25Params params, text::AnalyzerOptions analyzer)
    : params_(params), analyzer_(analyzer) {
  if (!(params.k1 >= 0) || !(params.b >= 0 && params.b <= 1))
    fail(ErrorCode::invalid_argument, "BM25 needs k1 >= 0 and 0 <= b <= 1");
}
Bm25Index::Bm25Index(Bm25Index&& o) noexcept
    : params_(o.params_),
      analyzer_(o.analyzer_),
      term_ids_(std::move(o.term_ids_)),
      postings_(std::move(o.postings_)),
      doc_len_(std::move(o.doc_len_)),
      total_len_(o.total_len_),
      snapshot_(std::move(o.snapshot_)) {}
Bm25Index& Bm25Index::operator=(Bm25Index&& o) noexcept {
  params_ = o.params_;
  analyzer_ = o.analyzer_;
  term_ids_ = std::move(o.term_ids_);
  postings_ = std::move(o.postings_);
  doc_len_ = std::move(o.doc_len_);
  total_len_ = o.total_len_;
  snapshot_ = std::move(o.snapshot_);
  return *this;
}
Bm25Index::~Bm25Index() = default;

DocId Bm25Index::add(std::string_view text) {
  const DocId doc = static_cast<DocId>(doc_len_.size());
  // Count term frequencies for this document; a small sorted vector beats a map
  // for abstracts of a few hundred tokens.
  std::vector<std::pair<uint32_t, uint32_t>> tfs;
  uint32_t len = 0;
  analyzer_.analyze(text, [&](std::string_view term) {
    auto it = term_ids_.find(term);
    uint32_t id;
    if (it == term_ids_.end()) {
      id = static_cast<uint32_t>(postings_.size());
      term_ids_.emplace(std::string(term), id);
      postings_.emplace_back();
    } else {
      id = it->second;
    }
    tfs.emplace_back(id, 1);
    ++len;
  });
  std::sort(tfs.begin(), tfs.end());
  for (size_t i = 0; i < tfs.size();) {
    size_t j = i;
    while (j < tfs.size() && tfs[j].first == tfs[i].first) ++j;
    postings_[tfs[i].first].append(doc, static_cast<uint32_t>(j - i));
    i = j;
  }
  doc_len_.push_back(len);
  total_len_ += len;
  std::lock_guard lock(refresh_mutex_);
  snapshot_.reset();
  return doc;
}

std::shared_ptr<const Bm25Index::Snapshot> Bm25Index::current_snapshot() const {
  std::lock_guard lock(refresh_mutex_);
  if (!snapshot_) snapshot_ = build_snapshot();
  return snapshot_;
}

std::shared_ptr<const Bm25Index::Snapshot> Bm25Index::build_snapshot() const {
  auto snap = std::make_shared<Snapshot>();
  snap->docs = size();
  snap->avg_doc_len = snap->docs ? static_cast<double>(total_len_) / snap->docs : 0.0;
  snap->norm.resize(snap->docs);
  const double avg = snap->avg_doc_len > 0 ? snap->avg_doc_len : 1.0;
  for (uint32_t d = 0; d < snap->docs; ++d)
    snap->norm[d] = params_.k1 * (1.0 - params_.b + params_.b * doc_len_[d] / avg);
  // Exact per-term bounds for MaxScore: the best saturation any posting reaches.
  snap->max_tf_ratio.assign(postings_.size(), 0.0);
  DocId docs[kBlockSize];
  uint32_t tfs[kBlockSize];
  for (size_t t = 0; t < postings_.size(); ++t) {
    double best = 0;
    const auto& pl = postings_[t];
    for (size_t b = 0; b < pl.num_blocks(); ++b) {
      uint32_t n = pl.decode_block(b, docs, tfs);
      for (uint32_t i = 0; i < n; ++i) best = std::max(best, tf_ratio(tfs[i], snap->norm[docs[i]]));
    }
    snap->max_tf_ratio[t] = best;
  }
  return snap;
}

std::vector<Bm25Index::QueryTerm> Bm25Index::prepare(const std::vector<std::string>& terms,
                                                     const Snapshot& snap) const {
  std::vector<std::pair<uint32_t, uint32_t>> ids;  // (term id, query tf)
  for (const auto& t : terms) {
    auto it = term_ids_.find(std::string_view(t));
    if (it == term_ids_.end()) continue;
    auto pos = std::find_if(ids.begin(), ids.end(), [&](auto& p) { return p.first == it->second; });
    if (pos == ids.end()) ids.emplace_back(it->second, 1);
    else ++pos->second;
  }
  std::vector<QueryTerm> q;
  for (auto [id, qtf] : ids) {
    const auto& pl = postings_[id];
    if (pl.empty()) continue;
    QueryTerm qt;
    qt.list = &pl;
    qt.term = id;
    qt.weight = bm25_idf(pl.size(), snap.docs) * (params_.k1 + 1.0) * qtf;
    qt.upper_bound = qt.weight * snap.max_tf_ratio[id];
    q.push_back(qt);
  }
  return q;
}

std::vector<LexicalHit> Bm25Index::search(std::string_view query, size_t k, TopKAlgorithm algo,
                                          const Bitset* allowed) const {
  return search_terms(analyzer_.terms(query), k, algo, allowed);
}

double Bm25Index::query_weight(std::string_view text) const {
  const uint32_t n = size();
  if (n == 0) return 0.0;
  double sum = 0.0;
  for (const auto& t : analyzer_.terms(text)) {
    auto it = term_ids_.find(std::string_view(t));
    const uint32_t df = it == term_ids_.end() ? 0 : static_cast<uint32_t>(postings_[it->second].size());
    sum += bm25_idf(df, n);
  }
  return sum;
}

std::vector<LexicalHit> Bm25Index::search_terms(const std::vector<std::string>& terms, size_t k,
                                                TopKAlgorithm algo, const Bitset* allowed) const {
  if (k == 0 || doc_len_.empty()) return {};
  std::shared_ptr<const Snapshot> snap = current_snapshot();
  auto q = prepare(terms, *snap);
  if (q.empty()) return {};
  return algo == TopKAlgorithm::exhaustive ? exhaustive(q, k, *snap, allowed)
                                           : maxscore(std::move(q), k, *snap, allowed);
}

// The oracle: score every posting of every query term into a dense accumulator,
// then sort. Simple enough to be obviously right.
std::vector<LexicalHit> Bm25Index::exhaustive(const std::vector<QueryTerm>& q, size_t k,
                                              const Snapshot& snap, const Bitset* allowed) const {
  std::vector<double> acc(snap.docs, 0.0);
  std::vector<uint8_t> seen(snap.docs, 0);
  DocId docs[kBlockSize];
  uint32_t tfs[kBlockSize];
  for (const auto& t : q) {
    for (size_t b = 0; b < t.list->num_blocks(); ++b) {
      uint32_t n = t.list->decode_block(b, docs, tfs);
      for (uint32_t i = 0; i < n; ++i) {
        acc[docs[i]] += t.weight * tf_ratio(tfs[i], snap.norm[docs[i]]);
        seen[docs[i]] = 1;
      }
    }
  }
  std::vector<LexicalHit> all;
  for (DocId d = 0; d < snap.docs; ++d)
    if (seen[d] && (!allowed || allowed->test(d))) all.push_back({d, acc[d]});
  const size_t m = std::min(k, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(m), all.end(), ranks_before);
  all.resize(m);
  return all;
}

// MaxScore (Turtle & Flood 1995), evaluated a window of doc ids at a time as in
// Lucene's MaxScoreBulkScorer. Terms are sorted by upper bound; the prefix of terms
// whose bounds sum below the current k-th score is "non-essential": a document that
// matches only those cannot enter the top k. In each window the essential lists are
// scored term-at-a-time into an accumulator (cheap, branch-free), then each
// candidate is completed by probing the non-essential lists with skips, stopping as
// soon as its score plus the remaining bounds cannot beat the k-th score.
std::vector<LexicalHit> Bm25Index::maxscore(std::vector<QueryTerm> q, size_t k,
                                            const Snapshot& snap, const Bitset* allowed) const {
  constexpr uint32_t kWindow = 4096;
  std::sort(q.begin(), q.end(),
            [](const QueryTerm& a, const QueryTerm& b) { return a.upper_bound < b.upper_bound; });
  const size_t n = q.size();
  std::vector<double> prefix(n);
  double run = 0;
  for (size_t i = 0; i < n; ++i) prefix[i] = run += q[i].upper_bound;

  std::vector<PostingCursor> cur;
  cur.reserve(n);
  for (const auto& t : q) cur.emplace_back(t.list);

  thread_local std::vector<double> acc;
  thread_local std::vector<uint64_t> bits;
  acc.assign(kWindow, 0.0);
  bits.assign(kWindow / 64, 0);

  std::vector<LexicalHit> heap;  // heap.front() is the worst kept hit
  heap.reserve(k + 1);
  double threshold = 0;
  // Guards the pruning tests against rounding between differently ordered sums.
  const double slack = 1e-9;
  size_t first_essential = 0;
  const double* norm = snap.norm.data();

  DocId base = 0;
  while (first_essential < n) {
    // Jump to the window holding the next essential posting.
    DocId next = kEndDoc;
    for (size_t i = first_essential; i < n; ++i) next = std::min(next, cur[i].doc());
    if (next == kEndDoc) break;
    if (next >= base + kWindow) base = next - next % kWindow;
    const DocId end = base + kWindow;
    const size_t window_essential = first_essential;

    for (size_t i = window_essential; i < n; ++i) {
      const double w = q[i].weight;
      cur[i].for_each_below(end, [&](DocId d, uint32_t tf) {
        const uint32_t o = d - base;
        acc[o] += w * tf_ratio(tf, norm[d]);
        bits[o >> 6] |= uint64_t{1} << (o & 63);
      });
    }

    for (uint32_t word = 0; word < kWindow / 64; ++word) {
      uint64_t m = bits[word];
      if (!m) continue;
      bits[word] = 0;
      while (m) {
        const uint32_t o = word * 64 + static_cast<uint32_t>(__builtin_ctzll(m));
        m &= m - 1;
        const DocId doc = base + o;
        double score = acc[o];
        acc[o] = 0;
        if (allowed && !allowed->test(doc)) continue;
        bool pruned = false;
        for (size_t i = window_essential; i-- > 0;) {
          if (heap.size() == k && score + prefix[i] < threshold - slack) {
            pruned = true;
            break;
          }
          cur[i].advance_to(doc);
          if (cur[i].doc() == doc) score += q[i].weight * tf_ratio(cur[i].tf(), norm[doc]);
        }
        if (pruned) continue;
        LexicalHit hit{doc, score};
        if (heap.size() < k) {
          heap.push_back(hit);
          std::push_heap(heap.begin(), heap.end(), ranks_before);
        } else if (ranks_before(hit, heap.front())) {
          std::pop_heap(heap.begin(), heap.end(), ranks_before);
          heap.back() = hit;
          std::push_heap(heap.begin(), heap.end(), ranks_before);
        } else {
          continue;
        }
        if (heap.size() == k) {
          threshold = heap.front().score;
          // Takes effect from the next window: this one's essential lists are spent.
          while (first_essential < n && prefix[first_essential] < threshold - slack) ++first_essential;
        }
      }
    }
    base = end;
  }
  std::sort(heap.begin(), heap.end(), ranks_before);
  return heap;
}

LexicalIndexStats Bm25Index::stats() const {
  LexicalIndexStats s;
  s.docs = size();
  s.terms = static_cast<uint32_t>(postings_.size());
  for (const auto& p : postings_) {
    s.postings += p.size();
    s.postings_bytes += p.compressed_bytes();
  }
  s.avg_doc_len = s.docs ? static_cast<double>(total_len_) / s.docs : 0;
  return s;
}

void Bm25Index::save(std::ostream& out) const {
  out.write(kMagic, sizeof(kMagic));
  io::write_pod(out, kVersion);
  io::write_pod(out, params_.k1);
  io::write_pod(out, params_.b);
  const auto& ao = analyzer_.options();
  io::write_pod<uint8_t>(out, static_cast<uint8_t>(ao.stemmer));
  io::write_pod<uint8_t>(out, ao.stopwords);
  io::write_pod<uint8_t>(out, ao.compound_parts);
  io::write_vec(out, doc_len_);
  // Terms in id order so ids survive the round trip.
  std::vector<const std::string*> names(postings_.size());
  for (const auto& [name, id] : term_ids_) names[id] = &name;
  io::write_pod<uint64_t>(out, postings_.size());
  for (size_t t = 0; t < postings_.size(); ++t) {
    io::write_str(out, *names[t]);
    const auto& pl = postings_[t];
    io::write_vec(out, pl.bytes());
    io::write_vec(out, pl.blocks());
    io::write_vec(out, pl.tail_docs());
    io::write_vec(out, pl.tail_tfs());
  }
  if (!out) fail(ErrorCode::unavailable, "could not write the lexical index");
}

Bm25Index Bm25Index::load(std::istream& in) {
  char magic[sizeof(kMagic)];
  if (!in.read(magic, sizeof(magic)) || std::memcmp(magic, kMagic, sizeof(kMagic)) != 0)
    fail(ErrorCode::invalid_argument, "not an Eagle BM25 index (bad magic)");
  auto version = io::read_pod<uint32_t>(in, "version");
  if (version != kVersion)
    fail(ErrorCode::invalid_argument,
         "unsupported BM25 index version " + std::to_string(version));
  Bm25Params p;
  p.k1 = io::read_pod<double>(in, "k1");
  p.b = io::read_pod<double>(in, "b");
  text::AnalyzerOptions ao;
  auto stem = io::read_pod<uint8_t>(in, "stemmer");
  if (stem > 2) fail(ErrorCode::invalid_argument, "corrupt BM25 index: stemmer");
  ao.stemmer = static_cast<text::Stemmer>(stem);
  ao.stopwords = io::read_pod<uint8_t>(in, "stopwords") != 0;
  ao.compound_parts = io::read_pod<uint8_t>(in, "compound_parts") != 0;
  Bm25Index idx(p, ao);
  idx.doc_len_ = io::read_vec<uint32_t>(in, "document lengths");
  for (auto l : idx.doc_len_) idx.total_len_ += l;
  auto nterms = io::read_pod<uint64_t>(in, "term count");
  if (nterms > io::kMaxElements) fail(ErrorCode::invalid_argument, "corrupt term count");
  // Grown term by term: a corrupt count cannot allocate what the file does not hold.
  const uint64_t expect = std::min<uint64_t>(nterms, uint64_t{1} << 20);
  idx.postings_.reserve(expect);
  idx.term_ids_.reserve(expect);
  const DocId ndocs = static_cast<DocId>(idx.doc_len_.size());
  for (uint64_t t = 0; t < nterms; ++t) {
    auto name = io::read_str(in, "term");
    auto bytes = io::read_vec<uint8_t>(in, "postings");
    auto blocks = io::read_vec<BlockMeta>(in, "skip entries");
    auto tail_docs = io::read_vec<DocId>(in, "tail postings");
    auto tail_tfs = io::read_vec<uint32_t>(in, "tail postings");
    bool ok = tail_docs.size() == tail_tfs.size() && tail_docs.size() < kBlockSize;
    for (const auto& b : blocks) ok = ok && b.offset < bytes.size() && b.last_doc < ndocs;
    for (auto d : tail_docs) ok = ok && d < ndocs;
    if (!ok) fail(ErrorCode::invalid_argument, "corrupt postings for term '" + name + "'");
    idx.postings_.emplace_back();
    idx.postings_.back().restore(std::move(bytes), std::move(blocks), std::move(tail_docs), std::move(tail_tfs));
    if (!idx.term_ids_.emplace(std::move(name), static_cast<uint32_t>(t)).second)
      fail(ErrorCode::invalid_argument, "corrupt BM25 index: duplicate term");
  }
  return idx;
}

}  // namespace eagle::index
