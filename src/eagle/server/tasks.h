#pragma once
// Tasks of the HTTP server: POST /ingest and POST /collections/{name}/reembed queue
// one and return its id at once; one worker thread runs them in order (the engine
// serialises writers anyway), while searches keep being answered. GET /tasks/{id}
// reads state and progress.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "eagle/app/engine.h"

namespace eagle::server {

// A collection's vectors rebuilt with an encoder as configured now (Engine::reembed).
struct ReembedJob {
  std::string collection;
  std::string encoder;  // empty: the label the collection records
};

struct IngestJob {
  std::vector<std::string> inputs;
  app::IngestOptions options;
  std::filesystem::path cleanup;  // a temporary upload folder removed when the task ends
  std::string owner;              // the token that submitted it ("" without auth)
  // Set: the task re-embeds this collection instead of ingesting (kind "reembed").
  std::optional<ReembedJob> reembed;
};

enum class TaskState { queued, running, succeeded, failed };
std::string_view task_state_name(TaskState s);

struct TaskStatus {
  std::string id;
  TaskState state = TaskState::queued;
  size_t done = 0, total = 0;
  std::string created_at, finished_at;
  std::string kind = "ingest";  // ingest | reembed
  std::optional<app::IngestReport> result;
  std::optional<app::ReembedReport> reembed_result;
  std::string error_code, error_message;
  std::string owner;
};

class TaskQueue {
 public:
  // `nice`: the worker thread's scheduling niceness (0 = as the server's threads).
  explicit TaskQueue(app::Engine& engine, size_t keep_finished = 100, int nice = 10);
  ~TaskQueue();  // finishes the running task, drops queued ones

  std::string submit(IngestJob job);
  std::optional<TaskStatus> get(const std::string& id) const;
  std::vector<TaskStatus> recent(size_t limit) const;  // newest first
  size_t running() const;
  size_t pending() const;  // queued, not yet running

 private:
  void worker();

  app::Engine& engine_;
  size_t keep_finished_;
  int nice_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, IngestJob>> queue_;
  std::map<std::string, TaskStatus> tasks_;
  std::deque<std::string> order_;  // ids, oldest first
  uint64_t next_id_ = 0;
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;
};

nlohmann::json task_json(const TaskStatus& t);

}  // namespace eagle::server
