#pragma once
// A collection: Eagle's embedded storage engine (what Milvus is to the seed system).
// Rows carry an id, a text (BM25-indexed), a vector (flat or HNSW) and typed scalar
// fields (inverted indexes on the indexed ones). Writes are logged and synced to the
// write-ahead log before they are acknowledged and are searchable as soon as they
// return.
//
// Segments. The BM25 and vector indexes are kept per segment: sealed segments, each
// written once to its own file, and one active segment that takes new rows. Row
// numbers are global (a segment holds the rows [base, base + rows)); deletions are one
// bitmap over them. `checkpoint()` seals the active segment into a file holding only
// its rows (a cost of the rows written since, not of the collection), writes the
// deletion bitmap, runs the merges the tiered policy asks for (merge_policy.h:
// adjacent segments, so rows keep their numbers; deleted rows stay until compact())
// and starts a new log. A search runs over every segment with statistics summed
// across them (index/lexical/bm25_index.h: search_segments).
//
// Folder layout (persistent collections):
//   schema.json            the schema with its "checksum", written once at creation (atomic rename)
//   MANIFEST               {"format":3,"segments":[{"file":F,"rows":N}...],"deleted":D,"next_file":S,
//                           "last_lsn":L,"checksum":C} (atomic rename)
//   seg-<n>.eagle          one segment: its rows (id, text, values), BM25 index and vector index, with a
//                          CRC-32 per 64 KiB block in its footer (checked_file.h)
//   deleted-<n>.eagle      the deletion bitmap over every row the segments hold (checked file)
//   wal-<first lsn>.log    write-ahead log records with lsn > L (a CRC per frame)
// Every checksum is verified when its file is read: damage is data_loss naming the
// file and byte range, never served. Format 2 stores (one segment, deletions as row
// flags) and format 1 (no checksums) still open; their next checkpoint writes format 3.
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <functional>
#include <vector>

#include "eagle/core/file_map.h"
#include "eagle/core/bitset.h"
#include "eagle/core/rw_mutex.h"
#include "eagle/core/schema.h"
#include "eagle/core/value.h"
#include "eagle/index/lexical/bm25_index.h"
#include "eagle/store/merge_policy.h"
#include "eagle/store/record.h"
#include "eagle/store/record_codec.h"
#include "eagle/store/row_texts.h"
#include "eagle/store/row_table.h"
#include "eagle/store/rows_by_id.h"
#include "eagle/store/wal.h"

namespace eagle::filter {
class ScalarIndex;
}
namespace eagle::index {
class VectorIndex;
class LinkTask;
}

