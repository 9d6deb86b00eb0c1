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

namespace {

// The BM25 saturation term; both searchers call exactly this so their scores agree.
inline double tf_ratio(uint32_t tf, double norm) {
  const double t = static_cast<double>(tf);
  return t / (t + norm);
}

// Lucene's BM25 idf, always positive.
inline double bm25_idf(uint64_t df, uint64_t n) {
  return std::log(1.0 + (static_cast<double>(n) - static_cast<double>(df) + 0.5) / (static_cast<double>(df) + 0.5));
}

// A document's BM25 length norm, k1 * (1 - b + b * dl / avgdl), as norm0 + norm1 * dl
// (two constants per query). Every score and every bound goes through this one
// function, so a segmented search and one index over the same documents agree to
// the last bit.
struct LengthNorm {
  double norm0;
  double norm1;
  LengthNorm(const Bm25Params& p, const CorpusStats& s) {
    const double avg = s.docs && s.total_len ? static_cast<double>(s.total_len) / static_cast<double>(s.docs) : 1.0;
    norm0 = p.k1 * (1.0 - p.b);
    norm1 = p.k1 * p.b / avg;
  }
  double operator()(uint32_t doc_len) const { return norm0 + norm1 * static_cast<double>(doc_len); }
};

struct Candidate {
  uint32_t segment;
  DocId doc;
  double score;
};

// "a ranks before b": higher score, then earlier segment, then lower doc id (the
// order of one index over the segments' documents added in segment order).
inline bool ranks_before(const Candidate& a, const Candidate& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.segment != b.segment) return a.segment < b.segment;
  return a.doc < b.doc;
}

struct QueryTerm {
  const PostingList* list;
  double weight;       // idf * (k1 + 1) * query tf
  double upper_bound;  // weight * the best saturation the term's impacts reach
};

// The best k candidates seen so far, shared by the segments of one search so a
// later segment starts pruning at the k-th score the earlier ones reached.
class TopK {
 public:
  explicit TopK(size_t k) : k_(k) { heap_.reserve(k + 1); }
  bool full() const { return heap_.size() == k_; }
  double threshold() const { return full() ? heap_.front().score : 0.0; }
  // Returns whether the candidate was kept.
  bool offer(const Candidate& c) {
    if (heap_.size() < k_) {
      heap_.push_back(c);
      std::push_heap(heap_.begin(), heap_.end(), ranks_before);
      return true;
    }
    if (!ranks_before(c, heap_.front())) return false;
    std::pop_heap(heap_.begin(), heap_.end(), ranks_before);
    heap_.back() = c;
    std::push_heap(heap_.begin(), heap_.end(), ranks_before);
    return true;
  }
  std::vector<Candidate> sorted() && {
    std::sort(heap_.begin(), heap_.end(), ranks_before);
    return std::move(heap_);
  }

 private:
  size_t k_;
  std::vector<Candidate> heap_;  // front: the worst kept
};

// How a segment's documents are scored and which may be returned.
struct SegmentScan {
  uint32_t segment;
  const std::vector<uint32_t>* doc_len;
  const LengthNorm* norm;
  const Bitset* hidden;
  const Bitset* allowed;
  DocId bits_base;
  bool returnable(DocId d) const {
    return (!hidden || !hidden->test(bits_base + d)) && (!allowed || allowed->test(bits_base + d));
  }
};

// The oracle: score every posting of every query term into a dense accumulator.
// Simple enough to be obviously right.
void exhaustive(const std::vector<QueryTerm>& q, const SegmentScan& s, TopK& top) {
  const size_t n = s.doc_len->size();
  std::vector<double> acc(n, 0.0);
  std::vector<uint8_t> seen(n, 0);
  DocId docs[kBlockSize];
  uint32_t tfs[kBlockSize];
  for (const auto& t : q) {
    for (size_t b = 0; b < t.list->num_blocks(); ++b) {
      uint32_t m = t.list->decode_block(b, docs, tfs);
      for (uint32_t i = 0; i < m; ++i) {
        acc[docs[i]] += t.weight * tf_ratio(tfs[i], (*s.norm)((*s.doc_len)[docs[i]]));
        seen[docs[i]] = 1;
      }
    }
  }
  for (DocId d = 0; d < n; ++d)
    if (seen[d] && s.returnable(d)) top.offer({s.segment, d, acc[d]});
}

