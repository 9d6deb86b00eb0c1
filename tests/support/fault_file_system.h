#pragma once
// A fault-injecting io::FileSystem for tests, in the spirit of SQLite's test VFS and
// LevelDB's FaultInjectionTestEnv. It counts every I/O call the store makes and can
// make the Nth one:
//   crash        throw SimulatedCrash (not a std::exception, so nothing in the store
//                can swallow it) and refuse every later call, as a dead process would;
//   error        fail with eagle::Error(unavailable), the process going on;
//   short_write  an append writes half its buffer, then fails (a full disk).
// lose_power() then drops what a power cut drops: bytes not synced (or only part of
// them: a torn write) and every entry change (create, rename, remove, mkdir) in a
// folder not synced since. Real fsyncs are skipped: durability is what this class
// models, so the walk runs at memory speed.
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "eagle/core/error.h"
#include "eagle/core/file_system.h"

namespace eagle::testing {

struct SimulatedCrash {};

class FaultFileSystem : public io::FileSystem {
 public:
  enum class Fault { none, crash, error, short_write };

  explicit FaultFileSystem(io::FileSystem& base = io::posix()) : base_(base) {}

  void arm(Fault fault, uint64_t call) {
    fault_ = fault;
    at_ = call;
  }
  uint64_t calls() const { return calls_; }
  bool fired() const { return fired_; }

  // keep_unsynced: the fraction of each file's unsynced bytes that reached the disk.
  void lose_power(double keep_unsynced = 0.0) {
    namespace fs = std::filesystem;
    for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
      const DirOp& op = *it;
      std::error_code ec;
      switch (op.kind) {
        case DirOp::create:
          fs::remove(op.path, ec);
          files_.erase(op.path);
          break;
        case DirOp::mkdir:
          fs::remove_all(op.path, ec);
          break;
        case DirOp::rename:
          fs::rename(op.path, op.from, ec);
          move_tracked(op.path, op.from);
          if (op.backup) restore(op.path, *op.backup, op.backup_synced);
          break;
        case DirOp::exchange:
          base_.exchange(op.path, op.from);
          swap_tracked(op.path, op.from);
          break;
        case DirOp::remove:
          if (op.backup) restore(op.path, *op.backup, op.backup_synced);
          break;
      }
    }
    pending_.clear();
    for (const auto& [path, st] : files_) {
      std::error_code ec;
      const uint64_t size = fs::file_size(path, ec);
      if (ec || size <= st.synced) continue;
      const uint64_t keep = st.synced + static_cast<uint64_t>(static_cast<double>(size - st.synced) * keep_unsynced);
      fs::resize_file(path, keep, ec);
    }
  }

  std::unique_ptr<io::WritableFile> open_writable(const std::filesystem::path& file, OpenMode mode) override {
    tick();
    const bool existed = std::filesystem::exists(file);
    auto base = base_.open_writable(file, mode);
    if (!existed) pending_.push_back({DirOp::create, file.parent_path(), file});
    auto& st = files_[file];
    // Content that was there before we saw the file counts as durable.
    st.synced = mode == OpenMode::truncate ? 0 : (existed && !st.tracked ? base->size() : st.synced);
    st.tracked = true;
    return std::make_unique<File>(*this, std::move(base));
  }

  void rename(const std::filesystem::path& from, const std::filesystem::path& to) override {
    tick();
    DirOp op{DirOp::rename, to.parent_path(), to};
    op.from = from;
    backup(to, op);
    base_.rename(from, to);
    move_tracked(from, to);
    pending_.push_back(std::move(op));
  }

  // RENAME_EXCHANGE, when the test says the file system has it (the base must too).
  // A power cut before the folder is synced swaps the two back.
  void set_exchange_supported(bool yes) { exchange_supported_ = yes; }
  bool exchange(const std::filesystem::path& a, const std::filesystem::path& b) override {
    if (!exchange_supported_) return false;
    tick();
    if (!base_.exchange(a, b)) fail(ErrorCode::internal, "the base file system cannot exchange");
    swap_tracked(a, b);
    DirOp op{DirOp::exchange, a.parent_path(), a};
    op.from = b;
    pending_.push_back(std::move(op));
    return true;
  }

  void remove(const std::filesystem::path& file) override {
    tick();
    DirOp op{DirOp::remove, file.parent_path(), file};
    backup(file, op);
    base_.remove(file);
    files_.erase(file);
    if (op.backup) pending_.push_back(std::move(op));
  }

  // Not modelled for power loss (dropping a collection is not walked).
  void remove_all(const std::filesystem::path& dir) override {
    tick();
    base_.remove_all(dir);
  }

  void create_directories(const std::filesystem::path& dir) override {
    tick();
    std::vector<std::filesystem::path> made;
    for (auto p = dir; !p.empty() && !std::filesystem::exists(p); p = p.parent_path()) made.push_back(p);
    base_.create_directories(dir);
    for (auto it = made.rbegin(); it != made.rend(); ++it) pending_.push_back({DirOp::mkdir, it->parent_path(), *it});
  }