namespace eagle::store {

using TemplateParams = std::map<std::string, nlohmann::json>;

// {"id": "...", "text": "...", "vector": [...], "<field>": value, ...}. Unknown
// fields, wrong types and a wrong vector dimension are errors naming the field.
Record record_from_json(const nlohmann::json& j, const CollectionSchema& schema);
nlohmann::json record_to_json(const Record& r, const CollectionSchema& schema, bool with_vector);

struct CollectionHit {
  uint32_t row;
  std::string id;
  double score;  // vector: higher is better (cosine, IP, -L2^2); text: BM25
};

struct CollectionOptions {
  WalSync sync = WalSync::always;
  uint64_t checkpoint_wal_bytes = 64ull << 20;  // automatic compaction threshold
  index::Bm25Params bm25;
  text::AnalyzerOptions analyzer;
  // A reader's view (`eagle search` beside a writer): open never truncates, deletes
  // or rewrites a file, sees the last checkpoint plus the complete log records, and
  // every write is refused.
  bool read_only = false;
  // Whether a transaction was committed by the catalog's TRANSACTIONS log (a
  // transaction over several collections whose local commit record a crash
  // prevented). Set by Catalog; unset: only local commit records count.
  std::function<bool(uint64_t txn)> committed_elsewhere;
  // Where every file write goes (null: POSIX). Tests put a fault-injecting one here.
  io::FileSystem* file_system = nullptr;
  // Which sealed segments are merged (merge_policy.h).
  MergePolicy merges;
  // Where merges run. background: on a thread of the collection, at low priority, so
  // no write waits for one (a checkpoint only seals and asks). in_checkpoint: the
  // checkpoint runs them before it returns. manual: only merge_now() runs them (the
  // background path's I/O in the caller's thread, in order: the fault walk).
  enum class Merges : uint8_t { background, in_checkpoint, manual };
  Merges merge_mode = Merges::background;
  // Sealed segments' HNSW node blocks (vectors and graph) read in place from their
  // mapped files: page cache, shared and reclaimable, instead of heap (RssAnon).
  bool map_vectors = true;
  // Smaller segments keep their copy: their heap is small, and the many small files of
  // one-record writes would each cost a mapping (and its unmapping) for little gain.
  uint64_t map_vectors_min_rows = 4096;
  // New rows' vectors are stored at once and linked into the active segment's HNSW
  // graph by a builder thread of the collection (low priority), so a bulk write's
  // graph building runs on the second core beside its analysis and logging, and a
  // log replay at open only stores (the builder links after). Searches scan the rows
  // not linked yet exactly; a checkpoint links them all before it seals. A flat index
  // has nothing to link; an in-memory collection links as it writes (it has no
  // checkpoint after which results stop depending on the builder's progress). Off:
  // every row is linked by the write that adds it.
  bool background_linking = true;
  // A writer waits while more rows than this await linking (then until half are
  // linked): the exact scan of them stays cheap. A replay at open does not wait.
  uint64_t max_unlinked_rows = 8192;
  // A writer waiting for the builder links rows itself meanwhile, on its own core
  // (rows' neighbours are found under a shared hold, so the two linkers and searches
  // run at once; the writes take turns). The graph then depends on how the two
  // interleave, as a parallel build's does. Off: the builder alone links, and the
  // graph is the one linking each row as it is written builds.
  bool writer_links = true;
  // Builder threads linking at once (each plans beside the others; writes take turns).
  uint32_t builder_threads = 1;
};

// A transaction: one write of any size, in as many log records as it needs, that is
// all-or-nothing (an ingest of a million rows; an ingest over several collections).
// Collection::stage() logs each part (durable) and applies it invisibly: staged rows
// are hidden from every read, and the rows they replace stay visible. commit() logs
// the commit record and swaps everything in at once. A transaction never committed
// (a crash, an error, abort()) is never seen: replay skips parts without a commit.
using TxnId = uint64_t;
TxnId new_txn_id();  // random and nonzero

// A log record holds at most this much of a transaction part; stage() splits larger
// parts (the log's own limit is kMaxWalPayload).
inline constexpr size_t kTxnPartBytes = 32u << 20;

// Bounds on request sizes: sizes from requests are bounded, so no request can ask for
// unbounded work.
inline constexpr size_t kMaxSearchK = 10000;
inline constexpr size_t kMaxBatch = 100000;

class Collection {
 public:
  static std::unique_ptr<Collection> in_memory(CollectionSchema schema, CollectionOptions opts = {});
  static std::unique_ptr<Collection> create(const std::filesystem::path& dir, CollectionSchema schema,
                                            CollectionOptions opts = {});
  static std::unique_ptr<Collection> open(const std::filesystem::path& dir, CollectionOptions opts = {});
  ~Collection();

  const CollectionSchema& schema() const { return schema_; }
  bool persistent() const { return !dir_.empty(); }