// MaxScore (Turtle & Flood 1995), evaluated a window of doc ids at a time as in
// Lucene's MaxScoreBulkScorer. Terms are sorted by upper bound; the prefix of terms
// whose bounds sum below the current k-th score is "non-essential": a document that
// matches only those cannot enter the top k. In each window the essential lists are
// scored term-at-a-time into an accumulator (cheap, branch-free), then each
// candidate is completed by probing the non-essential lists with skips, stopping as
// soon as its score plus the remaining bounds cannot beat the k-th score.
void maxscore(std::vector<QueryTerm> q, const SegmentScan& s, TopK& top) {
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

  // Guards the pruning tests against rounding between differently ordered sums.
  const double slack = 1e-9;
  double threshold = top.threshold();
  size_t first_essential = 0;
  if (top.full())
    while (first_essential < n && prefix[first_essential] < threshold - slack) ++first_essential;
  const uint32_t* len = s.doc_len->data();
  const LengthNorm norm = *s.norm;

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
        acc[o] += w * tf_ratio(tf, norm(len[d]));
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
        if (!s.returnable(doc)) continue;
        bool pruned = false;
        for (size_t i = window_essential; i-- > 0;) {
          if (top.full() && score + prefix[i] < threshold - slack) {
            pruned = true;
            break;
          }
          cur[i].advance_to(doc);
          if (cur[i].doc() == doc) score += q[i].weight * tf_ratio(cur[i].tf(), norm(len[doc]));
        }
        if (pruned || !top.offer({s.segment, doc, score})) continue;
        if (top.full()) {
          threshold = top.threshold();
          // Takes effect from the next window: this one's essential lists are spent.
          while (first_essential < n && prefix[first_essential] < threshold - slack) ++first_essential;
        }
      }
    }
    base = end;
  }
}

// How many of a posting list's documents are hidden: the list scanned, or each
// hidden document probed with skips, whichever reads less.
uint64_t hidden_postings(const PostingList& list, const LiveDocs& live, DocId base, uint32_t docs) {
  if (!live.hidden || live.hidden_docs == 0 || list.empty()) return 0;
  uint64_t n = 0;
  const uint64_t probe_cost = uint64_t{live.hidden_docs} * 8 + docs / 64;
  if (list.size() <= probe_cost) {
    DocId ids[kBlockSize];
    uint32_t tfs[kBlockSize];
    for (size_t b = 0; b < list.num_blocks(); ++b) {
      const uint32_t m = list.decode_block(b, ids, tfs);
      for (uint32_t i = 0; i < m; ++i) n += live.hidden->test(base + ids[i]);
    }
    return n;
  }
  PostingCursor cur(&list);
  live.hidden->for_each_in(base, size_t{base} + docs, [&](size_t bit) {
    if (cur.doc() == kEndDoc) return;  // past the list's last document
    const auto d = static_cast<DocId>(bit - base);
    cur.advance_to(d);
    n += cur.doc() == d;
  });
  return n;
}

// The best saturation any of a term's postings reaches under `norm`: the impacts are
// the Pareto front of (tf, length), so one of them attains it.
double best_ratio(std::span<const Impact> impacts, const LengthNorm& norm) {
  double best = 0;
  for (const auto& i : impacts) best = std::max(best, tf_ratio(i.tf, norm(i.doc_len)));
  return best;
}

// Distinct query terms with their query tf, in first-seen order.
std::vector<std::pair<std::string_view, uint32_t>> query_tfs(const std::vector<std::string>& terms) {
  std::vector<std::pair<std::string_view, uint32_t>> out;
  for (const auto& t : terms) {
    auto pos = std::find_if(out.begin(), out.end(), [&](auto& p) { return p.first == t; });
    if (pos == out.end()) out.emplace_back(t, 1);
    else ++pos->second;
  }
  return out;
}

constexpr char kMagic[8] = {'E', 'G', 'L', 'B', 'M', '2', '5', '\0'};
constexpr uint32_t kVersion = 1;

}  // namespace

Bm25Index::Bm25Index(Bm25Params params, text::AnalyzerOptions analyzer)
    : params_(params), analyzer_(analyzer) {
  if (!(params.k1 >= 0) || !(params.b >= 0 && params.b <= 1))
    fail(ErrorCode::invalid_argument, "BM25 needs k1 >= 0 and 0 <= b <= 1");
}
Bm25Index::Bm25Index(Bm25Index&&) noexcept = default;
Bm25Index& Bm25Index::operator=(Bm25Index&&) noexcept = default;
Bm25Index::~Bm25Index() = default;

