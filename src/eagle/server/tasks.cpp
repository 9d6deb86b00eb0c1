#include "eagle/server/tasks.h"

#include <malloc.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

#include "eagle/core/error.h"

namespace eagle::server {
using nlohmann::json;

namespace {
// `text` with every "<folder>N-" (an uploaded file's stored path and its index
// prefix) cut to the client's own file name.
std::string without_upload_folder(std::string text, const std::string& folder) {
  for (size_t at = text.find(folder); at != std::string::npos; at = text.find(folder, at)) {
    size_t end = at + folder.size();
    size_t digits = end;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
    if (digits > end && digits < text.size() && text[digits] == '-') end = digits + 1;
    text.erase(at, end - at);
  }
  return text;
}
}  // namespace

namespace {
std::string utc_now() {
  std::timespec ts;
  std::timespec_get(&ts, TIME_UTC);
  std::tm tm{};
  gmtime_r(&ts.tv_sec, &tm);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  const int ms = static_cast<int>((ts.tv_nsec / 1000000) % 1000);
  char frac[8];
  std::snprintf(frac, sizeof(frac), ".%03dZ", ms);
  return std::string(buf) + frac;
}
}  // namespace

std::string_view task_state_name(TaskState s) {
  switch (s) {
    case TaskState::queued: return "queued";
    case TaskState::running: return "running";
    case TaskState::succeeded: return "succeeded";
    case TaskState::failed: return "failed";
  }
  return "failed";
}

TaskQueue::TaskQueue(app::Engine& engine, size_t keep_finished, int nice)
    : engine_(engine), keep_finished_(keep_finished), nice_(nice), thread_([this] { worker(); }) {}

TaskQueue::~TaskQueue() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  for (auto& [id, job] : queue_)
    if (!job.cleanup.empty()) std::filesystem::remove_all(job.cleanup);
}

std::string TaskQueue::submit(IngestJob job) {
  std::lock_guard lock(mu_);
  std::string id = "t" + std::to_string(++next_id_);
  TaskStatus st;
  st.id = id;
  st.created_at = utc_now();
  st.owner = job.owner;
  if (job.reembed) st.kind = "reembed";
  tasks_[id] = st;
  order_.push_back(id);
  queue_.emplace_back(id, std::move(job));
  // Forget the oldest finished tasks beyond the limit.
  while (order_.size() > keep_finished_) {
    auto it = tasks_.find(order_.front());
    if (it != tasks_.end() && (it->second.state == TaskState::queued || it->second.state == TaskState::running)) break;
    if (it != tasks_.end()) tasks_.erase(it);
    order_.pop_front();
  }
  cv_.notify_all();
  return id;
}

std::optional<TaskStatus> TaskQueue::get(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return std::nullopt;
  return it->second;
}

std::vector<TaskStatus> TaskQueue::recent(size_t limit) const {
  std::lock_guard lock(mu_);
  std::vector<TaskStatus> out;
  for (auto it = order_.rbegin(); it != order_.rend() && out.size() < limit; ++it)
    if (auto t = tasks_.find(*it); t != tasks_.end()) out.push_back(t->second);
  return out;
}

size_t TaskQueue::running() const {
  std::lock_guard lock(mu_);
  return busy_ ? 1 : 0;
}

size_t TaskQueue::pending() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void TaskQueue::worker() {
  // Ingest is background work: at a lower priority (Linux nice is per thread) the
  // searches it runs beside keep the cores when both want them.
  if (nice_ > 0) setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), nice_);
  for (;;) {
    std::pair<std::string, IngestJob> item;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      item = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      tasks_[item.first].state = TaskState::running;
    }
    const std::string& id = item.first;
    std::optional<app::IngestReport> report;
    std::optional<app::ReembedReport> reembedded;
    std::string code, message;
    auto progress = [&](size_t done, size_t total) {
      std::lock_guard lock(mu_);
      auto& t = tasks_[id];
      t.done = done;
      t.total = total;
    };
    try {
      if (const auto& r = item.second.reembed) reembedded = engine_.reembed(r->collection, r->encoder, progress);
      else report = engine_.ingest(item.second.inputs, item.second.options, progress);
    } catch (const Error& e) {
      code = std::string(error_code_name(e.code()));
      message = e.what();
    } catch (const std::exception& e) {
      code = "internal";
      message = item.second.reembed ? "internal error while re-embedding" : "internal error while ingesting";
    }
    // Messages name the upload by the client's file name, never by the server's
    // temporary folder ("<tmp>/0-label.xml:3: ..." becomes "label.xml:3: ...").
    if (!item.second.cleanup.empty()) {
      const std::string folder = item.second.cleanup.string() + "/";
      message = without_upload_folder(message, folder);
      if (report)
        for (auto& s : report->skipped) s = without_upload_folder(s, folder);
    }
    if (!item.second.cleanup.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(item.second.cleanup, ec);
    }
    // An ingest's parsing and embedding buffers are freed now; hand the pages back
    // so the server's resident memory tracks its data, not its largest ingest.
    ::malloc_trim(0);
    {
      std::lock_guard lock(mu_);
      auto& t = tasks_[id];
      t.finished_at = utc_now();
      if (report) {
        t.state = TaskState::succeeded;
        t.result = std::move(report);
        if (t.total == 0) t.total = t.result->rows;
        t.done = t.total;
      } else if (reembedded) {
        t.state = TaskState::succeeded;
        t.reembed_result = std::move(reembedded);
        if (t.total == 0) t.total = t.reembed_result->rows;
        t.done = t.total;
      } else {
        t.state = TaskState::failed;
        t.error_code = code == "invalid_argument" ? "unprocessable" : code;
        t.error_message = message;
      }
      busy_ = false;
    }
  }
}

json task_json(const TaskStatus& t) {
  json j = {{"id", t.id},
            {"kind", t.kind},
            {"state", task_state_name(t.state)},
            {"progress", {{"done", t.done}, {"total", t.total}}},
            {"created_at", t.created_at}};
  if (!t.finished_at.empty()) j["finished_at"] = t.finished_at;
  if (t.result) {
    json per = json::object();
    for (const auto& [name, n] : t.result->per_collection) per[name] = n;
    j["result"] = {{"documents", t.result->documents},
                   {"rows", t.result->rows},
                   {"skipped", t.result->skipped},
                   {"unchanged", t.result->unchanged},
                   {"per_collection", per}};
  }
  if (const auto& r = t.reembed_result)
    j["result"] = {{"collection", r->collection},
                   {"rows", r->rows},
                   {"already_current", r->unchanged},
                   {"before", {{"encoder", r->encoder_before}, {"dim", r->dim_before}, {"identity", r->identity_before}}},
                   {"after", {{"encoder", r->encoder}, {"dim", r->dim}, {"identity", r->identity}}}};
  if (t.state == TaskState::failed) j["error"] = {{"code", t.error_code}, {"message", t.error_message}};
  return j;
}

}  // namespace eagle::server