  // Writes: all-or-nothing per call; acknowledged (durable) when they return.
  void insert(std::vector<Record> records);  // an existing id is a conflict
  void upsert(std::vector<Record> records);  // replaces rows with the same id
  size_t remove(const std::vector<std::string>& ids, bool auto_checkpoint = true);
  size_t remove_where(std::string_view filter, const TemplateParams& params = {});
  // Deletes `delete_ids` and upserts `records` as one write (one log record): a
  // re-ingested document's stale chunks and its new ones change together, so no
  // reader sees both or neither. Returns how many of `delete_ids` were live.
  // auto_checkpoint=false leaves a due checkpoint to checkpoint_if_due() (a caller
  // that holds searches back during the write runs it after letting them go).
  size_t replace(const std::vector<std::string>& delete_ids, std::vector<Record> records, bool auto_checkpoint = true);
  // Transactions (see TxnId). stage() may be called any number of times, interleaved
  // with other writes; each call is validated whole before anything is logged. A
  // later staged row with an id staged before replaces it within the transaction.
  void stage(TxnId txn, const std::vector<std::string>& delete_ids, std::vector<Record> records);
  // Logs the commit record and makes the staged rows visible (and the deletes and
  // replaced rows gone) at once. Returns how many deleted ids were live. A
  // transaction with nothing staged here commits as a no-op.
  size_t commit(TxnId txn, bool auto_checkpoint = true);
  // commit() in two steps, for a caller that shows several collections' commits at
  // once (Catalog::commit): log_commit makes the commit durable (the commit point: a
  // crash after it replays the transaction) and returns false when nothing is staged
  // for `txn` here; publish_commit makes its rows visible and returns how many deleted
  // ids were live. Should another write (or abort) come first, it publishes the
  // logged commit before anything else, so memory always follows the log's order.
  bool log_commit(TxnId txn);
  size_t publish_commit(TxnId txn);
  // Forgets the transaction: its staged rows become tombstones (nothing is logged;
  // without a commit record replay skips its parts).
  void abort(TxnId txn);
  bool in_transaction() const;
  bool has_transaction(TxnId txn) const;
  // Whether `txn` has staged a row with this id here (a streamed ingest finds a
  // duplicate id this way without keeping every id it has read).
  bool staged(TxnId txn, const std::string& id) const;
  // Seals the active segment into its own file, writes the deletion bitmap, runs the
  // merges the policy asks for and starts a new log. Files are written while searches
  // go on (writers wait); only the swap excludes readers. An open transaction's staged
  // rows are sealed with the rest, hidden; the MANIFEST names them and the deletes the
  // transaction will apply, so its commit record in the new log (or the catalog's)
  // makes them live on replay, and without one they stay tombstones: a bulk ingest's
  // growing segment is bounded by checkpoint_wal_bytes like any other writer's.
  void checkpoint();
  // A checkpoint when the log has passed CollectionOptions::checkpoint_wal_bytes.
  void checkpoint_if_due();
  // checkpoint() that also drops deleted rows (their tombstones, index entries and
  // text), rebuilding the indexes from the live rows into one segment. A conflict
  // while a transaction is open (its staged rows are numbered).
  void compact();
  // Segments the collection holds (sealed ones and the active one, when it has rows).
  size_t segment_count() const;
  // Background merges: paused (a running one stops at its next batch and is dropped)
  // until resumed; wait_for_merges() returns once no merge is running or asked for
  // (immediately while paused).
  void pause_merges(bool paused);
  void wait_for_merges();
  // Runs the merges the policy asks for in this thread, one at a time, as the
  // background merger would; returns how many ran.
  size_t merge_now();

  // Reads.
  size_t count() const;  // live rows
  bool read_only() const { return opts_.read_only; }
  std::optional<Record> get(const std::string& id) const;
  // get() with the vector as the index stores it (normalised for cosine).
  std::optional<Record> get_with_vector(const std::string& id) const;
  // The live row `id` if it also passes `filter` (a scope check on one row, without
  // building a bitset over the collection).
  std::optional<Record> get(const std::string& id, std::string_view filter, const TemplateParams& params) const;
  // Live row ids whose `field` (a string field) equals `value`, in row order.
  std::vector<std::string> ids_where_equals(const std::string& field, const std::string& value) const;
  // (id, field value) of the live rows whose string `field` is one of `values`, in
  // row order (a document's chunks, for replacement and deletion).
  std::vector<std::pair<std::string, std::string>> ids_where_in(const std::string& field,
                                                                const std::vector<std::string>& values) const;
  // Records of search hits by row (one lock, no id lookups); vectors are not copied.
  std::vector<Record> records(const std::vector<CollectionHit>& hits) const;
  // Calls fn(i, id, text, values) for each hit under one lock, without copying the
  // row (the query path turns rows straight into pipeline hits).
  template <typename F>
  void visit(const std::vector<CollectionHit>& hits, F&& fn) const {
    std::shared_lock lock(mutex_);
    std::string id, text;
    for (size_t i = 0; i < hits.size(); ++i) {
      const uint32_t r = hits[i].row;
      if (r >= rows_.size()) {
        // A row renumbered by a compaction since the search: no id.
        fn(i, std::as_const(id = {}), std::as_const(text = {}), PackedValues());
        continue;
      }
      id = rows_.id(r);
      texts_->read_into(rows_.text(r), text);
      fn(i, std::as_const(id), std::as_const(text), rows_.values(r, schema_));
    }
  }
  // Live records passing `filter`, in row order, at most `limit` (graph and
  // parent-document expansion fetch nodes this way).
  std::vector<Record> fetch(std::string_view filter, const TemplateParams& params, size_t limit) const;
  // Live records (no vectors) from row number `from` on, in row order, at most
  // `limit`; *next is where the next page starts (a walk over every row in pages;
  // only compact() renumbers rows).
  std::vector<Record> scan(size_t from, size_t limit, size_t* next) const;
  // Live rows passing `filter` (empty filter: every live row).
  Bitset filter(std::string_view filter, const TemplateParams& params = {}) const;
  std::vector<CollectionHit> search_vector(std::span<const float> query, size_t k,
                                           std::string_view filter = {}, const TemplateParams& params = {},
                                           uint32_t ef = 0) const;
  // BM25 over the live rows passing `filter`. The statistics (document count, total
  // length, each term's document frequency) are the collection's live rows', or, with
  // `statistics` (a filter expression, the same params), only those rows': exactly the
  // scores an index holding those rows alone would give (a tenant's search whose
  // scores must not depend on other tenants' documents).
  std::vector<CollectionHit> search_text(std::string_view query, size_t k, std::string_view filter = {},
                                         const TemplateParams& params = {}, std::string_view statistics = {}) const;
  // The lexical index's weight of a text as a query (Bm25Index::query_weight), from the
  // live rows' statistics or, with `statistics`, those rows' alone (as search_text).
  double query_weight(std::string_view text, std::string_view statistics = {}, const TemplateParams& params = {}) const;
  nlohmann::json describe() const;

