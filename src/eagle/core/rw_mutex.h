#pragma once
// A shared mutex that prefers writers. std::shared_mutex on glibc is a
// reader-preferring pthread rwlock: under a steady stream of overlapping searches a
// write (an ingest's commit, a delete) could wait for ever. With writer preference a
// waiting writer stops new readers, so a commit waits only for the searches already
// running. Not recursive: a thread must not take the shared side twice.
#include <pthread.h>

namespace eagle {

class RwMutex {
 public:
  RwMutex() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  ~RwMutex() { pthread_rwlock_destroy(&lock_); }
  RwMutex(const RwMutex&) = delete;
  RwMutex& operator=(const RwMutex&) = delete;

  void lock() { pthread_rwlock_wrlock(&lock_); }
  bool try_lock() { return pthread_rwlock_trywrlock(&lock_) == 0; }
  void unlock() { pthread_rwlock_unlock(&lock_); }
  void lock_shared() { pthread_rwlock_rdlock(&lock_); }
  bool try_lock_shared() { return pthread_rwlock_tryrdlock(&lock_) == 0; }
  void unlock_shared() { pthread_rwlock_unlock(&lock_); }

 private:
  pthread_rwlock_t lock_;
};

}  // namespace eagle