  void truncate(const std::filesystem::path& file, uint64_t size) override {
    tick();
    base_.truncate(file, size);
    if (auto f = files_.find(file); f != files_.end()) f->second.synced = std::min(f->second.synced, size);
  }

  void sync_path(const std::filesystem::path& p, bool is_dir) override {
    tick();
    if (is_dir) {
      // Every entry change in this folder is durable now.
      std::vector<DirOp> left;
      for (auto& op : pending_)
        if (op.dir != p) left.push_back(std::move(op));
      pending_ = std::move(left);
    } else if (auto f = files_.find(p); f != files_.end()) {
      f->second.synced = std::filesystem::file_size(p);
    }
  }

 private:
  struct FileState {
    uint64_t synced = 0;
    bool tracked = false;
  };
  struct DirOp {
    enum Kind { create, mkdir, rename, remove, exchange } kind;
    std::filesystem::path dir;   // the folder whose sync makes the change durable
    std::filesystem::path path;  // the entry created / renamed to / removed
    std::filesystem::path from = {};  // rename: the old name
    std::optional<std::string> backup = {};  // what `path` held before (rename over, remove)
    uint64_t backup_synced = 0;
  };

  class File : public io::WritableFile {
   public:
    File(FaultFileSystem& fs, std::unique_ptr<io::WritableFile> base) : fs_(fs), base_(std::move(base)) {}
    void append(const char* data, size_t n) override {
      if (fs_.tick(/*can_be_short=*/true)) {
        base_->append(data, n / 2);
        fail(ErrorCode::unavailable, "injected: disk full after a partial write to " + base_->path().string());
      }
      base_->append(data, n);
    }
    void truncate(uint64_t size) override {
      fs_.tick();
      base_->truncate(size);
      auto& st = fs_.files_[base_->path()];
      st.synced = std::min(st.synced, size);
    }
    void sync() override {
      fs_.tick();
      fs_.files_[base_->path()].synced = base_->size();
    }
    uint64_t size() const override { return base_->size(); }
    const std::filesystem::path& path() const override { return base_->path(); }

   private:
    FaultFileSystem& fs_;
    std::unique_ptr<io::WritableFile> base_;
  };

  // What is known of the files at `from` (a file, or every file under a folder) now
  // belongs to `to`: a folder renamed keeps its files' synced sizes.
  void move_tracked(const std::filesystem::path& from, const std::filesystem::path& to) {
    std::map<std::filesystem::path, FileState> moved;
    for (auto it = files_.begin(); it != files_.end();) {
      const auto rel = it->first.lexically_relative(from);
      if (it->first == from || (!rel.empty() && *rel.begin() != "..")) {
        moved[it->first == from ? to : to / rel] = it->second;
        it = files_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& [p, st] : moved) files_[p] = st;
  }

  void swap_tracked(const std::filesystem::path& a, const std::filesystem::path& b) {
    const auto parked = a.parent_path() / ".fault-fs-swap";
    move_tracked(a, parked);
    move_tracked(b, a);
    move_tracked(parked, b);
  }

  // Counts a call and fires the armed fault on the Nth. Returns true when the call
  // must write short (short_write on an append).
  bool tick(bool can_be_short = false) {
    if (crashed_) throw SimulatedCrash{};
    if (++calls_ != at_ || fault_ == Fault::none) return false;
    fired_ = true;
    switch (fault_) {
      case Fault::crash:
        crashed_ = true;
        throw SimulatedCrash{};
      case Fault::error:
        fail(ErrorCode::unavailable, "injected I/O error at call " + std::to_string(calls_));
      case Fault::short_write:
        if (can_be_short) return true;
        fail(ErrorCode::unavailable, "injected I/O error at call " + std::to_string(calls_));
      case Fault::none:
        break;
    }
    return false;
  }

  void backup(const std::filesystem::path& p, DirOp& op) const {
    if (!std::filesystem::is_regular_file(p)) return;
    std::ifstream in(p, std::ios::binary);
    op.backup = std::string(std::istreambuf_iterator<char>(in), {});
    auto f = files_.find(p);
    op.backup_synced = f != files_.end() ? f->second.synced : op.backup->size();
  }

  void restore(const std::filesystem::path& p, const std::string& content, uint64_t synced) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
    files_[p] = {synced, true};
  }

  io::FileSystem& base_;
  Fault fault_ = Fault::none;
  uint64_t at_ = 0;
  uint64_t calls_ = 0;
  bool fired_ = false;
  bool crashed_ = false;
  std::map<std::filesystem::path, FileState> files_;
  bool exchange_supported_ = false;
  std::vector<DirOp> pending_;  // entry changes not yet made durable, in order
};

}  // namespace eagle::testing