 private:
  Collection(CollectionSchema schema, CollectionOptions opts, std::filesystem::path dir);

  void validate_batch(const std::vector<Record>& records, bool allow_existing) const;
  void require_writable() const;
  void load_from_disk(const std::string& manifest);
  void log(WalOp op, const std::string& payload);
  // `analyzed`, when given, holds each record's analysed text (done ahead, off this
  // thread); else the text is analysed here.
  void apply_insert(std::vector<Record>& records, const std::vector<index::AnalyzedDoc>* analyzed = nullptr);
  // Indexes the row; returns its row number (the caller holds mutex_ exclusively, or
  // owns the collection: replay, compaction).
  uint32_t append_row(Record& r, const index::AnalyzedDoc& text);
  // The write path's two steps (called with write_mu_ held and mutex_ not held):
  // append_hidden indexes `records` as hidden rows, 64 to an exclusive hold
  // of mutex_ (on_row runs there), and returns the first one's number; publish deletes
  // `deletes` and makes the rows from `first` on live, in one exclusive hold, and
  // returns how many of `deletes` were live.
  uint32_t append_hidden(std::vector<Record>& records, const std::function<void(uint32_t)>& on_row = {});
  size_t publish(const std::vector<std::string>& deletes, uint32_t first);
  std::vector<std::string> live_ids(const std::vector<std::string>& ids) const;
  // insert (allow_existing false: an existing id is a conflict) and upsert.
  void write_records(std::vector<Record>& records, WalOp op, bool allow_existing);
  // A row leaves (deleted, replaced, staged) or joins (committed) the live rows; the
  // BM25 statistics count live rows only (LiveDocs).
  void hide(uint32_t row);
  void unhide(uint32_t row);
  size_t apply_remove(const std::vector<std::string>& ids);
  // A log record as the replay's reading thread makes it ready: checked, and, for a
  // binary write, decoded with its texts analysed (decode_error when it could not
  // be); or (file_end) the end of log file `file`, read as `stats` says.
  struct ReplayItem {
    ReplayItem() = default;
    ReplayItem(uint64_t lsn_, WalOp op_, std::string payload_) : lsn(lsn_), op(op_), payload(std::move(payload_)) {}
    uint64_t lsn = 0;
    WalOp op{};
    std::string payload;
    std::optional<WritePayload> write;
    std::vector<index::AnalyzedDoc> analyzed;
    std::exception_ptr decode_error;
    size_t file = 0;
    bool file_end = false;
    WalReplayStats stats;
  };
  static constexpr size_t kReplayReadAhead = 4;  // records between the two threads
  void replay_logs(const std::vector<std::pair<uint64_t, std::filesystem::path>>& wals, uint64_t segment_lsn,
                   const std::function<bool(TxnId)>& is_committed);
  ReplayItem prepare_replay(uint64_t lsn, WalOp op, const std::string& payload,
                            const index::Bm25Index& analysis) const;
  void replay(ReplayItem& item);
  // Transactions: the staged part applied invisibly / the staged rows swapped in.
  void apply_staged(TxnId txn, std::vector<std::string> deletes, std::vector<Record>& records,
                    const std::vector<index::AnalyzedDoc>* analyzed = nullptr);
  size_t apply_commit(TxnId txn);
  // log_commit / publish of a logged commit, with write_mu_ held (publish: a no-op
  // when none is pending).
  bool log_commit_locked(TxnId txn);
  size_t publish_pending_locked();
  // Parts of a transaction in log payloads (split at kTxnPartBytes).
  std::vector<std::string> part_payloads(TxnId txn, const std::vector<std::string>& deletes,
                                         const std::vector<Record>& records) const;
  // A log record replay could not apply: logged, and (writer) appended to
  // DIR/quarantine.jsonl with its error.
  void quarantine(const std::filesystem::path& log, uint64_t lsn, WalOp op, const std::string& payload,
                  const std::string& why);
  // Both called with write_mu_ held and mutex_ not held.
  void checkpoint_unlocked();
  void maybe_checkpoint();
  Bitset filter_locked(std::string_view filter, const TemplateParams& params) const;
  // nullptr when every row may be returned (no filter, no deletions).
  std::optional<Bitset> allowed_locked(std::string_view filter, const TemplateParams& params) const;
  // The builder (CollectionOptions::background_linking): links the active segment's
  // stored rows into its graph, a row at a time: the row's neighbours are found under
  // a shared hold (beside searches) and written under an exclusive one. wake_linker
  // starts it (once) or tells it there is work; link_all_pending links the rest in the
  // caller's thread (write_mu_ held, so no row is added meanwhile: a checkpoint before
  // it seals); wait_for_linker is a writer's back-pressure (max_unlinked_rows), during
  // which the writer links rows too, on its own core.
  void wake_linker();
  void linker_loop();
  void link_all_pending();
  // Links the active segment's next stored row under an exclusive hold of mutex_
  // (link_mu_ held exclusively); returns the rows still to link.
  uint64_t link_one();
  // Claims, plans and applies one row's links with `task` (link_mu_ taken shared, so
  // the builder and a writer may link at once, in claim order); returns the rows still
  // to link, or nullopt when every pending row was already claimed.
  std::optional<uint64_t> link_step(std::unique_ptr<index::LinkTask>& task);
  void wait_for_linker();
  void stop_linker();
  // One segment's indexes over the rows [base, base + rows).
  struct Segment {
    uint32_t base = 0;
    index::Bm25Index lexical;
    std::unique_ptr<index::VectorIndex> vectors;
    uint32_t hidden_docs = 0;  // its rows hidden (deleted_), and their BM25 lengths
    uint64_t hidden_len = 0;
    std::string file;  // its segment file; empty while its rows are only in the log
    SegmentFileSlot slot = 0;  // where texts_ reads that file
    // The mapped files some of its rows' bytes lie in (RowTable::append_in_place): its
    // own file once an open or a merge pointed them there, and until then the files of
    // the segments it was merged from. Dropped with the segment, as the rows move on.
    std::vector<std::shared_ptr<const FileMap>> row_maps;
    uint32_t rows() const { return lexical.size(); }
  };
  // Row `row` as a Record (its text read, its values decoded; no vector). mutex_ held.
  Record row_record(uint32_t row) const;
  Segment new_segment(uint32_t base) const;
  // The segments' lexical indexes as one search sees them (hidden: deleted_).
  std::vector<index::LexicalSegment> lexical_segments(const Bitset* allowed) const;
  // Narrows the statistics of `segs` to the live rows passing the filter expression
  // `statistics` (none: unchanged); `outside` keeps the bitset of the rows hidden from
  // them, which the segments point at. mutex_ held.
  void restrict_statistics_locked(std::vector<index::LexicalSegment>& segs, std::string_view statistics,
                                  const TemplateParams& params, std::optional<Bitset>& outside) const;
  Segment& segment_of(uint32_t row);
  const Segment& segment_of(uint32_t row) const;
  // Appends the rows of a segment file (format 2 and 3 layout) and returns its indexes;
  // `flags_are_deletions`: format 2, where the rows' flags are the deletions.
  Segment load_segment(const std::filesystem::path& file, bool checked, bool flags_are_deletions);
  // load_segment's reading of the file's rows and indexes (`in` and `map` both on
  // `opened`), the checksums left to the caller.
  Segment parse_segment(std::istream& in, const std::filesystem::path& file, const std::filesystem::path& opened,
                        const std::shared_ptr<const FileMap>& map, SegmentFileSlot slot, bool checked,
                        bool flags_are_deletions);
  // The rows of a layout-1 segment (texts inline, values as JSON), read from `in`.
  void load_rows_layout1(std::istream& in, uint32_t base, uint64_t n, SegmentFileSlot slot, bool flags_are_deletions,
                         const std::function<void(uint32_t, const std::vector<Value>&)>& index_scalars);
  // Writes segment `seg`'s rows and indexes; returns where each row's text and the
  // vector index landed in the file.
  // lock_per_batch: the caller holds no lock; mutex_ is taken shared for each batch
  // of rows (a background merge, which must not hold writers back for a whole file).
  // `lsn`: the last log record the file's rows reflect (its header).
  struct WrittenSegment {
    std::vector<uint64_t> text_offsets;  // each row's text, in row order
    std::vector<uint64_t> row_offsets;   // each row's record (RowTable's form), in row order
    uint64_t vectors_offset = 0;         // where the vector index starts
  };
  WrittenSegment write_segment(const std::filesystem::path& file, const Segment& seg, uint64_t lsn,
                               bool lock_per_batch = false) const;
  // The vector index at `offset` of a segment file just written, read back with its
  // node blocks in place (map_vectors); nullptr when not mapping or it cannot be read.
  std::unique_ptr<index::VectorIndex> mapped_vectors(const std::filesystem::path& file, uint64_t offset,
                                                     uint64_t rows) const;
  bool maps_vectors(uint64_t rows) const;  // map_vectors, for a segment of this size
  // A merged segment's rows pointed at their records in its new file (mapped; the map
  // opened by the caller, outside the lock) so the files of the segments it replaces
  // can be unmapped; without a map (it could not be opened) the merged segment keeps
  // theirs. mutex_ held exclusively.
  void take_row_maps_locked(Segment& merged, std::vector<std::shared_ptr<const FileMap>> from,
                            const std::shared_ptr<const FileMap>& map, const std::vector<uint64_t>& row_offsets);
  // Builds the segment of rows [first.base, last.base + last.rows()) from their texts
  // and stored vectors (a merge: deleted rows are kept, so no row changes number).
  Segment merge_segments(size_t first, size_t count) const;
  // The segment of rows [base, end) built from their texts and stored vectors, a batch
  // at a time; lock_per_batch: the caller holds no lock, each batch is read under a
  // brief shared lock, and a merge abandoned meanwhile (merge_abandoned) gives nullopt.
  std::optional<Segment> build_merged(uint32_t base, uint32_t end, bool lock_per_batch) const;
  // Sets seg's hidden counts from deleted_ (mutex_ held).
  void count_hidden(Segment& seg) const;
  // The background merger: started by the first checkpoint that leaves a merge to do.
  void request_merges();
  // request_merges() when the policy asks for a merge among the sealed segments (a
  // writer with background merges; called by checkpoints and by open).
  void request_merges_if_due();
  void merger_loop();
  // One merge the policy asks for among the sealed segments, built in batches under
  // brief shared locks and published under the exclusive one; false when none is due
  // (or it was abandoned: paused, stopping, or the segments changed under it).
  bool run_one_merge();
  bool merge_abandoned() const;
  // A new segment file taking the place of segments [first, first + count).
  struct ListedFile {
    size_t first;
    size_t count;
    std::string file;
  };
  // MANIFEST's segment list: segments_' files in order, each of `replacing` (sorted by
  // first) in place of its range; every file listed is added to `named`.
  nlohmann::json manifest_segments(const std::vector<ListedFile>& replacing, std::set<std::string>& named) const;
  // The MANIFEST listing segments_' files (format 3); called with write_mu_ held.
  // covered_lsn: the last log record the sealed segments and the deletions hold.
  // open_txns: the transactions open at covered_lsn, their sealed staged rows and
  // pending deletes (txns_manifest()); a merge repeats the last checkpoint's.
  void write_manifest(const nlohmann::json& listed, const std::string& deletions_file, uint64_t covered_lsn,
                      const nlohmann::json& open_txns);
  // MANIFEST's "transactions": each open transaction (not failed) as its id, its staged
  // rows as [first, end) ranges and its pending deletes (mutex_ held).
  nlohmann::json txns_manifest() const;
  // Reads them back at open: a transaction committed by a record after covered_lsn (or
  // by the catalog) gets its staged rows and deletes again; any other stays hidden.
  void restore_txns(const nlohmann::json& listed, const std::function<bool(TxnId)>& is_committed);
  void write_deletions(const std::filesystem::path& file) const;
  void load_deletions(const std::filesystem::path& file);
  std::string next_file_name(const char* prefix);
  void reset_indexes();
  io::FileSystem& fsys() const { return io::or_posix(opts_.file_system); }