void Bm25Index::add_impact(uint32_t term, uint32_t tf, uint32_t len) {
  auto& front = impacts_[term];
  // The first impact with tf >= this one has the shortest length among them (the
  // front rises in both): if it is no longer, this posting is dominated.
  auto at = std::lower_bound(front.begin(), front.end(), tf, [](const Impact& i, uint32_t t) { return i.tf < t; });
  if (at != front.end() && at->doc_len <= len) return;
  // Remove the impacts this one dominates (tf <= and length >=): just before `at`.
  auto first = at;
  while (first != front.begin() && std::prev(first)->doc_len >= len) --first;
  if (at != front.end() && at->tf == tf) ++at;  // same tf, longer document: dominated too
  front.insert(front.erase(first, at), Impact{tf, len});
}

AnalyzedDoc Bm25Index::analyze(std::string_view text) const {
  // Distinct terms with their tf, in order of first occurrence (new terms get their
  // ids in that order). Each term is found in an open-addressing table of indexes
  // into doc.terms (linear probing, kept at most half full, per thread so its memory
  // is reused from one document to the next).
  thread_local std::vector<uint32_t> slots;  // 0 = empty, else index + 1 in doc.terms
  size_t mask = 255;
  slots.assign(mask + 1, 0);
  AnalyzedDoc doc;
  analyzer_.analyze(text, [&](std::string_view term) {
    ++doc.len;
    size_t at = StringHash{}(term) & mask;
    for (; slots[at] != 0; at = (at + 1) & mask) {
      auto& entry = doc.terms[slots[at] - 1];
      if (entry.first == term) {
        ++entry.second;
        return;
      }
    }
    doc.terms.emplace_back(std::string(term), 1u);
    slots[at] = static_cast<uint32_t>(doc.terms.size());
    if (doc.terms.size() * 2 > mask + 1) {  // grow: place every term again
      mask = mask * 2 + 1;
      slots.assign(mask + 1, 0);
      for (uint32_t i = 0; i < doc.terms.size(); ++i) {
        size_t j = StringHash{}(doc.terms[i].first) & mask;
        while (slots[j] != 0) j = (j + 1) & mask;
        slots[j] = i + 1;
      }
    }
  });
  return doc;
}

DocId Bm25Index::add(const AnalyzedDoc& analyzed) {
  const DocId doc = static_cast<DocId>(doc_len_.size());
  for (const auto& [term, tf] : analyzed.terms) {
    bool added = false;
    const uint32_t id = term_ids_.find_or_add(term, added);
    if (added) {
      postings_.emplace_back();
      impacts_.emplace_back();
    }
    postings_[id].append(doc, tf);
    add_impact(id, tf, analyzed.len);
  }
  doc_len_.push_back(analyzed.len);
  total_len_ += analyzed.len;
  return doc;
}

Bm25Index::TermView Bm25Index::term(std::string_view t) const {
  const auto id = term_ids_.find(t);
  if (!id) return {};
  return {&postings_[*id], std::span<const Impact>(impacts_[*id])};
}

std::vector<LexicalHit> Bm25Index::search(std::string_view query, size_t k, TopKAlgorithm algo,
                                          const Bitset* allowed, LiveDocs live) const {
  return search_terms(analyzer_.terms(query), k, algo, allowed, live);
}

double Bm25Index::query_weight(std::string_view text, LiveDocs live) const {
  const LexicalSegment one{this, live, nullptr};
  return query_weight_segments(std::span(&one, 1), analyzer_.terms(text));
}

std::vector<LexicalHit> Bm25Index::search_terms(const std::vector<std::string>& terms, size_t k,
                                                TopKAlgorithm algo, const Bitset* allowed, LiveDocs live) const {
  const LexicalSegment one{this, live, allowed};
  std::vector<LexicalHit> out;
  for (const auto& h : search_segments(std::span(&one, 1), terms, k, algo)) out.push_back({h.doc, h.score});
  return out;
}

CorpusStats live_stats(std::span<const LexicalSegment> segments) {
  CorpusStats s;
  for (const auto& seg : segments) {
    s.docs += seg.index->size() - seg.live.hidden_docs;
    s.total_len += seg.index->total_len() - seg.live.hidden_len;
  }
  return s;
}

