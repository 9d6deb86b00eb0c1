#pragma once
// Two-stage pipeline on two cores: a producer on a second thread prepares items (reads,
// parses, decodes, analyses) while the calling thread consumes the ones before them.
//
//   read_ahead<T>(depth, [&](auto&& push) { ... push(T{...}) ... },
//                        [&](T& item) { ... });
//
// At most `depth` items wait between the two, so memory stays bounded however far the
// producer could run ahead. Items are consumed in the order produced, on the calling
// thread. An exception in the producer is rethrown to the caller after every item
// produced before it has been consumed; an exception in the consumer stops the
// producer (its next push returns false) and leaves read_ahead once the second thread
// is joined. Either way no thread outlives the call.
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

namespace eagle {

template <typename T, typename Produce, typename Consume>
void read_ahead(size_t depth, Produce&& produce, Consume&& consume) {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<T> ready;
  bool done = false, stop = false;
  std::exception_ptr error;
  // push(item): false once the consumer has stopped (the producer should return).
  auto push = [&](T&& item) {
    std::unique_lock g(mu);
    cv.wait(g, [&] { return stop || ready.size() < depth; });
    if (stop) return false;
    ready.push_back(std::move(item));
    cv.notify_all();
    return true;
  };
  std::thread producer([&] {
    try {
      produce(push);
    } catch (...) {
      std::lock_guard g(mu);
      error = std::current_exception();
    }
    std::lock_guard g(mu);
    done = true;
    cv.notify_all();
  });
  struct Joiner {  // the producer is stopped and joined however the consumer leaves
    std::thread& t;
    std::mutex& mu;
    std::condition_variable& cv;
    bool& stop;
    ~Joiner() {
      {
        std::lock_guard g(mu);
        stop = true;
      }
      cv.notify_all();
      t.join();
    }
  } joiner{producer, mu, cv, stop};
  for (;;) {
    T item;
    {
      std::unique_lock g(mu);
      cv.wait(g, [&] { return !ready.empty() || done; });
      if (ready.empty()) {
        if (error) std::rethrow_exception(error);
        return;
      }
      item = std::move(ready.front());
      ready.pop_front();
      cv.notify_all();
    }
    consume(item);
  }
}

}  // namespace eagle