  CollectionSchema schema_;
  CollectionOptions opts_;
  std::filesystem::path dir_;

  // write_mu_ orders writers, checkpoints and merge publication: every change to the
  // state below happens under it, so a writer reads the state without mutex_. mutex_
  // guards the state against readers (searches shared; a change exclusive, held only
  // for the change itself: one row's indexing, a publication, a swap; never across
  // disk I/O). Lock order: write_mu_, mutex_.
  mutable std::mutex write_mu_;
  mutable RwMutex mutex_;
  RowTable rows_;  // texts read through texts_ (row_texts.h)
  std::unique_ptr<RowTexts> texts_;  // the rows' texts, on disk
  Bitset deleted_;  // hidden rows: deleted, replaced, or staged and not committed
  RowsById<RowTable> live_{&rows_};  // id -> live row
  // Sealed segments in row order, then the active one (always last, maybe empty).
  std::vector<Segment> segments_;
  uint64_t next_file_ = 1;  // the number of the next segment or deletions file

  // Background merges. Lock order: merge_run_mu_, write_mu_, mutex_; merge_mu_ is a
  // leaf (the flags below).
  std::mutex merge_run_mu_;  // one merge or compaction at a time
  std::mutex merge_mu_;
  std::condition_variable merge_cv_;
  bool merge_wanted_ = false;
  bool merge_running_ = false;
  bool merge_paused_ = false;
  bool merge_stop_ = false;
  std::thread merger_;
  std::set<std::string> merge_outputs_;  // files a merge is writing (guarded by write_mu_)
  // The builder. link_mu_: linkers (link_step: the builder, a waiting writer) hold it
  // shared; link_all_pending, and compact's swap of the segments, exclusively: the
  // active segment is never sealed or replaced while a link is planned on it. linker_mu_ is a leaf guarding the flags. unlinked_rows_ follows
  // the active segment's pending rows (changed with mutex_ held exclusively), so the
  // builder looks for work without taking mutex_. Lock order: write_mu_, link_mu_,
  // mutex_, link_turn_mu_ (a leaf: links_applied_ counts applied links, so a linker
  // whose claim is not next waits for the one before it).
  bool defer_linking_ = false;  // background_linking, for this collection's own writes
  RwMutex link_mu_;
  std::mutex link_turn_mu_;
  std::condition_variable link_turn_cv_;
  uint64_t links_applied_ = 0;
  std::unique_ptr<index::LinkTask> writer_task_;   // write_mu_ held
  std::atomic<uint64_t> rows_linked_by_writers_{0};  // since the open (describe())
  std::mutex linker_mu_;
  std::condition_variable linker_cv_;  // work for the builder; progress for a waiting writer
  uint64_t linker_work_ = 0;  // bumped by wake_linker: each builder compares with the last it saw
  std::atomic<bool> linker_stop_{false};  // also read by the builder between links, without linker_mu_
  std::vector<std::thread> linkers_;  // CollectionOptions::builder_threads
  std::atomic<uint64_t> unlinked_rows_{0};
  std::atomic<uint32_t> writer_waiting_{0};  // a writer about to take mutex_ for a row
  std::vector<std::unique_ptr<filter::ScalarIndex>> scalar_;  // per schema field; null if not indexed
  // Open transactions: the deletes to apply at commit and the staged rows (hidden in
  // deleted_ until then), by id.
  struct StagedTxn {
    explicit StagedTxn(const RowTable* all_rows) : rows(all_rows) {}
    std::vector<std::string> deletes;
    RowsById<RowTable> rows;
    bool failed = false;  // a part was logged but not applied: it can never commit
  };
  std::map<TxnId, StagedTxn> txns_;
  TxnId pending_publish_ = 0;  // a transaction whose commit record is logged, not yet applied
  StagedTxn& txn_state(TxnId txn) { return txns_.try_emplace(txn, &rows_).first->second; }
  // Written by the writer outside mutex_ (the log append), read under it (describe).
  std::atomic<uint64_t> last_lsn_ = 0;
  std::string deletions_file_;  // the deletion bitmap MANIFEST names (format 3)
  nlohmann::json manifest_txns_ = nlohmann::json::array();  // the open transactions MANIFEST names
  uint64_t covered_lsn_ = 0;    // the lsn MANIFEST names: what its files hold
  std::unique_ptr<WalWriter> wal_;
  std::atomic<uint64_t> wal_bytes_ = 0;
};

// What `repair_logs` did to one log file.
struct LogRepair {
  std::filesystem::path file;
  uint64_t offset = 0;        // where the damage began (the file is cut there)
  uint64_t records_kept = 0;  // intact records before it
  uint64_t bytes_removed = 0;
  std::filesystem::path moved_to;  // the removed bytes (or a whole later log), kept
  bool whole_file = false;         // a later log moved aside whole
};

// `eagle repair` for one collection folder (not open): cuts each corrupt log at its
// first bad frame, keeping the intact records before it, and moves every later log
// aside, since its records followed the lost ones. The removed bytes are kept in
// *.damaged* files beside the log. Logs without corruption are untouched (a torn tail
// is cut by the next open, as always).
std::vector<LogRepair> repair_logs(const std::filesystem::path& dir, io::FileSystem& fs = io::posix());

// A folder of named collections: ROOT/<name>/.
// Thread-safe: collections open on first use under one mutex; a Collection, once
// open, stays at its address until drop().
class Catalog {
 public:
  explicit Catalog(std::filesystem::path root, CollectionOptions opts = {});
  Collection& create(const CollectionSchema& schema);
  Collection& get(const std::string& name);  // opens on first use; not_found if absent
  Collection* find(const std::string& name);  // get(), or nullptr when absent
  bool exists(const std::string& name) const;
  void drop(const std::string& name);
  std::vector<std::string> list() const;
  nlohmann::json describe(const std::string& name);
  bool read_only() const { return opts_.read_only; }