uint64_t live_doc_freq(std::span<const LexicalSegment> segments, std::string_view term) {
  uint64_t df = 0;
  for (const auto& seg : segments)
    if (const auto* pl = seg.index->term(term).postings)
      df += pl->size() - hidden_postings(*pl, seg.live, seg.bits_base, seg.index->size());
  return df;
}

double query_weight_segments(std::span<const LexicalSegment> segments, const std::vector<std::string>& terms) {
  const CorpusStats stats = live_stats(segments);
  if (stats.docs == 0) return 0.0;
  double sum = 0.0;
  for (const auto& t : terms) sum += bm25_idf(live_doc_freq(segments, t), stats.docs);
  return sum;
}

std::vector<SegmentHit> search_segments(std::span<const LexicalSegment> segments, const std::vector<std::string>& terms,
                                        size_t k, TopKAlgorithm algo) {
  if (k == 0 || segments.empty()) return {};
  const CorpusStats stats = live_stats(segments);
  if (stats.docs == 0) return {};
  const Bm25Params& params = segments.front().index->params();
  const LengthNorm norm(params, stats);
  // Each distinct query term looked up once per segment; its weight from the summed
  // live document frequency (a term no live document holds scores nothing).
  const auto tfs = query_tfs(terms);
  const size_t nseg = segments.size();
  std::vector<Bm25Index::TermView> found(tfs.size() * nseg);
  std::vector<double> weight(tfs.size(), 0.0);
  for (size_t t = 0; t < tfs.size(); ++t) {
    uint64_t df = 0;
    for (size_t s = 0; s < nseg; ++s) {
      auto& view = found[t * nseg + s] = segments[s].index->term(tfs[t].first);
      if (view.postings)
        df += view.postings->size() -
              hidden_postings(*view.postings, segments[s].live, segments[s].bits_base, segments[s].index->size());
    }
    if (df > 0) weight[t] = bm25_idf(df, stats.docs) * (params.k1 + 1.0) * tfs[t].second;
  }
  TopK top(k);
  std::vector<QueryTerm> q;
  for (uint32_t s = 0; s < nseg; ++s) {
    const auto& seg = segments[s];
    q.clear();
    for (size_t t = 0; t < tfs.size(); ++t) {
      const auto& view = found[t * nseg + s];
      if (weight[t] == 0.0 || !view.postings || view.postings->empty()) continue;
      q.push_back({view.postings, weight[t], weight[t] * best_ratio(view.impacts, norm)});
    }
    if (q.empty()) continue;
    const SegmentScan scan{s,           &seg.index->doc_lengths(), &norm, seg.live.hidden_docs ? seg.live.hidden : nullptr,
                           seg.allowed, seg.bits_base};
    if (algo == TopKAlgorithm::exhaustive) exhaustive(q, scan, top);
    else maxscore(q, scan, top);
  }
  std::vector<SegmentHit> out;
  for (const auto& c : std::move(top).sorted()) out.push_back({c.segment, c.doc, c.score});
  return out;
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
  io::write_pod<uint64_t>(out, postings_.size());
  for (size_t t = 0; t < postings_.size(); ++t) {
    io::write_str(out, term_ids_.name(static_cast<uint32_t>(t)));
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
    bool added = false;
    idx.term_ids_.find_or_add(name, added);
    if (!added) fail(ErrorCode::invalid_argument, "corrupt BM25 index: duplicate term");
  }
  // The impacts are not stored: derived from the postings (one pass, as the add did).
  idx.impacts_.resize(idx.postings_.size());
  DocId docs[kBlockSize];
  uint32_t tfs[kBlockSize];
  for (uint32_t t = 0; t < idx.postings_.size(); ++t) {
    const auto& pl = idx.postings_[t];
    for (size_t b = 0; b < pl.num_blocks(); ++b) {
      const uint32_t m = pl.decode_block(b, docs, tfs);
      for (uint32_t i = 0; i < m; ++i) {
        if (docs[i] >= ndocs) fail(ErrorCode::invalid_argument, "corrupt postings: a document id past the last");
        idx.add_impact(t, tfs[i], idx.doc_len_[docs[i]]);
      }
    }
  }
  return idx;
}

}  // namespace eagle::index
