#pragma once
// Compressed postings: blocks of kBlockSize (doc delta, tf) pairs in VByte, with a
// per-block skip entry (last doc id, byte offset) so a cursor can jump over blocks
// without decoding them. The last, partial block stays uncompressed so documents
// can be appended after searches have run (incremental index).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace eagle::index {

using DocId = uint32_t;
inline constexpr uint32_t kBlockSize = 128;
inline constexpr DocId kEndDoc = UINT32_MAX;

struct BlockMeta {
  DocId last_doc;      // largest doc id in the block
  uint32_t offset;     // byte offset of the block in PostingList::bytes
  DocId first_base;    // doc id the block's first delta is taken from
};

class PostingList {
 public:
  // Doc ids must be appended in strictly increasing order.
  void append(DocId doc, uint32_t tf);
  uint32_t size() const { return df_; }
  bool empty() const { return df_ == 0; }

  // Decodes block `b` (0 <= b < num_blocks()) into docs/tfs; returns its length.
  uint32_t decode_block(size_t b, DocId* docs, uint32_t* tfs) const;
  size_t num_blocks() const { return blocks_.size() + (tail_docs_.empty() ? 0 : 1); }
  DocId block_last_doc(size_t b) const {
    return b < blocks_.size() ? blocks_[b].last_doc : tail_docs_.back();
  }
  size_t compressed_bytes() const;

  // Serialisation access.
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  const std::vector<BlockMeta>& blocks() const { return blocks_; }
  const std::vector<DocId>& tail_docs() const { return tail_docs_; }
  const std::vector<uint32_t>& tail_tfs() const { return tail_tfs_; }
  void restore(std::vector<uint8_t> bytes, std::vector<BlockMeta> blocks,
               std::vector<DocId> tail_docs, std::vector<uint32_t> tail_tfs);

 private:
  void seal_tail();

  std::vector<uint8_t> bytes_;
  std::vector<BlockMeta> blocks_;
  std::vector<DocId> tail_docs_;
  std::vector<uint32_t> tail_tfs_;
  uint32_t df_ = 0;
};

// Forward cursor over a PostingList, decoding one block at a time.
class PostingCursor {
 public:
  explicit PostingCursor(const PostingList* list) : list_(list) { load_block(0); }
  DocId doc() const { return doc_; }
  uint32_t tf() const { return tfs_[pos_]; }
  void next();
  // Moves to the first posting with doc id >= target.
  void advance_to(DocId target);
  // Calls f(doc, tf) for every posting before `end`, leaving the cursor on the
  // first posting >= end. Walks the decoded block directly (the TAAT inner loop).
  template <typename F>
  void for_each_below(DocId end, F&& f) {
    while (doc_ < end) {
      uint32_t p = pos_;
      while (p < len_ && docs_[p] < end) {
        f(docs_[p], tfs_[p]);
        ++p;
      }
      if (p < len_) {
        pos_ = p;
        doc_ = docs_[p];
        return;
      }
      load_block(block_ + 1);
    }
  }

 private:
  void load_block(size_t b);

  const PostingList* list_;
  size_t block_ = 0;
  uint32_t len_ = 0;
  uint32_t pos_ = 0;
  DocId doc_ = kEndDoc;
  DocId docs_[kBlockSize];
  uint32_t tfs_[kBlockSize];
};

}  // namespace eagle::index