  // Rebuilding a collection under its name (`eagle reembed`: new vectors, maybe of
  // another dimension). begin_rebuild makes an empty collection with `schema` (an
  // existing collection's name) in a hidden folder, ROOT/.rebuild-<name>; the caller
  // fills it. finish_rebuild swaps it in for the live one: on disk atomically (a
  // crash at any point leaves the old collection or the new one, whole; the catalog
  // finishes or discards an interrupted swap when it next opens), then in memory
  // inside `exclusive` (an engine holds its searches back there; the replaced
  // Collection object is destroyed after it returns). abort_rebuild discards it.
  // `exclusive` is given the in-memory swap, which returns whether the new collection
  // was installed (false: the swap failed; finish_rebuild then throws). Should the
  // swap fail and finishing it again fail too, the name is unavailable (find, get and
  // create fail) until the store is opened again, which finishes it.
  using ExclusiveFn = std::function<void(const std::function<bool()>&)>;
  std::unique_ptr<Collection> begin_rebuild(const CollectionSchema& schema);
  void finish_rebuild(std::unique_ptr<Collection> built, const ExclusiveFn& exclusive = {});
  void abort_rebuild(std::unique_ptr<Collection> built);

  // Commits a transaction staged in several collections as one: the catalog's
  // TRANSACTIONS log records it (the commit point) before each collection logs its
  // own commit record, so a crash between them cannot commit it in some collections
  // only. One collection: its own commit record is the commit point.
  // Every commit record (TRANSACTIONS', then each collection's) is durable before
  // `exclusive` (when given) is called with the publication, which only makes the rows
  // visible: a caller that holds its searches back there never holds them for the
  // disk. Returns how many deleted ids were live.
  size_t commit(TxnId txn, const std::vector<Collection*>& collections, const ExclusiveFn& exclusive = {});

