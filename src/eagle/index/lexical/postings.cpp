#include "eagle/index/lexical/postings.h"

#include <algorithm>

namespace eagle::index {
namespace {

inline void put_vbyte(std::vector<uint8_t>& out, uint32_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

inline uint32_t get_vbyte(const uint8_t*& p) {
  uint32_t v = *p & 0x7F;
  if (!(*p++ & 0x80)) return v;
  int shift = 7;
  for (;;) {
    uint32_t b = *p++;
    v |= (b & 0x7F) << shift;
    if (!(b & 0x80)) return v;
    shift += 7;
  }
}

}  // namespace

void PostingList::append(DocId doc, uint32_t tf) {
  tail_docs_.push_back(doc);
  tail_tfs_.push_back(tf);
  ++df_;
  if (tail_docs_.size() == kBlockSize) seal_tail();
}

void PostingList::seal_tail() {
  BlockMeta meta;
  meta.first_base = blocks_.empty() ? 0 : blocks_.back().last_doc;
  meta.offset = static_cast<uint32_t>(bytes_.size());
  meta.last_doc = tail_docs_.back();
  DocId prev = meta.first_base;
  // Deltas first, then tfs: two tight loops decode faster than interleaved pairs.
  for (DocId d : tail_docs_) {
    put_vbyte(bytes_, d - prev);
    prev = d;
  }
  for (uint32_t tf : tail_tfs_) put_vbyte(bytes_, tf);
  blocks_.push_back(meta);
  tail_docs_.clear();
  tail_tfs_.clear();
}

uint32_t PostingList::decode_block(size_t b, DocId* docs, uint32_t* tfs) const {
  if (b >= blocks_.size()) {
    std::copy(tail_docs_.begin(), tail_docs_.end(), docs);
    std::copy(tail_tfs_.begin(), tail_tfs_.end(), tfs);
    return static_cast<uint32_t>(tail_docs_.size());
  }
  const uint8_t* p = bytes_.data() + blocks_[b].offset;
  DocId prev = blocks_[b].first_base;
  for (uint32_t i = 0; i < kBlockSize; ++i) {
    prev += get_vbyte(p);
    docs[i] = prev;
  }
  for (uint32_t i = 0; i < kBlockSize; ++i) tfs[i] = get_vbyte(p);
  return kBlockSize;
}

size_t PostingList::compressed_bytes() const {
  return bytes_.size() + blocks_.size() * sizeof(BlockMeta) +
         tail_docs_.size() * (sizeof(DocId) + sizeof(uint32_t));
}

void PostingList::restore(std::vector<uint8_t> bytes, std::vector<BlockMeta> blocks,
                          std::vector<DocId> tail_docs, std::vector<uint32_t> tail_tfs) {
  bytes_ = std::move(bytes);
  blocks_ = std::move(blocks);
  tail_docs_ = std::move(tail_docs);
  tail_tfs_ = std::move(tail_tfs);
  df_ = static_cast<uint32_t>(blocks_.size() * kBlockSize + tail_docs_.size());
}

void PostingCursor::load_block(size_t b) {
  block_ = b;
  pos_ = 0;
  if (b >= list_->num_blocks()) {
    len_ = 0;
    doc_ = kEndDoc;
    return;
  }
  len_ = list_->decode_block(b, docs_, tfs_);
  doc_ = docs_[0];
}

void PostingCursor::next() {
  if (++pos_ < len_) {
    doc_ = docs_[pos_];
    return;
  }
  load_block(block_ + 1);
}

void PostingCursor::advance_to(DocId target) {
  if (doc_ >= target) return;
  if (list_->block_last_doc(block_) < target) {
    size_t b = block_ + 1;
    const size_t nb = list_->num_blocks();
    while (b < nb && list_->block_last_doc(b) < target) ++b;
    load_block(b);
    if (doc_ == kEndDoc) return;
  }
  // Linear scan inside the block: at most kBlockSize steps, branch-predictable.
  while (docs_[pos_] < target) ++pos_;
  doc_ = docs_[pos_];
}

}  // namespace eagle::index