 private:
  bool exists_locked(const std::string& name) const;
  // Where collection `name` lives: ROOT/<name>, or -- for a reader that looks between
  // the two renames of a swap without RENAME_EXCHANGE -- its complete replacement.
  std::filesystem::path folder_locked(const std::string& name) const;
  bool committed_here(TxnId txn) const;
  // unavailable when a rebuild of `name` failed half-way in this process.
  void require_available_locked(const std::string& name) const;
  // Puts the complete .new-<name> in place of <name> (RENAME_EXCHANGE; else two renames
  // through .old-<name>; one rename when <name> is already gone), synced, marker
  // removed. Returns the folder now holding the old collection (empty: none).
  std::filesystem::path swap_in_rebuilt(const std::string& name);
  // Finishes (or discards) rebuilds a crash interrupted; `only`: those of one name.
  void recover_rebuilds(const std::string& only = {});

  std::filesystem::path root_;
  CollectionOptions opts_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Collection>> open_;
  std::map<std::string, std::string> unavailable_;  // name -> why (a rebuild failed half-way)
  // The TRANSACTIONS log (ROOT/TRANSACTIONS): ids of committed multi-collection
  // transactions. It only grows, by one small record per such transaction.
  mutable std::mutex txn_mu_;
  std::unordered_set<TxnId> committed_;
  std::unique_ptr<WalWriter> txn_log_;
  uint64_t txn_lsn_ = 0;
};

}  // namespace eagle::store
